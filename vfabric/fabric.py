"""The virtual-time fabric: P4 switches, wires and MRC NICs on one event list."""

from __future__ import annotations

import gc
import hashlib
import random
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import IO, Any

from clikit import hotpath
from controller.exceptions import ControllerError
from controller.plan import RoutePlan, plan_fabric
from mrc_wire.frames import DATA_HEADER_BYTES, frame_ev, frame_inner_src
from nic_emu import event_log as ev_kinds
from nic_emu.config import NicConfig
from nic_emu.connection.host import AppEvent
from nic_emu.core import NicCore
from nic_emu.event_log import EventLog, EventRecord
from nic_emu.exceptions import NicEmuError
from p4emu.runtime.clock import VirtualClock
from p4emu.switch import DROP_QUEUE_FULL, RateScope, RateUnit, Switch
from topologies import LinkKind, Role, Topology, TopologyError
from topologies import load as load_topology
from topologies.events import Event
from vfabric.addresses import RememberingAddressPlan
from vfabric.eventlist import EventList
from vfabric.exceptions import (
    FabricSetupError,
    TransferSetupError,
    UnknownLinkError,
    UnknownNodeError,
    VirtualFabricError,
)
from vfabric.faults import Fault, plan_faults
from vfabric.nodes import NicNode, SwitchNode
from vfabric.pcap import NsPcapWriter
from vfabric.pfc import (
    NicPause,
    PfcConfig,
    PortCounters,
    SwitchPfc,
    default_headroom,
    pfc_summary,
)
from vfabric.program import Encoded, program_switch, push_updates, shared_program
from vfabric.transfers import (
    TRANSPORTS,
    SentData,
    Transfer,
    all_finished,
    message_spans,
    receive_sink,
    transfer_source,
)
from vfabric.wires import LinkKey, Wire

#: docs/switch-queues.md section 7: the program relies on 8 priority queues per port.
PRIORITY_QUEUES = 8
DEFAULT_BIN_NS = 10_000  # goodput timeline resolution: 10 us
PROGRESS_EVERY_EVENTS = 50_000
# While a VirtualFabric is built and while it runs, the cyclic collector's youngest
# generation is collected every RUN_GC_THRESHOLD0 net container allocations (Python's
# default: 700), and the objects that exist when the build or the run starts are frozen
# out of its scans (:func:`long_lived`): docs/virtual-fabric.md, "Memory in long runs".
RUN_GC_THRESHOLD0 = 10_000
FABRIC = "fabric"  # the ``nic`` field of the fabric's own event-log records

Progress = Callable[[int], None]


