"""The ``.pxd`` declarations beside the compiled modules (docs/virtual-fabric.md, "Compiled
hot path") agree with their ``.py`` sources, checked without building anything.

A class declared ``cdef class`` in a ``.pxd`` is an extension type on the native path: it
has exactly the attributes declared there. An attribute that the ``.py`` sets but the
``.pxd`` does not declare works on the pure path and raises ``AttributeError`` on the
native one, so every ``self.NAME = ...`` of such a class must be declared; the class must
exist, must not be decorated (a decorator would rebuild an extension type) except as a
dataclass that Cython compiles itself (:func:`cython_dataclass`: then its fields are
declared in the ``.py``'s order, none again in a subclass) or, for a class listed in
:data:`UNTRACKED`, as exactly ``@cython.no_gc`` over ``@cython.cclass`` (:func:`untracked`:
Cython's directives, no-ops on the pure path), and its module must be one that the native
build compiles.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from clikit import hotpath

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("p4emu", "nic_emu", "vfabric", "mrc_wire", "clikit")
CLASS = re.compile(r"^cdef class (\w+)(?:\((\w+)\))?:")
FIELD = re.compile(r"^\s+cdef\s+(?:(?:public|readonly)\s+)?(.+)$")
METHOD = re.compile(r"^\s+cpdef\s+(?:[\w\"]+\s+)*?(\w+)\(")
#: the per-packet classes that must be extension types (their module's .pxd declares
#: them): the NIC core, its connection's parts, EV set, send and receive state and window
#: control, the fabric, p4emu's switch and runtime, the wire codec's messages and the
#: streamed payloads (docs/virtual-fabric.md)
TYPED: dict[str, set[str]] = {
    "mrc_wire.codec": {"DataPacket", "Envelope", "Nack", "Probe", "Sack"},
    "nic_emu.streams": {"ComparingReceiver", "StreamPayload", "StreamReceiver"},
    "nic_emu.mtbytes": {"WordStream"},
    "nic_emu.core": {"NicCore"},
    "nic_emu.congestion": {"FixedWindow", "Nscc", "WindowControl"},
    "nic_emu.ev_set": {"EvEntry", "EvSet"},
    "nic_emu.receiver": {"GoBackNReceiveState", "MessageTracker", "ReceiveState"},
    "nic_emu.sender": {"SendState", "TxPacket", "WriteRequest"},
    "nic_emu.connection.feedback": {"Feedback", "Losses", "TailProbe"},
    "nic_emu.connection.probes": {"PathProbes"},
    "nic_emu.connection.queue_pair": {"Connection"},
    "nic_emu.connection.receive": {"Receiver"},
    "nic_emu.connection.repath": {"Repath"},
    "nic_emu.connection.reverse": {"ReverseEvs"},
    "nic_emu.connection.rtt": {"RttTimers"},
    "nic_emu.connection.timers": {"Deadlines"},
    "nic_emu.connection.transmit": {"DataTransmitter", "Transmitter"},
    "vfabric.eventlist": {"EventHandle", "EventList"},
    "vfabric.nodes": {"EvCounters", "EvStats", "NicNode", "SwitchNode"},
    "vfabric.wires": {"Wire"},
    "p4emu.backend.rt": {"PacketContext"},
    "p4emu.switch": {"Switch"},
    "p4emu.runtime.clock": {"RealClock", "VirtualClock"},
    "p4emu.runtime.traffic_manager": {"QueuedPacket", "TrafficManager", "_Port", "_Queue"},
    "p4emu.runtime.tables": {"DefaultAction", "Table", "TableAction", "TableEntry"},
    "p4emu.runtime.externs": {"Counter", "Meter", "MeterCell", "RandomSource", "Register"},
}


def pxd_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.pxd"))


def module_of(pxd: Path) -> str:
    return ".".join(pxd.relative_to(ROOT).with_suffix("").parts)


def declared_bases(text: str) -> dict[str, str | None]:
    """``cdef class`` name -> the base class it declares (None: none)."""
    return {m.group(1): m.group(2) for m in map(CLASS.match, text.splitlines()) if m}


def declared_methods(text: str) -> dict[str, set[str]]:
    """``cdef class`` name -> the ``cpdef`` methods its body declares."""
    methods: dict[str, set[str]] = {}
    current: set[str] | None = None
    for line in text.splitlines():
        found = CLASS.match(line)
        if found:
            current = methods.setdefault(found.group(1), set())
        elif line.strip() and not line.startswith((" ", "\t", "@")):
            current = None
        elif current is not None and (method := METHOD.match(line)):
            current.add(method.group(1))
    return methods


def declared_signatures(text: str) -> dict[tuple[str, str], tuple[list[str], int]]:
    """(``cdef class`` name, ``cpdef`` method) -> its argument names after ``self`` and
    how many have a default (``=*``); a declaration may span lines."""
    signatures: dict[tuple[str, str], tuple[list[str], int]] = {}
    current: str | None = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        found = CLASS.match(line)
        if found:
            current = found.group(1)
            continue
        if line.strip() and not line.startswith((" ", "\t", "@")):
            current = None
        method = METHOD.match(line)
        if current is None or method is None:
            continue
        decl = line
        while decl.count("(") > decl.count(")"):
            i += 1
            decl += " " + lines[i].strip()
        inner = decl[decl.index("(") + 1 : decl.rindex(")")]
        args = [a.strip() for a in inner.split(",") if a.strip()]
        names = [a.split("=")[0].split()[-1] for a in args[1:]]  # after self
        signatures[(current, method.group(1))] = (names, sum(a.endswith("=*") for a in args))
    return signatures


def declared_classes(text: str) -> dict[str, set[str]]:
    """``cdef class`` name -> the attribute names its body declares."""
    return {cls: set(names) for cls, names in declared_field_order(text).items()}


def declared_field_order(text: str) -> dict[str, list[str]]:
    """``cdef class`` name -> the attribute names its body declares, in their order."""
    classes: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = CLASS.match(line)
        if found:
            current = classes.setdefault(found.group(1), [])
            continue
        if not line.startswith((" ", "\t")):
            current = None  # a module-level declaration ends the class body
            continue
        field = FIELD.match(line)
        if current is None or field is None:
            continue
        decl = field.group(1).split("#")[0]
        if "(" in decl:  # a cdef method
            continue
        # "TYPE name" or "TYPE a, b" (the type may be two words: long long); a pointer's
        # star is the type's, not the name's ("long long *p, *q")
        first, *more = decl.split(",")
        current.append(first.split()[-1].lstrip("*"))
        current.extend(n.strip().lstrip("*") for n in more)
    return classes


def inherited_fields(
    cls: str, fields: dict[str, set[str]], bases: dict[str, str | None]
) -> set[str]:
    """The attributes ``cls`` has: its own declared ones and those of its declared bases
    (in the same ``.pxd``)."""
    names: set[str] = set()
    current: str | None = cls
    while current is not None:
        names |= fields.get(current, set())
        current = bases.get(current)
    return names


def assigned_attributes(node: ast.ClassDef) -> set[str]:
    """Every ``self.NAME`` a method of the class assigns (plain, augmented, annotated,
    and inside tuple targets)."""
    names: set[str] = set()

    def targets(target: ast.expr) -> None:
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            if target.value.id == "self":
                names.add(target.attr)
        elif isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                targets(elt)

    for item in ast.walk(node):
        if isinstance(item, ast.Assign):
            for target in item.targets:
                targets(target)
        elif isinstance(item, ast.AugAssign | ast.AnnAssign):
            targets(item.target)
    return names


#: the arguments Cython's compiled dataclasses take (Cython/Compiler/Dataclass.py): a
#: ``slots=True`` dataclass, for one, does not compile
CYTHON_DATACLASS_ARGS = {
    "init", "repr", "eq", "order", "unsafe_hash", "frozen", "kw_only", "match_args",
}  # fmt: skip


def cython_dataclass(decorators: list[ast.expr]) -> bool:
    """Whether ``decorators`` is one ``@dataclass`` that Cython compiles on an extension
    type (``dataclass`` or ``dataclass(...)`` with constant True/False arguments it
    takes), keeping the dataclass's __init__, __eq__, __repr__ and fields."""
    if len(decorators) != 1:
        return False
    (dec,) = decorators
    if isinstance(dec, ast.Name):
        return dec.id == "dataclass"
    return (
        isinstance(dec, ast.Call)
        and isinstance(dec.func, ast.Name)
        and dec.func.id == "dataclass"
        and not dec.args
        and all(
            k.arg in CYTHON_DATACLASS_ARGS
            and isinstance(k.value, ast.Constant)
            and isinstance(k.value.value, bool)
            for k in dec.keywords
        )
    )


