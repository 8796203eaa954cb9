"""Every fault of the simulator and of the fault proxy, one after another and overlapping, against
the real screen fed by the real feeds: after each, the screen returns to the truth (queues and
their waiting tickets, counters, the latest call, every feed live) and the app stays up.

The feeds' own reactions (which error, which retry) are tested at the board level in
tests/integration/test_feeds_*.py; here what counts is what a person in the waiting room sees.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from lobby_display.simulator import ServiceAccount
from lobby_display.simulator.dialect import Dialect
from tests.helpers.reliability import Rig, open_rig

Step = Callable[[Rig], Awaitable[None]]


@pytest.fixture
def no_errors_logged(caplog: pytest.LogCaptureFixture):  # type: ignore[no-untyped-def]
    """After the test: nothing of the display logged an error (an unexpected exception)."""
    caplog.set_level(logging.WARNING)
    yield
    errors = [
        f"{record.name}: {record.getMessage()}"
        for record in caplog.records
        if record.levelno >= logging.ERROR and record.name.startswith("lobby_display")
    ]
    assert not errors, "\n".join(errors)


async def not_live(rig: Rig, why: str) -> None:
    """The status line stops saying "Live" (the screen noticed the fault)."""
    await rig.until(f"{why}: the screen never said it", lambda: rig.status_line() != "Live")


async def run_steps(rig: Rig, steps: list[tuple[str, Step]]) -> None:
    for name, step in steps:
        await step(rig)
        await rig.settle(name)


# --- the simulator's faults on the stream ----------------------------------------------------


async def drop(rig: Rig) -> None:
    assert rig.sim.drop() == 3
    await rig.burst(20)


async def reset(rig: Rig) -> None:
    assert rig.sim.reset() == 3
    await rig.burst(20)


async def close(rig: Rig) -> None:
    assert rig.sim.close() == 3
    await rig.burst(20)


async def stall(rig: Rig) -> None:
    rig.sim.stall()
    await rig.burst(10)
    await not_live(rig, "stall")
    rig.sim.resume()


async def malformed(rig: Rig) -> None:
    for feed in ("tickets", "queues", "counters"):
        rig.sim.send_malformed(feed)
    await rig.burst(20)


async def unknown(rig: Rig) -> None:
    for feed in ("tickets", "queues", "counters"):
        rig.sim.send_unknown(feed)
    await rig.burst(20)


async def huge(rig: Rig) -> None:
    rig.sim.send_huge("tickets")
    rig.sim.send_huge("queues")
    await rig.burst(20)


# --- the simulator's answers ------------------------------------------------------------------


async def error_status_on_streams(rig: Rig) -> None:
    rig.sim.fail_next(4, 503, "sse")
    rig.sim.drop()
    await rig.burst(20)


async def error_status_on_pages(rig: Rig) -> None:
    # 120 tickets: the first message holds 50, the rest comes from REST pages, which fail.
    rig.sim.fail_next(2, 500, "rest")
    rig.sim.drop("tickets")
    await rig.burst(20)


async def key_rotation(rig: Rig) -> None:
    rig.sim.rotate_keys(grace=0)
    rig.sim.drop()
    await rig.burst(20)


async def key_revocation(rig: Rig) -> None:
    rig.sim.revoke_keys()
    rig.sim.reset()
    await rig.burst(20)


async def hostile_strings(rig: Rig) -> None:
    rig.sim.set_hostile(True)
    await rig.burst(60)
    rig.sim.set_hostile(False)
    await rig.burst(10)


async def load_burst(rig: Rig) -> None:
    await rig.burst(1500, rate=1000)


# --- the proxy's faults on the network -------------------------------------------------------


async def cut_mid_event(rig: Rig) -> None:
    rig.proxy.cut_mid_event()
    await rig.burst(20)
    await rig.until("the proxy cut an event", lambda: rig.proxy.cuts > 0)


async def tcp_reset(rig: Rig) -> None:
    assert rig.proxy.reset_all() >= 3
    await rig.burst(20)


async def network_stall(rig: Rig) -> None:
    rig.proxy.stall()
    await rig.burst(10)
    await not_live(rig, "network stall")
    rig.proxy.resume()


async def drip(rig: Rig) -> None:
    rig.proxy.drip(size=48, delay=0.001)
    await rig.burst(20)
    await rig.settle("bytes dripping in 48 at a time")
    rig.proxy.stop_drip()


# --- the tests ---------------------------------------------------------------------------------


@pytest.mark.usefixtures("no_errors_logged")
async def test_stream_faults_one_after_another(tmp_path: Path, account: ServiceAccount) -> None:
    async with open_rig(tmp_path, account) as rig:
        await run_steps(
            rig,
            [
                ("a dropped connection", drop),
                ("a TCP reset", reset),
                ("a clean close", close),
                ("a stall of every feed", stall),
                ("a malformed event on each feed", malformed),
                ("an event of an unknown kind on each feed", unknown),
                ("a 2 MB event", huge),
            ],
        )


@pytest.mark.usefixtures("no_errors_logged")
async def test_service_faults_one_after_another(tmp_path: Path, account: ServiceAccount) -> None:
    async with open_rig(tmp_path, account) as rig:
        await run_steps(
            rig,
            [
                ("503 answers to the streams", error_status_on_streams),
                ("500 answers to the ticket pages", error_status_on_pages),
                ("a key rotation without grace", key_rotation),
                ("a key revocation", key_revocation),
                ("hostile names and labels", hostile_strings),
                ("a burst of 1,500 events at 1,000/s", load_burst),
            ],
        )


@pytest.mark.usefixtures("no_errors_logged")
async def test_network_faults_one_after_another(tmp_path: Path, account: ServiceAccount) -> None:
    async with open_rig(tmp_path, account) as rig:
        await run_steps(
            rig,
            [
                ("a connection cut inside an event", cut_mid_event),
                ("a TCP reset by the network", tcp_reset),
                ("a stalled network", network_stall),
                ("bytes dripping in", drip),
            ],
        )


@pytest.mark.usefixtures("no_errors_logged")
async def test_overlapping_faults(tmp_path: Path, account: ServiceAccount) -> None:
    async with open_rig(tmp_path, account) as rig:
        # A burst on a dripping network while a stream drops, a malformed event arrives, the
        # streams answer 503 and the keys rotate.
        rig.proxy.drip(size=48, delay=0.001)
        rig.sim.burst(200, duration=2.0)
        rig.sim.drop("tickets")
        rig.sim.send_malformed("queues")
        rig.sim.fail_next(2, 503, "sse")
        rig.sim.rotate_keys(grace=0)
        rig.sim.reset("counters")
        await asyncio.to_thread(rig.sim.wait_burst, 30)
        rig.proxy.stop_drip()
        await rig.settle("a drop, a malformed event, 503s and a key rotation during a burst")

        # A stalled feed, a cut inside an event, hostile strings and a 2 MB event at once.
        rig.sim.stall("counters")
        rig.proxy.cut_mid_event()
        rig.sim.set_hostile(True)
        rig.sim.send_huge("tickets")
        await rig.burst(40)
        await not_live(rig, "a stalled counters feed")
        rig.sim.set_hostile(False)
        rig.sim.resume("counters")
        await rig.settle("a stall, a cut, hostile strings and a huge event")

        # A network reset while keys are revoked, a stream closes and REST answers 500.
        rig.sim.revoke_keys()
        rig.sim.fail_next(1, 500, "rest")
        rig.sim.close("queues")
        rig.proxy.reset_all()
        await rig.burst(30)
        await rig.settle("a reset, revoked keys, a closed stream and a 500")


# --- the same faults when the service speaks another reading of the interface -----------------


async def scripted_day(rig: Rig) -> None:
    """A queue turning full, a pause and booking closing, told by updates of the dialect."""
    sim = rig.sim
    sim.set_capacity(1)
    sim.set_pause(2, True)
    sim.set_booking(3, False)
    await rig.burst(10)
    sim.set_pause(2, False)


#: Partial updates alone, and every variant at once (partial, bare ticket maps, counter maps,
#: legacy names, ISO dates, a first page of 7 tickets completed over REST).
DIALECTS = {"partial updates": Dialect(partial=True), "every variant": Dialect.parse("all")}


@pytest.mark.parametrize("dialect", list(DIALECTS.values()), ids=list(DIALECTS))
@pytest.mark.usefixtures("no_errors_logged")
async def test_faults_in_other_readings(
    dialect: Dialect, tmp_path: Path, account: ServiceAccount
) -> None:
    # After each fault the feeds reconnect and merge the next updates into the fresh snapshot.
    async with open_rig(tmp_path, account, dialect=dialect) as rig:
        await run_steps(
            rig,
            [
                ("updates of the dialect", scripted_day),
                ("a dropped connection", drop),
                ("a malformed event on each feed", malformed),
                ("an event of an unknown kind on each feed", unknown),
                ("a 2 MB event", huge),
                ("500 answers to the ticket pages", error_status_on_pages),
                ("a key rotation without grace", key_rotation),
                ("hostile names and labels", hostile_strings),
                ("a connection cut inside an event", cut_mid_event),
                ("a burst of 1,500 events at 1,000/s", load_burst),
            ],
        )
