"""Text rewritten for the kiosk's terminal: characters foot draws wrong become equivalents of the
same cell width.

foot 1.13 with Tlwg Mono draws U+0E33 THAI SARA AM as a nikhahit over the letter before it and
an empty cell ("กำลัง" reads "ก ลัง"). Its compatibility decomposition, U+0E4D NIKHAHIT (a
zero-width mark) then U+0E32 SARA AA (one cell), is drawn right, looks the same everywhere
else, and NFC does not put it back together. U+0EB3 LAO AM is the same case (U+0ECD U+0EB2).
"""

from __future__ import annotations

from typing import Final

#: What `for_terminal` writes instead of each character foot draws wrong.
_REWRITES: Final[dict[int, str]] = {
    0x0E33: "\u0e4d\u0e32",  # THAI CHARACTER SARA AM -> NIKHAHIT, SARA AA
    0x0EB3: "\u0ecd\u0eb2",  # LAO VOWEL SIGN AM -> NIGGAHITA, VOWEL SIGN AA
}
#: The reverse, for speech engines (espeak-ng reads a lone NIKHAHIT out as "Thai letter ...").
_RECOMPOSE: Final[tuple[tuple[str, str], ...]] = tuple(
    (pair, chr(code)) for code, pair in _REWRITES.items()
)


def for_terminal(text: str) -> str:
    """`text` as the kiosk's terminal draws it right: SARA AM (Thai, Lao) decomposed.

    The cell width is unchanged (the nikhahit takes no cell), and so is ASCII text.
    Applying it twice gives the same text as applying it once.
    """
    if text.isascii():
        return text
    return text.translate(_REWRITES)


def for_speech(text: str) -> str:
    """`text` with what `for_terminal` decomposed composed again, as speech engines expect it."""
    if text.isascii():
        return text
    for pair, char in _RECOMPOSE:
        text = text.replace(pair, char)
    return text


__all__ = ["for_speech", "for_terminal"]
