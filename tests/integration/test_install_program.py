"""install.sh: the program into /opt/lobby-display (here a temporary prefix) from wheels alone.

The test never reaches a package index: it makes the wheels itself, the project's from this
checkout and each dependency's from the files this test venv has installed (a wheel is those
files plus their metadata), then runs `install.sh --prefix P --wheels W`, which passes pip
`--no-index`. What an installer gets: a venv whose `lobby-display` runs, every dependency at the
version of requirements.lock, the release's units beside it, and `lobby-display install` from
that venv finding them.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as metadata
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from lobby_display import __version__

ROOT = Path(__file__).resolve().parents[2]


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(path: Path, members: dict[str, bytes], dist_info: str) -> None:
    record = [_record_line(name, data) for name, data in members.items()]
    record.append(f"{dist_info}/RECORD,,")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in members.items():
            wheel.writestr(name, data)
        wheel.writestr(f"{dist_info}/RECORD", "\n".join(record) + "\n")


def wheel_of_installed(dist: metadata.Distribution, directory: Path) -> None:
    """A wheel of an installed distribution, from the files its RECORD lists."""
    dist_info = next(
        str(f).split("/")[0] for f in dist.files or [] if str(f).endswith(".dist-info/METADATA")
    )
    members: dict[str, bytes] = {}
    for file in dist.files or []:
        name = str(file)
        if name.startswith("..") or "__pycache__" in name or name.endswith(".pyc"):
            continue
        if name.startswith(dist_info) and Path(name).name in {
            "RECORD",
            "INSTALLER",
            "REQUESTED",
            "direct_url.json",
        }:
            continue
        members[name] = Path(file.locate()).read_bytes()
    tag = next(
        line.split(":", 1)[1].strip()
        for line in (dist.read_text("WHEEL") or "").splitlines()
        if line.startswith("Tag:")
    )
    name = normalise(dist.metadata["Name"])
    write_wheel(directory / f"{name}-{dist.version}-{tag}.whl", members, dist_info)


def project_wheel(directory: Path) -> None:
    """This checkout's wheel, as setuptools would make it (the package, metadata, script)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    dist_info = f"lobby_display-{__version__}.dist-info"
    members: dict[str, bytes] = {}
    for file in sorted((ROOT / "src/lobby_display").rglob("*")):
        if file.is_file() and "__pycache__" not in file.parts:
            members[str(file.relative_to(ROOT / "src"))] = file.read_bytes()
    requires = "".join(f"Requires-Dist: {dep}\n" for dep in project["dependencies"])
    members[f"{dist_info}/METADATA"] = (
        "Metadata-Version: 2.1\nName: lobby-display\n"
        f"Version: {__version__}\nRequires-Python: >=3.11\n{requires}"
    ).encode()
    members[f"{dist_info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    scripts = "".join(f"{k} = {v}\n" for k, v in project["scripts"].items())
    members[f"{dist_info}/entry_points.txt"] = f"[console_scripts]\n{scripts}".encode()
    write_wheel(directory / f"lobby_display-{__version__}-py3-none-any.whl", members, dist_info)


def runtime_closure() -> list[metadata.Distribution]:
    """The installed distributions `lobby-display` needs to run (no extras of its own)."""
    wanted: dict[str, metadata.Distribution] = {}
    todo = [(Requirement(dep), "") for dep in metadata.requires("lobby-display") or []]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        key = normalise(requirement.name)
        dist = metadata.distribution(requirement.name)
        first = key not in wanted
        wanted[key] = dist
        for needed_extra in ["", *requirement.extras] if first else requirement.extras:
            todo += [(Requirement(dep), needed_extra) for dep in dist.requires or []]
    return list(wanted.values())


def lock_versions() -> dict[str, str]:
    versions = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, _, version = line.partition("==")
            versions[normalise(name)] = version.strip()
    return versions


@pytest.mark.timeout(600)
def test_install_sh_installs_the_pinned_release_from_wheels_alone(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    project_wheel(wheels)
    for dist in runtime_closure():
        wheel_of_installed(dist, wheels)
    prefix = tmp_path / "opt" / "lobby-display"
    env = {
        **os.environ,
        # Belt and braces: install.sh passes --no-index; nothing may reach out anyway.
        "http_proxy": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
        "PIP_NO_INPUT": "1",
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    # The venv is made by the python3 this test runs with (the wheels are for its version).
    result = subprocess.run(
        ["sh", str(ROOT / "install.sh"), "--prefix", str(prefix), "--wheels", str(wheels)],
        capture_output=True,
        text=True,
        env=env,
        timeout=580,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"lobby-display {__version__}" in result.stdout

    program = prefix / ".venv/bin/lobby-display"
    assert program.is_file()
    frozen = subprocess.run(
        [str(prefix / ".venv/bin/python"), "-m", "pip", "freeze", "--all"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    locked = lock_versions()
    installed = dict(
        (normalise(name), version) for name, _, version in
        (line.partition("==") for line in frozen.splitlines() if "==" in line)
    )  # fmt: skip
    assert installed.pop("lobby_display") == __version__
    for name in ("pip", "setuptools"):
        installed.pop(name, None)
    assert installed, frozen
    assert {name: locked.get(name) for name in installed} == installed
    # Nothing of the simulator or the tests: a kiosk installs the program alone.
    assert not {"starlette", "uvicorn", "pytest"} & set(installed)
    for unit in (ROOT / "systemd").iterdir():
        assert (prefix / "systemd" / unit.name).read_bytes() == unit.read_bytes()
    assert (prefix / "requirements.lock").is_file()
    assert not any(
        path.stat().st_mode & 0o022 for path in prefix.rglob("*") if not path.is_symlink()
    )

    # The installed program sets a screen up from its own release files.
    config = tmp_path / "hall.toml"
    config.write_text(
        '[service]\ndisplay_url = "https://display.example.net"\napi_key = "k"\n'
        '[place]\nid = "P1"\n'
    )
    config.chmod(0o600)
    tree = tmp_path / "tree"
    done = subprocess.run(
        [str(program), "install", "hall", "--config", str(config), "--root", str(tree)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tree / "etc/systemd/system/lobby-display-kiosk@.service").read_bytes() == (
        ROOT / "systemd/lobby-display-kiosk@.service"
    ).read_bytes()


def test_install_sh_refuses_wheels_that_do_not_hold_the_release(tmp_path: Path) -> None:
    empty = tmp_path / "wheels"
    empty.mkdir()
    result = subprocess.run(
        ["sh", str(ROOT / "install.sh"), "--prefix", str(tmp_path / "opt"), "--wheels", str(empty)],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"},
        timeout=300,
    )
    assert result.returncode == 1
    assert f"do not hold lobby-display {__version__}" in result.stderr
