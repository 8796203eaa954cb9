"""The picture maker: a process of its own that makes called tickets' pictures ahead, the same
bytes the screen would draw; one that fails, stalls or ends never costs the screen a picture."""

from __future__ import annotations

import io
import json
import logging
import sys
import time
from collections.abc import Iterator

import pytest

from lobby_display.graphics import pictures, sixel
from lobby_display.graphics.pictures import PictureKey, PictureMaker, picture_body, serve
from lobby_display.graphics.raster import place_ink

#: Latin, a two-letter prefix, Thai, Japanese, and a label with nothing to ink.
KEYS: list[PictureKey] = [
    ("A031", 612, 288, "", 0),
    ("BX-12", 288, 108, "", 40),
    ("ภ12", 612, 288, "", 0),
    ("受付7", 540, 216, "ja_JP", 0),
    ("   ", 612, 288, "", 0),
]

#: A maker that says it is ready, then reads its requests and never answers.
SILENT = [
    sys.executable,
    "-c",
    "print('\"ready\"', flush=True)\nimport sys\nfor _ in sys.stdin: pass",
]


def taken(maker: PictureMaker, key: PictureKey, seconds: float = 20.0) -> bytes | None:
    """`key`'s picture from `maker`, asked for and waited for (the first starts the process)."""
    maker.ask(key)
    deadline = time.monotonic() + seconds
    while True:
        try:
            return maker.take(key)
        except LookupError:
            if time.monotonic() > deadline:
                raise
            maker.ask(key)


@pytest.fixture
def maker() -> Iterator[PictureMaker]:
    made = PictureMaker()
    yield made
    made.close()


def test_the_makers_pictures_are_byte_for_byte_those_drawn_here(maker: PictureMaker) -> None:
    for key in KEYS:
        assert taken(maker, key) == picture_body(key), key
    assert maker.made == len(KEYS)


def test_a_picture_with_its_colours_is_the_sequence_the_encoder_makes() -> None:
    label, width, height, cjk, size = KEYS[0]
    placed = place_ink(label, width, height, cjk, size)
    assert placed is not None
    body = picture_body(KEYS[0])
    assert body is not None
    colours = ((10, 20, 30), (250, 200, 0))
    whole = sixel.encode_ink(
        placed.ink, placed.left, placed.top, (width, height), *colours, paint_background=False
    )
    assert sixel.header((width, height), *colours) + body == whole


def test_a_label_with_nothing_to_ink_has_no_picture() -> None:
    assert picture_body(("   ", 612, 288, "", 0)) is None


def test_a_request_the_maker_cannot_read_is_answered_with_what_is_wrong() -> None:
    requests = io.BytesIO(b"not json\n" + b'["A031", 612]\n' + json.dumps(list(KEYS[0])).encode())
    answers = io.BytesIO()
    serve(requests, answers)
    ready, first, second, third = answers.getvalue().split(b"\n", 3)
    assert ready == pictures.READY
    assert json.loads(first)[0] == -1 and "JSONDecodeError" in json.loads(first)[1]
    assert json.loads(second)[0] == -1 and "label, width, height" in json.loads(second)[1]
    body = picture_body(KEYS[0])
    assert body is not None
    assert third == json.dumps([len(body), None]).encode() + b"\n" + body, "it went on after them"


def test_a_picture_not_asked_for_is_drawn_by_the_screen(maker: PictureMaker) -> None:
    with pytest.raises(LookupError):
        maker.take(KEYS[0])
    assert not maker.running, "nothing was asked: no process was started"


