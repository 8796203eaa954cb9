"""The embedded display service: a simulated town hall served over HTTP, SSE and faults.

`SimulatorServer` (a thread; `Simulator` in an asyncio loop) serves a `Place` (the pure model)
and writes a ready config (`sim.write_config(folder)`); `proxy.FaultProxy` breaks TCP on
purpose. For the demo, the tests and the benchmarks; nothing here imports the display.
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
