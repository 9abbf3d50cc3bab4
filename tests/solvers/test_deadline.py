"""srtopt.solvers.deadline: the one time budget, its arithmetic; a plain value that nothing reads
unless it is passed."""

import math

import pytest

from srtopt.solvers.base import should_stop
from srtopt.solvers.deadline import Deadline


def test_without_a_limit_it_never_passes_and_has_no_share():
    never = Deadline()
    assert never.left() == math.inf and not never.passed() and never.share(3) is None
    assert never.within(None) is never


def test_within_is_the_earlier_of_the_two():
    far = Deadline(3600)
    assert far.within(None) is far
    assert far.within(60).at < far.at
    assert far.within(7200).at == far.at
    assert Deadline().within(60).at < math.inf


def test_a_share_divides_the_seconds_left_and_is_never_zero():
    hour = Deadline(3600)
    assert 3599 / 4 < hour.share(4) <= 3600 / 4
    assert Deadline(0).share(4) == pytest.approx(1e-3 / 4)


def test_a_deadline_of_zero_seconds_has_passed():
    assert Deadline(0).passed() and Deadline(0).left() <= 0


def test_should_stop_reads_the_deadline_it_is_given():
    assert should_stop(Deadline(0)) and not should_stop(Deadline(3600)) and not should_stop(Deadline())


def test_no_deadline_is_ambient():
    """The deadline is not a context: a Deadline is no context manager, and nothing in the package
    reads one it was not handed (no contextvars, no Deadline.active)."""
    import pathlib

    import srtopt

    assert not hasattr(Deadline, "__enter__") and not hasattr(Deadline, "active")
    sources = pathlib.Path(srtopt.__file__).parent.rglob("*.py")
    assert not [path.name for path in sources if "contextvars" in path.read_text()]


def test_the_tests_stopped_clock_is_the_one_deadlines_read(stopped_clock):
    """tests/conftest.py's stopped clock (the tests that compare time-limited fits take it) is the clock
    every Deadline reads: a limit runs out when the test moves the clock, never by itself."""
    deadline = Deadline(1.0)
    assert deadline.left() == 1.0 and not deadline.within(0.5).passed()
    stopped_clock.advance(0.75)
    assert deadline.left() == pytest.approx(0.25) and not deadline.passed() and Deadline(1.0).left() == 1.0
    stopped_clock.advance(0.25)
    assert deadline.passed() and deadline.share(4) == pytest.approx(1e-3 / 4)
