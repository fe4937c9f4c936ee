"""Resolved P4_16 types.

The type checker attaches one of these objects to every expression (``Expr.type``) and to
every syntactic type reference (``TypeRef.resolved``). Typedefs are erased: a value declared
with ``typedef bit<48> mac_t`` has type ``BitsType(48, False)``. ``type`` declarations
(new types) stay distinct as :class:`NewType`.

Scalar types (``BitsType``, ``BoolType``...) compare by value; named types (headers, structs,
enums, externs...) compare by identity, one object per declaration.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from p4emu.frontend.source import SourceLocation


class SyntaxNode(Protocol):
    """The AST node a resolved type points back to (a declaration, a struct field, an
    annotation): ``p4emu.frontend.ast`` sits above this module and fills these fields in,
    so they are typed by what every such node has, its name and its place in the source.
    The objects are the AST nodes themselves (``ast.TableDecl``, ``ast.Annotation``...)."""

    @property
    def name(self) -> str: ...

    @property
    def loc(self) -> SourceLocation: ...


class Type:
    """Base class of every resolved type."""

    @property
    def width_bits(self) -> int | None:
        """Serialized width in bits when fixed (bits, bool, headers, stacks...), else None."""
        return None

    def describe(self) -> str:
        """Human-readable spelling used in error messages."""
        return type(self).__name__

    def __str__(self) -> str:
        return self.describe()


# --------------------------------------------------------------------------- scalar types


@dataclass(frozen=True)
class BitsType(Type):
    """``bit<W>`` (signed=False) or ``int<W>`` (signed=True); W >= 1 (``bit<0>`` is allowed too)."""

    width: int
    signed: bool = False

    @property
    def width_bits(self) -> int:
        return self.width

    def describe(self) -> str:
        return f"{'int' if self.signed else 'bit'}<{self.width}>"

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    def wrap(self, value: int) -> int:
        """Reduce an arbitrary integer to this type's range (two's complement for int<W>)."""
        value &= self.mask
        if self.signed and self.width > 0 and value >> (self.width - 1):
            value -= 1 << self.width
        return value


@dataclass(frozen=True)
class InfIntType(Type):
    """The arbitrary-precision ``int`` type of untyped integer literals and ``int`` constants."""

    def describe(self) -> str:
        return "int"


@dataclass(frozen=True)
class BoolType(Type):
    """``bool`` (one bit wide where it is serialized)."""

    @property
    def width_bits(self) -> int:
        return 1

    def describe(self) -> str:
        return "bool"


@dataclass(frozen=True)
class StringType(Type):
    """``string`` (compile-time strings: ``log_msg`` formats)."""

    def describe(self) -> str:
        return "string"


@dataclass(frozen=True)
class VoidType(Type):
    """``void``: the return type of a function, method or action that returns nothing."""

    def describe(self) -> str:
        return "void"


@dataclass(frozen=True)
class DontCareType(Type):
    """Type of ``_`` used as a type argument or keyset element."""

    def describe(self) -> str:
        return "_"


@dataclass(frozen=True)
class VarbitType(Type):
    """``varbit<W>``: up to ``max_width`` bits, length known only at run time."""

    max_width: int

    def describe(self) -> str:
        return f"varbit<{self.max_width}>"


# --------------------------------------------------------------------------- error / match_kind


@dataclass(eq=False)
class ErrorMember:
    """One ``error`` constant. ``code`` follows BMv2: core.p4 errors 0..N in order, then user ones."""

    name: str
    code: int

    def __repr__(self) -> str:
        return f"error.{self.name}"


@dataclass(eq=False)
class ErrorType(Type):
    """The single program-wide ``error`` type; all ``error {...}`` declarations add members."""

    members: dict[str, ErrorMember] = field(default_factory=dict)

    def describe(self) -> str:
        return "error"


@dataclass(eq=False)
class MatchKindMember:
    """One ``match_kind`` constant (``exact``, ``lpm``, ``ternary``...)."""

    name: str

    def __repr__(self) -> str:
        return f"match_kind.{self.name}"


@dataclass(eq=False)
class MatchKindType(Type):
    """The single program-wide ``match_kind`` type."""

    members: dict[str, MatchKindMember] = field(default_factory=dict)

    def describe(self) -> str:
        return "match_kind"


# --------------------------------------------------------------------------- aggregate types


@dataclass(eq=False)
class FieldInfo:
    """A field of a header, header_union or struct.

    ``offset_bits`` is the bit offset from the start of a header (network order, first field
    at offset 0); None for struct / union fields and for header fields after a varbit.
    """

    name: str
    type: Type
    annotations: list[SyntaxNode] = field(default_factory=list)  # ast.Annotation
    offset_bits: int | None = None
    decl: SyntaxNode | None = None  # ast.StructField

    def __repr__(self) -> str:
        return f"FieldInfo({self.name}: {self.type})"


@dataclass(eq=False)
class StructLikeType(Type):
    """Common shape of headers, header unions and structs: an ordered list of fields."""

    name: str
    fields: list[FieldInfo] = field(default_factory=list)
    annotations: list[SyntaxNode] = field(default_factory=list)  # ast.Annotation
    decl: SyntaxNode | None = None  # ast.Declaration

    def field(self, name: str) -> FieldInfo | None:
        for info in self.fields:
            if info.name == name:
                return info
        return None

    def field_names(self) -> list[str]:
        return [info.name for info in self.fields]

    def describe(self) -> str:
        return self.name


@dataclass(eq=False)
class HeaderType(StructLikeType):
    """``header``: fixed fields (bit/int/bool/serializable enum/varbit) plus a validity bit.

    A struct-typed field ``s`` (of bit-strings) is flattened, as p4c does: ``fields`` holds
    its leaves as ``s.f`` (``s.t.g`` for nested structs) and ``groups`` maps ``s`` (and
    ``s.t``) to the struct type, so that ``hdr.h.s.f`` resolves to the leaf ``s.f``."""

    groups: dict[str, StructType] = field(default_factory=dict)

    @property
    def width_bits(self) -> int | None:
        """Total width when the header has no varbit field, else None."""
        if self.has_varbit:
            return None
        return sum(info.type.width_bits or 0 for info in self.fields)

    @property
    def min_width_bits(self) -> int:
        """Width with every varbit field empty (``minSizeInBits``)."""
        return sum(info.type.width_bits or 0 for info in self.fields)

    @property
    def has_varbit(self) -> bool:
        return any(isinstance(info.type, VarbitType) for info in self.fields)


@dataclass(eq=False)
class HeaderGroupType(Type):
    """The type of ``hdr.h.s`` where ``s`` is a struct-typed header field: only its fields
    can be used (``prefix`` is ``s``, or ``s.t`` for a nested struct)."""

    header: HeaderType
    prefix: str
    struct: StructType

    def describe(self) -> str:
        return self.struct.describe()


@dataclass(eq=False)
class HeaderUnionType(StructLikeType):
    """``header_union``: at most one member header valid at a time."""


@dataclass(eq=False)
class StructType(StructLikeType):
    """``struct``."""

    @property
    def width_bits(self) -> int | None:
        widths = [info.type.width_bits for info in self.fields]
        if any(width is None for width in widths):
            return None
        return sum(width for width in widths if width is not None)


@dataclass(eq=False)
class HeaderStackType(Type):
    """``H[N]``: a fixed-size stack of headers (or header unions)."""

    element: HeaderType | HeaderUnionType
    size: int

    def describe(self) -> str:
        return f"{self.element.describe()}[{self.size}]"

    @property
    def width_bits(self) -> int | None:
        width = self.element.width_bits
        return None if width is None else width * self.size


@dataclass(frozen=True)
class TupleType(Type):
    """``tuple<...>``; also the type of a list expression ``{a, b}`` without an expected type."""

    elements: tuple[Type, ...]

    def describe(self) -> str:
        return "tuple<" + ", ".join(element.describe() for element in self.elements) + ">"

    @property
    def width_bits(self) -> int | None:
        widths = [element.width_bits for element in self.elements]
        if any(width is None for width in widths):
            return None
        return sum(width for width in widths if width is not None)


# --------------------------------------------------------------------------- enums / new types


@dataclass(eq=False)
class EnumMemberInfo:
    """An enum member; ``value`` is its integer for serializable enums, else None."""

    name: str
    enum: EnumType
    value: int | None = None
    index: int = 0

    def __repr__(self) -> str:
        return f"{self.enum.name}.{self.name}"


@dataclass(eq=False)
class EnumType(Type):
    """``enum E {...}`` or serializable ``enum bit<W> E {...}`` (``underlying`` set)."""

    name: str
    members: dict[str, EnumMemberInfo] = field(default_factory=dict)
    underlying: BitsType | None = None
    decl: SyntaxNode | None = None  # ast.EnumDecl

    def describe(self) -> str:
        return self.name

    @property
    def width_bits(self) -> int | None:
        return None if self.underlying is None else self.underlying.width


@dataclass(eq=False)
class NewType(Type):
    """``type bit<32> T;``: a distinct type with the representation of ``underlying``."""

    name: str
    underlying: Type
    decl: SyntaxNode | None = None  # ast.NewTypeDecl

    def describe(self) -> str:
        return self.name

    @property
    def width_bits(self) -> int | None:
        return self.underlying.width_bits


# --------------------------------------------------------------------------- generics


@dataclass(eq=False)
class TypeVar(Type):
    """A type parameter (``T`` in ``extern register<T>``); one object per declaration site."""

    name: str

    def describe(self) -> str:
        return self.name


def substitute(type_: Type, bindings: dict[TypeVar, Type]) -> Type:
    """Replace type variables in ``type_`` by their bindings (unbound ones stay)."""
    if isinstance(type_, TypeVar):
        return bindings.get(type_, type_)
    if isinstance(type_, TupleType):
        return TupleType(tuple(substitute(element, bindings) for element in type_.elements))
    if isinstance(type_, SpecializedType):
        return SpecializedType(type_.base, tuple(substitute(arg, bindings) for arg in type_.args))
    return type_


def has_type_vars(type_: Type) -> bool:
    """``type_`` holds a type variable (is not known until its bindings are)."""
    if isinstance(type_, TypeVar):
        return True
    if isinstance(type_, TupleType):
        return any(has_type_vars(e) for e in type_.elements)
    if isinstance(type_, SpecializedType):
        return any(has_type_vars(a) for a in type_.args)
    return False


# --------------------------------------------------------------------------- callables & blocks


@dataclass(eq=False)
class ExternType(Type):
    """An ``extern X<T...> { ... }`` object type (unspecialized)."""

    name: str
    type_params: list[TypeVar] = field(default_factory=list)
    decl: SyntaxNode | None = None  # ast.ExternDecl

    def describe(self) -> str:
        return self.name


@dataclass(eq=False)
class ParserType(Type):
    """A parser: either a parser type declaration or a parser implementation."""

    name: str
    type_params: list[TypeVar] = field(default_factory=list)
    decl: SyntaxNode | None = None  # ast.ParserDecl | ast.ParserTypeDecl

    def describe(self) -> str:
        return self.name


@dataclass(eq=False)
class ControlType(Type):
    """A control: either a control type declaration or a control implementation."""

    name: str
    type_params: list[TypeVar] = field(default_factory=list)
    decl: SyntaxNode | None = None  # ast.ControlDecl | ast.ControlTypeDecl

    def describe(self) -> str:
        return self.name


@dataclass(eq=False)
class PackageType(Type):
    """A ``package`` type such as v1model's ``V1Switch``."""

    name: str
    type_params: list[TypeVar] = field(default_factory=list)
    decl: SyntaxNode | None = None  # ast.PackageTypeDecl

    def describe(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class SpecializedType(Type):
    """A generic extern/parser/control/package type with type arguments bound."""

    base: ExternType | ParserType | ControlType | PackageType
    args: tuple[Type, ...]

    def describe(self) -> str:
        return f"{self.base.describe()}<" + ", ".join(arg.describe() for arg in self.args) + ">"

    def bindings(self) -> dict[TypeVar, Type]:
        return dict(zip(self.base.type_params, self.args))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SpecializedType)
            and other.base is self.base
            and other.args == self.args
        )

    def __hash__(self) -> int:
        return hash((id(self.base), self.args))


