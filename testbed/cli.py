"""The ``mrc-testbed`` command line.

::

    mrc-testbed up TOPO [--mode local|mininet] [--target p4emu|bmv2] [--name NAME] ...
    mrc-testbed status [--check] [--json]
    mrc-testbed link down|up A B
    mrc-testbed switch down|up S
    mrc-testbed port down|up NIC PLANE
    mrc-testbed send SRC DST [--bytes N]
    mrc-testbed down [--all]
    mrc-testbed demo [--bytes N] [--plot FILE] [--keep]
    mrc-testbed export TOPO --containerlab FILE [--target p4emu|bmv2] ...

Every command but ``up`` and ``demo`` acts on the run named by ``--name`` (default: the only
run under the run root). Errors are one line (or a short block) on stderr and exit status 1;
a bad command line exits with 2. No traceback is ever shown.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.exceptions import ControllerError
from testbed import layout
from testbed.exceptions import TestbedError
from testbed.rundir import default_root, list_runs, select_run, teardown
from topologies import TopologyError

MODES = ("local", "mininet")
TARGETS = ("p4emu", "bmv2")


def _size(text: str) -> int:
    """``1048576``, ``64K``, ``16M``, ``1G`` (powers of 1024)."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    cleaned = text.strip().upper().removesuffix("B").removesuffix("I")
    factor = 1
    if cleaned and cleaned[-1] in units:
        factor = units[cleaned[-1]]
        cleaned = cleaned[:-1]
    try:
        value = int(float(cleaned) * factor)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size (e.g. 1048576, 64K, 16M)"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"size must be at least 1 byte, got {text!r}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1024 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is outside 1024..65535")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def _command(text: str) -> list[str]:
    parts = shlex.split(text)
    if not parts:
        raise argparse.ArgumentTypeError("an empty command")
    return parts


def _transport(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"--transport is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("--transport must be a JSON object")
    return value


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--run-dir",
        type=Path,
        metavar="ROOT",
        help="where run directories live (default: $MRC_TESTBED_RUN_DIR, "
        "$XDG_RUNTIME_DIR/mrc-testbed, or ./runs)",
    )
    common.add_argument(
        "--name", help="run name (default: the topology's name for up; the only run otherwise)"
    )

    parser = argparse.ArgumentParser(
        prog="mrc-testbed",
        description="Bring up, break and tear down an emulated MRC fabric (docs/testbed.md).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    up = sub.add_parser("up", parents=[common], help="start a fabric and program it")
    up.add_argument(
        "topology", metavar="TOPO", help="bundled topology name (tiny, small, ...) or YAML file"
    )
    up.add_argument("--mode", choices=MODES, default="local")
    up.add_argument("--target", choices=TARGETS, default="p4emu")
    _add_start_options(up)
    up.add_argument(
        "--thrift-base-port",
        type=_port,
        default=9090,
        help="BMv2 only: Thrift port of switch 0 (+i)",
    )
    up.add_argument(
        "--bmv2-json",
        type=Path,
        help="BMv2 only: p4c's JSON (with --p4info) instead of running p4c",
    )
    up.add_argument("--p4info", type=Path, help="the P4Info that goes with --bmv2-json")
    up.add_argument("--json", action="store_true", help="print the result as JSON")

    status = sub.add_parser("status", parents=[common], help="show what runs and what is down")
    status.add_argument(
        "--check", action="store_true", help="also diff every switch's tables against the plan"
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
    send.add_argument("--bytes", type=_size, default=1 << 20, help="size (default 1M)")
    send.add_argument("--mode", choices=("mrc", "roce"), default="mrc", dest="transport_mode")
    send.add_argument(
        "--connections", type=int, default=1, help="QPs sharing the bytes (default 1)"
    )
    send.add_argument("--timeout", type=_positive_float, default=120.0)
    send.add_argument("--json", action="store_true")

    down = sub.add_parser(
        "down", parents=[common], help="stop a fabric and remove everything it made"
    )
    down.add_argument("--all", action="store_true", help="every run under the run root")

    demo = sub.add_parser(
        "demo", parents=[common], help="tiny fabric, transfer, link cut, summary + plot"
    )
    demo.add_argument("--bytes", type=_size, default=None, help="transfer size (default 64M)")
    demo.add_argument(
        "--plot",
        type=Path,
        default=Path("mrc-demo.png"),
        help="PNG to write (default mrc-demo.png)",
    )
    demo.add_argument("--keep", action="store_true", help="leave the fabric running afterwards")
    demo.add_argument("--timeout", type=_positive_float, default=300.0)
    _add_start_options(demo, udp_default=None, grpc_default=None)
    demo.add_argument("--json", action="store_true")
    _add_export_parser(sub)
    return parser


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
        type=_port,
        default=layout.DEFAULT_GRPC_BASE_PORT,
        help="host port publishing switch 0's P4Runtime, +i for switch i "
        f"(default {layout.DEFAULT_GRPC_BASE_PORT})",
    )
    export.add_argument("--rate-scale", type=_positive_float, default=1.0)
    export.add_argument("--seed", type=int, default=1)
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
    udp_default: int | None = layout.DEFAULT_UDP_BASE_PORT,
    grpc_default: int | None = layout.DEFAULT_GRPC_BASE_PORT,
) -> None:
    parser.add_argument(
        "--base-port",
        type=_port,
        default=udp_default,
        help=f"local mode: first UDP port of the links (default {layout.DEFAULT_UDP_BASE_PORT})",
    )
    parser.add_argument(
        "--grpc-base-port",
        type=_port,
        default=grpc_default,
        help=f"P4Runtime port of switch 0, +i for switch i (default {layout.DEFAULT_GRPC_BASE_PORT})",
    )
    parser.add_argument(
        "--rate-scale",
        type=_positive_float,
        default=1.0,
        help="multiply every link rate (e.g. 0.001 turns 100G into 100M)",
    )
    parser.add_argument("--program", type=Path, help="P4 program (default p4src/mrc_switch.p4)")
    parser.add_argument(
        "--switch-command",
        type=_command,
        help="switch program to run instead of p4emu-switch / simple_switch_grpc",
    )
    parser.add_argument(
        "--nic-command", type=_command, help="NIC program to run instead of nic-emu"
    )
    parser.add_argument(
        "--transport", type=_transport, default={}, help="nic-emu transport overrides, JSON object"
    )
    parser.add_argument(
        "--no-fork-server",
        action="store_false",
        dest="fork_server",
        help="start every p4emu-switch as its own program instead of forking them from one "
        "process that imported p4emu once (slower; for debugging)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--timeout-start",
        type=_positive_float,
        default=120.0,
        dest="start_timeout",
        help="seconds to wait for processes to start",
    )


