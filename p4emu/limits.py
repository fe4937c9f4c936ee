"""Bounds on one program compile: CPU time, memory growth and cancellation.

The front end bounds what a source can ask for (source size, include count and depth,
macro expansion: :mod:`p4emu.frontend.preprocessor`); these bounds catch whatever is left,
for p4emu-switch's SetForwardingPipelineConfig and ``p4emu check`` alike:

- **CPU time** of the compiling thread (not wall time, so a loaded machine does not make
  a program fail), at most :data:`MAX_COMPILE_CPU_SECONDS`;
- **memory**: the process's resident set may grow by at most
  :data:`MAX_COMPILE_MEMORY_BYTES` while the compile runs;
- **cancellation**: an event another thread sets (the gRPC call was cancelled, the
  process is stopping).

:func:`run_bounded` runs the work in the calling thread and watches it from a second one;
when a bound is crossed the watcher raises an exception *in* the compiling thread
(``PyThreadState_SetAsyncExc``), at its next Python instruction: the compiler is pure
Python, so it stops within milliseconds and nothing it built stays referenced. The
choice of the numbers is in docs/conformance.md ("Compile limits").
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from p4emu.exceptions import P4EmuError

MAX_COMPILE_CPU_SECONDS = 60.0
"""CPU seconds one compile may use (p4src/mrc_switch.p4 takes about 1 on this project's
2-core reference machine)."""

MAX_COMPILE_MEMORY_BYTES = 512 * 1024 * 1024
"""How much one compile may grow the process's resident set (a whole `p4emu check` of
mrc_switch.p4 peaks under 50 MiB)."""

POLL_INTERVAL_S = 0.02
"""How often the watcher looks at the compiling thread."""

_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
T = TypeVar("T")


class CompileLimitError(P4EmuError):
    """A compile crossed a bound (``limit`` names it: ``MAX_COMPILE_CPU_SECONDS``,
    ``MAX_COMPILE_MEMORY_BYTES``) or was cancelled (``limit`` is ``"cancelled"``)."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit
        self.message = message


@dataclass(frozen=True)
class CompileLimits:
    """The bounds of one compile: CPU seconds of the compiling thread and how many bytes the
    resident set may grow by."""

    cpu_seconds: float = MAX_COMPILE_CPU_SECONDS
    memory_bytes: int = MAX_COMPILE_MEMORY_BYTES


class _Interrupted(BaseException):
    """Raised inside the compiling thread; a BaseException so that no ``except Exception``
    of the compiler swallows it."""


def resident_bytes() -> int:
    """The process's resident set now (not its peak), from /proc/self/statm."""
    try:
        with open("/proc/self/statm", "rb") as stream:
            return int(stream.read().split()[1]) * _PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return 0


class _Watch:
    def __init__(
        self, target: int, limits: CompileLimits, cancelled: threading.Event | None
    ) -> None:
        self.target = target
        self.limits = limits
        self.cancelled = cancelled
        self.lock = threading.Lock()
        self.active = True
        self.posted = False
        self.error: CompileLimitError | None = None
        self.stopped = threading.Event()
        self.clock = time.pthread_getcpuclockid(target)
        self.cpu_start = time.clock_gettime(self.clock)
        self.rss_start = resident_bytes()

    def run(self) -> None:
        while not self.stopped.wait(POLL_INTERVAL_S):
            error = self._crossed()
            if error is None:
                continue
            with self.lock:
                if self.active and not self.posted:
                    self.error, self.posted = error, True
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(
                        ctypes.c_ulong(self.target), ctypes.py_object(_Interrupted)
                    )
            return

    def _crossed(self) -> CompileLimitError | None:
        if self.cancelled is not None and self.cancelled.is_set():
            return CompileLimitError("cancelled", "the compile was cancelled")
        try:
            cpu = time.clock_gettime(self.clock) - self.cpu_start
        except OSError:
            return None  # the thread is ending
        if cpu > self.limits.cpu_seconds:
            return CompileLimitError(
                "MAX_COMPILE_CPU_SECONDS",
                f"the compile used more than {self.limits.cpu_seconds:g} s of CPU "
                "(the limit MAX_COMPILE_CPU_SECONDS)",
            )
        grown = resident_bytes() - self.rss_start
        if grown > self.limits.memory_bytes:
            return CompileLimitError(
                "MAX_COMPILE_MEMORY_BYTES",
                f"the compile grew memory by more than {self.limits.memory_bytes >> 20} MiB "
                "(the limit MAX_COMPILE_MEMORY_BYTES)",
            )
        return None


def run_bounded(
    work: Callable[[], T],
    limits: CompileLimits | None = None,
    cancelled: threading.Event | None = None,
) -> T:
    """``work()`` in this thread, stopped with :class:`CompileLimitError` when it crosses
    ``limits`` or when ``cancelled`` is set."""
    watch = _Watch(threading.get_ident(), limits or CompileLimits(), cancelled)
    watcher = threading.Thread(target=watch.run, name="p4emu-compile-watch", daemon=True)
    delivered = False
    try:
        watcher.start()
        try:
            return work()
        except _Interrupted:
            delivered = True
            raise
        finally:
            with watch.lock:
                watch.active = False
            watch.stopped.set()
            if watch.posted and not delivered:
                _absorb()  # an interrupt posted just before the work ended arrives here
    except _Interrupted:
        assert watch.error is not None
        raise watch.error from None
    finally:
        watch.stopped.set()


def _absorb(bound_s: float = 1.0) -> None:
    """Waits (briefly) for a posted asynchronous exception to be delivered."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        time.sleep(0.001)