@dataclass(eq=False)
class TableType(Type):
    """Type of a table name; ``apply()`` returns an :class:`ApplyResultType`."""

    table: SyntaxNode  # ast.TableDecl

    def describe(self) -> str:
        return f"table {self.table.name}"


@dataclass(eq=False)
class ActionEnumType(Type):
    """Type of ``t.apply().action_run``: one member per action of table ``t``."""

    table: SyntaxNode  # ast.TableDecl

    def describe(self) -> str:
        return f"action_list({self.table.name})"


@dataclass(eq=False)
class ApplyResultType(Type):
    """Result of ``t.apply()``: fields ``hit``, ``miss`` (bool) and ``action_run``."""

    table: SyntaxNode  # ast.TableDecl

    def describe(self) -> str:
        return f"apply_result({self.table.name})"


@dataclass(eq=False)
class ActionType(Type):
    """Type of an action name used as a value (action lists, default_action...)."""

    action: SyntaxNode  # ast.ActionDecl

    def describe(self) -> str:
        return f"action {self.action.name}"


@dataclass(eq=False)
class FunctionType(Type):
    """Type of a function / extern function / method name before it is called."""

    name: str

    def describe(self) -> str:
        return f"function {self.name}"


@dataclass(eq=False)
class StateType(Type):
    """Type of a parser state name (``accept``, ``reject`` or a declared state)."""

    def describe(self) -> str:
        return "state"


