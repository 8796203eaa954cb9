"""Fixtures of the reliability suite: one service account for the session (RSA keys are slow)."""

from __future__ import annotations

import os

import pytest

from lobby_display.simulator import ServiceAccount
from lobby_display.simulator.names import COMPANY_NAME

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")


@pytest.fixture(scope="session")
def account() -> ServiceAccount:
    """The simulators' service account."""
    return ServiceAccount.generate(COMPANY_NAME)
