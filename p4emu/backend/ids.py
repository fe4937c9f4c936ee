"""P4Runtime ids of a program's objects: the single place the backend gets them from.

Normally the ids are p4c's, computed by :mod:`p4emu.p4info` (``extract_model`` then the
symbol table and ``build_p4info``), so a controller written against p4c's P4Info drives
p4emu unchanged. When the program uses something P4Runtime cannot describe (p4c refuses
to emit a P4Info for it, e.g. an anonymous ``implementation``), p4emu can still run it
in-process: the ids then come from the same hashing rule over the names the backend
knows, ``p4info`` is None and ``p4info_error`` says why.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from p4emu.frontend import ast
from p4emu.p4info.exceptions import P4InfoError
from p4emu.p4info.ids import ResourceType, SymbolTable, name_hash

log = logging.getLogger("p4emu.backend")


@dataclass
class ControlPlaneIds:
    """Ids by (resource type, fully-qualified name), plus the P4Info when available."""

    symbols: SymbolTable
    p4info: Any = None  # p4.config.v1.P4Info
    p4info_error: str | None = None
    #: per action name: [(param id, name, bitwidth)] from the P4Info
    action_params: dict[str, list[tuple[int, str, int]]] = field(default_factory=dict)
    #: per table name: [(field id, name, bitwidth, match type name)] from the P4Info
    match_fields: dict[str, list[tuple[int, str, int, str]]] = field(default_factory=dict)
    #: per controller header name ("packet_in"): [(id, name, bitwidth)]
    controller_fields: dict[str, list[tuple[int, str, int]]] = field(default_factory=dict)
    #: ids of objects p4c leaves out of the P4Info (unused ones), same hashing rule
    extra: dict[tuple[ResourceType, str], int] = field(default_factory=dict)

    def id(self, resource: ResourceType, name: str) -> int:
        """The object's id; names unknown to the P4Info get a hashed id on first use."""
        if self.symbols.contains(resource, name):
            return self.symbols.id(resource, name)
        key = (resource, name)
        found = self.extra.get(key)
        if found is None:
            found = self.extra[key] = self._late_id(resource, name)
        return found

    def fresh(self) -> ControlPlaneIds:
        """The ids of another switch of the same program: what :func:`assign_ids` would
        compute again, without computing it. The symbol table, the P4Info and the tables
        read from it are shared (nothing changes them after :func:`assign_ids`); the late
        ids (:attr:`extra`) start empty, each switch assigning its own as it goes."""
        return ControlPlaneIds(
            self.symbols,
            self.p4info,
            self.p4info_error,
            self.action_params,
            self.match_fields,
            self.controller_fields,
        )

    def in_p4info(self, resource: ResourceType, name: str) -> bool:
        return self.p4info is not None and self.symbols.contains(resource, name)

    def listed(self) -> frozenset[int]:
        """The ids the P4Info lists (what a controller can name)."""
        return frozenset(
            self.symbols.id(resource, name)
            for resource in ResourceType
            for name in self.symbols.names(resource)
        )

    def _late_id(self, resource: ResourceType, name: str) -> int:
        taken = set(self.extra.values())
        for other in ResourceType:
            for known in self.symbols.names(other):
                taken.add(self.symbols.id(other, known))
        value = name_hash(name)
        while True:
            candidate = resource.prefix | (value & 0xFFFFFF)
            if candidate not in taken:
                return candidate
            value = (value + 1) & 0xFFFFFFFF


def assign_ids(program: ast.CheckedProgram) -> ControlPlaneIds:
    """Compute the ids of every control-plane object of ``program`` (see module docs)."""
    from p4emu.p4info.builder import build_p4info, build_symbol_table
    from p4emu.p4info.extract import extract_model

    try:
        model = extract_model(program)
        symbols = build_symbol_table(model)
        info = build_p4info(model)
    except P4InfoError as error:
        log.warning("no P4Info for this program (%s); using hashed ids", error)
        symbols = SymbolTable()
        symbols.assign_ids()
        return ControlPlaneIds(symbols, None, str(error))
    ids = ControlPlaneIds(symbols, info)
    for action in info.actions:
        ids.action_params[action.preamble.name] = [
            (p.id, p.name, p.bitwidth) for p in action.params
        ]
    match_names = {1: "exact", 2: "lpm", 3: "ternary", 4: "range", 5: "optional"}
    for table in info.tables:
        ids.match_fields[table.preamble.name] = [
            (
                f.id,
                f.name,
                f.bitwidth,
                match_names.get(f.match_type, f.other_match_type or "exact"),
            )
            for f in table.match_fields
        ]
    for header in info.controller_packet_metadata:
        ids.controller_fields[header.preamble.name] = [
            (m.id, m.name, m.bitwidth) for m in header.metadata
        ]
    return ids
