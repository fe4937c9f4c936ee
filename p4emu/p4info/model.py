"""Target-neutral control-plane model of a P4 program.

The model lists what P4Runtime can see of a program: tables, actions, externs, controller
packet metadata and the types they use, each with its fully qualified control-plane name
(no leading dot), its annotations (already serialized the way p4c prints them, e.g.
``'@noWarn("unused")'``), its ``@brief`` / ``@description`` documentation and its explicit
``@id`` if any. Ids and aliases are *not* part of the model: :mod:`p4emu.p4info.builder`
derives them with p4c's rules.

List order matters: the builder emits objects in list order, so whoever fills the model
(:mod:`p4emu.p4info.extract` for P4 sources) puts them in p4c's order.

Objects that p4c registers in its symbol table without emitting them (``@hidden`` tables,
actions and controller headers, direct counters / meters no table uses) stay in the model
(``hidden=True``, or simply unreferenced): they still take part in id probing and aliases.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

# --------------------------------------------------------------------------- common parts


@dataclass(frozen=True)
class Documentation:
    """``@brief`` / ``@description`` text (P4Info ``doc``)."""

    brief: str = ""
    description: str = ""


@dataclass
class Preamble:
    """Name, explicit id, annotations and doc shared by every top-level object."""

    name: str
    explicit_id: int | None = None
    annotations: tuple[str, ...] = ()
    doc: Documentation | None = None


# --------------------------------------------------------------------------- type specs


@dataclass(frozen=True)
class BitstringSpec:
    """``bit<W>`` (signed=False) or ``int<W>`` (signed=True)."""

    width: int
    signed: bool = False


@dataclass(frozen=True)
class VarbitSpec:
    """``varbit<W>`` in a P4Info type spec; ``max_width`` is W."""

    max_width: int


@dataclass(frozen=True)
class BoolSpec:
    """A ``bool`` in a P4Info type spec (no parameters)."""


@dataclass(frozen=True)
class ErrorSpec:
    """The ``error`` type in a P4Info type spec (no parameters)."""


class NamedKind(Enum):
    """Which ``P4DataTypeSpec`` field a named type reference goes to."""

    STRUCT = "struct"
    HEADER = "header"
    HEADER_UNION = "header_union"
    ENUM = "enum"
    SERIALIZABLE_ENUM = "serializable_enum"
    NEW_TYPE = "new_type"


@dataclass(frozen=True)
class NamedSpec:
    """A reference to a type defined in :class:`TypeInfo`."""

    kind: NamedKind
    name: str


@dataclass(frozen=True)
class TupleSpec:
    """A ``tuple<...>`` in a P4Info type spec: its member types in order."""

    members: tuple[TypeSpec, ...]


@dataclass(frozen=True)
class HeaderStackSpec:
    """``H[N]``; ``union=True`` for a stack of header unions."""

    element: str
    size: int
    union: bool = False


TypeSpec = (
    BitstringSpec | VarbitSpec | BoolSpec | ErrorSpec | NamedSpec | TupleSpec | HeaderStackSpec
)


@dataclass(frozen=True)
class StructDef:
    """A struct type: its members (name, type spec) in declaration order."""

    members: tuple[tuple[str, TypeSpec], ...]


@dataclass(frozen=True)
class HeaderDef:
    """A header flattened like p4c does: nested struct fields become ``"s.f"``."""

    members: tuple[tuple[str, BitstringSpec | VarbitSpec], ...]


@dataclass(frozen=True)
class HeaderUnionDef:
    """A header union type: its members (name, header type name) in declaration order."""

    members: tuple[tuple[str, str], ...]  # (member name, header type name)


@dataclass(frozen=True)
class EnumDef:
    """A (non-serializable) enum type: its member names in declaration order."""

    members: tuple[str, ...]


@dataclass(frozen=True)
class SerializableEnumDef:
    """An ``enum bit<W>`` type: its width W and its members (name, value) in declaration order."""

    width: int
    members: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Translation:
    """``@p4runtime_translation(uri, bit<W> | string)``; ``sdn_bitwidth=None`` means string."""

    uri: str
    sdn_bitwidth: int | None


@dataclass(frozen=True)
class NewTypeDef:
    """A ``type`` declaration: its representation or its controller translation."""

    original: TypeSpec | None = None
    translation: Translation | None = None
    annotations: tuple[str, ...] = ()


@dataclass
class TypeInfo:
    """``P4TypeInfo``: the named types the rest of the model refers to."""

    structs: dict[str, StructDef] = field(default_factory=dict)
    headers: dict[str, HeaderDef] = field(default_factory=dict)
    header_unions: dict[str, HeaderUnionDef] = field(default_factory=dict)
    enums: dict[str, EnumDef] = field(default_factory=dict)
    serializable_enums: dict[str, SerializableEnumDef] = field(default_factory=dict)
    error_members: tuple[str, ...] | None = None
    new_types: dict[str, NewTypeDef] = field(default_factory=dict)


# --------------------------------------------------------------------------- actions


@dataclass
class ActionParam:
    """An action data parameter. ``bitwidth`` is None for a non-serializable enum."""

    name: str
    bitwidth: int | None
    explicit_id: int | None = None
    annotations: tuple[str, ...] = ()
    doc: Documentation | None = None
    type_name: str | None = None  # new type / enum name (P4Info ``type_name``)


@dataclass
class Action:
    """An action: preamble and action-data parameters; ``hidden`` for ``@hidden`` (numbered,
    not emitted)."""

    preamble: Preamble
    params: list[ActionParam] = field(default_factory=list)
    hidden: bool = False

    @property
    def name(self) -> str:
        return self.preamble.name


# --------------------------------------------------------------------------- tables


class MatchType(Enum):
    EXACT = "exact"
    LPM = "lpm"
    TERNARY = "ternary"
    RANGE = "range"
    OPTIONAL = "optional"
    SELECTOR = "selector"  # action selector input: consumes a field id, not emitted
    OTHER = "other"  # architecture-specific kind: emitted as ``other_match_type``


@dataclass
class MatchField:
    """One match field of a table's key: control-plane name, width in bits, match type, and the
    P4Info extras (explicit ``@id``, annotations, doc, new type or enum name)."""

    name: str
    bitwidth: int
    match_type: MatchType
    other_match_type: str = ""  # the match_kind name when match_type is OTHER
    explicit_id: int | None = None
    annotations: tuple[str, ...] = ()
    doc: Documentation | None = None
    type_name: str | None = None


class ActionScope(Enum):
    TABLE_AND_DEFAULT = "table_and_default"
    TABLE_ONLY = "table_only"  # @tableonly
    DEFAULT_ONLY = "default_only"  # @defaultonly


@dataclass
class ActionRef:
    """One entry of a table's ``actions`` list (annotations are those on the list entry)."""

    action: str
    scope: ActionScope = ActionScope.TABLE_AND_DEFAULT
    annotations: tuple[str, ...] = ()


