"""Local mode: the whole fabric as ordinary processes on this machine, no root needed.

Each switch is a ``p4emu-switch`` process whose ports are loopback-UDP links
(``-i PORT@udp:LOCAL->PEER``, docs/p4emu-switch.md), each NIC a ``nic-emu serve`` process
whose plane ports are the other ends of the same links (docs/nic-emu-process.md). UDP ports
come from :func:`testbed.layout.udp_link_ports`, gRPC ports from the controller's
convention. The controller then installs the pipeline and every route, and ``up`` returns
once every NIC answers on its control socket.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

import yaml

from controller.artifacts import DEFAULT_PROGRAM, Pipeline, p4emu_pipeline
from controller.endpoints import P4RuntimeTarget
from controller.exceptions import ControllerError
from testbed import layout
from testbed.exceptions import (
    AlreadyRunningError,
    PortInUseError,
    ProgrammingError,
    TestbedError,
    UsageError,
)
from testbed.fabric import (
    Fabric,
    SwitchLaunch,
    SwitchStarter,
    check_socket_path,
    nic_command,
    save_pipeline,
    switch_args,
    switch_command,
    use_fork_server,
)
from testbed.options import FabricOptions
from testbed.rundir import (
    ProcessRecord,
    RunDir,
    RunState,
    is_alive,
    retire_failed,
    run_dir,
    spawn,
    teardown,
)
from topologies import Topology, TopologyError, to_mapping
from topologies import load as load_topology

Progress = Callable[[str], None]


@dataclass
class UpResult:
    """What ``up`` did: the fabric, its start-up time in seconds and per phase, the entries
    installed and written, and notes to show."""

    fabric: Fabric
    seconds: float  # from the call to every route installed and every NIC answering
    phases: dict[str, float]  # cumulative seconds at the end of each phase
    entries: int  # entries planned and installed, as ``mrc-controller plan`` counts them
    written: dict[str, int]  # what the controller wrote: inserted / modified / deleted
    notes: list[str]

    def lines(self) -> list[str]:
        topo = self.fabric.topology
        out = [
            f"{self.fabric.state.name}: ready in {self.seconds:.2f} s — {topo.switch_count} "
            f"switches, {topo.nic_count} NICs, {topo.link_count} links, "
            f"{self.entries} entries installed (as 'mrc-controller plan' counts them; written "
            f"+{self.written['inserted']} ~{self.written['modified']} "
            f"-{self.written['deleted']}: default actions are modified, not inserted)",
            f"run directory: {self.fabric.rundir.path}",
        ]
        out.extend(f"note: {note}" for note in self.notes)
        return out


def resolve_topology(topology: str | Path | Topology) -> Topology:
    if isinstance(topology, Topology):
        return topology
    try:
        return load_topology(topology)
    except TopologyError as exc:
        raise UsageError(str(exc)) from None  # a bad input file: exit 2 (docs/exit-codes.md)


def check_ports_free(udp_ports: Sequence[int], tcp_ports: Sequence[int]) -> None:
    """PortInUseError naming the first port another process holds."""
    for port in udp_ports:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                probe.bind((layout.LOOPBACK, port))
            except OSError as exc:
                raise PortInUseError(
                    f"UDP port {port} (a link of the fabric) is in use: {exc.strerror}; choose "
                    "another --base-port"
                ) from None
    for port in tcp_ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is fine
            try:
                probe.bind((layout.LOOPBACK, port))
            except OSError as exc:
                raise PortInUseError(
                    f"TCP port {port} (a switch's P4Runtime server) is in use: {exc.strerror}; "
                    "choose another --grpc-base-port"
                ) from None


def prepare_rundir(rundir: RunDir) -> None:
    """Refuses a run that is still alive; clears the remains of a stopped or crashed one."""
    if not rundir.exists():
        return
    if rundir.has_state():
        try:
            state = rundir.load()
        except TestbedError:
            state = None
        if state is not None and any(is_alive(r) for r in state.processes.values()):
            raise AlreadyRunningError(
                f"{rundir.name} is already running ({rundir.path}); run "
                f"'mrc-testbed down --name {rundir.name}' first or choose another --name"
            )
    teardown(rundir)


def write_topology(rundir: RunDir, topology: Topology) -> Path:
    path = rundir.file("topology.yaml")
    path.write_text(yaml.safe_dump(to_mapping(topology), sort_keys=False), encoding="utf-8")
    return path


def nic_config(
    rundir: RunDir,
    topology_file: Path,
    nic: str,
    ports: Mapping[str, Mapping[str, Any]],
    seed: int,
    transport: Mapping[str, Any],
) -> dict[str, Any]:
    """A nic-emu config (docs/nic-emu-process.md)."""
    control = rundir.file("nics", f"{nic}.sock")
    check_socket_path(control)
    return {
        "nic": nic,
        "topology": str(topology_file),
        "ports": {plane: dict(port) for plane, port in ports.items()},
        "control": str(control),
        "events": str(rundir.file("nics", f"{nic}.events.jsonl")),
        "seed": seed,
        "transport": dict(transport),
    }


def nic_ports(
    topology: Topology, nic: str, udp: Mapping[tuple[str, int], layout.UdpEnd]
) -> dict[str, dict[str, Any]]:
    """The ``ports`` of a NIC's config: one loopback-UDP port per plane, delaying what the
    NIC sends by its link's ``delay_us``."""
    delays = layout.port_delays_us(topology, nic)
    return {
        str(plane): udp[(nic, plane)].nic_port_config(delays[plane])
        for plane in range(topology.plane_count)
    }