def _print(lines: Sequence[str]) -> None:
    for line in lines:
        print(line, flush=True)


def _progress(text: str) -> None:
    print(f"... {text}", file=sys.stderr, flush=True)


def cmd_up(args: argparse.Namespace) -> int:
    from testbed.local import LocalOptions, up_local
    from testbed.mininet_mode import MininetOptions, up_mininet

    progress = None if args.json else _progress
    if args.mode == "local":
        if args.target == "bmv2":
            raise TestbedError(
                "--target bmv2 needs --mode mininet: simple_switch_grpc ports are Linux "
                "interfaces, local mode links are loopback UDP"
            )
        if args.bmv2_json or args.p4info:
            raise TestbedError("--bmv2-json / --p4info are for --target bmv2")
        options = LocalOptions(
            name=args.name,
            root=args.run_dir,
            udp_base_port=args.base_port,
            grpc_base_port=args.grpc_base_port,
            rate_scale=args.rate_scale,
            program=args.program,
            switch_command=args.switch_command,
            nic_command=args.nic_command,
            transport=args.transport,
            seed=args.seed,
            start_timeout=args.start_timeout,
            fork_server=args.fork_server,
        )
        result = up_local(args.topology, options, progress)
    else:
        mininet_options = MininetOptions(
            name=args.name,
            root=args.run_dir,
            target=args.target,
            grpc_base_port=args.grpc_base_port,
            thrift_base_port=args.thrift_base_port,
            rate_scale=args.rate_scale,
            program=args.program,
            bmv2_json=args.bmv2_json,
            p4info=args.p4info,
            switch_command=args.switch_command,
            nic_command=args.nic_command,
            transport=args.transport,
            seed=args.seed,
            start_timeout=args.start_timeout,
            fork_server=args.fork_server,
        )
        result = up_mininet(args.topology, mininet_options, progress)
    if args.json:
        print(
            json.dumps(
                {
                    "name": result.fabric.state.name,
                    "run_dir": str(result.fabric.rundir.path),
                    "seconds": result.seconds,
                    "phases": result.phases,
                    "entries": result.entries,
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
    return 0 if status.healthy else 3


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
    from testbed.traffic import run_transfer

    fabric = _fabric(args)
    outcome = run_transfer(
        fabric,
        args.src,
        args.dst,
        args.bytes,
        mode=args.transport_mode,
        connections=args.connections,
        timeout=args.timeout,
    )
    if args.json:
        print(json.dumps({"intact": outcome.intact, "seconds": outcome.seconds, **outcome.info}))
    else:
        print(outcome.line())
    return 0 if outcome.intact else 1


def cmd_down(args: argparse.Namespace) -> int:
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
    from testbed.demo import (
        DEFAULT_DEMO_BYTES,
        DEMO_GRPC_BASE_PORT,
        DEMO_RUN_NAME,
        DEMO_UDP_BASE_PORT,
        DemoOptions,
        run_demo,
    )
    from testbed.local import LocalOptions

    local = LocalOptions(
        name=args.name or DEMO_RUN_NAME,
        root=args.run_dir,
        udp_base_port=args.base_port or DEMO_UDP_BASE_PORT,
        grpc_base_port=args.grpc_base_port or DEMO_GRPC_BASE_PORT,
        rate_scale=args.rate_scale,
        program=args.program,
        switch_command=args.switch_command,
        nic_command=args.nic_command,
        transport=args.transport,
        seed=args.seed,
        start_timeout=args.start_timeout,
        fork_server=args.fork_server,
    )
    options = DemoOptions(
        size=args.bytes or DEFAULT_DEMO_BYTES,
        plot=args.plot,
        timeout=args.timeout,
        keep=args.keep,
        local=local,
    )
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


COMMANDS = {
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
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (TestbedError, TopologyError, ControllerError) as exc:
        print(f"mrc-testbed {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"mrc-testbed {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
