"""The state every part of the P4Info extraction shares (:mod:`p4emu.p4info.extract`):
the checked program indexed by declaration, the model being filled, the type collector,
and the lookups and argument helpers the entity kinds use. ``extract_externs``,
``extract_tables`` and ``extract_digests`` each add the methods of one entity kind.
"""

from __future__ import annotations

from dataclasses import dataclass

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.p4info.exceptions import ExtractError
from p4emu.p4info.ids import control_plane_name
from p4emu.p4info.model import (
    ControlPlaneModel,
    CounterUnit,
    MatchType,
    MeterUnit,
)
from p4emu.p4info.typespecs import TypeCollector

DEFAULT_TABLE_SIZE = 1024  # p4c: P4V1::V1Model tableAttributes.defaultTableSize
NO_ACTION = "NoAction"


_MATCH_KINDS = {
    "exact": MatchType.EXACT,
    "lpm": MatchType.LPM,
    "ternary": MatchType.TERNARY,
    "range": MatchType.RANGE,
    "optional": MatchType.OPTIONAL,
    "selector": MatchType.SELECTOR,
}

_COUNTER_UNITS = {
    "packets": CounterUnit.PACKETS,
    "bytes": CounterUnit.BYTES,
    "packets_and_bytes": CounterUnit.BOTH,
}
_METER_UNITS = {"packets": MeterUnit.PACKETS, "bytes": MeterUnit.BYTES}


@dataclass
class Visit:
    """A node of an apply body / parser state, with the block instance it belongs to."""

    block: ast.BlockInstance
    node: ast.Node


@dataclass
class Local:
    """One declaration of a flattened (inlined) block, with the instance that owns it."""

    block: ast.BlockInstance
    decl: ast.Declaration


class ExtractorBase:
    def __init__(self, program: ast.CheckedProgram) -> None:
        self.program = program
        self.model = ControlPlaneModel()
        self.types = TypeCollector()
        self.touched_type_info = False
        self.tables_by_key = {(id(ti.block), id(ti.decl)): ti for ti in program.tables}
        self.actions_by_decl: dict[int, list[ast.ActionInstance]] = {}
        for instance in program.actions:
            self.actions_by_decl.setdefault(id(instance.decl), []).append(instance)
        self.externs_by_decl: dict[int, list[ast.ExternInstance]] = {}
        for extern in program.extern_instances:
            self.externs_by_decl.setdefault(id(extern.decl), []).append(extern)
        self.value_sets_by_key = {(id(vs.block), id(vs.decl)): vs for vs in program.value_sets}
        self.global_actions = {
            id(decl) for decl in program.declarations(ast.ActionDecl) if decl is not None
        }
        self.no_action = self._find_no_action()
        self.digest_auto_names: dict[int, str] = {}
        self.table_actions: set[int] = set()  # id() of actions a live table refers to

    def _type_info_present(self) -> bool:
        info = self.types.info
        return self.touched_type_info or any(
            (info.structs, info.headers, info.header_unions, info.enums,
             info.serializable_enums, info.new_types, info.error_members is not None)
        )  # fmt: skip

    def _find_no_action(self) -> ast.ActionDecl | None:
        for decl in self.program.declarations(ast.ActionDecl):
            if decl.name == NO_ACTION:
                assert isinstance(decl, ast.ActionDecl)
                return decl
        return None

    def _action_name(self, decl: ast.ActionDecl, block: ast.BlockInstance | None) -> str:
        candidates = self.actions_by_decl.get(id(decl), [])
        for instance in candidates:
            if instance.block is None or instance.block is block:
                return instance.name
        if candidates:
            return candidates[0].name
        # Not listed by the checker (e.g. never referenced): apply p4c's naming.
        if block is None or self._is_global(decl):
            return control_plane_name(decl.name_annotation or decl.name)
        return block.qualified_name(decl)

    def _is_global(self, decl: ast.ActionDecl) -> bool:
        return id(decl) in self.global_actions

    def _table_instance(self, block: ast.BlockInstance, decl: ast.TableDecl) -> ast.TableInstance:
        instance = self.tables_by_key.get((id(block), id(decl)))
        if instance is None:
            raise ExtractError(decl.loc, f"table {decl.name} was not registered by the checker")
        return instance

    def _extern_for(
        self, decl: ast.Instantiation | ast.ConstructorCall, block: ast.BlockInstance | None
    ) -> ast.ExternInstance | None:
        for instance in self.externs_by_decl.get(id(decl), []):
            if instance.block is block:
                return instance
        candidates = self.externs_by_decl.get(id(decl), [])
        return candidates[0] if len(candidates) == 1 else None

    def _register_scalar_type(self, type_: t.Type | None, loc: object) -> None:
        """``TypeSpecConverter::convert`` side effect for match fields / params / metadata."""
        if isinstance(type_, (t.NewType, t.EnumType, t.ErrorType)):
            self.types.spec(type_, loc)


def match_type_of(kind: str) -> tuple[MatchType, str]:
    match_type = _MATCH_KINDS.get(kind)
    if match_type is None:
        return MatchType.OTHER, kind
    return match_type, ""


def enum_member_name(args: list, position: int) -> str | None:
    value = args[position] if len(args) > position else None
    return value if isinstance(value, str) else getattr(value, "name", None)


def counter_unit(args: list, position: int) -> CounterUnit:
    """``CounterType.packets`` etc.; anything else is UNSPECIFIED like p4c's mapUnitName."""
    return _COUNTER_UNITS.get(enum_member_name(args, position) or "", CounterUnit.UNSPECIFIED)


def meter_unit(args: list, position: int) -> MeterUnit:
    return _METER_UNITS.get(enum_member_name(args, position) or "", MeterUnit.UNSPECIFIED)


def int_arg(args: list, position: int, decl: ast.Node, what: str) -> int:
    value = args[position] if len(args) > position else None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExtractError(decl.loc, f"{what} argument must be a compile-time integer")
    return value
