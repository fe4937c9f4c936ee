"""The p4emu P4_16 abstract syntax tree and the checked-program contract.

This module is the contract between the front end and everything after it (P4Info
generation, the backend compiler). Its shape only grows: attributes are added, never renamed.

Life cycle
----------
1. :mod:`p4emu.frontend.parser` builds the tree; only syntactic attributes are set.
2. :mod:`p4emu.frontend.typecheck` fills the *resolved* attributes in place (all declared
   ``kw_only`` with a default of None / empty):

   * every :class:`Expr` gets ``type`` (a :mod:`p4emu.frontend.types` object, after implicit
     casts: an untyped ``1`` assigned to a ``bit<8>`` has type ``bit<8>``) and, when the value
     is known at compile time, ``const_value`` (see :data:`types.ConstValue`);
   * every :class:`PathExpr` gets ``decl`` (the declaration object it names);
   * every :class:`Member` gets ``kind`` (one of the ``MEMBER_*`` constants) and ``resolved``;
   * every :class:`Call` gets ``target`` (a :class:`CallTarget`) and ``bound_args`` (arguments in
     parameter order, with parameter directions and instantiated parameter types);
   * every :class:`TypeRef` gets ``resolved``; declarations of named types get ``type``;
   * tables get their properties decoded (``key``, ``actions``, ``default_action``...).
3. :class:`CheckedProgram` bundles the tree with the v1model pipeline binding and the
   control-plane objects (tables, actions, extern instances, value sets) and their
   fully-qualified names as p4c would print them in P4Info.

Names follow p4c: objects of a control/parser that the package instantiates are prefixed by
that block's *type* name (``MyIngress.ipv4_lpm``); objects of sub-blocks add the instance name
(``MyIngress.acl.acl_table``); ``@name("x")`` replaces the local name, ``@name(".x")`` makes
it absolute (``x``); top-level actions / externs keep their bare names (``NoAction``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from p4emu.frontend.source import SourceLocation
from p4emu.frontend.types import (
    ConstValue,
    ErrorType,
    ExternType,
    MatchKindType,
    Type,
    TypeVar,
)

# --------------------------------------------------------------------------- base classes


@dataclass(eq=False)
class Node:
    """Base of every AST node. ``loc`` points into the original (unpreprocessed) source, at
    the node's first token (for ``a + b`` at ``a``; for declarations at their name)."""

    loc: SourceLocation = field(kw_only=True, repr=False)


@dataclass(eq=False)
class Annotation(Node):
    """``@name``, ``@name(body)`` or ``@name[key=value, ...]``.

    ``body`` is the raw body text (None when there is no body). ``args`` holds the body parsed
    as a comma-separated expression list when it parses as one (string/int literals, paths...),
    else None. ``kv`` holds a structured ``[k=v]`` body.
    """

    name: str
    body: str | None = None
    args: list[Expr] | None = None
    kv: dict[str, Expr] | None = None

    def string_arg(self) -> str | None:
        """The single string argument (``@name("x")`` -> ``"x"``), else None."""
        if self.args and len(self.args) == 1 and isinstance(self.args[0], StringLiteral):
            return self.args[0].value
        return None

    def int_arg(self) -> int | None:
        """The single integer argument (``@id(5)`` -> 5), else None."""
        if self.args and len(self.args) == 1 and isinstance(self.args[0], IntLiteral):
            return self.args[0].value
        return None


def find_annotation(annotations: list[Annotation], name: str) -> Annotation | None:
    for annotation in annotations:
        if annotation.name == name:
            return annotation
    return None


@dataclass(eq=False)
class Declaration(Node):
    """A named declaration (type, constant, action, table, instance, parser state...)."""

    name: str
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)

    def annotation(self, name: str) -> Annotation | None:
        return find_annotation(self.annotations, name)

    def has_annotation(self, name: str) -> bool:
        return self.annotation(name) is not None

    @property
    def name_annotation(self) -> str | None:
        """The string of ``@name("...")`` if present."""
        annotation = self.annotation("name")
        return annotation.string_arg() if annotation else None


# --------------------------------------------------------------------------- type references


@dataclass(eq=False)
class TypeRef(Node):
    """A type as written in the source; ``resolved`` is set by the type checker."""

    resolved: Type | None = field(default=None, kw_only=True)


@dataclass(eq=False)
class BitTypeRef(TypeRef):
    """``bit<W>`` / ``int<W>``; ``bit`` alone means ``bit<1>`` (width None)."""

    signed: bool
    width: Expr | None


@dataclass(eq=False)
class VarbitTypeRef(TypeRef):
    """``varbit<W>``: a variable-size bit string of at most ``width`` bits."""

    width: Expr


@dataclass(eq=False)
class InfIntTypeRef(TypeRef):
    """``int`` without width."""


@dataclass(eq=False)
class BoolTypeRef(TypeRef):
    """``bool`` written in the source."""


@dataclass(eq=False)
class StringTypeRef(TypeRef):
    """``string`` written in the source (``log_msg`` formats)."""


@dataclass(eq=False)
class VoidTypeRef(TypeRef):
    """``void`` written in the source."""


@dataclass(eq=False)
class ErrorTypeRef(TypeRef):
    """``error`` written in the source."""


@dataclass(eq=False)
class MatchKindTypeRef(TypeRef):
    """``match_kind`` written in the source."""


@dataclass(eq=False)
class DontCareTypeRef(TypeRef):
    """``_`` as a type argument."""


