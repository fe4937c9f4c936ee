"""What every part of the body compiler shares: the compiler's state (the program context,
the code writer, the scope, where the code runs), the interfaces it has to the modules above
it (:class:`ProgramContext`, :class:`CallEmitters`), and small helpers."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from p4emu.backend.codewriter import CodeWriter, Names
from p4emu.backend.headercodec import HeaderCodec
from p4emu.backend.pytypes import TypeRegistry, is_aggregate
from p4emu.backend.runtime_objects import TableRuntime
from p4emu.backend.scope import Scope
from p4emu.frontend import ast
from p4emu.frontend import types as t


@dataclass(frozen=True)
class CallEmitters:
    """The code generators a body hands calls to. They sit above this package (table
    applies in :mod:`p4emu.backend.tables_codegen`, extern calls in
    :mod:`p4emu.backend.v1model_externs`) and call back into the body compiler
    (:class:`p4emu.backend.body.BodyCompiler`) they get; :mod:`p4emu.backend.program`
    passes them in, so this package imports neither."""

    # (body, call, *, want_hit, switch) -> the name of the application's hit variable
    table_apply: Callable[..., str]
    # (body, call): an extern function or method called as a statement
    extern_statement: Callable[[BodyCore, ast.Call], None]
    # (body, call, target) -> Python code of the value of an extern method call
    extern_method_value: Callable[[BodyCore, ast.Call, ast.ExternMethodCall], str]
    # (body, call, target) -> Python code of the value of an extern function call
    extern_function_value: Callable[[BodyCore, ast.Call, ast.ExternFunctionCall], str]


class ProgramContext(Protocol):
    """What the code generators (this package and those above it) use of the compiler of
    the whole program (:class:`p4emu.backend.program.ProgramCompiler`): shared names,
    types and scopes, run-time objects bound into the generated code, and the emitters."""

    names: Names
    types: TypeRegistry
    #: the module-level constants of wide fields' halves (p4emu.backend.wide)
    wide_constants: set[str]
    global_scope: Scope
    emitters: CallEmitters
    drop_port: int
    no_match_error: bool
    trace: bool
    #: p4emu's runtime runs native (its types are C structs to generated code: a
    #: counter is counted by ``Counter.count_at``, its cells in C)
    native_runtime: bool

    def bind(self, obj: Any, hint: str) -> str: ...
    def bind_shared(self, obj: Any, hint: str) -> str: ...
    def function(self, fn: ast.FunctionDecl) -> tuple[str, list[str]]: ...
    def scratch_header(self, type_: t.Type) -> str: ...
    def block_scope_of(self, action: ast.ActionDecl, scope: Scope) -> Scope: ...
    def child_block(
        self, block: ast.BlockInstance | None, target: ast.BlockApply
    ) -> ast.BlockInstance: ...
    def apply_args(self, call: ast.Call, child: ast.BlockInstance) -> list[ast.BoundArg]: ...
    def bind_constructor_params(self, scope: Scope, instance: ast.BlockInstance) -> None: ...
    def annotated(self, name: str, type_: t.Type) -> str: ...
    # parsers
    def error_code(self, name: str) -> int: ...
    def header_codec(self, type_: t.HeaderType) -> tuple[HeaderCodec, str]: ...
    def varbit_helpers(self, type_: t.HeaderType) -> tuple[list[str], int, int]: ...
    def value_set_runtime(
        self, block: ast.BlockInstance | None, decl: ast.ValueSetDecl, node: ast.Node
    ) -> str: ...
    # tables
    def table_runtime(self, block: ast.BlockInstance, decl: ast.TableDecl) -> TableRuntime: ...
    def action_id(self, decl: ast.ActionDecl, block: ast.BlockInstance | None) -> int: ...
    # externs
    def extern_object(self, block: ast.BlockInstance | None, decl: Any, node: ast.Node) -> Any: ...
    def extern_runtime(self, block: ast.BlockInstance | None, decl: Any, node: ast.Node) -> str: ...
    def hash_function(self, algo_name: str, call: ast.Node) -> str: ...
    def digest_id(self, type_: t.Type, call: ast.Node) -> int: ...
    def log_format(self, fmt: str) -> str: ...
    def header_emit(self, type_: t.HeaderType, code: str) -> str: ...
    def field_list_copier(self, index: int, call: ast.Call) -> str: ...


@dataclass
class Hoist:
    """Aggregate fields of a block function's parameters, read once into locals.

    An aggregate field of a struct (a header, a header stack, a nested struct or union)
    is an object its parent owns for good: aggregate assignment copies *into* it
    (:mod:`p4emu.backend.pytypes`). So ``p0.ipv6`` can be read into a local at the top of
    the function, and ``p0.ipv6.hop_limit`` becomes ``p0_ipv6_7.hop_limit``: one
    attribute load less at every use. :meth:`finish` keeps the locals used often enough
    to pay for their own load and puts the attribute chain back for the others.
    """

    #: the function's parameters of struct type
    params: frozenset[str]
    #: attribute chain (``p0.ipv6``) -> local name
    names: dict[str, str] = field(default_factory=dict)
    #: local name -> its generated class (its annotation: a C type to the native build)
    classes: dict[str, str] = field(default_factory=dict)

    #: uses in the function's text from which a local pays for its own load
    MIN_USES = 3

    def local(self, base: str, attr: str, cls: str, fresh: Callable[[str], str]) -> str | None:
        """The local holding ``base.attr`` (an object of class ``cls``) when ``base`` is a
        parameter, else None."""
        if base not in self.params:
            return None
        code = f"{base}.{attr}"
        found = self.names.get(code)
        if found is None:
            found = self.names[code] = fresh(f"{base}_{attr}")
            self.classes[found] = cls
        return found

    def finish(self, lines: list[str], at: int, indent: str) -> list[str]:
        """``lines`` with the locals worth keeping defined before line ``at`` (``indent``
        deep) and the others replaced by their attribute chains."""
        text = "\n".join(lines)
        kept: list[str] = []
        for code, name in self.names.items():
            pattern = re.compile(rf"\b{name}\b")
            if len(pattern.findall(text)) >= self.MIN_USES:
                kept.append(f"{indent}{name}: {self.classes[name]} = {code}")
            else:
                text = pattern.sub(code, text)
        out = text.split("\n")
        return out[:at] + kept + out[at:]


class BodyCore:
    """The state of one body compiler and the primitives on it (see the module docstring)."""

    def __init__(
        self,
        pc: ProgramContext,
        w: CodeWriter,
        scope: Scope,
        *,
        where: str,
    ) -> None:
        self.pc = pc
        self.emitters = pc.emitters
        self.w = w
        self.scope = scope
        self.where = where  # "control" | "parser" | "deparser" | "function"
        # return handling stack: ("break",) for inlined units, ("function", outs) for
        # generated functions
        self.returns: list[tuple[Any, ...]] = []
        # name of the variable holding the direct meter color of the current table hit
        self.meter_color: str | None = None
        # parser-only: names of the data / offset / length / error locals
        self.parser_state: Any = None
        # deparser-only: the most bytes its ``emit`` statements write (the native
        # deparser's buffer: p4emu.backend.headercodec.native_deparse_locals)
        self.deparse_bytes = 0
        # block functions: aggregate fields of the parameters read into locals
        self.hoist: Hoist | None = None

    # ------------------------------------------------------------------ helpers

    def fresh(self, hint: str = "t") -> str:
        return self.pc.names.fresh(hint)

    def bind_global(self, obj: Any, hint: str) -> str:
        return self.pc.bind(obj, hint)

    def hold(self, code: str, type_: t.Type | None) -> str:
        """``code``'s value now, in a local (a copy of an aggregate), unless it is a literal:
        what an operand evaluated before a call that writes state must keep."""
        if _LITERAL.match(code):
            return code
        local = self.fresh("o")
        if type_ is not None and isinstance(type_, t.HeaderGroupType):
            type_ = type_.struct
        value = (
            self.pc.types.copy(code, type_) if type_ is not None and is_aggregate(type_) else code
        )
        self.w.line(f"{local} = {value}")
        return local


_LITERAL = re.compile(r"^\(?-?(\d+|0x[0-9a-fA-F]+)\)?$|^(True|False|None)$")


def writes_state(expr: ast.Expr | None) -> bool:
    """True when evaluating ``expr`` may write a variable: it holds a call with an ``out``
    or ``inout`` argument, or applies a table. P4_16 evaluates operands left to right, so
    what was read before such a call must not see its writes."""
    if expr is None:
        return False
    for sub in ast.walk(expr):
        if isinstance(sub, ast.Call):
            if isinstance(sub.target, ast.TableApply):
                return True
            if any(b.param.direction in ("out", "inout") for b in sub.bound_args):
                return True
    return False


def is_simple(code: str) -> bool:
    """True for a name or attribute chain (safe to evaluate several times)."""
    return code.replace(".", "").replace("_", "").isalnum() and not code[0].isdigit()
