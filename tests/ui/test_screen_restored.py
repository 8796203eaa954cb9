"""A board restored after a restart: shown at once, out of date, on the place's clock."""

from __future__ import annotations

from datetime import UTC

import pytest

from lobby_display import app as app_module
from lobby_display.app import LobbyApp
from lobby_display.board import BoardSettings
from lobby_display.state import SavedBoard
from tests.helpers.boards import NOW, Clock, make_board, make_settings, screen_text


async def test_a_restored_board_shows_the_place_time_from_the_first_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(app_module, "machine_timezone", lambda: UTC)
    settings = make_settings(timezone="")  # the clock follows the place, not the config
    saved = SavedBoard.of(make_board(settings).memory(NOW), NOW)
    restored = saved.restore(BoardSettings.from_settings(settings), NOW)
    app = LobbyApp(settings, None, clock=Clock(), board=restored)
    async with app.run_test(size=(120, 34)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        # NOW is 13:05 UTC: the place (Europe/Paris) reads 14:05, the machine (UTC) 13:05.
        assert "14:05" in text
        assert "13:05" not in text
        assert "Out of date" in text