@dataclass(eq=False)
class NamedTypeRef(TypeRef):
    """A (possibly generic) type name: ``headers_t``, ``register<bit<32>>``, ``.T``."""

    name: str
    type_args: list[TypeRef] = field(default_factory=list)
    absolute: bool = False
    decl: Declaration | None = field(default=None, kw_only=True)


@dataclass(eq=False)
class StackTypeRef(TypeRef):
    """``element[size]`` header stack type."""

    element: TypeRef
    size: Expr


@dataclass(eq=False)
class TupleTypeRef(TypeRef):
    """``tuple<T1, T2, ...>``."""

    elements: list[TypeRef]


# --------------------------------------------------------------------------- expressions


@dataclass(eq=False)
class Expr(Node):
    """Base of expressions. ``type`` and ``const_value`` are filled by the type checker.

    Whenever ``const_value`` is not None the value is known at compile time and can be used
    directly (already reduced to ``type``'s range). Untyped constant sub-expressions keep type
    ``int`` when only the enclosing node was cast implicitly (``bit<8> x = K * 2`` types the
    ``*`` node ``bit<8>`` with const_value, its operands stay ``int``)."""

    type: Type | None = field(default=None, kw_only=True)
    const_value: ConstValue = field(default=None, kw_only=True)

    @property
    def is_const(self) -> bool:
        return self.const_value is not None


@dataclass(eq=False)
class IntLiteral(Expr):
    """An integer literal. ``width``/``signed`` come from a ``8w``/``8s`` prefix (None: untyped)."""

    value: int
    width: int | None = None
    signed: bool = False
    text: str = ""


@dataclass(eq=False)
class BoolLiteral(Expr):
    """``true`` or ``false``."""

    value: bool


@dataclass(eq=False)
class StringLiteral(Expr):
    """A string literal; ``value`` is its decoded text, without the quotes."""

    value: str


@dataclass(eq=False)
class PathExpr(Expr):
    """A name in expression position. ``decl`` is the declaration it resolves to
    (Parameter, VariableDecl, ConstDecl, Instantiation, TableDecl, ActionDecl, FunctionDecl,
    ExternFunctionDecl, ValueSetDecl, ParserState, a type declaration, ...)."""

    name: str
    absolute: bool = False
    decl: Any = field(default=None, kw_only=True)


MEMBER_FIELD = "field"  # header/struct/union field; resolved: types.FieldInfo
MEMBER_STACK_NEXT = "next"  # stack.next (parsers); resolved: None
MEMBER_STACK_LAST = "last"  # stack.last
MEMBER_STACK_LAST_INDEX = "lastIndex"  # stack.lastIndex (bit<32>)
MEMBER_STACK_SIZE = "size"  # stack.size (bit<32>, constant)
MEMBER_ENUM = "enum_member"  # resolved: types.EnumMemberInfo
MEMBER_ERROR = "error_member"  # resolved: types.ErrorMember
MEMBER_MATCH_KIND = "match_kind_member"  # resolved: types.MatchKindMember
MEMBER_METHOD = "method"  # callee only: extern method / builtin method / apply
MEMBER_HIT = "hit"  # t.apply().hit
MEMBER_MISS = "miss"  # t.apply().miss
MEMBER_ACTION_RUN = "action_run"  # t.apply().action_run
MEMBER_TYPE_PROPERTY = "type_property"  # constant type property (unused for now)


@dataclass(eq=False)
class Member(Expr):
    """``expr.member``; ``kind`` is a ``MEMBER_*`` constant and ``resolved`` the member object
    (FieldInfo, EnumMemberInfo, ErrorMember, MethodDecl, or None for stack/apply members)."""

    expr: Expr
    member: str
    kind: str = field(default="", kw_only=True)
    resolved: Any = field(default=None, kw_only=True)
    member_loc: SourceLocation | None = field(default=None, kw_only=True, repr=False)


@dataclass(eq=False)
class Index(Expr):
    """``stack[index]`` (header stacks only)."""

    expr: Expr
    index: Expr


@dataclass(eq=False)
class Slice(Expr):
    """``expr[hi:lo]``; ``hi_value``/``lo_value`` are the folded bounds after checking."""

    expr: Expr
    hi: Expr
    lo: Expr
    hi_value: int = field(default=0, kw_only=True)
    lo_value: int = field(default=0, kw_only=True)


@dataclass(eq=False)
class Unary(Expr):
    """``op`` is one of ``-`` ``!`` ``~`` ``+``."""

    op: str
    operand: Expr


BINARY_OPERATORS = (
    "*", "/", "%", "+", "-", "|+|", "|-|", "<<", ">>", "++",
    "<", ">", "<=", ">=", "==", "!=", "&", "^", "|", "&&", "||",
)  # fmt: skip


@dataclass(eq=False)
class Binary(Expr):
    """A binary operator from :data:`BINARY_OPERATORS`. After checking both operands have
    the operand type the operator works on (untyped literals already cast), and ``type`` is
    the result type (bool for comparisons, bit<W1+W2> for ``++``...). Exception: the right
    operand of ``<<``/``>>`` may keep type ``int`` when it is a constant (use const_value)."""

    op: str
    left: Expr
    right: Expr


@dataclass(eq=False)
class Ternary(Expr):
    """``cond ? then : otherwise``."""

    cond: Expr
    then: Expr
    otherwise: Expr


@dataclass(eq=False)
class Cast(Expr):
    """``(type) expr``. ``implicit`` casts are inserted by the checker (e.g. a serializable
    enum value used where its underlying ``bit<W>`` is expected); their ``type_ref`` is
    synthetic, with ``resolved`` set."""

    type_ref: TypeRef
    expr: Expr
    implicit: bool = field(default=False, kw_only=True)


