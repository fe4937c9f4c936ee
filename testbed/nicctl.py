"""Client of a ``nic-emu`` process's control socket (docs/nic-emu-process.md).

JSON lines over a Unix stream socket: one request object per line, one response object per
line, every response with ``ok``. One connection per request keeps the client stateless
(the launcher exits between commands).
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

from testbed.exceptions import NicControlError

DEFAULT_TIMEOUT_S = 10.0
MAX_RESPONSE_BYTES = 64 * 1024 * 1024  # a transfer's timeline can be long


class NicControl:
    """Talks to one NIC's control socket."""

    def __init__(self, nic: str, path: str | Path, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.nic = nic
        self.path = Path(path)
        self.timeout = timeout

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Sends ``{"op": op, **fields}``; returns the response (``ok`` true) or raises
        NicControlError with the NIC's own error text."""
        message = json.dumps({"op": op, **fields}) + "\n"
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(self.timeout)
                sock.connect(str(self.path))
                sock.sendall(message.encode())
                line = _read_line(sock)
        except FileNotFoundError:
            raise NicControlError(
                f"{self.nic}: no control socket at {self.path} (is the NIC running?)"
            ) from None
        except ConnectionRefusedError:
            raise NicControlError(
                f"{self.nic}: control socket {self.path} refused the connection"
            ) from None
        except TimeoutError:
            raise NicControlError(
                f"{self.nic}: no answer to {op!r} within {self.timeout:g} s on {self.path}"
            ) from None
        except OSError as exc:
            raise NicControlError(
                f"{self.nic}: control socket {self.path}: {exc.strerror or exc}"
            ) from None
        try:
            response = json.loads(line)
        except json.JSONDecodeError as exc:
            raise NicControlError(f"{self.nic}: malformed answer to {op!r}: {exc}") from None
        if not isinstance(response, dict) or "ok" not in response:
            raise NicControlError(f"{self.nic}: answer to {op!r} has no 'ok' field: {line[:200]!r}")
        if response["ok"] is not True:
            raise NicControlError(
                f"{self.nic}: {op} failed: {response.get('error', 'no error text')}"
            )
        return response

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
        self, to: str, size: int, *, connections: int = 1, mode: str = "mrc", seed: int = 1
    ) -> Any:
        """Starts a transfer; returns its id."""
        reply = self.request(
            "send", to=to, bytes=size, connections=connections, mode=mode, seed=seed
        )
        if "transfer" not in reply:
            raise NicControlError(f"{self.nic}: answer to send has no transfer id")
        return reply["transfer"]

    def transfer(self, transfer_id: Any) -> dict[str, Any]:
        return self.request("transfer", id=transfer_id)

    def received(self) -> list[dict[str, Any]]:
        return list(self.request("received").get("messages", []))

    def set_port(self, plane: int, up: bool) -> None:
        self.request("port", plane=plane, up=up)

    def wait_transfer(self, transfer_id: Any, timeout: float, poll: float = 0.05) -> dict[str, Any]:
        """Polls until the transfer is done; NicControlError on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            info = self.transfer(transfer_id)
            if info.get("done"):
                return info
            if time.monotonic() > deadline:
                raise NicControlError(
                    f"{self.nic}: transfer {transfer_id} not done after {timeout:g} s "
                    f"({info.get('bytes_acked', '?')} of {info.get('bytes_total', '?')} bytes acked)"
                )
            time.sleep(poll)


def _read_line(sock: socket.socket) -> str:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        newline = chunk.find(b"\n")
        if newline >= 0:
            chunks.append(chunk[:newline])
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_RESPONSE_BYTES:
            raise NicControlError("control answer larger than 64 MiB")
    if not chunks:
        raise ConnectionResetError("the NIC closed the connection without answering")
    return b"".join(chunks).decode("utf-8", errors="replace")
