"""``mrc-controller``: plan, push, diff, watch and show the static tables of an MRC fabric.

::

    mrc-controller plan TOPO [--json|--txt]
    mrc-controller push TOPO [--target p4emu|bmv2] [--switch NAME]...
    mrc-controller diff TOPO
    mrc-controller watch TOPO
    mrc-controller show SWITCH [--counters]

Exit status (clikit, plus this command's own): 0 success (diff: in sync), 1 diff found
differences, 2 bad usage or input (topology, artefacts, P4Info, endpoints), 3 at least one
switch failed, 130 interrupted (Ctrl-C); no traceback, also not on a closed pipe.
docs/controller.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from ipaddress import IPv6Network
from pathlib import Path
from typing import TextIO

import topologies
from clikit import (
    EXIT_OK,
    EXIT_USAGE,
    non_negative_float,
    positive_float,
    positive_int,
    run_main,
)
from controller.artifacts import TARGETS, Pipeline, pipeline_for
from controller.endpoints import (
    DEFAULT_BASE_PORT,
    DEFAULT_HOST,
    P4RuntimeTarget,
    check_address,
    default_endpoints,
    load_endpoints,
)
from controller.entities import EntityCodec
from controller.exceptions import ControllerError, SwitchAccessError
from controller.p4rt_client import DEFAULT_CONNECT_TIMEOUT_S, DEFAULT_ELECTION_ID, SwitchClient
from controller.plan import RoutePlan, plan_fabric
from controller.policy import DEFAULT_CONTROL_PRIORITY, DEFAULT_PUNTS, PUNT_KINDS, SwitchPolicy
from controller.push import DEFAULT_CONCURRENCY, ConnectOptions, FabricReport, push_fabric
from controller.reconcile import DEFAULT_BATCH_SIZE, PIPELINE_MODES, SwitchReport, SyncOptions
from controller.render import (
    diff_lines,
    report_line,
    report_to_json,
    write_plan_json,
    write_plan_text,
)
from controller.show import read_switch, view_lines
from controller.watch import (
    DEFAULT_CHECK_INTERVAL_S,
    DEFAULT_RETRY_INTERVAL_S,
    FabricWatcher,
    WatchEvent,
    WatchOptions,
)
from topologies import Topology, TopologyError

EXIT_DIFFERENCES = 1  # diff: the switches differ from the plan
EXIT_SWITCH_FAILED = 3  # at least one switch failed
PROGRESS_EVERY_S = 2.0
PER_SWITCH_LINES_UP_TO = 32  # bigger pushes print a progress line instead


class UsageError(ControllerError):
    """Bad command-line usage (argparse errors included)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.removeprefix("mrc-controller").strip()  # main() adds the name
        raise UsageError(f"{command}: {message}" if command else message)


# ---------------------------------------------------------------------- arguments


def _add_plan_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topology", metavar="TOPO", help="bundled topology name or YAML path")
    parser.add_argument(
        "--switch",
        action="append",
        dest="switches",
        metavar="NAME",
        help="only this switch (repeatable; default: every switch)",
    )
    parser.add_argument(
        "--link-down",
        action="append",
        default=[],
        metavar="A,B",
        help="mark the link between nodes A and B down on both ends (repeatable)",
    )
    policy = parser.add_argument_group("switch policy (docs/controller.md)")
    policy.add_argument(
        "--punt",
        action="append",
        choices=(*PUNT_KINDS, "none"),
        help=f"what goes to the CPU (repeatable; default: {', '.join(sorted(DEFAULT_PUNTS))})",
    )
    policy.add_argument(
        "--control-priority",
        type=int,
        default=DEFAULT_CONTROL_PRIORITY,
        help=f"queue priority of control/trimmed packets (default {DEFAULT_CONTROL_PRIORITY})",
    )
    policy.add_argument(
        "--queue-packets",
        type=positive_int,
        help="queue depth the thresholds are scaled to (default: from the topology)",
    )
    policy.add_argument(
        "--cpu-prefix",
        action="append",
        metavar="PREFIX",
        help="IPv6 prefix routed to the CPU (repeatable; default ff02::/16, fe80::/10)",
    )
    policy.add_argument(
        "--no-mac-rewrite", action="store_true", help="leave Ethernet addresses as received"
    )