@dataclass(eq=False)
class Argument(Node):
    """A call argument; ``name`` is set for named arguments (``f(x = 1)``)."""

    value: Expr
    name: str | None = None


@dataclass(eq=False)
class BoundArg:
    """An argument matched to its parameter. ``expr`` is None for an omitted optional
    parameter; ``param_type`` is the parameter type after generic substitution."""

    param: Parameter
    expr: Expr | None
    param_type: Type | None

    @property
    def direction(self) -> str:
        return self.param.direction


@dataclass(eq=False)
class Call(Expr):
    """``callee<type_args>(args)``. After checking: ``target`` says what is called and
    ``bound_args`` lists arguments in parameter order."""

    callee: Expr
    type_args: list[TypeRef] = field(default_factory=list)
    args: list[Argument] = field(default_factory=list)
    target: CallTarget | None = field(default=None, kw_only=True)
    bound_args: list[BoundArg] = field(default_factory=list, kw_only=True)


@dataclass(eq=False)
class ConstructorCall(Expr):
    """Instantiation used as an expression: ``MyParser()``, ``direct_counter(CounterType.packets)``.

    ``type`` is the instance type; ``decl`` the declaration of the instantiated type.
    """

    type_ref: TypeRef
    args: list[Argument] = field(default_factory=list)
    decl: Declaration | None = field(default=None, kw_only=True)
    bound_args: list[BoundArg] = field(default_factory=list, kw_only=True)


@dataclass(eq=False)
class ListExpr(Expr):
    """``{a, b, c}``. Its ``type`` is a TupleType, or the struct/header type it initializes."""

    elements: list[Expr]


@dataclass(eq=False)
class NamedExpr(Node):
    """``name = value``, one field of a :class:`StructExpr`."""

    name: str
    value: Expr


@dataclass(eq=False)
class StructExpr(Expr):
    """``{a = 1, b = 2}``; ``type`` is the struct/header type it initializes."""

    fields: list[NamedExpr]


@dataclass(eq=False)
class DontCare(Expr):
    """``_`` as an expression (keyset wildcard or ignored ``out`` argument)."""


@dataclass(eq=False)
class DefaultExpr(Expr):
    """``default`` keyset."""


@dataclass(eq=False)
class Mask(Expr):
    """``value &&& mask`` keyset."""

    value: Expr
    mask: Expr


@dataclass(eq=False)
class Range(Expr):
    """``lo .. hi`` keyset (inclusive)."""

    lo: Expr
    hi: Expr


@dataclass(eq=False)
class TupleKeyset(Expr):
    """``(k1, k2, ...)`` keyset of a multi-expression select or a multi-key table entry."""

    elements: list[Expr]


# --------------------------------------------------------------------------- call targets


class CallTarget:
    """What a :class:`Call` invokes; one subclass per kind."""


@dataclass(eq=False)
class ActionCall(CallTarget):
    """Call of an action (directly, not through a table)."""

    action: ActionDecl


@dataclass(eq=False)
class FunctionCall(CallTarget):
    """Call of a P4 function; ``type_args`` are its type arguments in type-parameter order."""

    function: FunctionDecl
    type_args: tuple[Type, ...] = ()


@dataclass(eq=False)
class ExternFunctionCall(CallTarget):
    """Call of an extern function (``hash``, ``mark_to_drop``, ``digest``...); ``type_args``
    are the inferred/explicit type arguments in type-parameter order."""

    function: ExternFunctionDecl
    type_args: tuple[Type, ...] = ()


@dataclass(eq=False)
class ExternMethodCall(CallTarget):
    """``instance.method(...)`` on an extern object (``packet.extract``, ``r.read``...).

    ``instance`` is the object expression; ``extern`` the extern type; ``extern_type_args``
    the instance's type arguments (``register<bit<32>>`` -> (bit<32>,)); ``type_args`` the
    method's own type arguments (``extract<T>``)."""

    instance: Expr
    extern: ExternType
    method: MethodDecl
    extern_type_args: tuple[Type, ...] = ()
    type_args: tuple[Type, ...] = ()


BUILTIN_METHODS = (
    "isValid",
    "setValid",
    "setInvalid",
    "push_front",
    "pop_front",
    "minSizeInBits",
    "minSizeInBytes",
)


@dataclass(eq=False)
class BuiltinMethodCall(CallTarget):
    """A language-defined method (see :data:`BUILTIN_METHODS`) on ``object`` (a header,
    union, stack or struct expression)."""

    name: str
    object: Expr


@dataclass(eq=False)
class TableApply(CallTarget):
    """``table.apply()``."""

    table: TableDecl


@dataclass(eq=False)
class BlockApply(CallTarget):
    """``instance.apply(...)`` of a sub-parser / sub-control. ``instance`` is the local
    Instantiation; None for a direct invocation ``Ctrl.apply()``, whose implicit instance is
    the child BlockInstance keyed by the type name (``children["Ctrl"]``)."""

    block: ParserDecl | ControlDecl | ParserTypeDecl | ControlTypeDecl
    instance: Instantiation | None
    # ``s.apply(...)`` where ``s`` is a constructor parameter of a parser/control type: the
    # block applied is the instance passed in (``children[s.name]``); ``block`` is then the
    # type declaration whose parameters ``bound_args`` refer to.
    ctor_param: Parameter | None = None


# --------------------------------------------------------------------------- statements