@dataclass(frozen=True)
class SetType(Type):
    """Type of a keyset expression (mask ``&&&``, range ``..``, ``default``, value_set)."""

    element: Type

    def describe(self) -> str:
        return f"set<{self.element.describe()}>"


@dataclass(eq=False)
class ValueSetType(Type):
    """``value_set<T>(N)`` instance type."""

    element: Type
    size: int

    def describe(self) -> str:
        return f"value_set<{self.element.describe()}>"


@dataclass(eq=False)
class TypeNameType(Type):
    """Type of an expression that names a type (``MyEnum`` in ``MyEnum.A``, ``error``)."""

    named: Type

    def describe(self) -> str:
        return f"type {self.named.describe()}"


# --------------------------------------------------------------------------- helpers


def is_integral(type_: Type) -> bool:
    """bit<W>, int<W> or the arbitrary-precision int."""
    return isinstance(type_, (BitsType, InfIntType))


def underlying_scalar(type_: Type) -> Type:
    """Strip new types and serializable enums down to their representation type."""
    seen = 0
    while seen < 64:
        seen += 1
        if isinstance(type_, NewType) or (
            isinstance(type_, EnumType) and type_.underlying is not None
        ):
            type_ = type_.underlying
        else:
            break
    return type_


def is_header_like(type_: Type) -> bool:
    return isinstance(type_, (HeaderType, HeaderUnionType))


