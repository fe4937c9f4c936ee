"""Python representation of P4 values, and the classes generated for aggregate types.

Scalars are plain Python values:

============================  ==========================================================
``bit<W>``                    ``int`` in ``[0, 2**W)``
``int<W>``                    ``int`` in ``[-2**(W-1), 2**(W-1))`` (two's complement value)
``bool``                      ``bool``
``int`` (arbitrary precision) ``int``
``error``                     ``int`` (the error code, BMv2 numbering)
serializable ``enum``         ``int`` (the underlying value)
other ``enum``                ``int`` (member index)
``varbit<N>``                 ``(nbits, value)`` tuple
``string``                    ``str``
new ``type``                  as its underlying type
tuple / list expression       ``tuple`` (struct / header elements: objects it owns)
============================  ==========================================================

Aggregates are objects of generated ``__slots__`` classes, one per P4 type: a header has
one attribute per field plus ``valid_``; a struct one attribute per field (nested
aggregates are objects); a header union one attribute per member header; a stack
``items`` (list of element objects) and ``nxt`` (the next index). Every storage location
of aggregate type owns its object and assignment copies *into* it (``assign_<cls>``), so
references to a location stay valid; this is what lets the compiler pass aggregates to
inlined actions and sub-blocks by reference.

Header assignment follows BMv2's ``assign_header``: an invalid source only invalidates
the destination; ``setValid()`` on an invalid header zeroes its fields (BMv2
``add_header``); ``setInvalid()`` keeps them.
"""

from __future__ import annotations

from collections.abc import Iterator

from p4emu.backend.cfields import field_range
from p4emu.backend.codewriter import py_attr, sanitize
from p4emu.backend.exceptions import CompileError
from p4emu.backend.rt import STANDARD_METADATA_FIELDS
from p4emu.backend.wide import HALF_BITS, HALF_INTERVAL, MASK64, Split, split_fields
from p4emu.frontend import types as t

#: the runtime's class a conforming ``standard_metadata_t`` derives from (generated text)
STANDARD_METADATA_BASE = "StandardMetadata"
#: the widest ``bit<W>`` field :class:`p4emu.backend.rt.StandardMetadata` holds in C
MAX_STANDARD_METADATA_WIDTH = 63


def scalar_type(type_: t.Type) -> t.Type:
    """Strip new types and serializable enums to their representation type."""
    return t.underlying_scalar(type_)


def is_aggregate(type_: t.Type) -> bool:
    return isinstance(type_, (t.HeaderType, t.StructType, t.HeaderUnionType, t.HeaderStackType))


def holds_aggregate(type_: t.Type) -> bool:
    """A tuple with an aggregate element (at any depth): its elements are objects it owns,
    copied when the tuple is stored (``TypeRegistry.copy``)."""
    return isinstance(type_, t.TupleType) and any(
        is_aggregate(element) or holds_aggregate(element) for element in type_.elements
    )


def bit_width(type_: t.Type) -> int | None:
    """Width in bits of a scalar (bool = 1), None when not fixed-width scalar."""
    base = scalar_type(type_)
    if isinstance(base, t.BitsType):
        return base.width
    if isinstance(base, t.BoolType):
        return 1
    return None


def standard_metadata_problem(type_: t.Type) -> str | None:
    """Why the struct ``type_`` cannot be v1model's standard metadata
    (:class:`p4emu.backend.rt.StandardMetadata`), or None when it can: it must hold every
    field of :data:`~p4emu.backend.rt.STANDARD_METADATA_FIELDS`, ``parser_error`` of type
    ``error``, the others unsigned ``bit<W>`` with ``W`` at most 63 (v1model's are at
    most 48); it may have more fields."""
    if not isinstance(type_, t.StructType):
        return f"{type_.describe()} is not a struct"
    types = {f.name: f.type for f in type_.fields}
    for name in STANDARD_METADATA_FIELDS:
        ftype = types.get(name)
        if ftype is None:
            return f"{type_.name} has no field {name}"
        base = scalar_type(ftype)
        if name == "parser_error":
            if not isinstance(base, t.ErrorType):
                return f"{type_.name}.{name} is {ftype.describe()}, not error"
        elif not (
            isinstance(base, t.BitsType)
            and not base.signed
            and base.width <= MAX_STANDARD_METADATA_WIDTH
        ):
            return (
                f"{type_.name}.{name} is {ftype.describe()}, not bit<W> with W at most "
                f"{MAX_STANDARD_METADATA_WIDTH}"
            )
    return None


