"""Text for the kiosk's terminal: Thai and Lao SARA AM decomposed (foot draws U+0E33 as a mark
and an empty cell), with the same cell width, in the order shaping engines use, and composed
again for speech."""

from __future__ import annotations

import subprocess
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw, ImageFont, features
from rich.cells import cell_len

from lobby_display.terminal_text import for_speech, for_terminal
from tests.helpers.needs import missing

SARA_AM = "\u0e33"
LAO_AM = "\u0eb3"

#: Thai, Lao, Latin with accents, CJK, Hangul, punctuation the screen uses.
SCREEN_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(min_codepoint=0x0E01, max_codepoint=0x0E5B),
        st.characters(min_codepoint=0x0E81, max_codepoint=0x0EDF),
        st.sampled_from("AZaz09 éÖß–—…·\u202f\u00a0正在叫号번창구"),
    ),
    max_size=40,
)


def test_thai_sara_am_is_written_as_nikhahit_and_sara_aa() -> None:
    assert for_terminal("กำลังเรียกคิว") == "ก\u0e4d\u0e32ลังเรียกคิว"
    # With a tone mark ("water"): the NIKHAHIT comes first, as HarfBuzz decomposes SARA AM.
    assert for_terminal("น้ำ") == "น\u0e4d\u0e49\u0e32"


def test_lao_am_is_written_as_niggahita_and_aa() -> None:
    assert for_terminal("ຄຳ") == "ຄ\u0ecd\u0eb2"
    assert for_terminal("ນ້ຳ") == "ນ\u0ecd\u0ec9\u0eb2"


def test_the_decomposition_is_the_unicode_compatibility_one_and_nfc_keeps_it() -> None:
    for char in (SARA_AM, LAO_AM):
        assert for_terminal(char) == unicodedata.normalize("NFKD", char)
    for word in ("กำลัง", "น้ำ", "ค่ำ", "ນ້ຳ"):
        assert unicodedata.normalize("NFC", for_terminal(word)) == for_terminal(word)


@given(SCREEN_TEXT)
@settings(max_examples=300, deadline=None)
def test_the_cell_width_is_unchanged(text: str) -> None:
    assert cell_len(for_terminal(text)) == cell_len(text)


@given(SCREEN_TEXT)
@settings(max_examples=300, deadline=None)
def test_no_sara_am_is_left_and_a_second_pass_changes_nothing(text: str) -> None:
    once = for_terminal(text)
    assert SARA_AM not in once and LAO_AM not in once
    assert for_terminal(once) == once


@given(SCREEN_TEXT.filter(lambda text: SARA_AM not in text and LAO_AM not in text))
@settings(max_examples=300, deadline=None)
def test_other_text_is_unchanged(text: str) -> None:
    assert for_terminal(text) == text


def test_latin_cjk_and_thai_without_sara_am_are_unchanged() -> None:
    for text in (
        "Now calling",
        "Appel en cours\u202f: 12\u202f480",
        "正在叫号",
        "호출 중",
        "ทะเบียน",
    ):
        assert for_terminal(text) == text


@given(SCREEN_TEXT.filter(lambda text: "\u0e4d" not in text and "\u0ecd" not in text))
@settings(max_examples=300, deadline=None)
def test_speech_gets_the_written_text_back(text: str) -> None:
    assert for_speech(for_terminal(text)) == text


def test_speech_composes_sara_am_again() -> None:
    assert for_speech("ช่องบริการ ก\u0e4d\u0e32ลัง") == "ช่องบริการ กำลัง"
    assert for_speech("Desk 3") == "Desk 3"


def _font(family: str) -> ImageFont.FreeTypeFont:
    found = subprocess.run(
        ["fc-match", "-f", "%{family}\n%{file}", family],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split("\n")
    if len(found) < 2 or family not in found[0]:
        missing(f"no {family} font (fonts-thai-tlwg)")
    return ImageFont.truetype(found[1], 80)


@pytest.mark.parametrize("family", ["Tlwg Mono", "Loma", "Garuda"])
def test_shaped_text_looks_exactly_like_the_composed_word(family: str) -> None:
    # Anything that shapes the text (Pillow with raqm, a browser) draws the same pixels.
    if not features.check("raqm"):
        missing("Pillow without raqm does not shape Thai (the wheel from PyPI has it)")
    font = _font(family)

    def drawn(text: str) -> bytes:
        image = Image.new("L", (900, 140))
        ImageDraw.Draw(image).text((10, 10), text, font=font, fill=255)
        return image.tobytes()

    words = "กำลัง น้ำ ค่ำ ต่ำ ซ้ำ"
    assert drawn(for_terminal(words)) == drawn(words)
