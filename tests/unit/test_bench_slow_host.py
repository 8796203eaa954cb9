"""The played slow host (`bench/slow_host.py`): a share of a core in short periods, so that the
programs under test are slowed evenly, as on a slower core, not stopped for tens of
milliseconds at a time."""

from __future__ import annotations

import pytest

from bench import slow_host
from bench.slow_host import SlowHost, quota_of


@pytest.mark.parametrize("share", [0.2, 0.5, 0.71, 0.82, 0.99])
def test_a_share_of_a_core_comes_in_periods_of_a_few_milliseconds(share: float) -> None:
    quota, period = quota_of(share)
    assert quota / period == pytest.approx(share, abs=0.002)
    assert period - quota < 5000, "the programs would stop for 5 ms or longer at a time"


def test_a_full_core_is_not_limited() -> None:
    quota, period = quota_of(1.0)
    assert quota == period


def test_the_search_keeps_short_periods_after_a_slow_first_reading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """This host read slower than the played one at first (other work on the machine), so the
    first try is a full core; the next tries, under a share, must not keep its long period."""
    monkeypatch.setattr(slow_host, "_hierarchy", lambda: None)
    monkeypatch.setattr(slow_host, "_measure", lambda group, repeats, loops: 30.5)
    readings = iter([18.0, 24.1])

    def read(host: SlowHost, repeats: int, loops: int) -> float:
        return next(readings)

    monkeypatch.setattr(SlowHost, "_read", read)
    host = SlowHost(24.0).calibrate()
    assert host.measured_ms == 24.1
    assert host.share < 1
    assert host.period_us <= 5000, (host.quota_us, host.period_us)
