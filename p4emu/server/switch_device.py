"""p4emu's P4Runtime device: a :class:`p4emu.switch.Switch` behind the :class:`Device` contract.

One ``pipeline_lock`` serialises the packet path (the I/O reactor thread) and control-plane
requests (gRPC threads), so a Write is atomic with respect to packets, and DATAPLANE_ATOMIC
batches are seen whole or not at all.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from p4emu.bundle import DeviceConfigError, MaterializedBundle, parse_device_config
from p4emu.exceptions import P4EmuError
from p4emu.p4rt.codec import decode_unsigned, encode_unsigned
from p4emu.p4rt.exceptions import P4RuntimeError
from p4emu.p4rt.state import P4RuntimeState
from p4emu.proto import p4i, p4r, rpc_code
from p4emu.runtime.clock import Clock
from p4emu.runtime.objects import ControllerHeader
from p4emu.server.device import DeviceError, StreamListener

if TYPE_CHECKING:
    from p4emu.switch import Switch

log = logging.getLogger("p4emu.server")


@dataclass
class DeviceSettings:
    """Target options that outlive a pipeline change (from the command line)."""

    device_id: int = 0
    cpu_port: int | None = None
    drop_port: int = 511
    priority_queues: int = 1
    queue_depth: int = 64
    queue_rate_pps: float | None = None
    port_queue_rates_pps: dict[int, float] = field(default_factory=dict)
    seed: int = 0
    trace: bool = False


@dataclass
class PreparedPipeline:
    """A pipeline verified and ready to commit: the loaded switch and the configuration as
    GetForwardingPipelineConfig will return it."""

    switch: Switch
    config: p4r.ForwardingPipelineConfig


@dataclass
class DeviceCounters:
    """Frames the device received and sent (in all and per port), dropped because no pipeline
    was set, and PacketIns that had no listener."""

    frames_rx: int = 0
    frames_tx: int = 0
    frames_dropped_no_pipeline: int = 0
    packet_in_without_listener: int = 0
    per_port_rx: dict[int, int] = field(default_factory=dict)
    per_port_tx: dict[int, int] = field(default_factory=dict)


# P4Info sections whose (name, id) pairs must agree between the controller's P4Info and ours.
_P4INFO_SECTIONS = (
    "tables", "actions", "action_profiles", "counters", "direct_counters", "meters",
    "direct_meters", "controller_packet_metadata", "value_sets", "registers", "digests",
)  # fmt: skip


def p4info_mismatch(ours: p4i.P4Info, given: p4i.P4Info) -> str | None:
    """Why ``given`` cannot drive a program whose generated P4Info is ``ours`` (None: it can)."""
    for section in _P4INFO_SECTIONS:
        mine = {item.preamble.name: item for item in getattr(ours, section)}
        theirs = {item.preamble.name: item for item in getattr(given, section)}
        for name in sorted(mine.keys() ^ theirs.keys()):
            side = "is missing from the given P4Info" if name in mine else "is not in the program"
            return f"{section[:-1].replace('_', ' ')} {name!r} {side}"
        for name, item in mine.items():
            other = theirs[name]
            if item.preamble.id != other.preamble.id:
                return f"{name!r} has id {other.preamble.id:#x} in the given P4Info but {item.preamble.id:#x} in the program"
            if section == "tables":
                fields = [(f.id, f.name, f.bitwidth, f.match_type) for f in item.match_fields]
                other_fields = [
                    (f.id, f.name, f.bitwidth, f.match_type) for f in other.match_fields
                ]
                if fields != other_fields:
                    return f"table {name!r}: match fields differ"
            if section == "actions":
                params = [(p.id, p.name, p.bitwidth) for p in item.params]
                if params != [(p.id, p.name, p.bitwidth) for p in other.params]:
                    return f"action {name!r}: parameters differ"
    return None


class SwitchDevice:
    """Implements :class:`p4emu.server.device.Device` over p4emu's in-process switch."""

    def __init__(
        self, settings: DeviceSettings, *, clock_factory: Callable[[], Clock] | None = None
    ) -> None:
        self.settings = settings
        self.device_id = settings.device_id
        self.pipeline_lock = threading.RLock()
        self.state = P4RuntimeState(lock=self.pipeline_lock)
        self.switch: Switch | None = None
        self.config: p4r.ForwardingPipelineConfig | None = None
        self.counters = DeviceCounters()
        self._clock_factory = clock_factory
        self._listener: StreamListener | None = None
        self._down_ports: set[int] = set()
        # Where transmitted frames go (the port drivers); set by the process.
        self.transmit: Callable[[int, bytes], None] | None = None
        self.on_pipeline_change: Callable[[], None] | None = None

    # --- pipeline ------------------------------------------------------------------------
    def has_pipeline(self) -> bool:
        return self.switch is not None

    def verify_pipeline(self, config: p4r.ForwardingPipelineConfig) -> PreparedPipeline:
        if not config.HasField("p4info"):
            raise DeviceError(
                rpc_code.INVALID_ARGUMENT, "the ForwardingPipelineConfig has no P4Info"
            )
        try:
            bundle = parse_device_config(config.p4_device_config)
        except DeviceConfigError as exc:
            raise DeviceError(rpc_code.INVALID_ARGUMENT, str(exc)) from None
        from p4emu.switch import Switch  # the compiler loads on the first pipeline only

        settings = self.settings
        with MaterializedBundle(bundle) as materialized:
            try:
                switch = Switch(
                    materialized.main,
                    clock=self._clock_factory() if self._clock_factory else None,
                    cpu_port=settings.cpu_port,
                    drop_port=settings.drop_port,
                    priority_queues=settings.priority_queues,
                    queue_depth=settings.queue_depth,
                    queue_rate_pps=settings.queue_rate_pps,
                    seed=settings.seed,
                    trace=settings.trace,
                )
            except P4EmuError as exc:
                # Report paths as the bundle names them, not as the temporary copy.
                message = str(exc).replace(f"{materialized.main.parent}/", "")
                raise DeviceError(
                    rpc_code.INVALID_ARGUMENT, f"the P4 program does not load: {message}"
                ) from None
            except RecursionError:
                raise DeviceError(
                    rpc_code.INVALID_ARGUMENT,
                    "the P4 program does not load: it nests too deeply (Python's recursion limit)",
                ) from None
            except MemoryError:
                raise DeviceError(
                    rpc_code.RESOURCE_EXHAUSTED,
                    "the P4 program does not load: the compile ran out of memory",
                ) from None
        if switch.p4info is None:
            raise DeviceError(
                rpc_code.INVALID_ARGUMENT, "the program has no P4Info p4emu can serve"
            )
        for port, pps in settings.port_queue_rates_pps.items():
            switch.set_queue_rate(pps, port)
        mismatch = p4info_mismatch(switch.p4info, config.p4info)
        if mismatch is not None:
            raise DeviceError(
                rpc_code.INVALID_ARGUMENT, f"the P4Info does not match the program: {mismatch}"
            )
        return PreparedPipeline(
            switch,
            p4r.ForwardingPipelineConfig(
                p4info=config.p4info, p4_device_config=config.p4_device_config, cookie=config.cookie
            ),
        )

    def commit_pipeline(self, prepared: object, *, reconcile: bool) -> None:
        assert isinstance(prepared, PreparedPipeline)
        with self.pipeline_lock:
            saved: list[p4r.Entity] = []
            if reconcile and self.switch is not None:
                saved = self._forwarding_state()
            switch = prepared.switch
            for port in self._down_ports:
                switch.set_port_up(port, False)
            switch.output_callback = self._on_output
            switch.packet_in_callback = self._on_packet_in
            self.switch = switch
            self.config = prepared.config
            self.state.load(switch.objects)
            if saved:
                self._restore(saved)
        if self.on_pipeline_change is not None:
            self.on_pipeline_change()

    def _forwarding_state(self) -> list[p4r.Entity]:
        """What RECONCILE_AND_COMMIT carries over: table entries, action profiles, the PRE."""
        queries = []
        for kind in ("table_entry", "action_profile_member", "action_profile_group"):
            entity = p4r.Entity()
            getattr(entity, kind).SetInParent()
            queries.append(entity)
        for kind in ("multicast_group_entry", "clone_session_entry"):
            entity = p4r.Entity()
            getattr(entity.packet_replication_engine_entry, kind).SetInParent()
            queries.append(entity)
        entities: list[p4r.Entity] = []
        for query in queries:
            try:
                entities.extend(self.state.read(query))
            except P4RuntimeError as exc:
                log.warning(
                    "reconcile: cannot read %s: %s", query.WhichOneof("entity"), exc.message
                )
        return entities

    def _restore(self, entities: list[p4r.Entity]) -> None:
        # Members before groups before entries; what the new program cannot take is dropped.
        order = {
            "action_profile_member": 0,
            "action_profile_group": 1,
            "packet_replication_engine_entry": 2,
            "table_entry": 3,
        }
        updates = []
        for entity in sorted(entities, key=lambda e: order.get(e.WhichOneof("entity") or "", 9)):
            if entity.HasField("table_entry") and entity.table_entry.is_default_action:
                continue
            updates.append(p4r.Update(type=p4r.Update.INSERT, entity=entity))
        errors = self.state.write(updates)
        lost = sum(1 for error in errors if error.canonical_code != rpc_code.OK)
        if lost:
            log.warning(
                "reconcile: %d of %d entities do not fit the new pipeline and were dropped",
                lost,
                len(updates),
            )

    def pipeline_config(self) -> p4r.ForwardingPipelineConfig | None:
        return self.config

    # --- entities ------------------------------------------------------------------------
    def write(self, updates: Sequence[p4r.Update], atomicity: int) -> list[p4r.Error]:
        try:
            return self.state.write(updates, atomicity)
        except P4RuntimeError as exc:
            raise DeviceError(exc.code, exc.message) from None

    def read(self, entities: Sequence[p4r.Entity]) -> Iterator[bytes]:
        """Serialized entities (the server frames them into ReadResponses unparsed)."""
        try:
            return iter(self.state.read_encoded(entities))
        except P4RuntimeError as exc:
            raise DeviceError(exc.code, exc.message) from None

    # --- controller packet I/O -----------------------------------------------------------
    def packet_out(self, packet: p4r.PacketOut) -> None:
        switch = self.switch
        if switch is None:
            raise DeviceError(rpc_code.FAILED_PRECONDITION, "no forwarding pipeline is set")
        if switch.cpu_port is None:
            raise DeviceError(
                rpc_code.FAILED_PRECONDITION,
                "this switch has no CPU port (start it with --cpu-port)",
            )
        header = switch.objects.controller_headers.get("packet_out")
        metadata: dict[int | str, int] = {}
        for item in packet.metadata:
            if header is None:
                raise DeviceError(
                    rpc_code.INVALID_ARGUMENT,
                    'the program has no @controller_header("packet_out"); PacketOut must carry no metadata',
                )
            try:
                spec = header.field(item.metadata_id)
            except P4EmuError:
                raise DeviceError(
                    rpc_code.INVALID_ARGUMENT, f"packet_out has no metadata id {item.metadata_id}"
                ) from None
            try:  # width checked on the bytes, before conversion (an empty value is 0)
                value = decode_unsigned(
                    item.value or b"\0", spec.width, f"packet_out metadata {spec.name}"
                )
            except P4RuntimeError as exc:
                raise DeviceError(exc.code, exc.message) from None
            if item.metadata_id in metadata:
                raise DeviceError(
                    rpc_code.INVALID_ARGUMENT, f"packet_out metadata {spec.name} given twice"
                )
            metadata[item.metadata_id] = value
        with self.pipeline_lock:
            try:
                switch.packet_out(bytes(packet.payload), metadata)  # type: ignore[arg-type]
            except P4EmuError as exc:
                raise DeviceError(rpc_code.INVALID_ARGUMENT, str(exc)) from None

    def digest_ack(self, ack: p4r.DigestListAck) -> None:
        switch = self.switch
        if switch is None:
            raise DeviceError(rpc_code.FAILED_PRECONDITION, "no forwarding pipeline is set")
        with self.pipeline_lock:
            try:
                switch.objects.digest_queue.ack(ack.digest_id, ack.list_id)
            except P4EmuError as exc:
                raise DeviceError(rpc_code.NOT_FOUND, str(exc)) from None

    def set_stream_listener(self, listener: StreamListener | None) -> None:
        self._listener = listener

    # --- packet path (reactor thread) ----------------------------------------------------
    def receive(self, port: int, frame: bytes) -> None:
        """A frame arrived on ``port`` from its driver."""
        self.counters.frames_rx += 1
        self.counters.per_port_rx[port] = self.counters.per_port_rx.get(port, 0) + 1
        with self.pipeline_lock:
            switch = self.switch
            if switch is None:
                self.counters.frames_dropped_no_pipeline += 1
                return
            try:
                switch.inject(port, frame)
            except P4EmuError as exc:
                log.error("port %d: frame dropped: %s", port, exc)

    def poll(self) -> int | None:
        """Runs whatever is due (rate-limited departures); returns ns until the next one."""
        with self.pipeline_lock:
            switch = self.switch
            if switch is None:
                return None
            due = switch.poll()
            return None if due is None else max(0, due - switch.clock.now_ns())

    def housekeeping(self) -> None:
        """Periodic work: digest lists and idle-timeout notifications to the controller."""
        with self.pipeline_lock:
            switch = self.switch
            if switch is None:
                return
            messages = self._digest_messages(switch) + self._idle_messages(switch)
        listener = self._listener
        if listener is not None:
            for message in messages:
                listener(message)

    def _digest_messages(self, switch: Switch) -> list[p4r.StreamMessageResponse]:
        out = []
        for ready in switch.objects.digest_queue.poll():
            if self.state.digest_config(ready.digest_id) is None:
                continue  # not enabled by the controller
            info = switch.objects.digest_by_id(ready.digest_id)
            message = p4r.StreamMessageResponse()
            digest = message.digest
            digest.digest_id, digest.list_id, digest.timestamp = (
                ready.digest_id,
                ready.list_id,
                time.time_ns(),
            )
            for sample in ready.samples:
                data = digest.data.add()
                if len(info.fields) == 1:
                    data.bitstring = encode_unsigned(sample[0])
                else:
                    for value in sample:
                        data.struct.members.add().bitstring = encode_unsigned(value)
            out.append(message)
        return out

    def _idle_messages(self, switch: Switch) -> list[p4r.StreamMessageResponse]:
        entries: list[p4r.TableEntry] = []
        for name, table in switch.objects.tables.items():
            for entry in table.expired_entries():
                entries.append(self.state.table_entry_proto(name, entry))
        if not entries:
            return []
        message = p4r.StreamMessageResponse()
        message.idle_timeout_notification.timestamp = time.time_ns()
        message.idle_timeout_notification.table_entry.extend(entries)
        return [message]

    def _on_output(self, port: int, frame: bytes) -> None:
        self.counters.frames_tx += 1
        self.counters.per_port_tx[port] = self.counters.per_port_tx.get(port, 0) + 1
        if self.transmit is not None:
            self.transmit(port, frame)

    def _on_packet_in(self, payload: bytes, metadata: dict[str, int]) -> None:
        listener = self._listener
        switch = self.switch
        if listener is None or switch is None:
            self.counters.packet_in_without_listener += 1
            return
        message = p4r.StreamMessageResponse()
        message.packet.payload = payload
        header: ControllerHeader | None = switch.objects.controller_headers.get("packet_in")
        if header is not None:
            for spec in header.fields:
                item = message.packet.metadata.add()
                item.metadata_id = spec.id
                item.value = encode_unsigned(metadata.get(spec.name, 0))
        listener(message)

    # --- ports ---------------------------------------------------------------------------
    def set_port_up(self, port: int, up: bool) -> None:
        with self.pipeline_lock:
            if up:
                self._down_ports.discard(port)
            else:
                self._down_ports.add(port)
            if self.switch is not None:
                self.switch.set_port_up(port, up)

    def is_port_up(self, port: int) -> bool:
        return port not in self._down_ports
