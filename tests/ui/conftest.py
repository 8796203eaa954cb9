"""The screen's tests run without animations (the app also sets this itself in `boards`)."""

from __future__ import annotations

import os

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
