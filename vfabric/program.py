"""The switch program, loaded once, and the controller's entries for each switch.

Every switch of a virtual fabric runs ``p4src/mrc_switch.p4``: the source is parsed and
type-checked once per process (:func:`shared_program`; kept on disk between processes by
:func:`p4emu.frontend.load_checked`), its P4Info is taken from that checked program, and
every :class:`p4emu.switch.Switch` is built from it. The controller's whole pipeline (the
P4Info with the source bundle a P4Runtime switch is sent) is made only when asked for
(:attr:`SharedProgram.pipeline`): a virtual fabric sends no device config. Entries come from
:func:`controller.plan.plan_fabric` and are turned into P4Runtime ``Update`` messages by
the controller's own code, exactly as ``mrc-controller push`` does against a freshly
started switch (``controller.reconcile.diff_entries`` against nothing, then
``EntityCodec.encode_update`` with the P4Info of ``controller.artifacts.p4emu_pipeline``);
the messages are then applied by p4emu's P4Runtime entity layer
(:class:`p4emu.p4rt.P4RuntimeState`), the same code the ``p4emu-switch`` gRPC server runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from controller import p4names
from controller.artifacts import DEFAULT_PROGRAM, Pipeline, p4emu_p4info, p4emu_pipeline
from controller.entities import EntityCodec
from controller.exceptions import ControllerError
from controller.plan import Entry, SwitchPlan
from controller.reconcile import diff_entries, initial_defaults
from p4emu import CheckedProgram
from p4emu.exceptions import P4EmuError
from p4emu.frontend import load_checked
from p4emu.p4rt import P4RuntimeState
from p4emu.proto import p4i, p4r
from p4emu.switch import Switch
from vfabric.exceptions import ProgramError


@dataclass(frozen=True)
class SharedProgram:
    """One checked P4 program and the controller's view of it (P4Info, codec); its
    :attr:`pipeline` on first use."""

    path: Path
    checked: CheckedProgram
    p4info: p4i.P4Info
    codec: EntityCodec

    @cached_property
    def pipeline(self) -> Pipeline:
        """The controller's p4emu pipeline of this program (``controller.artifacts.
        p4emu_pipeline`` with the checked program): made on first use, since bundling the
        program's source for a device config reads every file it includes again, and a
        virtual fabric never sends one. Raises :class:`ProgramError` as
        :func:`shared_program` does."""
        try:
            return p4emu_pipeline(self.path, checked=self.checked)
        except (P4EmuError, ControllerError) as exc:
            raise ProgramError(f"P4 program {self.path}: {exc}") from None


_CACHE: dict[tuple[Path, int], SharedProgram] = {}


def shared_program(path: str | Path | None = None) -> SharedProgram:
    """The checked program at ``path`` (default ``p4src/mrc_switch.p4``), loaded once per
    process and file version."""
    resolved = Path(path).resolve() if path is not None else DEFAULT_PROGRAM
    try:
        key = (resolved, resolved.stat().st_mtime_ns)
    except OSError as exc:
        raise ProgramError(f"P4 program {resolved}: {exc.strerror}") from None
    found = _CACHE.get(key)
    if found is None:
        try:
            checked = load_checked(resolved)
            p4info = p4emu_p4info(resolved, checked)
            codec = EntityCodec(p4info)
        except (P4EmuError, ControllerError) as exc:
            raise ProgramError(f"P4 program {resolved}: {exc}") from None
        found = _CACHE[key] = SharedProgram(resolved, checked, p4info, codec)
    return found


def class_params_override(entries: tuple[Entry, ...], *, trimming: bool, ecn: bool) -> list[Entry]:
    """The plan's entries with trimming and/or ECN switched off in ``port_class_params``
    (the only change ``VirtualFabric(trimming=False, ecn=False)`` makes to the plan)."""
    if trimming and ecn:
        return list(entries)
    names = p4names.REQUIRED_TABLES[p4names.PORT_CLASS_PARAMS].actions[p4names.SET_CLASS_PARAMS]
    ecn_at, trim_at = names.index(p4names.ECN_ENABLE), names.index(p4names.TRIM_ENABLE)
    out = []
    for entry in entries:
        if entry.table == p4names.PORT_CLASS_PARAMS:
            params = list(entry.params)
            if not ecn:
                params[ecn_at] = 0
            if not trimming:
                params[trim_at] = 0
            entry = entry._replace(params=tuple(params))
        out.append(entry)
    return out


#: what :func:`push_updates` encoded for earlier switches: (update kind, ``id`` of the
#: entry) -> (the entry, kept so that its ``id`` is not reused, its Update message)
Encoded = dict[tuple[str, int], tuple[Entry, p4r.Update]]


def push_updates(
    plan: SwitchPlan,
    codec: EntityCodec,
    *,
    trimming: bool = True,
    ecn: bool = True,
    encoded: Encoded | None = None,
) -> list[p4r.Update]:
    """The Update messages ``mrc-controller push`` writes to a fresh switch for ``plan``.

    ``encoded`` (one per fabric build and codec, filled here): an entry object that an
    earlier switch's updates already held (the plan gives the switches of one role the
    same objects: 142 distinct of 372 for 12 switches) takes that switch's message
    instead of being encoded again: an ``Entry`` is immutable, so the same object encodes
    to the same message. Its messages are then shared between switches: only for a
    caller that, as :func:`program_switch`, reads them and nothing else."""
    entries = class_params_override(plan.entries, trimming=trimming, ecn=ecn)
    diff = diff_entries(entries, [], initial_defaults(codec))
    if encoded is None:
        return [codec.encode_update(change.kind, change.entry) for change in diff.changes]
    out = []
    for change in diff.changes:
        entry = change.entry
        key = (change.kind, id(entry))
        found = encoded.get(key)
        if found is None or found[0] is not entry:
            found = encoded[key] = (entry, codec.encode_update(change.kind, entry))
        out.append(found[1])
    return out


def program_switch(switch: Switch, updates: list[p4r.Update], name: str) -> P4RuntimeState:
    """Apply ``updates`` through p4emu's P4Runtime layer; any failed update is an error."""
    state = P4RuntimeState(switch.objects)
    errors = state.write(updates)
    for index, error in enumerate(errors):
        if error.canonical_code != 0:
            raise ProgramError(
                f"{name}: update {index} of {len(updates)} was refused: {error.message}"
            )
    return state
