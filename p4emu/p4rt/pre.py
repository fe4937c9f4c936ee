"""``PacketReplicationEngineEntry``: multicast groups and clone sessions.

Semantics (P4Runtime spec "PacketReplicationEngineEntry", PI ``PreMcMgr`` /
``PreCloneMgr`` as used by ``simple_switch_grpc``):

- Multicast group ids: 0 is INVALID_ARGUMENT; ids >= 32768 are OUT_OF_RANGE (PI keeps
  them for clone sessions). Clone session ids: 0 and >= 32768 are INVALID_ARGUMENT.
- INSERT of an existing id: ALREADY_EXISTS; MODIFY/DELETE of a missing one: NOT_FOUND.
- Replicas: the port is ``port`` (bytes, P4Runtime 1.4) or the deprecated
  ``egress_port``; none is INVALID_ARGUMENT, as is a port beyond the v1model port range
  (0..511), an ``instance`` beyond ``egress_rid``'s 16 bits and the same (port, instance)
  twice. ``backup_replicas`` are UNIMPLEMENTED. A clone session's ``class_of_service``
  must be 0 (UNIMPLEMENTED otherwise, as PI) and ``packet_length_bytes`` >= 0 (0: no
  truncation).
- Reads: id 0 reads every group / session (in id order), an unknown id is NOT_FOUND
  (PI). Replicas are listed by instance then port (PI's order), each with the port field
  the client used (canonical bytes for ``port``); a group's ``metadata`` is returned.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from p4emu.p4rt.codec import decode_unsigned, encode_unsigned
from p4emu.p4rt.context import Context, Undo
from p4emu.p4rt.exceptions import already_exists, invalid, not_found, out_of_range, unimplemented
from p4emu.proto import p4r
from p4emu.runtime.exceptions import PreError
from p4emu.runtime.pre import MAX_INSTANCE, CloneSession, MulticastGroup, Replica

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE

#: PI reserves multicast group ids from 2**15 on for clone sessions.
FIRST_RESERVED_GROUP_ID = 1 << 15
MAX_CLONE_SESSION_ID = (1 << 15) - 1


class Pre:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @property
    def engine(self):
        return self.ctx.objects.pre

    # --- writes -------------------------------------------------------------------------

    def write(self, update_type: int, msg: p4r.PacketReplicationEngineEntry) -> Undo:
        kind = msg.WhichOneof("type")
        if kind == "multicast_group_entry":
            return self._write_group(update_type, msg.multicast_group_entry)
        if kind == "clone_session_entry":
            return self._write_session(update_type, msg.clone_session_entry)
        raise invalid("PacketReplicationEngineEntry: no multicast group or clone session set")

    def _write_group(self, update_type: int, msg: p4r.MulticastGroupEntry) -> Undo:
        group_id = msg.multicast_group_id
        where = f"multicast group {group_id}"
        if group_id == 0:
            raise invalid(f"{where}: 0 is not a valid multicast group id")
        if group_id >= FIRST_RESERVED_GROUP_ID:
            raise out_of_range(
                f"{where}: multicast group ids must be below {FIRST_RESERVED_GROUP_ID}"
            )
        engine = self.engine
        key = ("mc", group_id)
        old = self._group(group_id)
        old_kinds = self.ctx.replica_kinds.get(key)
        old_meta = self.ctx.mc_metadata.get(group_id)
        if update_type == DELETE:
            if old is None:
                raise not_found(f"{where}: the multicast group does not exist")
            engine.delete_group(group_id)
            self.ctx.replica_kinds.pop(key, None)
            self.ctx.mc_metadata.pop(group_id, None)
            return self._restore_group(group_id, old, old_kinds, old_meta)
        if update_type not in (INSERT, MODIFY):
            raise invalid(f"{where}: invalid update type {update_type}")
        replicas, kinds = self._replicas(msg.replicas, where)
        if update_type == INSERT and old is not None:
            raise already_exists(f"{where}: the multicast group already exists")
        if update_type == MODIFY and old is None:
            raise not_found(f"{where}: the multicast group does not exist")
        try:
            if update_type == INSERT:
                engine.insert_group(group_id, replicas)
            else:
                engine.modify_group(group_id, replicas)
        except PreError as error:
            raise invalid(str(error)) from None
        self.ctx.replica_kinds[key] = kinds
        if msg.metadata:
            self.ctx.mc_metadata[group_id] = msg.metadata
        else:
            self.ctx.mc_metadata.pop(group_id, None)
        return self._restore_group(group_id, old, old_kinds, old_meta)

    def _restore_group(
        self,
        group_id: int,
        old: MulticastGroup | None,
        old_kinds: dict[tuple[int, int], str] | None,
        old_meta: bytes | None,
    ) -> Undo:
        def undo() -> None:
            engine = self.engine
            if self._group(group_id) is not None:
                engine.delete_group(group_id)
            if old is not None:
                engine.insert_group(group_id, old.replicas)
            _restore(self.ctx.replica_kinds, ("mc", group_id), old_kinds)
            _restore(self.ctx.mc_metadata, group_id, old_meta)

        return undo

    def _write_session(self, update_type: int, msg: p4r.CloneSessionEntry) -> Undo:
        session_id = msg.session_id
        where = f"clone session {session_id}"
        if session_id == 0:
            raise invalid(f"{where}: 0 is not a valid clone session id")
        if session_id > MAX_CLONE_SESSION_ID:
            raise invalid(f"{where}: clone session ids must be in [1, {MAX_CLONE_SESSION_ID}]")
        engine = self.engine
        key = ("clone", session_id)
        old = self._session(session_id)
        old_kinds = self.ctx.replica_kinds.get(key)
        if update_type == DELETE:
            if old is None:
                raise not_found(f"{where}: the clone session does not exist")
            engine.delete_clone_session(session_id)
            self.ctx.replica_kinds.pop(key, None)
            return self._restore_session(session_id, old, old_kinds)
        if update_type not in (INSERT, MODIFY):
            raise invalid(f"{where}: invalid update type {update_type}")
        replicas, kinds = self._replicas(msg.replicas, where)
        if msg.class_of_service != 0:
            raise unimplemented(f"{where}: class_of_service is not supported by BMv2 (must be 0)")
        if msg.packet_length_bytes < 0:
            raise invalid(f"{where}: packet_length_bytes must not be negative")
        if update_type == INSERT and old is not None:
            raise already_exists(f"{where}: the clone session already exists")
        if update_type == MODIFY and old is None:
            raise not_found(f"{where}: the clone session does not exist")
        session = CloneSession(session_id, replicas, 0, msg.packet_length_bytes)
        try:
            if update_type == INSERT:
                engine.insert_clone_session(session)
            else:
                engine.modify_clone_session(session)
        except PreError as error:
            raise invalid(str(error)) from None
        self.ctx.replica_kinds[key] = kinds
        return self._restore_session(session_id, old, old_kinds)

    def _restore_session(
        self,
        session_id: int,
        old: CloneSession | None,
        old_kinds: dict[tuple[int, int], str] | None,
    ) -> Undo:
        def undo() -> None:
            engine = self.engine
            if self._session(session_id) is not None:
                engine.delete_clone_session(session_id)
            if old is not None:
                engine.insert_clone_session(old)
            _restore(self.ctx.replica_kinds, ("clone", session_id), old_kinds)

        return undo

    def _replicas(
        self, replicas: Sequence[p4r.Replica], where: str
    ) -> tuple[tuple[Replica, ...], dict[tuple[int, int], str]]:
        out: list[Replica] = []
        kinds: dict[tuple[int, int], str] = {}
        max_port = self.engine.max_port
        for position, replica in enumerate(replicas):
            what = f"{where}: replica #{position}"
            kind = replica.WhichOneof("port_kind")
            if kind is None:
                raise invalid(f"{what}: no port given")
            if kind == "port":
                port = decode_unsigned(replica.port, 32, f"{what} port")
            else:
                port = replica.egress_port
            if port > max_port:
                raise invalid(f"{what}: port {port} is not a v1model port (0..{max_port})")
            if replica.instance > MAX_INSTANCE:
                raise invalid(
                    f"{what}: instance {replica.instance} does not fit egress_rid (bit<16>)"
                )
            if replica.backup_replicas:
                raise unimplemented(f"{what}: backup replicas are not supported")
            pair = (port, replica.instance)
            if pair in kinds:
                raise invalid(
                    f"{what}: duplicate replica (port {port}, instance {replica.instance})"
                )
            kinds[pair] = kind
            out.append(Replica(port, replica.instance))
        return tuple(out), kinds

    # --- reads --------------------------------------------------------------------------

    def read(self, msg: p4r.PacketReplicationEngineEntry) -> Iterator[p4r.Entity]:
        kind = msg.WhichOneof("type")
        if kind == "multicast_group_entry":
            yield from self._read_groups(msg.multicast_group_entry.multicast_group_id)
        elif kind == "clone_session_entry":
            yield from self._read_sessions(msg.clone_session_entry.session_id)
        else:
            raise invalid("PacketReplicationEngineEntry: no multicast group or clone session set")

    def _read_groups(self, group_id: int) -> Iterator[p4r.Entity]:
        if group_id >= FIRST_RESERVED_GROUP_ID:
            raise out_of_range(f"multicast group ids must be below {FIRST_RESERVED_GROUP_ID}")
        if group_id:
            group = self._group(group_id)
            if group is None:
                raise not_found(f"multicast group {group_id} does not exist")
            groups = [group]
        else:
            groups = sorted(
                (g for g in self.engine.groups() if g.group_id < FIRST_RESERVED_GROUP_ID),
                key=lambda g: g.group_id,
            )
        for group in groups:
            out = p4r.MulticastGroupEntry(multicast_group_id=group.group_id)
            self._encode_replicas(out.replicas, group.replicas, ("mc", group.group_id))
            meta = self.ctx.mc_metadata.get(group.group_id)
            if meta:
                out.metadata = meta
            yield p4r.Entity(
                packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
                    multicast_group_entry=out
                )
            )

    def _read_sessions(self, session_id: int) -> Iterator[p4r.Entity]:
        if session_id:
            session = self._session(session_id)
            if session is None:
                raise not_found(f"clone session {session_id} does not exist")
            sessions = [session]
        else:
            sessions = sorted(self.engine.clone_sessions(), key=lambda s: s.session_id)
        for session in sessions:
            out = p4r.CloneSessionEntry(
                session_id=session.session_id,
                class_of_service=session.class_of_service,
                packet_length_bytes=session.packet_length_bytes,
            )
            replicas = session.replicas
            if session.multicast_group_id:
                replicas = replicas + self.engine.replicate(session.multicast_group_id)
            self._encode_replicas(out.replicas, replicas, ("clone", session.session_id))
            yield p4r.Entity(
                packet_replication_engine_entry=p4r.PacketReplicationEngineEntry(
                    clone_session_entry=out
                )
            )

    def _encode_replicas(self, field, replicas: Sequence[Replica], key: tuple[str, int]) -> None:
        kinds = self.ctx.replica_kinds.get(key, {})
        for replica in sorted(replicas, key=lambda r: (r.instance, r.egress_port)):
            out = field.add(instance=replica.instance)
            if kinds.get((replica.egress_port, replica.instance), "port") == "egress_port":
                out.egress_port = replica.egress_port
            else:
                out.port = encode_unsigned(replica.egress_port)

    # --- helpers ------------------------------------------------------------------------

    def _group(self, group_id: int) -> MulticastGroup | None:
        try:
            return self.engine.get_group(group_id)
        except PreError:
            return None

    def _session(self, session_id: int) -> CloneSession | None:
        try:
            return self.engine.get_clone_session(session_id)
        except PreError:
            return None


def _restore(mapping: dict, key, value) -> None:
    if value is None:
        mapping.pop(key, None)
    else:
        mapping[key] = value
