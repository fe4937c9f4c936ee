"""The ``mrc-testbed`` command line.

::

    mrc-testbed up TOPO [--mode local|mininet] [--target p4emu|bmv2] [--name NAME] ...
    mrc-testbed status [--check] [--json]
    mrc-testbed link down|up A B
    mrc-testbed switch down|up S
    mrc-testbed port down|up NIC PLANE
    mrc-testbed send SRC DST [--bytes N] [--deadline SECONDS]
    mrc-testbed down [--all]
    mrc-testbed demo [--mode virtual|local|mininet] [--bytes N] [-o DIR] [--pcap] [--tdf N]
    mrc-testbed run SCENARIO [--mode virtual|local|mininet] [--seed N] [-o DIR] [--controls]
    mrc-testbed compare SCENARIO [--mode virtual|local|mininet] [--seed N] [-o DIR]
    mrc-testbed export TOPO --containerlab FILE [--target p4emu|bmv2] ...

Every command but ``up``, ``demo``, ``run`` and ``compare`` acts on the run named by
``--name`` (default: the only run under the run root, which never depends on the current
directory: ``testbed.rundir.default_root``).

Exit status (``clikit``): 0 success; 1 failure (one message on stderr, never a traceback;
a failed ``up``, ``demo`` or ``send`` also says where its logs are); 2 bad command line;
3 ``status`` found the fabric degraded (a process gone, the run not ready) or, with
``--check``, a switch whose tables differ from the plan; 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import clikit
from controller.exceptions import ControllerError, PlanError
from nic_emu.datasource import DATA_HELP, data_spec_argument
from testbed import layout
from testbed.demo import (
    DEFAULT_BYTES,
    DEMO_GRPC_BASE_PORT,
    DEMO_PLOT_NAME,
    DEMO_RESULTS_NAME,
    DEMO_UDP_BASE_PORT,
)
from testbed.exceptions import PortInUseError, TestbedError, UsageError
from testbed.modes import launcher
from testbed.modes import names as mode_names
from testbed.options import (
    DEFAULT_SEED,
    DEFAULT_START_TIMEOUT_S,
    DEFAULT_THRIFT_BASE_PORT,
    TARGETS,
    FabricOptions,
    check_transport,
)
from testbed.rundir import default_root, list_runs, select_run, teardown
from testbed.scenario import cli as scenario_cli
from testbed.scenario.exceptions import ScenarioFileError, ScenarioSpecError
from testbed.traffic import DEFAULT_TRANSFER_DEADLINE_S
from topologies import TopologyError

PROG = "mrc-testbed"
EXIT_DEGRADED = clikit.EXIT_UNHEALTHY  # status: degraded, or tables that differ from the plan
EXIT_CODES: dict[type[BaseException], int] = {
    # clikit's convention (docs/exit-codes.md): bad input is 2, found before anything starts
    UsageError: clikit.EXIT_USAGE,
    PortInUseError: clikit.EXIT_USAGE,  # as p4emu-switch and nic-emu serve: a port is taken
    TopologyError: clikit.EXIT_USAGE,
    PlanError: clikit.EXIT_USAGE,
    ScenarioFileError: clikit.EXIT_USAGE,
    ScenarioSpecError: clikit.EXIT_USAGE,
}


def _transport(text: str) -> dict[str, Any]:
    """A JSON object of nic-emu transport settings, each checked by nic-emu's own rules."""
    value = clikit.json_object(text)
    try:
        check_transport(value)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--transport: ")) from None
    return value


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--run-dir",
        type=Path,
        metavar="ROOT",
        help="where run directories live (default: $MRC_TESTBED_RUN_DIR, else "
        "/run/mrc-testbed for root, else $XDG_RUNTIME_DIR/mrc-testbed, else "
        f"~/.local/state/mrc-testbed; here: {_shown_root()})",
    )
    common.add_argument(
        "--name", help="run name (default: the topology's name for up; the only run otherwise)"
    )

    parser = argparse.ArgumentParser(
        prog="mrc-testbed",
        description="Bring up, break and tear down an emulated MRC fabric (docs/testbed.md).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    _add_up_parser(sub, common)
    _add_fabric_parsers(sub, common)
    _add_demo_parser(sub, common)
    COMMANDS.update(scenario_cli.register(sub, common))  # run, compare (docs/scenarios.md)
    _add_export_parser(sub)
    return parser


def _add_up_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    """``up TOPO``: start a fabric of a mode that has one standing (testbed.modes)."""
    up = sub.add_parser("up", parents=[common], help="start a fabric and program it")
    up.add_argument(
        "topology", metavar="TOPO", help="bundled topology name (tiny, small, ...) or YAML file"
    )
    up.add_argument(
        "--mode", choices=mode_names(standing=True), default="local", help="(default local)"
    )
    up.add_argument("--target", choices=TARGETS, default="p4emu", help="(default p4emu)")
    _add_start_options(up)
    up.add_argument(
        "--thrift-base-port",
        type=clikit.port_number,
        default=DEFAULT_THRIFT_BASE_PORT,
        help=f"BMv2 only: Thrift port of switch 0, +i for switch i "
        f"(default {DEFAULT_THRIFT_BASE_PORT})",
    )
    up.add_argument(
        "--bmv2-json",
        type=Path,
        help="BMv2 only: p4c's JSON (with --p4info) instead of running p4c",
    )
    up.add_argument("--p4info", type=Path, help="the P4Info that goes with --bmv2-json")
    up.add_argument(
        "--tdf",
        type=scenario_cli._tdf,  # run's own --tdf check (one rule: check_tdf)
        default=None,
        help="run N times slower than the virtual fabric (a power of two): link rates / N, "
        "delays and NIC times x N, from NicConfig's defaults (docs/testbed.md, Time dilation)",
    )
    up.add_argument("--json", action="store_true", help="print the result as JSON")


def _add_fabric_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """The commands that act on a running fabric: status, link, switch, port, send, down."""
    status = sub.add_parser("status", parents=[common], help="show what runs and what is down")
    status.add_argument(
        "--check",
        action="store_true",
        help="also diff every switch's tables against the plan; exit 3 if any differs",
    )
    status.add_argument("--json", action="store_true")

    for noun, args, what in (
        ("link", ("a", "b"), "cut or restore the link between two nodes"),
        ("switch", ("switch",), "power a switch off (SIGKILL) or on (restart + re-program)"),
        ("port", ("nic", "plane"), "take a NIC's port on a plane down or up"),
    ):
        command = sub.add_parser(noun, parents=[common], help=what)
        command.add_argument("action", choices=("down", "up"))
        for arg in args:
            command.add_argument(arg)

    send = sub.add_parser(
        "send", parents=[common], help="transfer data between two NICs and check it"
    )
    send.add_argument("src")
    send.add_argument("dst")
    send.add_argument("--bytes", type=clikit.byte_size, default=1 << 20, help="size (default 1M)")
    send.add_argument(
        "--mode",
        choices=("mrc", "roce"),
        default="mrc",
        dest="transport_mode",
        help="(default mrc)",
    )
    send.add_argument(
        "--connections",
        type=clikit.positive_int,
        default=1,
        help="QPs sharing the bytes (default 1)",
    )
    send.add_argument("--data", type=data_spec_argument, default="random", help=DATA_HELP)
    _add_deadline(send)
    send.add_argument("--json", action="store_true")

    down = sub.add_parser(
        "down", parents=[common], help="stop a fabric and remove everything it made"
    )
    down.add_argument(
        "--all", action="store_true", help="every run of this user (every run under the root)"
    )
    down.add_argument(
        "run_name", nargs="?", metavar="NAME", help="the run to stop, as --name NAME (as up TOPO)"
    )


def _add_demo_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    """``demo``: the tiny fabric, a transfer, a link cut, a summary and a plot, on any
    mode (one driver: testbed.demo)."""
    demo = sub.add_parser(
        "demo", parents=[common], help="tiny fabric, transfer, link cut, summary + plot"
    )
    demo.add_argument(
        "--mode",
        choices=mode_names(),
        default="virtual",
        help="virtual (default): P4 switches and NICs in virtual time (vfabric); "
        "local / mininet: the process fabric, time-dilated (as mrc-testbed run)",
    )
    demo.add_argument(
        "--bytes",
        type=clikit.byte_size,
        default=None,
        help=f"transfer size (default {DEFAULT_BYTES['virtual'] >> 20}M in virtual time, "
        f"{DEFAULT_BYTES['wall'] >> 20}M on the process fabric)",
    )
    demo.add_argument(
        "-o",
        "--out",
        type=Path,
        default=None,
        help=f"results directory ({DEMO_PLOT_NAME}, {DEMO_RESULTS_NAME}, events.jsonl; "
        "default: a new one under the run root)",
    )
    demo.add_argument(
        "--pcap", action="store_true", help="virtual mode: one pcap per link direction"
    )
    demo.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help=f"seed of the fabric and the transfer (default {DEFAULT_SEED})",
    )
    demo.add_argument(
        "--target", choices=TARGETS, default="p4emu", help="mininet mode: (default p4emu)"
    )
    demo.add_argument(
        "--tdf",
        type=scenario_cli._tdf,
        default=None,
        help="process fabric: the time-dilation factor (a power of two; default: the "
        "scenario runner's for tiny, docs/testbed.md Time dilation)",
    )
    demo.add_argument(
        "--base-port",
        type=clikit.port_number,
        default=DEMO_UDP_BASE_PORT,
        help=f"local mode: first UDP port of the links (default {DEMO_UDP_BASE_PORT})",
    )
    demo.add_argument(
        "--grpc-base-port",
        type=clikit.port_number,
        default=DEMO_GRPC_BASE_PORT,
        help=f"P4Runtime port of switch 0, +i for switch i (default {DEMO_GRPC_BASE_PORT})",
    )
    demo.add_argument("--json", action="store_true")