def switch_ports(
    topology: Topology, switch: str, udp: Mapping[tuple[str, int], layout.UdpEnd]
) -> dict[int, str]:
    """What local mode gives :func:`testbed.fabric.switch_args` for ``switch``: every port
    is a loopback-UDP link end."""
    return {port: udp[(switch, port)].switch_port() for port in topology.switch(switch).ports}


def rate_summary(topology: Topology, rate_scale: float) -> str:
    """``100 Gb/s x 1 = 2,957,882 packets/s, 25 Gb/s x 1 = ...``, one per distinct link rate."""
    parts = []
    for rate in sorted({link.rate_gbps for link in topology.links()}, reverse=True):
        pps = layout.link_rate_pps(rate, rate_scale)
        shown = f"{pps:,.0f}" if pps >= 10 else f"{pps:.3g}"  # a scaled-down rate stays visible
        parts.append(f"{rate:g} Gb/s x {rate_scale:g} = {shown} packets/s")
    return ", ".join(parts)


def local_notes(topology: Topology, rate_scale: float) -> list[str]:
    delays = sorted({link.delay_us for link in topology.links()})
    notes = [
        f"link rate is each switch port's egress queue rate, that port's own link's rate "
        f"(p4emu-switch --port-queue-rate PORT=PPS, per-link overrides included; "
        f"{rate_summary(topology, rate_scale)} of {layout.NOMINAL_FRAME_BYTES} B; the CPU port "
        "is not limited); the Python switches forward far fewer packets per second than a "
        "full-speed link carries"
    ]
    if any(delay > 0 for delay in delays):
        notes.append(
            f"link delay {', '.join(f'{d:g}' for d in delays)} us is added by each link's "
            "sender (p4emu-switch --link-delay-us, nic-emu delay_us), on top of what loopback "
            "UDP and the Python processes cost per hop"
        )
    return notes


