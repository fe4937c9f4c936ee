"""The switches of a virtual fabric hold exactly the controller's plan."""

from __future__ import annotations

from controller import p4names
from controller.reconcile import diff_entries, initial_defaults
from p4emu.p4rt import P4RuntimeState
from vfabric import VirtualFabric
from vfabric.program import push_updates, shared_program


def test_program_is_checked_once_and_shared() -> None:
    assert shared_program() is shared_program()


def test_every_switch_reads_back_equal_to_the_plan() -> None:
    fabric = VirtualFabric("tiny")
    codec = fabric.program.codec
    for name, node in fabric.switches.items():
        state = P4RuntimeState(node.switch.objects)
        read = state.read_all(codec.read_request_entities(p4names.OWNED_TABLES))
        entries = [codec.decode(entity) for entity in read]
        left = diff_entries(fabric.plan[name].entries, entries, initial_defaults(codec))
        assert not left, f"{name}: {left.changes[:3]}"


def test_updates_are_the_push_updates_byte_for_byte() -> None:
    fabric = VirtualFabric("tiny")
    codec = fabric.program.codec
    plan = fabric.plan["p0-t1-0"]
    ours = [u.SerializeToString(deterministic=True) for u in push_updates(plan, codec)]
    changes = diff_entries(plan.entries, [], initial_defaults(codec)).changes
    pushed = [
        codec.encode_update(c.kind, c.entry).SerializeToString(deterministic=True) for c in changes
    ]
    assert ours == pushed and len(ours) == len(plan.entries)


def test_trimming_and_ecn_off_change_only_the_class_parameters() -> None:
    codec = shared_program().codec
    plan = VirtualFabric("tiny").plan["p0-t0-0"]
    on = push_updates(plan, codec)
    off = push_updates(plan, codec, trimming=False, ecn=False)
    differ = [i for i, (a, b) in enumerate(zip(on, off)) if a != b]
    tables = {codec.decode(off[i].entity).table for i in differ}
    assert differ and tables == {p4names.PORT_CLASS_PARAMS}