def _add_deadline(command: argparse.ArgumentParser, where: str = "") -> None:
    command.add_argument(
        "--deadline",
        "--timeout",
        dest="deadline",
        type=clikit.positive_float,
        default=DEFAULT_TRANSFER_DEADLINE_S,
        metavar="SECONDS",
        help=f"{where}the transfer's deadline, printed first: until then a transfer with no usable "
        "path keeps probing, then it fails naming the paths it found down (default "
        f"{DEFAULT_TRANSFER_DEADLINE_S:g})",
    )


def _shown_root() -> str:
    try:
        return str(default_root())
    except (OSError, RuntimeError):  # no home directory
        return "unknown"


def _add_export_parser(sub: Any) -> None:
    """``export TOPO --containerlab FILE``: the fabric for other platforms (testbed.containerlab)."""
    export = sub.add_parser(
        "export", help="write the fabric as a containerlab topology (docs/containerlab.md)"
    )
    export.add_argument("topology", metavar="TOPO", help="bundled topology name or YAML file")
    export.add_argument(
        "--containerlab",
        type=Path,
        required=True,
        metavar="FILE",
        help="containerlab topology to write (its configuration goes to <lab>.config/ beside it)",
    )
    export.add_argument("--target", choices=TARGETS, default="p4emu")
    export.add_argument("--image", help="node image (default mrc-testbed/TARGET:latest)")
    export.add_argument("--lab", help="containerlab lab name (default mrc-TOPO)")
    export.add_argument(
        "--grpc-base-port",
        type=clikit.port_number,
        default=layout.DEFAULT_GRPC_BASE_PORT,
        help="host port publishing switch 0's P4Runtime, +i for switch i "
        f"(default {layout.DEFAULT_GRPC_BASE_PORT})",
    )
    export.add_argument("--rate-scale", type=clikit.positive_float, default=1.0)
    export.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"default {DEFAULT_SEED}")
    export.add_argument(
        "--transport", type=_transport, default={}, help="nic-emu transport overrides, JSON object"
    )
    export.add_argument(
        "--hosts",
        type=lambda text: tuple(part.strip() for part in text.split(",")),
        default=(),
        metavar="IP,IP,...",
        help="spread the lab over these hosts: plane p on host p mod N, NICs and controller on "
        "the first; one FILE per host, VXLAN links between them",
    )
    export.add_argument("--force", action="store_true", help="overwrite FILE and its configuration")


