"""`lobby-display install` and `uninstall` into a tree (`--root`), as an image builder runs them.

Each form (kiosk, console, a screen of the wall) is installed into a fresh tree, and the tree
is then checked the way systemd and an installer would see it: `systemd-analyze verify --root`
on the unit instance, the owner and mode of every file written, foot's font line and pixel size,
the user from the sysusers file, getty masked and the unit enabled. A second run changes
nothing and says so; a new config is written over the old; a bad config or key file is refused
before anything is written; `--dry-run` writes nothing; `uninstall` takes it all away again.
The steps that need this machine's systemd (packages, daemon-reload, check as the unit, start,
READY) are skipped under --root, and fail with a clear message on a machine without systemd.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from lobby_display.cli import main
from lobby_display.ops import foot_ini
from tests.helpers.needs import needs

needs_systemd_tools = needs("systemd-sysusers", "systemd")
pytestmark = [needs_systemd_tools, needs("systemctl", "systemd")]

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """\
[service]
display_url = "https://display.example.net"
credentials = "/etc/lobby-display/service-account.json"
company = "Example Company"

[place]
id = "P1"

[display]
locales = {locales}
{extra}
"""


def write_config(directory: Path, locales: list[str], extra: str = "", name: str = "hall") -> Path:
    path = directory / f"{name}.toml"
    path.write_text(CONFIG.format(locales=json.dumps(locales), extra=extra))
    path.chmod(0o600)
    return path


def install(
    tree: Path, name: str, config: Path, *args: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    """`lobby-display install NAME --config CONFIG --root TREE ARGS`: exit code, out, err."""
    capsys.readouterr()
    code = main(["install", name, "--config", str(config), "--root", str(tree), *args])
    out, err = capsys.readouterr()
    return code, out, err


def uninstall(
    tree: Path, name: str, *args: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["uninstall", name, "--root", str(tree), *args])
    out, err = capsys.readouterr()
    return code, out + err


def snapshot(tree: Path) -> dict[str, tuple[int, int, int, int, bytes | str]]:
    """Every entry of the tree: mode, owner, group, mtime, and its bytes (or link target)."""
    found: dict[str, tuple[int, int, int, int, bytes | str]] = {}
    for path in sorted(tree.rglob("*")):
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            content: bytes | str = os.readlink(path)
        elif stat.S_ISREG(info.st_mode):
            content = path.read_bytes()
        else:
            content = b""
        found[str(path.relative_to(tree))] = (
            info.st_mode,
            info.st_uid,
            info.st_gid,
            info.st_mtime_ns,
            content,
        )
    return found


def tree_id(tree: Path, database: str, name: str) -> int:
    """A user's or group's id in the tree's etc/passwd or etc/group."""
    for line in (tree / "etc" / database).read_text().splitlines():
        fields = line.split(":")
        if fields[0] == name:
            return int(fields[2])
    raise AssertionError(f"no {name} in the tree's etc/{database}")


def owner_and_mode(path: Path) -> tuple[int, int, int]:
    info = path.lstat()
    return info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)


