"""A TCP proxy that breaks the network on purpose, between a client and the simulator.

`FaultProxy(sim.port)` forwards bytes until told to cut mid-event, reset, stall, drip, refuse or
close; point the client at `proxy.url`. `ThreadedFaultProxy` runs one in its own thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Self, TypeVar

from lobby_display.simulator.background import BackgroundLoop

T = TypeVar("T")

_CHUNK = 65536


def _rst(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


@dataclass(eq=False)
class _Link:
    """One proxied connection."""

    client: asyncio.StreamWriter
    server: asyncio.StreamWriter
    cut_pending: bool = False
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def abort(self) -> None:
        _rst(self.client)
        self.server.transport.abort()

    def close(self) -> None:
        self.client.close()
        self.server.close()


class FaultProxy:
    """The fault proxy in the running asyncio loop (`async with FaultProxy(port) as proxy:`)."""

    def __init__(
        self,
        target_port: int,
        target_host: str = "127.0.0.1",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.target_host = target_host
        self.target_port = target_port
        self.host = host
        self.port = port
        self.links: set[_Link] = set()
        self.cuts = 0
        self._server: asyncio.Server | None = None
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._drip: tuple[int, float] | None = None
        self._refuse = False

    @property
    def url(self) -> str:
        """The proxy's base address (use it as the display service's address)."""
        return f"http://{self.host}:{self.port}"

    @property
    def connections(self) -> int:
        """Connections open through the proxy."""
        return len(self.links)

    async def start(self) -> FaultProxy:
        """Listen."""
        self._server = await asyncio.start_server(self._accept, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        """Stop listening and abort every connection."""
        if self._server is not None:
            self._server.close()
        self._flowing.set()
        for link in list(self.links):
            link.abort()
        tasks = [task for link in list(self.links) for task in link.tasks]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def __aenter__(self) -> FaultProxy:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # --- controls ----------------------------------------------------------------------------

    def cut_mid_event(self) -> int:
        """Cut each open connection inside the next bytes it sends the client; returns how many."""
        for link in self.links:
            link.cut_pending = True
        return len(self.links)

    def reset_all(self) -> int:
        """Abort every connection with a TCP RST; returns how many."""
        count = len(self.links)
        for link in list(self.links):
            link.abort()
        return count

    def close_all(self) -> int:
        """Close every connection cleanly (FIN both ways); returns how many."""
        count = len(self.links)
        for link in list(self.links):
            link.close()
        return count

    def stall(self) -> None:
        """Hold every byte towards the clients until `resume` (connections stay open)."""
        self._flowing.clear()

    def resume(self) -> None:
        """Let bytes flow again, held ones first."""
        self._flowing.set()

    def drip(self, size: int = 1, delay: float = 0.001) -> None:
        """Send bytes to the clients `size` at a time, `delay` seconds apart."""
        if size < 1 or delay < 0:
            raise ValueError("size must be at least 1 and delay not negative")
        self._drip = (size, delay)

    def stop_drip(self) -> None:
        """Send bytes as they come again."""
        self._drip = None

    def refuse(self, on: bool = True) -> None:
        """Reset new connections at once (existing ones are left alone)."""
        self._refuse = on

    # --- forwarding --------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._refuse:
            _rst(writer)
            return
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(
                self.target_host, self.target_port
            )
        except OSError:
            _rst(writer)
            return
        link = _Link(writer, upstream_writer)
        self.links.add(link)
        up = asyncio.create_task(self._pump_up(reader, link))
        down = asyncio.create_task(self._pump_down(upstream_reader, link))
        link.tasks = [up, down]
        try:
            await asyncio.wait(link.tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in link.tasks:
                task.cancel()
            await asyncio.gather(*link.tasks, return_exceptions=True)
            link.close()
            self.links.discard(link)

    async def _pump_up(self, reader: asyncio.StreamReader, link: _Link) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(_CHUNK):
                link.server.write(data)
                await link.server.drain()
            if link.server.can_write_eof():
                link.server.write_eof()
            # Keep the response flowing back after the client half-closes.
            await asyncio.Event().wait()

    async def _pump_down(self, reader: asyncio.StreamReader, link: _Link) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(_CHUNK):
                await self._flowing.wait()
                if link.cut_pending:
                    link.cut_pending = False
                    self.cuts += 1
                    link.client.write(data[: _cut_point(data)])
                    await link.client.drain()
                    link.close()
                    return
                if self._drip is None:
                    link.client.write(data)
                    await link.client.drain()
                else:
                    await self._drip_out(data, link)

    async def _drip_out(self, data: bytes, link: _Link) -> None:
        offset = 0
        while offset < len(data):
            size, delay = self._drip or (len(data), 0.0)
            link.client.write(data[offset : offset + size])
            await link.client.drain()
            offset += size
            if delay:
                await asyncio.sleep(delay)
            await self._flowing.wait()


def _cut_point(data: bytes) -> int:
    """Where to cut: inside the first SSE data line if there is one, else in the middle."""
    start = data.find(b"data:")
    if start >= 0:
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        return max(1, start + max(6, (end - start) // 2))
    return max(1, len(data) // 2)


class ThreadedFaultProxy(BackgroundLoop):
    """A `FaultProxy` in a background thread; its controls may be called from any thread."""

    service_name = "fault proxy"

    def __init__(
        self,
        target_port: int,
        target_host: str = "127.0.0.1",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__()
        self._args = (target_port, target_host, host, port)
        self._proxy: FaultProxy | None = None

    def start(self, timeout: float = 10) -> Self:
        """Start the thread and wait until the proxy listens."""
        return super().start(timeout)

    @contextlib.asynccontextmanager
    async def _running(self) -> AsyncIterator[None]:
        async with FaultProxy(*self._args) as proxy:
            self._proxy = proxy
            yield

    def _call(self, action: Callable[[FaultProxy], T]) -> T:
        proxy, loop = self._proxy, self._loop
        if proxy is None or loop is None:
            raise RuntimeError("the fault proxy is not running")

        async def run() -> T:
            return action(proxy)

        return asyncio.run_coroutine_threadsafe(run(), loop).result(10)

    @property
    def url(self) -> str:
        """The proxy's base address."""
        return self._call(lambda proxy: proxy.url)

    @property
    def connections(self) -> int:
        """Connections open through the proxy."""
        return self._call(lambda proxy: proxy.connections)

    @property
    def cuts(self) -> int:
        """Connections cut mid-event so far."""
        return self._call(lambda proxy: proxy.cuts)

    def cut_mid_event(self) -> int:
        """See `FaultProxy.cut_mid_event`."""
        return self._call(lambda proxy: proxy.cut_mid_event())

    def reset_all(self) -> int:
        """See `FaultProxy.reset_all`."""
        return self._call(lambda proxy: proxy.reset_all())

    def close_all(self) -> int:
        """See `FaultProxy.close_all`."""
        return self._call(lambda proxy: proxy.close_all())

    def stall(self) -> None:
        """See `FaultProxy.stall`."""
        self._call(lambda proxy: proxy.stall())

    def resume(self) -> None:
        """See `FaultProxy.resume`."""
        self._call(lambda proxy: proxy.resume())

    def drip(self, size: int = 1, delay: float = 0.001) -> None:
        """See `FaultProxy.drip`."""
        self._call(lambda proxy: proxy.drip(size, delay))

    def stop_drip(self) -> None:
        """See `FaultProxy.stop_drip`."""
        self._call(lambda proxy: proxy.stop_drip())

    def refuse(self, on: bool = True) -> None:
        """See `FaultProxy.refuse`."""
        self._call(lambda proxy: proxy.refuse(on))