def test_a_maker_not_ready_yet_is_not_waited_for(
    maker: PictureMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A wait long enough for the maker to load and answer, were it waited for.
    monkeypatch.setattr(pictures, "WAIT_SECONDS", 10.0)
    maker.ask(KEYS[0])  # starts it: loading its modules takes longer than a frame
    started = time.monotonic()
    with pytest.raises(LookupError):
        maker.take(KEYS[0])
    assert time.monotonic() - started < 5.0, "the first call did not wait for the maker"


def test_a_maker_that_does_not_answer_costs_the_screen_at_most_its_wait() -> None:
    silent = PictureMaker(SILENT)
    try:
        silent.ask(KEYS[0])
        deadline = time.monotonic() + 20
        while not silent._ready and time.monotonic() < deadline:
            silent._read(0.01)
        assert silent._ready
        started = time.monotonic()
        with pytest.raises(LookupError):
            silent.take(KEYS[0])
        waited = time.monotonic() - started
        assert pictures.WAIT_SECONDS <= waited < pictures.WAIT_SECONDS + 2.0, waited
        # Asked again and again, it is never more than its share of pictures behind.
        for number in range(3 * pictures.MAX_PENDING):
            silent.ask((f"K{number:03d}", 612, 288, "", 0))
        assert len(silent._asked) <= pictures.MAX_PENDING
    finally:
        silent.close()
    assert not silent.running


def test_a_maker_that_ended_is_said_and_started_again_later(
    maker: PictureMaker, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert taken(maker, KEYS[0]) == picture_body(KEYS[0])
    process = maker._process
    assert process is not None
    process.kill()
    process.wait()
    with caplog.at_level(logging.WARNING, logger="lobby_display.graphics.pictures"):
        maker.ask(KEYS[1])
        with pytest.raises(LookupError):
            maker.take(KEYS[1])
    assert "the picture maker stopped" in caplog.text
    assert not maker.running, "not started again at once"
    monkeypatch.setattr(pictures, "RESTART_SECONDS", 0.0)
    maker._retry_at = 0.0
    assert taken(maker, KEYS[1]) == picture_body(KEYS[1]), "started again, it makes pictures"
    assert maker.running


def test_close_ends_the_makers_process(maker: PictureMaker) -> None:
    taken(maker, KEYS[0])
    process = maker._process
    assert process is not None and process.poll() is None
    maker.close()
    assert process.poll() is not None
    assert not maker.running


def test_a_maker_out_of_step_is_stopped_and_said(caplog: pytest.LogCaptureFixture) -> None:
    garbled = PictureMaker(
        [
            sys.executable,
            "-c",
            "import sys\nprint('\"ready\"', flush=True)\n"
            "for _ in sys.stdin: print('?', flush=True)",
        ]
    )
    try:
        with caplog.at_level(logging.WARNING, logger="lobby_display.graphics.pictures"):
            garbled.ask(KEYS[0])
            deadline = time.monotonic() + 20
            while garbled.running and time.monotonic() < deadline:
                garbled._read(0.05)
            with pytest.raises(LookupError):
                garbled.take(KEYS[0])
        assert "answered something unreadable" in caplog.text
        assert not garbled.running
    finally:
        garbled.close()


def test_pictures_never_taken_are_not_kept_for_ever(maker: PictureMaker) -> None:
    """A card laid out otherwise than foreseen never takes its picture: a screen that runs for
    months must not keep them all."""
    taken(maker, KEYS[0])
    for number in range(4 * pictures.MAX_PENDING):
        maker.ask((f"K{number:03d}", 288, 108, "", 0))
        maker._read(0.2)
    deadline = time.monotonic() + 20
    while maker._asked and time.monotonic() < deadline:
        maker._read(0.05)
    assert not maker._asked, "every picture asked for was answered"
    assert 0 < len(maker._answers) <= pictures.MAX_PENDING
    assert len(maker._wanted) <= pictures.MAX_PENDING


def test_a_maker_stuck_for_long_is_ended_and_said(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pictures, "STALL_SECONDS", 0.2)
    silent = PictureMaker(SILENT)
    try:
        silent.ask(KEYS[0])
        process = silent._process
        assert process is not None
        time.sleep(0.3)
        with caplog.at_level(logging.WARNING, logger="lobby_display.graphics.pictures"):
            silent.ask(KEYS[1])
        assert "did not answer" in caplog.text
        assert not silent.running
        assert process.poll() is not None, "the stuck process was ended"
    finally:
        silent.close()
