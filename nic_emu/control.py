"""The control socket of ``nic-emu serve``: JSON lines over a Unix stream socket
(docs/nic-emu-process.md, "Control protocol").

One request object per line, one response object per line, in order. Every response has
``ok``; a request that cannot be served (malformed JSON, not an object, unknown op,
missing or mistyped field...) gets ``{"ok": false, "error": "<specific message>"}`` and
the connection stays usable. Only a line longer than :data:`MAX_REQUEST_BYTES` closes
the connection (after its error response), since the stream cannot be resynchronised.

:class:`ControlServer` is non-blocking and lives in the serving process's selector; the
operations themselves are the ``handle`` callable (``nic_emu.process``).
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import socket
import stat
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nic_emu.exceptions import NicEmuError, ServeConfigError

MAX_REQUEST_BYTES = 1 << 20
LISTEN_BACKLOG = 64
FLUSH_ON_CLOSE_S = 2.0


class RequestError(NicEmuError):
    """A control request cannot be served; the message goes back as ``error``."""


Handler = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a request: its JSON type and, if optional, its default."""

    kind: type | tuple[type, ...]
    required: bool = True
    default: Any = None


_TYPE_NAMES = {int: "an integer", str: "a string", bool: "true or false", float: "a number"}


def check_fields(op: str, request: Mapping[str, Any], spec: Mapping[str, Field]) -> dict[str, Any]:
    """The request's fields checked against ``spec`` (``op`` itself excluded), defaults
    filled in; RequestError naming the field otherwise."""
    for name in request:
        if name != "op" and name not in spec:
            known = ", ".join(sorted(spec)) or "none"
            raise RequestError(f"{op}: unknown field {name!r} (fields: {known})")
    out: dict[str, Any] = {}
    for name, want in spec.items():
        if name not in request:
            if want.required:
                raise RequestError(f"{op}: missing field {name!r}")
            out[name] = want.default
            continue
        value = request[name]
        kinds = want.kind if isinstance(want.kind, tuple) else (want.kind,)
        wrong_bool = isinstance(value, bool) and bool not in kinds
        if wrong_bool or not isinstance(value, kinds):
            shown = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
            raise RequestError(f"{op}: field {name!r} must be {shown}, got {value!r}")
        out[name] = value
    return out


