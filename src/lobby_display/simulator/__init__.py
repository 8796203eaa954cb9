"""The embedded display service: a simulated town hall served over HTTP, SSE and faults.

For tests, the demo and benchmarks::

    with SimulatorServer(seed=1, speed=20) as sim:
        config = sim.write_config(tmp_path)      # a ready config.toml + service account
        sim.drop("tickets")                      # faults; sim.truth() is what is true now

`Simulator` is the same in an asyncio loop (`async with Simulator(...) as sim:`); `Place` is the
pure model (`place.step(dt)` returns the events); `proxy.FaultProxy` breaks TCP on purpose.
Nothing here imports the display application.
"""

from __future__ import annotations

from lobby_display.simulator.auth import ApiKeys, AuthError, ServiceAccount
from lobby_display.simulator.model import Place, PlaceEvent, PlaceOptions
from lobby_display.simulator.server import FAULTS, Simulator, SimulatorOptions, SimulatorServer
from lobby_display.updates import Feed

__all__ = [
    "FAULTS",
    "ApiKeys",
    "AuthError",
    "Feed",
    "Place",
    "PlaceEvent",
    "PlaceOptions",
    "ServiceAccount",
    "Simulator",
    "SimulatorOptions",
    "SimulatorServer",
]