@dataclass(eq=False)
class Statement(Node):
    """Base of statements; ``annotations`` are the ones written before the statement."""

    annotations: list[Annotation] = field(default_factory=list, kw_only=True)


@dataclass(eq=False)
class AssignStmt(Statement):
    """``lhs = rhs``. ``leaves`` (set by the checker when a struct-typed header field is
    assigned as a whole, ``hdr.h.s = {...}``) are the per-field assignments that replace it."""

    lhs: Expr
    rhs: Expr
    leaves: list[AssignStmt] | None = field(default=None, kw_only=True)


@dataclass(eq=False)
class CallStmt(Statement):
    """A method/function/action call used as a statement."""

    call: Call


@dataclass(eq=False)
class BlockStmt(Statement):
    """``{ ... }``: a block of statements."""

    statements: list[Statement]


@dataclass(eq=False)
class IfStmt(Statement):
    """``if (cond) then else otherwise``; ``otherwise`` None when there is no ``else``."""

    cond: Expr
    then: Statement
    otherwise: Statement | None = None


@dataclass(eq=False)
class SwitchCase(Node):
    """``label: body``. ``label`` None is ``default``; ``body`` None is a fall-through label.
    For ``switch (t.apply().action_run)`` ``action`` is the resolved action of the label."""

    label: Expr | None
    body: BlockStmt | None
    action: ActionDecl | None = field(default=None, kw_only=True)


@dataclass(eq=False)
class SwitchStmt(Statement):
    """``switch (expr) {...}``; ``on_action_run`` is True for the table form."""

    expr: Expr
    cases: list[SwitchCase]
    on_action_run: bool = field(default=False, kw_only=True)


@dataclass(eq=False)
class ExitStmt(Statement):
    """``exit;``"""


@dataclass(eq=False)
class ReturnStmt(Statement):
    """``return;`` or ``return value;`` (``value`` None for the first)."""

    value: Expr | None = None


@dataclass(eq=False)
class EmptyStmt(Statement):
    """``;`` on its own."""


@dataclass(eq=False)
class DeclStmt(Statement):
    """A local variable or constant declared among statements."""

    decl: VariableDecl | ConstDecl


# --------------------------------------------------------------------------- declarations


@dataclass(eq=False)
class StructField(Node):
    """One field of a header, header union or struct declaration."""

    name: str
    type_ref: TypeRef
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)


@dataclass(eq=False)
class HeaderDecl(Declaration):
    """``header H { ... }``; ``type`` is the checker's HeaderType."""

    fields: list[StructField]
    type: Type | None = field(default=None, kw_only=True)  # types.HeaderType


@dataclass(eq=False)
class HeaderUnionDecl(Declaration):
    """``header_union U { ... }``; ``type`` is the checker's HeaderUnionType."""

    fields: list[StructField]
    type: Type | None = field(default=None, kw_only=True)  # types.HeaderUnionType


@dataclass(eq=False)
class StructDecl(Declaration):
    """``struct S { ... }``; ``type`` is the checker's StructType."""

    fields: list[StructField]
    type: Type | None = field(default=None, kw_only=True)  # types.StructType


@dataclass(eq=False)
class EnumMemberDecl(Node):
    """One member of an enum; ``value`` is its ``= expr`` (a serializable enum's), else None."""

    name: str
    value: Expr | None = None


@dataclass(eq=False)
class EnumDecl(Declaration):
    """``enum E {A, B}`` or serializable ``enum bit<8> E {A = 1, B = 2}``."""

    underlying: TypeRef | None
    members: list[EnumMemberDecl]
    type: Type | None = field(default=None, kw_only=True)  # types.EnumType


@dataclass(eq=False)
class Identifier(Node):
    """A bare name: a member of an ``error`` or ``match_kind`` declaration."""

    name: str


@dataclass(eq=False)
class ErrorDecl(Declaration):
    """``error { A, B }`` (name is ``"error"``)."""

    members: list[Identifier]


@dataclass(eq=False)
class MatchKindDecl(Declaration):
    """``match_kind { ... }`` (name is ``"match_kind"``)."""

    members: list[Identifier]


@dataclass(eq=False)
class TypedefDecl(Declaration):
    """``typedef T name;``."""

    type_ref: TypeRef


@dataclass(eq=False)
class NewTypeDecl(Declaration):
    """``type bit<32> T;``."""

    type_ref: TypeRef
    type: Type | None = field(default=None, kw_only=True)  # types.NewType


@dataclass(eq=False)
class ConstDecl(Declaration):
    """``const T name = value;``; after checking ``value.const_value`` holds the folded value."""

    type_ref: TypeRef
    value: Expr

    @property
    def const_value(self) -> ConstValue:
        return self.value.const_value


@dataclass(eq=False)
class VariableDecl(Declaration):
    """A local variable (in a block, an action, a parser/control local section)."""

    type_ref: TypeRef
    init: Expr | None = None


@dataclass(eq=False)
class Parameter(Declaration):
    """A parameter. ``direction`` is ``in``/``out``/``inout`` or ``""`` (directionless)."""

    direction: str
    type_ref: TypeRef
    default: Expr | None = None

    @property
    def type(self) -> Type | None:
        return self.type_ref.resolved

    @property
    def is_directionless(self) -> bool:
        return self.direction == ""

    @property
    def is_optional(self) -> bool:
        return self.has_annotation("optional")


@dataclass(eq=False)
class TypeParam(Node):
    """A type parameter name; ``var`` is its :class:`types.TypeVar`."""

    name: str
    var: TypeVar | None = field(default=None, kw_only=True)


