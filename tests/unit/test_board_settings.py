"""Board: its settings come from the screen's configuration."""

from __future__ import annotations

import pytest

from lobby_display.board import BoardSettings
from lobby_display.config import settings_from_dict


def test_board_settings_from_the_configuration() -> None:
    settings = settings_from_dict(
        {
            "service": {"display_url": "https://display.example.net", "api_key": "k" * 12},
            "place": {"id": "P", "queues": ["q2", "q1"], "counters": ["c1"]},
            "display": {
                "locales": ["fr_FR", "en_US"],
                "recent_calls": 4,
                "highlight_seconds": 20,
                "call_max_age_seconds": 300,
                "group_size": 3,
                "stale_after_seconds": 45,
                "withdraw_after_seconds": 600,
            },
        },
        environ={},
    )

    board_settings = BoardSettings.from_settings(settings)

    assert board_settings == BoardSettings(
        queue_ids=("q2", "q1"),
        counter_ids=("c1",),
        locales=("fr_FR", "en_US"),
        recent_calls=4,
        highlight_seconds=20,
        call_max_age_seconds=300,
        group_size=3,
        stale_after_seconds=45,
        withdraw_after_seconds=600,
    )


@pytest.mark.parametrize(
    "wrong",
    [
        {"seen_calls_limit": 0},
        {"recent_calls": -1},
        {"group_size": 0},
        {"stale_after_seconds": 60, "withdraw_after_seconds": 30},
    ],
)
def test_settings_that_would_break_a_rule_are_refused(wrong: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        BoardSettings(**wrong)  # type: ignore[arg-type]
