"""The operations commands: `check` (is everything in place?), `discover` (which ids?) and
`screenshot` (what does the screen show?), for installers and remote support."""

from __future__ import annotations

from lobby_display.ops.check import check
from lobby_display.ops.discover import discover
from lobby_display.ops.screenshot import export_screen, screenshot, screenshot_signal_path

__all__ = ["check", "discover", "export_screen", "screenshot", "screenshot_signal_path"]
