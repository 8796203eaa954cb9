"""Secrets never reach a log line or a message: API keys, tokens and private keys are masked.

And no control character reaches a log line as itself: `EscapingFormatter` writes them as
`\x1b`-style escapes, so a log read on a terminal cannot be driven by text the service chose.
"""

from __future__ import annotations

import logging
import re
from typing import Final

MASK: Final = "***"

_PATTERNS: Final = (
    # First: a PEM block, before the field pattern below masks its BEGIN line and hides it.
    re.compile(r"(-----BEGIN [A-Z ]*PRIVATE KEY-----)[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----)"),
    # The API key travels as the query parameter `key` (and nothing else is called that).
    re.compile(r"(?i)([?&](?:key|api_key|apikey|token)=)[^&\s\"'#]+"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+"),
    # A secret field of a JSON body (`"apiKey": "..."`, quoted name) or an assignment
    # (`api_key=...`); prose such as "GET /v1/api_key: HTTP 502" is left alone.
    re.compile(r"(?i)(\"(?:apiKey|api_key|private_key|jwtToken|token)\"\s*:\s*\"?)[^\",}\s]+"),
    re.compile(r"(?i)(\b(?:apiKey|api_key|private_key|jwtToken)\s*=\s*\"?)[^\",}\s&]+"),
)

_known: set[str] = set()
#: Every pattern above needs one of these (lowercased): a text without any holds no secret.
_HINTS: Final = ("key", "token", "bearer")

#: C0 controls but tab and newline, DEL, and the C1 controls: written as escapes in logs.
_CONTROLS: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def register_secret(value: str) -> None:
    """Mask `value` wherever it appears from now on (an API key once it is known, say)."""
    if len(value) >= 6:
        _known.add(value)


def may_hold_secret(text: str) -> bool:
    """False when `redact` would surely leave `text` as it is (a quick test for bulk text)."""
    if any(secret in text for secret in _known):
        return True
    lowered = text.lower()
    return any(hint in lowered for hint in _HINTS)


def redact(text: str) -> str:
    """`text` with every secret we know of, or recognise by its shape, masked."""
    for secret in _known:
        if secret in text:
            text = text.replace(secret, MASK)
    for pattern in _PATTERNS:
        if pattern.groups == 2:
            text = pattern.sub(lambda m: f"{m.group(1)}{MASK}{m.group(2)}", text)
        else:
            text = pattern.sub(lambda m: f"{m.group(1)}{MASK}", text)
    return text


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in each record's final message."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message or record.args:
            record.msg = cleaned
            record.args = None
        if record.exc_info and record.exc_info[1] is not None:
            # Exception text (an httpx error quotes its URL) is redacted when formatted.
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def escape_controls(text: str) -> str:
    """`text` with every control character but newline and tab written as `\\xNN`."""
    return _CONTROLS.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


class EscapingFormatter(logging.Formatter):
    """A log formatter whose lines hold no control character but newline and tab (see
    `escape_controls`): the message, its arguments and a traceback alike."""

    def format(self, record: logging.LogRecord) -> str:
        return escape_controls(super().format(record))
