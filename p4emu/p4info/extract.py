"""Checked v1model program -> :class:`ControlPlaneModel`, reproducing what p4c's front end
hands to its P4Info serializer.

p4c generates P4Info from the program *after* its front end (backends/bmv2/simple_switch
main.cpp calls ``serializeP4RuntimeIfRequired`` right after ``FrontEnd``). This module
recomputes the effects of the front-end passes that matter for P4Info instead of rewriting
the AST:

* ``CreateBuiltins``: a table without ``default_action`` gets ``default_action = NoAction()``
  (not const) and, unless ``NoAction`` is already listed, ``@defaultonly NoAction`` appended
  to its actions.
* ``RemoveAllUnusedDeclarations``: tables never applied, actions no live table or apply
  body refers to, value sets no ``select`` uses, and sub-controls never applied disappear;
  extern instances and type declarations always stay.
* ``InstantiateDirectCalls`` + ``Inline``: sub-parsers/controls are flattened into their
  caller, their locals placed right after the instance declaration (instances created for
  ``Type.apply()`` calls are appended after the caller's locals).
* ``LocalizeAllActions``: top-level actions used by a control are copied to the *front* of
  its locals, in first-use order (tables' action lists, default actions and entries in
  property order, then the apply body).
* ``TableKeyNames``: key fields without ``@name`` are named from the key expression.

It then walks the program the way ``P4RuntimeSerializer`` walks p4c's evaluated block tree:
top-level extern instances, then the six V1Switch blocks in parameter order (parser,
verify checksum, ingress, egress, compute checksum, deparser), each block's flattened
locals in order. Sources: p4lang/p4c ``control-plane/p4RuntimeSerializer.cpp``,
``p4RuntimeArchStandard.{h,cpp}``, ``typeSpecConverter.cpp``, ``frontends/p4/
{createBuiltins,unusedDeclarations,directCalls,inlining,localizeActions,tableKeyNames,
hierarchicalNames}.cpp``. See docs/p4info.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from finsy.proto import p4i

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.lexer import EOF, STRING, LexError, lex_text
from p4emu.p4info.builder import build_p4info
from p4emu.p4info.exceptions import P4InfoError
from p4emu.p4info.ids import control_plane_name
from p4emu.p4info.model import (
    Action,
    ActionParam,
    ActionProfile,
    ActionRef,
    ActionScope,
    BitstringSpec,
    BoolSpec,
    ControllerHeader,
    ControllerMetadata,
    ControlPlaneModel,
    Counter,
    CounterUnit,
    DefaultAction,
    Digest,
    DirectCounter,
    DirectMeter,
    Documentation,
    EnumDef,
    ErrorSpec,
    HeaderDef,
    HeaderStackSpec,
    HeaderUnionDef,
    MatchField,
    MatchType,
    Meter,
    MeterUnit,
    NamedKind,
    NamedSpec,
    NewTypeDef,
    PkgInfo,
    Preamble,
    Register,
    SerializableEnumDef,
    StructDef,
    Table,
    Translation,
    TupleSpec,
    TypeInfo,
    TypeSpec,
    ValueSet,
    ValueSetMatch,
    VarbitSpec,
)

DEFAULT_TABLE_SIZE = 1024  # p4c: P4V1::V1Model tableAttributes.defaultTableSize
NO_ACTION = "NoAction"

# Annotations P4Info never lists as strings: represented elsewhere (p4RuntimeArchHandler.h).
_NOT_LISTED = frozenset({"name", "id", "brief", "description"})
# Annotations p4c parses into expressions; ToP4 prints their arguments joined by ", ".
# Every other annotation body is printed token by token, separated by single spaces.
_PARSED = frozenset(
    {
        "name", "deprecated", "noWarn", "length", "pkginfo", "controller_header", "id",
        "brief", "description", "max_group_size", "p4runtime_translation", "match",
        "priority", "tableonly", "defaultonly", "hidden", "atomic", "optional",
    }
)  # fmt: skip

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


class ExtractError(P4InfoError):
    """The program uses something P4Runtime cannot describe (p4c rejects it too)."""

    def __init__(self, loc: object, message: str) -> None:
        self.loc = loc
        super().__init__(f"{loc}: error: {message}" if loc is not None else message)


def extract_model(program: ast.CheckedProgram) -> ControlPlaneModel:
    """The control-plane model p4c would serialize for ``program``."""
    return _Extractor(program).run()


def p4info_for_program(program: ast.CheckedProgram) -> p4i.P4Info:
    """The P4Info p4c generates for ``program`` (``extract_model`` + ``build_p4info``)."""
    return build_p4info(extract_model(program))


# --------------------------------------------------------------------------- annotations


def serialize_annotation(annotation: ast.Annotation) -> str:
    """An annotation as p4c prints it into P4Info (``ToP4`` of the annotation)."""
    if annotation.kv is not None:
        pairs = ", ".join(
            f"{key}={ast.expr_to_source(value)}" for key, value in annotation.kv.items()
        )
        return f"@{annotation.name}({pairs})"
    if not annotation.body or not annotation.body.strip():
        return f"@{annotation.name}"
    tokens = _body_tokens(annotation)
    if annotation.name in _PARSED:
        groups: list[list[str]] = [[]]
        depth = 0
        for token in tokens:
            if token in ("(", "[", "{", "<"):
                depth += 1
            elif token in (")", "]", "}", ">"):
                depth -= 1
            if token == "," and depth == 0:
                groups.append([])
            else:
                groups[-1].append(token)
        return f"@{annotation.name}(" + ", ".join(" ".join(g) for g in groups) + ")"
    return f"@{annotation.name}(" + " ".join(tokens) + ")"


def _body_tokens(annotation: ast.Annotation) -> list[str]:
    try:
        return [tok.text for tok in lex_text(annotation.body or "") if tok.kind != EOF]
    except LexError:
        return [annotation.body or ""]


def listed_annotations(
    annotations: list[ast.Annotation], *, skip: frozenset[str] = frozenset()
) -> tuple[str, ...]:
    """The ``annotations`` strings of a P4Info message (structured ``@x[...]`` ones are not
    represented)."""
    return tuple(
        serialize_annotation(annotation)
        for annotation in annotations
        if annotation.name not in _NOT_LISTED
        and annotation.name not in skip
        and annotation.kv is None
    )


def documentation(annotations: list[ast.Annotation]) -> Documentation | None:
    brief = ast.find_annotation(annotations, "brief")
    description = ast.find_annotation(annotations, "description")
    if brief is None and description is None:
        return None
    return Documentation(
        brief=(brief.string_arg() or "") if brief else "",
        description=(description.string_arg() or "") if description else "",
    )


def explicit_id(annotations: list[ast.Annotation]) -> int | None:
    annotation = ast.find_annotation(annotations, "id")
    if annotation is None:
        return None
    value = annotation.int_arg()
    if value is None or value < 0:
        raise ExtractError(annotation.loc, "@id should be an unsigned integer")
    return value


def preamble(name: str, decl: ast.Declaration | ast.Instantiation) -> Preamble:
    return Preamble(
        name=name,
        explicit_id=explicit_id(decl.annotations),
        annotations=listed_annotations(decl.annotations),
        doc=documentation(decl.annotations),
    )


def type_control_plane_name(decl: ast.Declaration | None, fallback: str) -> str:
    """``controlPlaneName()`` of a top-level type declaration."""
    if decl is None:
        return fallback
    return control_plane_name(decl.name_annotation or decl.name)


# --------------------------------------------------------------------------- types


class TypeCollector:
    """``TypeSpecConverter``: frontend types -> P4Info type specs plus ``type_info`` entries."""

    def __init__(self) -> None:
        self.info = TypeInfo()

    def spec(self, type_: t.Type, loc: object = None) -> TypeSpec:
        if isinstance(type_, t.BitsType):
            return BitstringSpec(type_.width, type_.signed)
        if isinstance(type_, t.VarbitType):
            return VarbitSpec(type_.max_width)
        if isinstance(type_, t.BoolType):
            return BoolSpec()
        if isinstance(type_, t.ErrorType):
            if self.info.error_members is None:
                self.info.error_members = tuple(type_.members)
            return ErrorSpec()
        if isinstance(type_, t.HeaderType):
            return NamedSpec(NamedKind.HEADER, self.header(type_, loc))
        if isinstance(type_, t.HeaderUnionType):
            return NamedSpec(NamedKind.HEADER_UNION, self.header_union(type_, loc))
        if isinstance(type_, t.StructType):
            return NamedSpec(NamedKind.STRUCT, self.struct(type_, loc))
        if isinstance(type_, t.HeaderStackType):
            element = type_.element
            if isinstance(element, t.HeaderUnionType):
                return HeaderStackSpec(self.header_union(element, loc), type_.size, union=True)
            return HeaderStackSpec(self.header(element, loc), type_.size)
        if isinstance(type_, t.TupleType):
            return TupleSpec(tuple(self.spec(element, loc) for element in type_.elements))
        if isinstance(type_, t.EnumType):
            name = self.enum(type_)
            kind = NamedKind.ENUM if type_.underlying is None else NamedKind.SERIALIZABLE_ENUM
            return NamedSpec(kind, name)
        if isinstance(type_, t.NewType):
            return NamedSpec(NamedKind.NEW_TYPE, self.new_type(type_, loc))
        raise ExtractError(loc, f"type {type_.describe()} cannot be described in P4Info")

    def struct(self, type_: t.StructType, loc: object) -> str:
        name = type_control_plane_name(type_.decl, type_.name)
        if name not in self.info.structs:
            self.info.structs[name] = StructDef(())  # reserve: recursion-safe ordering
            members = tuple((_field_name(info), self.spec(info.type, loc)) for info in type_.fields)
            self.info.structs[name] = StructDef(members)
        return name

    def header(self, type_: t.HeaderType, loc: object) -> str:
        name = type_control_plane_name(type_.decl, type_.name)
        if name not in self.info.headers:
            members: list[tuple[str, BitstringSpec | VarbitSpec]] = []
            for path, info in _flatten_fields(type_):
                if isinstance(info.type, t.BitsType):
                    members.append((path, BitstringSpec(info.type.width, info.type.signed)))
                elif isinstance(info.type, t.VarbitType):
                    members.append((path, VarbitSpec(info.type.max_width)))
                else:
                    raise ExtractError(
                        loc,
                        f"header {name}: field '{path}' of type {info.type.describe()} "
                        "cannot be described in P4Info (only bit<W>, int<W>, varbit<W>)",
                    )
            self.info.headers[name] = HeaderDef(tuple(members))
        return name

    def header_union(self, type_: t.HeaderUnionType, loc: object) -> str:
        name = type_control_plane_name(type_.decl, type_.name)
        if name not in self.info.header_unions:
            members = []
            for info in type_.fields:
                if not isinstance(info.type, t.HeaderType):
                    raise ExtractError(loc, f"header_union {name}: '{info.name}' is no header")
                members.append((_field_name(info), self.header(info.type, loc)))
            self.info.header_unions[name] = HeaderUnionDef(tuple(members))
        return name

    def enum(self, type_: t.EnumType) -> str:
        name = type_control_plane_name(type_.decl, type_.name)
        if type_.underlying is None:
            self.info.enums.setdefault(name, EnumDef(tuple(type_.members)))
        elif name not in self.info.serializable_enums:
            self.info.serializable_enums[name] = SerializableEnumDef(
                type_.underlying.width,
                tuple((member.name, member.value or 0) for member in type_.members.values()),
            )
        return name

    def new_type(self, type_: t.NewType, loc: object) -> str:
        name = type_control_plane_name(type_.decl, type_.name)
        if name in self.info.new_types:
            return name
        underlying = type_.underlying
        while isinstance(underlying, t.NewType):
            underlying = underlying.underlying
        annotations = type_.decl.annotations if type_.decl is not None else []
        translation = p4runtime_translation(type_)
        if translation is not None and not isinstance(underlying, t.BitsType):
            raise ExtractError(
                loc,
                f"{name}: P4Runtime requires the underlying type of a type with "
                f"@p4runtime_translation to be bit<W>, not {underlying.describe()}",
            )
        original = None if translation is not None else self.spec(underlying, loc)
        self.info.new_types[name] = NewTypeDef(
            original=original,
            translation=translation,
            annotations=listed_annotations(annotations, skip=frozenset({"p4runtime_translation"})),
        )
        return name


def _field_name(info: t.FieldInfo) -> str:
    external = None
    for annotation in info.annotations:
        if annotation.name == "name":
            external = annotation.string_arg()
    return control_plane_name(external) if external else info.name


def _flatten_fields(type_: t.StructLikeType, prefix: str = "") -> Iterator[tuple[str, t.FieldInfo]]:
    """``FlattenHeader``: nested struct fields of a header become ``outer.inner``."""
    for info in type_.fields:
        path = prefix + _field_name(info)
        if isinstance(info.type, t.StructType):
            yield from _flatten_fields(info.type, path + ".")
        else:
            yield path, info


def p4runtime_translation(type_: t.Type) -> Translation | None:
    """The ``@p4runtime_translation(uri, bit<W> | W | string)`` of a new type, if any."""
    if not isinstance(type_, t.NewType) or type_.decl is None:
        return None
    annotation = type_.decl.annotation("p4runtime_translation")
    if annotation is None:
        return None
    tokens = _body_tokens(annotation)
    try:
        comma = tokens.index(",")
    except ValueError:
        comma = -1
    uri_tokens, controller = tokens[:comma], tokens[comma + 1 :]
    if comma < 0 or len(uri_tokens) != 1 or not uri_tokens[0].startswith('"'):
        raise ExtractError(
            annotation.loc, '@p4runtime_translation expects ("uri", bit<W> or string)'
        )
    uri = lex_text(uri_tokens[0])[0].value
    if controller == ["string"]:
        return Translation(str(uri), None)
    digits = [tok for tok in controller if tok not in ("bit", "<", ">")]
    if len(digits) == 1 and digits[0].isdigit():
        return Translation(str(uri), int(digits[0]))
    raise ExtractError(annotation.loc, '@p4runtime_translation expects ("uri", bit<W> or string)')


def control_plane_width(type_: t.Type | None, loc: object, what: str) -> tuple[int, str | None]:
    """p4c's ``getTypeWidth`` and ``getTypeName``: (bitwidth, new type name or None)."""
    if isinstance(type_, t.NewType):
        translation = p4runtime_translation(type_)
        name = type_control_plane_name(type_.decl, type_.name)
        if translation is not None:
            return translation.sdn_bitwidth or 0, name
        width = type_.width_bits
        if width is None:
            raise ExtractError(loc, f"{what} of type {type_.describe()} has no fixed width")
        return width, name
    if isinstance(type_, t.ErrorType):
        return 0, None  # p4c treats error like a string
    width = type_.width_bits if type_ is not None else None
    if width is None:
        described = type_.describe() if type_ is not None else "unknown type"
        raise ExtractError(loc, f"{what} of type {described} has no fixed bit width")
    return width, None


