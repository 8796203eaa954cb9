"""An asyncio service run in a background thread with its own event loop (simulator, proxy).

Tests, the demo and benchmarks are synchronous or run their own loop; the simulator and the
fault proxy each live in a thread of their own, started and stopped from any thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from contextlib import AbstractAsyncContextManager
from typing import Self


class BackgroundLoop:
    """Runs `_running()` in a background thread until `stop()`.

    A subclass gives `_running()`: an async context manager that is entered when the service
    serves and exited to shut it down. `start()` waits until it serves and re-raises, as it
    happened, an error raised while starting (an OSError for a port in use, say).
    """

    #: Name of the thread, and of the service in messages.
    service_name = "background service"

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def _running(self) -> AbstractAsyncContextManager[object]:
        raise NotImplementedError

    def start(self, timeout: float = 30) -> Self:
        """Start the thread and wait until the service serves."""
        if self._thread is not None:
            raise RuntimeError("already started")
        self._ready.clear()
        self._error = None
        self._thread = threading.Thread(target=self._main, name=self.service_name, daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError(f"the {self.service_name} did not start in time")
        if self._error is not None:
            self._thread.join(5)
            self._thread = None
            raise self._error
        return self

    def stop(self, timeout: float = 10) -> None:
        """Stop the service and its thread."""
        thread, loop, stop = self._thread, self._loop, self._stop
        if thread is None:
            return
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop.set)
        thread.join(timeout)
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as error:  # reported to start(), which re-raises
            self._error = error
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with self._running():
            self._ready.set()
            await self._stop.wait()