def _add_start_options(
    parser: argparse.ArgumentParser,
    udp_default: int = layout.DEFAULT_UDP_BASE_PORT,
    grpc_default: int = layout.DEFAULT_GRPC_BASE_PORT,
) -> None:
    parser.add_argument(
        "--base-port",
        type=clikit.port_number,
        default=udp_default,
        help=f"local mode: first UDP port of the links (default {udp_default})",
    )
    parser.add_argument(
        "--grpc-base-port",
        type=clikit.port_number,
        default=grpc_default,
        help=f"P4Runtime port of switch 0, +i for switch i (default {grpc_default})",
    )
    parser.add_argument(
        "--rate-scale",
        type=clikit.positive_float,
        default=1.0,
        help="multiply every link rate (e.g. 0.001 turns 100G into 100M; default 1)",
    )
    parser.add_argument(
        "--program", type=clikit.input_file, help="P4 program (default p4src/mrc_switch.p4)"
    )
    parser.add_argument(
        "--switch-command",
        type=clikit.command_line,
        help="switch program to run instead of p4emu-switch / simple_switch_grpc",
    )
    parser.add_argument(
        "--nic-command", type=clikit.command_line, help="NIC program to run instead of nic-emu"
    )
    parser.add_argument(
        "--transport",
        type=_transport,
        default={},
        help="nic-emu transport overrides, a JSON object, e.g. '{\"evs_per_connection\": 64}' "
        "(names as in docs/nic-emu-process.md; default: none)",
    )
    parser.add_argument(
        "--no-fork-server",
        action="store_false",
        dest="fork_server",
        help="start every p4emu-switch as its own program instead of forking them from one "
        "process that imported p4emu once (slower; for debugging)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help=f"seed of switches and NICs (default {DEFAULT_SEED})",
    )
    parser.add_argument(
        "--timeout-start",
        type=clikit.positive_float,
        default=DEFAULT_START_TIMEOUT_S,
        dest="start_timeout",
        help=f"seconds to wait for processes to start (default {DEFAULT_START_TIMEOUT_S:g})",
    )