@dataclass
class Launch:
    """What ``up`` knows while it starts a run, whatever the mode: the mode's
    :meth:`Mode.start` uses it to start processes."""

    topology: Topology
    options: FabricOptions
    fabric: Fabric
    endpoints: dict[str, P4RuntimeTarget]
    started: float  # perf_counter at the call to up
    phases: dict[str, float]
    say: Progress
    pipeline: Pipeline | None = None  # given by the caller, else compiled by the mode

    def phase(self, name: str) -> None:
        self.phases[name] = time.perf_counter() - self.started

    def start_nic(
        self,
        nic: str,
        ports: Mapping[str, Mapping[str, Any]],
        prefix: Sequence[str] = (),
        netns_pid: int | None = None,
    ) -> ProcessRecord:
        """Writes a NIC's config and starts ``nic-emu serve`` for it (after ``prefix``, e.g.
        ``mnexec -a PID`` to run it in a Mininet host)."""
        rundir, state = self.fabric.rundir, self.fabric.state
        index = self.topology.nic(nic).index
        config = nic_config(
            rundir,
            Path(state.topology_file),
            nic,
            ports,
            self.options.seed + index,
            self.options.transport,
        )
        config_path = rundir.file("nics", f"{nic}.json")
        config_path.write_text(json.dumps(config, indent=1), encoding="utf-8")
        return spawn(
            rundir,
            state,
            name=f"nic:{nic}",
            kind="nic",
            argv=[
                *prefix,
                *nic_command(self.options.nic_command),
                "serve",
                "--config",
                str(config_path),
            ],
            log=rundir.file("nics", f"{nic}.log"),
            netns_pid=netns_pid,
        )

    def use_pipeline(self, compile_pipeline: Callable[[], Pipeline]) -> None:
        """The caller's pipeline, else ``compile_pipeline()``; kept in the run directory."""
        if self.pipeline is None:
            try:
                self.pipeline = compile_pipeline()
            except ControllerError as exc:
                raise ProgrammingError(str(exc)) from None
        save_pipeline(self.fabric.rundir, self.pipeline)
        self.fabric.set_pipeline(self.pipeline)
        self.phase("pipeline")

    def switch_starter(self) -> SwitchStarter:
        options = self.options
        return SwitchStarter(
            self.fabric.rundir,
            self.fabric.state,
            switch_command(options.target, options.switch_command),
            fork_server=options.fork_server
            and use_fork_server(options.target, options.switch_command),
            warm=options.program or DEFAULT_PROGRAM,
        )


class Mode(Protocol):
    """What differs between modes; everything else is :func:`up`'s.

    A mode supplies the ports and interfaces of its links (and so the ports in each
    switch's command line, :func:`testbed.fabric.switch_args`), how link rates are
    emulated, and the notes ``up`` prints."""

    NAME: ClassVar[str]  # FabricOptions.mode

    def __init__(self, topology: Topology, options: FabricOptions) -> None: ...

    @staticmethod
    def check(options: FabricOptions) -> None:
        """Before anything: ModeError unless this machine can run the mode with
        ``options`` (root, tools, the switch program)."""
        ...

    def settings(self) -> dict[str, Any]:
        """Mode-specific settings recorded in the state file."""
        ...

    def preflight(self) -> None:
        """Under the run's lock, before anything is made: refuses what is in the way
        (ports, interfaces)."""
        ...

    def start(self, launch: Launch) -> tuple[list[ProcessRecord], list[ProcessRecord]]:
        """Starts the switches and NICs (and sets the pipeline); their records."""
        ...

    def notes(self) -> list[str]: ...


def up(
    topology_ref: str | Path | Topology,
    options: FabricOptions,
    mode_class: type[Mode],
    progress: Progress | None = None,
    pipeline: Pipeline | None = None,
) -> UpResult:
    """The one build path of every mode: lock and clear the run directory, record the run,
    let the mode start the processes, program the switches and wait for the NICs. A failure
    anywhere stops what was started and keeps the run directory aside (rundir.retire)."""
    started = time.perf_counter()
    if options.mode != mode_class.NAME:
        raise UsageError(f"{mode_class.__name__} was given options for {options.mode} mode")
    mode_class.check(options)
    topology = resolve_topology(topology_ref)
    mode = mode_class(topology, options)
    say = progress if progress is not None else (lambda _text: None)
    rundir = run_dir(options.name or topology.name, options.root)
    endpoints = layout.grpc_endpoints(topology, options.grpc_base_port)
    with rundir.locked():
        prepare_rundir(rundir)
        try:
            mode.preflight()
        except BaseException:
            rundir.discard_empty()  # refused before anything was made: leave nothing
            raise
        run_id = rundir.create()
        state = RunState(
            name=rundir.name,
            run_id=run_id,
            mode=options.mode,
            target=options.target,
            topology_file=str(write_topology(rundir, topology)),
            created=time.time(),
            launcher_pid=os.getpid(),
            settings={
                "grpc_base_port": options.grpc_base_port,
                "rate_scale": options.rate_scale,
                "tdf": options.tdf,
                "topology_source": topology.name
                if isinstance(topology_ref, Topology)
                else str(topology_ref),
                **mode.settings(),
            },
        )
        rundir.save(state)
        fabric = Fabric(rundir, state)
        launch = Launch(topology, options, fabric, endpoints, started, {}, say, pipeline)
        try:
            switch_records, nic_records = mode.start(launch)
            report = fabric.bring_up(
                switch_records,
                nic_records,
                endpoints,
                timeout=options.start_timeout,
                phases=launch.phases,
                started=started,
                say=say,
            )
            state.phase = "ready"
            rundir.save(state)
        except BaseException as exc:
            raise retire_failed(rundir, state, exc) from exc.__cause__
    totals = report.totals()
    return UpResult(
        fabric,
        time.perf_counter() - started,
        launch.phases,
        totals["planned"],
        {key: totals[key] for key in ("inserted", "modified", "deleted")},
        [*mode.notes(), *dilation_notes(options.tdf)],
    )