#: the extension types made without the cycle collector (``@cython.no_gc`` and
#: ``@cython.cclass`` on the class in its ``.py``: Cython ignores ``no_gc`` in a ``.pxd``),
#: each because nothing it may hold can refer back to it, as a comment on the class says
#: and docs/virtual-fabric.md records (NIC per packet, round 9): untracked, such an object
#: in a reference cycle would never be freed
UNTRACKED: dict[str, set[str]] = {
    "nic_emu.ev_set": {"EvEntry"},
}
#: the two decorators an UNTRACKED class carries, top first: Cython refuses ``no_gc``
#: below ``cclass`` ("not allowed in class scope")
UNTRACKED_DECORATORS = ["no_gc", "cclass"]


def untracked(decorators: list[ast.expr]) -> bool:
    """Whether ``decorators`` are exactly ``@cython.no_gc`` over ``@cython.cclass``,
    neither called: what makes an extension type that the cycle collector does not track
    (only for the classes of :data:`UNTRACKED`)."""
    names = [
        dec.attr
        for dec in decorators
        if isinstance(dec, ast.Attribute)
        and isinstance(dec.value, ast.Name)
        and dec.value.id == "cython"
    ]
    return len(names) == len(decorators) and names == UNTRACKED_DECORATORS


def dataclass_fields(node: ast.ClassDef) -> list[str]:
    """The fields a dataclass body declares (annotated names), in order."""
    return [
        item.target.id
        for item in node.body
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
    ]