def default_scalar(type_: t.Type) -> str:
    """Python literal of the initial value of a scalar of ``type_``."""
    base = scalar_type(type_)
    if isinstance(base, t.BoolType):
        return "False"
    if isinstance(base, t.VarbitType):
        return "(0, 0)"
    if isinstance(base, t.StringType):
        return "''"
    if isinstance(base, t.TupleType):
        return "(" + "".join(default_scalar(e) + ", " for e in base.elements) + ")"
    return "0"


class TypeRegistry:
    """Generates (once) the class and helper functions of every aggregate type used."""

    def __init__(self, standard_base: bool = False) -> None:
        #: a ``standard_metadata_t`` struct with v1model's fields gets a class deriving
        #: from :class:`p4emu.backend.rt.StandardMetadata` (the compiled runtime's: only
        #: an extension type can be a compiled class's base)
        self.standard_base = standard_base
        #: class -> the runtime class it derives from (its fields are the base's)
        self.bases: dict[str, str] = {}
        self._names: dict[int, str] = {}
        self._stack_names: dict[str, str] = {}
        self._keep: list[t.Type] = []  # keep types alive: ids must stay unique
        self.lines: list[str] = []
        #: the Cython declarations of the generated classes (``TypeRegistry.pxd``)
        self.classes: dict[str, list[tuple[str, str | None]]] = {}
        #: the scalar fields the native build may hold as C integers, with the interval
        #: of their values (``p4emu.backend.cfields`` proves which it may)
        self.scalars: dict[str, dict[str, tuple[int, int]]] = {}
        self._count = 0

    # --- public -----------------------------------------------------------------------

    def cls(self, type_: t.Type) -> str:
        """Name of the generated class of aggregate ``type_``."""
        key = id(type_)
        if isinstance(type_, t.HeaderStackType):
            # stacks are structural: one class per (element, size)
            element = self.cls(type_.element)
            skey = f"{element}[{type_.size}]"
            found = self._stack_names.get(skey)
            if found is not None:
                return found
            name = self._name("K", f"{type_.element.name}_{type_.size}")
            self._stack_names[skey] = name
            self._emit_stack(name, type_, element)
            return name
        found = self._names.get(key)  # type: ignore[arg-type]
        if found is not None:
            return found
        if isinstance(type_, t.HeaderType):
            name = self._name("H", type_.name)
            self._names[key] = name  # type: ignore[index]
            self._keep.append(type_)
            self._emit_header(name, type_)
        elif isinstance(type_, t.HeaderUnionType):
            name = self._name("U", type_.name)
            self._names[key] = name  # type: ignore[index]
            self._keep.append(type_)
            members = [(py_attr(f.name), self.cls(f.type)) for f in type_.fields]
            self._emit_union(name, members)
        elif isinstance(type_, t.StructType):
            name = self._name("S", type_.name)
            self._names[key] = name  # type: ignore[index]
            self._keep.append(type_)
            self._emit_struct(name, type_)
        else:
            raise CompileError(f"no runtime class for type {type_.describe()}")
        return name

    def new(self, type_: t.Type) -> str:
        """Expression creating a fresh value of ``type_`` (all zero, headers invalid)."""
        if is_aggregate(type_):
            return f"{self.cls(type_)}()"
        if holds_aggregate(type_):
            assert isinstance(type_, t.TupleType)
            return "(" + "".join(f"{self.new(e)}, " for e in type_.elements) + ")"
        return default_scalar(type_)

    def copy(self, code: str, type_: t.Type) -> str:
        """Expression for an independent copy of the value ``code``."""
        if is_aggregate(type_):
            return f"copy_{self.cls(type_)}({code})"
        if holds_aggregate(type_):  # ``code``: a location (evaluated once per element)
            assert isinstance(type_, t.TupleType)
            copies = (self.copy(f"{code}[{i}]", e) for i, e in enumerate(type_.elements))
            return "(" + "".join(f"{c}, " for c in copies) + ")"
        return code

    def assign(self, dst: str, src: str, type_: t.Type) -> str:
        """Statement storing ``src`` into the existing location ``dst``."""
        if is_aggregate(type_):
            return f"assign_{self.cls(type_)}({dst}, {src})"
        return f"{dst} = {self.copy(src, type_)}"

    def eq(self, left: str, right: str, type_: t.Type) -> str:
        if is_aggregate(type_):
            return f"eq_{self.cls(type_)}({left}, {right})"
        return f"({left} == {right})"

    # --- generation -------------------------------------------------------------------

    def _name(self, prefix: str, hint: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}_{sanitize(hint)}"

    def _note_scalars(self, name: str, fields: list[tuple[str, t.Type]]) -> None:
        found = {}
        splits = split_fields(fields)
        for attr, ftype in fields:
            split = splits.get(attr)
            if split is not None:  # two C ``unsigned long long`` halves where proven
                found[split.hi] = found[split.lo] = HALF_INTERVAL
                continue
            base = scalar_type(ftype)
            if isinstance(base, t.BitsType):
                interval = field_range(base.width, base.signed)
                if interval is not None:
                    found[attr] = interval
        self.scalars[name] = found

    def _field_default(self, type_: t.Type) -> str:
        return self.new(type_)

    def _emit_header(self, name: str, type_: t.HeaderType) -> None:
        attrs = [py_attr(f.name) for f in type_.fields]
        splits = split_fields((py_attr(f.name), f.type) for f in type_.fields)
        stored = _stored(attrs, splits)
        # validity is only ever True or False: a C int to the native build
        self.classes[name] = [("valid_", "bint"), *((a, None) for a in stored)]
        self._note_scalars(name, [(py_attr(f.name), f.type) for f in type_.fields])
        defaults = [default_scalar(f.type) for f in type_.fields]
        slots = ", ".join(repr(a) for a in ["valid_", *stored])
        out = self.lines
        out.append(f"class {name}:")
        out.append(f"    __slots__ = ({slots},)")
        out.append(f"    p4_type = {type_.name!r}")
        out.append("    def __init__(self):")
        out.append("        self.valid_ = False")
        for attr, default in zip(attrs, defaults):
            out.extend(f"        {line}" for line in _store_default("self", attr, default, splits))
        out.append("    def __repr__(self):")
        fields = " + ', ' + ".join(f"'{a}=' + repr(self.{a})" for a in attrs) or "''"
        out.append(
            f"        return '{type_.name}(' + ('valid, ' if self.valid_ else 'invalid, ') + {fields} + ')'"
        )
        out.extend(_split_properties(splits))
        out.append("")
        # assign: BMv2 assign_header
        out.append(f"def assign_{name}(d: {name}, s: {name}):")
        out.append("    if s.valid_:")
        out.append("        d.valid_ = True")
        for attr in stored:
            out.append(f"        d.{attr} = s.{attr}")
        out.append("    else:")
        out.append("        d.valid_ = False")
        out.append("")
        out.append(f"def copy_{name}(s: {name}):")
        out.append(f"    d: {name} = {name}.__new__({name})")
        out.append("    d.valid_ = s.valid_")
        for attr in stored:
            out.append(f"    d.{attr} = s.{attr}")
        out.append("    return d")
        out.append("")
        # setValid (BMv2 add_header): zero the fields when the header was invalid
        out.append(f"def reset_{name}(h: {name}):")
        for attr, default in zip(attrs, defaults):
            out.extend(f"    {line}" for line in _store_default("h", attr, default, splits))
        out.append("")
        out.append(f"def init_{name}(h: {name}):")
        out.extend(f"    {line}" for line in _header_init("h", type_))
        out.append("")
        out.append(f"def eq_{name}(a: {name}, b: {name}):")
        out.append("    if not a.valid_ or not b.valid_:")
        out.append("        return a.valid_ == b.valid_")
        cmp = " and ".join(f"a.{a} == b.{a}" for a in stored) or "True"
        out.append(f"    return {cmp}")
        out.append("")

    def _emit_union(self, name: str, members: list[tuple[str, str]]) -> None:
        out = self.lines
        self.classes[name] = [(a, cls) for a, cls in members]
        slots = ", ".join(repr(a) for a, _ in members)
        out.append(f"class {name}:")
        out.append(f"    __slots__ = ({slots},)")
        out.append("    def __init__(self):")
        for attr, cls in members:
            out.append(f"        self.{attr} = {cls}()")
        out.append("")
        out.append(f"def assign_{name}(d: {name}, s: {name}):")
        for attr, cls in members:
            out.append(f"    assign_{cls}(d.{attr}, s.{attr})")
        out.append("")
        out.append(f"def copy_{name}(s: {name}):")
        out.append(f"    d: {name} = {name}.__new__({name})")
        for attr, cls in members:
            out.append(f"    d.{attr} = copy_{cls}(s.{attr})")
        out.append("    return d")
        out.append("")
        out.append(f"def init_{name}(u: {name}):")
        for attr, cls in members:
            out.append(f"    init_{cls}(u.{attr})")
        if not members:
            out.append("    pass")
        out.append("")
        out.append(f"def valid_{name}(u: {name}):")
        cond = " or ".join(f"u.{attr}.valid_" for attr, _ in members) or "False"
        out.append(f"    return {cond}")
        out.append("")
        out.append(f"def eq_{name}(a: {name}, b: {name}):")
        cmp = " and ".join(f"eq_{cls}(a.{attr}, b.{attr})" for attr, cls in members) or "True"
        out.append(f"    return {cmp}")
        out.append("")

    def _emit_struct(self, name: str, type_: t.StructType) -> None:
        fields = [(py_attr(f.name), f.type) for f in type_.fields]
        splits = split_fields(fields)
        inits = [(attr, self._field_default(ftype)) for attr, ftype in fields]
        self.classes[name] = [
            (stored, self.cls(ftype) if is_aggregate(ftype) else None)
            for attr, ftype in fields
            for stored in _stored([attr], splits)
        ]
        self._note_scalars(name, fields)
        out = self.lines
        own = [attr for attr, _ in fields]
        base = ""
        if (
            self.standard_base
            and type_.name == "standard_metadata_t"
            and standard_metadata_problem(type_) is None
        ):
            # the fields of v1model's standard metadata are the base's (C fields)
            self.bases[name] = base = STANDARD_METADATA_BASE
            own = [attr for attr in own if attr not in STANDARD_METADATA_FIELDS]
        own = _stored(own, splits)
        slots = ", ".join(repr(a) for a in own)
        out.append(f"class {name}({base}):" if base else f"class {name}:")
        out.append(f"    __slots__ = ({slots}{',' if own else ''})")
        out.append(f"    p4_type = {type_.name!r}")
        out.append("    def __init__(self):")
        if not fields:
            out.append("        pass")
        for attr, init in inits:
            out.extend(f"        {line}" for line in _store_default("self", attr, init, splits))
        out.append("    def __repr__(self):")
        shown = " + ', ' + ".join(f"'{a}=' + repr(self.{a})" for a, _ in fields) or "''"
        out.append(f"        return '{type_.name}(' + {shown} + ')'")
        out.extend(_split_properties(splits))
        out.append("")
        out.append(f"def assign_{name}(d: {name}, s: {name}):")
        if not fields:
            out.append("    pass")
        for attr, ftype in fields:
            split = splits.get(attr)
            if split is not None:
                out.append(f"    d.{split.hi} = s.{split.hi}")
                out.append(f"    d.{split.lo} = s.{split.lo}")
                continue
            out.append(f"    {self.assign(f'd.{attr}', f's.{attr}', ftype)}")
        out.append("")
        out.append(f"def copy_{name}(s: {name}):")
        out.append(f"    d: {name} = {name}.__new__({name})")
        for attr, ftype in fields:
            split = splits.get(attr)
            if split is not None:
                out.append(f"    d.{split.hi} = s.{split.hi}")
                out.append(f"    d.{split.lo} = s.{split.lo}")
                continue
            out.append(f"    d.{attr} = {self.copy(f's.{attr}', ftype)}")
        out.append("    return d")
        out.append("")
        out.append(f"def init_{name}(s: {name}):")
        out.extend(f"    {line}" for line in self.struct_init_lines("s", type_) or ["pass"])
        out.append("")
        out.append(f"def eq_{name}(a: {name}, b: {name}):")
        parts = []
        for attr, ftype in fields:
            if is_aggregate(ftype):
                parts.append(f"eq_{self.cls(ftype)}(a.{attr}, b.{attr})")
            else:
                parts.extend(f"a.{a} == b.{a}" for a in _stored([attr], splits))
        out.append(f"    return {' and '.join(parts) or 'True'}")
        out.append("")

    def struct_init_lines(
        self, var: str, type_: t.StructType, skip: frozenset[str] = frozenset()
    ) -> list[str]:
        """Statements putting struct ``var`` back in the state of a new one (its headers
        and the headers of its stacks reset inline; temporaries ``h<N>`` and ``k<N>``), except
        the scalar fields named in ``skip``."""
        lines: list[str] = []
        splits = split_fields((py_attr(f.name), f.type) for f in type_.fields)
        for info in type_.fields:
            attr, ftype = py_attr(info.name), info.type
            if info.name in skip and not is_aggregate(ftype):
                continue
            if isinstance(ftype, t.HeaderType):  # inlined: one call resets all headers
                # one local per header, annotated with its class (the native build's type)
                local = f"h{len(lines)}"
                lines.append(f"{local}: {self.cls(ftype)} = {var}.{attr}")
                lines.extend(_header_init(local, ftype))
            elif isinstance(ftype, t.HeaderStackType) and isinstance(ftype.element, t.HeaderType):
                self.cls(ftype)
                # the stack's and the items' locals annotated with their classes (the
                # native build's types: C struct accesses instead of generic attributes)
                local = f"h{len(lines)}"
                stack = f"k{len(lines)}"
                lines.append(f"{stack}: {self.cls(ftype)} = {var}.{attr}")
                lines.append(f"{stack}.nxt = 0")
                lines.append(f"{local}: {self.cls(ftype.element)}")
                lines.append(f"for {local} in {stack}.items:")
                lines.extend(f"    {line}" for line in _header_init(local, ftype.element))
            elif is_aggregate(ftype):
                lines.append(f"init_{self.cls(ftype)}({var}.{attr})")
            else:
                lines.extend(_store_default(var, attr, self._field_default(ftype), splits))
        return lines

    def _emit_stack(self, name: str, type_: t.HeaderStackType, element: str) -> None:
        out = self.lines
        self.classes[name] = [("items", "list"), ("nxt", None)]
        out.append(f"class {name}:")
        out.append("    __slots__ = ('items', 'nxt')")
        out.append(f"    size = {type_.size}")
        out.append(f"    element = {element}")
        out.append("    def __init__(self):")
        out.append(f"        self.items = [{element}() for _ in range({type_.size})]")
        out.append("        self.nxt = 0")
        out.append("    def __repr__(self):")
        out.append("        return 'stack(next=%d, %r)' % (self.nxt, self.items)")
        out.append("")
        out.append(f"def assign_{name}(d: {name}, s: {name}):")
        out.append("    d.nxt = s.nxt")
        out.append("    for a, b in zip(d.items, s.items):")
        out.append(f"        assign_{element}(a, b)")
        out.append("")
        out.append(f"def copy_{name}(s: {name}):")
        out.append(f"    d: {name} = {name}.__new__({name})")
        out.append("    d.nxt = s.nxt")
        out.append(f"    d.items = [copy_{element}(x) for x in s.items]")
        out.append("    return d")
        out.append("")
        out.append(f"def init_{name}(s: {name}):")
        out.append("    s.nxt = 0")
        out.append("    for x in s.items:")
        out.append(f"        init_{element}(x)")
        out.append("")
        out.append(f"def eq_{name}(a: {name}, b: {name}):")
        # a loop, not all(<generator>): the native build then needs no generator type
        out.append("    for x, y in zip(a.items, b.items):")
        out.append(f"        if not eq_{element}(x, y):")
        out.append("            return False")
        out.append("    return True")
        out.append("")


