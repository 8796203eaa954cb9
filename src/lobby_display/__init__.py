"""lobby-display: a live queue board for waiting-room TVs."""

__version__ = "0.1.0"