# --------------------------------------------------------------------------- key names


def key_name(element: ast.KeyElement) -> str:
    """The match field name: ``@name`` of the key element, or p4c's ``TableKeyNames``."""
    annotation = ast.find_annotation(element.annotations, "name")
    if annotation is not None and annotation.string_arg() is not None:
        return annotation.string_arg() or ""
    name = _key_expr_name(element.expr)
    if name is None:
        raise ExtractError(
            element.expr.loc,
            f"{ast.expr_to_source(element.expr)}: complex key expression requires a @name "
            "annotation",
        )
    return name


def _key_expr_name(expr: ast.Expr) -> str | None:
    if isinstance(expr, ast.PathExpr):
        return ("." if expr.absolute else "") + expr.name
    if isinstance(expr, ast.Member):
        member = expr.member
        if isinstance(expr.resolved, t.FieldInfo):
            member = _field_name_external(expr.resolved) or member
        if member.startswith("."):
            return member[1:]
        left = _key_expr_name(expr.expr)
        return None if left is None else f"{left}.{member}"
    if isinstance(expr, ast.Call):
        callee = expr.callee
        if (
            isinstance(callee, ast.Member)
            and callee.member == "isValid"
            and not expr.args
            and isinstance(callee.expr.type, (t.HeaderType, t.HeaderUnionType))
        ):
            left = _key_expr_name(callee.expr)
            return None if left is None else f"{left}.$valid$"
        return None
    if isinstance(expr, ast.Index):
        left, right = _key_expr_name(expr.expr), _key_expr_name(expr.index)
        return None if left is None or right is None else f"{left}[{right}]"
    if isinstance(expr, ast.IntLiteral):
        return _constant_text(expr)
    if isinstance(expr, ast.Slice):
        parts = [_key_expr_name(expr.expr), _key_expr_name(expr.hi), _key_expr_name(expr.lo)]
        if any(part is None for part in parts):
            return None
        return f"{parts[0]}[{parts[1]}:{parts[2]}]"
    if isinstance(expr, ast.Binary) and expr.op == "&":
        left, right = _key_expr_name(expr.left), _key_expr_name(expr.right)
        return None if left is None or right is None else f"{left} & {right}"
    return None


