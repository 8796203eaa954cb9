"""Text rewritten for the kiosk's terminal: characters foot draws wrong become equivalents of the
same cell width.

THAI SARA AM (and LAO AM) become their decomposition, NIKHAHIT before the tone marks as shaping
engines do it (docs/architecture.md: the screen).
"""

from __future__ import annotations

import re
from typing import Final

# The marks above a letter that HarfBuzz's Thai shaper moves the NIKHAHIT back over, Thai then
# Lao (the Lao block mirrors the Thai one 0x80 higher).
_THAI_ABOVE: Final = "\u0e31\u0e34-\u0e37\u0e3b\u0e47-\u0e4e"
_LAO_ABOVE: Final = "\u0eb1\u0eb4-\u0eb7\u0ebb\u0ec7-\u0ece"

_THAI_AM: Final = re.compile(f"([{_THAI_ABOVE}]*)\u0e33")
_LAO_AM: Final = re.compile(f"([{_LAO_ABOVE}]*)\u0eb3")
_THAI_PARTS: Final = re.compile(f"\u0e4d([{_THAI_ABOVE}]*?)\u0e32")
_LAO_PARTS: Final = re.compile(f"\u0ecd([{_LAO_ABOVE}]*?)\u0eb2")


def for_terminal(text: str) -> str:
    """`text` as the kiosk's terminal draws it right: SARA AM (Thai, Lao) decomposed.

    The cell width is unchanged (the nikhahit takes no cell, and only zero-width marks move), and
    text without SARA AM is returned as it is. A second pass changes nothing.
    """
    if text.isascii():
        return text
    if "\u0e33" in text:
        text = _THAI_AM.sub("\u0e4d\\1\u0e32", text)
    if "\u0eb3" in text:
        text = _LAO_AM.sub("\u0ecd\\1\u0eb2", text)
    return text


def for_speech(text: str) -> str:
    """`text` with what `for_terminal` decomposed composed again, as speech engines expect it
    (espeak-ng reads a NIKHAHIT on its own out as a letter's name, "Thai letter ...")."""
    if text.isascii():
        return text
    if "\u0e4d" in text:
        text = _THAI_PARTS.sub("\\1\u0e33", text)
    if "\u0ecd" in text:
        text = _LAO_PARTS.sub("\\1\u0eb3", text)
    return text


__all__ = ["for_speech", "for_terminal"]