def is_enabled(tree: Path, unit: str) -> str:
    result = subprocess.run(
        ["systemctl", f"--root={tree}", "is-enabled", unit],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return result.stdout.strip()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    path = tmp_path / "tree"
    path.mkdir()
    return path


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


# ------------------------------------------------------------------------------------------------
# systemd-analyze verify on what install wrote


def verify_tree(tree: Path) -> Path:
    """`tree` with this machine's units (for the targets they name) and a stub at every program
    the installed units start (verify needs them), as tests/integration/test_systemd_units.py
    prepares its tree."""
    for directory in ("usr/lib/systemd/system", "lib/systemd/system"):
        if (Path("/") / directory).is_dir() and not (Path("/") / directory).is_symlink():
            shutil.copytree(Path("/") / directory, tree / directory, symlinks=True)
    for unit in (tree / "etc/systemd/system").glob("*.service"):
        if unit.is_symlink():
            continue
        for line in unit.read_text().splitlines():
            match = re.match(r"Exec\w*=([-@+!:]*)(\S+)", line)
            if match:
                stub = tree / shlex.split(match[2])[0].lstrip("/")
                stub.parent.mkdir(parents=True, exist_ok=True)
                if not stub.exists():
                    stub.write_text("#!/bin/sh\nexit 0\n")
                    stub.chmod(0o755)
    return tree


@needs("systemd-analyze", "systemd")
@pytest.mark.parametrize(
    ("flags", "unit"),
    [
        ((), "lobby-display-kiosk@hall.service"),
        (("--console",), "lobby-display-console@hall.service"),
        (("--wall",), "lobby-display-screen@hall.service"),
    ],
    ids=["kiosk", "console", "wall"],
)
def test_installed_tree_passes_systemd_analyze_verify(
    flags: tuple[str, ...],
    unit: str,
    tree: Path,
    work: Path,
    service_account_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = write_config(work, ["fr_FR", "en_US"])
    code, out, err = install(
        tree, "hall", config, "--credentials", str(service_account_file), *flags, capsys=capsys
    )
    assert code == 0, out + err
    assert is_enabled(tree, unit) == "enabled"
    assert is_enabled(tree, "getty@tty1.service") == "masked"
    assert is_enabled(tree, "autovt@tty1.service") == "masked"
    if "--wall" in flags:
        assert is_enabled(tree, "lobby-display-wall.service") == "enabled"
    verify_tree(tree)
    result = subprocess.run(
        ["systemd-analyze", "verify", f"--root={tree}", unit],
        capture_output=True,
        text=True,
        timeout=60,
    )
    said = (result.stdout + result.stderr).strip()
    assert said == "", f"systemd-analyze verify {unit}:\n{said}"
    assert result.returncode == 0


# ------------------------------------------------------------------------------------------------
# Owners and modes


@pytest.mark.parametrize("form", ["kiosk", "console", "wall"])
def test_every_file_has_the_owner_and_mode_an_installer_expects(
    form: str,
    tree: Path,
    work: Path,
    service_account_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    service_account_file.chmod(0o644)  # the installer's copy may be open; the installed one not
    config = write_config(work, ["ja_JP", "en_US"] if form != "console" else ["en_US"])
    flags = {"kiosk": [], "console": ["--console"], "wall": ["--wall"]}[form]
    code, out, err = install(
        tree, "hall", config, "--credentials", str(service_account_file), *flags, capsys=capsys
    )
    assert code == 0, out + err
    group = tree_id(tree, "group", "lobby-display")
    assert tree_id(tree, "passwd", "lobby-display") > 0
    members = {
        line.split(":")[0]: line.split(":")[3].split(",")
        for line in (tree / "etc/group").read_text().splitlines()
    }
    assert "lobby-display" in members["video"] and "lobby-display" in members["render"]
    expected = {
        "etc/lobby-display": (0, 0, 0o755),
        "etc/lobby-display/hall.toml": (0, group, 0o640),
        "etc/lobby-display/service-account.json": (0, 0, 0o600),
        "etc/sysusers.d/lobby-display.conf": (0, 0, 0o644),
    }
    units = {
        "kiosk": ["lobby-display-kiosk@.service"],
        "console": ["lobby-display-console@.service"],
        "wall": ["lobby-display-wall.service", "lobby-display-screen@.service"],
    }[form]
    for unit in units:
        expected[f"etc/systemd/system/{unit}"] = (0, 0, 0o644)
        assert (tree / "etc/systemd/system" / unit).read_bytes() == (
            ROOT / "systemd" / unit
        ).read_bytes()
    if form != "console":
        expected["etc/lobby-display/hall.foot.ini"] = (0, 0, 0o644)
    if form == "wall":
        expected["etc/lobby-display/sway.conf"] = (0, 0, 0o644)
    for relative, wanted in expected.items():
        assert owner_and_mode(tree / relative) == wanted, relative
    # Nothing else was written under etc/lobby-display, and nothing is open to others but
    # what must be read by the display's user or systemd.
    assert {p.name for p in (tree / "etc/lobby-display").iterdir()} == {
        Path(k).name for k in expected if k.startswith("etc/lobby-display/")
    }
    assert (tree / "etc/lobby-display/hall.toml").read_bytes() == config.read_bytes()
    assert (tree / "etc/lobby-display/service-account.json").read_bytes() == (
        service_account_file.read_bytes()
    )
    for directory in (p for p in tree.rglob("*") if p.is_dir() and not p.is_symlink()):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o755, directory


def test_a_config_with_a_fixed_api_key_is_the_display_users_alone(
    tree: Path, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = work / "hall.toml"
    config.write_text(
        CONFIG.format(locales='["en_US"]', extra="").replace(
            'credentials = "/etc/lobby-display/service-account.json"', 'api_key = "k-123"'
        )
    )
    config.chmod(0o600)
    code, out, err = install(tree, "hall", config, capsys=capsys)
    assert code == 0, out + err
    user, group = tree_id(tree, "passwd", "lobby-display"), tree_id(tree, "group", "lobby-display")
    assert owner_and_mode(tree / "etc/lobby-display/hall.toml") == (user, group, 0o600)
    assert not (tree / "etc/lobby-display/service-account.json").exists()
    dropin = tree / "etc/systemd/system/lobby-display-kiosk@hall.service.d/credentials.conf"
    assert "LoadCredential=\n" in dropin.read_text()
    assert owner_and_mode(dropin) == (0, 0, 0o644)
    assert "k-123" not in out + err


def test_a_key_file_of_another_name_reaches_the_unit_under_that_name(
    tree: Path, work: Path, service_account_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(work, ["en_US"])
    config.write_text(config.read_text().replace("service-account.json", "annex-company.json"))
    code, out, err = install(
        tree, "hall", config, "--credentials", str(service_account_file), capsys=capsys
    )
    assert code == 0, out + err
    assert owner_and_mode(tree / "etc/lobby-display/annex-company.json") == (0, 0, 0o600)
    dropin = tree / "etc/systemd/system/lobby-display-kiosk@hall.service.d/credentials.conf"
    lines = dropin.read_text().splitlines()
    assert lines[-2:] == [
        "LoadCredential=",
        "LoadCredential=annex-company.json:/etc/lobby-display/annex-company.json",
    ]


# ------------------------------------------------------------------------------------------------
# foot.ini


@pytest.mark.parametrize(
    ("locales", "fonts"),
    [
        (["fr_FR", "en_US"], ["DejaVu Sans Mono"]),
        (["ja_JP", "en_US"], ["DejaVu Sans Mono", "Noto Sans Mono CJK JP"]),
        (["zh_CN"], ["DejaVu Sans Mono", "Noto Sans Mono CJK SC"]),
        (["en_US", "zh_TW"], ["DejaVu Sans Mono", "Noto Sans Mono CJK TC"]),
        (["ko_KR", "en_US"], ["DejaVu Sans Mono", "Noto Sans Mono CJK KR"]),
        (["th_TH", "en_US"], ["DejaVu Sans Mono", "Tlwg Mono"]),
        # Several CJK locales: the first listed is the place's (its visitors read it most).
        (["zh_TW", "ja_JP", "th_TH"], ["DejaVu Sans Mono", "Noto Sans Mono CJK TC", "Tlwg Mono"]),
    ],
)
def test_foot_font_line_follows_the_places_locales(
    locales: list[str],
    fonts: list[str],
    tree: Path,
    work: Path,
    service_account_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = write_config(work, locales)
    code, out, err = install(
        tree, "hall", config, "--credentials", str(service_account_file), capsys=capsys
    )
    assert code == 0, out + err
    ini = (tree / "etc/lobby-display/hall.foot.ini").read_text()
    font_lines = [line for line in ini.splitlines() if line.startswith("font=")]
    assert font_lines == ["font=" + ", ".join(f"{font}:pixelsize=30" for font in fonts)]
    # The rest is the shipped foot.ini: its key bindings stay off.
    shipped = (ROOT / "systemd/foot.ini").read_text().splitlines()
    assert [line for line in ini.splitlines() if not line.startswith("font=")] == [
        line for line in shipped if not line.startswith("font=")
    ]


@needs("foot", "foot")
def test_the_written_foot_ini_is_valid_for_foot(
    tree: Path, work: Path, service_account_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(work, ["zh_TW", "th_TH", "en_US"])
    code, out, err = install(
        tree, "hall", config, "--credentials", str(service_account_file),
        "--resolution", "3840x2160", capsys=capsys,
    )  # fmt: skip
    assert code == 0, out + err
    ini = tree / "etc/lobby-display/hall.foot.ini"
    result = subprocess.run(
        ["foot", "--check-config", f"--config={ini}"], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("resolution", "size"),
    [("1920x1080", 30), ("3840x2160", 60), ("1280x720", 20), ("1366x768", 21), ("1080x1920", 22)],
)
def test_foot_pixel_size_fits_the_screen(
    resolution: str,
    size: int,
    tree: Path,
    work: Path,
    service_account_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = write_config(work, ["en_US"])
    code, out, err = install(
        tree, "hall", config, "--credentials", str(service_account_file),
        "--resolution", resolution, capsys=capsys,
    )  # fmt: skip
    assert code == 0, out + err
    ini = (tree / "etc/lobby-display/hall.foot.ini").read_text()
    assert f"font=DejaVu Sans Mono:pixelsize={size}\n" in ini
    width, height = foot_ini.parse_resolution(resolution)
    columns, rows = foot_ini.grid(width, height, size)
    assert columns >= 80 and rows >= 24
    assert f"screen {resolution} (--resolution): foot pixelsize {size}" in out


def test_pixel_size_leaves_80_by_24_cells_on_any_screen() -> None:
    for width in range(640, 7681, 64):
        for height in range(480, 4321, 48):
            size = foot_ini.pixel_size(width, height)
            columns, rows = foot_ini.grid(width, height, size)
            assert columns >= 80 and rows >= 24, (width, height, size)
            # and the text is as large as the 1080p TV's, scaled, wherever that fits
            assert size <= round(30 * height / 1080)


def test_the_tvs_resolution_is_read_from_the_kernels_connectors(tmp_path: Path) -> None:
    for connector, status, modes in (
        ("card0-eDP-1", "disconnected", "1366x768\n"),
        ("card0-HDMI-A-1", "connected", "3840x2160\n1920x1080\n"),
        ("card0-HDMI-A-2", "connected", "1920x1080\n1280x720\n"),
    ):
        (tmp_path / connector).mkdir()
        (tmp_path / connector / "status").write_text(status + "\n")
        (tmp_path / connector / "modes").write_text(modes)
    assert foot_ini.connected_resolution("", tmp_path) == ("HDMI-A-1", (3840, 2160))
    assert foot_ini.connected_resolution("HDMI-A-2", tmp_path) == ("HDMI-A-2", (1920, 1080))
    assert foot_ini.connected_resolution("eDP-1", tmp_path) is None
    assert foot_ini.connected_resolution("", tmp_path / "none") is None


# ------------------------------------------------------------------------------------------------
# Again, changed, refused, dry run


def test_a_second_run_changes_nothing_and_says_so(
    tree: Path, work: Path, service_account_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(work, ["ja_JP"])
    args = ("--credentials", str(service_account_file), "--wall")
    code, first, err = install(tree, "hall", config, *args, capsys=capsys)
    assert code == 0, first + err
    assert "nothing to change" not in first
    before = snapshot(tree)
    code, again, err = install(tree, "hall", config, *args, capsys=capsys)
    assert code == 0, again + err
    assert snapshot(tree) == before
    assert "nothing to change: everything was already in place" in again
    assert "doing" not in again
    assert "ok       write /etc/lobby-display/hall.toml" in again


def test_a_new_config_is_written_over_the_old_and_the_restart_is_planned(
    tree: Path, work: Path, service_account_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(work, ["fr_FR"])
    code, out, err = install(
        tree, "hall", config, "--credentials", str(service_account_file), capsys=capsys
    )
    assert code == 0, out + err
    before = snapshot(tree)
    write_config(work, ["ko_KR", "fr_FR"])
    code, out, err = install(tree, "hall", config, capsys=capsys)
    assert code == 0, out + err
    after = snapshot(tree)
    changed = {key for key in after if after[key] != before.get(key)}
    # (and their directory, whose files were replaced)
    assert changed == {
        "etc/lobby-display",
        "etc/lobby-display/hall.toml",
        "etc/lobby-display/hall.foot.ini",
    }
    assert (tree / "etc/lobby-display/hall.toml").read_bytes() == config.read_bytes()
    assert "Noto Sans Mono CJK KR" in (tree / "etc/lobby-display/hall.foot.ini").read_text()
    assert "done: 2 changes" in out
    assert "skipped  start lobby-display-kiosk@hall.service (restart it if it runs)" in out


@pytest.mark.parametrize(
    ("extra", "locales", "flags", "said"),
    [
        ("clock = '13h'", ["en_US"], (), "display.clock"),
        ("", ["xx_XX"], (), "display.locales"),
        ("", ["th_TH"], ("--console",), "the text console cannot draw th_TH"),
    ],
    ids=["bad-value", "bad-locale", "console-thai"],
)
def test_a_bad_config_is_refused_before_anything_is_written(
    extra: str,
    locales: list[str],
    flags: tuple[str, ...],
    said: str,
    tree: Path,
    work: Path,
    service_account_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = write_config(work, locales, extra)
    code, out, err = install(
        tree, "hall", config, "--credentials", str(service_account_file), *flags, capsys=capsys
    )
    assert code == 2
    assert said in err
    assert "nothing was written" in err
    assert "Traceback" not in out + err
    assert list(tree.iterdir()) == []


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{}", "missing or empty private_key and client_email"),
        ("not json", "is not JSON"),
        (None, "service-account file not found"),
    ],
)
def test_a_bad_key_file_is_refused_before_anything_is_written(
    content: str | None,
    said: str,
    tree: Path,
    work: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = work / "key.json"
    if content is not None:
        key.write_text(content)
    config = write_config(work, ["en_US"])
    code, _out, err = install(tree, "hall", config, "--credentials", str(key), capsys=capsys)
    assert code == 2
    assert said in err and str(key) in err
    assert list(tree.iterdir()) == []


def test_a_missing_key_file_without_credentials_is_refused(
    tree: Path, work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(work, ["en_US"])
    code, _out, err = install(tree, "hall", config, capsys=capsys)
    assert code == 2
    assert "give the service-account file with --credentials FILE" in err
    assert list(tree.iterdir()) == []


def test_a_bad_screen_name_is_refused(
    tree: Path, work: Path, service_account_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(work, ["en_US"])
    code, _out, err = install(
        tree, "../hall", config, "--credentials", str(service_account_file), capsys=capsys
    )
    assert code == 2 and "is not a screen name" in err
    assert list(tree.iterdir()) == []


def test_dry_run_writes_nothing_and_lists_every_step(
    tree: Path, work: Path, service_account_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(work, ["ja_JP"])
    args = ("--credentials", str(service_account_file))
    code, out, err = install(tree, "hall", config, *args, "--dry-run", capsys=capsys)
    assert code == 0, out + err
    assert list(tree.iterdir()) == []
    for step in (
        "would    write /etc/lobby-display/hall.toml (root:lobby-display 0640)",
        "would    write /etc/lobby-display/service-account.json (root:root 0600)",
        "would    write /etc/lobby-display/hall.foot.ini",
        "would    create the user lobby-display",
        "would    mask getty@tty1 and autovt@tty1",
        "would    enable lobby-display-kiosk@hall.service",
        "skipped  install the packages",
    ):
        assert step in out
    assert "nothing was written" in out
    # Over an installed tree with a new config: still nothing written, the change listed.
    assert install(tree, "hall", config, *args, capsys=capsys)[0] == 0
    before = snapshot(tree)
    write_config(work, ["ko_KR"])
    code, out, err = install(tree, "hall", config, "--dry-run", capsys=capsys)
    assert code == 0, out + err
    assert snapshot(tree) == before
    assert "would    write /etc/lobby-display/hall.toml" in out
    assert "ok       enable lobby-display-kiosk@hall.service (already done)" in out
    assert "dry run: 2 changes to make; nothing was written" in out


def test_one_board_per_pc_another_is_refused(
    tree: Path, work: Path, service_account_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(work, ["en_US"])
    args = ("--credentials", str(service_account_file))
    assert install(tree, "hall", config, *args, capsys=capsys)[0] == 0
    before = snapshot(tree)
    for name, flags in (("annex", ()), ("annex", ("--wall",)), ("hall", ("--console",))):
        code, _out, err = install(tree, name, config, *args, *flags, capsys=capsys)
        assert code == 2, (name, flags)
        assert "run `lobby-display uninstall hall` first" in err
    assert snapshot(tree) == before


# ------------------------------------------------------------------------------------------------
# The wall: several screens on one PC


def test_the_wall_takes_several_screens_and_uninstall_removes_them_one_by_one(
    tree: Path, work: Path, service_account_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hall = write_config(work, ["ja_JP"], 'output = "HDMI-A-1"', name="hall")
    annex = write_config(work, ["th_TH"], 'output = "HDMI-A-2"', name="annex")
    args = ("--credentials", str(service_account_file), "--wall")
    assert install(tree, "hall", hall, *args, capsys=capsys)[0] == 0
    code, out, err = install(tree, "annex", annex, "--wall", capsys=capsys)
    assert code == 0, out + err
    assert "ok       write /etc/systemd/system/lobby-display-wall.service" in out
    for name in ("hall", "annex"):
        assert is_enabled(tree, f"lobby-display-screen@{name}.service") == "enabled"
    assert "CJK JP" in (tree / "etc/lobby-display/hall.foot.ini").read_text()
    assert "Tlwg Mono" in (tree / "etc/lobby-display/annex.foot.ini").read_text()

    code, out = uninstall(tree, "hall", capsys=capsys)
    assert code == 0, out
    assert is_enabled(tree, "lobby-display-screen@hall.service") != "enabled"
    assert is_enabled(tree, "lobby-display-screen@annex.service") == "enabled"
    assert is_enabled(tree, "lobby-display-wall.service") == "enabled"
    assert is_enabled(tree, "getty@tty1.service") == "masked"
    assert sorted(p.name for p in (tree / "etc/lobby-display").iterdir()) == [
        "annex.foot.ini",
        "annex.toml",
        "service-account.json",
        "sway.conf",
    ]

    code, out = uninstall(tree, "annex", capsys=capsys)
    assert code == 0, out
    assert not (tree / "etc/lobby-display").exists()
    assert not list((tree / "etc/systemd/system").rglob("lobby-display*"))
    assert is_enabled(tree, "getty@tty1.service") != "masked"


def test_uninstall_keeps_the_state_unless_purged_and_a_second_time_changes_nothing(
    tree: Path, work: Path, service_account_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(work, ["en_US"])
    args = ("--credentials", str(service_account_file), "--console")
    assert install(tree, "hall", config, *args, capsys=capsys)[0] == 0
    state = tree / "var/lib/lobby-display/hall"
    state.mkdir(parents=True)
    (state / "board.json").write_text("{}")
    code, out = uninstall(tree, "hall", "--dry-run", capsys=capsys)
    assert code == 0 and (tree / "etc/lobby-display/hall.toml").exists()
    assert "would    disable lobby-display-console@hall.service" in out

    code, out = uninstall(tree, "hall", capsys=capsys)
    assert code == 0, out
    assert (state / "board.json").exists()
    assert "the state in /var/lib/lobby-display/hall stays (--purge removes it)" in out
    assert not (tree / "etc/lobby-display").exists()
    assert not list((tree / "etc/systemd/system").rglob("lobby-display*"))
    assert is_enabled(tree, "getty@tty1.service") != "masked"
    # The user stays (files may belong to it).
    assert tree_id(tree, "passwd", "lobby-display") > 0

    code, out = uninstall(tree, "hall", capsys=capsys)
    assert code == 0 and "nothing to change" in out
    code, out = uninstall(tree, "hall", "--purge", capsys=capsys)
    assert code == 0, out
    assert not state.exists()


# ------------------------------------------------------------------------------------------------
# This machine, without --root


@pytest.mark.skipif(
    Path("/run/systemd/system").is_dir(), reason="systemd runs here: this would really install"
)
def test_without_systemd_install_says_so_and_writes_nothing(
    work: Path, service_account_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if Path("/etc/lobby-display").exists():
        pytest.skip("this machine has /etc/lobby-display: not touching it")
    config = write_config(work, ["en_US"])
    capsys.readouterr()
    code = main(
        ["install", "hall", "--config", str(config), "--credentials", str(service_account_file)]
    )
    out, err = capsys.readouterr()
    assert code != 0
    assert "Traceback" not in out + err
    if os.geteuid() == 0:
        assert "systemd is not running on this machine (PID 1 is not systemd)" in err
    assert "nothing was written" in err
    assert not Path("/etc/lobby-display").exists()


@pytest.fixture(autouse=True)
def _no_network_for_apt(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Nothing here may reach a package registry: under --root no package step runs."""
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    monkeypatch.setenv("https_proxy", "http://127.0.0.1:9")
    yield