@dataclass(eq=False)
class MethodDecl(Declaration):
    """An extern method or constructor (``is_constructor``: name equals the extern's)."""

    return_type: TypeRef | None
    type_params: list[TypeParam]
    params: list[Parameter]
    is_constructor: bool = False
    is_abstract: bool = False


@dataclass(eq=False)
class ExternDecl(Declaration):
    """``extern X<T> { constructors; methods }`` (an extern object type)."""

    type_params: list[TypeParam]
    methods: list[MethodDecl]
    type: Type | None = field(default=None, kw_only=True)  # types.ExternType

    @property
    def constructors(self) -> list[MethodDecl]:
        return [method for method in self.methods if method.is_constructor]

    def methods_named(self, name: str) -> list[MethodDecl]:
        return [m for m in self.methods if m.name == name and not m.is_constructor]


@dataclass(eq=False)
class ExternFunctionDecl(Declaration):
    """``extern R f<T>(params);``. Overloads are separate declarations with the same name."""

    return_type: TypeRef
    type_params: list[TypeParam]
    params: list[Parameter]


@dataclass(eq=False)
class FunctionDecl(Declaration):
    """``R f<T>(params) { body }``."""

    return_type: TypeRef
    type_params: list[TypeParam]
    params: list[Parameter]
    body: BlockStmt


@dataclass(eq=False)
class ActionDecl(Declaration):
    """``action a(params) { body }``. Directional params come from the caller, directionless
    ones from the control plane (table entry) or an explicit call."""

    params: list[Parameter]
    body: BlockStmt

    @property
    def directional_params(self) -> list[Parameter]:
        return [p for p in self.params if not p.is_directionless]

    @property
    def control_plane_params(self) -> list[Parameter]:
        return [p for p in self.params if p.is_directionless]


@dataclass(eq=False)
class ParserTypeDecl(Declaration):
    """``parser P<H>(...);`` (architecture declaration, no body)."""

    type_params: list[TypeParam]
    params: list[Parameter]
    type: Type | None = field(default=None, kw_only=True)


@dataclass(eq=False)
class ControlTypeDecl(Declaration):
    """``control C<H>(...);`` (architecture declaration, no body)."""

    type_params: list[TypeParam]
    params: list[Parameter]
    type: Type | None = field(default=None, kw_only=True)


@dataclass(eq=False)
class PackageTypeDecl(Declaration):
    """``package V1Switch<H, M>(Parser<H, M> p, ...);``."""

    type_params: list[TypeParam]
    params: list[Parameter]
    type: Type | None = field(default=None, kw_only=True)


@dataclass(eq=False)
class SelectCase(Node):
    """``keyset : state``; ``target`` is the resolved ParserState (None for accept/reject)."""

    keyset: Expr
    state: str
    target: ParserState | None = field(default=None, kw_only=True)


@dataclass(eq=False)
class Transition(Node):
    """``transition s;`` (``state`` set) or ``transition select(exprs) { cases }``.

    For a direct transition ``target`` is the resolved ParserState (None for ``accept`` and
    ``reject``)."""

    state: str | None = None
    select: list[Expr] | None = None
    cases: list[SelectCase] = field(default_factory=list)
    target: ParserState | None = field(default=None, kw_only=True)


ACCEPT = "accept"
REJECT = "reject"


@dataclass(eq=False)
class ParserState(Declaration):
    """A parser state. ``transition`` None means an implicit ``transition reject``."""

    statements: list[Statement]
    transition: Transition | None


@dataclass(eq=False)
class ValueSetDecl(Declaration):
    """``value_set<T>(size) name;`` (parser-local)."""

    element_type: TypeRef
    size: Expr
    size_value: int = field(default=0, kw_only=True)


@dataclass(eq=False)
class ParserDecl(Declaration):
    """A parser implementation. ``params`` are the apply parameters, ``ctor_params`` the
    optional constructor parameters, ``locals`` its instances/constants/variables/value sets."""

    type_params: list[TypeParam]
    params: list[Parameter]
    ctor_params: list[Parameter]
    locals: list[Declaration]
    states: list[ParserState]
    type: Type | None = field(default=None, kw_only=True)

    def state(self, name: str) -> ParserState | None:
        for state in self.states:
            if state.name == name:
                return state
        return None


@dataclass(eq=False)
class ControlDecl(Declaration):
    """A control implementation: locals (actions, tables, instances, constants, variables)
    and the ``apply`` body."""

    type_params: list[TypeParam]
    params: list[Parameter]
    ctor_params: list[Parameter]
    locals: list[Declaration]
    body: BlockStmt
    type: Type | None = field(default=None, kw_only=True)

    @property
    def actions(self) -> list[ActionDecl]:
        return [d for d in self.locals if isinstance(d, ActionDecl)]

    @property
    def tables(self) -> list[TableDecl]:
        return [d for d in self.locals if isinstance(d, TableDecl)]


@dataclass(eq=False)
class Instantiation(Declaration):
    """``Type<args>(ctor_args) name;`` (externs, sub-parsers/controls, the ``main`` package).

    ``type`` is the instance type (ExternType / SpecializedType / ParserType / ControlType /
    PackageType); ``type_decl`` the instantiated declaration; ``bound_args`` the constructor
    arguments in parameter order."""

    type_ref: TypeRef
    args: list[Argument]
    type: Type | None = field(default=None, kw_only=True)
    type_decl: Declaration | None = field(default=None, kw_only=True)
    bound_args: list[BoundArg] = field(default_factory=list, kw_only=True)


