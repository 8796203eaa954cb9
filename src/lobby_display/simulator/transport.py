"""Reach the TCP connection behind an HTTP request, so a fault can cut or reset it.

uvicorn's HTTP/1.1 protocol is given a subclass that records each connection's transport under
the client's (host, port), which ASGI shows as `scope["client"]`.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol


class ConnectionRegistry:
    """The transports of open connections, keyed by the client's (host, port)."""

    def __init__(self) -> None:
        self._transports: dict[tuple[str, int], asyncio.Transport] = {}

    def protocol_class(self) -> type[asyncio.Protocol]:
        """An HTTP/1.1 protocol class for uvicorn (`Config(http=...)`) that fills this registry."""
        registry = self

        class TrackedH11Protocol(H11Protocol):
            def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
                super().connection_made(transport)
                if self.client is not None:
                    registry._transports[self.client] = transport

            def connection_lost(self, exc: Exception | None) -> None:
                if self.client is not None:
                    registry._transports.pop(self.client, None)
                super().connection_lost(exc)

        return TrackedH11Protocol

    def find(self, client: Any) -> asyncio.Transport | None:
        """The transport of the connection from `client` (`scope["client"]`), if still open."""
        if not isinstance(client, list | tuple) or len(client) != 2:
            return None
        return self._transports.get((str(client[0]), int(client[1])))

    def __len__(self) -> int:
        return len(self._transports)


def cut(transport: asyncio.Transport) -> None:
    """Close the connection now, without ending the HTTP response (the client sees a drop)."""
    transport.close()


def reset(transport: asyncio.Transport) -> None:
    """Abort the connection with a TCP RST (SO_LINGER 0), as a crashed peer or a firewall does."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
