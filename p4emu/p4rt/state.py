"""The P4Runtime entity layer of one switch: :class:`P4RuntimeState`.

The gRPC server (and the STF runner, and tests) hand it ``p4.v1.Update`` batches and
``p4.v1.Entity`` read requests; it applies them to the loaded program's
:class:`~p4emu.runtime.objects.ProgramObjects` with P4Runtime v1.4 semantics.

Write: one ``p4.v1.Error`` per update, in order (``canonical_code`` 0 for success), as
the ``details`` of the ``Write`` status (:func:`errors_to_status` builds it). Atomicity:

- ``CONTINUE_ON_ERROR``: every update is attempted; a refused update changes nothing.
- ``ROLLBACK_ON_ERROR``: updates run in order until one fails; then every applied update
  is undone (undo log, newest first) and the batch leaves no trace. The failing update
  reports its error; the others report ABORTED ("rolled back" / "not attempted").
- ``DATAPLANE_ATOMIC``: as ``ROLLBACK_ON_ERROR``, and the pipeline lock is held for the
  whole batch, so no packet sees part of it. (PI/``simple_switch_grpc`` answer
  UNIMPLEMENTED to both atomic modes; p4emu implements them.)

Each update (and each read) holds the pipeline lock, the lock the packet path takes
around every packet, so a packet sees an update entirely or not at all.

Request-wide failures raise :class:`P4RuntimeError`: no pipeline loaded
(FAILED_PRECONDITION), an unknown atomicity (INVALID_ARGUMENT); :meth:`read` raises the
error of a bad read request (the ``Read`` RPC fails as a whole, as PI's).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from p4emu.p4rt.context import Context, Undo
from p4emu.p4rt.exceptions import ERROR_SPACE, P4RuntimeError, invalid, unimplemented
from p4emu.p4rt.externs import Externs
from p4emu.p4rt.pre import Pre
from p4emu.p4rt.profiles import ActionProfiles
from p4emu.p4rt.table_entries import TableEntries
from p4emu.p4rt.value_sets import ValueSets
from p4emu.proto import p4r, rpc_code, rpc_status
from p4emu.runtime.externs import DigestConfig
from p4emu.runtime.objects import ProgramObjects
from p4emu.runtime.tables import TableEntry

log = logging.getLogger("p4emu.p4rt")

CONTINUE_ON_ERROR = p4r.WriteRequest.CONTINUE_ON_ERROR
ROLLBACK_ON_ERROR = p4r.WriteRequest.ROLLBACK_ON_ERROR
DATAPLANE_ATOMIC = p4r.WriteRequest.DATAPLANE_ATOMIC

WriteHandler = Callable[[int, Any], Undo]
ReadHandler = Callable[[Any], Iterator[p4r.Entity]]


class P4RuntimeState:
    """P4Runtime ``Write``/``Read`` semantics over a loaded program.

    ``lock`` is the pipeline lock shared with the packet path (any context manager; a
    private ``RLock`` when None).
    """

    def __init__(
        self,
        objects: ProgramObjects | None = None,
        *,
        lock: AbstractContextManager[Any] | None = None,
    ) -> None:
        self._lock: AbstractContextManager[Any] = lock if lock is not None else threading.RLock()
        self._control = threading.RLock()  # serializes control-plane requests
        self._ctx: Context | None = None
        self.load(objects)

    # --- pipeline ----------------------------------------------------------------------

    @property
    def objects(self) -> ProgramObjects | None:
        return self._ctx.objects if self._ctx is not None else None

    def load(self, objects: ProgramObjects | None) -> None:
        """Switch to a new pipeline (``SetForwardingPipelineConfig``); None unloads it.

        P4Runtime-only state (default entry metadata, digest configs...) starts afresh.
        """
        with self._control:
            if objects is None:
                self._ctx = None
                return
            ctx = Context(objects)
            self._ctx = ctx
            tables = TableEntries(ctx)
            profiles = ActionProfiles(ctx)
            externs = Externs(ctx)
            pre = Pre(ctx)
            value_sets = ValueSets(ctx)
            self._tables = tables
            self._writers: dict[str, WriteHandler] = {
                "table_entry": tables.write,
                "action_profile_member": profiles.write_member,
                "action_profile_group": profiles.write_group,
                "meter_entry": externs.write_meter,
                "direct_meter_entry": tables.write_direct_meter,
                "counter_entry": externs.write_counter,
                "direct_counter_entry": tables.write_direct_counter,
                "packet_replication_engine_entry": pre.write,
                "value_set_entry": value_sets.write,
                "register_entry": externs.write_register,
                "digest_entry": externs.write_digest,
            }
            self._readers: dict[str, ReadHandler] = {
                "table_entry": tables.read,
                "action_profile_member": profiles.read_members,
                "action_profile_group": profiles.read_groups,
                "meter_entry": externs.read_meters,
                "direct_meter_entry": tables.read_direct_meter,
                "counter_entry": externs.read_counters,
                "direct_counter_entry": tables.read_direct_counter,
                "packet_replication_engine_entry": pre.read,
                "value_set_entry": value_sets.read,
                "register_entry": externs.read_registers,
                "digest_entry": externs.read_digests,
            }

    def _require_pipeline(self) -> Context:
        if self._ctx is None:
            raise P4RuntimeError(
                rpc_code.FAILED_PRECONDITION, "no forwarding pipeline config has been set"
            )
        return self._ctx

    # --- write -------------------------------------------------------------------------

    def write_request(self, request: p4r.WriteRequest) -> list[p4r.Error]:
        """:meth:`write` of a ``WriteRequest``'s updates with its atomicity."""
        return self.write(request.updates, request.atomicity)

    def write(
        self, updates: Sequence[p4r.Update], atomicity: int = CONTINUE_ON_ERROR
    ) -> list[p4r.Error]:
        """Apply a batch; returns one ``p4.v1.Error`` per update (code 0 = success)."""
        with self._control:
            self._require_pipeline()
            if atomicity == CONTINUE_ON_ERROR:
                return [self._attempt(update) for update in updates]
            if atomicity in (ROLLBACK_ON_ERROR, DATAPLANE_ATOMIC):
                return self._write_all_or_nothing(updates, atomicity == DATAPLANE_ATOMIC)
            raise invalid(f"unknown write atomicity {atomicity}")

    def _attempt(self, update: p4r.Update) -> p4r.Error:
        try:
            with self._lock:
                self._apply(update)
        except P4RuntimeError as error:
            return error.to_proto()
        return _OK

    def _write_all_or_nothing(self, updates: Sequence[p4r.Update], hold: bool) -> list[p4r.Error]:
        undos: list[Undo] = []
        failure: tuple[int, P4RuntimeError] | None = None
        batch_lock = self._lock if hold else contextlib.nullcontext()
        update_lock = contextlib.nullcontext() if hold else self._lock
        with batch_lock:
            for index, update in enumerate(updates):
                try:
                    with update_lock:
                        undos.append(self._apply(update))
                except P4RuntimeError as error:
                    failure = (index, error)
                    break
            if failure is not None:
                with update_lock:
                    self._rollback(undos)
        if failure is None:
            return [p4r.Error() for _ in updates]
        failed, error = failure
        results = []
        for index in range(len(updates)):
            if index < failed:
                results.append(_aborted(f"rolled back because update #{failed} failed"))
            elif index == failed:
                results.append(error.to_proto())
            else:
                results.append(_aborted(f"not attempted because update #{failed} failed"))
        return results

    def _rollback(self, undos: list[Undo]) -> None:
        for undo in reversed(undos):
            try:
                undo()
            except Exception:
                log.exception("p4rt: rolling back an update failed; state may be inconsistent")

    def _apply(self, update: p4r.Update) -> Undo:
        if update.type == p4r.Update.UNSPECIFIED:
            raise invalid("the update type is not set")
        if update.type not in (p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE):
            raise invalid(f"invalid update type {update.type}")
        kind = update.entity.WhichOneof("entity")
        if kind is None:
            raise invalid("the update has no entity")
        if kind == "extern_entry":
            raise unimplemented("extern entries are not supported (no non-PSA externs)")
        handler = self._writers.get(kind)
        if handler is None:
            raise unimplemented(f"{kind} entities are not supported")
        try:
            return handler(update.type, getattr(update.entity, kind))
        except P4RuntimeError:
            raise
        except Exception as error:  # a bug must not take the server down
            log.exception("p4rt: internal error while applying a %s update", kind)
            raise P4RuntimeError(
                rpc_code.INTERNAL, f"internal error: {type(error).__name__}: {error}"
            ) from error

    # --- read --------------------------------------------------------------------------

    def read(self, entity: p4r.Entity) -> Iterator[p4r.Entity]:
        """The entities matching ``entity`` (a query with wildcards), canonical."""
        return self._read(entity, encoded=False)  # type: ignore[return-value]

    def read_encoded(self, entities: Iterable[p4r.Entity]) -> list[bytes]:
        """:meth:`read_all`, each entity serialized (the ``entities`` of a ReadResponse).
        Table entries come from the encoding cached on each entry, never parsed."""
        out: list[bytes] = []
        for entity in entities:
            out.extend(self._read(entity, encoded=True))  # type: ignore[arg-type]
        return out

    def _read(self, entity: p4r.Entity, *, encoded: bool) -> Iterator[p4r.Entity | bytes]:
        with self._control:
            self._require_pipeline()
            kind = entity.WhichOneof("entity")
            if kind is None:
                raise invalid("the read entity is not set (wildcard reads need an entity type)")
            if kind == "extern_entry":
                raise unimplemented("extern entries are not supported (no non-PSA externs)")
            handler = self._readers.get(kind)
            if handler is None:
                raise unimplemented(f"{kind} entities are not supported")
            query = getattr(entity, kind)
            with self._lock:
                try:
                    if not encoded:
                        results: list[p4r.Entity] | list[bytes] = list(handler(query))
                    elif kind == "table_entry":
                        results = list(self._tables.read_encoded(query))
                    else:
                        results = [found.SerializeToString() for found in handler(query)]
                except P4RuntimeError:
                    raise
                except Exception as error:
                    log.exception("p4rt: internal error while reading %s", kind)
                    raise P4RuntimeError(
                        rpc_code.INTERNAL, f"internal error: {type(error).__name__}: {error}"
                    ) from error
        return iter(results)

    def read_all(self, entities: Iterable[p4r.Entity]) -> list[p4r.Entity]:
        """Every result of several read queries (a ``ReadRequest``), in order."""
        out: list[p4r.Entity] = []
        for entity in entities:
            out.extend(self.read(entity))
        return out

    # --- helpers for the server ---------------------------------------------------------

    def table_entry_proto(self, table_name: str, entry: TableEntry) -> p4r.TableEntry:
        """The canonical ``TableEntry`` of an installed entry (idle-timeout notifications)."""
        ctx = self._require_pipeline()
        return self._tables.encode_entry(ctx.objects.table_info[table_name], entry)

    def digest_config(self, digest_id: int) -> DigestConfig | None:
        """The controller's config of a digest, None while the digest is not enabled
        (the server sends ``DigestList`` messages only for enabled digests)."""
        ctx = self._require_pipeline()
        return ctx.digest_configs.get(digest_id)


#: The ``p4.v1.Error`` of every successful update of a CONTINUE_ON_ERROR batch: one shared
#: message, not one per update (the list is read, packed into a status, never changed).
_OK = p4r.Error()


def _aborted(message: str) -> p4r.Error:
    return p4r.Error(canonical_code=rpc_code.ABORTED, message=message, space=ERROR_SPACE)


def errors_to_status(errors: Sequence[p4r.Error]) -> rpc_status.Status:
    """The ``google.rpc.Status`` of a ``Write`` whose updates gave ``errors``.

    OK without details when every update succeeded; otherwise UNKNOWN with one packed
    ``p4.v1.Error`` per update (P4Runtime spec "Error Reporting").
    """
    if all(error.canonical_code == rpc_code.OK for error in errors):
        return rpc_status.Status(code=rpc_code.OK)
    failed = sum(1 for error in errors if error.canonical_code != rpc_code.OK)
    status = rpc_status.Status(
        code=rpc_code.UNKNOWN, message=f"{failed} of {len(errors)} update(s) failed"
    )
    for error in errors:
        status.details.add().Pack(error)
    return status
