"""Transfers between NICs of a running fabric, checked end to end.

A transfer is started on the sender's control socket (``send``) and followed with
``transfer``; "delivered intact" means the receiver's ``received`` report holds a complete
message from the sender whose SHA-256 equals the one the sender reports for the data it
sent (docs/nic-emu-process.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from testbed.exceptions import NicControlError, TestbedError, UsageError
from testbed.fabric import Fabric

DEFAULT_TRANSFER_TIMEOUT_S = 120.0


class TransferError(TestbedError):
    """A transfer failed, timed out, or arrived damaged."""


@dataclass
class TransferOutcome:
    src: str
    dst: str
    size: int
    info: dict[str, Any]  # the sender's final ``transfer`` answer
    intact: bool
    seconds: float  # wall time seen by the launcher, from send to done

    def line(self) -> str:
        goodput = self.info.get("goodput_gbps", 0.0)
        verdict = "intact" if self.intact else "DAMAGED"
        return (
            f"{self.src} -> {self.dst}: {self.size} bytes {verdict} in {self.seconds:.3f} s "
            f"({goodput:.3f} Gb/s, {self.info.get('retransmissions', 0)} retransmissions)"
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
) -> Any:
    if src == dst:
        raise UsageError(f"a transfer needs two different NICs, got {src} twice")
    fabric.nic_record(dst)
    if size < 1:
        raise UsageError(f"transfer size must be at least 1 byte, got {size}")
    if connections < 1:
        raise UsageError(f"a transfer needs at least 1 connection, got {connections}")
    return fabric.nic(src).send(dst, size, connections=connections, mode=mode, seed=seed)


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
    timeout: float = DEFAULT_TRANSFER_TIMEOUT_S,
) -> TransferOutcome:
    """Sends ``size`` bytes from ``src`` to ``dst``, waits for the end, checks the data."""
    started = time.perf_counter()
    transfer_id = start_transfer(
        fabric, src, dst, size, seed=seed, mode=mode, connections=connections
    )
    try:
        info = fabric.nic(src).wait_transfer(transfer_id, timeout)
    except NicControlError as exc:
        raise TransferError(str(exc)) from None
    seconds = time.perf_counter() - started
    if info.get("failed"):
        raise TransferError(f"{src} -> {dst}: transfer failed: {info['failed']}")
    return TransferOutcome(src, dst, size, info, delivered_intact(fabric, src, dst, info), seconds)