def _add_target_options(parser: argparse.ArgumentParser) -> None:
    target = parser.add_argument_group("pipeline artefacts")
    target.add_argument("--target", choices=TARGETS, default="p4emu")
    target.add_argument("--program", type=Path, help="P4 program (default p4src/mrc_switch.p4)")
    target.add_argument("--p4info", type=Path, help="P4Info file (default: generated / p4c's)")
    target.add_argument("--bmv2-json", type=Path, help="p4c's BMv2 JSON (--target bmv2)")
    target.add_argument("--p4c-out", type=Path, help="where p4c writes its output (bmv2)")
    conn = parser.add_argument_group("connection")
    _add_endpoint_options(conn)
    conn.add_argument(
        "--election-id",
        type=positive_int,
        default=DEFAULT_ELECTION_ID,
        help=f"P4Runtime election id (default {DEFAULT_ELECTION_ID})",
    )
    conn.add_argument(
        "--timeout",
        type=positive_float,
        default=DEFAULT_CONNECT_TIMEOUT_S,
        help=f"seconds to wait for a switch to answer (default {DEFAULT_CONNECT_TIMEOUT_S:g})",
    )
    conn.add_argument(
        "--concurrency",
        type=positive_int,
        default=DEFAULT_CONCURRENCY,
        help=f"switches programmed at once (default {DEFAULT_CONCURRENCY})",
    )
    conn.add_argument(
        "--batch-size",
        type=positive_int,
        default=DEFAULT_BATCH_SIZE,
        help=f"updates per Write (default {DEFAULT_BATCH_SIZE})",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _add_endpoint_options(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--endpoints", type=Path, help="YAML: switch name -> HOST:PORT")
    group.add_argument(
        "--grpc-host",
        default=DEFAULT_HOST,
        help=f"host of every switch by convention (default {DEFAULT_HOST})",
    )
    group.add_argument(
        "--grpc-base-port",
        type=positive_int,
        default=DEFAULT_BASE_PORT,
        help=f"switch i listens on base + i (default {DEFAULT_BASE_PORT})",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mrc-controller",
        description="Static uSID tables of an MRC fabric over P4Runtime (docs/controller.md)",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    plan = commands.add_parser("plan", help="print the tables every switch gets")
    _add_plan_options(plan)
    form = plan.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="machine-readable JSON")
    form.add_argument("--txt", action="store_true", help="annotated text (default)")
    plan.add_argument("-o", "--output", type=Path, help="write to FILE instead of stdout")

    push = commands.add_parser("push", help="program the switches (reconcile)")
    _add_plan_options(push)
    _add_target_options(push)
    push.add_argument(
        "--pipeline",
        choices=PIPELINE_MODES,
        default="auto",
        help="auto: install ours where it differs; keep: never install (fail instead); "
        "force: always reinstall",
    )
    push.add_argument("--verify", action="store_true", help="read back and compare after writing")
    push.add_argument("-q", "--quiet", action="store_true", help="no progress output")

    diff = commands.add_parser("diff", help="compare the switches with the plan (read only)")
    _add_plan_options(diff)
    _add_target_options(diff)
    diff.add_argument("--limit", type=int, default=20, help="changes shown per switch (default 20)")

    watch = commands.add_parser("watch", help="keep the switches programmed")
    _add_plan_options(watch)
    _add_target_options(watch)
    watch.add_argument(
        "--interval",
        type=positive_float,
        default=DEFAULT_CHECK_INTERVAL_S,
        help=f"seconds between pipeline checks (default {DEFAULT_CHECK_INTERVAL_S:g})",
    )
    watch.add_argument(
        "--retry",
        type=positive_float,
        default=DEFAULT_RETRY_INTERVAL_S,
        help=f"seconds between reconnect attempts (default {DEFAULT_RETRY_INTERVAL_S:g})",
    )
    watch.add_argument(
        "--resync",
        type=non_negative_float,
        default=0.0,
        help="also re-read and repair every switch this often (seconds; default 0: never)",
    )
    watch.add_argument(
        "--duration", type=positive_float, help="stop after this many seconds (default: never)"
    )

    show = commands.add_parser("show", help="print what one switch holds")
    show.add_argument(
        "switch", metavar="SWITCH", help="switch name (with -t or --endpoints) or HOST:PORT"
    )
    show.add_argument("-t", "--topology", metavar="TOPO", help="topology, to find SWITCH's address")
    _add_endpoint_options(show.add_argument_group("connection"))
    show.add_argument("--device-id", type=int, default=0, help="device id for HOST:PORT")
    show.add_argument("--counters", action="store_true", help="also print non-zero counters")
    show.add_argument(
        "--timeout", type=positive_float, default=DEFAULT_CONNECT_TIMEOUT_S, help="seconds"
    )
    return parser


# ---------------------------------------------------------------------- helpers


def _load_topology(name: str) -> Topology:
    try:
        return topologies.load(name)
    except TopologyError as exc:
        raise UsageError(str(exc)) from None


def _policy(args: argparse.Namespace) -> SwitchPolicy:
    punts = frozenset(DEFAULT_PUNTS)
    if args.punt:
        punts = frozenset(kind for kind in args.punt if kind != "none")
    kwargs: dict[str, object] = {
        "control_priority": args.control_priority,
        "punts": punts,
        "rewrite_macs": not args.no_mac_rewrite,
        "queue_packets": args.queue_packets,
    }
    if args.cpu_prefix:
        try:
            kwargs["cpu_prefixes"] = tuple(IPv6Network(p) for p in args.cpu_prefix)
        except ValueError as exc:
            raise UsageError(f"--cpu-prefix: {exc}") from None
    return SwitchPolicy(**kwargs)  # type: ignore[arg-type]


def _plan(args: argparse.Namespace) -> RoutePlan:
    topology = _load_topology(args.topology)
    return plan_fabric(
        topology, policy=_policy(args), down_links=args.link_down, switches=args.switches
    )


def _endpoints(
    args: argparse.Namespace, topology: Topology | None
) -> tuple[Mapping[str, P4RuntimeTarget], str]:
    if args.endpoints is not None:
        return load_endpoints(args.endpoints, topology), str(args.endpoints)
    if topology is None:
        raise UsageError("a switch name needs -t TOPO or --endpoints FILE to find its address")
    source = f"{args.grpc_host}:{args.grpc_base_port}+i convention"
    return default_endpoints(topology, args.grpc_host, args.grpc_base_port), source


def _pipeline(args: argparse.Namespace) -> Pipeline:
    return pipeline_for(
        args.target,
        args.program,
        p4info=args.p4info,
        bmv2_json=args.bmv2_json,
        out_dir=args.p4c_out,
    )


def _codec(pipeline: Pipeline, plan: RoutePlan) -> EntityCodec:
    codec = EntityCodec(pipeline.p4info)
    # One switch of each role and plane shape is enough to catch a width problem (e.g. a
    # topology with 10-bit ports against bit<9>) before touching any switch.
    seen: set[tuple[object, ...]] = set()
    for sw in plan:
        shape = (sw.role, sw.plane, len(sw.entries))
        if shape not in seen:
            seen.add(shape)
            codec.check_plan(sw)
    return codec


def _connect_options(args: argparse.Namespace) -> ConnectOptions:
    return ConnectOptions(
        election_id=args.election_id,
        connect_timeout=args.timeout,
        concurrency=args.concurrency,
    )


class Progress:
    """Per-switch lines for small fabrics, a periodic summary line for big ones."""

    def __init__(self, out: TextIO, total: int, quiet: bool, verb: str) -> None:
        self.out = out
        self.total = total
        self.quiet = quiet
        self.verb = verb
        self.per_switch = total <= PER_SWITCH_LINES_UP_TO
        self.started = time.monotonic()
        self.last = self.started
        self.failed = 0
        self.updates = 0

    def __call__(self, report: SwitchReport, done: int, total: int) -> None:
        self.failed += not report.ok
        self.updates += report.written
        if self.quiet:
            return
        if self.per_switch or not report.ok:
            self.out.write(f"[{done:>{len(str(total))}}/{total}] {report_line(report)}\n")
        now = time.monotonic()
        if not self.per_switch and (now - self.last >= PROGRESS_EVERY_S or done == total):
            self.last = now
            self.out.write(
                f"{self.verb} {done}/{total} switches, {self.failed} failed, "
                f"{self.updates} updates, {now - self.started:.1f} s\n"
            )
        self.out.flush()


def _summary(report: FabricReport, verb: str) -> str:
    totals = report.totals()
    return (
        f"{verb} {totals['switches']} switches in {report.seconds:.2f} s: "
        f"{totals['switches'] - totals['failed']} ok, {totals['failed']} failed; "
        f"{totals['planned']} entries planned (as in 'plan'), written +{totals['inserted']} "
        f"inserted ~{totals['modified']} modified -{totals['deleted']} deleted, "
        f"{totals['pipelines_set']} pipelines set"
    )


# ---------------------------------------------------------------------- commands


def cmd_plan(args: argparse.Namespace, out: TextIO) -> int:
    plan = _plan(args)
    target: TextIO = out
    handle = None
    if args.output is not None:
        try:
            handle = args.output.open("w", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{args.output}: cannot write: {exc.strerror}") from None
        target = handle
    try:
        if args.json:
            write_plan_json(plan, target)
        else:
            write_plan_text(plan, target)
    finally:
        if handle is not None:
            handle.close()
    return EXIT_OK


def cmd_push(args: argparse.Namespace, out: TextIO, err: TextIO, *, dry_run: bool = False) -> int:
    plan = _plan(args)
    pipeline = _pipeline(args)
    codec = _codec(pipeline, plan)
    endpoints, _source = _endpoints(args, plan.topology)
    sync = SyncOptions(
        pipeline_mode=getattr(args, "pipeline", "auto"),
        batch_size=args.batch_size,
        dry_run=dry_run,
        verify=getattr(args, "verify", False),
    )
    quiet = getattr(args, "quiet", False) or dry_run
    progress = Progress(err, len(plan), quiet, "diffed" if dry_run else "pushed")
    report = asyncio.run(
        push_fabric(
            plan,
            pipeline,
            endpoints,
            connect=_connect_options(args),
            sync=sync,
            codec=codec,
            on_report=progress,
        )
    )
    if dry_run:
        return _print_diff(args, report, out)
    if args.json:
        document = {
            "topology": plan.topology.name,
            "target": pipeline.target,
            "seconds": round(report.seconds, 4),
            **report.totals(),
            "switches": [report_to_json(r) for r in report.reports],
        }
        out.write(json.dumps(document, indent=2) + "\n")
    else:
        for failed in report.failed:
            out.write(report_line(failed) + "\n")
            for failure in failed.failures[:10]:
                out.write(f"    {failure}\n")
            if len(failed.failures) > 10:
                out.write(f"    ... {len(failed.failures) - 10} more failed updates\n")
        out.write(_summary(report, "pushed") + "\n")
    return EXIT_OK if report.ok else EXIT_SWITCH_FAILED


def _print_diff(args: argparse.Namespace, report: FabricReport, out: TextIO) -> int:
    if args.json:
        document = {
            "in_sync": not report.changed and report.ok,
            "switches": [report_to_json(r, with_changes=True) for r in report.reports],
        }
        out.write(json.dumps(document, indent=2) + "\n")
    else:
        for switch_report in report.reports:
            for line in diff_lines(switch_report, args.limit if args.limit >= 0 else None):
                out.write(line + "\n")
        out.write(
            f"{len(report.changed)} of {len(report.reports)} switches differ from the plan, "
            f"{len(report.failed)} could not be read\n"
        )
    if not report.ok:
        return EXIT_SWITCH_FAILED
    return EXIT_DIFFERENCES if report.changed else EXIT_OK


def cmd_watch(args: argparse.Namespace, out: TextIO) -> int:
    plan = _plan(args)
    pipeline = _pipeline(args)
    codec = _codec(pipeline, plan)
    endpoints, source = _endpoints(args, plan.topology)

    def on_event(event: WatchEvent) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(event.time))
        out.write(f"{stamp} {event.switch:<12} {event.kind:<12} {event.detail}\n")
        out.flush()

    watcher = FabricWatcher(
        plan,
        pipeline,
        endpoints,
        connect=_connect_options(args),
        sync=SyncOptions(batch_size=args.batch_size),
        options=WatchOptions(args.interval, args.retry, args.resync),
        on_event=on_event,
        codec=codec,
    )
    out.write(f"watching {len(plan)} switches of {plan.topology.name} ({source}); Ctrl-C stops\n")
    out.flush()

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        if args.duration is not None:
            loop.call_later(args.duration, stop.set)
        await watcher.run(stop)

    asyncio.run(main())
    counts = watcher.programmed_count
    out.write(
        f"stopped; {sum(counts.values())} reconciliations, "
        f"{sum(1 for n in counts.values() if n == 0)} switches never programmed\n"
    )
    return EXIT_OK


def cmd_show(args: argparse.Namespace, out: TextIO) -> int:
    name = args.switch
    if args.topology is None and args.endpoints is None:
        try:
            endpoint = P4RuntimeTarget(check_address(name, "SWITCH"), args.device_id)
        except ControllerError:
            raise UsageError(
                f"show {name}: a switch name needs -t TOPO or --endpoints FILE (or give HOST:PORT)"
            ) from None
    else:
        topology = _load_topology(args.topology) if args.topology else None
        endpoints, source = _endpoints(args, topology)
        if name not in endpoints:
            raise UsageError(f"show: no switch {name!r} in {source}")
        endpoint = endpoints[name]

    async def main() -> int:
        client = SwitchClient(name, endpoint, connect_timeout=args.timeout)
        try:
            await client.connect()
            view = await read_switch(client, counters=args.counters)
        finally:
            await client.close()
        for line in view_lines(view):
            out.write(line + "\n")
        return EXIT_OK

    return asyncio.run(main())


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr

    def body() -> int:
        args = build_parser().parse_args(argv)
        if args.command == "plan":
            return cmd_plan(args, out)
        if args.command == "push":
            return cmd_push(args, out, err)
        if args.command == "diff":
            return cmd_push(args, out, err, dry_run=True)
        if args.command == "watch":
            return cmd_watch(args, out)
        return cmd_show(args, out)

    # clikit's codes, with this command's own: bad input is a usage error (2), a switch
    # that failed is 3 (module docstring).
    return run_main(
        "mrc-controller",
        body,
        expected=(ControllerError,),
        codes={SwitchAccessError: EXIT_SWITCH_FAILED, ControllerError: EXIT_USAGE},
        stderr=err,
    )


if __name__ == "__main__":
    sys.exit(main())