@dataclass
class DefaultAction:
    """A table's (initial) default action and its action-data arguments, by parameter order."""

    action: str
    arguments: tuple[int | bool, ...] = ()
    is_const: bool = False


@dataclass
class Table:
    """A table: its key, actions and default action, ``size`` (1024 when the program gives
    none), the names of its implementation and direct resources (None: none); ``hidden``
    for ``@hidden`` (numbered, not emitted)."""

    preamble: Preamble
    match_fields: list[MatchField] = field(default_factory=list)
    action_refs: list[ActionRef] = field(default_factory=list)
    default_action: DefaultAction | None = None
    size: int = 1024
    is_const_table: bool = False
    has_initial_entries: bool = False
    implementation: str | None = None  # action profile / selector name
    direct_counter: str | None = None
    direct_meter: str | None = None
    supports_timeout: bool = False
    hidden: bool = False

    @property
    def name(self) -> str:
        return self.preamble.name


# --------------------------------------------------------------------------- externs


class CounterUnit(Enum):
    UNSPECIFIED = "unspecified"
    PACKETS = "packets"
    BYTES = "bytes"
    BOTH = "packets_and_bytes"


class MeterUnit(Enum):
    UNSPECIFIED = "unspecified"
    PACKETS = "packets"
    BYTES = "bytes"


@dataclass
class ActionProfile:
    """``action_profile`` (with_selector=False) or ``action_selector``.

    The table ids the P4Info lists come from the tables whose ``implementation`` names this
    profile (p4c keeps them in a set of table *names*, so they are sorted by name).
    """

    preamble: Preamble
    with_selector: bool
    size: int
    max_group_size: int = 0


