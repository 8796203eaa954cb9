"""Text rewritten for the kiosk's terminal: characters foot draws wrong become equivalents of the
same cell width.

foot 1.13 with Tlwg Mono draws U+0E33 THAI SARA AM as a nikhahit over the letter before it and
an empty cell ("กำลัง" reads "ก ลัง"). Its compatibility decomposition, U+0E4D NIKHAHIT (a
zero-width mark) then U+0E32 SARA AA (one cell), is drawn right, and NFC does not put it back
together. U+0EB3 LAO AM is the same case (U+0ECD NIGGAHITA, U+0EB2 AA).

The NIKHAHIT goes before the tone marks of its letter ("น้ำ" becomes NO NU, NIKHAHIT, MAI THO,
SARA AA): the order in which shaping engines (HarfBuzz) decompose SARA AM, so text shaped from it
(Pillow with raqm, a browser) looks exactly like the composed word; foot draws both orders alike.
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
