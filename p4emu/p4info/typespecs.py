"""P4 types -> P4Info type specs and ``type_info`` entries (p4c's ``TypeSpecConverter``),
``@p4runtime_translation`` and control-plane widths (part of :mod:`p4emu.p4info.extract`).
"""

from __future__ import annotations

from collections.abc import Iterator

from p4emu.frontend import types as t
from p4emu.frontend.lexer import lex_text
from p4emu.p4info.annotations import body_tokens, listed_annotations, type_control_plane_name
from p4emu.p4info.exceptions import ExtractError
from p4emu.p4info.ids import control_plane_name
from p4emu.p4info.model import (
    BitstringSpec,
    BoolSpec,
    EnumDef,
    ErrorSpec,
    HeaderDef,
    HeaderStackSpec,
    HeaderUnionDef,
    NamedKind,
    NamedSpec,
    NewTypeDef,
    SerializableEnumDef,
    StructDef,
    Translation,
    TupleSpec,
    TypeInfo,
    TypeSpec,
    VarbitSpec,
)


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
            members = tuple((field_name(info), self.spec(info.type, loc)) for info in type_.fields)
            self.info.structs[name] = StructDef(members)
        return name

    def header(self, type_: t.HeaderType, loc: object) -> str:
        name = type_control_plane_name(type_.decl, type_.name)
        if name not in self.info.headers:
            members: list[tuple[str, BitstringSpec | VarbitSpec]] = []
            for path, info in flatten_fields(type_):
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
                members.append((field_name(info), self.header(info.type, loc)))
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


def field_name(info: t.FieldInfo) -> str:
    external = None
    for annotation in info.annotations:
        if annotation.name == "name":
            external = annotation.string_arg()
    return control_plane_name(external) if external else info.name


def flatten_fields(type_: t.StructLikeType, prefix: str = "") -> Iterator[tuple[str, t.FieldInfo]]:
    """``FlattenHeader``: nested struct fields of a header become ``outer.inner``."""
    for info in type_.fields:
        path = prefix + field_name(info)
        if isinstance(info.type, t.StructType):
            yield from flatten_fields(info.type, path + ".")
        else:
            yield path, info


def p4runtime_translation(type_: t.Type) -> Translation | None:
    """The ``@p4runtime_translation(uri, bit<W> | W | string)`` of a new type, if any."""
    if not isinstance(type_, t.NewType) or type_.decl is None:
        return None
    annotation = type_.decl.annotation("p4runtime_translation")
    if annotation is None:
        return None
    tokens = body_tokens(annotation)
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
