"""Which scalar fields of a generated module the native build may hold as C integers.

The code generator's text is the reference (:mod:`p4emu.backend.program`): Python
``int`` arithmetic, every result masked to its P4 width before it is stored. The native
build (:mod:`p4emu.backend.native`) compiles that same text with Cython beside a ``.pxd``
that may declare a header's or struct's scalar field ``long long``. Cython then computes
every operation whose two operands are both C typed (such a field, a bounded literal, a
C field of p4emu's runtime types) in C, on 64-bit signed integers. Those give exactly
Python's result as long as no intermediate leaves ``[-2**63, 2**63)`` and no shift count
leaves ``[0, 63]``: signed two's complement arithmetic is integer arithmetic until it
overflows (``>>`` of a negative value is an arithmetic shift, as Python's; ``//`` and
``%`` keep Python's rounding: the build does not set ``cdivision``).

:func:`prove` makes that proof on the exact text Cython compiles (parsed with
:mod:`ast`), conservatively:

- **Candidates**: the fields of type ``bit<W>`` (``W <= 63``) and ``int<W>`` (``W <=
  64``), with the interval of their values (the generator keeps a stored value in it:
  ``[0, 2**W)``, or ``[-2**(W-1), 2**(W-1))``). Wider fields, ``bool``, ``error``,
  enums, ``varbit`` and stack indexes stay Python objects.
- **What is C typed**: a read of a candidate field through a name Cython knows the class
  of (a parameter or local annotated with a generated class, or an attribute chain from
  one); every integer literal within 64 bits and ``True``/``False`` (Cython keeps
  literals beyond 32 bits Python objects; treating them as C only makes the proof
  stricter); a C field of
  p4emu's runtime types (any value of its C type); ``len()``; a comparison (``bint``);
  ``and``/``or``/``x if c else y``/``min``/``max`` of C operands (value-preserving).
  Everything else (every other local: the build sets ``infer_types=False``; calls,
  subscripts, unpacked tuples) is a Python object, and an operation with a Python object
  operand is Python's.
- **Each C operation** (``+ - * // % << >> & | ^``, unary ``- + ~``) gets the interval
  of its result from its operands'. When it may leave 64 bits (a product of two
  ``bit<48>``, a ``bit<63>`` shifted left, a shift by a count that may reach 64, a
  ``//`` or ``%`` of a value that may be ``-2**63``), or it is ``/`` or ``**``, every
  candidate field it reads is dropped (stays a Python object): the operation is then
  Python's. Calls of other built-ins with a C argument drop the fields too.
- **Each store** of a C value into a candidate field must lie in the field's interval
  (what later reads assume), else the field is dropped; a Python value stored is the
  generator's, already reduced to the field's width (and one outside 64 bits would raise
  ``OverflowError``, never silently differ). An augmented assignment of a Python value
  to a candidate field drops it.
- **Halves of wide fields** (:mod:`p4emu.backend.wide`): candidates of interval ``[0,
  2**64)``, C type ``unsigned long long``. An operation with such an operand is C's
  unsigned one (C's usual conversions): exact when no operand may be negative and the
  result stays in ``[0, 2**64)`` (a shift of a signed value keeps its signed type); a
  comparison, ``min``/``max`` or ``x if c else y`` of an unsigned value beside one that
  may be negative, and ``~``/``-`` of an unsigned value, drop the fields they read. The
  module-level constants of halves (``_W_<hex>``, declared ``unsigned long long``) are
  C values, and so are the literals named ``_K_<hex>`` (declared ``long long``,
  :func:`p4emu.backend.wide.name_literals`): the same interval as the literal.
- Dropping a field can change what else is C typed, so the proof runs again until
  nothing is dropped (each round drops at least one field).
- **P4 locals** (session 27): a block method's local of a ``bit<W>``/``int<W>`` type
  held in C (the same widths as fields) is named for its type by the generator
  (:func:`local_name`: ``qdepth_161_b32``), and is a candidate like a field, of its
  type's interval: a C value stored into it must lie there, an operation that may
  overflow drops it, and so does a Python result of an augmented assignment. Only the
  methods of a class deriving from ``Blocks`` (:data:`BLOCK_METHODS`) type their locals
  (``@cython.locals`` in the ``.pxd``: :func:`p4emu.backend.native.declarations`); a
  local is unique to its method (the generator's names are fresh).
- **C-typed locals**: the parser's temporaries the generator annotates
  ``cython.longlong`` (:mod:`p4emu.backend.headercodec`; Python never evaluates a local's
  annotation), named ``_u<N>_<k>`` for the width ``N`` of the values it unpacks into
  them: C values in ``[0, 2**N)``. A C value stored into one must lie there, and an
  operation on one that may leave 64 bits has no field to drop: :class:`ProofError`
  (the native build refuses the text; the pure module runs).

The result: for each generated class, its fields proven safe, each with its C type.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from p4emu.backend.wide import constant_value, signed_constant_value

#: the C type of a proven field (64-bit signed: exact while nothing overflows)
C_TYPE = "long long"
#: the C type of a proven half of a wide field (:mod:`p4emu.backend.wide`): a candidate
#: whose interval reaches above ``LL_MAX`` (exact while nothing leaves ``[0, 2**64)``)
UNSIGNED_C_TYPE = "unsigned long long"
LL_MIN = -(1 << 63)
LL_MAX = (1 << 63) - 1
ULL_MAX = (1 << 64) - 1
#: widths held in C: ``bit<W>`` up to 63 (its values below 2**63), ``int<W>`` up to 64
MAX_UNSIGNED_WIDTH = 63
MAX_SIGNED_WIDTH = 64

#: built-ins Cython compiles to C for C arguments without changing the value
_VALUE_BUILTINS = frozenset({"min", "max", "int"})
#: built-ins that only ever see their arguments as Python objects (or as C values they
#: read exactly: an index, a count, a formatted number)
_OBJECT_BUILTINS = frozenset(
    {
        "len",
        "bool",
        "isinstance",
        "repr",
        "str",
        "tuple",
        "list",
        "dict",
        "zip",
        "range",
        "all",
        "any",
        "enumerate",
        "iter",
        "next",
        "hash",
        "type",
        "getattr",
        "setattr",
        "print",
        "bytes",
        "bytearray",
        "memoryview",
        "sorted",
        "reversed",
        "set",
        "frozenset",
    }
)
_BUILTINS = frozenset(dir(builtins))
_C_INT_TYPES = re.compile(
    r"^(?:bint|char|short|int|long|long long|Py_ssize_t|size_t|"
    r"(?:unsigned|signed) (?:char|short|int|long|long long)|u?int(?:8|16|32|64)_t)$"
)


def field_range(width: int, signed: bool) -> tuple[int, int] | None:
    """The interval of a ``bit<W>``/``int<W>`` field held in C, or None (a Python object)."""
    if width < 1:
        return None
    if signed:
        if width > MAX_SIGNED_WIDTH:
            return None
        half = 1 << (width - 1)
        return (-half, half - 1)
    if width > MAX_UNSIGNED_WIDTH:
        return None
    return (0, (1 << width) - 1)


def local_name(name: str, width: int, signed: bool) -> str:
    """The name of a P4 local of type ``bit<width>``/``int<width>`` (``name``: a fresh
    one): with its type's suffix when a value of that type may be held in C (a candidate
    of the proof), else ``name`` itself."""
    if field_range(width, signed) is None:
        return name
    return f"{name}_{'i' if signed else 'b'}{width}"


def local_range(name: str) -> tuple[int, int] | None:
    """The interval of a candidate local named by :func:`local_name`, or None."""
    found = _CANDIDATE_LOCAL.match(name)
    if found is None:
        return None
    return field_range(int(found.group(2)), found.group(1) == "i")


@dataclass(frozen=True)
class Candidate:
    """A P4 local that may be held in C (:func:`local_name`): its interval. Its key in
    the proof's dropped fields is ``("", name)`` (no class has an empty name)."""

    lo: int
    hi: int


