"""The operations commands, for installers and remote support (check, discover, screenshot, ...).

Each command's module is imported when first asked for. Take a command's function from its
module (`from lobby_display.ops.check import check`): the package's attribute may be the module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from lobby_display.ops.check import check
    from lobby_display.ops.discover import discover
    from lobby_display.ops.screenshot import screenshot

#: Where each public name lives.
_MODULES: Final = {
    "check": "lobby_display.ops.check",
    "discover": "lobby_display.ops.discover",
    "screenshot": "lobby_display.ops.screenshot",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    # Importing `ops.check` bound the name `check` to the module: bind it to the function.
    globals()[name] = value
    return value


__all__ = ["check", "discover", "screenshot"]
