"""Every piece of text the screen shows, as gettext message ids (English source strings).

Widgets take a constant from here and hand it to `i18n.LocaleText`; `make messages` extracts
them into the catalogs (locales/). Placeholders are named; `TRANSLATORS:` comments are notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


def N_(message: str) -> str:
    """Mark `message` for extraction without translating it (it is translated when shown)."""
    return message


@dataclass(frozen=True, slots=True)
class PluralMessage:
    """A message with a singular and a plural source form; `{n}` is the count."""

    singular: str
    plural: str


def NP_(singular: str, plural: str) -> PluralMessage:
    """Mark a plural message for extraction (the count picks the form when shown)."""
    return PluralMessage(singular, plural)


# --- the call area ---------------------------------------------------------------------------

# TRANSLATORS: heading above the ticket that was just called (large, on a waiting-room screen).
NOW_CALLING: Final = N_("Now calling")
# TRANSLATORS: a ticket number handed to a visitor, like "K017" (column heading).
TICKET: Final = N_("Ticket")
# TRANSLATORS: the desk, window or room a called ticket must go to (column heading).
COUNTER: Final = N_("Counter")
# TRANSLATORS: shown under a called ticket; {counter} is the desk's name, like "Desk 3".
GO_TO_COUNTER: Final = N_("Please go to {counter}")
# TRANSLATORS: marks a ticket that was called a second (or third) time.
RECALLED: Final = N_("Called again")
# TRANSLATORS: heading of the list of the last tickets called.
RECENT_CALLS: Final = N_("Recent calls")
# TRANSLATORS: column heading: the time a ticket was called.
CALLED_AT: Final = N_("Time")
# TRANSLATORS: shown in the call area before any ticket has been called.
NO_CALLS_YET: Final = N_("No calls yet")
# TRANSLATORS: marks a ticket taken on arrival, without an appointment.
WALK_IN: Final = N_("Walk-in")

# --- the queue table -------------------------------------------------------------------------

# TRANSLATORS: heading of the table of queues (the services of this building).
QUEUES: Final = N_("Queues")
# TRANSLATORS: column heading: the name of a queue (a service, like "Passports").
QUEUE: Final = N_("Queue")
# TRANSLATORS: column heading: how many tickets and people are waiting in a queue.
WAITING: Final = N_("Waiting")
# TRANSLATORS: column heading: the first free appointment slot of a queue.
NEXT_AVAILABLE: Final = N_("Next available")
# TRANSLATORS: column heading: today's opening hours of a queue.
TODAY: Final = N_("Today")
# TRANSLATORS: column heading: whether a queue is open, paused, full...
STATUS: Final = N_("Status")
# TRANSLATORS: shown when no queue is configured or known yet.
NO_QUEUES: Final = N_("No queues to show")

# TRANSLATORS: a number of tickets waiting; {n} is the number.
TICKETS: Final = NP_("{n} ticket", "{n} tickets")
# TRANSLATORS: a number of people waiting (a ticket can be for a group); {n} is the number.
PEOPLE: Final = NP_("{n} person", "{n} people")
# TRANSLATORS: a first free slot that holds a smaller group than the screen is set for; {when}
# is "in 5 min", "14:00" or "Tue 09:00", {n} the number of people the slot holds.
FOR_GROUP: Final = NP_("{when} for {n} person", "{when} for {n} people")

# --- queue status (short: they fit in a table cell) ------------------------------------------

# TRANSLATORS: queue status: tickets can be taken and the queue is served.
OPEN: Final = N_("Open")
# TRANSLATORS: queue status: service is interrupted for a while.
PAUSED: Final = N_("Paused")
# TRANSLATORS: queue status: no new ticket can be taken now (those waiting are still served).
BOOKING_CLOSED: Final = N_("Booking closed")
# TRANSLATORS: queue status: no ticket can be taken any more today.
FULL_TODAY: Final = N_("Full today")
# TRANSLATORS: queue status: no ticket can be taken now.
FULL: Final = N_("Full")
# TRANSLATORS: queue status: no more tickets for people without an appointment.
FULL_FOR_WALK_INS: Final = N_("Full for walk-ins")
# TRANSLATORS: queue status: no more appointments can be booked.
FULL_FOR_APPOINTMENTS: Final = N_("Full for appointments")
# TRANSLATORS: queue status: the queue is not open now.
CLOSED: Final = N_("Closed")
# TRANSLATORS: queue status: {when} is "in 5 min", "14:00", "Tue 09:00" or "Nov 24, 09:00".
OPENS: Final = N_("Opens {when}")

# --- first availability ----------------------------------------------------------------------

# TRANSLATORS: the next free slot is right now.
NOW: Final = N_("now")
# TRANSLATORS: there is no free slot to offer.
NO_SLOT: Final = N_("no slot available")

# --- counters (tallies: people served today, visitors...) ------------------------------------

# TRANSLATORS: heading of the tallies (like "Visitors today: 128"), not the desks.
COUNTERS: Final = N_("Counters")
# TRANSLATORS: shown when the place has no tally to show.
NO_COUNTERS: Final = N_("No counters")

# --- freshness and the status line -----------------------------------------------------------

# TRANSLATORS: the screen receives live updates from the service.
LIVE: Final = N_("Live")
# TRANSLATORS: the connection to the service was lost; it is being restored.
RECONNECTING: Final = N_("Reconnecting…")
# TRANSLATORS: {n} is how many times the screen has tried to reconnect.
RECONNECTING_ATTEMPT: Final = N_("Reconnecting (attempt {n})")
# TRANSLATORS: the numbers shown may be old; {time} is a clock time like "14:05".
OUT_OF_DATE_SINCE: Final = N_("Out of date since {time}")
# TRANSLATORS: replaces numbers that are too old to be shown.
NOT_AVAILABLE: Final = N_("Not available")
# TRANSLATORS: shown while the screen starts up.
CONNECTING: Final = N_("Connecting to the service…")
# TRANSLATORS: the service rejects the screen's key; staff must fix the configuration.
CREDENTIALS_REFUSED: Final = N_("The service refused our credentials")
# TRANSLATORS: status line, when parts of the screen differ: {part} is a heading ("Queues",
# "Counters", "Recent calls"), {state} how it stands ("Reconnecting…", "Live").
PART_STATE: Final = N_("{part}: {state}")
# TRANSLATORS: banner of the demonstration mode: the data shown is made up.
DEMO: Final = N_("Demonstration: simulated data")
# TRANSLATORS: after the demonstration banner: the key that ends the demonstration.
DEMO_QUIT: Final = N_("Ctrl+C to quit")