# ------------------------------------------------------------------ tables


@dataclass(eq=False)
class KeyElement(Node):
    """``expr : match_kind @annotations``. ``name`` is the control-plane field name:
    ``@name`` if given, else the expression's source text (``hdr.ipv4.dstAddr``)."""

    expr: Expr
    match_kind: str
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)
    name: str = field(default="", kw_only=True)


@dataclass(eq=False)
class ActionRef(Node):
    """An action in an ``actions`` list, ``default_action`` or an entry. ``args`` are the
    written arguments (for entries/default_action: all directionless ones; for the actions
    list: only the directional ones). ``action`` is resolved by the checker;
    ``bound_args`` matches ``args`` to the action's parameters."""

    name: str
    args: list[Argument] | None
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)
    action: ActionDecl | None = field(default=None, kw_only=True)
    bound_args: list[BoundArg] = field(default_factory=list, kw_only=True)

    @property
    def default_only(self) -> bool:
        return find_annotation(self.annotations, "defaultonly") is not None

    @property
    def table_only(self) -> bool:
        return find_annotation(self.annotations, "tableonly") is not None


@dataclass(eq=False)
class TableEntry(Node):
    """A ``const entries`` / ``entries`` element. ``keyset`` has one expression per key
    element (an IntLiteral / Mask / Range / DontCare / DefaultExpr...). ``priority`` is the
    explicit ``priority = N:`` expression; ``priority_value`` the effective priority after
    checking (implicit from the entry order with the first entry highest, as p4c 1.2.4.8
    programs BMv2), None for tables without ternary/range/optional keys. ``annotations`` are
    those written after the action (``KEY : ACTION() @x;``)."""

    keyset: list[Expr]
    action: ActionRef
    priority: Expr | None = None
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)
    priority_value: int | None = field(default=None, kw_only=True)


@dataclass(eq=False)
class TableProperty(Node):
    """A raw table property as parsed. ``value`` is a list[KeyElement] (``key``),
    list[ActionRef] (``actions``), ActionRef (``default_action``), list[TableEntry]
    (``entries``) or an Expr (every other property)."""

    name: str
    value: Any
    is_const: bool = False
    annotations: list[Annotation] = field(default_factory=list, kw_only=True)


@dataclass(eq=False)
class TableDecl(Declaration):
    """A table. The decoded fields are filled by the checker from ``properties``.

    ``size`` is the declared size or None (p4c/BMv2 default: 1024). ``counters``, ``meters``
    and ``implementation`` are the Instantiation (named instance) or ConstructorCall (inline
    instance) bound to those properties. ``custom`` holds every other property by name."""

    properties: list[TableProperty]
    key: list[KeyElement] = field(default_factory=list, kw_only=True)
    actions: list[ActionRef] = field(default_factory=list, kw_only=True)
    default_action: ActionRef | None = field(default=None, kw_only=True)
    default_action_const: bool = field(default=False, kw_only=True)
    entries: list[TableEntry] | None = field(default=None, kw_only=True)
    entries_const: bool = field(default=False, kw_only=True)
    size: int | None = field(default=None, kw_only=True)
    counters: Instantiation | ConstructorCall | None = field(default=None, kw_only=True)
    meters: Instantiation | ConstructorCall | None = field(default=None, kw_only=True)
    implementation: Instantiation | ConstructorCall | None = field(default=None, kw_only=True)
    support_timeout: bool = field(default=False, kw_only=True)
    custom: dict[str, TableProperty] = field(default_factory=dict, kw_only=True)

    def get_property(self, name: str) -> TableProperty | None:
        for prop in self.properties:
            if prop.name == name:
                return prop
        return None

    def action_ref(self, action: ActionDecl) -> ActionRef | None:
        for ref in self.actions:
            if ref.action is action:
                return ref
        return None

    @property
    def needs_priority(self) -> bool:
        """True when some key is ternary, range or optional (entries carry priorities)."""
        return any(k.match_kind in ("ternary", "range", "optional") for k in self.key)


# --------------------------------------------------------------------------- program


@dataclass(eq=False)
class Program(Node):
    """The whole preprocessed translation unit (core.p4 and v1model.p4 included)."""

    declarations: list[Declaration]


# --------------------------------------------------------------------------- checked program


@dataclass(eq=False)
class BlockInstance:
    """One instance of a parser or control in the instantiation tree.

    ``name`` is the control-plane prefix of its objects (``MyIngress``, ``MyIngress.acl``).
    ``instantiation`` is the local Instantiation for sub-blocks, or the ConstructorCall in
    ``main``'s arguments for the top-level blocks. ``children`` maps the local instance names
    of sub-parsers / sub-controls to their instances. ``type_bindings`` binds the block's
    type parameters (if it is generic); ``constructor_args`` maps constructor parameter
    names to their compile-time values."""

    decl: ParserDecl | ControlDecl
    name: str
    instantiation: Instantiation | ConstructorCall | None = None
    parent: BlockInstance | None = None
    children: dict[str, BlockInstance] = field(default_factory=dict)
    type_bindings: dict[TypeVar, Type] = field(default_factory=dict)
    constructor_args: dict[str, ConstValue] = field(default_factory=dict)

    def qualified_name(self, decl: Declaration) -> str:
        """Control-plane name of a local declaration of this block, as p4c names it."""
        return qualify_name(self.name, decl)


def qualify_name(prefix: str | None, decl: Declaration) -> str:
    """Apply p4c's rules: ``@name(".x")`` -> ``x``; ``@name("x")`` or plain -> prefix.x."""
    local = decl.name_annotation
    if local is None:
        local = decl.name
    elif local.startswith("."):
        return local[1:]
    return f"{prefix}.{local}" if prefix else local


