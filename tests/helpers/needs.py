"""What a test needs from the machine: skipped on a developer's machine without it, failed
under CI (`CI` set: `.ci/run` sets it and installs every program and font a test needs).

    @needs("tmux", "tmux")            # a mark: skipped without tmux, unless under CI
    missing("no Tlwg Mono font (fonts-thai-tlwg)")   # inside a test or fixture
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest


def under_ci() -> bool:
    """Whether this is CI's run (`.ci/run` exports CI=true), where nothing may be missing."""
    return bool(os.environ.get("CI"))


def missing(reason: str) -> NoReturn:
    """Skip on a developer's machine; fail under CI, whose .ci/run installs every tool."""
    if under_ci():
        pytest.fail(f"{reason} (CI installs it: see .ci/run)")
    pytest.skip(reason)


def needs(program: str, package: str) -> pytest.MarkDecorator:
    """Skip without `program` (Debian `package`), except under CI: there the test runs, and
    fails without it."""
    return pytest.mark.skipif(
        shutil.which(program) is None and not under_ci(),
        reason=f"{program} is not installed (Debian package {package}; .ci/run installs it)",
    )
