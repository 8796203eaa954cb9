"""Kiosk behaviour: hostile strings are drawn literally and never as escape sequences, only the
configured chord quits, the kiosk's SIGTERM leaves cleanly, a failing source is restarted, its
SIGHUP reloads the settings without losing the board, and the hooks hear what they should."""

from __future__ import annotations

import gc
import os
import re
import signal
from pathlib import Path

import pytest

import lobby_display.app as app_module
from lobby_display.app import DEMO_BANNER, AppHooks, LobbyApp
from lobby_display.config import load_config
from lobby_display.kiosk import Kiosk
from lobby_display.models import Counter, Endpoint, Place, Queue, keyed
from lobby_display.updates import CountersSnapshot, ReferenceData, TicketChanged
from tests.helpers.boards import (
    NOW,
    Clock,
    FakeSource,
    Recorder,
    board_app,
    call,
    make_board,
    make_settings,
    queue_states,
    reference,
    screen_lines,
    screen_text,
    terminal_output,
    ticket,
    wait_for,
)

# Textual's own drawing: colours and styles (SGR) and cursor moves. Anything else is suspect.
_DRAWING = re.compile(r"\x1b\[[0-9;:]*m|\x1b\[\d+;\d+H")


def hostile_reference() -> ReferenceData:
    """Names that try markup, links and escape sequences, as raw records from the network."""
    base = reference()
    place = Place.model_validate({"placeId": "P1", "name": {"en_US": "[bold red]X"}})
    queues = dict(base.queues)
    queues.update(
        keyed(
            Queue,
            {
                "q-pass": {"name": {"en_US": "[link='https://x']Desk[/]"}},
                "q-civil": {"name": {"en_US": "\x1b[2JEvil\x1b[0m queue"}},
            },
            "queue_id",
        )
    )
    endpoints = dict(base.endpoints)
    endpoints.update(
        keyed(
            Endpoint,
            {"e9": {"name": {"en_US": "\x1b]8;;https://x\x07Desk 9\x1b]8;;\x07"}}},
            "endpoint_id",
        )
    )
    counters = keyed(
        Counter, {"c-evil": {"name": {"en_US": "[b]Visitors[/b] \x9b2J"}}}, "counter_id"
    )
    return ReferenceData(place=place, queues=queues, endpoints=endpoints, counters=counters)


async def test_hostile_names_and_labels_are_drawn_literally_without_escape_sequences() -> None:
    clock = Clock()
    app = board_app(["en_US"], clock)
    async with app.run_test(size=(200, 50)) as pilot:
        app.apply_update(hostile_reference())
        app.apply_update(
            CountersSnapshot(
                keyed(Counter, {"c-evil": {"infos": {"value": 3}}}, "counter_id"),
            )
        )
        app.apply_update(
            TicketChanged(
                ticket(
                    "t-evil",
                    "\x1b[31mK1",
                    "q-pass",
                    state=200,
                    desk=9,
                    called_at=clock.now,
                    endpoint={"id": "e9", "name": "\x1b]8;;https://x\x07Desk 9\x1b]8;;\x07"},
                )
            )
        )
        await pilot.pause()
        text = screen_text(app)
        for literal in (
            "[bold red]X",
            "[link='https://x']Desk[/]",
            "[2JEvil[0m queue",
            "[b]Visitors[/b] 2J",
            "[31mK1",
            "Please go to ]8;;https://xDesk 9]8;;",
        ):
            assert literal in text, f"{literal!r} not drawn literally"
        # No markup was applied: no link, no style taken from a name.
        for line in app.screen._compositor.render_strips():
            for segment in line:
                assert segment.style is None or not segment.style.link
        # What reaches the terminal holds no escape sequence but Textual's own drawing.
        output = terminal_output(app)
        leftover = _DRAWING.sub("", output)
        assert "\x1b" not in leftover
        assert "\x9b" not in leftover
        assert "\x07" not in leftover
        assert "\x1b]8" not in output


