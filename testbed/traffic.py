"""Transfers between NICs of a running fabric, checked end to end.

A transfer is started on the sender's control socket (``send``) and followed with
``transfer``; "delivered intact" means the receiver's ``received`` report holds a complete
message from the sender whose SHA-256 equals the one the sender reports for the data it
sent (docs/nic-emu-process.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from nic_emu.transfers import DEFAULT_TRANSFER_DEADLINE_S
from testbed.exceptions import NicControlError, TestbedError, UsageError
from testbed.fabric import Fabric

# The launcher waits this long past a transfer's deadline for the NIC's own verdict (the
# NIC fails the transfer at its deadline, naming what it found down).
DEADLINE_GRACE_S = 10.0


class TransferError(TestbedError):
    """A transfer failed, timed out, or arrived damaged."""


@dataclass
class TransferOutcome:
    """One checked transfer: sender, receiver, size in bytes, the sender's final ``transfer``
    answer, whether it arrived intact, wall seconds from send to done, and logs to read."""

    src: str
    dst: str
    size: int
    info: dict[str, Any]  # the sender's final ``transfer`` answer
    intact: bool
    seconds: float  # wall time seen by the launcher, from send to done
    logs: list[str] = field(default_factory=list)  # where to look when not intact

    def line(self) -> str:
        goodput = self.info.get("goodput_gbps", 0.0)
        verdict = "intact" if self.intact else "DAMAGED"
        return (
            f"{self.src} -> {self.dst}: {self.size} bytes {verdict} in {self.seconds:.3f} s "
            f"({goodput:.3f} Gb/s, {self.info.get('retransmissions', 0)} retransmissions)"
            + ("".join(f"\n  log: {path}" for path in self.logs))
        )


def start_transfer(
    fabric: Fabric,
    src: str,
    dst: str,
    size: int,
    *,
    seed: int = 1,
    mode: str = "mrc",
    connections: int = 1,
    data: str = "random",
    deadline_s: float = DEFAULT_TRANSFER_DEADLINE_S,
) -> Any:
    """Starts a transfer on ``src``'s NIC; returns its id. The NIC fails it if it is not
    done ``deadline_s`` after it started (:func:`deadline_line` says so to the user)."""
    if src == dst:
        raise UsageError(f"a transfer needs two different NICs, got {src} twice")
    fabric.nic_record(dst)
    if size < 1:
        raise UsageError(f"transfer size must be at least 1 byte, got {size}")
    if connections < 1:
        raise UsageError(f"a transfer needs at least 1 connection, got {connections}")
    return fabric.nic(src).send(
        dst,
        size,
        connections=connections,
        mode=mode,
        seed=seed,
        data=data,
        deadline_s=deadline_s,
    )


def deadline_line(deadline_s: float) -> str:
    """What a transfer's deadline means, for the user (printed before it starts)."""
    return (
        f"transfer deadline: {deadline_s:g} s (until then a transfer with no usable path "
        "keeps probing; then it fails, naming the paths it found down)"
    )


def delivered_intact(fabric: Fabric, src: str, dst: str, info: dict[str, Any]) -> bool:
    """The receiver holds, complete, every message ``src`` sent for this transfer (one per
    connection, ``parts``), each with the SHA-256 the sender reports for it."""
    parts = info.get("parts") or [{"sha256": info.get("sha256")}]
    digests = [part.get("sha256") for part in parts]
    if any(digest is None for digest in digests):
        return False  # the sender has not even made its data yet
    held = {
        message.get("sha256")
        for message in fabric.nic(dst).received()
        if message.get("from") == src and message.get("complete")
    }
    return all(digest in held for digest in digests)


def run_transfer(
    fabric: Fabric,
    src: str,
    dst: str,
    size: int,
    *,
    seed: int = 1,
    mode: str = "mrc",
    connections: int = 1,
    data: str = "random",
    deadline_s: float = DEFAULT_TRANSFER_DEADLINE_S,
    timeout: float | None = None,
) -> TransferOutcome:
    """Sends ``size`` bytes from ``src`` to ``dst``, waits for the end, checks the data.
    The NIC fails the transfer at ``deadline_s``; the launcher waits ``timeout`` (default
    the deadline plus :data:`DEADLINE_GRACE_S`) for its answer."""
    started = time.perf_counter()
    transfer_id = start_transfer(
        fabric,
        src,
        dst,
        size,
        seed=seed,
        mode=mode,
        connections=connections,
        data=data,
        deadline_s=deadline_s,
    )
    if timeout is None:
        timeout = deadline_s + DEADLINE_GRACE_S
    try:
        info = fabric.nic(src).wait_transfer(transfer_id, timeout, peers=(fabric.nic(dst),))
    except NicControlError as exc:
        raise evidence(fabric, TransferError(str(exc)), src, dst) from None
    seconds = time.perf_counter() - started
    if info.get("failed"):
        raise evidence(
            fabric, TransferError(f"{src} -> {dst}: transfer failed: {info['failed']}"), src, dst
        )
    outcome = TransferOutcome(
        src, dst, size, info, delivered_intact(fabric, src, dst, info), seconds
    )
    if not outcome.intact:
        outcome.logs = log_paths(fabric, src, dst)
    return outcome


def log_paths(fabric: Fabric, *nics: str) -> list[str]:
    """The logs and event logs of ``nics`` in the run directory (they stay there: the
    fabric keeps running after a failed transfer)."""
    paths = []
    for nic in nics:
        for suffix in (".log", ".events.jsonl"):
            path = fabric.rundir.file("nics", nic + suffix)
            if path.exists():
                paths.append(str(path))
    return paths


def evidence(fabric: Fabric, error: TransferError, *nics: str) -> TransferError:
    """``error`` with a note naming the logs to look at."""
    paths = log_paths(fabric, *nics)
    if paths:
        error.add_note("logs: " + ", ".join(paths))
    return error
