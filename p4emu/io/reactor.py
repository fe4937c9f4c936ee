"""A small event loop for port I/O: waits on every port driver and on timers at once.

It runs in one thread; other threads hand it work with :meth:`Reactor.call_soon`, which is
safe from any thread and wakes the loop at once.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import selectors
import socket
import threading
import time
from collections.abc import Callable

from p4emu.io.drivers import PortDriver
from p4emu.io.exceptions import PortIOError

FrameHandler = Callable[[int, bytes], None]
log = logging.getLogger("p4emu.io")

# Frames read from one port per wake-up before others get a turn (fairness under load).
MAX_FRAMES_PER_READ = 64


class Reactor:
    """``on_frame(port, frame)`` runs for every received frame; ``after_frames()`` (optional)
    once after each wake-up that received any, so per-batch work (scheduling departures)
    is not repeated per frame."""

    def __init__(
        self,
        on_frame: FrameHandler,
        clock: Callable[[], float] = time.monotonic,
        after_frames: Callable[[], None] | None = None,
    ) -> None:
        self._on_frame = on_frame
        self._after_frames = after_frames
        self._clock = clock
        self._selector = selectors.DefaultSelector()
        self._drivers: dict[int, PortDriver] = {}
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._sequence = itertools.count()
        self._pending: list[Callable[[], None]] = []
        self._pending_lock = threading.Lock()
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._wake_reader.setblocking(False)
        self._wake_writer.setblocking(False)
        self._selector.register(self._wake_reader, selectors.EVENT_READ, None)
        self._thread: threading.Thread | None = None
        self._running = False
        self.errors: list[str] = []

    # --- drivers -------------------------------------------------------------------------
    def add(self, driver: PortDriver) -> None:
        if driver.port in self._drivers:
            raise PortIOError(
                f"port {driver.port} already has a driver ({self._drivers[driver.port].description})"
            )
        self._drivers[driver.port] = driver
        self._selector.register(driver.fileno(), selectors.EVENT_READ, driver)

    def driver(self, port: int) -> PortDriver | None:
        return self._drivers.get(port)

    @property
    def ports(self) -> list[int]:
        return sorted(self._drivers)

    # --- work from other threads ---------------------------------------------------------
    def call_soon(self, callback: Callable[[], None]) -> None:
        with self._pending_lock:
            self._pending.append(callback)
        self._wake()

    def call_at(self, when: float, callback: Callable[[], None]) -> None:
        """Runs ``callback`` at clock time ``when``; call only from the reactor thread."""
        heapq.heappush(self._timers, (when, next(self._sequence), callback))

    def _wake(self) -> None:
        # A full buffer means the loop is already woken; a closed socket means it has stopped.
        with contextlib.suppress(OSError):
            self._wake_writer.send(b"\0")

    # --- loop ----------------------------------------------------------------------------
    def run_once(self, max_wait: float | None = None) -> None:
        now = self._clock()
        wait = max_wait
        if self._timers:
            until_timer = max(0.0, self._timers[0][0] - now)
            wait = until_timer if wait is None else min(wait, until_timer)
        with self._pending_lock:
            if self._pending:
                wait = 0.0
        received = 0
        for key, _events in self._selector.select(wait):
            driver = key.data
            if driver is None:
                self._drain_wake()
                continue
            received += self._read(driver)
        if received and self._after_frames is not None:
            self._after_frames()
        self._run_pending()
        self._run_due_timers()

    def _read(self, driver: PortDriver) -> int:
        """Reads and delivers up to MAX_FRAMES_PER_READ frames; returns how many."""
        on_frame, port, receive = self._on_frame, driver.port, driver.receive
        for count in range(MAX_FRAMES_PER_READ):
            try:
                frame = receive()
            except PortIOError as exc:
                self._record_error(str(exc))
                return count
            if frame is None:
                return count
            on_frame(port, frame)
        return MAX_FRAMES_PER_READ

    def _drain_wake(self) -> None:
        with contextlib.suppress(OSError):
            while self._wake_reader.recv(4096):
                continue

    def _run_pending(self) -> None:
        with self._pending_lock:
            pending, self._pending = self._pending, []
        for callback in pending:
            callback()

    def _run_due_timers(self) -> None:
        now = self._clock()
        while self._timers and self._timers[0][0] <= now:
            _, _, callback = heapq.heappop(self._timers)
            callback()

    def _record_error(self, message: str) -> None:
        log.error(message)
        self.errors.append(message)

    def run_forever(self) -> None:
        self._running = True
        while self._running:
            self.run_once(0.5)

    def start(self, name: str = "p4emu-io") -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self.run_forever, name=name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stops the loop and closes every driver; safe to call more than once."""

        def halt() -> None:
            self._running = False

        if self._thread is not None:
            self.call_soon(halt)
            self._thread.join(timeout=5)
            self._thread = None
        self._running = False
        for driver in list(self._drivers.values()):
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._selector.unregister(driver.fileno())
            driver.close()
        self._drivers.clear()
        for sock in (self._wake_reader, self._wake_writer):
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._selector.unregister(sock)
            sock.close()