def _print(lines: Sequence[str]) -> None:
    for line in lines:
        print(line, flush=True)


def _progress(text: str) -> None:
    print(f"... {text}", file=sys.stderr, flush=True)


class _ProgressHandler(logging.Handler):
    """Says a library's INFO records as progress lines (a build the run waits for)."""

    def emit(self, record: logging.LogRecord) -> None:
        _progress(record.getMessage())


def _say_native_builds() -> None:
    """A first compiled run compiles its P4 program's module (tens of seconds): say so."""
    logger = logging.getLogger("p4emu.backend.native")
    if not any(isinstance(h, _ProgressHandler) for h in logger.handlers):
        logger.addHandler(_ProgressHandler(logging.INFO))
        logger.setLevel(logging.INFO)


def fabric_options(args: argparse.Namespace, **overrides: Any) -> FabricOptions:
    """The one options type, from ``up``'s or ``demo``'s command line."""
    fields: dict[str, Any] = {
        "name": args.name,
        "root": args.run_dir,
        "mode": getattr(args, "mode", "local"),
        "target": getattr(args, "target", "p4emu"),
        "udp_base_port": args.base_port,
        "grpc_base_port": args.grpc_base_port,
        "thrift_base_port": getattr(args, "thrift_base_port", DEFAULT_THRIFT_BASE_PORT),
        "rate_scale": args.rate_scale,
        "program": args.program,
        "bmv2_json": getattr(args, "bmv2_json", None),
        "p4info": getattr(args, "p4info", None),
        "switch_command": args.switch_command,
        "nic_command": args.nic_command,
        "transport": args.transport,
        "seed": args.seed,
        "start_timeout": args.start_timeout,
        "fork_server": args.fork_server,
    }
    fields.update(overrides)
    return FabricOptions(**fields)


def dilated_up(args: argparse.Namespace) -> tuple[Any, FabricOptions]:
    """``up --tdf N``: the topology and the NICs' transport run N times slower, as the
    scenario runner's process fabric (docs/testbed.md, "Time dilation")."""
    from nic_emu.exceptions import ServeConfigError
    from nic_emu.serve_config import dilated_transport
    from testbed.local import resolve_topology

    if args.rate_scale != 1.0:
        raise UsageError("--tdf sets every link rate (rate / TDF): give --rate-scale or --tdf")
    try:
        transport = dilated_transport(dict(args.transport), args.tdf)
    except ServeConfigError as exc:
        raise UsageError(f"--transport: {exc}") from None
    topology = layout.dilated_topology(resolve_topology(args.topology), args.tdf)
    return topology, fabric_options(args, transport=transport, tdf=args.tdf)


def cmd_up(args: argparse.Namespace) -> int:
    from testbed.local import up

    progress = None if args.json else _progress
    topology: Any = args.topology
    if args.tdf is None:
        options = fabric_options(args)
    else:
        topology, options = dilated_up(args)
    result = up(topology, options, launcher(options.mode), progress)
    if args.json:
        print(
            json.dumps(
                {
                    "name": result.fabric.state.name,
                    "run_dir": str(result.fabric.rundir.path),
                    "seconds": result.seconds,
                    "phases": result.phases,
                    "entries": result.entries,
                    "written": result.written,
                    "notes": result.notes,
                },
                indent=1,
            )
        )
    else:
        _print(result.lines())
    return 0


def _fabric(args: argparse.Namespace) -> Any:
    from testbed.fabric import Fabric, require_ready

    fabric = Fabric.open(args.name, args.run_dir)
    require_ready(fabric)
    return fabric


