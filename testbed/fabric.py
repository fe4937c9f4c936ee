"""A running fabric, whatever the mode: programming through the controller, failures
(link, switch, NIC port) and status. ``local.py`` and ``mininet_mode.py`` start the
processes; everything after that is here, driven by the run directory's state.

Failure model (docs/testbed.md, "Failures"): a failure is physical, never a route change.
The controller's routes are static (the NICs route around failures); a cut port is set
down through the switch's management channel (:mod:`testbed.portctl`: gNMI on p4emu,
the runtime CLI on BMv2), not through P4Runtime, so nothing the controller writes (push,
``watch`` reconciling) revives it, and ``watch`` and ``link`` work at the same time.

- **link down A B** (T0-T1): both switch ends of the link go down (frames are lost in both
  directions, as on a cut cable). The NICs are not told: in SRv6 mode a fabric link
  failure is silent and the NIC finds it by loss (sources §4.3).
- **port down NIC PLANE** (or **link down NIC T0**): the NIC's port on that plane goes down
  (control ``port``), as the NIC would see a dead link, and the T0 end of the link too.
- **switch down S**: SIGKILL of the switch process (a power cut: tables lost);
  **switch up S** starts it again with the same command line, the controller programs it
  (the same static routes) and the ports that are still cut are set down again.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import shlex
import shutil
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.artifacts import Pipeline
from controller.endpoints import P4RuntimeTarget
from controller.exceptions import ControllerError
from controller.p4rt_client import SwitchClient
from controller.plan import plan_fabric
from controller.push import ConnectOptions, FabricReport, push_fabric
from controller.reconcile import SyncOptions
from controller.render import report_line, short_name
from controller.show import SwitchView, read_switch
from p4emu.proto import p4i
from testbed import layout
from testbed.exceptions import (
    ModeError,
    NicControlError,
    PortControlError,
    ProcessStartError,
    ProgrammingError,
    RunDirError,
    TestbedError,
    UsageError,
)
from testbed.nics import RunningNic
from testbed.options import DEFAULT_START_TIMEOUT_S
from testbed.portctl import (
    Bmv2Session,
    bmv2_port_states,
    bmv2_set_ports,
    gnmi_ports,
    gnmi_set_ports,
)
from testbed.rundir import (
    ProcessRecord,
    RunDir,
    RunState,
    exit_code,
    is_alive,
    kill_record,
    select_run,
    spawn,
)
from testbed.zygote import Zygote
from topologies import LinkKind, Topology, TopologyError
from topologies import load as load_topology
from topologies.events import (
    EvDropEvent,
    Event,
    FlapEvent,
    LinkDownEvent,
    LinkUpEvent,
    LossEvent,
    PortDownEvent,
    PortUpEvent,
    SwitchDownEvent,
    SwitchUpEvent,
)

SWITCH_COMMAND_ENV = "MRC_TESTBED_SWITCH_COMMAND"
NIC_COMMAND_ENV = "MRC_TESTBED_NIC_COMMAND"
DEFAULT_CONNECT_TIMEOUT_S = 30.0
RETRY_PAUSE_S = 1.0
KILL_WAIT_S = 10.0  # a SIGKILLed switch is gone well within this, even on a loaded machine
START_RETRIES = 2  # up re-tries switches that failed to program (idempotent)
LOG_TAIL_LINES = 15
UNIX_PATH_MAX = 107  # sun_path is 108 bytes including the NUL


# ---------------------------------------------------------------------- commands


def _console_script(name: str) -> str | None:
    """``name`` next to this Python (the venv's bin) or on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(name)


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def switch_command(target: str, override: Sequence[str] | None = None) -> list[str]:
    """The switch program's argv prefix: ``override``, ``$MRC_TESTBED_SWITCH_COMMAND``,
    else ``p4emu-switch`` / ``simple_switch_grpc``."""
    if override:
        return list(override)
    from_env = os.environ.get(SWITCH_COMMAND_ENV)
    if from_env:
        return shlex.split(from_env)
    if target == "bmv2":
        found = _console_script("simple_switch_grpc")
        if found is None:
            raise ModeError(
                "--target bmv2 needs simple_switch_grpc on PATH (BMv2 with P4Runtime: "
                "build p4lang/behavioral-model with --with-pi, see docs/testbed.md)"
            )
        return [found]
    found = _console_script("p4emu-switch")
    if found is not None:
        return [found]
    if _has_module("p4emu.server.main"):
        return [
            sys.executable,
            "-c",
            "import sys; from p4emu.server.main import main; sys.exit(main())",
        ]
    raise ModeError(
        "p4emu-switch is not available: neither the p4emu-switch command nor the module "
        "p4emu.server.main is installed"
    )


def nic_command(override: Sequence[str] | None = None) -> list[str]:
    """The NIC emulator's argv prefix (``... serve --config FILE`` follows): ``override``,
    ``$MRC_TESTBED_NIC_COMMAND``, else ``nic-emu``."""
    if override:
        return list(override)
    from_env = os.environ.get(NIC_COMMAND_ENV)
    if from_env:
        return shlex.split(from_env)
    found = _console_script("nic-emu")
    if found is not None:
        return [found]
    if _has_module("nic_emu.__main__"):
        return [sys.executable, "-m", "nic_emu"]
    raise ModeError(
        "nic-emu is not available: neither the nic-emu command nor the module "
        "nic_emu.__main__ is installed"
    )


def use_fork_server(target: str, override: Sequence[str] | None) -> bool:
    """Fork p4emu-switch processes from one zygote (testbed.zygote) unless the user chose
    the switch program, or p4emu is not importable here."""
    return (
        target == "p4emu"
        and not override
        and not os.environ.get(SWITCH_COMMAND_ENV)
        and _has_module("p4emu.server.main")
    )


def target_version(target: str, override: Sequence[str] | None = None) -> str:
    """What switch program a run used, for its results: ``simple_switch_grpc --version``
    (BMv2), else p4emu's package version; ``unknown`` when it cannot be told."""
    import subprocess
    from importlib.metadata import PackageNotFoundError, version

    if target == "bmv2":
        try:
            command = switch_command(target, override)
            result = subprocess.run(
                [*command, "--version"], capture_output=True, text=True, timeout=10, check=False
            )
        except (ModeError, OSError, subprocess.TimeoutExpired):
            return "unknown"
        text = (result.stdout or result.stderr).strip().splitlines()
        return f"simple_switch_grpc {text[0]}" if result.returncode == 0 and text else "unknown"
    try:
        return f"p4emu-switch {version('mrc-testbed')}"
    except PackageNotFoundError:
        return "unknown"


PRIORITY_QUEUES = 8  # p4src/README.md: control traffic uses priority 7
# BMv2's logging off: nothing reads its log in a run, and the default build's logging costs
# it most of its packet rate (benchmarks start it the same way, and say so)
BMV2_LOG_ARGS = ("--log-level", "off")


def switch_args(
    target: str,
    topology: Topology,
    switch: str,
    ports: Mapping[int, str],
    queue_rate_scale: float | None,
    *,
    grpc_address: str,
    seed: int,
    thrift_port: int | None = None,
) -> list[str]:
    """THE switch command line (after the program), for every mode and target.

    The mode supplies only what differs: ``ports`` (port number -> what follows
    ``-i PORT@``: ``udp:LOCAL->PEER`` in local mode, an interface name in Mininet mode) and
    ``queue_rate_scale`` (each port drains at its link's rate x this; None where tc shapes
    the links, so that no second limiter is in series). General
    options come before ``--``, target options after it, as ``simple_switch_grpc`` wants
    them (``p4emu-switch`` takes the same)."""
    settings = topology.switch_settings
    links = topology.links_of(switch)
    argv = ["--device-id", "0"]
    for port, where in sorted(ports.items()):
        argv += ["-i", f"{port}@{where}"]
    if target == "bmv2":
        argv += BMV2_LOG_ARGS
        if thrift_port is not None:
            argv += ["--thrift-port", str(thrift_port)]
    if target == "p4emu":
        if queue_rate_scale is not None:  # every port has a link: the CPU port stays free
            argv += layout.port_queue_rate_args(topology, switch, queue_rate_scale)
        argv += layout.link_delay_args(topology, switch)  # each end delays what it sends
        argv += [
            "--queue-depth",
            str(min(link.queue_packets for link in links)),
            "--seed",
            str(seed),
        ]
    return [
        *argv,
        "--no-p4",
        "--",
        "--grpc-server-addr",
        grpc_address,
        "--cpu-port",
        str(settings.cpu_port),
        "--drop-port",
        str(settings.drop_port),
        "--priority-queues",
        str(PRIORITY_QUEUES),
    ]


@dataclass(frozen=True)
class SwitchLaunch:
    """One switch to start: its name, the arguments after the command, its log."""

    name: str
    args: list[str]
    log: Path


class SwitchStarter:
    """Starts switch processes, through the fork server when ``fork_server`` (then
    :meth:`close` ends the server; the switches keep running)."""

    def __init__(
        self,
        rundir: RunDir,
        state: RunState,
        command: Sequence[str],
        *,
        fork_server: bool,
        warm: Path | None = None,
    ) -> None:
        self.rundir = rundir
        self.state = state
        self.command = list(command)
        self.zygote: Zygote | None = Zygote(rundir, state, warm) if fork_server else None

    def start(self, launch: SwitchLaunch) -> ProcessRecord:
        name = f"switch:{launch.name}"
        if self.zygote is not None:
            return self.zygote.fork(
                self.rundir, self.state, name, self.command, launch.args, launch.log
            )
        return spawn(
            self.rundir,
            self.state,
            name=name,
            kind="switch",
            argv=[*self.command, *launch.args],
            log=launch.log,
        )

    def close(self) -> None:
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None


# ---------------------------------------------------------------------- helpers


def log_tail(path: str | Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    kept = text.strip().splitlines()[-lines:]
    return "\n".join("    " + line for line in kept) if kept else "    (empty log)"


def died_error(record: ProcessRecord, what: str) -> ProcessStartError:
    code = exit_code(record)
    status = f"exit status {code}" if code is not None else "exited"
    return ProcessStartError(
        f"{record.name} {status} {what}; last lines of {record.log}:\n{log_tail(record.log)}"
    )


def tcp_port_open(port: int, host: str = layout.LOOPBACK, timeout: float = 0.2) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=timeout):
        return True
    return False


def check_socket_path(path: Path) -> None:
    if len(str(path)) > UNIX_PATH_MAX:
        raise RunDirError(
            f"control socket path {path} is longer than {UNIX_PATH_MAX} bytes (a Unix socket "
            "limit); use a shorter --run-dir"
        )


def wait_for_switches(
    records: Sequence[ProcessRecord],
    endpoints: dict[str, P4RuntimeTarget],
    timeout: float = DEFAULT_START_TIMEOUT_S,
) -> None:
    """Waits until every switch accepts TCP connections on its gRPC port."""
    waiting = {record.node: record for record in records}
    deadline = time.monotonic() + timeout
    while waiting:
        for name, record in list(waiting.items()):
            # Alive first: on a shared machine the port may answer for another process.
            if not is_alive(record):
                raise died_error(record, "while starting")
            if tcp_port_open(layout.grpc_port(endpoints[name])):
                del waiting[name]
        if not waiting:
            return
        if time.monotonic() > deadline:
            names = ", ".join(sorted(waiting))
            raise ProcessStartError(
                f"switches not serving P4Runtime after {timeout:g} s: {names}; see their logs "
                f"in {Path(next(iter(waiting.values())).log).parent}"
            )
        time.sleep(0.05)


def wait_for_nics(
    records: Sequence[ProcessRecord], controls: dict[str, RunningNic], timeout: float
) -> None:
    """Waits until every NIC answers ``status`` on its control socket."""
    waiting = {record.node: record for record in records}
    deadline = time.monotonic() + timeout
    while waiting:
        for name, record in list(waiting.items()):
            if controls[name].path.exists() and controls[name].ready():
                del waiting[name]
            elif not is_alive(record):
                raise died_error(record, "while starting")
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise ProcessStartError(
                f"NICs not answering on their control sockets after {timeout:g} s: "
                + ", ".join(sorted(waiting))
            )
        time.sleep(0.05)


def save_pipeline(rundir: RunDir, pipeline: Pipeline) -> None:
    """Keeps the pushed pipeline in the run directory, so later commands (switch up, link
    down) re-use it without compiling again."""
    directory = rundir.file("pipeline")
    directory.mkdir(exist_ok=True)
    (directory / "p4info.bin").write_bytes(pipeline.p4info.SerializeToString(deterministic=True))
    (directory / "device_config.bin").write_bytes(pipeline.device_config)
    (directory / "target").write_text(
        f"{pipeline.target}\n{pipeline.description}\n", encoding="utf-8"
    )


def load_pipeline(rundir: RunDir) -> Pipeline:
    directory = rundir.file("pipeline")
    try:
        info = p4i.P4Info.FromString((directory / "p4info.bin").read_bytes())
        device_config = (directory / "device_config.bin").read_bytes()
        target, description = (directory / "target").read_text(encoding="utf-8").splitlines()[:2]
    except (OSError, ValueError) as exc:
        raise RunDirError(
            f"{directory}: the saved pipeline is missing or damaged ({exc})"
        ) from None
    return Pipeline(target, info, device_config, description)


# ---------------------------------------------------------------------- status


@dataclass
class NodeStatus:
    """One node's status: name, kind (``switch`` or ``nic``), whether its process runs, a
    one-line detail, its pid (None when not running) and, of a NIC, its control status."""

    name: str
    kind: str  # switch | nic
    running: bool
    detail: str
    pid: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class FabricStatus:
    """What ``status`` reports of a fabric: its run's name, mode, target and phase, the topology,
    the run directory, every node and what is down; ``drifted`` None when not checked."""

    name: str
    mode: str
    target: str
    phase: str
    topology: str
    run_dir: str
    nodes: list[NodeStatus]
    links_down: list[list[str]]
    switches_down: list[str]
    ports_down: list[list[Any]]
    drifted: list[str] | None = None  # --check: switches whose tables differ (or unreadable)

    @property
    def in_sync(self) -> bool:
        """Every checked switch holds the plan (True when not checked)."""
        return not self.drifted

    @property
    def healthy(self) -> bool:
        return (
            all(node.running for node in self.nodes if node.name not in self.switches_down)
            and self.phase == "ready"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "mode": self.mode,
            "target": self.target,
            "phase": self.phase,
            "healthy": self.healthy,
            "checked": self.drifted is not None,
            "in_sync": self.in_sync,
            "drifted": self.drifted,
            "topology": self.topology,
            "run_dir": self.run_dir,
            "nodes": [vars(node) for node in self.nodes],
            "links_down": self.links_down,
            "switches_down": self.switches_down,
            "ports_down": self.ports_down,
        }

    def lines(self) -> list[str]:
        out = [
            f"run {self.name}: {self.topology}; {self.mode} mode, target {self.target}, "
            f"{self.phase}{'' if self.healthy else ' (degraded)'}",
            f"run directory: {self.run_dir}",
        ]
        for node in self.nodes:
            state = "up" if node.running else "DOWN"
            pid = f"pid {node.pid}" if node.pid else ""
            out.append(f"  {node.kind:<6} {node.name:<10} {state:<5} {pid:<10} {node.detail}")
        if self.links_down:
            out.append("links down: " + ", ".join(f"{a} -- {b}" for a, b in self.links_down))
        if self.ports_down:
            out.append("NIC ports down: " + ", ".join(f"{n} plane {p}" for n, p in self.ports_down))
        if self.switches_down:
            out.append("switches down: " + ", ".join(self.switches_down))
        if self.drifted:
            out.append("tables differ from the plan: " + ", ".join(self.drifted))
        return out


# ---------------------------------------------------------------------- the fabric


class Fabric:
    """A run's fabric, as recorded in its run directory."""

    def __init__(self, rundir: RunDir, state: RunState) -> None:
        self.rundir = rundir
        self.state = state
        self._topology: Topology | None = None
        self._pipeline: Pipeline | None = None
        # BMv2 runtime CLIs kept running for switches whose ports change often (a
        # scenario's timeline): switch -> session (:meth:`hold_port_sessions`)
        self.port_sessions: dict[str, Bmv2Session] = {}
        self._held: set[str] = set()
        self._save_lock = threading.Lock()

    def hold_port_sessions(self, switches: Iterable[str]) -> None:
        """BMv2: keeps a runtime CLI running for each of ``switches`` (until
        :meth:`close_port_sessions`), so a port change costs milliseconds, not the seconds
        a CLI takes to start; a switch restarted by :meth:`switch_up` gets a new one. Other
        targets need none (gNMI answers at once)."""
        if self.state.target != "bmv2":
            return
        for switch in sorted(set(switches)):
            self._held.add(switch)
            if switch not in self.port_sessions and switch not in self.state.switches_down:
                self._check_thrift_bound(switch)
                self.port_sessions[switch] = Bmv2Session(self._thrift_port(switch))

    def _check_thrift_bound(self, switch: str) -> None:
        """PortControlError if BMv2 ``switch`` could not bind its Thrift port: a CLI on that
        port would then drive whatever else listens there (another run's switch)."""
        log = Path(self.switch_record(switch).log)
        text = log.read_text(errors="replace") if log.is_file() else ""
        if "trying to bind to port" in text:
            raise PortControlError(
                f"{switch}: BMv2 could not bind its Thrift port {self._thrift_port(switch)} "
                f"(in use by another process; choose another --thrift-base-port); see {log}"
            )

    def close_port_sessions(self) -> None:
        for session in self.port_sessions.values():
            session.close()
        self.port_sessions.clear()
        self._held.clear()

    @classmethod
    def open(cls, name: str | None = None, root: Path | None = None) -> Fabric:
        rundir = select_run(name, root)
        return cls(rundir, rundir.load())

    # -------------------------------------------------------------- derived facts

    @property
    def topology(self) -> Topology:
        if self._topology is None:
            try:
                self._topology = load_topology(self.state.topology_file)
            except TopologyError as exc:
                raise RunDirError(
                    f"{self.rundir.path}: cannot reload the topology: {exc}"
                ) from None
        return self._topology

    @property
    def endpoints(self) -> dict[str, P4RuntimeTarget]:
        return layout.grpc_endpoints(self.topology, int(self.state.settings["grpc_base_port"]))

    @property
    def pipeline(self) -> Pipeline:
        if self._pipeline is None:
            self._pipeline = load_pipeline(self.rundir)
        return self._pipeline

    def set_pipeline(self, pipeline: Pipeline) -> None:
        self._pipeline = pipeline

    def switch_record(self, name: str) -> ProcessRecord:
        record = self.state.processes.get(f"switch:{name}")
        if record is None:
            raise UsageError(self._unknown_switch(name))
        return record

    def nic_record(self, name: str) -> ProcessRecord:
        record = self.state.processes.get(f"nic:{name}")
        if record is None:
            nics = [r.node for r in self.state.processes_of("nic")]
            raise UsageError(f"{self.topology.name} has no NIC {name!r} (NICs: {_span(nics)})")
        return record

    def _unknown_switch(self, name: str) -> str:
        switches = [sw.name for sw in self.topology.switches]
        return f"{self.topology.name} has no switch {name!r} (switches: {_span(switches)})"

    def nic(self, name: str, timeout: float = 10.0) -> RunningNic:
        record = self.nic_record(name)
        return RunningNic(name, self.rundir.file("nics", f"{name}.sock"), timeout, record)

    def save(self) -> None:
        with self._save_lock:  # changes applied from several threads at one instant
            self.rundir.save(self.state)

    # -------------------------------------------------------------- programming

    def cut_ports(self) -> dict[str, set[int]]:
        """Switch ports that are down now: both ends of every cut link, and the T0 end of
        every NIC port that is down. Switch -> port numbers."""
        cut: dict[str, set[int]] = {}
        ends = [(a, b) for a, b in self.state.links_down]
        ends += [
            (nic, self.topology.nic_port(nic, int(plane)).t0)
            for nic, plane in self.state.ports_down
        ]
        for a, b in ends:
            link = self.topology.link(a, b)
            for end in (link.a, link.b):
                if not end.node.startswith("nic"):
                    cut.setdefault(end.node, set()).add(end.port)
        return cut

    def set_ports(self, ports: Mapping[str, Iterable[int]], up: bool) -> None:
        """Sets switch ports up or down through each switch's management channel (gNMI,
        or BMv2's runtime CLI); switches that are down are skipped (they get the current
        state when they come back, :meth:`switch_up`)."""
        for switch, numbers in sorted(ports.items()):
            numbers = sorted(set(numbers))
            if not numbers or switch in self.state.switches_down:
                continue
            if self.state.target == "bmv2":
                interfaces = {port: layout.switch_interface(switch, port) for port in numbers}
                session = self.port_sessions.get(switch)
                if session is not None:
                    try:
                        session.set_ports(interfaces, up)
                        continue
                    except PortControlError:  # a CLI that hangs or died: one-shot CLIs now
                        self.port_sessions.pop(switch).close()
                        attached = bmv2_port_states(self._thrift_port(switch))
                        interfaces = {p: i for p, i in interfaces.items() if (p in attached) != up}
                bmv2_set_ports(self._thrift_port(switch), interfaces, up)
            else:
                gnmi_set_ports(self.endpoints[switch].address, numbers, up)

    def _ends(self, *nodes: str) -> dict[str, set[int]]:
        """The switch ports of the link between ``nodes[0]`` and ``nodes[1]``."""
        link = self.topology.link(nodes[0], nodes[1])
        return {end.node: {end.port} for end in (link.a, link.b) if not end.node.startswith("nic")}

    def live_switches(self) -> list[str]:
        return [sw.name for sw in self.topology.switches if sw.name not in self.state.switches_down]

    def bring_up(
        self,
        switch_records: Sequence[ProcessRecord],
        nic_records: Sequence[ProcessRecord],
        endpoints: dict[str, P4RuntimeTarget],
        *,
        timeout: float,
        phases: dict[str, float],
        started: float,
        say: Callable[[str], None],
    ) -> FabricReport:
        """The end of ``up`` common to every mode: switches serving, routes installed, NICs
        answering. Each step's time since ``started`` goes into ``phases``."""
        wait_for_switches(switch_records, endpoints, timeout)
        phases["switches_serving"] = time.perf_counter() - started
        say("switches serving P4Runtime; installing the pipeline and routes")
        report = self.program(connect_timeout=timeout, retries=START_RETRIES)
        phases["routes_installed"] = time.perf_counter() - started
        controls = {nic.name: self.nic(nic.name) for nic in self.topology.nics}
        wait_for_nics(nic_records, controls, timeout)
        phases["nics_ready"] = time.perf_counter() - started
        return report

    def program(
        self,
        switches: Iterable[str] | None = None,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
        dry_run: bool = False,
        retries: int = 0,
    ) -> FabricReport:
        """Reconciles ``switches`` (default: every switch not down) with the plan of the
        topology and its current failures; ProgrammingError if any switch fails.

        ``retries``: switches that fail are reconciled again (after RETRY_PAUSE_S) up to
        this many times; reconciling is idempotent, and a loaded machine can make a freshly
        started switch miss a deadline."""
        selected = list(switches) if switches is not None else self.live_switches()
        if not selected:
            return FabricReport()
        combined = FabricReport()
        started = time.perf_counter()
        for attempt in range(retries + 1):
            try:
                plan = plan_fabric(self.topology, switches=selected)  # static routes
                report = asyncio.run(
                    push_fabric(
                        plan,
                        self.pipeline,
                        self.endpoints,
                        connect=ConnectOptions(connect_timeout=connect_timeout),
                        sync=SyncOptions(dry_run=dry_run),
                    )
                )
            except ControllerError as exc:
                raise ProgrammingError(f"controller: {exc}") from None
            combined.reports = [r for r in combined.reports if r.switch not in selected]
            combined.reports.extend(report.reports)
            if report.ok or attempt == retries:
                break
            selected = [r.switch for r in report.failed]
            time.sleep(RETRY_PAUSE_S)
        combined.seconds = time.perf_counter() - started
        if not combined.ok:
            lines = "\n".join("  " + report_line(r) for r in combined.failed)
            raise ProgrammingError(
                f"{len(combined.failed)} switches could not be programmed:\n{lines}"
            )
        return combined

    # -------------------------------------------------------------- failures

    def _link(self, a: str, b: str) -> tuple[str, str, LinkKind]:
        try:
            link = self.topology.link(a, b)
        except TopologyError as exc:
            raise UsageError(str(exc)) from None
        return link.a.node, link.b.node, link.kind

    # Each change is recorded first, then applied; a change that is already recorded is
    # applied again, so repeating a command after a failure (a switch that did not answer)
    # finishes the job instead of reporting "already done".

    def link_down(self, a: str, b: str) -> str:
        lower, upper, kind = self._link(a, b)
        if kind is LinkKind.ACCESS:
            return self.port_down(lower, self.topology.link(lower, upper).plane)
        already = [lower, upper] in self.state.links_down
        if not already:
            self.state.links_down.append([lower, upper])
            self.save()
        self.set_ports(self._ends(lower, upper), up=False)
        return f"link {lower} -- {upper} {'was already' if already else 'is now'} down"

    def link_up(self, a: str, b: str) -> str:
        lower, upper, kind = self._link(a, b)
        if kind is LinkKind.ACCESS:
            return self.port_up(lower, self.topology.link(lower, upper).plane)
        already = [lower, upper] not in self.state.links_down
        if not already:
            self.state.links_down.remove([lower, upper])
            self.save()
        self.set_ports(self._ends(lower, upper), up=True)
        return f"link {lower} -- {upper} {'was already' if already else 'is now'} up"

    def _nic_plane(self, nic: str, plane: int | str) -> tuple[str, int]:
        self.nic_record(nic)
        try:
            number = int(plane)
        except ValueError:
            raise UsageError(f"plane {plane!r} is not a number") from None
        if not 0 <= number < self.topology.plane_count:
            raise UsageError(
                f"{self.topology.name} has planes 0..{self.topology.plane_count - 1}, not {number}"
            )
        return nic, number

    def port_down(self, nic: str, plane: int | str) -> str:
        nic, number = self._nic_plane(nic, plane)
        already = [nic, number] in self.state.ports_down
        if not already:
            self.state.ports_down.append([nic, number])
            self.save()
        self.nic(nic).set_port(number, False)
        t0 = self.topology.nic_port(nic, number).t0
        self.set_ports(self._ends(nic, t0), up=False)
        state = "was already" if already else "is now"
        return f"{nic} port {number} {state} down (and {t0}'s end of the link)"

    def port_up(self, nic: str, plane: int | str) -> str:
        nic, number = self._nic_plane(nic, plane)
        already = [nic, number] not in self.state.ports_down
        if not already:
            self.state.ports_down.remove([nic, number])
            self.save()
        t0 = self.topology.nic_port(nic, number).t0
        self.set_ports(self._ends(nic, t0), up=True)
        self.nic(nic).set_port(number, True)
        return f"{nic} port {number} {'was already' if already else 'is now'} up"

    def switch_down(self, name: str) -> str:
        record = self.switch_record(name)
        if name in self.state.switches_down and not is_alive(record):
            return f"{name} is already down"
        kill_record(record, signal.SIGKILL, wait=KILL_WAIT_S)
        session = self.port_sessions.pop(name, None)
        if session is not None:  # its switch is gone; switch_up starts a new one
            session.close()
        if is_alive(record):  # a killed process that lingers would pass for a running switch
            raise TestbedError(
                f"{name}: process {record.pid} still runs {KILL_WAIT_S:g} s after SIGKILL"
            )
        if name not in self.state.switches_down:
            self.state.switches_down.append(name)
        self.save()
        return f"{name} down (process {record.pid} killed)"

    def switch_up(self, name: str, timeout: float = DEFAULT_START_TIMEOUT_S) -> str:
        record = self.switch_record(name)
        if is_alive(record):
            if name in self.state.switches_down:
                self.state.switches_down.remove(name)
                self.save()
            self.program([name], retries=START_RETRIES)
            self.set_ports({name: self.cut_ports().get(name, set())}, up=False)
            return f"{name} is already running (re-programmed)"
        fresh = spawn(
            self.rundir,
            self.state,
            name=record.name,
            kind=record.kind,
            argv=record.argv,
            log=Path(record.log),
            netns_pid=record.netns_pid,
        )
        wait_for_switches([fresh], self.endpoints, timeout)
        if name in self.state.switches_down:
            self.state.switches_down.remove(name)
        self.save()
        try:
            report = self.program([name], retries=START_RETRIES)
        except ProgrammingError:
            if not is_alive(fresh):
                raise died_error(fresh, "while being programmed") from None
            raise
        if name in self._held and self.state.target == "bmv2":
            self.port_sessions[name] = Bmv2Session(self._thrift_port(name))
        self.set_ports({name: self.cut_ports().get(name, set())}, up=False)  # still cut
        entries = sum(r.planned for r in report.reports)
        return f"{name} up (pid {fresh.pid}, {entries} entries installed)"

    # -------------------------------------------------------------- the fault vocabulary
    # The process fabric is a FaultSink of topologies.events: an event applied to it
    # (``event.apply_to(fabric, index)``) happens now, through the calls above. A flap is
    # a timed series of its down and up events (FlapEvent.edges, applied at their times
    # by testbed.scenario.process); random loss and EV drops need the virtual fabric.

    def link_state(self, index: int, event: LinkDownEvent | LinkUpEvent) -> None:
        change = self.link_up if event.up else self.link_down
        change(event.link.a, event.link.b)

    def switch_state(self, index: int, event: SwitchDownEvent | SwitchUpEvent) -> None:
        (self.switch_up if event.up else self.switch_down)(event.switch)

    def port_state(self, index: int, event: PortDownEvent | PortUpEvent) -> None:
        (self.port_up if event.up else self.port_down)(event.port.nic, event.port.plane)

    def flap(self, index: int, event: FlapEvent) -> None:
        raise UsageError(
            f"{event.describe()}: a flap is applied as its down and up events "
            "(FlapEvent.edges) at their times, not at once"
        )

    def loss(self, index: int, event: LossEvent) -> None:
        raise self._virtual_only(event)

    def ev_drop(self, index: int, event: EvDropEvent) -> None:
        raise self._virtual_only(event)

    def _virtual_only(self, event: Event) -> UsageError:
        return UsageError(
            f"{event.kind} ({event.describe()}) needs the virtual fabric (--mode virtual): "
            "the process fabric can cut and restore links, switches and NIC ports"
        )

    # -------------------------------------------------------------- reading switches

    def read_switch(self, name: str, *, counters: bool = True) -> SwitchView:
        """What switch ``name`` holds now: its tables and (``counters``) its counters."""
        self.switch_record(name)

        async def read() -> SwitchView:
            client = SwitchClient(name, self.endpoints[name], connect_timeout=5.0)
            try:
                await client.connect()
                return await read_switch(client, counters=counters)
            finally:
                await client.close()

        try:
            return asyncio.run(read())
        except ControllerError as exc:
            raise ProgrammingError(f"cannot read {name}: {exc}") from None

    def counters(self, name: str) -> dict[tuple[str, int], int]:
        """Packet counts of switch ``name``: ``(counter short name, index) -> packets``."""
        view = self.read_switch(name, counters=True)
        return {(short_name(c.counter), c.index): c.packets for c in view.counters}

    # -------------------------------------------------------------- status

    def status(self, *, check: bool = False) -> FabricStatus:
        """Processes, reachability and (``check``) whether each switch matches the plan."""
        nodes: list[NodeStatus] = []
        endpoints = self.endpoints
        drift: dict[str, tuple[bool, str]] = {}
        if check:
            drift = self._drift()
        for record in self.state.processes_of("switch"):
            alive = is_alive(record)
            address = endpoints[record.node].address
            if not alive:
                detail = (
                    "stopped (switch down)"
                    if record.node in self.state.switches_down
                    else "process gone"
                )
            elif not tcp_port_open(layout.grpc_port(endpoints[record.node])):
                detail = f"P4Runtime {address} not answering"
            else:
                detail = f"P4Runtime {address}" + (
                    f", {drift[record.node][1]}" if record.node in drift else ""
                )
            nodes.append(
                NodeStatus(record.node, "switch", alive, detail, record.pid if alive else None)
            )
        for record in self.state.processes_of("nic"):
            alive = is_alive(record)
            detail = "process gone"
            extra: dict[str, Any] = {}
            if alive:
                try:
                    extra = self.nic(record.node, timeout=2.0).status()
                    planes = extra.get("planes", {})
                    detail = "planes " + " ".join(f"{p}:{s}" for p, s in sorted(planes.items()))
                except NicControlError as exc:
                    detail = str(exc)
            nodes.append(
                NodeStatus(record.node, "nic", alive, detail, record.pid if alive else None, extra)
            )
        return FabricStatus(
            self.state.name,
            self.state.mode,
            self.state.target,
            self.state.phase,
            self.topology.summary(),
            str(self.rundir.path),
            nodes,
            list(self.state.links_down),
            list(self.state.switches_down),
            list(self.state.ports_down),
            sorted(name for name, (ok, _) in drift.items() if not ok) if check else None,
        )

    def _drift(self) -> dict[str, tuple[bool, str]]:
        """Per live switch: (tables equal the plan, what status shows)."""
        live = [
            r.node
            for r in self.state.processes_of("switch")
            if is_alive(r) and r.node not in self.state.switches_down
        ]
        try:
            report = self.program(live, dry_run=True, connect_timeout=10.0)
        except ProgrammingError as exc:
            return {name: (False, f"check failed: {exc}") for name in live}
        result = {}
        for r in report.reports:
            result[r.switch] = (
                (True, f"tables match the plan ({r.planned} entries)")
                if not r.changes
                else (False, f"{len(r.changes)} of {r.planned} planned entries differ")
            )
        cut = self.cut_ports()
        for name in live:
            _ok, text = result.get(name, (True, ""))
            ports = self._port_drift(name, cut.get(name, set()))
            if ports:
                result[name] = (False, f"{text}; {ports}" if text else ports)
        return result

    def port_states(self, switch: str) -> dict[int, bool]:
        """Every cabled port of ``switch``: number -> up, as the switch itself reports it
        (gNMI oper-status; BMv2: attached and UP in ``show_ports``)."""
        if self.state.target == "bmv2":
            attached = bmv2_port_states(self._thrift_port(switch))
        else:
            attached = {
                port: leaves["oper-status"] == "UP"
                for port, leaves in self.gnmi_ports(switch).items()
            }
        return {port: attached.get(port, False) for port in self.topology.switch(switch).ports}

    def gnmi_ports(self, switch: str) -> dict[int, dict[str, Any]]:
        """A p4emu switch's ports by number, as it reports them over gNMI (state and
        counters). It names a port by its number, or by its interface in Mininet mode."""
        names: dict[str, int] = {}
        for port in self.topology.switch(switch).ports:
            names[str(port)] = port
            names[layout.switch_interface(switch, port)] = port
        return gnmi_ports(self.endpoints[switch].address, names)

    def _thrift_port(self, switch: str) -> int:
        index = [sw.name for sw in self.topology.switches].index(switch)
        return int(self.state.settings["thrift_base_port"]) + index

    def _port_drift(self, switch: str, cut: set[int]) -> str:
        """What differs between ``switch``'s port states (gNMI) and the cuts recorded."""
        try:
            states = self.port_states(switch)
        except PortControlError as exc:
            return f"port states unreadable: {exc}"
        wrong = [
            f"port {port} is {'UP' if up else 'DOWN'}"
            for port, up in sorted(states.items())
            if up == (port in cut)
        ]
        return f"{', '.join(wrong)} against the recorded failures" if wrong else ""


def _span(names: Sequence[str]) -> str:
    if len(names) <= 6:
        return ", ".join(names)
    return f"{', '.join(names[:3])}, ..., {', '.join(names[-2:])}"


def require_ready(fabric: Fabric) -> None:
    if fabric.state.phase != "ready":
        raise TestbedError(
            f"{fabric.state.name} is {fabric.state.phase}, not ready; run mrc-testbed down "
            "and up again"
        )
