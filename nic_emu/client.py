"""A client of a ``nic-emu serve`` control socket (JSON lines, docs/nic-emu-process.md)."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from types import TracebackType
from typing import Any

from nic_emu.exceptions import ControlError

DEFAULT_TIMEOUT_S = 30.0
MAX_RESPONSE_BYTES = 256 << 20  # a long transfer's timeline is big


class ControlClient:
    """One connection to a NIC's control socket; requests are answered in order."""

    def __init__(self, path: str | os.PathLike[str], timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._buffer = bytearray()

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(os.fspath(self.path))
        except FileNotFoundError:
            sock.close()
            raise ControlError(
                f"no control socket at {self.path} (is nic-emu serve running?)"
            ) from None
        except ConnectionRefusedError:
            sock.close()
            raise ControlError(
                f"nothing is serving {self.path} (the NIC process has exited)"
            ) from None
        except OSError as exc:
            sock.close()
            raise ControlError(f"cannot connect to {self.path}: {exc.strerror or exc}") from None
        self._sock = sock

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request; return the response if ``ok``, else raise ControlError with
        the NIC's error text."""
        response = self.raw({"op": op, **fields})
        if response.get("ok") is not True:
            raise ControlError(str(response.get("error", f"{op} failed without an error text")))
        return response

    def raw(self, request: dict[str, Any] | bytes) -> dict[str, Any]:
        """Send a request object (or a raw line) and return the response object as is."""
        if self._sock is None:
            self.connect()
        assert self._sock is not None
        line = request if isinstance(request, bytes) else json.dumps(request).encode() + b"\n"
        try:
            self._sock.sendall(line)
            answer = self._read_line()
        except TimeoutError:
            raise ControlError(f"no answer from {self.path} within {self.timeout:g} s") from None
        except OSError as exc:
            raise ControlError(
                f"control socket {self.path} failed: {exc.strerror or exc}"
            ) from None
        try:
            response = json.loads(answer)
        except json.JSONDecodeError as exc:
            raise ControlError(f"malformed answer from {self.path}: {exc.msg}") from None
        if not isinstance(response, dict) or "ok" not in response:
            raise ControlError(f"answer from {self.path} has no 'ok' field")
        return response

    def _read_line(self) -> bytes:
        assert self._sock is not None
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                return line
            if len(self._buffer) > MAX_RESPONSE_BYTES:
                raise ControlError(f"answer from {self.path} is larger than {MAX_RESPONSE_BYTES}")
            chunk = self._sock.recv(1 << 16)
            if not chunk:
                raise ControlError(
                    f"{self.path}: the NIC process closed the connection without answering"
                )
            self._buffer += chunk

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._buffer.clear()

    def __enter__(self) -> ControlClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