@contextmanager
def long_lived() -> Iterator[None]:
    """The cyclic collector while a fabric is built or run: both make long-lived objects
    and (nearly) no reference cycles (tests/vfabric/test_run.py), so a collection would
    mostly rescan what already exists. Inside, the objects that exist on entry are frozen
    (``gc.freeze``: no collection scans them) and the youngest generation is collected
    every RUN_GC_THRESHOLD0 allocations: any cycle made inside is still freed, at a tenth
    of the default cost. Restored on exit: the thresholds, and what was frozen (nothing,
    unless the caller froze objects itself: then it keeps managing that and nothing is
    frozen here)."""
    thresholds = gc.get_threshold()
    freezing = gc.get_freeze_count() == 0
    if freezing:
        gc.freeze()
    gc.set_threshold(RUN_GC_THRESHOLD0, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if freezing:
            gc.unfreeze()


def age_survivors() -> None:
    """Every object alive now moved to the cyclic collector's oldest generation without a
    scan, and the count of new objects that triggers the next young collection zeroed
    (``gc.freeze`` then ``gc.unfreeze``: both only relink the generations' lists). For a
    process that made many long-lived objects with the collector off (a child's imports
    and build, the two-process loop): turned back on, its first allocation would
    otherwise scan them all, for cycles such work (nearly) never makes; a full
    collection still finds any. Nothing when the caller froze objects itself (the
    unfreeze would release its objects too): the next collection then scans, as before."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def _reporting(
    done: Callable[[], bool], progress: Progress, fabric: VirtualFabric
) -> Callable[[], bool]:
    """A run's stop check that also calls ``progress(fabric.now)`` about every
    PROGRESS_EVERY_EVENTS events (the event list asks it every 64th event)."""
    asked = 0

    def stop() -> bool:
        nonlocal asked
        asked += 1
        if asked * 64 % PROGRESS_EVERY_EVENTS < 64:
            progress(fabric.now)
        return done()

    return stop


class VirtualFabric:
    """One topology in virtual time (docs/virtual-fabric.md has the whole story).

    ``topology``: a :class:`topologies.Topology`, a bundled name (``tiny``) or a YAML
    path. ``nic_config``: one :class:`nic_emu.NicConfig` for every NIC or a mapping NIC
    name -> config (missing NICs get the defaults). ``trimming`` / ``ecn``: switch the
    P4 program's trimming / ECN marking off in every port class. ``pcap_dir``: write one
    pcap (nanosecond timestamps) per link direction there. ``event_log``: write the
    JSON-lines event log there. ``bin_ns``: resolution of the goodput timelines.
    ``pfc``: priority flow control on these lossless priorities (:mod:`vfabric.pfc`);
    None: every class is lossy, as without PFC.
    """

    def __init__(
        self,
        topology: Topology | str | Path,
        *,
        seed: int = 0,
        nic_config: NicConfig | Mapping[str, NicConfig] | None = None,
        trimming: bool = True,
        ecn: bool = True,
        pcap_dir: str | Path | None = None,
        event_log: str | Path | None = None,
        bin_ns: int = DEFAULT_BIN_NS,
        program: str | Path | None = None,
        pfc: PfcConfig | None = None,
    ) -> None:
        with long_lived():
            if pfc is not None and not isinstance(pfc, PfcConfig):
                raise FabricSetupError(f"pfc must be a vfabric.pfc.PfcConfig, got {pfc!r}")
            if isinstance(topology, Topology):
                self.topology = topology
            else:
                try:
                    self.topology = load_topology(topology)
                except TopologyError as exc:
                    raise FabricSetupError(f"topology {topology}: {exc}") from None
            if isinstance(bin_ns, bool) or not isinstance(bin_ns, int) or bin_ns <= 0:
                raise FabricSetupError(f"bin_ns must be a positive integer, got {bin_ns!r}")
            self.seed = seed
            self.bin_ns = bin_ns
            self.trimming = trimming
            self.ecn = ecn
            self.clock = VirtualClock()
            self.events = EventList(self.clock)
            self.log = EventLog()
            try:
                self.addresses = RememberingAddressPlan(self.topology)
                self.plan: RoutePlan = plan_fabric(self.topology, addresses=self.addresses)
            except (ControllerError, TopologyError) as exc:
                raise FabricSetupError(f"{self.topology.name}: no switch plan: {exc}") from None
            self.program = shared_program(program)
            self.switches: dict[str, SwitchNode] = {}
            self.nics: dict[str, NicNode] = {}
            self.wires: dict[tuple[str, str], Wire] = {}  # (src node, dst node) -> wire
            self._links: dict[LinkKey, tuple[Wire, Wire]] = {}
            self._link_kind: dict[LinkKey, LinkKind] = {}
            self._down: dict[LinkKey, set[str]] = {}
            self.faults: list[Fault] = []
            self.transfers: list[Transfer] = []
            self._by_qpn: dict[tuple[str, int], Transfer] = {}
            self._log_sink: IO[str] | None = None
            self._log_path = Path(event_log) if event_log is not None else None
            self._log_written = 0
            self._hash = hashlib.sha256()
            self._pcaps: list[NsPcapWriter] = []
            self._build_switches()
            self._build_nics(nic_config)
            self._build_wires()
            self.pfc = pfc
            self.pfc_counters: dict[str, PortCounters] = {}
            self._pfc_switches: dict[str, SwitchPfc] = {}
            if pfc is not None:
                self._install_pfc(pfc)
            if pcap_dir is not None:
                self._open_pcaps(Path(pcap_dir))
            if self._log_path is not None:
                try:
                    self._log_path.parent.mkdir(parents=True, exist_ok=True)
                    self._log_sink = open(self._log_path, "w", encoding="utf-8")  # noqa: SIM115
                except OSError as exc:
                    raise FabricSetupError(
                        f"cannot write the event log {self._log_path}: {exc.strerror}"
                    ) from None
            self.record(FABRIC, "start", topology=self.topology.name, seed=seed)

    # ------------------------------------------------------------------ construction

    def _build_switches(self) -> None:
        settings = self.topology.switch_settings
        codec = self.program.codec
        encoded: Encoded = {}  # each entry object's message, made once (push_updates)
        for index, sw in enumerate(self.topology.switches):
            links = self.topology.links_of(sw.name)
            switch = Switch(
                self.program.checked,
                clock=self.clock,
                cpu_port=settings.cpu_port,
                drop_port=settings.drop_port,
                priority_queues=PRIORITY_QUEUES,
                queue_depth=min(link.queue_packets for link in links),
                queue_rate_scope=RateScope.port,
                seed=self.seed * 1_000_003 + index,
            )
            for link in links:
                port = link.endpoint(sw.name).port
                switch.set_queue_rate(link.rate_gbps * 1e9, port, unit=RateUnit.bits_per_second)
            updates = push_updates(
                self.plan[sw.name], codec, trimming=self.trimming, ecn=self.ecn, encoded=encoded
            )
            program_switch(switch, updates, sw.name)
            self.switches[sw.name] = SwitchNode(self.events, sw.name, switch)

    def _build_nics(self, config: NicConfig | Mapping[str, NicConfig] | None) -> None:
        if isinstance(config, Mapping):
            unknown = sorted(set(config) - {nic.name for nic in self.topology.nics})
            if unknown:
                raise FabricSetupError(
                    f"nic_config names {unknown[0]!r}, which is not a NIC of {self.topology.name}"
                )
        for i, nic in enumerate(self.topology.nics):
            cfg = config.get(nic.name) if isinstance(config, Mapping) else config
            try:
                core = NicCore(
                    nic.name, self.addresses, cfg, seed=self.seed * 1000 + i, log=self.log
                )
            except NicEmuError as exc:
                raise FabricSetupError(f"NIC {nic.name}: {exc}") from None
            self.nics[nic.name] = NicNode(self.events, core, self._on_app_event, self.bin_ns)

    def _build_wires(self) -> None:
        for link in self.topology.links():
            key = (link.a.node, link.b.node)
            ends = []
            for src, dst in ((link.a, link.b), (link.b, link.a)):
                access = link.kind is LinkKind.ACCESS
                wire = Wire(
                    self.events,
                    link=key,
                    src=src.node,
                    src_port=link.plane if access and src is link.a else src.port,
                    dst=dst.node,
                    dst_port=link.plane if access and dst is link.a else dst.port,
                    plane=link.plane,
                    kind=link.kind.value,
                    rate_bps=link.rate_gbps * 1e9,
                    delay_ns=round(link.delay_us * 1000),
                    bin_ns=self.bin_ns,
                )
                node = self.nics.get(dst.node) or self.switches[dst.node]
                wire.connect(node)  # wire.sink = node.receive
                wire.on_drop = self._on_wire_drop
                if src.node in self.switches:
                    self.switches[src.node].out[src.port] = wire
                else:
                    self.nics[src.node].uplinks[link.plane] = wire
                self.wires[(src.node, dst.node)] = wire
                ends.append(wire)
            self._links[key] = (ends[0], ends[1])
            self._link_kind[key] = link.kind
            self._down[key] = set()

    def _install_pfc(self, config: PfcConfig) -> None:
        """PFC (vfabric.pfc) on every switch and NIC: accounting at each switch's
        ingress ports, pause frames back over every link."""
        counters = self.pfc_counters
        for wire in self.wires.values():
            counters[wire.name] = PortCounters()
        mtu = max(node.core.config.mtu_payload for node in self.nics.values())
        max_frame = mtu + DATA_HEADER_BYTES
        for name, node in self.switches.items():
            pfc = SwitchPfc(self.events, name, config, node.out, counters)
            for port, wire in node.out.items():  # wire: this switch -> the upstream
                upstream = wire.dst
                pfc.headroom[port] = (
                    config.headroom
                    if config.headroom is not None
                    else default_headroom(wire.rate_bps, wire.delay_ns, max_frame)
                )
                pfc.counters_in[port] = counters[self.wires[(upstream, name)].name]
                pfc.sinks[port] = self._pause_handler(upstream, name)
            node.switch.admission_callback = pfc.admit
            node.switch.release_callback = pfc.release
            self._pfc_switches[name] = pfc
        for node in self.nics.values():
            node.pfc = NicPause(node.core.plane_count)

    def _pause_handler(self, upstream: str, downstream: str) -> Callable[[int, int, bool], None]:
        """What a pause frame from ``downstream`` does at ``upstream`` (its port on the
        link): stop or resume that priority of its egress onto the link."""
        wire = self.wires[(upstream, downstream)]
        counters = self.pfc_counters[wire.name]
        paused: set[int] = set()

        def account(priority: int, pause: bool) -> bool:
            """Counters; False if the frame changes nothing (already in that state)."""
            now = self.events.now
            if pause:
                counters.pauses_received += 1
                if priority in paused:
                    return False
                if not paused:
                    counters.paused_since = now
                paused.add(priority)
                return True
            if priority not in paused:
                return False
            paused.discard(priority)
            if not paused and counters.paused_since is not None:
                counters.paused_ns += now - counters.paused_since
                counters.paused_since = None
            return True

        switch_node = self.switches.get(upstream)
        if switch_node is not None:

            def switch_pause(port: int, priority: int, pause: bool) -> None:
                if account(priority, pause):
                    due = switch_node.switch.set_paused(port, priority, pause)
                    if due is not None:
                        switch_node._arm(due)

            return switch_pause
        nic_node = self.nics[upstream]

        def nic_pause(port: int, priority: int, pause: bool) -> None:
            if account(priority, pause):
                nic_node.pfc_pause(port, priority, pause)

        return nic_pause

    def _on_wire_drop(self, reason: str, frame: bytes) -> None:
        """Count a lost frame against the EV and NIC that sent it."""
        ev = frame_ev(frame)
        if ev is None:
            return
        try:
            nic, _ = self.addresses.nic_for_address(frame_inner_src(frame))
        except TopologyError:
            return
        node = self.nics.get(nic)
        if node is not None:
            node.count_drop(ev)

    def _open_pcaps(self, directory: Path) -> None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FabricSetupError(f"cannot make the pcap directory {directory}: {exc}") from None
        for (src, dst), wire in self.wires.items():
            wire.pcap = NsPcapWriter(directory / f"{src}--{dst}.pcap")
            self._pcaps.append(wire.pcap)

    # ------------------------------------------------------------------ names

    @property
    def now(self) -> int:
        return self.events.now

    def link_key(self, a: str, b: str) -> LinkKey:
        """The topology's (lower, upper) names of the link a -- b."""
        try:
            link = self.topology.link(a, b)
        except TopologyError as exc:
            raise UnknownLinkError(f"link {a} -- {b}: {exc}") from None
        return (link.a.node, link.b.node)

    def wires_of(self, key: LinkKey) -> list[Wire]:
        return list(self._links[key])

    def switch_node(self, name: str) -> SwitchNode:
        node = self.switches.get(name)
        if node is None:
            raise UnknownNodeError(f"no switch {name!r} in {self.topology.name}")
        return node

    def nic_node(self, name: str) -> NicNode:
        node = self.nics.get(name)
        if node is None:
            raise UnknownNodeError(f"no NIC {name!r} in {self.topology.name}")
        return node

    def nic_link(self, nic: str, plane: int) -> LinkKey:
        self.nic_node(nic)
        if isinstance(plane, bool) or not isinstance(plane, int):
            raise UnknownNodeError(f"plane must be an integer, got {plane!r}")
        if not 0 <= plane < self.topology.plane_count:
            raise UnknownNodeError(
                f"{nic} has ports on planes 0..{self.topology.plane_count - 1}, not {plane}"
            )
        return self.link_key(nic, self.topology.nic_port(nic, plane).t0)

    def links_of(self, node: str) -> list[LinkKey]:
        return [(link.a.node, link.b.node) for link in self.topology.links_of(node)]

    def nic_uplinks(self, nic: str) -> list[Wire]:
        return [w for w in self.nic_node(nic).uplinks if w is not None]

    # ------------------------------------------------------------------ state changes

    def record(self, who: str, kind: str, **detail: Any) -> None:
        """A fabric record in the event log at the current virtual time."""
        self.log.record(self.events.now, who, kind, **detail)

    def set_link_state(self, key: LinkKey, cause: str, up: bool) -> None:
        causes = self._down[key]
        was_up = not causes
        if up:
            causes.discard(cause)
        else:
            causes.add(cause)
        now_up = not causes
        self.record(
            FABRIC,
            "link_up" if up else "link_down",
            link=f"{key[0]}--{key[1]}",
            cause=cause,
            effective=was_up != now_up,
        )
        if was_up == now_up:
            return
        for wire in self._links[key]:
            wire.up = now_up
        if self._link_kind[key] is LinkKind.ACCESS:
            node = self.nics[key[0]]
            node.set_port(self._links[key][0].plane, now_up)

    def set_switch_state(self, name: str, up: bool) -> None:
        self.record(FABRIC, "switch_up" if up else "switch_down", switch=name)
        for key in self.links_of(name):
            self.set_link_state(key, f"switch:{name}", up)

    def schedule(self, event: Event) -> list[Fault]:
        """Check ``event`` (an event of the fault vocabulary, :mod:`topologies.events`)
        against the fabric and put the faults it becomes on the timeline
        (:mod:`vfabric.faults`); a specific VirtualFabricError names what is wrong, and
        then nothing of the event is scheduled."""
        if not isinstance(event, Event):
            raise VirtualFabricError(
                f"schedule() takes an event of topologies.events, got {event!r}"
            )
        planned = plan_faults(self, event)
        for fault in planned:
            index = len(self.faults)
            rng = random.Random(f"vfabric-fault:{self.seed}:{index}")
            fault.install(self, rng)
            self.faults.append(fault)
            self.record(FABRIC, "fault_scheduled", index=index, fault=fault.describe())
        return planned

    # ------------------------------------------------------------------ traffic

    def transfer(
        self,
        src: str,
        dst: str,
        nbytes: int,
        *,
        start_ns: int = 0,
        messages: int = 1,
        transport: str = "mrc",
        background: bool = False,
    ) -> Transfer:
        """Schedule a WRITE of ``nbytes`` (split into ``messages``) from ``src`` to ``dst``
        at ``start_ns``. ``background``: :meth:`run` does not wait for it."""
        self.nic_node(src)
        self.nic_node(dst)
        if src == dst:
            raise TransferSetupError(f"transfer from {src} to itself")
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 1:
            raise TransferSetupError(f"transfer size must be a positive integer, got {nbytes!r}")
        if (
            isinstance(messages, bool)
            or not isinstance(messages, int)
            or not 1 <= messages <= nbytes
        ):
            raise TransferSetupError(
                f"messages must be an integer in 1..{nbytes} (the size), got {messages!r}"
            )
        if transport not in TRANSPORTS:
            raise TransferSetupError(
                f"unknown transport {transport!r} (known: {', '.join(TRANSPORTS)})"
            )
        if isinstance(start_ns, bool) or not isinstance(start_ns, int) or start_ns < self.now:
            raise TransferSetupError(
                f"start_ns={start_ns!r} is not an integer time at or after now ({self.now} ns)"
            )
        t = Transfer(
            len(self.transfers), src, dst, nbytes, messages, transport, start_ns, background
        )
        self.transfers.append(t)
        self.events.at(start_ns, self._start_transfer, t)
        return t

    def _start_transfer(self, t: Transfer, src_end: bool = True, dst_end: bool = True) -> None:
        """Set up ``t``'s connections and post its writes. ``src_end``/``dst_end``: which
        ends this process sets up (both here; ``vfabric.parallel`` starts a transfer
        between its two processes in halves). The QPNs of both ends are allocated, and
        the destination's memory reserved, whichever ends are set up: every copy of a
        NIC then counts as the NIC's owner does."""
        now = self.now
        a, b = self.nics[t.src], self.nics[t.dst]
        mode = TRANSPORTS[t.transport]
        try:
            qpn_a, qpn_b = a.core.allocate_qpn(), b.core.allocate_qpn()
            if src_end:
                t.sender = a.core.create_connection(
                    t.dst, qpn=qpn_a, peer_qpn=qpn_b, mode=mode, now=now
                )
            if dst_end:
                t.receiver = b.core.create_connection(
                    t.src, qpn=qpn_b, peer_qpn=qpn_a, mode=mode, now=now
                )
        except NicEmuError as exc:
            t.failure = f"setup: {exc}"
            self.record(FABRIC, "transfer_failed", transfer=t.id, reason=t.failure)
            return
        if not (src_end or dst_end):
            b.core.reserve_memory(t.nbytes)
            return
        self._by_qpn[(t.src, qpn_a)] = t
        self._by_qpn[(t.dst, qpn_b)] = t
        spans = message_spans(t.nbytes, t.messages)
        t.sent = SentData(transfer_source(self.seed, t.id, t.nbytes), spans)
        t.rkey, t.va = b.core.reserve_memory(t.nbytes)
        if dst_end:
            t.sink = receive_sink(t.receiver, t.rkey, t.va, t.sent)
        t.message_offsets = spans
        t.message_done_ns = [None] * len(spans)
        t.message_received_ns = [None] * len(spans)
        if src_end:
            for index, (offset, _) in enumerate(spans):
                what = f"transfer {t.id} message {index}"
                t.wr_ids.append(
                    t.sender.post_write(t.sent.payload(index, what), t.va + offset, t.rkey, now)
                )
            self.record(
                FABRIC,
                "transfer_start",
                transfer=t.id,
                src=t.src,
                dst=t.dst,
                bytes=t.nbytes,
                qpn=qpn_a,
            )
            a.service()
        if dst_end:
            b.service()

    def _on_app_event(self, nic: str, event: AppEvent) -> None:
        t = self._by_qpn.get((nic, event.qpn))
        if t is None:
            return
        was = t.finished
        t.on_event(nic, event, self.now)
        if t.finished and not was:
            if t.failure is None:
                self.record(FABRIC, "transfer_done", transfer=t.id, intact=t.intact)
            else:
                self.record(FABRIC, "transfer_failed", transfer=t.id, reason=t.failure)

    # ------------------------------------------------------------------ running

    def run(self, until_ns: int | None = None, *, progress: Progress | None = None) -> bool:
        """Run until every foreground transfer has finished or failed (returns True), or
        until ``until_ns`` / nothing is left to do (False). When no foreground transfer
        is unfinished at the call (all done already, or none), it simply runs until
        ``until_ns`` (e.g. to let queues drain). ``progress(now_ns)`` is called every few
        tens of thousands of events."""
        foreground = [t for t in self.transfers if not t.background and not t.finished]
        all_done = all_finished(foreground)

        # without progress, the event list asks all_done itself: one Python frame, not
        # two, at each of its checks (every 64th event)
        stop = all_done if progress is None else _reporting(all_done, progress, self)
        try:
            with long_lived():
                finished = self.events.run(until_ns, stop)
        finally:
            self.flush()
        return finished

    # ------------------------------------------------------------------ event log

    def flush(self) -> None:
        """Hash (and write, with ``event_log``) every record not yet flushed."""
        records = self.log.records
        sink = self._log_sink
        update = self._hash.update
        for rec in records[self._log_written :]:
            line = rec.to_json() + "\n"
            update(line.encode())
            if sink is not None:
                sink.write(line)
        self._log_written = len(records)
        if sink is not None:
            sink.flush()
        for pcap in self._pcaps:
            pcap.flush()

    @property
    def event_log_sha256(self) -> str:
        self.flush()
        return self._hash.hexdigest()

    def close(self) -> None:
        self.flush()
        if self._log_sink is not None:
            self._log_sink.close()
            self._log_sink = None
        for pcap in self._pcaps:
            pcap.close()

    def __enter__(self) -> VirtualFabric:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ results

    def ev_state_changes(self) -> list[dict[str, Any]]:
        """Every EV state change: time, NIC, QPN, EV, plane, from, to, reason."""
        return [
            {
                "t_ns": rec.t_ns,
                "nic": rec.nic,
                "qpn": rec.qpn,
                "ev": rec.ev,
                "plane": rec.plane,
                "from": (rec.detail or {}).get("old"),
                "to": (rec.detail or {}).get("new"),
                "reason": (rec.detail or {}).get("reason"),
            }
            for rec in self.log.records
            if rec.kind == ev_kinds.EV_STATE
        ]

    def link_counters(self, senders: Container[str] | None = None) -> dict[str, dict[str, Any]]:
        """Per link direction: bytes and packets sent, data bytes, drops on the wire by
        reason, and what the sending switch's P4 counters say about that port (trims, ECN
        marks, queue-limit drops) plus its traffic manager's tail drops. ``senders``: only
        the wires these nodes send on (a partition's own, :mod:`vfabric.parallel`)."""
        out: dict[str, dict[str, Any]] = {}
        for wire in self.wires.values():
            if senders is not None and wire.src not in senders:
                continue
            row: dict[str, Any] = {
                "plane": wire.plane,
                "kind": wire.kind,
                "tx_packets": wire.tx_packets,
                "tx_bytes": wire.tx_bytes,
                "data_bytes": wire.data_bytes,
                "drops": dict(sorted(wire.drops.items())),
                "trims": 0,
                "ecn_marks": 0,
                "queue_limit_drops": 0,
                "tail_drops": 0,
            }
            node = self.switches.get(wire.src)
            if node is not None:
                counters = node.switch.objects.counters
                port = wire.src_port
                row["trims"] = counters["MrcIngress.trimmed"].read(port)[0]
                row["ecn_marks"] = counters["MrcEgress.ecn_marked"].read(port)[0]
                row["queue_limit_drops"] = counters["MrcIngress.drop_queue_full"].read(port)[0]
                row["tail_drops"] = node.switch.dropped(port, DROP_QUEUE_FULL)
            pfc = self.pfc_counters.get(wire.name)
            if pfc is not None:
                row["pfc"] = pfc.as_dict(self.now)
            out[wire.name] = row
        return out

    def plane_counters(self) -> dict[int, dict[str, int]]:
        planes: dict[int, dict[str, int]] = {}
        for row in self.link_counters().values():
            agg = planes.setdefault(
                int(row["plane"]),
                {
                    "tx_packets": 0,
                    "tx_bytes": 0,
                    "data_bytes": 0,
                    "trims": 0,
                    "ecn_marks": 0,
                    "queue_limit_drops": 0,
                    "tail_drops": 0,
                    "wire_drops": 0,
                },
            )
            for name in ("tx_packets", "tx_bytes", "data_bytes", "trims", "ecn_marks"):
                agg[name] += int(row[name])
            agg["queue_limit_drops"] += int(row["queue_limit_drops"])
            agg["tail_drops"] += int(row["tail_drops"])
            agg["wire_drops"] += sum(row["drops"].values())
        return dict(sorted(planes.items()))

    def ev_counters(self) -> dict[str, dict[str, dict[str, int]]]:
        """Per NIC: per EV it sent on (``tx``) and per EV of what it received (``rx``)."""
        return {
            name: {
                "tx": {f"{ev:#010x}": s.as_dict() for ev, s in sorted(node.ev_tx.items())},
                "rx": {f"{ev:#010x}": s.as_dict() for ev, s in sorted(node.ev_rx.items())},
            }
            for name, node in self.nics.items()
        }

    def switch_counters(self, only: Container[str] | None = None) -> dict[str, dict[str, int]]:
        """Per switch (``only``: these switches): traversals, packets out, frames sent to
        an unwired port, drops by reason."""
        return {
            name: {
                "traversals": node.traversals,
                "packets_out": node.switch.packets_out,
                "unwired": node.unwired,
                **{f"drop_{r}": n for (_, r), n in sorted(node.switch.drops.items())},
            }
            for name, node in self.switches.items()
            if only is None or name in only
        }

    def traversals(self) -> int:
        return sum(node.traversals for node in self.switches.values())

    def delivered_bytes(self) -> int:
        """Payload bytes placed for the applications: each byte once (goodput)."""
        return sum(sum(node.placed_bins.values()) for node in self.nics.values())

    def received_data_bytes(self) -> int:
        """Data payload bytes the NICs' ports took in (duplicates and packets dropped out
        of order included): what the wire carried to them."""
        return sum(sum(node.rx_data_bytes) for node in self.nics.values())

    def goodput(self, bin_ns: int | None = None) -> dict[str, Any]:
        """Payload Gb/s over time, in bins of ``bin_ns`` (a multiple of the fabric's):
        ``delivered_per_plane``, the goodput: bytes placed for the application, each
        once, per plane it arrived on; ``per_plane``, data bytes arriving at NICs on the
        wire (duplicates included); per T1 (leaving it) and per link direction."""
        width = self.bin_ns if bin_ns is None else bin_ns
        if width % self.bin_ns:
            raise VirtualFabricError(
                f"bin_ns={width} is not a multiple of the fabric's bin ({self.bin_ns} ns)"
            )
        factor = width // self.bin_ns
        end = max(self.now, 1)
        count = (end + width - 1) // width
        per_link: dict[str, list[float]] = {}
        per_plane: dict[int, list[float]] = {}
        per_t1: dict[str, list[float]] = {}
        t1s = {sw.name for sw in self.topology.switches if sw.role is Role.T1}
        for wire in self.wires.values():
            series = [0.0] * count
            for index, nbytes in wire.bins.items():
                slot = index // factor
                if slot < count:
                    series[slot] += nbytes * 8 / width
            per_link[wire.name] = series
            if wire.dst in self.nics:
                row = per_plane.setdefault(wire.plane, [0.0] * count)
                for i, v in enumerate(series):
                    row[i] += v
            if wire.src in t1s:
                row = per_t1.setdefault(wire.src, [0.0] * count)
                for i, v in enumerate(series):
                    row[i] += v
        delivered: dict[int, list[float]] = {p: [0.0] * count for p in per_plane}
        for node in self.nics.values():
            for (plane, index), nbytes in node.placed_bins.items():
                slot = index // factor
                if slot < count:
                    row = delivered.setdefault(plane, [0.0] * count)
                    row[slot] += nbytes * 8 / width
        return {
            "bin_ns": width,
            "t_ns": [i * width for i in range(count)],
            "delivered_per_plane": dict(sorted(delivered.items())),
            "per_plane": dict(sorted(per_plane.items())),
            "per_t1": dict(sorted(per_t1.items())),
            "per_link": per_link,
        }

    def repaths(self) -> list[dict[str, Any]]:
        """Per fault that takes links out of service: one repath per path (plane, T1) of a
        transfer (its sending NIC and QPN) whose EVs cross those links, in µs: from the send time of the first packet
        lost on that path after the fault began (the fault itself when nothing was lost) to
        the last data packet sent on an EV of it that was then taken out; None when the
        path lost packets but was never left. Attributed to its fault even when an EV of
        the path was already out of service before (random loss, an earlier fault)."""
        # keyed by NIC too: every NIC numbers its QPNs from the same base
        by_ev: dict[tuple[str, int, int], list[EventRecord]] = {}
        for rec in self.log.records:
            if rec.ev is not None and rec.qpn is not None and rec.kind in _REPATH_KINDS:
                by_ev.setdefault((rec.nic, rec.qpn, rec.ev), []).append(rec)
        out = []
        for index, fault in enumerate(self.faults):
            links = set(fault.links())
            if not links:
                continue
            paths: dict[tuple[str, int, tuple[int, ...]], list[int]] = {}
            for t in self.transfers:
                if t.sender is None:
                    continue
                for entry in t.sender.evs.entries():
                    if self._ev_crosses(t.src, t.dst, entry.ev, links):
                        path = (
                            entry.path if isinstance(entry.path, tuple) else (entry.plane, entry.ev)
                        )
                        paths.setdefault((t.src, t.sender.qpn, path), []).append(entry.ev)
            hits = []
            for (nic, qpn, path), evs in paths.items():
                hit = _path_repath(fault.start, [by_ev.get((nic, qpn, ev), []) for ev in evs])
                if hit is not None:
                    hits.append({"nic": nic, "qpn": qpn, "path": list(path), **hit})
            times = [h["repath_time_us"] for h in hits if h["repath_time_us"] is not None]
            out.append(
                {
                    "fault": index,
                    "kind": fault.kind,
                    "start_ns": fault.start,
                    "affected_evs": sum(len(evs) for evs in paths.values()),
                    "repath_us": [h["repath_time_us"] for h in hits],
                    "max_repath_us": max(times, default=None),
                    "events": hits,
                }
            )
        return out

    def _ev_crosses(self, src: str, dst: str, ev: int, links: set[LinkKey]) -> bool:
        try:
            path = self.addresses.path_for_ev(src, dst, ev)
        except TopologyError:
            return False
        hops = [src, *path.switches, dst]
        return any((a, b) in links or (b, a) in links for a, b in pairwise(hops))

    def results(self) -> dict[str, Any]:
        """Everything a run measured, as JSON-serialisable data."""
        return {
            "topology": self.topology.name,
            "seed": self.seed,
            "virtual_ns": self.now,
            "events_run": self.events.events_run,
            "switch_traversals": self.traversals(),
            "transfers": [self.transfer_result(t) for t in self.transfers],
            "faults": [f.describe() for f in self.faults],
            "repaths": self.repaths(),
            "planes": self.plane_counters(),
            "links": self.link_counters(),
            "switches": self.switch_counters(),
            "evs": self.ev_counters(),
            "ev_states": self.ev_state_changes(),
            **({"pfc": self.pfc_results()} if self.pfc is not None else {}),
            "event_log_sha256": self.event_log_sha256,
            "hot_path": hotpath.describe(),
        }

    def pfc_results(self) -> dict[str, Any]:
        """PFC (None when off): pauses sent and received and paused time, in total and
        per link direction that saw any; the peak bytes held per ingress port."""
        if self.pfc is None:
            return {}
        out = pfc_summary(self.pfc_counters, self.now)
        out["priorities"] = list(self.pfc.priorities)
        out["xoff"] = self.pfc.xoff
        out["xon"] = self.pfc.xon
        out["peak_ingress_bytes"] = max(
            (max(p.peak.values(), default=0) for p in self._pfc_switches.values()), default=0
        )
        return out

    def transfer_result(self, t: Transfer, *, sha256: bool = True) -> dict[str, Any]:
        """``t.as_dict()`` with its retransmitted bytes (counted on the sender's wire);
        ``sha256=False`` leaves out the data's digest (a pass over the whole transfer)."""
        return t.as_dict(self.retransmitted_bytes(t), sha256=sha256)

    def retransmitted_bytes(self, t: Transfer) -> int:
        """Payload bytes ``t``'s sender retransmitted to ``t``'s receiving connection: keyed
        by both ends (the sender's NIC, the receiver's NIC and QPN), on every plane."""
        if t.receiver is None:
            return 0
        qpn = t.receiver.qpn
        return sum(
            nbytes
            for (address, dqpn), nbytes in self.nics[t.src].retx_bytes.items()
            if dqpn == qpn and self.addresses.nic_for_address(address)[0] == t.dst
        )

    def records(self) -> Iterable[EventRecord]:
        return iter(self.log.records)


_REPATH_KINDS = (ev_kinds.LOSS, ev_kinds.EV_STATE)


def _path_repath(start_ns: int, histories: list[list[EventRecord]]) -> dict[str, Any] | None:
    """The repath of one path after a fault at ``start_ns`` from the records of its EVs
    (losses and state changes), until an EV of it is revived; None when the path neither
    lost a packet nor had an EV that carried data taken out after the fault."""
    revived = min(
        (
            r.t_ns
            for history in histories
            for r in history
            if r.t_ns > start_ns
            and r.kind == ev_kinds.EV_STATE
            and (r.detail or {}).get("old") == "ASSUMED_BAD"
        ),
        default=None,
    )
    first_lost: int | None = None
    lost = 0
    last_sent: int | None = None
    retired = 0
    for history in histories:
        for r in history:
            if r.t_ns < start_ns or (revived is not None and r.t_ns >= revived):
                continue
            detail = r.detail or {}
            if r.kind == ev_kinds.LOSS:
                sent = int(detail.get("sent_ns", r.t_ns))
                if sent >= start_ns:
                    lost += 1
                    first_lost = sent if first_lost is None else min(first_lost, sent)
            elif detail.get("new") in ("ASSUMED_BAD", "DENIED"):
                retired += 1
                tx = int(detail.get("last_tx_ns", -1))
                if tx >= 0:
                    last_sent = tx if last_sent is None else max(last_sent, tx)
    if first_lost is None and (last_sent is None or last_sent < start_ns):
        return None
    origin = start_ns if first_lost is None else first_lost
    repath = None if last_sent is None else max(0, last_sent - origin) / 1000
    return {"repath_time_us": repath, "packets_lost": lost, "evs_retired": retired}