def source_classes(source: Path) -> dict[str, ast.ClassDef]:
    tree = ast.parse(source.read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def test_the_parser_reads_declarations() -> None:
    text = (
        "cimport cython\n\ncdef class A:\n    cdef public long long x, y\n"
        "    cdef dict z  # a comment\n    cpdef f(self, object a)\n\n"
        "cdef Py_ssize_t _G\n\ncdef class B:\n    cdef readonly object w\n"
    )
    assert declared_classes(text) == {"A": {"x", "y", "z"}, "B": {"w"}}


def test_the_parser_reads_bases_and_methods() -> None:
    text = (
        "cimport cython\n\ncdef class A:\n    cdef public object x\n"
        "    @cython.locals(y=object)\n    cpdef f(self, object a)\n"
        "    cpdef list g(self)\n\ncdef class B(A):\n    pass\n\n"
        "cpdef A h(A a)\n"
    )
    assert declared_bases(text) == {"A": None, "B": "A"}
    assert declared_methods(text) == {"A": {"f", "g"}, "B": set()}


def test_a_class_has_the_fields_of_its_declared_bases() -> None:
    text = (
        "cdef class A:\n    cdef public long long x\n\n"
        "cdef class B(A):\n    cdef public object y\n\ncdef class C(B):\n    pass\n"
    )
    fields, bases = declared_classes(text), declared_bases(text)
    assert inherited_fields("C", fields, bases) == {"x", "y"}
    assert inherited_fields("A", fields, bases) == {"x"}


def test_the_parser_reads_the_order_of_fields() -> None:
    text = "cdef class A:\n    cdef public object b\n    cdef public long long a, c\n"
    assert declared_field_order(text) == {"A": ["b", "a", "c"]}


def test_the_parser_reads_a_pointer_field_by_its_name() -> None:
    text = "cdef class A:\n    cdef long long *p\n    cdef char *q, *r\n    cdef object s\n"
    assert declared_field_order(text) == {"A": ["p", "q", "r", "s"]}


def test_only_a_dataclass_that_cython_compiles_is_allowed() -> None:
    def decorators(source: str) -> list[ast.expr]:
        node = ast.parse(source + "\nclass A:\n    x: int\n").body[0]
        assert isinstance(node, ast.ClassDef)
        return node.decorator_list

    assert cython_dataclass(decorators("@dataclass"))
    assert cython_dataclass(decorators("@dataclass(kw_only=True, eq=True)"))
    assert not cython_dataclass(decorators("@dataclass(slots=True, kw_only=True)"))
    assert not cython_dataclass(decorators("@dataclass(kw_only=FLAG)"))
    assert not cython_dataclass(decorators("@total_ordering"))
    assert not cython_dataclass(decorators("@dataclass\n@total_ordering"))
    assert not cython_dataclass(decorators("@cython.cclass\n@cython.no_gc"))
    node = ast.parse("class A:\n    x: int\n    y: int = 0\n    z = 1\n").body[0]
    assert isinstance(node, ast.ClassDef)
    assert dataclass_fields(node) == ["x", "y"]


def test_only_cclass_and_no_gc_together_make_an_untracked_type() -> None:
    def decorators(source: str) -> list[ast.expr]:
        node = ast.parse(source + "\nclass A:\n    x: int\n").body[0]
        assert isinstance(node, ast.ClassDef)
        return node.decorator_list

    assert untracked(decorators("@cython.no_gc\n@cython.cclass"))
    for refused in (
        "@cython.cclass\n@cython.no_gc",  # the order Cython refuses
        "@cython.no_gc",  # alone: not an extension type on its own
        "@cython.cclass",
        "@cython.no_gc\n@cython.cclass\n@cython.final",
        "@cython.no_gc_clear\n@cython.cclass",
        "@cython.cclass\n@cython.cclass",
        "@cython.no_gc()\n@cython.cclass",
        "@no_gc\n@cython.cclass",
        "@cy.no_gc\n@cy.cclass",
        "@cython.no_gc\n@cython.cclass\n@total_ordering",
        "@dataclass",
        "@total_ordering",
    ):
        assert not untracked(decorators(refused)), refused


def test_only_the_listed_classes_may_be_untracked() -> None:
    """The rule of :func:`test_declarations_match_the_source` for a decorated class: an
    untracked type only where UNTRACKED lists it (a compiled type, declared in its .pxd)."""
    for module, classes in UNTRACKED.items():
        assert classes <= TYPED.get(module, set()), f"{module}: {classes} not all in TYPED"
    assert allowed_decorators("nic_emu.ev_set", "EvEntry", "@cython.no_gc\n@cython.cclass")
    assert not allowed_decorators("nic_emu.ev_set", "EvSet", "@cython.no_gc\n@cython.cclass")
    assert not allowed_decorators("nic_emu.core", "EvEntry", "@cython.no_gc\n@cython.cclass")
    assert not allowed_decorators("nic_emu.ev_set", "EvEntry", "@cython.cclass\n@cython.final")
    assert allowed_decorators("nic_emu.ev_set", "EvSet", "@dataclass")


def test_each_untracked_type_is_made_so_and_has_no_declared_subclass() -> None:
    """A class UNTRACKED lists carries the two decorators in its source (the list says what
    the build does), and no ``.pxd`` derives a type from it (a subclass could hold what
    refers back to it, and its base's fields would not be traversed)."""
    bases = {
        cls: (module_of(pxd), base)
        for pxd in pxd_files()
        for cls, base in declared_bases(pxd.read_text(encoding="utf-8")).items()
    }
    for module, classes in UNTRACKED.items():
        source = source_classes(hotpath.source_of(module))
        for cls in classes:
            assert untracked(source[cls].decorator_list), f"{module}.{cls} is tracked"
            derived = sorted(c for c, (_, base) in bases.items() if base == cls)
            assert not derived, f"{module}.{cls}: {derived} derive from an untracked type"


def allowed_decorators(module: str, cls: str, source: str) -> bool:
    node = ast.parse(source + f"\nclass {cls}:\n    x: int\n").body[0]
    assert isinstance(node, ast.ClassDef)
    return decoration_problem(module, node) is None


def decoration_problem(module: str, node: ast.ClassDef) -> str | None:
    """Why ``node``'s decorators are refused on an extension type of ``module`` (None: they
    are not): a Cython dataclass anywhere, ``cclass`` + ``no_gc`` only where listed."""
    if not node.decorator_list or cython_dataclass(node.decorator_list):
        return None
    if untracked(node.decorator_list):
        if node.name in UNTRACKED.get(module, set()):
            return None
        return (
            f"{module}.{node.name}: an untracked type (cython.cclass + cython.no_gc) must be "
            "listed in UNTRACKED, once nothing it holds can refer back to it"
        )
    return (
        f"{module}.{node.name}: an extension type cannot be decorated, except as a dataclass "
        "that Cython compiles or, where UNTRACKED lists it, as cython.cclass + cython.no_gc"
    )


def test_the_checker_finds_an_undeclared_attribute() -> None:
    cls = ast.parse(
        "class A:\n    def __init__(self):\n        self.x = 1\n        self.y, self.z = 2, 3\n"
        "    def f(self):\n        self.w += 1\n        self.v: int = 0\n"
    ).body[0]
    assert isinstance(cls, ast.ClassDef)
    assert assigned_attributes(cls) - {"x", "y", "z", "w"} == {"v"}


@pytest.mark.parametrize("pxd", pxd_files(), ids=module_of)
def test_declarations_match_the_source(pxd: Path) -> None:
    name = module_of(pxd)
    assert name in hotpath.COMPILED_MODULES, f"{pxd.name}: {name} is not compiled"
    source = pxd.with_suffix(".py")
    assert source.is_file(), f"{pxd} has no .py beside it"
    classes = source_classes(source)
    text = pxd.read_text(encoding="utf-8")
    fields = declared_classes(text)
    for cls in fields:
        assert cls in classes, f"{pxd.name} declares {cls}, which {source.name} does not define"
        node = classes[cls]
        problem = decoration_problem(name, node)
        assert problem is None, problem
        if node.decorator_list and cython_dataclass(node.decorator_list):
            own = dataclass_fields(node)
            assert declared_field_order(text)[cls] == own, (
                f"{name}.{cls}: {pxd.name} must declare the dataclass's fields {own} in the "
                "source's order (the order of its __init__, repr and fields())"
            )
            base = declared_bases(text)[cls]
            again = set(own) & (
                inherited_fields(base, fields, declared_bases(text)) if base else set()
            )
            assert not again, f"{name}.{cls}: {sorted(again)} declared again (Cython refuses)"
        missing = assigned_attributes(node) - inherited_fields(cls, fields, declared_bases(text))
        assert not missing, (
            f"{name}.{cls} sets {sorted(missing)} but {pxd.name} does not declare them "
            "(the native path would raise AttributeError)"
        )


def base_name(node: ast.ClassDef) -> str | None:
    if not node.bases:
        return None
    (base,) = node.bases  # an extension type has one base at most
    return base.id if isinstance(base, ast.Name) else ast.unparse(base)


@pytest.mark.parametrize("pxd", pxd_files(), ids=module_of)
def test_bases_and_methods_match_the_source(pxd: Path) -> None:
    """A declared base is the source's base, and every declared ``cpdef`` method is a
    method of the source class (the native build fails on either mismatch)."""
    text = pxd.read_text(encoding="utf-8")
    classes = source_classes(pxd.with_suffix(".py"))
    for cls, base in declared_bases(text).items():
        assert base_name(classes[cls]) == base, f"{module_of(pxd)}.{cls}: base {base}"
    for cls, methods in declared_methods(text).items():
        defined = {n.name for n in classes[cls].body if isinstance(n, ast.FunctionDef)}
        assert methods <= defined, f"{module_of(pxd)}.{cls}: {sorted(methods - defined)}"


@pytest.mark.parametrize("pxd", pxd_files(), ids=module_of)
def test_cpdef_signatures_match_the_source(pxd: Path) -> None:
    """Every declared ``cpdef`` method takes the source method's arguments, in order,
    with as many defaults and no ``*args``, ``**kwargs`` or keyword-only ones: a count
    that differs fails the native build (that module, and with it every other, then
    loads pure), and a renamed argument compiles but types another name than the
    source's."""
    classes = source_classes(pxd.with_suffix(".py"))
    for (cls, name), (declared, defaults) in declared_signatures(pxd.read_text()).items():
        node = next(n for n in classes[cls].body if getattr(n, "name", None) == name)
        assert isinstance(node, ast.FunctionDef)
        spec = node.args
        where = f"{module_of(pxd)}.{cls}.{name}"
        assert not (spec.vararg or spec.kwarg or spec.kwonlyargs), f"{where}: not cpdef-able"
        assert [a.arg for a in spec.args[1:]] == declared, where
        assert len(spec.defaults) == defaults, f"{where}: defaults"


def test_the_signature_parser_reads_multiline_declarations() -> None:
    text = (
        "cdef class A:\n    cdef public object x\n    cpdef f(self, object a, list b=*)\n"
        "    @cython.locals(y=object)\n    cpdef bint g(\n        self, long long c,\n"
        '        object d\n    ) except -1\n    cpdef "long long" h(self)\n'
    )
    assert declared_signatures(text) == {
        ("A", "f"): (["a", "b"], 1),
        ("A", "g"): (["c", "d"], 0),
        ("A", "h"): ([], 0),
    }


@pytest.mark.parametrize("module", sorted(TYPED))
def test_the_per_packet_classes_are_extension_types(module: str) -> None:
    """Each per-packet class is declared in its module's ``.pxd`` (an undeclared class
    compiles as a plain Python class, and the code that reads its fields as a C struct
    no longer builds)."""
    pxd = hotpath.source_of(module).with_suffix(".pxd")
    assert pxd.is_file(), f"{module} has no .pxd"
    declared = set(declared_classes(pxd.read_text(encoding="utf-8")))
    assert TYPED[module] <= declared, sorted(TYPED[module] - declared)
