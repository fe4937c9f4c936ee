"""The packet replication engine: multicast groups and clone (mirror) sessions.

The model is P4Runtime's ``PacketReplicationEngineEntry``:

- ``MulticastGroupEntry``: ``multicast_group_id`` -> replicas ``(egress_port, instance)``.
  In v1model the instance becomes ``standard_metadata.egress_rid`` of the copy. Group id 0
  means "no multicast" (``mcast_grp == 0``) and is rejected; ids are 16 bits (the width of
  ``standard_metadata.mcast_grp``).
- ``CloneSessionEntry``: ``session_id`` -> replicas, ``class_of_service`` and
  ``packet_length_bytes`` (0: no truncation, else clones are cut to that many bytes).
  Session ids follow BMv2: 0 .. 32767 (``RegisterAccess::MAX_MIRROR_SESSION_ID``).

Replicas of one entry must be unique (INVALID_ARGUMENT otherwise), as P4Runtime requires.
Replication order is the replica order given.

The BMv2 CLI model used by STF files (``mc_mgrp_create``, ``mc_node_create RID PORTS``,
``mc_node_associate GROUP NODE``, ``mirroring_add SESSION PORT``, ``mirroring_add_mc
SESSION GROUP``) is provided on top: a node is a (rid, ports) set; associating it with a
group adds one replica per port (ports in increasing order, nodes in association order,
as BMv2's simple PRE walks them). A clone session may also point at a multicast group
(``mirroring_add_mc``); its copies are the group's replicas at clone time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from p4emu.runtime.exceptions import (
    PreEntryExistsError,
    PreEntryNotFoundError,
    PreInvalidEntryError,
)

MAX_MULTICAST_GROUP_ID = 0xFFFF
MAX_CLONE_SESSION_ID = 0x7FFF
MAX_PORT = 0x1FF  # ports are bit<9> in v1model
MAX_INSTANCE = 0xFFFF  # egress_rid is bit<16>


@dataclass(frozen=True, slots=True)
class Replica:
    """One copy: its egress port and instance (``egress_rid`` of the copy)."""

    egress_port: int
    instance: int = 0


@dataclass(frozen=True)
class MulticastGroup:
    """A multicast group: its id and its replicas in replication order."""

    group_id: int
    replicas: tuple[Replica, ...]


@dataclass(frozen=True)
class CloneSession:
    """A clone session: its replicas, class of service, the length clones are cut to (0: no
    truncation) and the multicast group it points at (0: none)."""

    session_id: int
    replicas: tuple[Replica, ...] = ()
    class_of_service: int = 0
    packet_length_bytes: int = 0
    multicast_group_id: int = 0  # BMv2 mirroring_add_mc; 0 = none


@dataclass
class _Node:
    """A BMv2 CLI node: its rid, its ports and the groups it is associated with."""

    rid: int
    ports: tuple[int, ...]
    groups: list[int] = field(default_factory=list)


class ReplicationEngine:
    """Multicast groups and clone sessions of one switch."""

    def __init__(self, max_port: int = MAX_PORT) -> None:
        self.max_port = max_port
        self._groups: dict[int, MulticastGroup] = {}
        self._sessions: dict[int, CloneSession] = {}
        # BMv2 CLI node model
        self._nodes: dict[int, _Node] = {}
        self._next_node = 0
        self._group_nodes: dict[int, list[int]] = {}

    # --- multicast groups (P4Runtime) --------------------------------------------------

    def insert_group(self, group_id: int, replicas: Iterable[Replica]) -> MulticastGroup:
        self._check_group_id(group_id)
        if group_id in self._groups:
            raise PreEntryExistsError(f"multicast group {group_id} already exists")
        group = MulticastGroup(
            group_id, self._check_replicas(replicas, f"multicast group {group_id}")
        )
        self._groups[group_id] = group
        return group

    def modify_group(self, group_id: int, replicas: Iterable[Replica]) -> MulticastGroup:
        self._check_group_id(group_id)
        if group_id not in self._groups:
            raise PreEntryNotFoundError(f"multicast group {group_id} does not exist")
        group = MulticastGroup(
            group_id, self._check_replicas(replicas, f"multicast group {group_id}")
        )
        self._groups[group_id] = group
        # explicit replicas replace whatever CLI nodes built the group
        for handle in self._group_nodes.pop(group_id, []):
            self._nodes[handle].groups.remove(group_id)
        return group

    def delete_group(self, group_id: int) -> None:
        self._check_group_id(group_id)
        if self._groups.pop(group_id, None) is None:
            raise PreEntryNotFoundError(f"multicast group {group_id} does not exist")
        for handle in self._group_nodes.pop(group_id, []):
            self._nodes[handle].groups.remove(group_id)

    def get_group(self, group_id: int) -> MulticastGroup:
        group = self._groups.get(group_id)
        if group is None:
            raise PreEntryNotFoundError(f"multicast group {group_id} does not exist")
        return group

    def groups(self) -> list[MulticastGroup]:
        return list(self._groups.values())

    def replicate(self, group_id: int) -> tuple[Replica, ...]:
        """Packet path: the copies of a packet sent to ``group_id``.

        An unknown group yields no copy (BMv2 replicates to nothing, the packet is dropped).
        """
        group = self._groups.get(group_id)
        return group.replicas if group is not None else ()

    # --- clone sessions (P4Runtime) ----------------------------------------------------

    def insert_clone_session(self, session: CloneSession) -> CloneSession:
        self._check_session(session)
        if session.session_id in self._sessions:
            raise PreEntryExistsError(f"clone session {session.session_id} already exists")
        self._sessions[session.session_id] = session
        return session

    def modify_clone_session(self, session: CloneSession) -> CloneSession:
        self._check_session(session)
        if session.session_id not in self._sessions:
            raise PreEntryNotFoundError(f"clone session {session.session_id} does not exist")
        self._sessions[session.session_id] = session
        return session

    def delete_clone_session(self, session_id: int) -> None:
        self._check_session_id(session_id)
        if self._sessions.pop(session_id, None) is None:
            raise PreEntryNotFoundError(f"clone session {session_id} does not exist")

    def get_clone_session(self, session_id: int) -> CloneSession:
        session = self._sessions.get(session_id)
        if session is None:
            raise PreEntryNotFoundError(f"clone session {session_id} does not exist")
        return session

    def clone_sessions(self) -> list[CloneSession]:
        return list(self._sessions.values())

    def clone(self, session_id: int) -> tuple[tuple[Replica, ...], int]:
        """Packet path: ``(replicas, truncate_to_bytes)`` for a clone to ``session_id``.

        An unconfigured session yields no copy (BMv2 skips the clone silently).
        """
        session = self._sessions.get(session_id)
        if session is None:
            return (), 0
        replicas = session.replicas
        if session.multicast_group_id:
            replicas = replicas + self.replicate(session.multicast_group_id)
        return replicas, session.packet_length_bytes

    # --- BMv2 CLI node model (STF files) -----------------------------------------------

    def mc_mgrp_create(self, group_id: int) -> None:
        """Create an empty group (``mc_mgrp_create``)."""
        self.insert_group(group_id, ())
        self._group_nodes[group_id] = []

    def mc_mgrp_destroy(self, group_id: int) -> None:
        self.delete_group(group_id)

    def mc_node_create(self, rid: int, ports: Sequence[int]) -> int:
        """Create a node and return its handle (0, 1, 2... as BMv2 hands them out)."""
        if not 0 <= rid <= MAX_INSTANCE:
            raise PreInvalidEntryError(f"node rid {rid} out of range [0, {MAX_INSTANCE}]")
        unique = tuple(sorted(set(ports)))
        for port in unique:
            self._check_port(port, f"node rid {rid}")
        handle = self._next_node
        self._next_node += 1
        self._nodes[handle] = _Node(rid, unique)
        return handle

    def mc_node_update(self, handle: int, ports: Sequence[int]) -> None:
        node = self._node(handle)
        unique = tuple(sorted(set(ports)))
        for port in unique:
            self._check_port(port, f"node {handle}")
        node.ports = unique
        for group_id in node.groups:
            self._rebuild_group(group_id)

    def mc_node_destroy(self, handle: int) -> None:
        node = self._node(handle)
        for group_id in list(node.groups):
            self.mc_node_dissociate(group_id, handle)
        del self._nodes[handle]

    def mc_node_associate(self, group_id: int, handle: int) -> None:
        node = self._node(handle)
        self.get_group(group_id)
        nodes = self._group_nodes.setdefault(group_id, [])
        if handle in nodes:
            raise PreEntryExistsError(f"node {handle} is already in multicast group {group_id}")
        nodes.append(handle)
        node.groups.append(group_id)
        self._rebuild_group(group_id)

    def mc_node_dissociate(self, group_id: int, handle: int) -> None:
        node = self._node(handle)
        nodes = self._group_nodes.get(group_id, [])
        if handle not in nodes:
            raise PreEntryNotFoundError(f"node {handle} is not in multicast group {group_id}")
        nodes.remove(handle)
        node.groups.remove(group_id)
        self._rebuild_group(group_id)

    def mirroring_add(self, session_id: int, egress_port: int) -> None:
        """``mirroring_add SESSION PORT`` (replaces an existing session, as BMv2 does)."""
        self._sessions.pop(session_id, None)
        self.insert_clone_session(CloneSession(session_id, (Replica(egress_port, 0),)))

    def mirroring_add_mc(self, session_id: int, group_id: int) -> None:
        """``mirroring_add_mc SESSION GROUP``: clones go to a multicast group."""
        self._check_group_id(group_id)
        self._sessions.pop(session_id, None)
        self.insert_clone_session(CloneSession(session_id, multicast_group_id=group_id))

    def mirroring_delete(self, session_id: int) -> None:
        self.delete_clone_session(session_id)

    # --- validation ---------------------------------------------------------------------

    def _node(self, handle: int) -> _Node:
        node = self._nodes.get(handle)
        if node is None:
            raise PreEntryNotFoundError(f"multicast node {handle} does not exist")
        return node

    def _rebuild_group(self, group_id: int) -> None:
        replicas = [
            Replica(port, self._nodes[handle].rid)
            for handle in self._group_nodes.get(group_id, [])
            for port in self._nodes[handle].ports
        ]
        # two nodes may carry the same (port, rid); BMv2 sends both copies
        self._groups[group_id] = MulticastGroup(group_id, tuple(replicas))

    def _check_group_id(self, group_id: int) -> None:
        if not 1 <= group_id <= MAX_MULTICAST_GROUP_ID:
            raise PreInvalidEntryError(
                f"multicast group id {group_id} out of range [1, {MAX_MULTICAST_GROUP_ID}]"
            )

    def _check_session_id(self, session_id: int) -> None:
        if not 0 <= session_id <= MAX_CLONE_SESSION_ID:
            raise PreInvalidEntryError(
                f"clone session id {session_id} out of range [0, {MAX_CLONE_SESSION_ID}]"
            )

    def _check_session(self, session: CloneSession) -> None:
        where = f"clone session {session.session_id}"
        self._check_session_id(session.session_id)
        self._check_replicas(session.replicas, where)
        if session.packet_length_bytes < 0:
            raise PreInvalidEntryError(f"{where}: packet_length_bytes must not be negative")
        if session.class_of_service < 0:
            raise PreInvalidEntryError(f"{where}: class_of_service must not be negative")
        if session.multicast_group_id:
            self._check_group_id(session.multicast_group_id)

    def _check_port(self, port: int, where: str) -> None:
        if not 0 <= port <= self.max_port:
            raise PreInvalidEntryError(
                f"{where}: egress port {port} out of range [0, {self.max_port}]"
            )

    def _check_replicas(self, replicas: Iterable[Replica], where: str) -> tuple[Replica, ...]:
        out = tuple(replicas)
        seen: set[Replica] = set()
        for replica in out:
            self._check_port(replica.egress_port, where)
            if not 0 <= replica.instance <= MAX_INSTANCE:
                raise PreInvalidEntryError(
                    f"{where}: instance {replica.instance} out of range [0, {MAX_INSTANCE}]"
                )
            if replica in seen:
                raise PreInvalidEntryError(
                    f"{where}: duplicate replica (port {replica.egress_port}, "
                    f"instance {replica.instance})"
                )
            seen.add(replica)
        return out