def _header_init(var: str, type_: t.HeaderType) -> list[str]:
    """Statements putting header ``var`` back in the state of a new one (invalid, zero)."""
    lines = [f"{var}.valid_ = False"]
    splits = split_fields((py_attr(f.name), f.type) for f in type_.fields)
    for f in type_.fields:
        lines.extend(_store_default(var, py_attr(f.name), default_scalar(f.type), splits))
    return lines


def _stored(attrs: list[str], splits: dict[str, Split]) -> list[str]:
    """The attributes a class stores for fields ``attrs``: a split field's two halves."""
    out: list[str] = []
    for attr in attrs:
        split = splits.get(attr)
        out.extend((split.hi, split.lo) if split is not None else (attr,))
    return out


def _store_default(var: str, attr: str, default: str, splits: dict[str, Split]) -> list[str]:
    """Statements storing a new value's ``default`` (``0`` for a split field) into ``attr``."""
    split = splits.get(attr)
    if split is None:
        return [f"{var}.{attr} = {default}"]
    return [f"{var}.{split.hi} = 0", f"{var}.{split.lo} = 0"]


def _split_properties(splits: dict[str, Split]) -> list[str]:
    """The class-body lines of each split field's property: its value joined from the
    halves (``* 2**64``: a Python operation on both paths, the literal being beyond 64
    bits), and a value stored through it split (a value outside the field raises
    ``OverflowError``, as converting it to its bytes did)."""
    lines: list[str] = []
    for attr, split in splits.items():
        top = (1 << split.width) - 1
        lines.extend(
            [
                "    @property",
                f"    def {attr}(self):",
                f"        return (self.{split.hi} * {MASK64 + 1}) | self.{split.lo}",
                f"    @{attr}.setter",
                f"    def {attr}(self, v):",
                f"        if not 0 <= v <= {top}:",
                f"            raise OverflowError('{attr}: ' + repr(v) + ' is not a bit<{split.width}> value')",
                f"        self.{split.hi} = v >> {HALF_BITS}",
                f"        self.{split.lo} = v & {MASK64}",
            ]
        )
    return lines


def field_list_paths(
    type_: t.StructType, index: int, prefix: str = ""
) -> Iterator[tuple[str, t.Type]]:
    """``(attribute path, type)`` of the fields of ``type_`` annotated ``@field_list(index)``.

    A nested struct annotated with the index is preserved as a whole.
    """
    for info in type_.fields:
        path = f"{prefix}{py_attr(info.name)}"
        marked = False
        for annotation in info.annotations:
            if annotation.name != "field_list" or not annotation.args:
                continue
            for arg in annotation.args:
                if getattr(arg, "value", None) == index:
                    marked = True
        if marked:
            yield path, info.type
        elif isinstance(info.type, t.StructType):
            yield from field_list_paths(info.type, index, path + ".")