def _field_name_external(info: t.FieldInfo) -> str | None:
    for annotation in info.annotations:
        if annotation.name == "name" and annotation.string_arg():
            return annotation.string_arg()
    return None


def _constant_text(literal: ast.IntLiteral) -> str:
    """p4c's ``Util::toString(value, 0, false, base)``: the literal's base, no width."""
    match = re.match(r"^(?:\d+[ws])?(0[xbod])?", literal.text.lower().replace("_", ""))
    prefix = match.group(1) if match else None
    value = literal.value
    sign, value = ("-", -value) if value < 0 else ("", value)
    if prefix == "0x":
        return f"{sign}0x{value:x}"
    if prefix == "0b":
        return f"{sign}0b{value:b}"
    if prefix == "0o":
        return f"{sign}0o{value:o}"
    return f"{sign}{value}"


# --------------------------------------------------------------------------- traversal


@dataclass
class _Visit:
    """A node of an apply body / parser state, with the block instance it belongs to."""

    block: ast.BlockInstance
    node: ast.Node


@dataclass
class _Local:
    """One declaration of a flattened (inlined) block, with the instance that owns it."""

    block: ast.BlockInstance
    decl: ast.Declaration


class _Extractor:
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

    # ------------------------------------------------------------------ entry point

    def run(self) -> ControlPlaneModel:
        self._global_externs()
        for slot in ast.V1SWITCH_SLOTS:
            block = self.program.blocks.get(slot)
            if block is None:
                continue
            if isinstance(block.decl, ast.ControlDecl):
                self._control(block)
            else:
                self._parser(block)
        self._controller_headers()
        self.model.pkg_info = self._pkg_info()
        self.model.type_info = self.types.info if self._type_info_present() else None
        return self.model

    def _type_info_present(self) -> bool:
        info = self.types.info
        return self.touched_type_info or any(
            (info.structs, info.headers, info.header_unions, info.enums,
             info.serializable_enums, info.new_types, info.error_members is not None)
        )  # fmt: skip

    # ------------------------------------------------------------------ lookups

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

    # ------------------------------------------------------------------ flattening

    def _flatten(self, block: ast.BlockInstance, live: set[int]) -> list[_Local]:
        """The block's locals after inlining its *applied* sub-blocks (``live`` holds them)."""
        result: list[_Local] = []
        own = block.decl.locals
        used_children: set[int] = set()
        for decl in own:
            result.append(_Local(block, decl))
            if isinstance(decl, ast.Instantiation):
                child = block.children.get(decl.name)
                if child is not None and child.instantiation is decl:
                    used_children.add(id(child))
                    if id(child) in live:
                        result.extend(self._flatten(child, live))
        # Instances created for ``Type.apply()`` calls come after the caller's locals.
        for child in block.children.values():
            if id(child) not in used_children and id(child) in live:
                result.extend(self._flatten(child, live))
        return result

    def _live_blocks(self, block: ast.BlockInstance) -> tuple[set[int], list[_Visit]]:
        """Sub-blocks reachable through ``apply`` calls, and every node of the apply body
        (control) or states (parser) as p4c sees it after inlining: a sub-block's body
        right at the statement that applies it."""
        live = {id(block)}
        visits: list[_Visit] = []
        self._visit_block(block, live, visits)
        return live, visits

    def _visit_block(self, block: ast.BlockInstance, live: set[int], visits: list[_Visit]) -> None:
        decl = block.decl
        roots: list[ast.Node] = [decl.body] if isinstance(decl, ast.ControlDecl) else decl.states
        for root in roots:
            for node in ast.walk(root):
                visits.append(_Visit(block, node))
                if not (isinstance(node, ast.Call) and isinstance(node.target, ast.BlockApply)):
                    continue
                child = self._child_for(block, node.target)
                if child is None:
                    kind = "control" if isinstance(node.target.block, ast.ControlDecl) else "parser"
                    raise ExtractError(
                        node.loc,
                        f"direct invocation {node.target.block.name}.apply() has no block "
                        f"instance in the checked program; instantiate the {kind} explicitly",
                    )
                if id(child) not in live:
                    live.add(id(child))
                    self._visit_block(child, live, visits)

    def _child_for(
        self, block: ast.BlockInstance, target: ast.BlockApply
    ) -> ast.BlockInstance | None:
        if target.ctor_param is not None:  # the instance passed as a constructor argument
            return block.children.get(target.ctor_param.name)
        if target.instance is not None:
            child = block.children.get(target.instance.name)
            if child is not None:
                return child
        for child in block.children.values():
            if child.decl is target.block and (
                target.instance is None or child.instantiation is target.instance
            ):
                return child
        return None

    # ------------------------------------------------------------------ externs

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
            size = _int_arg(args, 0, decl, "size")
            index_type = self._index_type_name(instance, 0)
            self.model.counters.append(Counter(pre, _counter_unit(args, 1), size, index_type))
        elif kind == "direct_counter":
            self.model.direct_counters.append(DirectCounter(pre, _counter_unit(args, 0)))
        elif kind == "meter":
            size = _int_arg(args, 0, decl, "size")
            index_type = self._index_type_name(instance, 0)
            self.model.meters.append(Meter(pre, _meter_unit(args, 1), size, index_type))
        elif kind == "direct_meter":
            self.model.direct_meters.append(DirectMeter(pre, _meter_unit(args, 0)))
        elif kind == "register":
            if not instance.type_args:
                raise ExtractError(decl.loc, f"register {instance.name} has no element type")
            size = _int_arg(args, 0, decl, "size")
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
        size = _int_arg(instance.constructor_args, position, decl, "size")
        max_group = 0
        annotations = decl.annotations if isinstance(decl, ast.Instantiation) else []
        max_annotation = ast.find_annotation(annotations, "max_group_size")
        if max_annotation is not None and with_selector:
            max_group = max_annotation.int_arg() or 0
        pre.annotations = tuple(a for a in pre.annotations if not a.startswith("@max_group_size"))
        return ActionProfile(pre, with_selector, size, max_group)

    # ------------------------------------------------------------------ parsers

    def _parser(self, block: ast.BlockInstance) -> None:
        live, visits = self._live_blocks(block)
        used_sets = {
            id(visit.node.decl)
            for visit in visits
            if isinstance(visit.node, ast.PathExpr)
            and isinstance(visit.node.decl, ast.ValueSetDecl)
        }
        for local in self._flatten(block, live):
            decl = local.decl
            if isinstance(decl, ast.ValueSetDecl) and id(decl) in used_sets:
                self._value_set(local.block, decl)
            elif isinstance(decl, ast.Instantiation):
                instance = self._extern_for(decl, local.block)
                if instance is not None:
                    self._extern(instance)

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
                    match_type, other = _match_type(kind)
                    if match_type is MatchType.SELECTOR:
                        raise ExtractError(decl.loc, f"unsupported match type {kind} in @match")
                matches.append(
                    ValueSetMatch(
                        _field_name(info),
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

    # ------------------------------------------------------------------ controls

    def _control(self, block: ast.BlockInstance) -> None:
        live, visits = self._live_blocks(block)
        flat = self._flatten(block, live)
        applied = {
            (id(visit.block), id(visit.node.target.table))
            for visit in visits
            if isinstance(visit.node, ast.Call) and isinstance(visit.node.target, ast.TableApply)
        }
        tables = [
            (local.block, local.decl)
            for local in flat
            if isinstance(local.decl, ast.TableDecl)
            and (id(local.block), id(local.decl)) in applied
        ]
        actions = self._control_actions(flat, tables, visits)
        self._emit_actions(actions)
        self._digests(actions, visits)
        for local in flat:
            decl = local.decl
            if isinstance(decl, ast.TableDecl) and (local.block, decl) in tables:
                self._table(local.block, decl)
            elif isinstance(decl, ast.Instantiation):
                instance = self._extern_for(decl, local.block)
                if instance is not None:
                    self._extern(instance)

    def _control_actions(
        self,
        flat: list[_Local],
        tables: list[tuple[ast.BlockInstance, ast.TableDecl]],
        visits: list[_Visit],
    ) -> list[tuple[ast.ActionDecl, ast.BlockInstance | None]]:
        """Actions left in the control after the front end, in controlLocals order:
        localized top-level actions first (first-use order), then the used local ones."""
        used: set[int] = set()
        global_order: list[ast.ActionDecl] = []

        def use(action: ast.ActionDecl | None, by_table: bool = True) -> None:
            if action is None:
                return
            used.add(id(action))
            if by_table:
                self.table_actions.add(id(action))
            if self._is_global(action) and all(a is not action for a in global_order):
                global_order.append(action)

        for _, decl in tables:
            for prop in decl.properties:
                if prop.name == "actions":
                    for ref in decl.actions:
                        use(ref.action)
                    if decl.default_action is None:
                        use(self.no_action)  # CreateBuiltins appends @defaultonly NoAction
                elif prop.name == "default_action" and decl.default_action is not None:
                    use(decl.default_action.action)
                elif prop.name == "entries" and decl.entries:
                    for entry in decl.entries:
                        use(entry.action.action)
            if decl.default_action is None:
                use(self.no_action)
        for visit in visits:
            node = visit.node
            if isinstance(node, ast.Call) and isinstance(node.target, ast.ActionCall):
                use(node.target.action, by_table=False)
        result: list[tuple[ast.ActionDecl, ast.BlockInstance | None]] = [
            (action, None) for action in global_order
        ]
        for local in flat:
            if isinstance(local.decl, ast.ActionDecl) and id(local.decl) in used:
                result.append((local.decl, local.block))
        return result

    def _emit_actions(self, actions: list[tuple[ast.ActionDecl, ast.BlockInstance | None]]) -> None:
        for decl, block in actions:
            name = self._action_name(decl, block)
            params: list[ActionParam] = []
            # An action only called directly has every argument bound at its call sites:
            # p4c lists it without parameters (the control plane never supplies them).
            if id(decl) in self.table_actions:
                for param in decl.control_plane_params:
                    params.append(self._action_param(name, param))
            if params:
                self.touched_type_info = True
            self.model.actions.append(
                Action(preamble(name, decl), params, hidden=decl.has_annotation("hidden"))
            )

    def _action_param(self, action: str, param: ast.Parameter) -> ActionParam:
        type_ = param.type
        what = f"parameter '{param.name}' of action {action}"
        bitwidth: int | None
        type_name: str | None = None
        if isinstance(type_, t.EnumType) and type_.underlying is None:
            bitwidth, type_name = None, self.types.enum(type_)
        elif isinstance(type_, (t.BitsType, t.BoolType, t.NewType, t.EnumType)):
            bitwidth, type_name = control_plane_width(type_, param.loc, what)
            self._register_scalar_type(type_, param.loc)
        else:
            described = type_.describe() if type_ is not None else "?"
            raise ExtractError(
                param.loc,
                f"{what} has type {described}; P4Runtime needs bit<>, int<>, bool, a new type "
                "or an enum",
            )
        name = control_plane_name(param.name_annotation or param.name)
        return ActionParam(
            name,
            bitwidth,
            explicit_id(param.annotations),
            listed_annotations(param.annotations),
            documentation(param.annotations),
            type_name,
        )

    def _register_scalar_type(self, type_: t.Type | None, loc: object) -> None:
        """``TypeSpecConverter::convert`` side effect for match fields / params / metadata."""
        if isinstance(type_, (t.NewType, t.EnumType, t.ErrorType)):
            self.types.spec(type_, loc)

    # ------------------------------------------------------------------ tables

    def _table(self, block: ast.BlockInstance, decl: ast.TableDecl) -> None:
        instance = self._table_instance(block, decl)
        name = instance.name
        self.touched_type_info = True  # p4c: getMatchFields(..., mutable_type_info())
        fields = [self._match_field(name, element) for element in decl.key]
        refs = [self._action_ref(name, block, ref) for ref in decl.actions]
        default = decl.default_action
        if default is None:
            if self.no_action is None:
                raise ExtractError(decl.loc, f"table {name} needs NoAction (include core.p4)")
            no_action = self._action_name(self.no_action, None)
            if all(ref.action is not self.no_action for ref in decl.actions):
                refs.append(ActionRef(no_action, ActionScope.DEFAULT_ONLY, ("@defaultonly",)))
            default_action = DefaultAction(no_action)
        else:
            default_action = self._default_action(name, block, default, decl.default_action_const)
        size = decl.size if decl.size else DEFAULT_TABLE_SIZE
        table = Table(
            preamble(name, decl),
            fields,
            refs,
            default_action,
            size=size,
            is_const_table=decl.entries is not None and decl.entries_const,
            has_initial_entries=decl.entries is not None,
            supports_timeout=decl.support_timeout,
            hidden=decl.has_annotation("hidden"),
        )
        if not table.hidden:  # p4c adds table properties only for tables it emits
            table.implementation = self._table_implementation(instance, decl)
        table.direct_counter = self._direct_resource(instance, decl, "counters")
        table.direct_meter = self._direct_resource(instance, decl, "meters")
        self.model.tables.append(table)

    def _match_field(self, table: str, element: ast.KeyElement) -> MatchField:
        match_type, other = _match_type(element.match_kind)
        name = key_name(element)
        annotations = listed_annotations(element.annotations)
        doc = documentation(element.annotations)
        field_id = explicit_id(element.annotations)
        if match_type is MatchType.SELECTOR:
            return MatchField(name, 0, match_type, explicit_id=field_id)
        type_ = element.expr.type
        width, type_name = control_plane_width(type_, element.loc, f"key {name} of table {table}")
        self._register_scalar_type(type_, element.loc)
        return MatchField(name, width, match_type, other, field_id, annotations, doc, type_name)

    def _action_ref(self, table: str, block: ast.BlockInstance, ref: ast.ActionRef) -> ActionRef:
        if ref.action is None:
            raise ExtractError(ref.loc, f"table {table}: unresolved action {ref.name}")
        if ref.table_only and ref.default_only:
            raise ExtractError(
                ref.loc,
                f"table '{table}' has an action reference ('{ref.name}') which is annotated "
                "with both '@tableonly' and '@defaultonly'",
            )
        scope = ActionScope.TABLE_AND_DEFAULT
        if ref.table_only:
            scope = ActionScope.TABLE_ONLY
        elif ref.default_only:
            scope = ActionScope.DEFAULT_ONLY
        owner = None if self._is_global(ref.action) else block
        return ActionRef(
            self._action_name(ref.action, owner), scope, listed_annotations(ref.annotations)
        )

    def _default_action(
        self, table: str, block: ast.BlockInstance, ref: ast.ActionRef, is_const: bool
    ) -> DefaultAction:
        action = ref.action
        if action is None:
            raise ExtractError(ref.loc, f"table {table}: unresolved default action {ref.name}")
        owner = None if self._is_global(action) else block
        arguments: list[int | bool] = []
        for bound in ref.bound_args:
            if not bound.param.is_directionless:
                continue
            value = bound.expr.const_value if bound.expr is not None else None
            if isinstance(value, t.EnumMemberInfo) and value.value is not None:
                value = value.value
            if isinstance(value, (bool, int)):
                arguments.append(value)
                continue
            shown = ast.expr_to_source(bound.expr) if bound.expr is not None else "(missing)"
            raise ExtractError(
                ref.loc,
                f"table {table}: default action argument {shown} is not a compile-time "
                "integer, boolean or serializable enum value",
            )
        return DefaultAction(self._action_name(action, owner), tuple(arguments), is_const)

    def _table_implementation(self, instance: ast.TableInstance, decl: ast.TableDecl) -> str | None:
        target = decl.implementation
        if target is None:
            return None
        extern = instance.implementation
        if isinstance(target, ast.ConstructorCall):
            name = self._in_place_name(instance.name, decl, "implementation")
            if extern is None or extern.extern_name not in ("action_profile", "action_selector"):
                raise ExtractError(
                    target.loc, f"table {instance.name}: expected an action profile or selector"
                )
            # p4c emits a profile built inside the table right after the table is added.
            profile = self._action_profile(extern, target, Preamble(name))
            prop = decl.get_property("implementation")
            annotations = prop.annotations if prop is not None else []
            profile.preamble = Preamble(
                name,
                explicit_id(annotations),
                listed_annotations(annotations, skip=frozenset({"max_group_size"})),
                documentation(annotations),
            )
            max_annotation = ast.find_annotation(annotations, "max_group_size")
            if max_annotation is not None and profile.with_selector:
                profile.max_group_size = max_annotation.int_arg() or 0
            self.model.action_profiles.append(profile)
            return name
        if extern is None:
            raise ExtractError(target.loc, f"table {instance.name}: unknown implementation")
        return extern.name

    def _direct_resource(
        self, instance: ast.TableInstance, decl: ast.TableDecl, prop_name: str
    ) -> str | None:
        target = decl.counters if prop_name == "counters" else decl.meters
        if target is None:
            return None
        extern = instance.counters if prop_name == "counters" else instance.meters
        expected = "direct_counter" if prop_name == "counters" else "direct_meter"
        if extern is None or extern.extern_name != expected:
            raise ExtractError(target.loc, f"table {instance.name}: expected a {expected}")
        if isinstance(target, ast.ConstructorCall):
            name = self._in_place_name(instance.name, decl, prop_name)
            args = extern.constructor_args
            prop = decl.get_property(prop_name)
            annotations = prop.annotations if prop is not None else []
            pre = Preamble(
                name,
                explicit_id(annotations),
                listed_annotations(annotations),
                documentation(annotations),
            )
            if prop_name == "counters":
                self.model.direct_counters.append(DirectCounter(pre, _counter_unit(args, 0)))
            else:
                self.model.direct_meters.append(DirectMeter(pre, _meter_unit(args, 0)))
            return name
        return extern.name

    def _in_place_name(self, table: str, decl: ast.TableDecl, prop_name: str) -> str:
        prop = decl.get_property(prop_name)
        annotation = ast.find_annotation(prop.annotations, "name") if prop is not None else None
        external = annotation.string_arg() if annotation is not None else None
        if not external:
            raise ExtractError(
                decl.loc,
                f"table '{table}' has an anonymous table property '{prop_name}' with no name "
                "annotation, which is not supported by P4Runtime",
            )
        return control_plane_name(external)

    # ------------------------------------------------------------------ digests

    def _digests(
        self,
        actions: list[tuple[ast.ActionDecl, ast.BlockInstance | None]],
        visits: list[_Visit],
    ) -> None:
        # p4c scans every action of the control (with the actions they call already inlined
        # by InlineActions), then the apply body (functions inlined, action calls not).
        nodes: list[ast.Node] = []
        for decl, _ in actions:
            nodes.extend(self._walk_inlined(decl.body, into_actions=True))
        for visit in visits:
            nodes.append(visit.node)
            if isinstance(visit.node, ast.Call) and isinstance(visit.node.target, ast.FunctionCall):
                nodes.extend(self._walk_inlined(visit.node.target.function.body, False))
        for node in nodes:
            if self._note_extern_function(node):
                assert isinstance(node, ast.Call)
                target = node.target
                assert isinstance(target, ast.ExternFunctionCall)
                if target.function.name == "digest":
                    self._digest(node, target)

    def _walk_inlined(self, root: ast.Node, into_actions: bool) -> Iterator[ast.Node]:
        """Walk ``root`` and the bodies of the functions (and, with ``into_actions``, the
        actions) it calls: p4c's front end inlines those before generating P4Info."""
        stack: list[ast.Node] = [root]
        seen: set[int] = set()
        while stack:
            current = stack.pop()
            for node in ast.walk(current):
                yield node
                if isinstance(node, ast.Call):
                    callee = None
                    if isinstance(node.target, ast.ActionCall) and into_actions:
                        callee = node.target.action
                    elif isinstance(node.target, ast.FunctionCall):
                        callee = node.target.function
                    if callee is not None and id(callee) not in seen:
                        seen.add(id(callee))
                        stack.append(callee.body)

    def _note_extern_function(self, node: ast.Node) -> bool:
        if isinstance(node, ast.Call) and isinstance(node.target, ast.ExternFunctionCall):
            self.touched_type_info = True  # p4c: addExternFunction -> mutable_type_info()
            return True
        return False

    def _digest(self, call: ast.Call, target: ast.ExternFunctionCall) -> None:
        if not target.type_args:
            raise ExtractError(call.loc, "digest() without a data type")
        data_type = target.type_args[0]
        if isinstance(data_type, t.StructLikeType):
            name = type_control_plane_name(data_type.decl, data_type.name)
        else:
            # p4c auto-names digests of anonymous types (tuples) and warns.
            name = self.digest_auto_names.setdefault(
                id(call), f"digest_{len(self.digest_auto_names)}"
            )
        spec = self.types.spec(data_type, call.loc)
        self.model.digests.append(Digest(Preamble(name), spec))

    # ------------------------------------------------------------------ headers, package

    def _controller_headers(self) -> None:
        for decl in self.program.declarations(ast.HeaderDecl):
            assert isinstance(decl, ast.HeaderDecl)
            annotation = decl.annotation("controller_header")
            if annotation is None:
                continue
            controller_name = annotation.string_arg()
            if not controller_name:
                raise ExtractError(annotation.loc, "@controller_header needs a string argument")
            header = decl.type
            if not isinstance(header, t.HeaderType):
                raise ExtractError(decl.loc, f"header {decl.name} was not type checked")
            metadata: list[ControllerMetadata] = []
            hidden = decl.has_annotation("hidden")
            for path, info in _flatten_fields(header):
                what = f"field {path} of controller header {decl.name}"
                if not isinstance(info.type, (t.BitsType, t.NewType, t.EnumType)):
                    raise ExtractError(
                        decl.loc, f"{what} must be bit<>, int<>, a new type or a serializable enum"
                    )
                width, type_name = control_plane_width(info.type, decl.loc, what)
                field_hidden = any(a.name == "hidden" for a in info.annotations)
                if not hidden and not field_hidden:
                    self.touched_type_info = True
                    self._register_scalar_type(info.type, decl.loc)
                metadata.append(
                    ControllerMetadata(
                        path,
                        width,
                        explicit_id(info.annotations),
                        listed_annotations(info.annotations),
                        type_name,
                        field_hidden,
                    )
                )
            self.model.controller_headers.append(
                ControllerHeader(
                    preamble(controller_name, decl),
                    type_control_plane_name(decl, decl.name),
                    metadata,
                    hidden,
                )
            )

    def _pkg_info(self) -> PkgInfo:
        main = self.program.main
        pkg = PkgInfo(arch=self.program.architecture)
        pkginfo = main.annotation("pkginfo")
        if pkginfo is not None:
            for key, value in (pkginfo.kv or _kv_from_body(pkginfo)).items():
                if not isinstance(value, ast.StringLiteral):
                    raise ExtractError(
                        pkginfo.loc, f"value for '{key}' key in @pkginfo is not a string"
                    )
                if key in ("name", "version", "organization", "contact", "url", "arch"):
                    setattr(pkg, key, value.value)
        pkg.annotations = listed_annotations(main.annotations, skip=frozenset({"pkginfo"}))
        pkg.doc = documentation(main.annotations)
        return pkg


def _kv_from_body(annotation: ast.Annotation) -> dict[str, ast.Expr]:
    """The ``key = value`` pairs of ``@pkginfo(name="x", version="1")`` (the front end keeps
    the body as text because it is no expression list)."""
    tokens = [tok for tok in lex_text(annotation.body or "") if tok.kind != EOF]
    result: dict[str, ast.Expr] = {}
    for start in range(0, len(tokens), 4):  # key = value [,]
        group = tokens[start : start + 4]
        if len(group) < 3 or group[1].text != "=" or (len(group) == 4 and group[3].text != ","):
            raise ExtractError(annotation.loc, '@pkginfo expects key="value" pairs')
        key, value = group[0], group[2]
        if value.kind == STRING:
            result[key.text] = ast.StringLiteral(str(value.value), loc=annotation.loc)
        else:
            result[key.text] = ast.PathExpr(value.text, loc=annotation.loc)
    return result


def _match_type(kind: str) -> tuple[MatchType, str]:
    match_type = _MATCH_KINDS.get(kind)
    if match_type is None:
        return MatchType.OTHER, kind
    return match_type, ""


def _enum_member_name(args: list, position: int) -> str | None:
    value = args[position] if len(args) > position else None
    return value if isinstance(value, str) else getattr(value, "name", None)


def _counter_unit(args: list, position: int) -> CounterUnit:
    """``CounterType.packets`` etc.; anything else is UNSPECIFIED like p4c's mapUnitName."""
    return _COUNTER_UNITS.get(_enum_member_name(args, position) or "", CounterUnit.UNSPECIFIED)


def _meter_unit(args: list, position: int) -> MeterUnit:
    return _METER_UNITS.get(_enum_member_name(args, position) or "", MeterUnit.UNSPECIFIED)


def _int_arg(args: list, position: int, decl: ast.Node, what: str) -> int:
    value = args[position] if len(args) > position else None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExtractError(decl.loc, f"{what} argument must be a compile-time integer")
    return value
