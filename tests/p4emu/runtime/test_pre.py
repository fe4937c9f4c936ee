"""Packet replication engine: multicast groups, clone sessions, BMv2 CLI node model."""

from __future__ import annotations

import pytest

from p4emu.runtime.exceptions import (
    PreEntryExistsError,
    PreEntryNotFoundError,
    PreInvalidEntryError,
)
from p4emu.runtime.pre import CloneSession, Replica, ReplicationEngine


def test_multicast_group_lifecycle() -> None:
    pre = ReplicationEngine()
    pre.insert_group(1, [Replica(1, 0), Replica(2, 0), Replica(2, 1)])
    assert pre.replicate(1) == (Replica(1, 0), Replica(2, 0), Replica(2, 1))
    pre.modify_group(1, [Replica(3, 5)])
    assert pre.replicate(1) == (Replica(3, 5),)
    assert [g.group_id for g in pre.groups()] == [1]
    pre.delete_group(1)
    assert pre.replicate(1) == ()  # unknown group: no copies


def test_multicast_group_errors() -> None:
    pre = ReplicationEngine()
    pre.insert_group(7, [Replica(1)])
    with pytest.raises(PreEntryExistsError, match="multicast group 7 already exists"):
        pre.insert_group(7, [])
    with pytest.raises(PreEntryNotFoundError, match="multicast group 8 does not exist"):
        pre.modify_group(8, [])
    with pytest.raises(PreEntryNotFoundError):
        pre.delete_group(8)
    with pytest.raises(PreEntryNotFoundError):
        pre.get_group(8)
    with pytest.raises(PreInvalidEntryError, match="out of range"):
        pre.insert_group(0, [])
    with pytest.raises(PreInvalidEntryError, match="out of range"):
        pre.insert_group(0x10000, [])
    with pytest.raises(PreInvalidEntryError, match="duplicate replica"):
        pre.insert_group(9, [Replica(1, 1), Replica(1, 1)])
    with pytest.raises(PreInvalidEntryError, match="egress port 512"):
        pre.insert_group(9, [Replica(512, 0)])
    with pytest.raises(PreInvalidEntryError, match="instance"):
        pre.insert_group(9, [Replica(1, 0x10000)])


def test_clone_session_lifecycle_and_truncation() -> None:
    pre = ReplicationEngine()
    session = CloneSession(5, (Replica(255, 0),), class_of_service=2, packet_length_bytes=64)
    pre.insert_clone_session(session)
    assert pre.clone(5) == ((Replica(255, 0),), 64)
    assert pre.get_clone_session(5) == session
    pre.modify_clone_session(CloneSession(5, (Replica(3, 0), Replica(4, 0))))
    assert pre.clone(5) == ((Replica(3, 0), Replica(4, 0)), 0)
    pre.delete_clone_session(5)
    assert pre.clone(5) == ((), 0)  # unconfigured session: no clone


def test_clone_session_errors() -> None:
    pre = ReplicationEngine()
    pre.insert_clone_session(CloneSession(1, (Replica(1),)))
    with pytest.raises(PreEntryExistsError, match="clone session 1 already exists"):
        pre.insert_clone_session(CloneSession(1, ()))
    with pytest.raises(PreEntryNotFoundError):
        pre.modify_clone_session(CloneSession(2, ()))
    with pytest.raises(PreEntryNotFoundError):
        pre.delete_clone_session(2)
    with pytest.raises(PreInvalidEntryError, match="out of range"):
        pre.insert_clone_session(CloneSession(0x8000, ()))
    with pytest.raises(PreInvalidEntryError, match="packet_length_bytes"):
        pre.insert_clone_session(CloneSession(3, (), packet_length_bytes=-1))
    with pytest.raises(PreInvalidEntryError, match="duplicate replica"):
        pre.insert_clone_session(CloneSession(3, (Replica(1), Replica(1))))


def test_bmv2_cli_node_model() -> None:
    pre = ReplicationEngine()
    pre.mc_mgrp_create(1)
    first = pre.mc_node_create(0, [3, 1, 2])
    second = pre.mc_node_create(7, [5])
    assert (first, second) == (0, 1)
    pre.mc_node_associate(1, first)
    pre.mc_node_associate(1, second)
    assert pre.replicate(1) == (Replica(1, 0), Replica(2, 0), Replica(3, 0), Replica(5, 7))
    pre.mc_node_update(first, [4])
    assert pre.replicate(1) == (Replica(4, 0), Replica(5, 7))
    pre.mc_node_dissociate(1, second)
    assert pre.replicate(1) == (Replica(4, 0),)
    with pytest.raises(PreEntryExistsError):
        pre.mc_node_associate(1, first)
    with pytest.raises(PreEntryNotFoundError, match="node 9"):
        pre.mc_node_associate(1, 9)
    with pytest.raises(PreEntryNotFoundError):
        pre.mc_node_associate(2, first)
    pre.mc_node_destroy(first)
    assert pre.replicate(1) == ()


def test_mirroring_cli_commands() -> None:
    pre = ReplicationEngine()
    pre.mirroring_add(10, 4)
    assert pre.clone(10) == ((Replica(4, 0),), 0)
    pre.mirroring_add(10, 6)  # replaces, like BMv2
    assert pre.clone(10) == ((Replica(6, 0),), 0)
    pre.mc_mgrp_create(2)
    pre.mc_node_associate(2, pre.mc_node_create(1, [7, 8]))
    pre.mirroring_add_mc(11, 2)
    assert pre.clone(11) == ((Replica(7, 1), Replica(8, 1)), 0)
    pre.mirroring_delete(10)
    assert pre.clone(10) == ((), 0)
