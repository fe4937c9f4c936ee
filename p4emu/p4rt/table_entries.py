"""``TableEntry``, ``DirectCounterEntry`` and ``DirectMeterEntry`` entities.

Write semantics (P4Runtime spec "TableEntry", "Default Entry", "Constant Tables",
"Direct Resources", "Idle-timeout"; PI ``DeviceMgr`` where the spec is silent):

- ``time_since_last_hit`` or ``is_const`` set in a write: INVALID_ARGUMENT.
- The default entry (``is_default_action``) can only be MODIFYed (INSERT/DELETE:
  INVALID_ARGUMENT), with an empty match and priority 0; an unset action resets it to
  the program's default (controller metadata too). A ``const default_action`` is
  PERMISSION_DENIED; indirect tables keep their default (INVALID_ARGUMENT, as PI).
- Tables with ``const entries``: INSERT/DELETE are PERMISSION_DENIED; MODIFY may only
  change direct resources (an action is PERMISSION_DENIED).
- Tables with program entries (``entries``, not const): p4c 1.2.4.8 writes them into the
  BMv2 JSON as it writes ``const entries``, and BMv2 marks every table whose JSON has
  entries immutable, so its P4Runtime server refuses an INSERT (UNKNOWN, "Error when
  adding match entry to target") and, knowing only the entries it added itself, answers
  MODIFY / DELETE with NOT_FOUND ("Cannot find match entry"); p4emu answers the same.
  The default entry can still be MODIFYed.
- A table (or any object) the P4Info does not list (p4c leaves out a table no statement
  applies) is an unknown id: INVALID_ARGUMENT, as BMv2 (``Context.listed_ids``).
- LPM prefix lengths count over the key's bytestring, padded to whole bytes, as BMv2's
  (``codec.lpm_padding``).
- Keyless tables refuse INSERT (INVALID_ARGUMENT). Priority must be >= 1 exactly when the
  table has ternary/range/optional keys, 0 otherwise (INVALID_ARGUMENT).
- Action: unknown id / not in the table / wrong parameters: INVALID_ARGUMENT; scope
  violation (``@tableonly`` as default, ``@defaultonly`` in an entry): PERMISSION_DENIED;
  member/group/action-set in a direct table or a direct action in an indirect one:
  INVALID_ARGUMENT; unknown member/group: NOT_FOUND.
- INSERT: ALREADY_EXISTS, RESOURCE_EXHAUSTED when ``size`` entries are installed.
  MODIFY: NOT_FOUND; an unset action keeps the entry's action; controller metadata,
  metadata and idle timeout are replaced (full-snapshot semantics); an unset
  ``meter_config`` resets the direct meter, an unset ``counter_data`` keeps the counter.
  DELETE: NOT_FOUND; only the key counts.
- ``idle_timeout_ns`` must be >= 0, and 0 unless the table supports idle timeouts.
- ``counter_data`` / ``meter_config`` need a direct counter / meter (INVALID_ARGUMENT);
  ``meter_counter_data`` (per-colour counters) is UNIMPLEMENTED.

Direct counter / meter entries: MODIFY only (INVALID_ARGUMENT otherwise), NOT_FOUND for
a missing entry, INVALID_ARGUMENT when the table has no such resource; an unset ``data``
leaves the counter unchanged, an unset ``config`` resets the meter. The default entry has
no direct resources in BMv2 (UNIMPLEMENTED).

Reads: ``table_id`` 0 reads every table; an empty match reads every entry (filtered by
``action`` id, ``priority``, ``controller_metadata`` and ``metadata`` when set, as the
spec's wildcard reads); ``is_default_action`` reads the default entry. ``counter_data``,
``meter_config`` and ``time_since_last_hit`` are returned only when set in the request
(a default meter configuration is omitted). Results are canonical.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from p4emu.p4rt.codec import (
    add_matches,
    add_params,
    decode_matches,
    decode_params,
    fast_params,
    lpm_padding,
)
from p4emu.p4rt.context import ACTION, Context, OneShotRecord, Undo, no_undo
from p4emu.p4rt.exceptions import (
    P4RuntimeError,
    already_exists,
    invalid,
    not_found,
    permission_denied,
    resource_exhausted,
    unimplemented,
    unknown,
)
from p4emu.p4rt.externs import counter_update, decode_meter_config, encode_meter_config
from p4emu.p4rt.profiles import (
    OneShotAction,
    create_oneshot,
    delete_oneshot,
    plan_oneshot,
    profile_error,
)
from p4emu.proto import p4r
from p4emu.runtime.action_profiles import GROUP_REF, MEMBER_REF, ActionProfile
from p4emu.runtime.exceptions import ActionProfileError, TableError
from p4emu.runtime.externs import CounterType, MeterConfig
from p4emu.runtime.objects import TableInfo
from p4emu.runtime.tables import ActionScope, MatchValue, TableEntry

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE
_ENTITY_FROM_BYTES = p4r.Entity.FromString


# Enum members looked up once: attribute access on an Enum class is a descriptor call,
# paid twice per table write otherwise.
_TABLE_ONLY = ActionScope.table_only
_DEFAULT_ONLY = ActionScope.default_only


@dataclass
class _ActionPlan:
    """A validated ``TableAction``: what the entry will store, and any one-shot set."""

    action_id: int
    args: tuple[int, ...]
    oneshot: list[OneShotAction] | None = None
    action_set: p4r.ActionProfileActionSet | None = None


@dataclass
class _DirectPlan:
    """What an update does to an entry's direct resources: the counter's new (packets, bytes)
    (None: keep), and whether the meter is set, to ``meter`` (None: reset)."""

    counter: tuple[int | None, int | None] | None = None  # (packets, bytes); None = keep
    meter_set: bool = False
    meter: MeterConfig | None = None


@dataclass
class _Snapshot:
    """Everything of an entry a MODIFY may change (restored by its undo)."""

    action_id: int
    args: tuple[int, ...]
    idle_timeout_ns: int
    controller_metadata: int
    metadata: bytes
    packets: int
    bytes: int
    meter_config: MeterConfig | None
    oneshot: OneShotRecord | None = None
    extra: list[Undo] = field(default_factory=list)


class TableEntries:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    # ======================================================================== writes

    def write(self, update_type: int, te: p4r.TableEntry) -> Undo:
        info = self.ctx.table(te.table_id)
        where = f"table {info.name}"
        if te.HasField("time_since_last_hit"):
            raise invalid(f"{where}: time_since_last_hit must not be set in a write")
        if te.is_const:
            raise invalid(f"{where}: is_const must be false in a write")
        if update_type == INSERT:
            return self._insert(info, te, where)
        if update_type == MODIFY:
            if te.is_default_action:
                return self._modify_default(info, te, where)
            return self._modify(info, te, where)
        if update_type == DELETE:
            return self._delete(info, te, where)
        raise invalid(f"{where}: invalid update type {update_type}")

    # --- INSERT ------------------------------------------------------------------------

    def _insert(self, info: TableInfo, te: p4r.TableEntry, where: str) -> Undo:
        table = info.table
        if te.is_default_action:
            raise invalid(f"{where}: the default entry cannot be INSERTed, use MODIFY")
        if info.is_const:
            raise permission_denied(f"{where}: the table has const entries; INSERT is refused")
        if info.initial_entries:
            raise unknown(
                f"{where}: Error when adding match entry to target (the program gives the "
                "table entries: BMv2 makes its entries immutable, const or not)"
            )
        if not info.key:
            raise invalid(f"{where}: the table has no key; only its default entry can be set")
        if not te.HasField("action"):
            raise invalid(f"{where}: the action must be set for an INSERT")
        key = self._fast_key(info, te.match)
        if key is None:
            values, priority = self._key(info, te, where)
            key = self._canonical(info, values, where)
        else:
            priority = self._priority(info, te.priority, where)
        plan = self._plan_action(info, te.action, where, for_default=False)
        direct = self._plan_direct(info, te, where, inserting=True)
        idle_timeout_ns = te.idle_timeout_ns
        if idle_timeout_ns:
            self._check_idle_timeout(info, idle_timeout_ns, where)
        if table.find_canonical(key, priority) is not None:
            raise already_exists(f"{where}: an entry with this match key and priority exists")
        if len(table) >= table.size:
            raise resource_exhausted(f"{where}: the table is full ({table.size} entries)")
        # --- commit: everything is validated above, so the table's trusted path is used
        undos: list[Undo] = []
        if plan.oneshot is None:
            action_id, args, record = plan.action_id, plan.args, None
        else:
            action_id, args, record = self._commit_action(info, plan, undos)
        try:
            entry = table.insert_validated(
                key,
                action_id,
                args,
                priority=priority,
                idle_timeout_ns=idle_timeout_ns,
                controller_metadata=te.controller_metadata,
                metadata=te.metadata,
            )
        except TableError as error:
            _run(undos)
            raise _table_error(error) from None
        if info.action_profile is not None:
            self._reference(info, action_id, args)
        if direct is not _NO_DIRECT:
            self._apply_direct(entry, direct, info)
        identity = (info.name, entry.key, entry.priority)
        if record is not None:
            self.ctx.oneshots[identity] = record

        def undo() -> None:
            current = table.find_canonical(key, priority)
            if current is not None:
                self._release(info, current.action_id, current.args)
                table.delete(table.match_of_key(key), priority=priority)
            self.ctx.oneshots.pop(identity, None)
            _run(undos)

        return undo

    # --- MODIFY ------------------------------------------------------------------------

    def _modify(self, info: TableInfo, te: p4r.TableEntry, where: str) -> Undo:
        values, priority = self._key(info, te, where)
        if info.initial_entries:
            raise _no_entry_added(where)
        is_const_table = info.is_const
        if is_const_table and te.HasField("action"):
            raise permission_denied(
                f"{where}: entries of a const table are immutable; only direct resources "
                "may be modified (leave the action unset)"
            )
        plan = (
            self._plan_action(info, te.action, where, for_default=False)
            if te.HasField("action")
            else None
        )
        direct = self._plan_direct(info, te, where, inserting=False)
        self._check_idle_timeout(info, te.idle_timeout_ns, where)
        entry = self._find(info, values, priority, where)
        if entry is None:
            raise not_found(f"{where}: no entry with this match key and priority")
        if entry.is_const and plan is not None:
            raise permission_denied(
                f"{where}: the entry is const; only its direct resources may be modified"
            )
        # --- commit
        identity = (info.name, entry.key, entry.priority)
        snap = _Snapshot(
            entry.action_id,
            entry.args,
            entry.idle_timeout_ns,
            entry.controller_metadata,
            entry.metadata,
            entry.packets,
            entry.bytes,
            entry.meter.config if entry.meter is not None else None,
            self.ctx.oneshots.get(identity),
        )
        if plan is not None:
            new_action, new_args, record = self._commit_action(info, plan, snap.extra)
            self._reference(info, new_action, new_args)
            self._release(info, snap.action_id, snap.args)
            entry.action_id, entry.args = new_action, new_args
            if snap.oneshot is not None:
                self.ctx.oneshots.pop(identity)
                snap.extra.append(self._drop_oneshot(info, snap.oneshot))
            if record is not None:
                self.ctx.oneshots[identity] = record
        if not (is_const_table or entry.is_const):
            entry.controller_metadata = te.controller_metadata
            entry.metadata = te.metadata
            entry.idle_timeout_ns = te.idle_timeout_ns
        self._apply_direct(entry, direct, info)

        def undo() -> None:
            # find the entry again: an undone DELETE later in the batch re-inserted it
            current = self._current(info, values, priority)
            if plan is not None:
                self._release(info, current.action_id, current.args)
                self.ctx.oneshots.pop(identity, None)
                _run(snap.extra)  # re-create the old one-shot group, drop the new one
                self._reference(info, snap.action_id, snap.args)
                current.action_id, current.args = snap.action_id, snap.args
                if snap.oneshot is not None:
                    self.ctx.oneshots[identity] = snap.oneshot
            current.controller_metadata = snap.controller_metadata
            current.metadata = snap.metadata
            current.idle_timeout_ns = snap.idle_timeout_ns
            current.packets, current.bytes = snap.packets, snap.bytes
            if current.meter is not None:
                current.meter.configure(snap.meter_config)

        return undo

    def _modify_default(self, info: TableInfo, te: p4r.TableEntry, where: str) -> Undo:
        table = info.table
        if info.is_indirect:
            raise invalid(
                f"{where}: the default entry of a table with an action profile cannot be "
                "set or reset"
            )
        if table.default_action.is_const:
            raise permission_denied(f"{where}: the default action is const")
        if te.match:
            raise invalid(f"{where}: the default entry must have an empty match")
        if te.priority != 0:
            raise invalid(f"{where}: the default entry must have priority 0")
        if te.idle_timeout_ns != 0:
            raise invalid(f"{where}: the default entry does not support idle timeouts")
        self._check_default_resources(te, where)
        plan = (
            self._plan_action(info, te.action, where, for_default=True)
            if te.HasField("action")
            else None
        )
        # --- commit
        old = table.default_action
        old_meta = self.ctx.default_entry_meta.get(info.name)
        try:
            if plan is None:
                table.reset_default_action()
                self.ctx.default_entry_meta.pop(info.name, None)
            else:
                table.set_default_action(plan.action_id, plan.args)
                if te.controller_metadata or te.metadata:
                    self.ctx.default_entry_meta[info.name] = (te.controller_metadata, te.metadata)
                else:
                    self.ctx.default_entry_meta.pop(info.name, None)
        except TableError as error:
            raise _table_error(error) from None

        def undo() -> None:
            table.set_default_action(old.action_id, old.args)
            if old_meta is None:
                self.ctx.default_entry_meta.pop(info.name, None)
            else:
                self.ctx.default_entry_meta[info.name] = old_meta

        return undo

    # --- DELETE ------------------------------------------------------------------------

    def _delete(self, info: TableInfo, te: p4r.TableEntry, where: str) -> Undo:
        table = info.table
        if te.is_default_action:
            raise invalid(f"{where}: the default entry cannot be DELETEd")
        if info.is_const:
            raise permission_denied(f"{where}: the table has const entries; DELETE is refused")
        values, priority = self._key(info, te, where)
        if info.initial_entries:
            raise _no_entry_added(where)
        entry = self._find(info, values, priority, where)
        if entry is None:
            raise not_found(f"{where}: no entry with this match key and priority")
        if entry.is_const:
            raise permission_denied(f"{where}: the entry is const and cannot be deleted")
        # --- commit
        identity = (info.name, entry.key, entry.priority)
        table.delete(values, priority=priority)
        self._release(info, entry.action_id, entry.args)
        record = self.ctx.oneshots.pop(identity, None)
        oneshot_undo = self._drop_oneshot(info, record) if record is not None else no_undo

        def undo() -> None:
            oneshot_undo()
            restored = table.insert(
                values,
                entry.action_id,
                entry.args,
                priority=priority,
                idle_timeout_ns=entry.idle_timeout_ns,
                counter=(entry.packets, entry.bytes),
                controller_metadata=entry.controller_metadata,
                metadata=entry.metadata,
            )
            # same position among equal priorities, same meter state and hit time
            restored.seq = entry.seq
            restored.meter = entry.meter
            restored.last_hit_ns = entry.last_hit_ns
            restored.idle_notified = entry.idle_notified
            self._reference(info, entry.action_id, entry.args)
            if record is not None:
                self.ctx.oneshots[identity] = record

        return undo

    # ======================================================================== reads

    def read(self, te: p4r.TableEntry) -> Iterator[p4r.Entity]:
        return self._read(te, encoded=False)  # type: ignore[return-value]

    def read_encoded(self, te: p4r.TableEntry) -> Iterator[bytes]:
        """:meth:`read`, each entity serialized: an entry without direct resources asked
        for is its cached encoding, never parsed (what a ``ReadResponse`` carries)."""
        for item in self._read(te, encoded=True):
            yield item if isinstance(item, bytes) else item.SerializeToString()

    def _read(self, te: p4r.TableEntry, *, encoded: bool) -> Iterator[p4r.Entity | bytes]:
        if te.table_id == 0:
            if te.match:
                raise invalid("a match filter needs a table_id")
            tables = self.ctx.tables()
        else:
            tables = [self.ctx.table(te.table_id)]
        for info in tables:
            yield from self._read_table(info, te, encoded)

    def _read_table(
        self, info: TableInfo, te: p4r.TableEntry, encoded: bool
    ) -> Iterator[p4r.Entity | bytes]:
        where = f"table {info.name}"
        if te.HasField("meter_counter_data"):
            raise unimplemented(f"{where}: per-colour meter counters are not supported")
        if te.is_default_action:
            if te.HasField("time_since_last_hit"):
                raise invalid(f"{where}: the default entry has no time_since_last_hit")
            yield p4r.Entity(table_entry=self.encode_default(info))
            return
        if te.HasField("time_since_last_hit") and not info.table.supports_idle_timeout:
            raise invalid(
                f"{where}: time_since_last_hit requested but the table has no idle timeout"
            )
        if te.match:
            values, priority = self._key(info, te, where)
            entry = self._find(info, values, priority, where)
            entries = [entry] if entry is not None else []
        else:
            entries = info.table.entries()
        direct = (
            te.HasField("counter_data")
            or te.HasField("meter_config")
            or te.HasField("time_since_last_hit")
        )
        filtered = bool(
            te.priority or te.controller_metadata or te.metadata or te.HasField("action")
        )
        plain = encoded and not direct
        for entry in entries:
            if filtered and not self._passes_filters(info, entry, te):
                continue
            if plain:
                yield self._entity_bytes(info, entry)
                continue
            entity = _ENTITY_FROM_BYTES(self._entity_bytes(info, entry))
            if direct:
                self._add_direct(info, entry, te, entity.table_entry)
            yield entity

    def _entity_bytes(self, info: TableInfo, entry: TableEntry) -> bytes:
        """The serialized ``Entity`` of an entry without direct resources. It is cached on
        the entry and used while the fields it was built from are unchanged (a MODIFY, an
        undo or a new one-shot group changes them): the cache is checked against those
        fields, so no writer has to invalidate it. Match and priority never change for an
        entry."""
        stamp = (
            entry.action_id,
            entry.args,
            entry.controller_metadata,
            entry.metadata,
            entry.idle_timeout_ns,
            self.ctx.oneshots.get((info.name, entry.key, entry.priority))
            if entry.action_id == GROUP_REF
            else None,
        )
        cached = entry.control_cache
        if cached is not None and cached[0] == stamp:  # type: ignore[index]
            return cached[1]  # type: ignore[index]
        entity = p4r.Entity()
        self.encode_entry(info, entry, out=entity.table_entry)
        data = entity.SerializeToString()
        entry.control_cache = (stamp, data)
        return data

    def _passes_filters(self, info: TableInfo, entry: TableEntry, te: p4r.TableEntry) -> bool:
        if te.priority and entry.priority != te.priority:
            return False
        if te.controller_metadata and entry.controller_metadata != te.controller_metadata:
            return False
        if te.metadata and entry.metadata != te.metadata:
            return False
        if te.HasField("action"):
            kind = te.action.WhichOneof("type")
            if kind == "action" and te.action.action.action_id:
                return entry.action_id == te.action.action.action_id
            if kind == "action_profile_member_id":
                return (
                    entry.action_id == MEMBER_REF
                    and entry.args[0] == te.action.action_profile_member_id
                )
            if kind == "action_profile_group_id":
                identity = (info.name, entry.key, entry.priority)
                return (
                    entry.action_id == GROUP_REF
                    and identity not in self.ctx.oneshots
                    and entry.args[0] == te.action.action_profile_group_id
                )
        return True

    def encode_entry(
        self,
        info: TableInfo,
        entry: TableEntry,
        request: p4r.TableEntry | None = None,
        *,
        out: p4r.TableEntry | None = None,
    ) -> p4r.TableEntry:
        """The canonical ``TableEntry`` of an installed entry (also used for idle-timeout
        notifications, with ``request`` None: no direct resources), built into ``out``
        when given (a read fills its ``Entity`` in place instead of copying)."""
        table = info.table
        if out is None:
            out = p4r.TableEntry()
        out.table_id = info.id
        add_matches(out.match, table.match_of(entry), self.ctx.match_specs(info))
        if entry.priority:
            out.priority = entry.priority
        record = self.ctx.oneshots.get((info.name, entry.key, entry.priority))
        if record is not None:
            out.action.action_profile_action_set.CopyFrom(record.action_set)
        elif entry.action_id == MEMBER_REF:
            out.action.action_profile_member_id = entry.args[0]
        elif entry.action_id == GROUP_REF:
            out.action.action_profile_group_id = entry.args[0]
        else:
            action = out.action.action
            action.action_id = entry.action_id
            add_params(action.params, entry.args, self.ctx.param_specs(entry.action_id))
        if entry.controller_metadata:
            out.controller_metadata = entry.controller_metadata
        if entry.metadata:
            out.metadata = entry.metadata
        if entry.idle_timeout_ns:
            out.idle_timeout_ns = entry.idle_timeout_ns
        if entry.is_const or info.is_const:
            out.is_const = True
        if request is not None:
            self._add_direct(info, entry, request, out)
        return out

    def _add_direct(
        self, info: TableInfo, entry: TableEntry, request: p4r.TableEntry, out: p4r.TableEntry
    ) -> None:
        """The direct resources and hit time ``request`` asks for, added to ``out``."""
        if request.HasField("counter_data") and info.direct_counter is not None:
            out.counter_data.packet_count = entry.packets
            out.counter_data.byte_count = entry.bytes
        if request.HasField("meter_config") and entry.meter is not None:
            config = entry.meter.config
            if config is not None:
                out.meter_config.CopyFrom(encode_meter_config(config))
        if request.HasField("time_since_last_hit"):
            out.time_since_last_hit.elapsed_ns = max(
                0, self.ctx.objects.clock.now_ns() - entry.last_hit_ns
            )

    def encode_default(self, info: TableInfo) -> p4r.TableEntry:
        default = info.table.default_action
        out = p4r.TableEntry(table_id=info.id, is_default_action=True)
        if default.action_id in self.ctx.objects.names_by_id:
            out.action.action.action_id = default.action_id
            add_params(
                out.action.action.params, default.args, self.ctx.param_specs(default.action_id)
            )
        meta = self.ctx.default_entry_meta.get(info.name)
        if meta is not None:
            out.controller_metadata, out.metadata = meta
        if default.is_const:
            out.is_const = True
        return out

    # ======================================================================== direct resources

    def write_direct_counter(self, update_type: int, msg: p4r.DirectCounterEntry) -> Undo:
        if not msg.HasField("table_entry"):
            raise invalid("DirectCounterEntry: the table_entry must be set")
        info = self.ctx.table(msg.table_entry.table_id)
        where = f"direct counter of table {info.name}"
        if update_type != MODIFY:
            raise invalid(f"{where}: only MODIFY is allowed for a DirectCounterEntry")
        if info.direct_counter is None:
            raise invalid(f"{where}: the table has no direct counter")
        if msg.table_entry.is_default_action:
            raise unimplemented(f"{where}: the default entry has no direct counter in BMv2")
        entry, values, priority = self._entry_of(info, msg.table_entry, where)
        if not msg.HasField("data"):
            return no_undo
        update = counter_update(msg.data, self._counter_type(info), where)
        old = (entry.packets, entry.bytes)
        _set_counter(entry, update)

        def undo() -> None:
            current = self._current(info, values, priority)
            current.packets, current.bytes = old

        return undo

    def read_direct_counter(self, msg: p4r.DirectCounterEntry) -> Iterator[p4r.Entity]:
        te = msg.table_entry
        for info, entry in self._direct_targets(te, "direct counter", lambda i: i.direct_counter):
            out = p4r.DirectCounterEntry()
            out.table_entry.CopyFrom(self._entry_key_proto(info, entry))
            out.data.packet_count = entry.packets
            out.data.byte_count = entry.bytes
            yield p4r.Entity(direct_counter_entry=out)

    def write_direct_meter(self, update_type: int, msg: p4r.DirectMeterEntry) -> Undo:
        if not msg.HasField("table_entry"):
            raise invalid("DirectMeterEntry: the table_entry must be set")
        info = self.ctx.table(msg.table_entry.table_id)
        where = f"direct meter of table {info.name}"
        if update_type != MODIFY:
            raise invalid(f"{where}: only MODIFY is allowed for a DirectMeterEntry")
        if info.direct_meter is None:
            raise invalid(f"{where}: the table has no direct meter")
        if msg.HasField("counter_data"):
            raise unimplemented(f"{where}: per-colour meter counters are not supported")
        if msg.table_entry.is_default_action:
            raise unimplemented(f"{where}: the default entry has no direct meter in BMv2")
        config = decode_meter_config(msg.config, where) if msg.HasField("config") else None
        entry, values, priority = self._entry_of(info, msg.table_entry, where)
        if entry.meter is None:
            raise invalid(f"{where}: the entry has no meter cell")
        old = entry.meter.config
        entry.meter.configure(config, where)

        def undo() -> None:
            meter = self._current(info, values, priority).meter
            if meter is not None:
                meter.configure(old)

        return undo

    def read_direct_meter(self, msg: p4r.DirectMeterEntry) -> Iterator[p4r.Entity]:
        if msg.HasField("counter_data"):
            raise unimplemented("DirectMeterEntry: per-colour meter counters are not supported")
        te = msg.table_entry
        for info, entry in self._direct_targets(te, "direct meter", lambda i: i.direct_meter):
            out = p4r.DirectMeterEntry()
            out.table_entry.CopyFrom(self._entry_key_proto(info, entry))
            if entry.meter is not None and entry.meter.config is not None:
                out.config.CopyFrom(encode_meter_config(entry.meter.config))
            yield p4r.Entity(direct_meter_entry=out)

    def _direct_targets(
        self, te: p4r.TableEntry, what: str, resource
    ) -> Iterator[tuple[TableInfo, TableEntry]]:
        if te.table_id == 0:
            if te.match:
                raise invalid(f"{what} read: a match filter needs a table_id")
            for info in self.ctx.tables():
                if resource(info) is not None:
                    for entry in info.table.entries():
                        yield info, entry
            return
        info = self.ctx.table(te.table_id)
        where = f"{what} of table {info.name}"
        if resource(info) is None:
            raise invalid(f"{where}: the table has no {what}")
        if te.is_default_action:
            raise unimplemented(f"{where}: the default entry has no {what} in BMv2")
        if te.match or te.priority:
            yield info, self._entry_of(info, te, where)[0]
            return
        for entry in info.table.entries():
            yield info, entry

    def _entry_key_proto(self, info: TableInfo, entry: TableEntry) -> p4r.TableEntry:
        out = p4r.TableEntry(table_id=info.id)
        add_matches(out.match, info.table.match_of(entry), self.ctx.match_specs(info))
        if entry.priority:
            out.priority = entry.priority
        return out

    def _entry_of(
        self, info: TableInfo, te: p4r.TableEntry, where: str
    ) -> tuple[TableEntry, list[MatchValue], int]:
        """The installed entry ``te`` names (NOT_FOUND if none), its key and priority."""
        values, priority = self._key(info, te, where)
        entry = self._find(info, values, priority, where)
        if entry is None:
            raise not_found(f"{where}: no entry with this match key and priority")
        return entry, values, priority

    def _current(self, info: TableInfo, values: Sequence[MatchValue], priority: int) -> TableEntry:
        """The entry installed now under this key (undo closures must not keep entry
        objects: undoing a DELETE re-inserts a new object)."""
        entry = info.table.find(values, priority=priority)
        if entry is None:
            raise RuntimeError(f"table {info.name}: entry vanished during a rollback")
        return entry

    def _counter_type(self, info: TableInfo) -> CounterType:
        resource = self.ctx.objects.direct_counters[info.direct_counter]  # type: ignore[index]
        return resource.resource.type  # type: ignore[union-attr]

    # ======================================================================== helpers

    def _key(self, info: TableInfo, te: p4r.TableEntry, where: str) -> tuple[list[MatchValue], int]:
        values = decode_matches(te.match, self.ctx.match_specs(info), where)
        return values, self._priority(info, te.priority, where)

    def _fast_key(
        self, info: TableInfo, matches: Sequence[p4r.FieldMatch]
    ) -> tuple[tuple[int, int], ...] | None:
        """The canonical key (what ``Table.canonicalize`` of the decoded matches gives) of
        the usual INSERT — every field given, in P4Info order, exact / lpm / ternary values
        in at most the field's own bytes, valid — or None for anything else: then the full
        decode (:meth:`_key`, :meth:`_canonical`) decides, with its specific error."""
        layout = self.ctx.key_layouts.get(info.name, _NO_LAYOUT)
        if layout is _NO_LAYOUT:
            layout = self.ctx.key_layouts[info.name] = _key_layout(info)
        if layout is None or len(matches) != len(layout):
            return None
        key = []
        for match, (field_id, kind, width, size) in zip(matches, layout):
            if match.field_id != field_id:
                return None
            if kind == "exact":
                data = match.exact.value  # b"" when another kind is set: the slow path decides
                if not data or len(data) > size:
                    return None
                value = int.from_bytes(data, "big")
                if value >> width:
                    return None
                key.append((value, (1 << width) - 1))
            elif kind == "lpm":
                lpm = match.lpm
                data, prefix = lpm.value, lpm.prefix_len
                if not data or len(data) > size or not 0 < prefix <= width:
                    return None
                value = int.from_bytes(data, "big")
                host = (1 << (width - prefix)) - 1
                if value >> width or value & host:
                    return None
                key.append((value, ((1 << width) - 1) ^ host))
            else:  # ternary
                ternary = match.ternary
                data, mask_data = ternary.value, ternary.mask
                if not data or not mask_data or len(data) > size or len(mask_data) > size:
                    return None
                value, mask = int.from_bytes(data, "big"), int.from_bytes(mask_data, "big")
                if not mask or (value | mask) >> width or value & ~mask:
                    return None
                key.append((value, mask))
        return tuple(key)

    def _priority(self, info: TableInfo, priority: int, where: str) -> int:
        if info.table.requires_priority:
            if priority <= 0:
                raise invalid(
                    f"{where}: a table with ternary/range/optional keys needs a priority "
                    f">= 1, got {priority}"
                )
        elif priority != 0:
            raise invalid(
                f"{where}: priority must be 0 for a table without ternary/range/optional "
                f"keys, got {priority}"
            )
        return priority

    def _canonical(
        self, info: TableInfo, values: Sequence[MatchValue], where: str
    ) -> tuple[tuple[int, int], ...]:
        try:
            return info.table.canonicalize(values)
        except TableError as error:
            raise invalid(f"{where}: {error}") from None

    def _find(
        self, info: TableInfo, values: Sequence[MatchValue], priority: int, where: str
    ) -> TableEntry | None:
        try:
            return info.table.find(values, priority=priority)
        except TableError as error:
            raise invalid(f"{where}: {error}") from None

    def _plan_action(
        self, info: TableInfo, action: p4r.TableAction, where: str, *, for_default: bool
    ) -> _ActionPlan:
        kind = action.WhichOneof("type")
        if kind is None:
            raise invalid(f"{where}: the table action is empty")
        if info.is_indirect:
            if kind == "action":
                raise invalid(
                    f"{where}: the table is implemented by an action profile; give a member, "
                    "a group or a one-shot action set, not a direct action"
                )
            profile_name = info.action_profile
            profile = self.ctx.objects.action_profiles[profile_name]  # type: ignore[index]
            if kind == "action_profile_action_set":
                oneshot = plan_oneshot(
                    self.ctx,
                    profile_name,
                    profile,
                    action.action_profile_action_set,
                    where,  # type: ignore[arg-type]
                )
                plan = _ActionPlan(GROUP_REF, (0,), oneshot, p4r.ActionProfileActionSet())
                plan.action_set.CopyFrom(action.action_profile_action_set)  # type: ignore[union-attr]
                return plan
            if self.ctx.profile_uses_oneshot(profile_name):  # type: ignore[arg-type]
                raise invalid(
                    f"{where}: action profile {profile_name} is programmed with one-shot "
                    "action sets; members/groups cannot be mixed with them"
                )
            try:
                if kind == "action_profile_member_id":
                    profile.get_member(action.action_profile_member_id)
                    return _ActionPlan(MEMBER_REF, (action.action_profile_member_id,))
                if not profile.with_selector:
                    raise invalid(
                        f"{where}: action profile {profile_name} has no selector, so no groups"
                    )
                profile.get_group(action.action_profile_group_id)
                return _ActionPlan(GROUP_REF, (action.action_profile_group_id,))
            except ActionProfileError as error:
                raise profile_error(error) from None
        if kind != "action":
            raise invalid(
                f"{where}: the table has no action profile; member ids, group ids and action "
                "sets are not allowed"
            )
        call = action.action
        action_id = call.action_id
        allowed = info.table.allowed_actions
        if allowed is None or action_id not in allowed:  # an id of the table is an action's
            self.ctx.lookup(self.ctx.objects.actions, action_id, ACTION)
        if allowed is not None:
            scope = allowed.get(action_id)
            if scope is None:
                raise invalid(f"{where}: action id {action_id} is not an action of the table")
            if for_default and scope is _TABLE_ONLY:
                raise permission_denied(
                    f"{where}: action {self.ctx.action(action_id).name} is @tableonly and "
                    "cannot be the default action"
                )
            if not for_default and scope is _DEFAULT_ONLY:
                raise permission_denied(
                    f"{where}: action {self.ctx.action(action_id).name} is @defaultonly and "
                    "cannot be used in an entry"
                )
        specs = self.ctx.param_specs(action_id)
        args = fast_params(call.params, specs)
        if args is None:
            args = decode_params(
                call.params, specs, f"{where}: action {self.ctx.action(action_id).name}"
            )
        return _ActionPlan(action_id, args)

    def _commit_action(
        self, info: TableInfo, plan: _ActionPlan, undos: list[Undo]
    ) -> tuple[int, tuple[int, ...], OneShotRecord | None]:
        if plan.oneshot is None:
            return plan.action_id, plan.args, None
        profile_name = info.action_profile
        profile = self.ctx.objects.action_profiles[profile_name]  # type: ignore[index]
        group_id, member_ids = create_oneshot(self.ctx, profile_name, profile, plan.oneshot)  # type: ignore[arg-type]

        def undo() -> None:
            delete_oneshot(self.ctx, profile_name, profile, group_id, member_ids)  # type: ignore[arg-type]

        undos.append(undo)
        record = OneShotRecord(plan.action_set, group_id, member_ids)  # type: ignore[arg-type]
        return GROUP_REF, (group_id,), record

    def _drop_oneshot(self, info: TableInfo, record: OneShotRecord) -> Undo:
        profile_name = info.action_profile
        profile = self.ctx.objects.action_profiles[profile_name]  # type: ignore[index]
        return delete_oneshot(self.ctx, profile_name, profile, record.group_id, record.member_ids)  # type: ignore[arg-type]

    def _profile(self, info: TableInfo) -> ActionProfile | None:
        if info.action_profile is None:
            return None
        return self.ctx.objects.action_profiles[info.action_profile]

    def _reference(self, info: TableInfo, action_id: int, args: tuple[int, ...]) -> None:
        profile = self._profile(info)
        if profile is not None and action_id in (MEMBER_REF, GROUP_REF):
            profile.reference(action_id, args)

    def _release(self, info: TableInfo, action_id: int, args: tuple[int, ...]) -> None:
        profile = self._profile(info)
        if profile is not None and action_id in (MEMBER_REF, GROUP_REF):
            profile.release(action_id, args)

    def _plan_direct(
        self, info: TableInfo, te: p4r.TableEntry, where: str, *, inserting: bool
    ) -> _DirectPlan:
        if (
            (inserting or info.direct_meter is None)
            and not te.HasField("counter_data")
            and not te.HasField("meter_config")
        ):
            if te.HasField("meter_counter_data"):
                raise unimplemented(f"{where}: per-colour meter counters are not supported")
            return _NO_DIRECT  # nothing to change (the usual INSERT)
        plan = _DirectPlan()
        if te.HasField("meter_counter_data"):
            raise unimplemented(f"{where}: per-colour meter counters are not supported")
        if te.HasField("counter_data"):
            if info.direct_counter is None:
                raise invalid(f"{where}: counter_data given but the table has no direct counter")
            plan.counter = counter_update(te.counter_data, self._counter_type(info), where)
        if te.HasField("meter_config"):
            if info.direct_meter is None:
                raise invalid(f"{where}: meter_config given but the table has no direct meter")
            plan.meter_set = True
            plan.meter = decode_meter_config(te.meter_config, where)
        elif info.direct_meter is not None and not inserting:
            plan.meter_set = True  # MODIFY without meter_config resets the meter (spec)
        return plan

    def _apply_direct(self, entry: TableEntry, plan: _DirectPlan, info: TableInfo) -> None:
        if plan.counter is not None:
            _set_counter(entry, plan.counter)
        if plan.meter_set and entry.meter is not None:
            entry.meter.configure(plan.meter, f"direct meter of table {info.name}")

    def _check_default_resources(self, te: p4r.TableEntry, where: str) -> None:
        if te.HasField("counter_data") or te.HasField("meter_config"):
            raise unimplemented(f"{where}: BMv2 has no direct resources on the default entry")
        if te.HasField("meter_counter_data"):
            raise unimplemented(f"{where}: per-colour meter counters are not supported")

    def _check_idle_timeout(self, info: TableInfo, idle_timeout_ns: int, where: str) -> None:
        if idle_timeout_ns < 0:
            raise invalid(f"{where}: idle_timeout_ns must not be negative, got {idle_timeout_ns}")
        if idle_timeout_ns and not info.table.supports_idle_timeout:
            raise invalid(
                f"{where}: idle_timeout_ns must be 0, the table does not support idle timeouts"
            )


_NO_LAYOUT = object()
#: The plan of an update that changes no direct resource (read only, never changed).
_NO_DIRECT = _DirectPlan()
_FAST_KINDS = ("exact", "lpm", "ternary")


def _key_layout(info: TableInfo) -> tuple[tuple[int, str, int, int], ...] | None:
    """``(field id, match kind, width, bytes)`` per key field, for :meth:`_fast_key`; None
    when a field has no fast path (range, optional, an lpm key not whole bytes)."""
    if any(f.match_kind not in _FAST_KINDS for f in info.key):
        return None
    if any(f.match_kind == "lpm" and lpm_padding(f.width) for f in info.key):
        return None  # the prefix is counted over the padded bytes (codec.lpm_padding)
    return tuple((f.id, f.match_kind, f.width, (f.width + 7) >> 3) for f in info.key)


def _no_entry_added(where: str) -> P4RuntimeError:
    """MODIFY / DELETE of an entry of a table with program ``entries`` (not const):
    BMv2's P4Runtime server knows only the entries it added, and none can be added."""
    return not_found(
        f"{where}: Cannot find match entry (the program's entries are not the control "
        "plane's: BMv2 neither adds nor finds entries in a table given `entries`)"
    )


def _set_counter(entry: TableEntry, update: tuple[int | None, int | None]) -> None:
    packets, byte_count = update
    if packets is not None:
        entry.packets = packets
    if byte_count is not None:
        entry.bytes = byte_count


def _run(undos: list[Undo]) -> None:
    for undo in reversed(undos):
        undo()


def _table_error(error: TableError) -> P4RuntimeError:
    """Codes for errors the runtime table raises after our own validation (defensive)."""
    from p4emu.runtime.exceptions import (
        ConstDefaultActionError,
        ConstEntryError,
        DuplicateEntryError,
        EntryNotFoundError,
        TableFullError,
    )

    message = str(error)
    if isinstance(error, DuplicateEntryError):
        return already_exists(message)
    if isinstance(error, EntryNotFoundError):
        return not_found(message)
    if isinstance(error, TableFullError):
        return resource_exhausted(message)
    if isinstance(error, (ConstEntryError, ConstDefaultActionError)):
        return permission_denied(message)
    return invalid(message)


__all__ = ["TableEntries"]