async def test_only_the_configured_chord_quits() -> None:
    app = board_app(["en_US"], quit_key="ctrl+x")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in ("ctrl+c", "ctrl+q", "escape", "q", "tab", "ctrl+p", "ctrl+z", "enter"):
            await pilot.press(key)
            await pilot.pause()
            assert app.return_code is None, f"{key} must not quit"
        assert not app._notifications, "no 'press ctrl+q to quit' notice either"
        await pilot.press("ctrl+x")
        await pilot.pause()
        assert app.return_code == 0


async def test_the_default_chord_is_ctrl_q_and_an_empty_one_disables_quitting() -> None:
    app = board_app(["en_US"])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.return_code is None
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.return_code == 0

    app = board_app(["en_US"], quit_key="")
    async with app.run_test(size=(80, 24)) as pilot:
        for key in ("ctrl+q", "ctrl+c"):
            await pilot.press(key)
            await pilot.pause()
        assert app.return_code is None


async def test_sigterm_leaves_the_kiosks_screen_cleanly() -> None:
    settings = make_settings()
    kiosk = Kiosk(settings)
    app = LobbyApp(
        settings,
        board=make_board(settings, NOW),
        hooks=AppHooks(started=kiosk.started, stopped=kiosk.stopped),
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        os.kill(os.getpid(), signal.SIGTERM)
        await wait_for(pilot, lambda: app.return_code is not None)
        assert app.return_code == 0
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, "the handlers left with the screen"


async def test_a_failing_or_ending_source_is_started_again_and_the_screen_stays(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, source = Clock(), FakeSource()
    settings = make_settings()
    app = LobbyApp(settings, source, clock=clock, restart_delays=(0.01, 0.05))
    async with app.run_test(size=(120, 34)) as pilot:
        source.push(RuntimeError("GET https://display.test/v1/sse?key=s3cr3t-k3y refused"))
        await wait_for(pilot, lambda: source.runs >= 2)
        assert "the source of updates failed" in caplog.text
        assert "s3cr3t-k3y" not in caplog.text
        source.push(FakeSource.END)
        await wait_for(pilot, lambda: source.runs >= 3)
        source.push(reference(), queue_states())
        await wait_for(pilot, lambda: "Civil registry" in screen_text(app))
        assert app.return_code is None
        assert "Traceback" not in screen_text(app)


async def test_hooks_hear_ready_ticks_health_and_calls_and_their_failures_are_contained() -> None:
    clock, source, recorder = Clock(), FakeSource(), Recorder()
    hooks = recorder.hooks()

    def broken_tick(app: LobbyApp) -> None:
        recorder.ticks += 1
        raise RuntimeError("the watchdog socket is gone")

    settings = make_settings()
    app = LobbyApp(
        settings,
        source,
        clock=clock,
        board=make_board(settings, NOW),
        hooks=type(hooks)(
            ready=hooks.ready, tick=broken_tick, calls=hooks.calls, health=hooks.health
        ),
    )
    async with app.run_test(size=(120, 34)) as pilot:
        await wait_for(pilot, lambda: recorder.ready == 1)
        ticks = recorder.ticks
        app.tick()
        assert recorder.ticks == ticks + 1
        source.push(call("t-x1", "X001", "q-pass", 1, clock.now))
        source.push(call("t-x2", "X002", "q-pass", 2, clock.now))
        await wait_for(pilot, lambda: len(recorder.calls) == 2)
        assert [c.label for calls in recorder.calls for c in calls] == ["X001", "X002"]
        assert app.return_code is None


async def test_sighup_applies_the_new_file_at_once_and_the_board_stays(tmp_path: Path) -> None:
    path = tmp_path / "screen.toml"
    template = f"""
[service]
display_url = "http://127.0.0.1:9"
api_key = "test-key"

[place]
id = "P1"

[state]
directory = "{tmp_path / "state"}"

[display]
locales = [{{locales}}]
timezone = "Europe/Paris"
theme = "{{theme}}"
quit_key = "{{quit_key}}"
"""
    path.write_text(template.format(locales='"en_US"', theme="dark", quit_key="ctrl+q"))
    path.chmod(0o600)  # as a file holding service.api_key must be
    settings = load_config(path, environ={})
    clock, kiosk = Clock(), Kiosk(settings)
    app = LobbyApp(
        settings,
        clock=clock,
        board=make_board(settings, NOW),
        hooks=AppHooks(started=kiosk.started, stopped=kiosk.stopped),
    )
    async with app.run_test(size=(120, 34)) as pilot:
        await pilot.pause()
        assert app.theme == "lobby-dark"
        assert "Now calling" in screen_text(app)

        path.write_text(template.format(locales='"de_DE"', theme="high-contrast", quit_key="f10"))
        os.kill(os.getpid(), signal.SIGHUP)
        await wait_for(pilot, lambda: app.shown_locale == "de_DE")
        assert app.theme == "lobby-high-contrast"
        text = screen_text(app)
        assert "Aufruf" in text
        assert "A017" in text, "the board is kept"
        assert kiosk.settings.display.locales == ["de_DE"], "the sound follows the new file"

        # A broken file changes nothing.
        path.write_text("[display]\nlocales = 12\n")
        kiosk.reload(app)
        await pilot.pause()
        assert app.shown_locale == "de_DE"
        assert app.settings.display.locales == kiosk.settings.display.locales == ["de_DE"]

        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.return_code is None, "the old chord no longer quits"
        await pilot.press("f10")
        await pilot.pause()
        assert app.return_code == 0


async def test_the_screen_alone_takes_no_signal_and_writes_no_pid_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Signals are the kiosk's: a screen without its hooks (a headless screenshot, a test)
    leaves SIGTERM, SIGHUP and the PID file alone."""
    monkeypatch.setenv("RUNTIME_DIRECTORY", str(tmp_path))
    # As the test found them: the default, or ignored when it runs under `nohup`.
    before = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGHUP)}
    app = board_app(["en_US"])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "Now calling" in screen_text(app))
        assert {number: signal.getsignal(number) for number in before} == before
        assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("theme", ["dark", "high-contrast", "console"])
async def test_every_theme_draws_the_board(theme: str) -> None:
    app = board_app(["en_US"], theme=theme)
    async with app.run_test(size=(120, 34)) as pilot:
        await pilot.pause()
        assert app.theme == f"lobby-{theme}"
        assert app.screen.has_class("-console") == (theme == "console")
        lines = screen_lines(app)
        assert any("Civil registry" in line for line in lines)
        if theme == "console":
            # Glyphs of the Linux console's font only: square corners, no rounded ones.
            assert "╭" not in "".join(lines)


async def test_the_demo_says_so_in_the_locale_on_screen() -> None:
    settings = make_settings(locales=["fr_FR"])
    app = LobbyApp(settings, clock=Clock(), board=make_board(settings, NOW), banner=DEMO_BANNER)
    async with app.run_test(size=(120, 34)) as pilot:
        await pilot.pause()
        assert "Démonstration" in screen_text(app)


async def test_what_start_up_made_is_set_aside_from_garbage_collection_once_data_is_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Full collections then skip modules, widgets and the first board: shorter pauses in bursts.
    monkeypatch.setattr(app_module, "SETTLE_SECONDS", 0.05)
    source = FakeSource()
    app = LobbyApp(make_settings(), source, clock=Clock())
    app.animation_level = "none"
    gc.unfreeze()
    try:
        async with app.run_test(size=(120, 34)) as pilot:
            await pilot.pause(0.2)
            assert gc.get_freeze_count() == 0, "nothing is set aside before any data"
            source.push(reference(), queue_states())
            await wait_for(pilot, lambda: gc.get_freeze_count() > 0)
    finally:
        gc.unfreeze()
