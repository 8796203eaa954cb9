"""The last board survives a restart on disk; a bad or foreign file never stops the screen."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from lobby_display.board import Board, BoardSettings
from lobby_display.models import TicketState
from lobby_display.state import STATE_FILE, BoardStore
from lobby_display.updates import TicketsSnapshot
from lobby_display.views import Freshness, Part
from tests.helpers.board_support import at, reference, ticket
from tests.helpers.unprivileged import as_unprivileged, give, shared_folder

SETTINGS = BoardSettings()


def called_board() -> Board:
    board = Board(SETTINGS, started_at=at(0))
    board.apply(reference(endpoints={"e1": {"en_US": "Desk 1"}}), at(0))
    board.apply(
        TicketsSnapshot(
            (ticket("t1", TicketState.CALLED, label="K017", endpoint="e1", called_at=at(0)),)
        ),
        at(1),
    )
    return board


def test_a_saved_board_comes_back_out_of_date(tmp_path: Path) -> None:
    store = BoardStore(tmp_path, "P1")
    assert store.save(called_board(), at(2))
    restored = BoardStore(tmp_path, "P1").load(SETTINGS, at(100))
    assert restored is not None
    assert [view.call.label for view in restored.recent_calls()] == ["K017"]
    assert restored.freshness(Part.CALLS, at(100)) in (Freshness.STALE, Freshness.WITHDRAWN)
    # A restored call is never highlighted or announced again.
    assert not any(view.highlighted(at(100)) for view in restored.recent_calls())


def test_saves_are_spaced_and_only_what_changed_unless_forced(tmp_path: Path) -> None:
    store = BoardStore(tmp_path, "P1", min_interval=5)
    board = called_board()
    assert store.save(board, at(10))
    board.apply(TicketsSnapshot(()), at(11))  # the call's ticket moved on: a change
    assert not store.save(board, at(12)), "within min_interval"
    assert store.save(board, at(12), force=True)
    board.apply(TicketsSnapshot((ticket("t2", label="B001"),)), at(13))
    assert store.save(board, at(18)), "changed, and 6 s later"
    assert not store.save(board, at(30)), "unchanged: no write"
    assert store.save(board, at(79)), "unchanged for a minute: written again"


def test_the_file_is_replaced_whole(tmp_path: Path) -> None:
    store = BoardStore(tmp_path, "P1", min_interval=0)
    store.save(called_board(), at(2))
    store.save(called_board(), at(3))
    assert [path.name for path in tmp_path.iterdir()] == [STATE_FILE]
    assert json.loads((tmp_path / STATE_FILE).read_text())["place_id"] == "P1"
    assert not stat.S_IMODE(os.stat(tmp_path / STATE_FILE).st_mode) & 0o007


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe\x00garbage",
        b"[]",
        b'{"format": "something else"}',
        b'{"format": "lobby-display board", "place_id": "P1", "board": {"version": 99}}',
        b'{"format": "lobby-display board", "place_id": "P1", "board": {"version": 1}}',
    ],
    ids=["broken json", "binary", "a list", "foreign format", "other version", "half a board"],
)
def test_a_bad_file_is_ignored_with_a_log_line(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / STATE_FILE).write_bytes(content)
    assert BoardStore(tmp_path, "P1").load(SETTINGS, at(0)) is None
    assert "ignored the saved board" in caplog.text


def test_another_places_board_is_not_shown(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    BoardStore(tmp_path, "P1").save(called_board(), at(2))
    assert BoardStore(tmp_path, "P2").load(SETTINGS, at(3)) is None
    assert "another place" in caplog.text


def test_no_file_is_a_first_boot(tmp_path: Path) -> None:
    assert BoardStore(tmp_path / "missing", "P1").load(SETTINGS, at(0)) is None


def _save_twice(folder: Path, caplog: pytest.LogCaptureFixture) -> tuple[bool, bool, str]:
    store = BoardStore(folder, "P1", min_interval=0)
    first, second = store.save(called_board(), at(1)), store.save(called_board(), at(2))
    return first, second, caplog.text


def test_an_unwritable_directory_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    # As an unprivileged user even under root (root writes into a read-only directory).
    folder = shared_folder()
    try:
        state = folder / "state"
        state.mkdir(mode=0o700)
        give(state)
        state.chmod(0o500)
        first, second, logged = as_unprivileged(_save_twice, state, caplog)
    finally:
        shutil.rmtree(folder)
    assert not first and not second
    assert logged.count("cannot save the board") == 1
    assert not (state / STATE_FILE).exists()


def test_a_full_disk_is_logged_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # A regular file where the directory should be: every write fails as on a broken disk.
    blocker = tmp_path / "state"
    blocker.write_text("")
    store = BoardStore(blocker, "P1", min_interval=0)
    assert not store.save(called_board(), at(1))
    assert not store.save(called_board(), at(2))
    assert caplog.text.count("cannot save the board") == 1


def test_a_save_in_the_background_writes_the_board_a_stop_waits_for_it(tmp_path: Path) -> None:
    """The kiosk saves without waiting for the disk (a sync held the screen for 0.1 s); the
    file is the one a direct save writes, and a save at the stop waits for the one under way."""
    settings = BoardSettings()
    now = at(0)
    board = Board(settings, started_at=now)
    direct, background = BoardStore(tmp_path / "a", "p-1"), BoardStore(tmp_path / "b", "p-1")
    assert direct.save(board, now)
    assert background.save(board, now, wait=False)
    background.flush()
    assert (tmp_path / "b" / "board.json").read_bytes() == (
        tmp_path / "a" / "board.json"
    ).read_bytes()
    assert background.load(settings, now) is not None
    later = at(300)
    assert background.save(board, later, wait=False)
    assert background.save(board, later, force=True)  # joins the write under way, then writes
    assert json.loads((tmp_path / "b" / "board.json").read_text())["saved_at"] == later.isoformat()
