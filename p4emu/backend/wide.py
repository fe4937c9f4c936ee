"""Fields of 65 to 128 bits held as two 64-bit halves (IPv6 addresses, SIDs).

A header's or struct's ``bit<W>`` field with ``64 < W <= 128`` (:data:`MAX_SPLIT_WIDTH`)
is stored in two attributes of its generated class, the top ``W - 64`` bits and the low
64 bits (:func:`split_fields` names them), on both paths; the field's own name is a
property joining them into the Python ``int`` (and splitting a value stored through it),
so everything that reads or writes the field by its name (tables' keys, externs,
P4Runtime, tests, the pure module's rarely used paths) sees the same values as before.
The native build declares both halves C ``unsigned long long`` where
:mod:`p4emu.backend.cfields` proves that exact; the parser and the deparser read and write
the halves as two 64-bit chunks, and :mod:`p4emu.backend.body.expressions` computes the
shifts, slices, masks, concatenations, casts and comparisons of such fields on the halves
(``ExpressionCode.halves``), so a per-packet operation on an address makes no Python
``int``.

Constants: a half literal above ``2**31 - 1`` would be a Python object to Cython (it
keeps literals beyond 32 bits Python objects, and then computes the operation in Python);
such a constant is a module-level name (:func:`constant_name`) the ``.pxd`` declares
``unsigned long long`` (:func:`constants_in`), a C value compiled and a global pure.
Any other literal of ``2**31`` to ``2**63 - 1`` that is an operand of ``&``, ``|``,
``^`` or a comparison (a ``bit<32>`` wrap's ``& 4294967295``) is named the same way
(:func:`name_literals`: ``_K_<hex>``, declared ``long long``), so that the operation is
C's when its other operand is C; such an operation cannot overflow, and the width proof
(:mod:`p4emu.backend.cfields`) already took the literal for a C value.
"""

from __future__ import annotations

import ast as pyast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from p4emu.backend.codewriter import py_attr
from p4emu.frontend import ast
from p4emu.frontend import types as t

HALF_BITS = 64
MASK64 = (1 << HALF_BITS) - 1
#: the widest field held as two halves (wider ones stay one Python ``int``)
MAX_SPLIT_WIDTH = 128
#: the interval :mod:`p4emu.backend.cfields` assumes of a half (an ``unsigned long long``)
HALF_INTERVAL = (0, MASK64)
#: the largest literal Cython types as a C integer (it keeps larger ones Python objects)
MAX_C_LITERAL = (1 << 31) - 1
#: the names of the module-level constants of halves (:func:`constant_name`)
CONSTANT_PREFIX = "_W_"
_CONSTANT = re.compile(r"^_W_([0-9a-f]+)$")
_CONSTANT_LINE = re.compile(r"^(_W_[0-9a-f]+) = (\d+)$", re.MULTILINE)
#: the names of the module-level signed constants (:func:`name_literals`)
SIGNED_PREFIX = "_K_"
_SIGNED = re.compile(r"^_K_([0-9a-f]+)$")
_SIGNED_LINE = re.compile(r"^(_K_[0-9a-f]+) = (\d+)$", re.MULTILINE)
#: the largest literal :func:`name_literals` names (a C ``long long``)
MAX_SIGNED = (1 << 63) - 1


@dataclass(frozen=True)
class Split:
    """A field held as two halves: their attributes and the field's width."""

    hi: str
    lo: str
    width: int

    @property
    def hi_bits(self) -> int:
        return self.width - HALF_BITS


def split_width(type_: t.Type) -> int | None:
    """``W`` when a field of ``type_`` is held as halves (``bit<W>``, ``64 < W <= 128``)."""
    base = t.underlying_scalar(type_)
    if (
        isinstance(base, t.BitsType)
        and not base.signed
        and HALF_BITS < base.width <= MAX_SPLIT_WIDTH
    ):
        return base.width
    return None


def split_fields(fields: Iterable[tuple[str, t.Type]]) -> dict[str, Split]:
    """The fields (by attribute) of one class held as halves: ``<attr>_hi_`` and
    ``<attr>_lo_``, each lengthened with ``_`` until no other attribute of the class (a
    field, a half, ``valid_``) has its name."""
    listed = list(fields)
    taken = {"valid_", *(attr for attr, _ in listed)}
    found: dict[str, Split] = {}
    for attr, ftype in listed:
        width = split_width(ftype)
        if width is None:
            continue
        names = []
        for suffix in ("_hi_", "_lo_"):
            name = attr + suffix
            while name in taken:
                name += "_"
            taken.add(name)
            names.append(name)
        found[attr] = Split(names[0], names[1], width)
    return found


