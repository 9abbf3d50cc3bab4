import time

from srtopt._announce import announce_if_slow, say


def test_a_slow_block_is_announced_once_and_a_quick_one_not(capfd):
    with announce_if_slow("slow work", after=0.05):
        time.sleep(0.5)
    with announce_if_slow("quick work", after=5.0):
        pass
    time.sleep(0.1)
    assert capfd.readouterr().err == "slow work\n"


class _Writes:
    """A stream that keeps each write apart, as a signal between two writes would see them."""

    def __init__(self):
        self.writes, self.flushed = [], 0

    def write(self, text):
        self.writes.append(text)

    def flush(self):
        self.flushed += 1


def test_a_line_and_its_newline_go_out_in_one_write():
    stream = _Writes()
    say("macro 27: E = 0.0366", stream)
    assert stream.writes == ["macro 27: E = 0.0366\n"] and stream.flushed == 1
