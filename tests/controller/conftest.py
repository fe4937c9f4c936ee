"""Fixtures for controller tests.

``fabric`` serves one P4Runtime server per switch of a topology, in this process: p4emu's
real gRPC service (``p4emu.server.service``: arbitration, primary checks, per-update error
details) in front of :class:`TableDevice`, a small table store that checks entries against
the P4Info the way a switch does. Integration tests against real ``p4emu-switch`` processes
are in ``test_integration_p4emu.py``.
"""

from __future__ import annotations

import functools
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from finsy.proto import p4i, p4r, rpc_code

import topologies
from controller.artifacts import DEFAULT_PROGRAM, Pipeline, p4emu_pipeline
from controller.endpoints import P4RuntimeTarget
from controller.plan import Entry
from p4emu.bundle import DeviceConfigError, parse_device_config
from p4emu.frontend import load_program
from p4emu.p4info import extract_model
from p4emu.server.device import DeviceError, StreamListener
from p4emu.server.service import P4RuntimeService, start_grpc_server

OK = p4r.Error(canonical_code=rpc_code.OK)


def _error(code: int, message: str) -> p4r.Error:
    return p4r.Error(canonical_code=code, message=message)


@functools.cache
def program_defaults() -> dict[str, tuple[str, tuple[int, ...]]]:
    """Table name -> (default action name, its arguments) as DEFAULT_PROGRAM declares them:
    what a switch holds after a pipeline is set (the P4Info does not say, as p4c's)."""
    model = extract_model(load_program(DEFAULT_PROGRAM))
    return {
        table.preamble.name: (
            table.default_action.action,
            tuple(map(int, table.default_action.arguments)),
        )
        for table in model.tables
        if table.default_action is not None
    }