def dilation_notes(tdf: int | None) -> list[str]:
    """What ``up --tdf`` changed, for the user."""
    if tdf is None:
        return []
    return [
        f"time dilated x{tdf}: link rates / {tdf}, link delays and every NIC time x {tdf} "
        "(NicConfig's defaults with --transport over them, as the virtual fabric runs); "
        f"divide a time measured on this fabric by {tdf} to compare it with the virtual one"
    ]


class LocalMode:
    """Local mode: loopback-UDP links; each switch port drains at its link's rate."""

    NAME = "local"

    @staticmethod
    def check(options: FabricOptions) -> None:
        switch_command("p4emu", options.switch_command)  # ModeError now if it is missing
        nic_command(options.nic_command)

    def __init__(self, topology: Topology, options: FabricOptions) -> None:
        self.topology = topology
        self.options = options
        self.udp = layout.udp_link_ports(topology, options.udp_base_port)

    def settings(self) -> dict[str, Any]:
        return {"udp_base_port": self.options.udp_base_port}

    def preflight(self) -> None:
        endpoints = layout.grpc_endpoints(self.topology, self.options.grpc_base_port)
        check_ports_free(
            sorted(end.local for end in self.udp.values()),
            [layout.grpc_port(e) for e in endpoints.values()],
        )

    def start(self, launch: Launch) -> tuple[list[ProcessRecord], list[ProcessRecord]]:
        topology, options = self.topology, self.options
        launch.say(f"starting {topology.switch_count} switches and {topology.nic_count} NICs")
        # The fork server imports p4emu while the NICs start and the pipeline compiles.
        starter = launch.switch_starter()
        try:
            nic_records = [
                launch.start_nic(nic.name, nic_ports(topology, nic.name, self.udp))
                for nic in topology.nics
            ]
            launch.use_pipeline(lambda: p4emu_pipeline(options.program))
            switch_records = [
                starter.start(
                    SwitchLaunch(
                        sw.name,
                        switch_args(
                            "p4emu",
                            topology,
                            sw.name,
                            switch_ports(topology, sw.name, self.udp),
                            options.rate_scale,
                            grpc_address=launch.endpoints[sw.name].address,
                            seed=options.seed + i,
                        ),
                        launch.fabric.rundir.file("switches", f"{sw.name}.log"),
                    )
                )
                for i, sw in enumerate(topology.switches)
            ]
        finally:
            starter.close()
        launch.phase("spawned")
        return switch_records, nic_records

    def notes(self) -> list[str]:
        return local_notes(self.topology, self.options.rate_scale)


def up_local(
    topology_ref: str | Path | Topology,
    options: FabricOptions | None = None,
    progress: Progress | None = None,
    pipeline: Pipeline | None = None,
) -> UpResult:
    """Starts ``topology`` locally and returns once it is programmed and every NIC answers."""
    return up(topology_ref, options or FabricOptions(), LocalMode, progress, pipeline)
