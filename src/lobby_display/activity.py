"""What the feeds and the API-key flow have done in this process, counted for monitoring.

Counted where it happens (feeds.py, auth.py) and read by `monitoring.Monitor`, which writes it
out every few seconds. Process-wide, like a Prometheus client's default registry: the kiosk
runs one screen per process.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime


@dataclass
class Activity:
    """Counts and times since the process started; keyed by feed name ("tickets"...)."""

    last_message_at: dict[str, datetime] = field(default_factory=dict)
    """When each feed last received anything (an event or a heartbeat)."""
    reconnections: Counter[str] = field(default_factory=Counter)
    """Times each feed's connection ended or failed and a new attempt was scheduled."""
    key_renewals: int = 0
    """API keys obtained from the service in place of an earlier one (due, or refused)."""


#: The process's activity.
ACTIVITY = Activity()