class TableDevice:
    """A P4Runtime device that stores table entries and checks them against its P4Info."""

    def __init__(self, device_id: int = 0) -> None:
        self.device_id = device_id
        self.config: p4r.ForwardingPipelineConfig | None = None
        self.tables: dict[int, p4i.Table] = {}
        self.actions: dict[int, p4i.Action] = {}
        self.counters: dict[int, p4i.Counter] = {}
        self.entries: dict[int, dict[tuple[object, ...], p4r.TableEntry]] = {}
        self.defaults: dict[int, p4r.TableEntry] = {}
        self.fail_tables: set[str] = set()  # writes to these tables fail (fault injection)
        self.refuse_pipeline: str | None = None
        self.pipeline_sets = 0
        self.updates_written = 0
        self.listener: StreamListener | None = None

    # --- pipeline --------------------------------------------------------------------
    def has_pipeline(self) -> bool:
        return self.config is not None

    def verify_pipeline(self, config: p4r.ForwardingPipelineConfig) -> object:
        if self.refuse_pipeline is not None:
            raise DeviceError(rpc_code.INVALID_ARGUMENT, self.refuse_pipeline)
        if not config.p4info.tables:
            raise DeviceError(rpc_code.INVALID_ARGUMENT, "the P4Info has no tables")
        try:
            parse_device_config(config.p4_device_config)  # what p4emu-switch accepts
        except DeviceConfigError as exc:
            raise DeviceError(rpc_code.INVALID_ARGUMENT, str(exc)) from None
        copy = p4r.ForwardingPipelineConfig()
        copy.CopyFrom(config)
        return copy

    def commit_pipeline(self, prepared: object, *, reconcile: bool) -> None:
        assert isinstance(prepared, p4r.ForwardingPipelineConfig)
        self.config = prepared
        self.pipeline_sets += 1
        info = prepared.p4info
        self.tables = {t.preamble.id: t for t in info.tables}
        self.actions = {a.preamble.id: a for a in info.actions}
        self.counters = {c.preamble.id: c for c in info.counters}
        self.entries = {table_id: {} for table_id in self.tables}
        self.defaults = {}
        programmed = program_defaults()
        action_ids = {a.preamble.name: a.preamble.id for a in info.actions}
        for table in info.tables:
            default = p4r.TableEntry(table_id=table.preamble.id, is_default_action=True)
            action, arguments = programmed[table.preamble.name]
            default.action.action.action_id = action_ids[action]
            for param_id, value in enumerate(arguments, start=1):
                data = value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")
                default.action.action.params.add(param_id=param_id, value=data)
            self.defaults[table.preamble.id] = default

    def pipeline_config(self) -> p4r.ForwardingPipelineConfig | None:
        return self.config

    # --- entries ---------------------------------------------------------------------
    def _key(self, entry: p4r.TableEntry) -> tuple[object, ...]:
        fields = []
        for match in entry.match:
            kind = match.WhichOneof("field_match_type")
            if kind == "exact":
                fields.append((match.field_id, int.from_bytes(match.exact.value, "big"), -1))
            else:
                fields.append(
                    (match.field_id, int.from_bytes(match.lpm.value, "big"), match.lpm.prefix_len)
                )
        return (tuple(sorted(fields)), entry.priority)

    def _check(self, entry: p4r.TableEntry) -> p4r.Error | None:
        table = self.tables.get(entry.table_id)
        if table is None:
            return _error(rpc_code.NOT_FOUND, f"table id {entry.table_id} does not exist")
        if table.preamble.name in self.fail_tables:
            return _error(rpc_code.INVALID_ARGUMENT, f"injected failure for {table.preamble.name}")
        widths = {f.id: f.bitwidth for f in table.match_fields}
        for match in entry.match:
            if match.field_id not in widths:
                return _error(rpc_code.INVALID_ARGUMENT, f"unknown match field {match.field_id}")
            kind = match.WhichOneof("field_match_type")
            value = match.exact.value if kind == "exact" else match.lpm.value
            if int.from_bytes(value, "big") >> widths[match.field_id]:
                return _error(rpc_code.OUT_OF_RANGE, f"match field {match.field_id} too wide")
        if entry.HasField("action"):
            action_id = entry.action.action.action_id
            if action_id not in {ref.id for ref in table.action_refs}:
                return _error(rpc_code.INVALID_ARGUMENT, f"action {action_id} not in table")
            params = {p.id: p.bitwidth for p in self.actions[action_id].params}
            given = {p.param_id for p in entry.action.action.params}
            if given != set(params):
                return _error(rpc_code.INVALID_ARGUMENT, "wrong action parameters")
            for param in entry.action.action.params:
                if int.from_bytes(param.value, "big") >> params[param.param_id]:
                    return _error(rpc_code.OUT_OF_RANGE, f"param {param.param_id} too wide")
        return None

    def write(self, updates: Sequence[p4r.Update], atomicity: int) -> list[p4r.Error]:
        errors = []
        for update in updates:
            entry = update.entity.table_entry
            problem = self._check(entry)
            if problem is not None:
                errors.append(problem)
                continue
            table = self.entries[entry.table_id]
            stored = p4r.TableEntry()
            stored.CopyFrom(entry)
            if entry.is_default_action:
                if update.type != p4r.Update.MODIFY:
                    errors.append(_error(rpc_code.INVALID_ARGUMENT, "default entry: MODIFY only"))
                else:
                    self.defaults[entry.table_id] = stored
                    errors.append(OK)
                continue
            key = self._key(entry)
            if update.type == p4r.Update.INSERT:
                if key in table:
                    errors.append(_error(rpc_code.ALREADY_EXISTS, "entry exists"))
                elif len(table) >= self.tables[entry.table_id].size:
                    errors.append(_error(rpc_code.RESOURCE_EXHAUSTED, "table full"))
                else:
                    table[key] = stored
                    errors.append(OK)
            elif update.type == p4r.Update.MODIFY:
                if key not in table:
                    errors.append(_error(rpc_code.NOT_FOUND, "no such entry"))
                else:
                    table[key] = stored
                    errors.append(OK)
            elif update.type == p4r.Update.DELETE:
                if table.pop(key, None) is None:
                    errors.append(_error(rpc_code.NOT_FOUND, "no such entry"))
                else:
                    errors.append(OK)
            else:
                errors.append(_error(rpc_code.INVALID_ARGUMENT, "bad update type"))
        self.updates_written += sum(1 for e in errors if e.canonical_code == rpc_code.OK)
        return errors

    def read(self, entities: Sequence[p4r.Entity]) -> Iterator[p4r.Entity]:
        out: list[p4r.Entity] = []
        for entity in entities:
            kind = entity.WhichOneof("entity")
            if kind == "table_entry":
                request = entity.table_entry
                ids = [request.table_id] if request.table_id else list(self.tables)
                for table_id in ids:
                    if table_id not in self.tables:
                        raise DeviceError(rpc_code.NOT_FOUND, f"table id {table_id} unknown")
                    stored = (
                        [self.defaults[table_id]]
                        if request.is_default_action
                        else list(self.entries[table_id].values())
                    )
                    for entry in stored:
                        result = p4r.Entity()
                        result.table_entry.CopyFrom(entry)
                        out.append(result)
            elif kind == "counter_entry":
                counter = self.counters[entity.counter_entry.counter_id]
                for index in range(counter.size):
                    result = p4r.Entity()
                    result.counter_entry.counter_id = counter.preamble.id
                    result.counter_entry.index.index = index
                    result.counter_entry.data.packet_count = 1 if index == 3 else 0
                    result.counter_entry.data.byte_count = 100 if index == 3 else 0
                    out.append(result)
            else:
                raise DeviceError(rpc_code.UNIMPLEMENTED, f"cannot read {kind}")
        return iter(out)

    def entry_count(self) -> int:
        return sum(len(t) for t in self.entries.values())

    def packet_out(self, packet: p4r.PacketOut) -> None:
        """The controller sends no packets; this fake device has no data plane."""

    def digest_ack(self, ack: p4r.DigestListAck) -> None:
        """The controller enables no digests; nothing to acknowledge."""

    def set_stream_listener(self, listener: StreamListener | None) -> None:
        self.listener = listener