@dataclass(frozen=True)
class CVal:
    """A C-typed value: its interval, the candidate fields and the C-typed locals it was
    computed from."""

    lo: int
    hi: int
    fields: frozenset[tuple[str, str]] = frozenset()
    names: frozenset[str] = frozenset()
    #: computed as C ``unsigned long long`` (an operand was one: C's usual conversions)
    unsigned: bool = False


class ProofError(ValueError):
    """An operation on a C-typed local may leave 64 bits: the text cannot be compiled as
    it is (the generator annotated a temporary it should not have)."""


#: a local the generator annotates ``cython.longlong``, named for the width of its values
_TYPED_LOCAL = re.compile(r"^_u(\d+)_\d+$")
#: a P4 local named for its type (:func:`local_name`): a fresh name (``<hint>_<n>``) and
#: ``_b<W>`` (``bit<W>``) or ``_i<W>`` (``int<W>``); no other name the generator makes
#: ends that way (a fresh name ends in its count)
_CANDIDATE_LOCAL = re.compile(r"^\w+_\d+_([bi])(\d+)$")
#: the methods whose candidate locals the native build types (``rt.Blocks``'s blocks)
BLOCK_METHODS = frozenset(
    {
        "parse_block",
        "verify_block",
        "ingress_block",
        "egress_block",
        "compute_block",
        "deparse_block",
        "init_packet",
    }
)
#: a scope: each annotated name's class, or the interval of a C-typed local's values
ScopeEntry = str | tuple[int, int] | Candidate
Scope = Mapping[str, ScopeEntry]


