"""Spec strings (srtopt/_spec.py): a key given twice is refused, whatever the spec names."""

import pytest

from srtopt._spec import parse_spec
from srtopt.models.terms import make_loss, make_penalties
from srtopt.solvers import make_solver


def test_a_key_given_twice_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^option 'n_knots' is given twice in 'spline:n_knots=8,n_knots=9'; "
                                         r"give it once$"):
        parse_spec("spline:n_knots=8,n_knots=9")
    assert parse_spec("spline:n_knots=8, smoothing=gcv") == ("spline", {"n_knots": 8, "smoothing": "gcv"})


@pytest.mark.parametrize("make, spec", [
    (make_loss, "huber:delta=1,delta=2"),
    (make_penalties, "split_l1:strength=0.1, strength=0.2"),
    (lambda spec: make_solver("ln", spec), "exact:tol=1e-8,tol=1e-6"),
])
def test_every_registry_refuses_a_repeated_key(make, spec):
    with pytest.raises(ValueError, match="is given twice"):
        make(spec)