@dataclass
class FakeSwitch:
    name: str
    port: int
    device: TableDevice
    server: grpc.Server | None = None
    service: P4RuntimeService | None = None

    def start(self) -> None:
        self.service = P4RuntimeService(self.device)
        self.server, bound = start_grpc_server(
            self.service, f"127.0.0.1:{self.port}", max_workers=8
        )
        assert bound == self.port

    def locked(self) -> threading.RLock:
        """The service's device lock: hold it to change the device while it serves."""
        assert self.service is not None
        return self.service.lock

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop(None).wait()
            self.server = None

    def restart(self) -> None:
        """A new process on the same address: empty device, no pipeline."""
        self.stop()
        self.device = TableDevice()
        self.start()


@dataclass
class FakeFabric:
    topology: topologies.Topology
    switches: dict[str, FakeSwitch] = field(default_factory=dict)

    @property
    def endpoints(self) -> dict[str, P4RuntimeTarget]:
        return {name: P4RuntimeTarget(f"127.0.0.1:{sw.port}") for name, sw in self.switches.items()}

    def __getitem__(self, name: str) -> FakeSwitch:
        return self.switches[name]

    @staticmethod
    def declared_default(table: str) -> Entry:
        """The default entry a switch holds for ``table`` until one is written."""
        action, arguments = program_defaults()[table]
        return Entry(table, (), action, arguments, True)

    def stop(self) -> None:
        for sw in self.switches.values():
            sw.stop()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_fabric(topology: topologies.Topology) -> FakeFabric:
    fabric = FakeFabric(topology)
    for sw in topology.switches:
        fake = FakeSwitch(sw.name, free_port(), TableDevice())
        fake.start()
        fabric.switches[sw.name] = fake
    return fabric


@pytest.fixture
def tiny() -> topologies.Topology:
    return topologies.load("tiny")


@pytest.fixture
def fabric(tiny: topologies.Topology) -> Iterator[FakeFabric]:
    built = make_fabric(tiny)
    yield built
    built.stop()


@pytest.fixture
def fabric_factory() -> Iterator[Callable[[topologies.Topology], FakeFabric]]:
    """Builds fake fabrics for other topologies; stops them all at the end."""
    built: list[FakeFabric] = []

    def factory(topology: topologies.Topology) -> FakeFabric:
        built.append(make_fabric(topology))
        return built[-1]

    yield factory
    for item in built:
        item.stop()


@pytest.fixture(scope="session")
def pipeline() -> Pipeline:
    """p4emu's pipeline for the real p4src/mrc_switch.p4 (P4Info generated by p4emu)."""
    assert DEFAULT_PROGRAM.is_file(), f"{DEFAULT_PROGRAM} is missing"
    return p4emu_pipeline()


@pytest.fixture(scope="session")
def p4info_file(tmp_path_factory: pytest.TempPathFactory, pipeline: Pipeline) -> Path:
    from p4emu.p4info import write_p4info

    path = tmp_path_factory.mktemp("p4info") / "mrc_switch.p4info.txtpb"
    write_p4info(pipeline.p4info, path)
    return path
