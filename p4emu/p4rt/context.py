"""What every entity handler shares: the program's objects plus P4Runtime-only state.

Some P4Runtime state has no place in the runtime objects (they model the data plane):
the controller metadata of default entries, the original ``ActionProfileActionSet`` of
one-shot entries, watch ports, how a replica's port was spelled, digest configurations.
It lives in :class:`Context` next to the :class:`ProgramObjects`.

Every write handler validates the whole update first and only then changes state, so a
refused update changes nothing; it returns an :data:`Undo` closure that restores the
previous state exactly (used by ``ROLLBACK_ON_ERROR`` / ``DATAPLANE_ATOMIC``).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from p4emu.p4rt.codec import Specs
from p4emu.p4rt.exceptions import invalid
from p4emu.p4rt_client.schema import FieldSchema
from p4emu.proto import p4r
from p4emu.runtime.action_profiles import ActionProfile
from p4emu.runtime.externs import DigestConfig
from p4emu.runtime.objects import ActionInfo, ProgramObjects, TableInfo

Undo = Callable[[], None]

T = TypeVar("T")


class _EveryId:
    """Every id: objects built without a P4Info's list (``ProgramObjects.p4info_ids``)."""

    def __contains__(self, item: object) -> bool:
        return True


_EVERY_ID = _EveryId()


def no_undo() -> None:
    """Undo of an update that changed nothing."""


@dataclass(frozen=True)
class Kind:
    """A P4Info object kind: its id prefix (``p4.config.v1.P4Ids``) and a label for errors."""

    prefix: int
    label: str


ACTION = Kind(0x01, "action")
TABLE = Kind(0x02, "table")
VALUE_SET = Kind(0x03, "value set")
ACTION_PROFILE = Kind(0x11, "action profile")
COUNTER = Kind(0x12, "counter")
DIRECT_COUNTER = Kind(0x13, "direct counter")
METER = Kind(0x14, "meter")
DIRECT_METER = Kind(0x15, "direct meter")
REGISTER = Kind(0x16, "register")
DIGEST = Kind(0x17, "digest")


@dataclass
class OneShotRecord:
    """A table entry programmed with an ``ActionProfileActionSet``: the set as written and
    the hidden group / members p4emu created for it in the selector."""

    action_set: p4r.ActionProfileActionSet
    group_id: int
    member_ids: tuple[int, ...]


@dataclass
class Context:
    """The state every entity handler shares: the program's objects plus the P4Runtime-only
    state that has no place in them (module docstring), and lookup caches."""

    objects: ProgramObjects
    #: table name -> (controller_metadata, metadata) of its default entry
    default_entry_meta: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    #: (table name, canonical key, priority) -> one-shot record
    oneshots: dict[tuple[str, tuple[tuple[int, int], ...], int], OneShotRecord] = field(
        default_factory=dict
    )
    #: profile name -> next id for hidden one-shot members / groups
    oneshot_next_id: dict[str, int] = field(default_factory=dict)
    #: (profile name, group id) -> member id -> ("watch", int) | ("watch_port", bytes)
    group_watch: dict[tuple[str, int], dict[int, tuple[str, Any]]] = field(default_factory=dict)
    #: ("mc", group id) / ("clone", session id) -> replica (port, instance) -> port spelling
    replica_kinds: dict[tuple[str, int], dict[tuple[int, int], str]] = field(default_factory=dict)
    #: multicast group id -> MulticastGroupEntry.metadata
    mc_metadata: dict[int, bytes] = field(default_factory=dict)
    #: digest id -> configuration written by the controller (INSERT enables the digest)
    digest_configs: dict[int, DigestConfig] = field(default_factory=dict)
    #: table name -> what the INSERT fast path needs of its key (p4rt.table_entries)
    key_layouts: dict[str, object] = field(default_factory=dict)
    _match_specs: dict[str, Specs] = field(default_factory=dict)
    _param_specs: dict[int, Specs] = field(default_factory=dict)
    _ids: dict[tuple[int, str], int] = field(default_factory=dict)

    # --- lookups by P4Info id (unknown id -> INVALID_ARGUMENT, as PI) ---------------------

    def lookup(self, mapping: Mapping[str, T], object_id: int, kind: Kind) -> tuple[str, T]:
        """``(name, object)`` of the ``kind`` object with P4Info id ``object_id``.

        The id's top byte must be the kind's prefix (PI's ``check_p4_id``), so a direct
        counter id is not accepted where a counter id is expected.
        """
        name = self.objects.names_by_id.get(object_id)
        if (
            object_id >> 24 != kind.prefix
            or name is None
            or name not in mapping
            or object_id not in self.listed_ids()
        ):
            raise invalid(f"unknown {kind.label} id {object_id} (0x{object_id:08x})")
        return name, mapping[name]

    def listed_ids(self) -> Container[int]:
        """The ids a controller can name: those the program's P4Info lists.

        p4c leaves out of the P4Info (and the BMv2 JSON) what the program never uses, e.g.
        a table no statement applies; p4emu still builds it, but BMv2's P4Runtime server
        answers ``INVALID_ARGUMENT`` ("Invalid P4 id") for its id, and so does p4emu.
        """
        listed = self.objects.p4info_ids
        return _EVERY_ID if listed is None else listed

    def id_of(self, kind: Kind, name: str) -> int:
        """The P4Info id of the ``kind`` object called ``name``."""
        if not self._ids:
            for object_id, object_name in self.objects.names_by_id.items():
                self._ids[(object_id >> 24, object_name)] = object_id
        return self._ids[(kind.prefix, name)]

    def table(self, table_id: int) -> TableInfo:
        return self.lookup(self.objects.table_info, table_id, TABLE)[1]

    def tables(self) -> list[TableInfo]:
        """Every table the P4Info lists (what a wildcard read reads)."""
        listed = self.listed_ids()
        return [info for info in self.objects.table_info.values() if info.id in listed]

    def action(self, action_id: int) -> ActionInfo:
        return self.lookup(self.objects.actions, action_id, ACTION)[1]

    def profile(self, profile_id: int) -> tuple[str, ActionProfile]:
        return self.lookup(self.objects.action_profiles, profile_id, ACTION_PROFILE)

    def match_specs(self, info: TableInfo) -> Specs:
        specs = self._match_specs.get(info.name)
        if specs is None:
            specs = Specs(
                FieldSchema(f.name, f.id, f.width, f.match_kind.upper()) for f in info.key
            )
            self._match_specs[info.name] = specs
        return specs

    def param_specs(self, action_id: int) -> Specs:
        specs = self._param_specs.get(action_id)
        if specs is None:
            action = self.action(action_id)
            specs = Specs(FieldSchema(p.name, p.id, p.width, "PARAM") for p in action.params)
            self._param_specs[action_id] = specs
        return specs

    # --- one-shot bookkeeping -----------------------------------------------------------

    def profile_uses_oneshot(self, profile_name: str) -> bool:
        return any(key[0] in self._tables_of_profile(profile_name) for key in self.oneshots)

    def _tables_of_profile(self, profile_name: str) -> set[str]:
        return {
            info.name
            for info in self.objects.table_info.values()
            if info.action_profile == profile_name
        }

    def new_oneshot_id(self, profile_name: str) -> int:
        next_id = self.oneshot_next_id.get(profile_name, 1)
        self.oneshot_next_id[profile_name] = next_id + 1
        return next_id
