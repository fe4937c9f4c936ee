"""Helpers every code generator of the backend shares: the errors they raise, Python
literals of folded constants, and the code that normalizes a value to its P4 type or
converts it to and from its bit pattern.

The lowest of the code-generating modules (docs/p4emu-backend.md, "Module map"): it knows
only the value representation of :mod:`p4emu.backend.pytypes`.
"""

from __future__ import annotations

from typing import Any

from p4emu.backend.exceptions import CompileError
from p4emu.backend.pytypes import scalar_type
from p4emu.frontend import ast
from p4emu.frontend import types as t

#: the packet context parameter of every generated block and function, annotated with
#: its class: Python ignores the annotation, the native build reads it as a C type when
#: p4emu's runtime is native (:func:`p4emu.backend.native.declarations`)
CTX_PARAM = "ctx: PacketContext"


def unsupported(node: ast.Node, construct: str) -> Exception:
    return node.loc.unsupported(construct)


def compile_error(node: ast.Node, message: str) -> CompileError:
    loc = node.loc
    return CompileError(message, loc.file, loc.line, loc.column)


def literal(value: Any, type_: t.Type | None) -> str:
    """Python literal of a folded constant of ``type_``."""
    if isinstance(value, bool):
        if type_ is not None and isinstance(scalar_type(type_), t.BitsType):
            return "1" if value else "0"
        return "True" if value else "False"
    if isinstance(value, int):
        if type_ is not None:
            base = scalar_type(type_)
            if isinstance(base, t.BitsType):
                return repr(base.wrap(value))
            if isinstance(base, t.BoolType):
                return "True" if value else "False"
        return repr(value)
    if isinstance(value, t.EnumMemberInfo):
        return repr(value.value if value.value is not None else value.index)
    if isinstance(value, t.ErrorMember):
        return repr(value.code)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, tuple):
        elements: list[t.Type | None] = [None] * len(value)
        if type_ is not None and isinstance(type_, t.TupleType):
            elements = list(type_.elements)
        return "(" + "".join(literal(v, et) + ", " for v, et in zip(value, elements)) + ")"
    raise CompileError(f"cannot represent constant {value!r}")


def const_int(value: Any) -> int | None:
    """Integer value of a folded constant (enum members and errors included)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, t.EnumMemberInfo):
        return value.value if value.value is not None else value.index
    if isinstance(value, t.ErrorMember):
        return value.code
    return None


def fit(code: str, type_: t.Type) -> str:
    """Reduce an arbitrary Python int expression to ``type_``'s representation."""
    base = scalar_type(type_)
    if isinstance(base, t.BitsType):
        mask = (1 << base.width) - 1
        if base.signed:
            half = 1 << (base.width - 1)
            return f"((({code}) + {half} & {mask}) - {half})"
        return f"(({code}) & {mask})"
    return code


def to_unsigned(code: str, type_: t.Type) -> str:
    """The bit pattern (non-negative int) of a value of ``type_``."""
    base = scalar_type(type_)
    if isinstance(base, t.BitsType) and base.signed:
        return f"({code} & {(1 << base.width) - 1})"
    if isinstance(base, t.BoolType):
        return f"(1 if {code} else 0)"
    return code


def from_unsigned(code: str, type_: t.Type) -> str:
    """A value of ``type_`` from its bit pattern."""
    base = scalar_type(type_)
    if isinstance(base, t.BitsType) and base.signed:
        half = 1 << (base.width - 1)
        return f"(({code} ^ {half}) - {half})"
    if isinstance(base, t.BoolType):
        return f"({code} != 0)"
    return code


def function_return(value: str | None, outs: list[str], returns_value: bool) -> str:
    """The ``return`` statement of a generated P4 function: the value (if any) followed
    by the final values of its scalar out/inout parameters; a void function with a
    single such parameter returns it bare."""
    if returns_value:
        if not outs:
            return f"return {value}"
        return f"return ({value}, {', '.join(outs)},)"
    if not outs:
        return "return"
    if len(outs) == 1:
        return f"return {outs[0]}"
    return f"return ({', '.join(outs)},)"
