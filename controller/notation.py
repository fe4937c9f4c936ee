"""One table entry as one line of text, in the notation of each value's kind.

Locators and uSIDs in hex, addresses as IPv6, MACs with colons, ports and flags in
decimal: ``usid_route usid=0x0800 -> forward(port=3)``. Used by the reconciler's error
messages, ``show`` and the views of :mod:`controller.render`.
"""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import IPv6Address

from controller.entities import EntityCodec, field_names, param_names
from controller.p4names import (
    DST_MAC,
    IPV6_ROUTE_KEY,
    MY_SID_KEY,
    MY_USID_KEY,
    SRC_MAC,
    USID_ROUTE_KEY,
)
from controller.plan import Entry, LpmPrefix

_ADDRESS_FIELDS = {MY_SID_KEY, IPV6_ROUTE_KEY}
_MAC_FIELDS = {SRC_MAC, DST_MAC}


def short_name(name: str) -> str:
    """``MrcIngress.usid_route`` -> ``usid_route``."""
    return name.rpartition(".")[2]


def format_value(name: str, value: int | LpmPrefix) -> str:
    if isinstance(value, LpmPrefix):
        return f"{IPv6Address(value.value)}/{value.prefix_len}"
    if name in _ADDRESS_FIELDS:
        return str(IPv6Address(value))
    if name == MY_USID_KEY:
        return ":".join(f"{value >> shift & 0xFFFF:04x}" for shift in (32, 16, 0))
    if name == USID_ROUTE_KEY:
        return f"0x{value:04x}"
    if name in _MAC_FIELDS:
        return ":".join(f"{value >> shift & 0xFF:02x}" for shift in range(40, -1, -8))
    return str(value)


def _names(codec: EntityCodec | None, entry: Entry) -> tuple[Sequence[str], Sequence[str]]:
    if codec is not None:
        return codec.field_names(entry.table), codec.param_names(entry.action)
    return field_names(entry.table), param_names(entry.action)


def format_entry(entry: Entry, codec: EntityCodec | None = None) -> str:
    """``usid_route usid=0x0800 -> forward(port=3)``."""
    fields, params = _names(codec, entry)
    if entry.is_default:
        match = "(default)"
    else:
        match = " ".join(
            f"{name}={format_value(name, value)}"
            for name, value in zip(padded_names(fields, len(entry.match)), entry.match)
        )
        if entry.priority:
            match += f" priority={entry.priority}"
    args = ", ".join(
        f"{name}={format_value(name, value)}"
        for name, value in zip(padded_names(params, len(entry.params)), entry.params)
    )
    return f"{short_name(entry.table)} {match} -> {short_name(entry.action)}({args})"


def padded_names(names: Sequence[str], count: int) -> Sequence[str]:
    if len(names) >= count:
        return names
    return [*names, *(f"#{i}" for i in range(len(names), count))]
