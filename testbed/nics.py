"""The fabric's NICs, driven through nic_emu's own control client
(:class:`nic_emu.client.ControlClient`, the one client of the JSON-lines control socket,
docs/nic-emu-process.md).

One connection per request keeps the launcher stateless (it exits between commands). Every
error becomes a :class:`~testbed.exceptions.NicControlError` naming the NIC; when the NIC's
process record is known, a NIC whose process has exited is reported as such at once,
instead of after a timeout.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from nic_emu.client import ControlClient
from nic_emu.exceptions import ControlError
from nic_emu.transfers import DEFAULT_TRANSFER_DEADLINE_S
from testbed.exceptions import NicControlError
from testbed.rundir import ProcessRecord, exit_code, is_alive

DEFAULT_TIMEOUT_S = 10.0
POLL_S = 0.05


def gone_error(record: ProcessRecord, what: str) -> NicControlError:
    """The NIC process of ``record`` has exited: say so, with its exit status if known."""
    code = exit_code(record)
    status = f" with status {code}" if code is not None else ""
    return NicControlError(
        f"{record.node}: the NIC process (pid {record.pid}) has exited{status} {what}; "
        f"see {record.log}"
    )


class RunningNic:
    """One NIC of a running fabric."""

    def __init__(
        self,
        name: str,
        path: str | Path,
        timeout: float = DEFAULT_TIMEOUT_S,
        record: ProcessRecord | None = None,
    ) -> None:
        self.name = name
        self.path = Path(path)
        self.timeout = timeout
        self.record = record

    def alive(self) -> bool:
        """False once the NIC's process is known to have exited."""
        return self.record is None or is_alive(self.record)

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Sends ``{"op": op, **fields}``; returns the answer (``ok`` true), else raises
        NicControlError with the NIC's own error text."""
        try:
            with ControlClient(self.path, self.timeout) as client:
                return client.request(op, **fields)
        except ControlError as exc:
            if not self.alive():
                raise gone_error(self.record, f"(answering {op!r})") from None  # type: ignore[arg-type]
            raise NicControlError(f"{self.name}: {op}: {exc}") from None

    def ready(self) -> bool:
        """True once the NIC answers ``status`` (the contract's readiness test)."""
        try:
            self.request("status")
        except NicControlError:
            return False
        return True

    def status(self) -> dict[str, Any]:
        return self.request("status")

    def send(
        self,
        to: str,
        size: int,
        *,
        connections: int = 1,
        mode: str = "mrc",
        seed: int = 1,
        data: str = "random",
        deadline_s: float = DEFAULT_TRANSFER_DEADLINE_S,
    ) -> Any:
        """Starts a transfer that the NIC fails if not done ``deadline_s`` after the
        request; returns its id."""
        reply = self.request(
            "send",
            to=to,
            bytes=size,
            connections=connections,
            mode=mode,
            seed=seed,
            data=data,
            deadline_s=deadline_s,
        )
        if "transfer" not in reply:
            raise NicControlError(f"{self.name}: the answer to send has no transfer id")
        return reply["transfer"]

    def transfer(self, transfer_id: Any) -> dict[str, Any]:
        return self.request("transfer", id=transfer_id)

    def received(self) -> list[dict[str, Any]]:
        return list(self.request("received").get("messages", []))

    def set_port(self, plane: int, up: bool) -> None:
        self.request("port", plane=plane, up=up)

    def wait_transfer(
        self,
        transfer_id: Any,
        timeout: float,
        *,
        peers: tuple[RunningNic, ...] = (),
        poll: float = POLL_S,
    ) -> dict[str, Any]:
        """Polls until the transfer is done. NicControlError at once when this NIC's or a
        ``peers``' process has exited (checked by pid at every poll), else after
        ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            for nic in (self, *peers):
                if not nic.alive():
                    raise gone_error(nic.record, "during the transfer")  # type: ignore[arg-type]
            info = self.transfer(transfer_id)
            if info.get("done"):
                return info
            if time.monotonic() > deadline:
                raise NicControlError(
                    f"{self.name}: transfer {transfer_id} not done after {timeout:g} s "
                    f"({info.get('bytes_acked', '?')} of {info.get('bytes_total', '?')} "
                    "bytes acknowledged)"
                )
            time.sleep(poll)