def type_splits(type_: t.Type) -> dict[str, Split]:
    """:func:`split_fields` of a header's or struct's fields (others: none)."""
    if not isinstance(type_, (t.HeaderType, t.StructType)):
        return {}
    return split_fields((py_attr(f.name), f.type) for f in type_.fields)


def member_split(e: ast.Expr) -> Split | None:
    """The halves of ``e`` when it is a header's or struct's field held as two, else
    None."""
    if not isinstance(e, ast.Member) or e.kind != ast.MEMBER_FIELD:
        return None
    return type_splits(e.expr.type).get(py_attr(e.member))


def constant(value: int) -> str:
    """The code of a half's constant value (``0 <= value < 2**64``)."""
    if value <= MAX_C_LITERAL:
        return str(value)
    return constant_name(value)


def constant_name(value: int) -> str:
    return f"{CONSTANT_PREFIX}{value:x}"


def constant_value(name: str) -> int | None:
    """The value of a constant named by :func:`constant_name`, or None."""
    found = _CONSTANT.match(name)
    return int(found.group(1), 16) if found else None


def constant_lines(names: Iterable[str]) -> list[str]:
    """Module-level definitions of the constants ``names``."""
    lines = []
    for name in sorted(set(names)):
        value = constant_value(name)
        assert value is not None, name
        lines.append(f"{name} = {value}")
    return lines


def constants_in(source: str) -> list[str]:
    """The constants a generated module's text defines (its ``.pxd`` declares them)."""
    return sorted({m.group(1) for m in _CONSTANT_LINE.finditer(source)})


def signed_constant_value(name: str) -> int | None:
    """The value of a constant named by :func:`name_literals`, or None."""
    found = _SIGNED.match(name)
    return int(found.group(1), 16) if found else None


def signed_constants_in(source: str) -> list[str]:
    """The signed constants a generated module's text defines (:func:`name_literals`;
    its ``.pxd`` declares them ``long long``)."""
    return sorted({m.group(1) for m in _SIGNED_LINE.finditer(source)})


def name_literals(source: str, at_line: int) -> str:
    """``source`` with every integer literal above :data:`MAX_C_LITERAL` and at most
    :data:`MAX_SIGNED` that is an operand of ``&``, ``|``, ``^`` or a comparison
    replaced by a module-level name (``_K_<hex>``), whose definitions are inserted before
    line ``at_line`` (0-based; module level, after the imports). Cython keeps such a
    literal a Python object, and computes the operation in Python even when its other
    operand is a C integer; named, the ``.pxd`` declares it ``long long`` (compiled: a C
    value, boxed to the same ``int`` where it meets an object; pure: a global holding
    the same ``int``). A bitwise operation or comparison of two ``long long`` values is
    exact, so nothing else changes."""
    found: dict[int, list[tuple[int, int, str]]] = {}  # line -> (start, end, name)

    def note(node: pyast.expr) -> None:
        if (
            isinstance(node, pyast.Constant)
            and type(node.value) is int
            and MAX_C_LITERAL < node.value <= MAX_SIGNED
            and node.lineno == node.end_lineno
            and node.end_col_offset is not None
        ):
            name = f"{SIGNED_PREFIX}{node.value:x}"
            found.setdefault(node.lineno, []).append((node.col_offset, node.end_col_offset, name))

    for node in pyast.walk(pyast.parse(source)):
        if isinstance(node, pyast.BinOp) and isinstance(
            node.op, (pyast.BitAnd, pyast.BitOr, pyast.BitXor)
        ):
            note(node.left)
            note(node.right)
        elif isinstance(node, pyast.Compare):
            note(node.left)
            for comparator in node.comparators:
                note(comparator)
    if not found:
        return source
    lines = source.split("\n")
    names: set[str] = set()
    for lineno, spans in found.items():
        line = lines[lineno - 1].encode("utf-8")  # ast's offsets count UTF-8 bytes
        for start, end, name in sorted(set(spans), reverse=True):
            line = line[:start] + name.encode("ascii") + line[end:]
            names.add(name)
        lines[lineno - 1] = line.decode("utf-8")
    definitions = [f"{name} = {int(name[len(SIGNED_PREFIX) :], 16)}" for name in sorted(names)]
    return "\n".join([*lines[:at_line], *definitions, *lines[at_line:]])
