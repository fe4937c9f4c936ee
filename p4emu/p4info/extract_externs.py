"""Extern instances, action profiles and value sets -> the model (part of
:mod:`p4emu.p4info.extract`).
"""

from __future__ import annotations

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.p4info.annotations import (
    documentation,
    explicit_id,
    listed_annotations,
    preamble,
)
from p4emu.p4info.exceptions import ExtractError
from p4emu.p4info.extract_base import (
    ExtractorBase,
    counter_unit,
    int_arg,
    match_type_of,
    meter_unit,
)
from p4emu.p4info.model import (
    ActionProfile,
    Counter,
    DirectCounter,
    DirectMeter,
    MatchType,
    Meter,
    Preamble,
    Register,
    ValueSet,
    ValueSetMatch,
)
from p4emu.p4info.typespecs import field_name


class ExternsExtractor(ExtractorBase):
    def _global_externs(self) -> None:
        for decl in self.program.declarations(ast.Instantiation):
            assert isinstance(decl, ast.Instantiation)
            if decl is self.program.main:
                continue
            instance = self._extern_for(decl, None)
            if instance is not None:
                self._extern(instance)

    def _extern(self, instance: ast.ExternInstance) -> None:
        """An extern instance declared as a named instance (an ``ExternBlock``)."""
        self.touched_type_info = True  # p4c: addExternInstance -> mutable_type_info()
        decl = instance.decl
        kind = instance.extern_name
        if not isinstance(decl, ast.Instantiation):
            return  # constructed inside a table: handled with its table
        pre = preamble(instance.name, decl)
        args = instance.constructor_args
        if kind == "counter":
            size = int_arg(args, 0, decl, "size")
            index_type = self._index_type_name(instance, 0)
            self.model.counters.append(Counter(pre, counter_unit(args, 1), size, index_type))
        elif kind == "direct_counter":
            self.model.direct_counters.append(DirectCounter(pre, counter_unit(args, 0)))
        elif kind == "meter":
            size = int_arg(args, 0, decl, "size")
            index_type = self._index_type_name(instance, 0)
            self.model.meters.append(Meter(pre, meter_unit(args, 1), size, index_type))
        elif kind == "direct_meter":
            self.model.direct_meters.append(DirectMeter(pre, meter_unit(args, 0)))
        elif kind == "register":
            if not instance.type_args:
                raise ExtractError(decl.loc, f"register {instance.name} has no element type")
            size = int_arg(args, 0, decl, "size")
            spec = self.types.spec(instance.type_args[0], decl.loc)
            index_type = self._index_type_name(instance, 1)
            self.model.registers.append(Register(pre, size, spec, index_type))
        elif kind in ("action_profile", "action_selector"):
            self.model.action_profiles.append(self._action_profile(instance, decl, pre))

    def _index_type_name(self, instance: ast.ExternInstance, position: int) -> str | None:
        """v1model >= 20200408 index type parameter: named in P4Info only if a new type."""
        if len(instance.type_args) <= position or len(instance.extern.type_params) <= position:
            return None
        index_type = instance.type_args[position]
        if isinstance(index_type, t.NewType):
            return self.types.new_type(index_type, instance.decl.loc)
        return None

    def _action_profile(
        self,
        instance: ast.ExternInstance,
        decl: ast.Instantiation | ast.ConstructorCall,
        pre: Preamble,
    ) -> ActionProfile:
        with_selector = instance.extern_name == "action_selector"
        position = 1 if with_selector else 0  # action_selector(algorithm, size, output_width)
        size = int_arg(instance.constructor_args, position, decl, "size")
        max_group = 0
        annotations = decl.annotations if isinstance(decl, ast.Instantiation) else []
        max_annotation = ast.find_annotation(annotations, "max_group_size")
        if max_annotation is not None and with_selector:
            max_group = max_annotation.int_arg() or 0
        pre.annotations = tuple(a for a in pre.annotations if not a.startswith("@max_group_size"))
        return ActionProfile(pre, with_selector, size, max_group)

    def _value_set(self, block: ast.BlockInstance, decl: ast.ValueSetDecl) -> None:
        instance = self.value_sets_by_key.get((id(block), id(decl)))
        name = instance.name if instance is not None else block.qualified_name(decl)
        element = decl.element_type.resolved
        matches: list[ValueSetMatch] = []
        sequential = False
        if isinstance(element, t.BitsType):
            matches.append(ValueSetMatch("", element.width))
        elif isinstance(element, t.StructType):
            for info in element.fields:
                if not isinstance(info.type, t.BitsType):
                    raise ExtractError(
                        decl.loc,
                        f"value set {name}: field '{info.name}' must be bit<W> for P4Runtime",
                    )
                annotations = info.annotations
                match_annotation = ast.find_annotation(annotations, "match")
                match_type, other = MatchType.EXACT, ""
                if match_annotation is not None:
                    kind = (match_annotation.body or "").strip()
                    match_type, other = match_type_of(kind)
                    if match_type is MatchType.SELECTOR:
                        raise ExtractError(decl.loc, f"unsupported match type {kind} in @match")
                matches.append(
                    ValueSetMatch(
                        field_name(info),
                        info.type.width,
                        match_type,
                        other,
                        explicit_id(annotations),
                        listed_annotations(annotations, skip=frozenset({"match"})),
                        documentation(annotations),
                    )
                )
        elif isinstance(element, t.EnumType) and element.underlying is not None:
            sequential = True
            for member in element.members.values():
                matches.append(ValueSetMatch(member.name, element.underlying.width))
        else:
            described = element.describe() if element is not None else "?"
            raise ExtractError(
                decl.loc,
                f"value set {name}: P4Runtime requires bit<W>, a struct of bit<W> fields or a "
                f"serializable enum as element type, not {described}",
            )
        self.model.value_sets.append(
            ValueSet(preamble(name, decl), decl.size_value, matches, sequential)
        )
