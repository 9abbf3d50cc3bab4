"""srtopt.solvers.deadline: the one time budget, its arithmetic and the active deadline."""

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


def test_the_active_deadline_is_the_innermost_block_and_restored_after():
    assert Deadline.active().left() == math.inf  # outside any block
    outer, inner = Deadline(3600), Deadline(0)
    with outer:
        assert Deadline.active() is outer and not should_stop()
        with inner:
            assert Deadline.active() is inner and should_stop()
            with outer:  # the same object may be entered again
                assert Deadline.active() is outer
            assert Deadline.active() is inner
        assert Deadline.active() is outer
    assert Deadline.active().left() == math.inf


def test_a_thread_has_its_own_active_deadline():
    import threading

    seen = []
    with Deadline(0):
        thread = threading.Thread(target=lambda: seen.append(Deadline.active().passed()))
        thread.start()
        thread.join()
        assert Deadline.active().passed()
    assert seen == [False]
