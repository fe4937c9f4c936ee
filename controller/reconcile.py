"""Read back, diff against the plan, write only the difference.

:func:`diff_entries` is pure: planned entries vs. entries read from a switch -> the DELETE,
MODIFY and INSERT updates that make the switch equal to the plan (deletes first, so a full
table makes room before inserts). :func:`sync_switch` runs one switch through
pipeline check -> read -> diff -> write (-> read-back check), and returns a report instead of
raising, so that one bad switch never stops the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import controller.p4names as p4names
from controller.artifacts import Pipeline, pipeline_cookie
from controller.entities import EntityCodec
from controller.exceptions import (
    ControllerError,
    DecodeError,
    EncodeError,
    PipelineError,
    PlanError,
    SwitchAccessError,
    UpdateFailure,
)
from controller.plan import Entry, SwitchPlan
from p4emu.proto import p4r

if TYPE_CHECKING:
    from controller.p4rt_client import SwitchClient

DEFAULT_BATCH_SIZE = 500
PIPELINE_MODES = ("auto", "keep", "force")
ORDER = {"DELETE": 0, "MODIFY": 1, "INSERT": 2}


def format_entry(entry: Entry) -> str:
    """:func:`controller.notation.format_entry`, imported when a message needs it: a
    virtual fabric diffs its plans here but never formats an entry (start-up)."""
    from controller.notation import format_entry as notation_format_entry

    return notation_format_entry(entry)


@dataclass(frozen=True, slots=True)
class Change:
    """One update: ``entry`` is written (INSERT/MODIFY) or removed (DELETE); ``current`` is
    what the switch held (None for INSERT)."""

    kind: str
    entry: Entry
    current: Entry | None = None


@dataclass(frozen=True)
class Diff:
    """The updates that turn a switch's entries into the plan's; false when there are none."""

    changes: tuple[Change, ...]

    def __bool__(self) -> bool:
        return bool(self.changes)

    def count(self, kind: str) -> int:
        return sum(1 for change in self.changes if change.kind == kind)


def diff_entries(
    planned: Iterable[Entry],
    current: Iterable[Entry],
    initial_defaults: Mapping[str, Entry | None],
) -> Diff:
    """The updates that turn ``current`` (read from a switch) into ``planned``.

    ``initial_defaults`` has one item per table the controller owns: its default entry when
    the plan does not set one (the P4Info's initial default action; None if unknown, then
    whatever the switch holds is accepted). A table's default entry cannot be deleted, only
    modified back.
    """
    wanted: dict[tuple[object, ...], Entry] = {}
    for entry in planned:
        if entry.key in wanted and wanted[entry.key] != entry:
            raise PlanError(f"the plan has two entries with the key of {format_entry(entry)}")
        wanted[entry.key] = entry
    have: dict[tuple[object, ...], Entry] = {}
    for entry in current:
        have[entry.key] = entry

    changes: list[Change] = []
    for key, entry in have.items():
        if entry.is_default:
            continue
        target = wanted.get(key)
        if target is None:
            changes.append(Change("DELETE", entry, entry))
        elif (target.action, target.params) != (entry.action, entry.params):
            changes.append(Change("MODIFY", target, entry))
    for key, entry in wanted.items():
        if not entry.is_default and key not in have:
            changes.append(Change("INSERT", entry))

    for table, initial in initial_defaults.items():
        key = (table, (), 0, True)
        target = wanted.get(key, initial)
        now = have.get(key)
        if target is None:
            continue
        if now is None:
            # Not reported: only write if the plan sets it (the initial one is in place).
            if key in wanted:
                changes.append(Change("MODIFY", target))
        elif (target.action, target.params) != (now.action, now.params):
            changes.append(Change("MODIFY", target, now))
    for table in {entry.table for entry in wanted.values()} - set(initial_defaults):
        raise PlanError(f"the plan writes {table}, which the controller does not own")
    changes.sort(key=lambda change: ORDER[change.kind])
    return Diff(tuple(changes))


# ---------------------------------------------------------------------- one switch


@dataclass
class SwitchReport:
    """What happened to one switch. ``status`` is ``ok`` or ``failed``; ``pipeline`` is
    ``same`` (already running ours), ``set`` (installed now), ``missing`` / ``different``
    (diff only: what push would do), or ``unknown`` (not reached)."""

    switch: str
    address: str
    status: str = "ok"
    pipeline: str = "unknown"
    planned: int = 0
    inserted: int = 0
    modified: int = 0
    deleted: int = 0
    failures: tuple[UpdateFailure, ...] = ()
    error: str | None = None
    error_kind: str | None = None
    error_code: str | None = None
    seconds: float = 0.0
    changes: tuple[Change, ...] = ()
    verified: bool | None = None  # read-back equal to the plan (None: not checked)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def written(self) -> int:
        return self.inserted + self.modified + self.deleted

    def fail(self, error: ControllerError) -> SwitchReport:
        self.status = "failed"
        self.error = error.message if isinstance(error, SwitchAccessError) else str(error)
        self.error_kind = getattr(error, "kind", type(error).__name__)
        self.error_code = getattr(error, "code", None)
        if hasattr(error, "failures"):
            self.failures = tuple(error.failures)
        return self


@dataclass(frozen=True)
class SyncOptions:
    """How to reconcile a switch: the pipeline mode (``auto``, ``keep`` or ``force``), the
    number of updates per Write, diff only (``dry_run``) and read back after writing
    (``verify``)."""

    pipeline_mode: str = "auto"  # auto: install if different; keep: never; force: always
    batch_size: int = DEFAULT_BATCH_SIZE
    dry_run: bool = False  # diff only: no arbitration needed, nothing written
    verify: bool = False  # read back after writing and compare with the plan

    def __post_init__(self) -> None:
        if self.pipeline_mode not in PIPELINE_MODES:
            raise ControllerError(
                f"pipeline mode {self.pipeline_mode!r} is not one of {', '.join(PIPELINE_MODES)}"
            )
        if self.batch_size < 1:
            raise ControllerError(f"batch size must be >= 1, got {self.batch_size}")


async def pipeline_state(client: SwitchClient, pipeline: Pipeline) -> str:
    """``same``, ``missing`` or ``different``: how the switch's pipeline compares with ours.
    A pipeline with another cookie but the same P4Info and device config counts as same."""
    running = await client.get_pipeline("COOKIE_ONLY")
    if running is None:
        return "missing"
    if running.HasField("cookie") and running.cookie.cookie == pipeline.cookie:
        return "same"
    full = await client.get_pipeline("ALL")
    if full is None:
        return "missing"
    if pipeline_cookie(full.p4info, full.p4_device_config) == pipeline.cookie:
        return "same"
    return "different"


async def read_owned(client: SwitchClient, codec: EntityCodec) -> list[Entry]:
    """Every entry (and default entry) of the tables the controller owns."""
    entities = await client.read(codec.read_request_entities(p4names.OWNED_TABLES))
    entries = []
    for entity in entities:
        try:
            entries.append(codec.decode(entity))
        except DecodeError as exc:
            raise DecodeError(f"{client.name}: cannot interpret what it holds: {exc}") from None
    return entries


def initial_defaults(codec: EntityCodec) -> dict[str, Entry | None]:
    return {name: codec.tables[name].initial_default for name in p4names.OWNED_TABLES}


async def write_changes(
    client: SwitchClient,
    codec: EntityCodec,
    changes: Sequence[Change],
    batch_size: int,
    on_batch: Callable[[int], None] | None = None,
) -> dict[int, UpdateFailure]:
    """Writes ``changes`` in batches; returns the failures by index in ``changes``."""
    failures: dict[int, UpdateFailure] = {}
    for start in range(0, len(changes), batch_size):
        batch = changes[start : start + batch_size]
        updates: list[p4r.Update] = [codec.encode_update(c.kind, c.entry) for c in batch]
        failed = await client.write(updates)
        for result in failed:
            change = batch[result.index]
            failures[start + result.index] = UpdateFailure(
                change.kind, format_entry(change.entry), result.code, result.message
            )
        if on_batch is not None:
            on_batch(len(batch))
    return failures


async def sync_switch(
    client: SwitchClient,
    codec: EntityCodec,
    plan: SwitchPlan,
    pipeline: Pipeline,
    options: SyncOptions,
    on_batch: Callable[[int], None] | None = None,
) -> SwitchReport:
    """Brings one connected switch (primary unless ``dry_run``) to ``plan``."""
    started = time.perf_counter()
    report = SwitchReport(plan.name, client.address, planned=len(plan.entries))
    try:
        state = await pipeline_state(client, pipeline)
        report.pipeline = state
        if options.pipeline_mode == "force" or state != "same":
            if options.dry_run:
                if state != "same":
                    # Nothing to read: push would install the pipeline and write everything.
                    report.changes = diff_entries(plan.entries, [], initial_defaults(codec)).changes
                    return report
            elif options.pipeline_mode == "keep":
                raise PipelineError(
                    plan.name,
                    f"its pipeline is {state} and --pipeline keep forbids installing "
                    f"ours ({pipeline.description})",
                )
            else:
                await client.set_pipeline(pipeline)
                report.pipeline = "set"
        current = await read_owned(client, codec)
        diff = diff_entries(plan.entries, current, initial_defaults(codec))
        report.changes = diff.changes
        if options.dry_run or not diff:
            return report
        failed = await write_changes(client, codec, diff.changes, options.batch_size, on_batch)
        by_kind = {"INSERT": 0, "MODIFY": 0, "DELETE": 0}
        for index, change in enumerate(diff.changes):
            if index not in failed:
                by_kind[change.kind] += 1
        report.inserted, report.modified, report.deleted = (
            by_kind["INSERT"],
            by_kind["MODIFY"],
            by_kind["DELETE"],
        )
        if failed:
            failures = [failed[index] for index in sorted(failed)]
            report.failures = tuple(failures)
            report.status = "failed"
            report.error_kind = "write"
            report.error = (
                f"{len(failures)} of {len(diff.changes)} updates failed "
                f"({len(diff.changes) - len(failures)} applied); first: {failures[0]}"
            )
            return report
        if options.verify:
            after = await read_owned(client, codec)
            rest = diff_entries(plan.entries, after, initial_defaults(codec))
            report.verified = not rest
            if rest:
                report.status = "failed"
                report.error_kind = "verify"
                report.error = (
                    f"read-back differs from the plan after writing: {len(rest.changes)} "
                    f"entries, first: {rest.changes[0].kind} {format_entry(rest.changes[0].entry)}"
                )
    except (SwitchAccessError, EncodeError, DecodeError, PlanError) as exc:
        report.fail(exc)
    finally:
        report.seconds = time.perf_counter() - started
    return report
