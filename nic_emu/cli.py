"""The ``nic-emu`` command line (docs/nic-emu-process.md).

    nic-emu serve --config FILE.json
    nic-emu send --to NIC --bytes N [--connections K] [--mode mrc|roce] [--seed S] [--data SPEC]
                 --via SOCKET [--timeout SECONDS] [--json]

Exit status (clikit's): 0 success (``serve``: stopped by ``shutdown`` or SIGTERM); 1 a
transfer failed or the NIC could not be reached; 2 a bad command line or configuration
(one line on stderr naming the offending option or key); 130 interrupted (Ctrl-C, SIGINT).
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import time
from collections.abc import Sequence
from typing import IO, Any

from clikit import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    byte_size,
    non_negative_int,
    positive_float,
    positive_int,
    run_main,
)
from nic_emu.client import ControlClient
from nic_emu.datasource import DATA_HELP, data_spec_argument
from nic_emu.exceptions import ControlError, NicEmuError, ServeConfigError
from nic_emu.transfers import DEFAULT_TRANSFER_DEADLINE_S

PROG = "nic-emu"
POLL_S = 0.1
PLAIN_PROGRESS_EVERY_S = 1.0
BAR_WIDTH = 30
DEFAULT_SEND_TIMEOUT_S = 600.0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2
        self.exit(2, f"{self.prog}: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="The emulated MRC NIC.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    serve = sub.add_parser("serve", help="run one NIC (docs/nic-emu-process.md)")
    serve.add_argument("--config", required=True, help="the NIC's JSON configuration")
    send = sub.add_parser("send", help="send bytes from a running NIC to another NIC")
    send.add_argument("--to", required=True, help="receiving NIC, e.g. nic3")
    send.add_argument("--bytes", required=True, type=byte_size, help="e.g. 4096, 64K, 16M, 1G")
    send.add_argument("--connections", type=positive_int, default=1, help="queue pairs (default 1)")
    send.add_argument("--mode", choices=("mrc", "roce"), default="mrc")
    send.add_argument("--seed", type=non_negative_int, default=1, help="seed of the random data")
    send.add_argument("--data", type=data_spec_argument, default="random", help=DATA_HELP)
    send.add_argument("--via", required=True, help="the sending NIC's control socket")
    send.add_argument(
        "--timeout",
        type=positive_float,
        default=DEFAULT_SEND_TIMEOUT_S,
        help="give up after SECONDS",
    )
    send.add_argument(
        "--deadline",
        type=positive_float,
        default=None,
        help="seconds the NIC keeps trying (probing paths that are down) before the transfer "
        f"fails, naming what it found down (default {DEFAULT_TRANSFER_DEADLINE_S:g})",
    )
    send.add_argument("--json", action="store_true", help="print the final report as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """clikit's exit codes: 0 ok, 1 failure, 2 usage or configuration, 130 Ctrl-C."""

    config_path: list[str] = []

    def body() -> int:
        args = build_parser().parse_args(argv)
        if args.command == "serve":
            config_path.append(args.config)
            return run_serve(args.config)
        return run_send(args)

    def message(exc: BaseException) -> str:
        if isinstance(exc, ServeConfigError) and config_path:
            where = exc.message if exc.key == "config" else str(exc)
            return f"config {config_path[0]}: {where}"
        return str(exc)

    return run_main(
        PROG, body, expected=(NicEmuError,), codes={ServeConfigError: EXIT_USAGE}, message=message
    )


# ---------------------------------------------------------------------- serve


def run_serve(config_path: str) -> int:
    from nic_emu.process import serve
    from nic_emu.serve_config import load_serve_config

    # Errors (a bad config: 2, anything else: 1) and a Ctrl-C before the signal handlers
    # are in place (130) go to clikit.run_main.
    config = load_serve_config(config_path)
    if serve(config) == signal.SIGINT:
        raise KeyboardInterrupt  # stopped cleanly by Ctrl-C: clikit's 130
    return EXIT_OK


# ---------------------------------------------------------------------- send