def cmd_status(args: argparse.Namespace) -> int:
    from testbed.fabric import Fabric

    fabric = Fabric.open(args.name, args.run_dir)
    status = fabric.status(check=args.check)
    if args.json:
        print(json.dumps(status.to_json(), indent=1))
    else:
        _print(status.lines())
    return 0 if status.healthy and status.in_sync else EXIT_DEGRADED


def cmd_link(args: argparse.Namespace) -> int:
    fabric = _fabric(args)
    with fabric.rundir.locked():
        print(
            fabric.link_down(args.a, args.b)
            if args.action == "down"
            else fabric.link_up(args.a, args.b)
        )
    return 0


def cmd_switch(args: argparse.Namespace) -> int:
    fabric = _fabric(args)
    with fabric.rundir.locked():
        print(
            fabric.switch_down(args.switch)
            if args.action == "down"
            else fabric.switch_up(args.switch)
        )
    return 0


def cmd_port(args: argparse.Namespace) -> int:
    fabric = _fabric(args)
    with fabric.rundir.locked():
        print(
            fabric.port_down(args.nic, args.plane)
            if args.action == "down"
            else fabric.port_up(args.nic, args.plane)
        )
    return 0


def cmd_send(args: argparse.Namespace) -> int:
    from testbed.traffic import deadline_line, run_transfer

    fabric = _fabric(args)
    print(deadline_line(args.deadline), file=sys.stderr, flush=True)
    outcome = run_transfer(
        fabric,
        args.src,
        args.dst,
        args.bytes,
        mode=args.transport_mode,
        connections=args.connections,
        data=args.data,
        deadline_s=args.deadline,
    )
    if args.json:
        print(json.dumps({"intact": outcome.intact, "seconds": outcome.seconds, **outcome.info}))
    else:
        print(outcome.line())
    return 0 if outcome.intact else 1


def cmd_down(args: argparse.Namespace) -> int:
    if args.run_name is not None:
        if args.name is not None and args.name != args.run_name:
            raise UsageError(f"down {args.run_name} --name {args.name}: give the run's name once")
        args.name = args.run_name
    if args.all:
        runs = list_runs(args.run_dir)
        if not runs:
            print(f"nothing to stop (no run under {args.run_dir or default_root()})")
        for rundir in runs:
            with rundir.locked():
                print(teardown(rundir).summary())
        return 0
    try:
        rundir = select_run(args.name, args.run_dir)
    except TestbedError as exc:
        if args.name is None and "no fabric is running" in str(exc):
            print("nothing to stop")
            return 0
        raise
    if not rundir.exists():
        print(teardown(rundir).summary())
        return 0
    with rundir.locked():
        print(teardown(rundir).summary())
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from testbed.demo import DemoOptions, run_demo

    options = DemoOptions(
        mode=args.mode,
        size=args.bytes,
        seed=args.seed,
        out_dir=args.out,
        pcap=args.pcap,
        run_dir=args.run_dir,
        udp_base_port=args.base_port,
        grpc_base_port=args.grpc_base_port,
        target=args.target,
        tdf=args.tdf,
    )
    if not args.json:
        _say_native_builds()
    result = run_demo(options, None if args.json else _progress)
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        _print(result.lines())
    return 0 if result.intact else 1


def cmd_export(args: argparse.Namespace) -> int:
    from testbed.containerlab import ClabOptions, export_containerlab

    options = ClabOptions(
        target=args.target,
        image=args.image,
        lab=args.lab,
        grpc_base_port=args.grpc_base_port,
        rate_scale=args.rate_scale,
        seed=args.seed,
        transport=args.transport,
        force=args.force,
        hosts=args.hosts,
    )
    _print(export_containerlab(args.topology, args.containerlab, options).lines())
    return 0


COMMANDS: dict[str, Any] = {
    "up": cmd_up,
    "status": cmd_status,
    "link": cmd_link,
    "switch": cmd_switch,
    "port": cmd_port,
    "send": cmd_send,
    "down": cmd_down,
    "demo": cmd_demo,
    "export": cmd_export,
}


def main(argv: Sequence[str] | None = None) -> int:
    parsed: list[argparse.Namespace] = []
    code = clikit.run_main(PROG, lambda: parsed.append(build_parser().parse_args(argv)))
    if code or not parsed:
        return code
    args = parsed[0]
    return clikit.run_main(
        f"{PROG} {args.command}",  # errors say which command failed
        lambda: COMMANDS[args.command](args),
        expected=(TestbedError, TopologyError, ControllerError),
        codes=EXIT_CODES,
    )


if __name__ == "__main__":
    sys.exit(main())