def iter_fields_flat(type_: StructLikeType, prefix: str = "") -> Iterator[tuple[str, FieldInfo]]:
    """Yield ``(dotted.path, field)`` for every leaf field of nested structs/headers."""
    for info in type_.fields:
        path = f"{prefix}{info.name}"
        if isinstance(info.type, StructLikeType):
            yield from iter_fields_flat(info.type, path + ".")
        else:
            yield path, info


def types_equal(left: Type, right: Type) -> bool:
    """Structural equality for value types, identity for named types."""
    if left is right:
        return True
    if isinstance(left, (BitsType, InfIntType, BoolType, StringType, VoidType, TupleType, SetType)):
        return left == right
    if isinstance(left, VarbitType):
        return left == right
    if isinstance(left, HeaderStackType) and isinstance(right, HeaderStackType):
        return left.size == right.size and types_equal(left.element, right.element)
    if isinstance(left, SpecializedType) and isinstance(right, SpecializedType):
        return (
            left.base is right.base
            and all(types_equal(a, b) for a, b in zip(left.args, right.args))
            and len(left.args) == len(right.args)
        )
    return isinstance(left, (ErrorType, MatchKindType)) and type(left) is type(right)


ConstValue = Any
"""Compile-time value of an expression: int (bits/int, signed values negative), bool, str,
EnumMemberInfo, ErrorMember, MatchKindMember, or a tuple of those (list expressions)."""