def run_send(args: argparse.Namespace) -> int:
    progress = sys.stderr
    try:
        with ControlClient(args.via) as client:
            started = client.request(
                "send",
                to=args.to,
                bytes=args.bytes,
                connections=args.connections,
                mode=args.mode,
                seed=args.seed,
                data=args.data,
                **({} if args.deadline is None else {"deadline_s": args.deadline}),
            )
            print(f"transfer deadline: {started['deadline_s']:g} s", file=progress)
            report = follow(client, started["transfer"], args.timeout, progress)
    except ControlError as exc:
        print(f"{PROG} send: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(summary(report))
    if report.get("failed"):
        print(f"{PROG} send: the transfer failed: {report['failed']}", file=sys.stderr)
        return EXIT_FAILURE
    return EXIT_OK


def follow(client: ControlClient, transfer_id: int, timeout: float, out: IO[str]) -> dict[str, Any]:
    """Poll ``transfer`` until done, drawing progress on ``out``."""
    tty = out.isatty()
    deadline = time.monotonic() + timeout
    last_line = -PLAIN_PROGRESS_EVERY_S
    while True:
        report = client.request("transfer", id=transfer_id)
        now = time.monotonic()
        if tty:
            out.write("\r" + progress_bar(report))
            out.flush()
        elif report["done"] or now - last_line >= PLAIN_PROGRESS_EVERY_S:
            out.write(progress_line(report) + "\n")
            out.flush()
            last_line = now
        if report["done"]:
            if tty:
                out.write("\n")
            return report
        if now > deadline:
            if tty:
                out.write("\n")
            raise ControlError(
                f"transfer {transfer_id} not done after {timeout:g} s "
                f"({report['bytes_acked']} of {report['bytes_total']} bytes acknowledged)"
            )
        time.sleep(POLL_S)


def _rate(report: dict[str, Any]) -> str:
    return f"{report['goodput_gbps'] * 1000 / 8:.1f} MB/s"


def progress_bar(report: dict[str, Any]) -> str:
    fraction = min(1.0, float(report["progress"]))
    filled = int(fraction * BAR_WIDTH)
    bar = "#" * filled + "." * (BAR_WIDTH - filled)
    return (
        f"[{bar}] {fraction * 100:5.1f}% {report['bytes_acked']:,}/{report['bytes_total']:,} B "
        f"{_rate(report)} rtx {report['retransmissions']}"
    )


def progress_line(report: dict[str, Any]) -> str:
    return (
        f"progress {float(report['progress']) * 100:.1f}%: {report['bytes_acked']:,} of "
        f"{report['bytes_total']:,} bytes in {report['elapsed_s']:.3f} s, {_rate(report)}, "
        f"{report['retransmissions']} retransmissions"
    )


def summary(report: dict[str, Any]) -> str:
    total = max(1, sum(report["per_plane_bytes"].values()))
    shares = "  ".join(
        f"plane {plane}: {count / total * 100:.1f}%"
        for plane, count in sorted(report["per_plane_bytes"].items(), key=lambda kv: int(kv[0]))
    )
    repaths = [float(e["repath_time_us"]) for e in report["repath_events"]]
    if repaths:
        repath_text = (
            f"{len(repaths)} (median {statistics.median(repaths):.1f} us, "
            f"max {max(repaths):.1f} us)"
        )
    else:
        repath_text = "none"
    verdict = "FAILED" if report.get("failed") else "done"
    lines = [
        f"transfer {report.get('id', '?')} to {report['to']} {verdict}: "
        f"{report['bytes_acked']:,} of {report['bytes_total']:,} bytes acknowledged "
        f"in {report['elapsed_s']:.3f} s",
        f"goodput: {report['goodput_gbps']:.3f} Gb/s ({_rate(report)}), mode {report['mode']}, "
        f"{report['connections']} connection(s)",
        f"retransmissions: {report['retransmissions']}, NACKs: {report['nacks']}",
        f"per-plane share: {shares}",
        f"repath events: {repath_text}",
        f"sha256 of the data sent: {report['sha256']}",
    ]
    return "\n".join(lines)