@dataclass(eq=False)
class TableInstance:
    """A table as the control plane sees it."""

    name: str
    decl: TableDecl
    block: BlockInstance
    counters: ExternInstance | None = None
    meters: ExternInstance | None = None
    implementation: ExternInstance | None = None


@dataclass(eq=False)
class ActionInstance:
    """An action as the control plane sees it (``block`` None for top-level actions).
    ``tables`` lists the tables whose ``actions`` property names it (P4Info lists only
    actions that some table uses)."""

    name: str
    decl: ActionDecl
    block: BlockInstance | None
    tables: list[TableInstance] = field(default_factory=list)


@dataclass(eq=False)
class ExternInstance:
    """An extern object instance (register, counter, direct_counter, meter, action_profile,
    action_selector, Checksum16...). ``decl`` is the named Instantiation, or the inline
    ConstructorCall of a table property (then ``name`` is the table's name and ``table`` the
    owning table instance). ``constructor_args`` are the folded constructor arguments."""

    name: str
    decl: Instantiation | ConstructorCall
    extern: ExternType
    type_args: tuple[Type, ...]
    constructor_args: list[ConstValue]
    block: BlockInstance | None
    table: TableInstance | None = None

    @property
    def extern_name(self) -> str:
        return self.extern.name


@dataclass(eq=False)
class ValueSetInstance:
    """A ``value_set`` as the control plane sees it: its control-plane name, declaration and
    the parser block that declares it."""

    name: str
    decl: ValueSetDecl
    block: BlockInstance


V1SWITCH_SLOTS = ("p", "vr", "ig", "eg", "ck", "dep")
"""Parameter names of ``package V1Switch`` in v1model.p4, in order."""


@dataclass(eq=False)
class CheckedProgram:
    """A type-checked v1model program: the annotated AST plus everything the later stages
    need without re-resolving names.

    ``blocks`` maps each V1Switch parameter name (see :data:`V1SWITCH_SLOTS`) to the bound
    top-level BlockInstance; the named properties give them by role."""

    program: Program
    main: Instantiation
    package: PackageTypeDecl
    blocks: dict[str, BlockInstance]
    error_type: ErrorType
    match_kind_type: MatchKindType
    types: dict[str, Type]
    constants: dict[str, ConstValue]
    tables: list[TableInstance]
    actions: list[ActionInstance]
    extern_instances: list[ExternInstance]
    value_sets: list[ValueSetInstance]
    source_files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    architecture: str = "v1model"

    @property
    def parser(self) -> BlockInstance:
        return self.blocks["p"]

    @property
    def verify_checksum(self) -> BlockInstance:
        return self.blocks["vr"]

    @property
    def ingress(self) -> BlockInstance:
        return self.blocks["ig"]

    @property
    def egress(self) -> BlockInstance:
        return self.blocks["eg"]

    @property
    def compute_checksum(self) -> BlockInstance:
        return self.blocks["ck"]

    @property
    def deparser(self) -> BlockInstance:
        return self.blocks["dep"]

    def table(self, name: str) -> TableInstance:
        """Table by fully-qualified name; KeyError if absent."""
        for table in self.tables:
            if table.name == name:
                return table
        raise KeyError(name)

    def action(self, name: str) -> ActionInstance:
        for action in self.actions:
            if action.name == name:
                return action
        raise KeyError(name)

    def extern_instance(self, name: str) -> ExternInstance:
        for instance in self.extern_instances:
            if instance.name == name:
                return instance
        raise KeyError(name)

    def table_instance_for(self, decl: TableDecl, block: BlockInstance) -> TableInstance:
        """The table instance of ``decl`` inside ``block`` (a table decl has one instance per
        instance of its control)."""
        for table in self.tables:
            if table.decl is decl and table.block is block:
                return table
        raise KeyError(decl.name)

    def action_instance_for(self, decl: ActionDecl, block: BlockInstance | None) -> ActionInstance:
        """The action instance of ``decl`` in ``block``; top-level actions have block None."""
        for action in self.actions:
            if action.decl is decl and (action.block is block or action.block is None):
                return action
        raise KeyError(decl.name)

    def extern_instance_for(
        self, decl: Instantiation | ConstructorCall, block: BlockInstance | None
    ) -> ExternInstance:
        """The extern instance declared by ``decl`` in ``block`` (None for top-level ones)."""
        for instance in self.extern_instances:
            if instance.decl is decl and (instance.block is block or instance.block is None):
                return instance
        raise KeyError(getattr(decl, "name", "<inline>"))

    def block_instances(self) -> Iterator[BlockInstance]:
        """Every parser/control instance, top-level blocks first, then depth-first children
        (an instance passed to several blocks once)."""
        stack = [self.blocks[slot] for slot in reversed(V1SWITCH_SLOTS)]
        seen: set[int] = set()
        while stack:
            block = stack.pop()
            if id(block) in seen:
                continue
            seen.add(id(block))
            yield block
            stack.extend(reversed(list(block.children.values())))

    def declarations(self, kind: type[Declaration] | None = None) -> Iterator[Declaration]:
        """Top-level declarations, optionally only those of one class."""
        for decl in self.program.declarations:
            if kind is None or isinstance(decl, kind):
                yield decl


# --------------------------------------------------------------------------- utilities


def iter_children(node: Node) -> Iterator[Node]:
    """Direct syntactic children of ``node`` (resolved back-references are not followed)."""
    yield from _children(node)