FULL = CVal(LL_MIN, LL_MAX)
BOOL = CVal(0, 1)


def _fits(lo: int, hi: int) -> bool:
    return lo >= LL_MIN and hi <= LL_MAX


def runtime_c_fields(pxd_files: Iterable[Path]) -> dict[str, frozenset[str]]:
    """The C integer attributes (``cdef public <int type> name``) of each extension type
    declared in ``pxd_files`` (p4emu's runtime types the generated code annotates)."""
    found: dict[str, set[str]] = {}
    current: str | None = None
    for path in pxd_files:
        for line in path.read_text(encoding="utf-8").splitlines():
            cls = re.match(r"^cdef class (\w+)", line)
            if cls:
                current = cls.group(1)
                found.setdefault(current, set())
                continue
            attr = re.match(r"^\s+cdef (?:public |readonly )?([\w ]+?) (\w+)\s*$", line)
            if current is not None and attr and _C_INT_TYPES.match(attr.group(1)):
                found[current].add(attr.group(2))
    return {name: frozenset(attrs) for name, attrs in found.items()}


@dataclass
class _Proof:
    """One round over the text, with the current candidates."""

    classes: Mapping[str, Mapping[str, str | None]]
    candidates: Mapping[str, Mapping[str, tuple[int, int]]]
    runtime: Mapping[str, frozenset[str]]
    drop: set[tuple[str, str]] = field(default_factory=set)
    #: C-typed locals read by an operation that may overflow (nothing to drop: an error)
    unsafe: set[str] = field(default_factory=set)
    #: each block method's candidate locals (:func:`local_name`)
    locals_of: dict[str, set[str]] = field(default_factory=dict)

    # --- types of names and attribute chains ------------------------------------------

    def class_of(self, node: ast.expr, scope: Scope) -> str | None:
        """The extension type Cython knows ``node`` to be, or None."""
        if isinstance(node, ast.Name):
            found = scope.get(node.id)
            return found if isinstance(found, str) else None
        if isinstance(node, ast.Attribute):
            base = self.class_of(node.value, scope)
            if base is not None and base in self.classes:
                declared = self.classes[base].get(node.attr)
                if declared is not None and (declared in self.classes or declared in self.runtime):
                    return declared
        return None

    # --- expressions ------------------------------------------------------------------

    def value(self, node: ast.expr | None, scope: Scope) -> CVal | None:
        """The C value of ``node`` (None: a Python object), checking every operation."""
        if node is None:
            return None
        method = getattr(self, f"_v_{type(node).__name__}", None)
        if method is not None:
            found: CVal | None = method(node, scope)
            return found
        for child in ast.iter_child_nodes(node):  # anything else: a Python object
            if isinstance(child, ast.expr):
                self.value(child, scope)
            elif isinstance(child, ast.comprehension):
                self.value(child.iter, scope)
                for cond in child.ifs:
                    self.value(cond, scope)
        return None

    def _v_Constant(self, node: ast.Constant, scope: Scope) -> CVal | None:
        if isinstance(node.value, bool):
            return CVal(int(node.value), int(node.value))
        if isinstance(node.value, int) and _fits(node.value, node.value):
            return CVal(node.value, node.value)
        return None  # beyond 64 bits a literal is a Python object to Cython too

    def _v_Name(self, node: ast.Name, scope: Scope) -> CVal | None:
        found = scope.get(node.id)
        if isinstance(found, tuple):  # a C-typed local
            return CVal(found[0], found[1], names=frozenset({node.id}))
        if isinstance(found, Candidate):  # a P4 local: C while not dropped
            key = ("", node.id)
            if key in self.drop:
                return None
            return CVal(found.lo, found.hi, frozenset({key}))
        if found is None:
            value = constant_value(node.id)  # a wide field's half constant: C, unsigned
            if value is not None:
                return CVal(value, value, unsigned=True)
            value = signed_constant_value(node.id)  # a named literal: C, as the literal was
            if value is not None:
                return CVal(value, value)
        return None  # untyped locals are objects (infer_types=False); typed ones: classes

    def _v_Attribute(self, node: ast.Attribute, scope: Scope) -> CVal | None:
        base = self.class_of(node.value, scope)
        if base is None:
            self.value(node.value, scope)
            return None
        if base in self.runtime:
            return FULL if node.attr in self.runtime[base] else None
        declared = self.classes.get(base, {}).get(node.attr)
        if declared == "bint":
            return BOOL
        interval = self.candidates.get(base, {}).get(node.attr)
        if interval is not None and (base, node.attr) not in self.drop:
            return CVal(
                interval[0],
                interval[1],
                frozenset({(base, node.attr)}),
                unsigned=interval[1] > LL_MAX,
            )
        return None

    def _v_Compare(self, node: ast.Compare, scope: Scope) -> CVal | None:
        operands = [self.value(node.left, scope)]
        operands.extend(self.value(item, scope) for item in node.comparators)
        for a, b in itertools.pairwise(operands):
            if a is not None and b is not None:
                self.mixed([a, b])  # unsigned against a negative value: C converts it
        return BOOL  # exact whatever the operands' types (both C, or one boxed)

    def _v_BoolOp(self, node: ast.BoolOp, scope: Scope) -> CVal | None:
        return self.mixed_join([self.value(item, scope) for item in node.values])

    def _v_IfExp(self, node: ast.IfExp, scope: Scope) -> CVal | None:
        self.value(node.test, scope)
        return self.mixed_join([self.value(node.body, scope), self.value(node.orelse, scope)])

    def mixed(self, values: list[CVal]) -> bool:
        """Whether C computes ``values`` together as ``unsigned long long``; when it does,
        one that may be negative would be converted (another value): its fields are
        dropped (the operation is then Python's)."""
        if not any(v.unsigned for v in values):
            return False
        if any(v.lo < 0 for v in values):
            for v in values:
                self.drop.update(v.fields)
                self.unsafe.update(v.names)
        return True

    def mixed_join(self, values: list[CVal | None]) -> CVal | None:
        joined = _join(values)
        if joined is None:
            return None
        unsigned = self.mixed([v for v in values if v is not None])
        return CVal(joined.lo, joined.hi, joined.fields, joined.names, unsigned)

    def _v_UnaryOp(self, node: ast.UnaryOp, scope: Scope) -> CVal | None:
        operand = self.value(node.operand, scope)
        if isinstance(node.op, ast.Not):
            return BOOL
        if operand is None:
            return None
        if isinstance(node.op, ast.UAdd):
            return operand
        if operand.unsigned:  # C's ``~`` and ``-`` wrap an unsigned value: Python's do not
            return self.checked(LL_MIN, ULL_MAX, operand.fields, operand.names, unsigned=True)
        if isinstance(node.op, ast.Invert):
            return CVal(-operand.hi - 1, -operand.lo - 1, operand.fields, operand.names)
        return self.checked(-operand.hi, -operand.lo, operand.fields, operand.names)

    def _v_BinOp(self, node: ast.BinOp, scope: Scope) -> CVal | None:
        left = self.value(node.left, scope)
        right = self.value(node.right, scope)
        if left is None or right is None:
            return None  # Python's operation (the C operand boxed)
        return self.binary(node.op, left, right)

    def _v_Call(self, node: ast.Call, scope: Scope) -> CVal | None:
        args = [self.value(arg, scope) for arg in node.args]
        for keyword in node.keywords:
            args.append(self.value(keyword.value, scope))
        func = node.func
        if not isinstance(func, ast.Name) or func.id in scope or func.id not in _BUILTINS:
            self.value(func, scope)
            return None  # a Python function: its arguments boxed, exactly
        if func.id == "len":
            return CVal(0, LL_MAX)
        if func.id in _VALUE_BUILTINS and not node.keywords and args:
            if any(arg is None for arg in args):
                return None
            known = [arg for arg in args if arg is not None]
            fields = frozenset().union(*(arg.fields for arg in known))
            names = frozenset().union(*(arg.names for arg in known))
            unsigned = self.mixed(known)
            if func.id == "min":
                return CVal(
                    min(a.lo for a in known), min(a.hi for a in known), fields, names, unsigned
                )
            if func.id == "max":
                return CVal(
                    max(a.lo for a in known), max(a.hi for a in known), fields, names, unsigned
                )
            if len(known) == 1:  # int(x)
                return known[0]
        if func.id not in _OBJECT_BUILTINS:
            for arg in args:  # abs, pow, divmod, round...: not proven, Python's
                if arg is not None:
                    self.drop.update(arg.fields)
                    self.unsafe.update(arg.names)
        return None

    # --- operations -------------------------------------------------------------------

    def checked(
        self,
        lo: int,
        hi: int,
        fields: frozenset[tuple[str, str]],
        names: frozenset[str],
        unsigned: bool = False,
    ) -> CVal:
        """The result of a C operation: its fields dropped when it may overflow (and its
        C-typed locals noted: they cannot be dropped); ``unsigned``: computed as
        ``unsigned long long`` (exact within ``[0, 2**64)``)."""
        if (lo >= 0 and hi <= ULL_MAX) if unsigned else _fits(lo, hi):
            return CVal(lo, hi, fields, names, unsigned)
        self.drop.update(fields)
        self.unsafe.update(names)
        if unsigned:
            return CVal(0, ULL_MAX, fields, names, unsigned)
        return CVal(LL_MIN, LL_MAX, fields, names)  # C already (no candidate): any value

    def binary(self, op: ast.operator, a: CVal, b: CVal) -> CVal:
        fields, names = a.fields | b.fields, a.names | b.names
        if a.unsigned or b.unsigned:
            return self.unsigned_binary(op, a, b)
        if isinstance(op, ast.Add):
            return self.checked(a.lo + b.lo, a.hi + b.hi, fields, names)
        if isinstance(op, ast.Sub):
            return self.checked(a.lo - b.hi, a.hi - b.lo, fields, names)
        if isinstance(op, ast.Mult):
            corners = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
            return self.checked(min(corners), max(corners), fields, names)
        if isinstance(op, (ast.LShift, ast.RShift)):
            if b.lo < 0 or b.hi > 63:
                return self.checked(LL_MIN, LL_MAX + 1, fields, names)  # C: undefined; Python: no
            shift = (lambda x, n: x << n) if isinstance(op, ast.LShift) else (lambda x, n: x >> n)
            corners = [shift(x, n) for x in (a.lo, a.hi) for n in (b.lo, b.hi)]
            return self.checked(min(corners), max(corners), fields, names)
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return CVal(*_bitwise(op, a, b), fields, names)
        if isinstance(op, (ast.FloorDiv, ast.Mod)):
            if a.lo == LL_MIN:  # -2**63 // -1 overflows (and % traps) in C
                return self.checked(LL_MIN, LL_MAX + 1, fields, names)
            if isinstance(op, ast.FloorDiv):
                bound = max(abs(a.lo), abs(a.hi))
                return self.checked(-bound, bound, fields, names)
            bound = max(abs(b.lo), abs(b.hi))
            if a.lo >= 0 and b.lo > 0:
                return CVal(0, min(a.hi, bound - 1), fields, names)
            return self.checked(-bound, bound, fields, names)
        # true division (a C double), ** and @: never proven
        return self.checked(LL_MIN, LL_MAX + 1, fields, names)

    def unsigned_binary(self, op: ast.operator, a: CVal, b: CVal) -> CVal:
        """An operation with an ``unsigned long long`` operand (a wide field's half):
        exact when no operand is negative (C converts it) and the result stays in ``[0,
        2**64)``; a shift of a signed value keeps its signed type (its count's type does
        not matter to C), so it must stay within ``long long`` too."""
        fields, names = a.fields | b.fields, a.names | b.names
        if self.mixed([a, b]) and (a.lo < 0 or b.lo < 0):
            return CVal(0, ULL_MAX, fields, names, True)  # dropped: Python's
        if isinstance(op, ast.Add):
            return self.checked(a.lo + b.lo, a.hi + b.hi, fields, names, True)
        if isinstance(op, ast.Sub):
            return self.checked(a.lo - b.hi, a.hi - b.lo, fields, names, True)
        if isinstance(op, ast.Mult):
            return self.checked(a.lo * b.lo, a.hi * b.hi, fields, names, True)
        if isinstance(op, (ast.LShift, ast.RShift)):
            if b.hi > 63:
                return self.checked(LL_MIN, ULL_MAX + 1, fields, names, True)
            if isinstance(op, ast.LShift):
                lo, hi = a.lo << b.lo, a.hi << b.hi
            else:
                lo, hi = a.lo >> b.hi, a.hi >> b.lo
            return self.checked(lo, hi, fields, names, a.unsigned)
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return CVal(*_bitwise(op, a, b), fields, names, True)
        if isinstance(op, (ast.FloorDiv, ast.Mod)) and b.lo > 0:
            if isinstance(op, ast.FloorDiv):
                return CVal(a.lo // b.hi, a.hi // b.lo, fields, names, True)
            return CVal(0, min(a.hi, b.hi - 1), fields, names, True)
        return self.checked(LL_MIN, ULL_MAX + 1, fields, names, True)

    # --- statements -------------------------------------------------------------------

    def store(self, target: ast.expr, value: CVal | None, scope: Scope) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for item in target.elts:  # unpacked from a Python object
                self.store(item, None, scope)
            return
        if isinstance(target, ast.Attribute):
            base = self.class_of(target.value, scope)
            if base is None:
                self.value(target.value, scope)
                return
            interval = self.candidates.get(base, {}).get(target.attr)
            key = (base, target.attr)
            if interval is None or key in self.drop or value is None:
                return
            if not (interval[0] <= value.lo and value.hi <= interval[1]):
                self.drop.add(key)
            return
        if isinstance(target, ast.Name):
            interval = scope.get(target.id)
            if isinstance(interval, Candidate):
                if value is not None and not (interval.lo <= value.lo and value.hi <= interval.hi):
                    self.drop.add(("", target.id))
                return
            if (
                isinstance(interval, tuple)
                and value is not None
                and not (interval[0] <= value.lo and value.hi <= interval[1])
            ):
                self.unsafe.add(target.id)  # a C result outside what reads assume
            return
        if isinstance(target, ast.Subscript):
            self.value(target.value, scope)
            self.value(target.slice, scope)
        elif isinstance(target, ast.Starred):
            self.store(target.value, None, scope)

    def statements(self, body: list[ast.stmt], scope: dict[str, ScopeEntry]) -> None:
        for stmt in body:
            self.statement(stmt, scope)

    def statement(self, stmt: ast.stmt, scope: dict[str, ScopeEntry]) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function(stmt, scope)
        elif isinstance(stmt, ast.ClassDef):
            # a method's ``self`` is typed with its class (an extension type's methods)
            own = {"self": stmt.name} if stmt.name in self.classes else {}
            blocks = any(isinstance(b, ast.Name) and b.id == "Blocks" for b in stmt.bases)
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.function(item, {}, own, blocks and item.name in BLOCK_METHODS)
                else:
                    self.statement(item, {})
        elif isinstance(stmt, ast.Assign):
            if (
                len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Tuple)
                and isinstance(stmt.value, ast.Tuple)
                and len(stmt.targets[0].elts) == len(stmt.value.elts)
            ):  # a, b = x, y: Cython may assign the items as they are
                for target, item in zip(stmt.targets[0].elts, stmt.value.elts):
                    self.store(target, self.value(item, scope), scope)
                return
            value = self.value(stmt.value, scope)
            for target in stmt.targets:
                self.store(target, value, scope)
        elif isinstance(stmt, ast.AnnAssign):
            self.store(stmt.target, self.value(stmt.value, scope), scope)
        elif isinstance(stmt, ast.AugAssign):
            current = self.value(stmt.target, scope)
            value = self.value(stmt.value, scope)
            if current is not None and value is not None:
                self.store(stmt.target, self.binary(stmt.op, current, value), scope)
            elif current is not None:
                self.drop.update(current.fields)  # a Python result stored: not bounded
                self.unsafe.update(current.names)
            else:
                self.store(stmt.target, None, scope)
        else:
            for name, child in ast.iter_fields(stmt):
                if isinstance(child, ast.expr):
                    if name == "target":
                        self.store(child, None, scope)
                    else:
                        self.value(child, scope)
                elif isinstance(child, list):
                    for item in child:
                        if isinstance(item, ast.stmt):
                            self.statement(item, scope)
                        elif isinstance(item, ast.expr):
                            self.value(item, scope)
                        elif isinstance(item, ast.excepthandler):
                            self.value(item.type, scope)
                            self.statements(item.body, scope)
                        elif isinstance(item, ast.withitem):
                            self.value(item.context_expr, scope)

    def function(
        self,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        outer: Mapping[str, str],
        typed: Mapping[str, str] | None = None,
        candidates: bool = False,
    ) -> None:
        """A function's body; its scope: the enclosing one's annotated names (closure
        variables), its annotated parameters and locals (``typed``: parameters Cython
        types itself, a method's ``self``); with ``candidates``, its P4 locals named for
        their types (:func:`local_name`, noted in :attr:`locals_of`)."""
        scope: dict[str, ScopeEntry] = dict(outer)
        known = {**self.classes, **self.runtime}
        for arg in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]:
            scope.pop(arg.arg, None)
            if typed and arg.arg in typed:
                scope[arg.arg] = typed[arg.arg]
            elif isinstance(arg.annotation, ast.Name) and arg.annotation.id in known:
                scope[arg.arg] = arg.annotation.id
        for node in _own_nodes(fn):
            if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
                continue
            if isinstance(node.annotation, ast.Name) and node.annotation.id in known:
                scope[node.target.id] = node.annotation.id
            elif ast.unparse(node.annotation) == "cython.longlong":
                width = _TYPED_LOCAL.match(node.target.id)
                scope[node.target.id] = (
                    (0, (1 << int(width.group(1))) - 1)
                    if width and 0 < int(width.group(1)) < 64
                    else (LL_MIN, LL_MAX)
                )
        if candidates:
            params = {arg.arg for arg in (*fn.args.posonlyargs, *fn.args.args)}
            found = self.locals_of.setdefault(fn.name, set())
            for node in _own_nodes(fn):
                if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Store):
                    continue
                interval = local_range(node.id)
                if interval is not None and node.id not in scope and node.id not in params:
                    scope[node.id] = Candidate(*interval)
                    found.add(node.id)
        self.statements(fn.body, scope)


