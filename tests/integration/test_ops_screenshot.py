"""`lobby-display screenshot`: rendered here from the simulator's live feeds when no display runs,
asked of the running display (SIGUSR1) when one does, never killing a process that cannot answer."""

from __future__ import annotations

import html
import os
import select
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from lobby_display.cli import main
from lobby_display.process import PID_FILE_NAME
from lobby_display.simulator import SimulatorServer
from tests.helpers.needs import needs

#: A process that says it is lobby_display but has no SIGUSR1 handler: the signal would kill it.
DEAF_PROGRAM = """
import time  # lobby_display, as an older version without a SIGUSR1 handler
print("ready", flush=True)
time.sleep(120)
"""


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CREDENTIALS_DIRECTORY", "STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        monkeypatch.delenv(name, raising=False)
    for name in [name for name in os.environ if name.startswith("LOBBY_DISPLAY_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


def queue_names(sim: SimulatorServer, key: str) -> list[str]:
    answer = httpx.get(
        f"{sim.url}/v1/places/{sim.place_id}/queues",
        params={"key": key, "langs": "en_US"},
        timeout=5,
    )
    answer.raise_for_status()
    return [queue["name"]["en_US"] for queue in answer.json().values()]


def svg_text(path: Path) -> str:
    """The SVG's text with its entities decoded (spaces are written as &#160;)."""
    return html.unescape(path.read_text(encoding="utf-8")).replace("\xa0", " ")


Start = Callable[..., "subprocess.Popen[str]"]


@pytest.fixture
def start_process() -> Iterator[Start]:
    """Start a Python program that prints "ready"; every one is stopped at the end."""
    started: list[subprocess.Popen[str]] = []

    def start(code: str, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 30)
        assert ready and process.stdout.readline().strip() == "ready", process.stderr
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)


def test_headless_svg_shows_the_place_queues(
    simulator: SimulatorServer,
    sim_key: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = simulator.write_config(tmp_path, locales=["en_US"])
    output = tmp_path / "shots" / "now.svg"
    assert main(["screenshot", "--config", str(config), "--output", str(output)]) == 0
    assert "the live feeds, rendered here" in capsys.readouterr().out
    text = svg_text(output)
    assert text.startswith("<svg")
    shown = [name for name in queue_names(simulator, sim_key) if name in text]
    assert shown, "no queue name on the screen"


def test_size_sets_the_headless_terminal(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = simulator.write_config(tmp_path, locales=["en_US"])
    small, large = tmp_path / "small.svg", tmp_path / "large.svg"
    assert (
        main(["screenshot", "--config", str(config), "--output", str(small), "--size", "80x24"])
        == 0
    )
    assert main(["screenshot", "--config", str(config), "--output", str(large)]) == 0
    assert len(small.read_text().splitlines()) < len(large.read_text().splitlines())
    with pytest.raises(SystemExit) as refused:
        main(["screenshot", "--config", str(config), "--output", str(small), "--size", "wide"])
    assert refused.value.code == 2
    assert "160x45" in capsys.readouterr().err


@needs("rsvg-convert", "librsvg2-bin")
def test_png_is_converted_by_rsvg_convert(simulator: SimulatorServer, tmp_path: Path) -> None:
    config = simulator.write_config(tmp_path, locales=["en_US"])
    output = tmp_path / "now.png"
    assert main(["screenshot", "--config", str(config), "--output", str(output)]) == 0
    data = output.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000


def test_another_suffix_is_refused(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = simulator.write_config(tmp_path)
    assert main(["screenshot", "--config", str(config), "--output", str(tmp_path / "a.jpg")]) == 2
    assert ".svg or .png" in capsys.readouterr().err
    assert not (tmp_path / "a.jpg").exists()


# A running display asked for its own screen (the real `lobby-display run` and its SIGUSR1
# handler): test_kiosk_wiring.py.


def test_a_process_that_cannot_answer_is_not_signalled(
    simulator: SimulatorServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    start_process: Start,
) -> None:
    config = simulator.write_config(tmp_path, locales=["en_US"])
    runtime = tmp_path / "run"
    runtime.mkdir()
    deaf = start_process(DEAF_PROGRAM, env=dict(os.environ))
    (runtime / PID_FILE_NAME).write_text(f"{deaf.pid}\n")

    monkeypatch.setenv("RUNTIME_DIRECTORY", str(runtime))
    output = tmp_path / "support.svg"
    assert main(["screenshot", "--config", str(config), "--output", str(output)]) == 0
    captured = capsys.readouterr()
    assert "does not take screenshots on request" in captured.err
    assert "rendered here" in captured.out
    assert deaf.poll() is None, "SIGUSR1 would have killed it"
    # The screen rendered here did not take over the display's PID file.
    assert (runtime / PID_FILE_NAME).read_text().strip() == str(deaf.pid)


def test_unusable_credentials_still_give_a_screenshot_that_says_why(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = simulator.write_config(tmp_path, locales=["en_US"])
    (tmp_path / "service-account.json").chmod(0o644)
    output = tmp_path / "now.svg"
    assert main(["screenshot", "--config", str(config), "--output", str(output)]) == 0
    said = capsys.readouterr().out
    assert "not live" in said and "chmod 600" in said
    assert svg_text(output).startswith("<svg")


def test_png_conversion_keeps_columns_aligned() -> None:
    """rsvg-convert ignores textLength: the PNG path asks for a monospace font and kept spaces."""
    from lobby_display.ops.screenshot import for_rsvg

    svg = (
        '<svg class="rich-terminal" viewBox="0 0 10 10"><style>'
        '@font-face { font-family: "Fira Code"; } .r { font-family: Fira Code, monospace; }'
        "</style><text>A&#160;&#160;B</text></svg>"
    )
    fixed = for_rsvg(svg)
    assert 'xml:space="preserve"' in fixed
    assert '"DejaVu Sans Mono", "Noto Sans Mono CJK JP"' in fixed
    assert "A  B" in fixed