_NON_CHILD_FIELDS = frozenset(
    {
        "loc", "type", "const_value", "decl", "resolved", "target", "bound_args", "action",
        "type_decl", "counters", "meters", "implementation", "custom", "key", "actions",
        "default_action", "entries",
    }
)  # fmt: skip

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
"""Per node class, the names of the fields that can hold children, in field order
(computed once per class: ``dataclasses.fields`` per node was most of a walk's time)."""


def _child_fields(cls: type) -> tuple[str, ...]:
    found = _CHILD_FIELDS.get(cls)
    if found is None:
        found = _CHILD_FIELDS[cls] = tuple(
            spec.name
            for spec in fields(cls)
            if spec.name not in _NON_CHILD_FIELDS
            or (spec.name == "decl" and issubclass(cls, DeclStmt))
        )
    return found


def _children(node: Node) -> list[Node]:
    """The children :func:`iter_children` yields, as a new list."""
    out: list[Node] = []
    names = _CHILD_FIELDS.get(type(node))
    if names is None:
        names = _child_fields(type(node))
    for name in names:
        value = getattr(node, name)
        if isinstance(value, Node):
            out.append(value)
        elif isinstance(value, list):
            out.extend([item for item in value if isinstance(item, Node)])
        elif name == "kv" and isinstance(value, dict):
            out.extend([item for item in value.values() if isinstance(item, Node)])
    return out


def walk(node: Node) -> Iterator[Node]:
    """Pre-order traversal of the syntax tree below (and including) ``node``."""
    stack = [node]
    pop, extend = stack.pop, stack.extend
    while stack:
        current = pop()
        yield current
        children = _children(current)
        if children:
            children.reverse()
            extend(children)


def expr_to_source(expr: Expr) -> str:
    """Print an expression as P4 source, the way p4c names table key fields."""
    match expr:
        case IntLiteral():
            return expr.text or str(expr.value)
        case BoolLiteral():
            return "true" if expr.value else "false"
        case StringLiteral():
            return '"' + expr.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        case PathExpr():
            return ("." if expr.absolute else "") + expr.name
        case Member():
            return f"{expr_to_source(expr.expr)}.{expr.member}"
        case Index():
            return f"{expr_to_source(expr.expr)}[{expr_to_source(expr.index)}]"
        case Slice():
            return (
                f"{expr_to_source(expr.expr)}[{expr_to_source(expr.hi)}:{expr_to_source(expr.lo)}]"
            )
        case Unary():
            return f"{expr.op}{expr_to_source(expr.operand)}"
        case Binary():
            return f"{expr_to_source(expr.left)} {expr.op} {expr_to_source(expr.right)}"
        case Ternary():
            return (
                f"{expr_to_source(expr.cond)} ? {expr_to_source(expr.then)} : "
                f"{expr_to_source(expr.otherwise)}"
            )
        case Cast():
            return f"({typeref_to_source(expr.type_ref)}){expr_to_source(expr.expr)}"
        case Call():
            type_args = ""
            if expr.type_args:
                type_args = "<" + ", ".join(typeref_to_source(t) for t in expr.type_args) + ">"
            args = ", ".join(_argument_to_source(arg) for arg in expr.args)
            return f"{expr_to_source(expr.callee)}{type_args}({args})"
        case ConstructorCall():
            args = ", ".join(_argument_to_source(arg) for arg in expr.args)
            return f"{typeref_to_source(expr.type_ref)}({args})"
        case ListExpr():
            return "{" + ", ".join(expr_to_source(e) for e in expr.elements) + "}"
        case StructExpr():
            return (
                "{" + ", ".join(f"{f.name} = {expr_to_source(f.value)}" for f in expr.fields) + "}"
            )
        case DontCare():
            return "_"
        case DefaultExpr():
            return "default"
        case Mask():
            return f"{expr_to_source(expr.value)} &&& {expr_to_source(expr.mask)}"
        case Range():
            return f"{expr_to_source(expr.lo)} .. {expr_to_source(expr.hi)}"
        case TupleKeyset():
            return "(" + ", ".join(expr_to_source(e) for e in expr.elements) + ")"
    return type(expr).__name__


def _argument_to_source(arg: Argument) -> str:
    value = expr_to_source(arg.value)
    return f"{arg.name} = {value}" if arg.name else value


def typeref_to_source(ref: TypeRef) -> str:
    """Print a type reference as P4 source."""
    match ref:
        case BitTypeRef():
            base = "int" if ref.signed else "bit"
            return base if ref.width is None else f"{base}<{expr_to_source(ref.width)}>"
        case VarbitTypeRef():
            return f"varbit<{expr_to_source(ref.width)}>"
        case InfIntTypeRef():
            return "int"
        case BoolTypeRef():
            return "bool"
        case StringTypeRef():
            return "string"
        case VoidTypeRef():
            return "void"
        case ErrorTypeRef():
            return "error"
        case MatchKindTypeRef():
            return "match_kind"
        case DontCareTypeRef():
            return "_"
        case NamedTypeRef():
            args = ""
            if ref.type_args:
                args = "<" + ", ".join(typeref_to_source(t) for t in ref.type_args) + ">"
            return ("." if ref.absolute else "") + ref.name + args
        case StackTypeRef():
            return f"{typeref_to_source(ref.element)}[{expr_to_source(ref.size)}]"
        case TupleTypeRef():
            return "tuple<" + ", ".join(typeref_to_source(t) for t in ref.elements) + ">"
    return type(ref).__name__