class _Client:
    __slots__ = ("closing", "inbox", "outbox", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.inbox = bytearray()
        self.outbox = bytearray()
        self.closing = False


class ControlServer:
    """A listening Unix socket at ``path`` and its clients."""

    def __init__(self, path: Path, handle: Handler) -> None:
        self.path = path
        self.handle = handle
        self.requests = 0
        self.errors = 0
        self._listener: socket.socket | None = None
        self._selector: selectors.BaseSelector | None = None
        self._clients: dict[int, _Client] = {}

    # -- lifecycle ----------------------------------------------------------------

    def open(self) -> None:
        """Bind the socket. A stale socket file (no process behind it) is replaced; a live
        one, or any other file, is a ServeConfigError on ``control``."""
        path = self.path
        if path.exists() or path.is_symlink():
            if not stat.S_ISSOCK(path.lstat().st_mode):
                raise ServeConfigError("control", f"{path} exists and is not a socket")
            if _socket_alive(path):
                raise ServeConfigError("control", f"{path} is in use by another running process")
            path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(os.fspath(path))
            listener.listen(LISTEN_BACKLOG)
        except OSError as exc:
            listener.close()
            raise ServeConfigError("control", f"cannot listen on {path}: {exc.strerror}") from None
        listener.setblocking(False)
        self._listener = listener

    def register(self, selector: selectors.BaseSelector) -> None:
        assert self._listener is not None
        self._selector = selector
        selector.register(self._listener, selectors.EVENT_READ, self._accept)

    def close(self) -> None:
        """Send what is still queued (briefly), close every client, remove the socket."""
        deadline = time.monotonic() + FLUSH_ON_CLOSE_S
        for client in list(self._clients.values()):
            if client.outbox:
                with contextlib.suppress(OSError):
                    client.sock.settimeout(max(0.01, deadline - time.monotonic()))
                    client.sock.sendall(client.outbox)
            self._drop(client)
        if self._listener is not None:
            if self._selector is not None:
                with contextlib.suppress(KeyError, ValueError):
                    self._selector.unregister(self._listener)
            self._listener.close()
            self._listener = None
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    @property
    def clients(self) -> int:
        return len(self._clients)

    # -- I/O ----------------------------------------------------------------------

    def _accept(self, mask: int) -> None:
        assert self._listener is not None and self._selector is not None
        while True:
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return  # e.g. the client gave up before we accepted
            sock.setblocking(False)
            client = _Client(sock)
            self._clients[sock.fileno()] = client
            self._selector.register(
                sock, selectors.EVENT_READ, lambda m, c=client: self._on_client(c, m)
            )

    def _on_client(self, client: _Client, mask: int) -> None:
        if mask & selectors.EVENT_WRITE:
            self._write(client)
        if mask & selectors.EVENT_READ and not client.closing:
            self._read(client)

    def _read(self, client: _Client) -> None:
        try:
            chunk = client.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._drop(client)
            return
        client.inbox += chunk
        while True:
            newline = client.inbox.find(b"\n")
            if newline < 0:
                break
            line = bytes(client.inbox[:newline])
            del client.inbox[: newline + 1]
            self._queue(client, self.respond(line))
        if len(client.inbox) > MAX_REQUEST_BYTES:
            client.inbox.clear()
            self._queue(
                client,
                {"ok": False, "error": f"request line longer than {MAX_REQUEST_BYTES} bytes"},
            )
            client.closing = True
        self._write(client)

    def _queue(self, client: _Client, response: dict[str, Any]) -> None:
        client.outbox += json.dumps(response, separators=(",", ":")).encode() + b"\n"

    def _write(self, client: _Client) -> None:
        if client.outbox:
            try:
                sent = client.sock.send(client.outbox)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError:
                self._drop(client)
                return
            del client.outbox[:sent]
        if not client.outbox and client.closing:
            self._drop(client)
            return
        assert self._selector is not None
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if client.outbox else 0)
        with contextlib.suppress(KeyError):
            key = self._selector.get_key(client.sock)
            if key.events != events:
                self._selector.modify(client.sock, events, key.data)

    def _drop(self, client: _Client) -> None:
        client.closing = True
        self._clients.pop(client.sock.fileno(), None)
        if self._selector is not None:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(client.sock)
        client.sock.close()

    # -- requests -----------------------------------------------------------------

    def respond(self, line: bytes) -> dict[str, Any]:
        """The response object for one request line."""
        self.requests += 1
        response = self._respond(line)
        if not response.get("ok"):
            self.errors += 1
        return response

    def _respond(self, line: bytes) -> dict[str, Any]:
        try:
            request = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            return {"ok": False, "error": "malformed request: not UTF-8"}
        except json.JSONDecodeError as exc:
            return {"ok": False, "error": f"malformed request: {exc.msg} at column {exc.colno}"}
        if not isinstance(request, dict):
            return {"ok": False, "error": "malformed request: not a JSON object"}
        op = request.get("op")
        if op is None:
            return {"ok": False, "error": "malformed request: missing field 'op'"}
        if not isinstance(op, str):
            return {"ok": False, "error": f"malformed request: 'op' must be a string, got {op!r}"}
        try:
            result = self.handle(request)
        except RequestError as exc:
            return {"ok": False, "error": str(exc)}
        except NicEmuError as exc:
            return {"ok": False, "error": f"{op}: {exc}"}
        except Exception as exc:  # a bug must not take the NIC down; say what happened
            traceback.print_exc(file=sys.stderr)
            return {"ok": False, "error": f"{op}: internal error: {type(exc).__name__}: {exc}"}
        return {"ok": True, **result}


def _socket_alive(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(0.5)
    try:
        probe.connect(os.fspath(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True