def _own_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterable[ast.AST]:
    """The nodes of ``fn``'s body, not those of the functions it defines."""
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def _join(values: list[CVal | None]) -> CVal | None:
    """The value of ``and``/``or``/``if-else`` (one of the operands): C when all are."""
    known = [v for v in values if v is not None]
    if len(known) != len(values) or not known:
        return None
    fields = frozenset().union(*(v.fields for v in known))
    names = frozenset().union(*(v.names for v in known))
    return CVal(min(v.lo for v in known), max(v.hi for v in known), fields, names)


def _bitwise(op: ast.operator, a: CVal, b: CVal) -> tuple[int, int]:
    """A bound of ``a & b``, ``a | b`` or ``a ^ b`` (never outside the operands' bits)."""
    if isinstance(op, ast.BitAnd):
        if a.lo >= 0 and b.lo >= 0:
            return (0, min(a.hi, b.hi))
        if a.lo >= 0:
            return (0, a.hi)
        if b.lo >= 0:
            return (0, b.hi)
    bits = max(abs(x).bit_length() for x in (a.lo, a.hi, b.lo, b.hi))
    if a.lo >= 0 and b.lo >= 0:
        return (0, (1 << bits) - 1)
    return (-(1 << bits), (1 << bits) - 1)


#: a proof's result: class -> field -> C type, and block method -> local -> C type
Proven = tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]
_cache: dict[tuple[str, str], Proven] = {}
_cache_lock = threading.Lock()


