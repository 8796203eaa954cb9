"""Several screens on one PC: which sway commands put a screen on its TV, and the output key."""

from __future__ import annotations

from typing import Any

import pytest

from lobby_display.config import ConfigError, settings_from_dict
from lobby_display.wall import (
    WallError,
    Window,
    find_window,
    free_outputs,
    plan,
    workspace_for,
)


def view(con_id: int, app_id: str, fullscreen: bool = False) -> dict[str, Any]:
    return {
        "id": con_id,
        "type": "con",
        "app_id": app_id,
        "fullscreen_mode": 1 if fullscreen else 0,
        "nodes": [],
        "floating_nodes": [],
    }


def workspace(name: str, *views: dict[str, Any]) -> dict[str, Any]:
    return {"type": "workspace", "name": name, "nodes": list(views), "floating_nodes": []}


def output(name: str, *workspaces: dict[str, Any]) -> dict[str, Any]:
    return {"type": "output", "name": name, "nodes": list(workspaces)}


def tree(*outputs: dict[str, Any]) -> dict[str, Any]:
    return {"type": "root", "nodes": [output("__i3", workspace("__i3_scratch")), *outputs]}


def outputs(*shown: tuple[str, str], off: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """sway's get_outputs: (name, visible workspace) of each active output, then inactive ones."""
    active = [{"name": name, "active": True, "current_workspace": ws} for name, ws in shown]
    return active + [{"name": name, "active": False, "current_workspace": None} for name in off]


HALL = "lobby-display-hall"
ANNEX = "lobby-display-annex"


def two_tvs_hall_new() -> dict[str, Any]:
    """annex already full screen on HDMI-A-1; hall's new window opened next to it."""
    return tree(
        output(
            "HDMI-A-1",
            workspace(f"{ANNEX}@HDMI-A-1", view(4, ANNEX, fullscreen=True), view(9, HALL)),
        ),
        output("HDMI-A-2", workspace("2")),
    )


def test_find_window_matches_the_app_id_exactly() -> None:
    layout = tree(
        output("HDMI-A-1", workspace("1", view(4, "lobby-display-hall.b"), view(5, "x.hall")))
    )
    assert find_window(layout, "lobby-display-hall.b") == Window(4, "HDMI-A-1", "1", False)
    # An app id is not a pattern: "." matches only itself.
    assert find_window(layout, "lobby-display-hallxb") is None


def test_find_window_prefers_the_newest_of_two() -> None:
    """A restarted screen while its old window is still closing: the new one is placed."""
    layout = tree(output("DP-1", workspace("1", view(12, HALL), view(30, HALL))))
    window = find_window(layout, HALL)
    assert window is not None and window.con_id == 30


def test_on_its_connected_output_the_window_goes_full_screen_there() -> None:
    layout = two_tvs_hall_new()
    window = find_window(layout, HALL)
    assert window is not None
    shown = outputs(("HDMI-A-1", f"{ANNEX}@HDMI-A-1"), ("HDMI-A-2", "2"))
    placement = plan(layout, shown, window, HALL, "HDMI-A-2")
    assert placement.workspace == f"{HALL}@HDMI-A-2"
    assert placement.commands == [
        f'workspace "{HALL}@HDMI-A-2" output "HDMI-A-2"',
        f'[con_id=9] move container to workspace "{HALL}@HDMI-A-2"',
        f'workspace --no-auto-back-and-forth "{HALL}@HDMI-A-2"',
        'move workspace to output "HDMI-A-2"',
        "[con_id=9] fullscreen enable",
    ]
    assert (placement.expected, placement.warning) == ("HDMI-A-2", "")


def test_a_missing_output_shows_the_board_on_a_free_tv_and_keeps_the_tie() -> None:
    layout = two_tvs_hall_new()
    window = find_window(layout, HALL)
    assert window is not None
    shown = outputs(("HDMI-A-1", f"{ANNEX}@HDMI-A-1"), ("HDMI-A-2", "2"))
    placement = plan(layout, shown, window, HALL, "DP-3")
    # Tied to DP-3 (sway moves it there when DP-3 appears), shown on the TV that shows nothing.
    assert placement.commands[0] == f'workspace "{HALL}@DP-3" output "DP-3"'
    assert placement.commands[1] == 'focus output "HDMI-A-2"'
    assert not any("move workspace to output" in command for command in placement.commands)
    assert placement.expected == "HDMI-A-2"
    assert placement.warning == "output DP-3 is not connected (outputs on: HDMI-A-1, HDMI-A-2)"


def test_an_output_turned_off_in_sways_config_is_named_as_such() -> None:
    layout = two_tvs_hall_new()
    window = find_window(layout, HALL)
    assert window is not None
    shown = outputs(("HDMI-A-1", f"{ANNEX}@HDMI-A-1"), off=("HDMI-A-2",))
    placement = plan(layout, shown, window, HALL, "HDMI-A-2")
    assert "HDMI-A-2 is turned off in sway's config" in placement.warning
    # No free TV: sway puts it where it opened; the board still shows, full screen.
    assert not any(command.startswith("focus output") for command in placement.commands)
    assert placement.commands[-1] == "[con_id=9] fullscreen enable"
    assert placement.expected == ""


def test_without_an_output_the_board_takes_a_free_tv() -> None:
    layout = two_tvs_hall_new()
    window = find_window(layout, HALL)
    assert window is not None
    shown = outputs(("HDMI-A-1", f"{ANNEX}@HDMI-A-1"), ("HDMI-A-2", "2"))
    placement = plan(layout, shown, window, HALL, "")
    assert placement.workspace == HALL
    assert placement.commands == [
        'focus output "HDMI-A-2"',
        f'[con_id=9] move container to workspace "{HALL}"',
        f'workspace --no-auto-back-and-forth "{HALL}"',
        "[con_id=9] fullscreen enable",
    ]
    assert (placement.expected, placement.warning) == ("HDMI-A-2", "")


def test_a_screen_restarted_reuses_its_workspace_without_tying_it_again() -> None:
    """The empty workspace of the previous window is still shown: no second output tie."""
    layout = tree(
        output("HDMI-A-1", workspace(f"{ANNEX}@HDMI-A-1", view(4, ANNEX, fullscreen=True))),
        output("HDMI-A-2", workspace(f"{HALL}@HDMI-A-2"), workspace("3", view(11, HALL))),
    )
    window = find_window(layout, HALL)
    assert window is not None
    shown = outputs(("HDMI-A-1", f"{ANNEX}@HDMI-A-1"), ("HDMI-A-2", f"{HALL}@HDMI-A-2"))
    placement = plan(layout, shown, window, HALL, "HDMI-A-2")
    assert not any(command.startswith('workspace "') for command in placement.commands)
    assert placement.commands[0] == f'[con_id=11] move container to workspace "{HALL}@HDMI-A-2"'


def test_free_outputs_ignore_the_window_being_placed() -> None:
    layout = tree(
        output("DP-1", workspace("1", view(3, HALL))),
        output("DP-2", workspace("2", view(5, ANNEX))),
    )
    shown = outputs(("DP-1", "1"), ("DP-2", "2"))
    assert free_outputs(layout, shown, ignore=3) == ["DP-1"]
    assert free_outputs(layout, shown) == []


def test_a_name_that_would_break_a_sway_command_is_refused() -> None:
    layout = two_tvs_hall_new()
    window = find_window(layout, HALL)
    assert window is not None
    with pytest.raises(WallError, match="cannot be used in a sway command"):
        plan(layout, outputs(("HDMI-A-1", "1")), window, 'evil"; exit', "")


def test_workspace_names_carry_the_output() -> None:
    assert workspace_for(HALL, "HDMI-A-2") == f"{HALL}@HDMI-A-2"
    assert workspace_for(HALL, "") == HALL


BASE = {"service": {"display_url": "https://d.example", "api_key": "k"}, "place": {"id": "P"}}


def test_output_defaults_to_none_and_accepts_sways_names() -> None:
    assert settings_from_dict(BASE, environ={}).display.output == ""
    for name in ("HDMI-A-2", "DP-1", "Dell Inc. DELL U2415 7MT0167B2YNL"):
        data = {**BASE, "display": {"output": f" {name} "}}
        assert settings_from_dict(data, environ={}).display.output == name


@pytest.mark.parametrize("name", ['HDMI"A', "HDMI-A-1; exit", "A,B", "HDMI\\A", "[x]", "A\nB"])
def test_output_names_that_would_break_a_sway_command_are_refused(name: str) -> None:
    with pytest.raises(ConfigError, match=r"display\.output: .* is not an output name"):
        settings_from_dict({**BASE, "display": {"output": name}}, environ={})


def test_output_can_come_from_the_environment() -> None:
    env = {"LOBBY_DISPLAY_DISPLAY__OUTPUT": "HDMI-A-1"}
    assert settings_from_dict(BASE, environ=env).display.output == "HDMI-A-1"