@dataclass
class Counter:
    """An indexed ``counter``: unit, number of cells and the index's new type name (None: a
    plain ``bit<W>`` index)."""

    preamble: Preamble
    unit: CounterUnit
    size: int
    index_type_name: str | None = None


@dataclass
class DirectCounter:
    """A ``direct_counter``. It is emitted with the table whose ``direct_counter`` names it,
    right after that table's turn (p4c adds it while adding the table); one no table uses
    only takes part in ids and aliases."""

    preamble: Preamble
    unit: CounterUnit


@dataclass
class Meter:
    """An indexed ``meter``: unit, number of cells and the index's new type name (None: a plain
    ``bit<W>`` index)."""

    preamble: Preamble
    unit: MeterUnit
    size: int
    index_type_name: str | None = None


@dataclass
class DirectMeter:
    """A ``direct_meter``; emitted in the order of the tables using it (see DirectCounter)."""

    preamble: Preamble
    unit: MeterUnit


@dataclass
class Register:
    """A ``register<T>``: number of cells, the cell type T and the index's new type name (None:
    a plain ``bit<W>`` index)."""

    preamble: Preamble
    size: int
    type_spec: TypeSpec
    index_type_name: str | None = None


@dataclass
class Digest:
    """A ``digest<T>()`` data type; the name is the struct type's name."""

    preamble: Preamble
    type_spec: TypeSpec


@dataclass
class ValueSetMatch:
    """One match field of a value set; ``name`` is empty for a ``bit<W>`` element type."""

    name: str
    bitwidth: int
    match_type: MatchType = MatchType.EXACT
    other_match_type: str = ""
    explicit_id: int | None = None
    annotations: tuple[str, ...] = ()
    doc: Documentation | None = None


@dataclass
class ValueSet:
    """A parser ``value_set``: its size (most members) and the match fields of its element type."""

    preamble: Preamble
    size: int
    match: list[ValueSetMatch] = field(default_factory=list)
    # p4c numbers the members of a serializable-enum element type 1..n ignoring @id
    sequential_ids: bool = False


@dataclass
class ControllerMetadata:
    """One field of a controller header (P4Info ``ControllerPacketMetadata.Metadata``);
    ``hidden`` fields are numbered but not emitted."""

    name: str
    bitwidth: int
    explicit_id: int | None = None
    annotations: tuple[str, ...] = ()
    type_name: str | None = None
    hidden: bool = False  # still numbered, not emitted


@dataclass
class ControllerHeader:
    """A ``@controller_header("packet_in")`` header type.

    ``preamble.name`` is the annotation's string (the P4Info name and alias); ``type_name``
    is the header type's control-plane name, which is what the id is derived from.
    """

    preamble: Preamble
    type_name: str
    metadata: list[ControllerMetadata] = field(default_factory=list)
    hidden: bool = False


# --------------------------------------------------------------------------- package


@dataclass
class PkgInfo:
    """P4Info ``pkg_info``: the architecture and the ``@pkginfo`` keys of the main package
    instance (empty strings when not given)."""

    arch: str = "v1model"
    name: str = ""
    version: str = ""
    organization: str = ""
    contact: str = ""
    url: str = ""
    annotations: tuple[str, ...] = ()
    doc: Documentation | None = None


@dataclass
class ControlPlaneModel:
    """Everything P4Runtime sees of one program, in p4c's emission order."""

    pkg_info: PkgInfo | None = field(default_factory=PkgInfo)
    tables: list[Table] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    action_profiles: list[ActionProfile] = field(default_factory=list)
    counters: list[Counter] = field(default_factory=list)
    direct_counters: list[DirectCounter] = field(default_factory=list)
    meters: list[Meter] = field(default_factory=list)
    direct_meters: list[DirectMeter] = field(default_factory=list)
    controller_headers: list[ControllerHeader] = field(default_factory=list)
    value_sets: list[ValueSet] = field(default_factory=list)
    registers: list[Register] = field(default_factory=list)
    digests: list[Digest] = field(default_factory=list)
    # None: no ``type_info`` field at all (p4c only creates it when something touches it)
    type_info: TypeInfo | None = field(default_factory=TypeInfo)