def prove(
    source: str,
    classes: Mapping[str, list[tuple[str, str | None]]],
    candidates: Mapping[str, Mapping[str, tuple[int, int]]],
    runtime: Mapping[str, frozenset[str]],
) -> dict[str, dict[str, str]]:
    """The candidate fields proven safe in ``source`` (see module docs): class -> field
    -> C type. ``classes``: every generated class's fields and their declared types
    (``TypeRegistry.classes``); ``candidates``: the scalar fields that may be C, with
    their intervals; ``runtime``: p4emu's runtime types and their C integer fields."""
    return prove_all(source, classes, candidates, runtime)[0]


def prove_all(
    source: str,
    classes: Mapping[str, list[tuple[str, str | None]]],
    candidates: Mapping[str, Mapping[str, tuple[int, int]]],
    runtime: Mapping[str, frozenset[str]],
) -> Proven:
    """:func:`prove`'s fields, and the candidate locals of the block methods proven safe
    (block method -> local -> C type; a method without one is left out)."""
    key = (
        source,
        repr((sorted(classes.items()), sorted(candidates.items()), sorted(runtime.items()))),
    )
    with _cache_lock:
        found = _cache.get(key)
    if found is not None:
        return found
    tree = ast.parse(source)
    declared = {name: dict(fields) for name, fields in classes.items()}
    drop: set[tuple[str, str]] = set()
    while True:
        proof = _Proof(declared, candidates, runtime, set(drop))
        proof.statements(tree.body, {})
        if proof.drop == drop:
            break
        drop = proof.drop
    if proof.unsafe:
        raise ProofError(
            "C-typed locals read by an operation that may leave 64 bits: "
            + ", ".join(sorted(proof.unsafe))
        )
    fields = {
        cls: {
            attr: UNSIGNED_C_TYPE if interval[1] > LL_MAX else C_TYPE
            for attr, interval in members.items()
            if (cls, attr) not in drop
        }
        for cls, members in candidates.items()
    }
    kept_locals = {
        method: {name: C_TYPE for name in sorted(names) if ("", name) not in drop}
        for method, names in sorted(proof.locals_of.items())
    }
    result = (fields, {method: names for method, names in kept_locals.items() if names})
    with _cache_lock:
        if len(_cache) > 16:
            _cache.clear()
        _cache[key] = result
    return result
