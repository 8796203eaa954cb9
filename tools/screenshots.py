"""Screenshots of the demo for the README: the app's own SVG export, turned into PNG.

`make screenshots` runs this: the embedded simulator, then `lobby-display screenshot` (headless,
live feeds) once per locale at a TV-like size, into docs/screenshots/.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from lobby_display.config import load_config
from lobby_display.ops import screenshot
from lobby_display.simulator import SimulatorServer

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "screenshots"
#: (locale, width, height): the three scripts the issue asks for, plus Chinese and a small screen.
SHOTS = (
    ("fr_FR", 160, 45),
    ("ja_JP", 160, 45),
    ("th_TH", 160, 45),
    ("zh_TW", 160, 45),
    ("en_US", 80, 24),
)


def main() -> int:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    failures = 0
    with SimulatorServer(seed=3, speed=3) as sim, tempfile.TemporaryDirectory() as folder:
        for locale, width, height in SHOTS:
            directory = Path(folder) / locale
            config = sim.call(
                lambda s, d=directory, loc=locale: s.write_config(
                    d, locales=[loc], state={"directory": str(d / "state")}
                )
            )
            settings = load_config(config, environ={})
            output = OUTPUT / f"demo-{locale}-{width}x{height}.png"
            code = screenshot(settings, output, size=(width, height), environ={})
            print(f"{output.relative_to(ROOT)}: {'ok' if code == 0 else 'FAILED'}")
            failures += code != 0
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
