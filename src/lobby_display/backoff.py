"""The one reconnect policy: how long every retry loop waits before trying again.

`Backoff.next_delay()` only computes the delay (doubling, capped, jittered, reset after a healthy
minute); the caller sleeps. Used by the feeds, the app's restart of its source and the kiosk's
retries; the policy and its reasons: docs/architecture.md (reconnecting).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Final

#: Seconds before the first retry.
FIRST_DELAY: Final = 1.0
#: Cap of the doubling delay, in seconds.
MAX_DELAY: Final = 30.0
#: Seconds a connection (or a run) must last for the next failure to start from `FIRST_DELAY`.
HEALTHY_AFTER: Final = 60.0
#: Largest random part added to a delay, as a fraction of it.
JITTER: Final = 0.5


class Backoff:
    """The delays of one retry loop: `started()` when a connection is up, `next_delay()` when
    it failed (or could not be made).

    `clock` gives seconds (monotonic by default); `rng` draws the jitter.
    """

    def __init__(
        self,
        first: float = FIRST_DELAY,
        cap: float = MAX_DELAY,
        healthy_after: float = HEALTHY_AFTER,
        *,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.first = first
        self.cap = cap
        self.healthy_after = healthy_after
        self._rng = rng if rng is not None else random.Random()  # noqa: S311 (jitter)
        self._clock = clock
        self._attempt = 0
        self._started_at: float | None = None

    def __repr__(self) -> str:
        return (
            f"Backoff(first={self.first:g}, cap={self.cap:g}, "
            f"healthy_after={self.healthy_after:g}, attempt={self._attempt})"
        )

    @property
    def attempt(self) -> int:
        """Failures since the last healthy connection (or reset): 1 for the first retry."""
        return self._attempt

    def started(self) -> None:
        """A connection (or a run) is up now: if it lasts `healthy_after`, its failure is
        retried after the first delay again."""
        self._started_at = self._clock()

    def reset(self) -> None:
        """Back to the start: the next failure is attempt 1."""
        self._attempt = 0
        self._started_at = None

    def next_delay(self) -> float:
        """A failure: count it and return the seconds to wait before the next try."""
        started = self._started_at
        self._started_at = None
        if started is not None and self._clock() - started >= self.healthy_after:
            self._attempt = 0
        self._attempt += 1
        # The exponent is bounded: a screen left without its service for days counts on.
        base = min(self.cap, self.first * 2.0 ** min(self._attempt - 1, 64))
        return base + self._rng.uniform(0, base * JITTER)


__all__ = ["FIRST_DELAY", "HEALTHY_AFTER", "JITTER", "MAX_DELAY", "Backoff"]
