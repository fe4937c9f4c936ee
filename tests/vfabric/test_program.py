"""The switches of a virtual fabric hold exactly the controller's plan."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest

from controller import p4names
from controller.artifacts import DEFAULT_PROGRAM, p4emu_pipeline
from controller.reconcile import diff_entries, initial_defaults
from p4emu import bundle, frontend
from p4emu.frontend import cache as frontend_cache
from p4emu.p4rt import P4RuntimeState
from vfabric import VirtualFabric
from vfabric.exceptions import ProgramError
from vfabric.program import Encoded, push_updates, shared_program


def test_program_is_checked_once_and_shared() -> None:
    assert shared_program() is shared_program()


def test_program_is_the_controllers_pipeline_loaded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(frontend_cache.CACHE_ENV, str(tmp_path / "cache"))
    program = tmp_path / "mrc_switch.p4"
    shutil.copytree(DEFAULT_PROGRAM.parent / "include", tmp_path / "include")
    shutil.copyfile(DEFAULT_PROGRAM, program)
    loads = []
    original = frontend.load_program

    def counted(path: str | Path, *args: Any, **kwargs: Any) -> Any:
        loads.append(path)
        return original(path, *args, **kwargs)

    monkeypatch.setattr(frontend, "load_program", counted)
    shared = shared_program(program)
    assert len(loads) == 1  # the P4Info comes from the same checked program
    fresh = p4emu_pipeline(program)
    assert shared.pipeline.p4info == fresh.p4info
    assert shared.pipeline.device_config == fresh.device_config
    assert len(list((tmp_path / "cache" / frontend_cache.SUBDIR).iterdir())) == 1


def test_the_source_is_bundled_only_when_the_pipeline_is_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(frontend_cache.CACHE_ENV, str(tmp_path / "cache"))
    program = tmp_path / "mrc_switch.p4"
    shutil.copytree(DEFAULT_PROGRAM.parent / "include", tmp_path / "include")
    shutil.copyfile(DEFAULT_PROGRAM, program)
    bundled: list[object] = []
    original = bundle.device_config_for

    def counted(path: str | Path) -> bytes:
        bundled.append(path)
        return original(path)

    monkeypatch.setattr(bundle, "device_config_for", counted)
    shared = shared_program(program)
    assert bundled == []  # the P4Info and codec need no device config
    assert shared.codec.p4info is shared.p4info
    assert shared.p4info == p4emu_pipeline(program).p4info
    bundled.clear()
    assert shared.pipeline is shared.pipeline and len(bundled) == 1  # made once, then kept
    assert shared.pipeline.p4info == shared.p4info


def test_a_bundling_error_is_the_pipelines_program_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(frontend_cache.CACHE_ENV, str(tmp_path / "cache"))
    program = tmp_path / "mrc_switch.p4"
    shutil.copytree(DEFAULT_PROGRAM.parent / "include", tmp_path / "include")
    shutil.copyfile(DEFAULT_PROGRAM, program)

    def refused(path: str | Path) -> bytes:
        raise bundle.DeviceConfigError(f"cannot bundle {path}")

    monkeypatch.setattr(bundle, "device_config_for", refused)
    shared = shared_program(program)  # a virtual fabric sends no bundle: nothing refused
    with pytest.raises(ProgramError, match=r"P4 program .*: cannot bundle .*: cannot bundle"):
        shared.pipeline  # noqa: B018 - the property's error is the point


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


def test_each_entry_object_is_encoded_once_per_build(monkeypatch: pytest.MonkeyPatch) -> None:
    fabric = VirtualFabric("tiny")
    codec = fabric.program.codec
    plans = [fabric.plan[name] for name in fabric.switches]
    alone = [
        [u.SerializeToString(deterministic=True) for u in push_updates(plan, codec)]
        for plan in plans
    ]
    encodes: list[object] = []
    real = codec.encode_update

    def counted(kind: str, entry: object) -> object:
        encodes.append(entry)
        return real(kind, entry)  # type: ignore[arg-type]

    monkeypatch.setattr(codec, "encode_update", counted)
    encoded: Encoded = {}
    shared = [push_updates(plan, codec, encoded=encoded) for plan in plans]
    assert [[u.SerializeToString(deterministic=True) for u in us] for us in shared] == alone
    assert len(encodes) == len({id(e) for e in encodes}) == len(encoded) < sum(map(len, alone))
    # an equal entry that is another object is encoded for itself
    first = next(e for e in plans[0].entries if not e.is_default)
    copy = first._replace(params=tuple(list(first.params)))
    other = dataclasses.replace(plans[0], entries=(copy,))
    before = len(encodes)
    push_updates(other, codec, encoded=encoded)
    assert encodes[before:] == [copy] and encodes[before] is copy


def test_trimming_and_ecn_off_change_only_the_class_parameters() -> None:
    codec = shared_program().codec
    plan = VirtualFabric("tiny").plan["p0-t0-0"]
    on = push_updates(plan, codec)
    off = push_updates(plan, codec, trimming=False, ecn=False)
    differ = [i for i, (a, b) in enumerate(zip(on, off)) if a != b]
    tables = {codec.decode(off[i].entity).table for i in differ}
    assert differ and tables == {p4names.PORT_CLASS_PARAMS}
