"""Run-time port status over gNMI (the way Stratum exposes it), served beside P4Runtime.

Paths (OpenConfig interfaces model, ``name`` is the port number as a string, or the port's
interface name when it is bound to a Linux interface):

- Set ``/interfaces/interface[name=N]/config/enabled`` with ``bool_val`` false/true:
  administratively takes the port down/up. A down port loses frames in both directions,
  as a cut cable.
- Get ``/interfaces/interface[name=N]/state/oper-status`` → ``string_val`` "UP"/"DOWN";
  ``name=*`` lists every port; ``.../state/counters/in-pkts`` etc. give per-port counters.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import grpc
from finsy.proto import gnmi, gnmi_grpc

from p4emu.proto import rpc_code
from p4emu.server.policy import AccessPolicy
from p4emu.server.status import quoted, set_error
from p4emu.server.transport import peer_identity


@dataclass(frozen=True)
class PortStatus:
    """What gNMI reports of one port: number, interface name, whether it is up, and its
    counters (``in-pkts``, ``out-pkts``)."""

    port: int
    name: str
    up: bool
    counters: dict[str, int]


class PortControl(Protocol):
    def port_statuses(self) -> list[PortStatus]: ...

    def set_port_up(self, port: int, up: bool) -> None: ...


class PortPathError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _elems(prefix: gnmi.Path, path: gnmi.Path) -> list[gnmi.PathElem]:
    return list(prefix.elem) + list(path.elem)


def format_path(elems: list[gnmi.PathElem]) -> str:
    parts = []
    for elem in elems:
        keys = "".join(f"[{k}={v}]" for k, v in sorted(elem.key.items()))
        parts.append(elem.name + keys)
    return "/" + "/".join(parts)


def interface_path(name: str, *leaf: str) -> gnmi.Path:
    """``/interfaces/interface[name=NAME]/leaf...`` as a gNMI Path."""
    path = gnmi.Path()
    path.elem.add(name="interfaces")
    path.elem.add(name="interface").key["name"] = name
    for part in leaf:
        path.elem.add(name=part)
    return path


class GnmiPortService(gnmi_grpc.gNMIServicer):
    def __init__(self, ports: PortControl, policy: AccessPolicy | None = None) -> None:
        self.ports = ports
        self.policy = policy or AccessPolicy()

    def _select(self, elems: list[gnmi.PathElem]) -> tuple[list[PortStatus], list[str]]:
        if len(elems) < 2 or elems[0].name != "interfaces" or elems[1].name != "interface":
            raise PortPathError(
                rpc_code.NOT_FOUND,
                f"unsupported path {format_path(elems)}: only /interfaces/interface[name=...]/... is served",
            )
        name = elems[1].key.get("name", "*")
        statuses = self.ports.port_statuses()
        if name != "*":
            statuses = [s for s in statuses if name in (s.name, str(s.port))]
            if not statuses:
                raise PortPathError(rpc_code.NOT_FOUND, f"no port named {quoted(name)}")
        return statuses, [e.name for e in elems[2:]]

    def Capabilities(self, request, context):
        response = gnmi.CapabilityResponse(gNMI_version="0.8.0")
        response.supported_models.add(
            name="openconfig-interfaces", organization="OpenConfig working group", version="2.4.3"
        )
        response.supported_encodings.append(gnmi.Encoding.PROTO)
        return response

    def Get(self, request: gnmi.GetRequest, context: grpc.ServicerContext) -> gnmi.GetResponse:
        response = gnmi.GetResponse()
        try:
            for path in request.path:
                statuses, leaf = self._select(_elems(request.prefix, path))
                notification = response.notification.add(timestamp=time.time_ns())
                for status in statuses:
                    for leaf_path, value in self._leaves(status, leaf):
                        update = notification.update.add()
                        update.path.CopyFrom(interface_path(status.name, *leaf_path))
                        update.val.CopyFrom(value)
        except PortPathError as exc:
            set_error(context, exc.code, exc.message)
            return gnmi.GetResponse()
        return response

    @staticmethod
    def _leaves(status: PortStatus, leaf: list[str]) -> Iterator[tuple[list[str], gnmi.TypedValue]]:
        everything = {
            ("state", "oper-status"): gnmi.TypedValue(string_val="UP" if status.up else "DOWN"),
            ("state", "admin-status"): gnmi.TypedValue(string_val="UP" if status.up else "DOWN"),
            ("config", "enabled"): gnmi.TypedValue(bool_val=status.up),
            ("state", "ifindex"): gnmi.TypedValue(uint_val=status.port),
        }
        for counter, value in status.counters.items():
            everything[("state", "counters", counter)] = gnmi.TypedValue(uint_val=value)
        matched = False
        for key, value in everything.items():
            if tuple(leaf) == key[: len(leaf)]:
                matched = True
                yield list(key), value
        if not matched:
            raise PortPathError(
                rpc_code.NOT_FOUND, f"port {status.name}: no leaf /{'/'.join(leaf)}"
            )

    def Set(self, request: gnmi.SetRequest, context: grpc.ServicerContext) -> gnmi.SetResponse:
        refusal = self.policy.controller_refusal(peer_identity(context), "change port state")
        if refusal is not None:
            set_error(context, rpc_code.PERMISSION_DENIED, refusal)
            return gnmi.SetResponse()
        if request.delete:
            set_error(
                context,
                rpc_code.UNIMPLEMENTED,
                "gNMI delete is not supported; set config/enabled instead",
            )
            return gnmi.SetResponse()
        changes: list[tuple[int, bool, gnmi.Path, int]] = []
        operations = [(u, gnmi.UpdateResult.REPLACE) for u in request.replace] + [
            (u, gnmi.UpdateResult.UPDATE) for u in request.update
        ]
        try:
            for update, op in operations:
                elems = _elems(request.prefix, update.path)
                statuses, leaf = self._select(elems)
                if leaf != ["config", "enabled"]:
                    raise PortPathError(
                        rpc_code.INVALID_ARGUMENT,
                        f"{format_path(elems)} is not settable; only .../config/enabled is",
                    )
                if update.val.WhichOneof("value") != "bool_val":
                    raise PortPathError(
                        rpc_code.INVALID_ARGUMENT, f"{format_path(elems)} needs a bool_val"
                    )
                changes.extend((s.port, update.val.bool_val, update.path, op) for s in statuses)
        except PortPathError as exc:
            set_error(context, exc.code, exc.message)
            return gnmi.SetResponse()
        response = gnmi.SetResponse(timestamp=time.time_ns())
        for port, up, path, op in changes:
            self.ports.set_port_up(port, up)
            response.response.add(path=path, op=op)
        return response
