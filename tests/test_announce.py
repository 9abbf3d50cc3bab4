import time

from srtopt._announce import announce_if_slow


def test_a_slow_block_is_announced_once_and_a_quick_one_not(capfd):
    with announce_if_slow("slow work", after=0.05):
        time.sleep(0.5)
    with announce_if_slow("quick work", after=5.0):
        pass
    time.sleep(0.1)
    assert capfd.readouterr().err == "slow work\n"
