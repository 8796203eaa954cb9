"""Python code that makes a fresh interpreter look like a kiosk's install (`pip install
lobby-display`, no extra): the simulator extra's packages, which this venv has for the tests,
cannot be imported. Run it first in `python -c`."""

from __future__ import annotations

from typing import Final

#: The packages only the `simulator` extra brings (uvicorn brings click).
SIMULATOR_ONLY: Final = ("starlette", "uvicorn", "click")

KIOSK_INSTALL: Final = f"""
import sys

class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {SIMULATOR_ONLY!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, _NotInstalled())
"""
