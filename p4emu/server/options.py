"""The ``p4emu-switch`` command line, shaped like ``simple_switch_grpc``'s.

::

    p4emu-switch [--device-id N] [-i PORT@IFACE]... [--cpu-port N] [--priority-queues N]
                 [--queue-depth N] [--queue-rate PPS] [--log-console] [-L LEVEL] [--pcap [DIR]]
                 [--thrift-port N] (--no-p4 | PROGRAM.p4) [-- --grpc-server-addr HOST:PORT
                 [--cpu-port N] [--priority-queues N] [--drop-port N]
                 [--grpc-server-ssl --grpc-server-cert PEM --grpc-server-key PEM
                  [--grpc-server-cacert PEM] [--grpc-server-with-client-auth]]
                 [--max-grpc-message-size BYTES] [--p4rt-roles ROLE,...]
                 [--p4rt-controllers NAME,...]]

Target options after ``--`` follow BMv2 (``--cpu-port`` and ``--priority-queues`` are accepted
on either side, as scripts use both). ``--thrift-port`` is accepted and ignored: p4emu has no
Thrift server; program it over P4Runtime. ``--help`` lists both sets (the target options,
TLS and access policy among them, in a section of their own). Value checks are clikit's
shared argparse types; a bad command line is an :class:`OptionsError`, which the console
script turns into exit code 2 (``clikit.run_main``).
"""

from __future__ import annotations

import argparse
import ipaddress
import math
from dataclasses import dataclass, field
from pathlib import Path

from clikit import non_negative_int, positive_float, positive_int
from p4emu.io.drivers import InterfaceSpec, parse_interface_spec
from p4emu.io.exceptions import PortSpecError
from p4emu.server.exceptions import OptionsError
from p4emu.server.policy import AccessPolicy
from p4emu.server.transport import DEFAULT_MAX_MESSAGE_BYTES, TlsConfig

DEFAULT_GRPC_ADDR = "127.0.0.1:9559"
DEFAULT_DROP_PORT = 511
LOG_LEVELS = ("trace", "debug", "info", "warn", "error", "off")
PROGRAM_SUFFIXES = (".p4", ".p4_16")


@dataclass(frozen=True)
class SwitchOptions:
    """A parsed ``p4emu-switch`` command line: the program (None: ``--no-p4``), the ports and
    the target, logging, gRPC, TLS and access-policy options; ``ignored`` lists the options
    accepted and ignored."""

    program: Path | None
    interfaces: tuple[InterfaceSpec, ...] = ()
    device_id: int = 0
    cpu_port: int | None = None
    priority_queues: int = 1
    queue_depth: int = 64
    queue_rate_pps: float | None = None
    drop_port: int = DEFAULT_DROP_PORT
    log_console: bool = False
    log_level: str = "info"
    log_file: Path | None = None
    pcap_dir: Path | None = None
    grpc_host: str = "127.0.0.1"
    grpc_port: int = 9559
    seed: int = 0
    link_delays_us: dict[int, float] = field(default_factory=dict)
    port_queue_rates_pps: dict[int, float] = field(default_factory=dict)
    ignored: tuple[str, ...] = field(default=())
    tls: TlsConfig | None = None
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    policy: AccessPolicy = field(default_factory=AccessPolicy)

    @property
    def grpc_address(self) -> str:
        host = f"[{self.grpc_host}]" if ":" in self.grpc_host else self.grpc_host
        return f"{host}:{self.grpc_port}"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise OptionsError(f"{self.prog}: {message}")


MAX_P4_PORT = 511  # v1model port numbers are bit<9>


def _p4_port(text: str) -> int:
    """A switch port number: 0..511 (clikit's ``non_negative_int``, then the bit<9> bound)."""
    value = non_negative_int(text)
    if value > MAX_P4_PORT:
        raise argparse.ArgumentTypeError(
            f"port {value} is outside 0..{MAX_P4_PORT} (ports are bit<9>)"
        )
    return value


def _shared_port_options(parser: argparse.ArgumentParser) -> None:
    """Options accepted before and after ``--`` (scripts use both); after wins."""
    parser.add_argument(
        "--cpu-port", type=_p4_port, help="packet_in/packet_out port (default none)"
    )
    parser.add_argument(
        "--priority-queues", type=positive_int, help="egress queues per port (default 1)"
    )
    parser.add_argument(
        "--drop-port", type=_p4_port, help=f"port that drops (default {DEFAULT_DROP_PORT})"
    )


def _main_parser() -> _Parser:
    parser = _Parser(
        prog="p4emu-switch",
        usage="%(prog)s [options] (--no-p4 | PROGRAM.p4) [-- TARGET OPTIONS]",
        description="p4emu drop-in for simple_switch_grpc",
        epilog=_target_parser().format_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--device-id", type=non_negative_int, default=0, help="P4Runtime device id (default 0)"
    )
    parser.add_argument("-i", "--interface", action="append", default=[], metavar="PORT@IFACE")
    _shared_port_options(parser)
    parser.add_argument(
        "--queue-depth",
        type=positive_int,
        default=64,
        metavar="PACKETS",
        help="egress queue depth (default 64)",
    )
    parser.add_argument("--queue-rate", type=positive_float, metavar="PPS")
    parser.add_argument("--log-console", action="store_true")
    parser.add_argument("-L", "--log-level", choices=LOG_LEVELS, default="info")
    parser.add_argument("--log-file", type=Path)
    parser.add_argument("--pcap", nargs="?", const=".", metavar="DIR")
    parser.add_argument(
        "--thrift-port", type=non_negative_int, help="accepted for compatibility; ignored"
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of random() and hash random"
    )
    parser.add_argument(
        "--port-queue-rate",
        action="append",
        default=[],
        metavar="PORT=PPS",
        help="drain rate of PORT's egress queues in packets/s (overrides --queue-rate there)",
    )
    parser.add_argument(
        "--link-delay-us",
        action="append",
        default=[],
        metavar="PORT=US",
        help="hold frames sent on PORT for US microseconds (link delay emulation)",
    )
    parser.add_argument("--no-p4", action="store_true", help="start without a program")
    parser.add_argument("program", nargs="?", type=Path)
    return parser


def _target_parser() -> _Parser:
    parser = _Parser(
        prog="p4emu-switch ... --",
        usage="%(prog)s [TARGET OPTIONS]",
        description="target options (after --, as simple_switch_grpc's): gRPC address, "
        "TLS, P4Runtime access policy",
    )
    parser.add_argument(
        "--grpc-server-addr",
        default=DEFAULT_GRPC_ADDR,
        metavar="HOST:PORT",
        help=f"P4Runtime and gNMI address (default {DEFAULT_GRPC_ADDR})",
    )
    _shared_port_options(parser)
    parser.add_argument("--grpc-server-ssl", action="store_true", help="serve gRPC over TLS")
    parser.add_argument(
        "--grpc-server-cacert", type=Path, metavar="PEM", help="CA that signs client certificates"
    )
    parser.add_argument(
        "--grpc-server-cert", type=Path, metavar="PEM", help="server certificate (TLS)"
    )
    parser.add_argument("--grpc-server-key", type=Path, metavar="PEM", help="server key (TLS)")
    parser.add_argument(
        "--grpc-server-with-client-auth",
        action="store_true",
        help="require a client certificate signed by --grpc-server-cacert",
    )
    parser.add_argument(
        "--max-grpc-message-size",
        type=positive_int,
        default=DEFAULT_MAX_MESSAGE_BYTES,
        metavar="BYTES",
        help=f"largest gRPC message accepted or sent (default {DEFAULT_MAX_MESSAGE_BYTES})",
    )
    parser.add_argument(
        "--p4rt-roles", metavar="ROLE,...", help="roles clients may arbitrate for (default: any)"
    )
    parser.add_argument(
        "--p4rt-controllers",
        metavar="NAME,...",
        help="certificate names allowed to arbitrate, write and set ports (needs client auth)",
    )
    return parser


def _tls_config(target: argparse.Namespace) -> TlsConfig | None:
    files = {
        "--grpc-server-cert": target.grpc_server_cert,
        "--grpc-server-key": target.grpc_server_key,
        "--grpc-server-cacert": target.grpc_server_cacert,
    }
    if not target.grpc_server_ssl:
        given = [flag for flag, path in files.items() if path is not None]
        if target.grpc_server_with_client_auth:
            given.append("--grpc-server-with-client-auth")
        if given:
            raise OptionsError(f"p4emu-switch: {', '.join(given)} needs --grpc-server-ssl")
        return None
    for flag in ("--grpc-server-cert", "--grpc-server-key"):
        if files[flag] is None:
            raise OptionsError(f"p4emu-switch: --grpc-server-ssl needs {flag}")
    if target.grpc_server_with_client_auth and target.grpc_server_cacert is None:
        raise OptionsError(
            "p4emu-switch: --grpc-server-with-client-auth needs --grpc-server-cacert "
            "(the CA that signs client certificates)"
        )
    for flag, path in files.items():
        if path is not None and not path.is_file():
            raise OptionsError(f"p4emu-switch: {flag} {path}: no such file")
    return TlsConfig(
        cert=target.grpc_server_cert,
        key=target.grpc_server_key,
        cacert=target.grpc_server_cacert,
        with_client_auth=target.grpc_server_with_client_auth,
    )


def _name_list(flag: str, text: str | None, *, allow_empty: bool) -> frozenset[str] | None:
    if text is None:
        return None
    names = [name.strip() for name in text.split(",")]
    if not allow_empty and any(not name for name in names):
        raise OptionsError(f"p4emu-switch: {flag} {text!r}: empty name")
    return frozenset(names)


def _policy(target: argparse.Namespace, tls: TlsConfig | None) -> AccessPolicy:
    # "--p4rt-roles ,ctl" allows the default role "" and "ctl".
    roles = _name_list("--p4rt-roles", target.p4rt_roles, allow_empty=True)
    controllers = _name_list("--p4rt-controllers", target.p4rt_controllers, allow_empty=False)
    if controllers is not None and (tls is None or not tls.with_client_auth):
        raise OptionsError(
            "p4emu-switch: --p4rt-controllers names client certificates; it needs "
            "--grpc-server-ssl with --grpc-server-with-client-auth"
        )
    return AccessPolicy(roles=roles, controllers=controllers)


def split_grpc_address(text: str) -> tuple[str, int]:
    host, sep, port_text = text.rpartition(":")
    if not sep or not host:
        raise OptionsError(f"--grpc-server-addr {text!r}: expected HOST:PORT")
    host = host.strip("[]")
    if host not in ("localhost",):
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise OptionsError(
                f"--grpc-server-addr {text!r}: {host!r} is not an IP address"
            ) from None
    try:
        port = int(port_text)
    except ValueError:
        raise OptionsError(
            f"--grpc-server-addr {text!r}: port {port_text!r} is not a number"
        ) from None
    if not 0 <= port <= 65535:
        raise OptionsError(f"--grpc-server-addr {text!r}: port {port} out of range")
    return host, port


def parse_options(argv: list[str]) -> SwitchOptions:
    """Parses a full command line (without the program name); raises OptionsError."""
    if "--" in argv:
        split = argv.index("--")
        main_args, target_args = argv[:split], argv[split + 1 :]
    else:
        main_args, target_args = argv, []
    main = _main_parser().parse_args(main_args)
    target = _target_parser().parse_args(target_args)
    if main.no_p4 and main.program is not None:
        raise OptionsError("p4emu-switch: give either --no-p4 or a PROGRAM.p4, not both")
    if not main.no_p4 and main.program is None:
        raise OptionsError("p4emu-switch: a PROGRAM.p4 (or --no-p4) is required")
    if main.program is not None:
        if main.program.suffix == ".json":
            raise OptionsError(
                f"p4emu-switch: {main.program} looks like p4c's BMv2 JSON, which p4emu does not "
                "run; give the P4_16 source file instead"
            )
        if not main.program.is_file():
            raise OptionsError(f"p4emu-switch: program file {main.program} does not exist")
    interfaces: list[InterfaceSpec] = []
    for text in main.interface:
        try:
            spec = parse_interface_spec(text)
        except PortSpecError as exc:
            raise OptionsError(f"p4emu-switch: -i {exc}") from None
        if any(existing.port == spec.port for existing in interfaces):
            raise OptionsError(f"p4emu-switch: port {spec.port} is given twice with -i")
        interfaces.append(spec)
    cpu_port = target.cpu_port if target.cpu_port is not None else main.cpu_port
    priority_queues = target.priority_queues or main.priority_queues or 1
    drop_port = target.drop_port if target.drop_port is not None else main.drop_port
    drop_port = DEFAULT_DROP_PORT if drop_port is None else drop_port
    for spec in interfaces:
        if spec.port in (cpu_port, drop_port):
            role = "CPU" if spec.port == cpu_port else "drop"
            raise OptionsError(
                f"p4emu-switch: port {spec.port} is the {role} port; it cannot have -i"
            )
    cabled = {spec.port for spec in interfaces}
    link_delays = _port_values(
        "--link-delay-us", "MICROSECONDS", main.link_delay_us, cabled, allow_zero=True
    )
    port_rates = _port_values(
        "--port-queue-rate", "PACKETS_PER_SECOND", main.port_queue_rate, cabled, allow_zero=False
    )
    host, port = split_grpc_address(target.grpc_server_addr)
    tls = _tls_config(target)
    return SwitchOptions(
        program=main.program,
        interfaces=tuple(interfaces),
        device_id=main.device_id,
        cpu_port=cpu_port,
        priority_queues=priority_queues,
        queue_depth=main.queue_depth,
        queue_rate_pps=main.queue_rate,
        drop_port=drop_port,
        log_console=main.log_console,
        log_level=main.log_level,
        log_file=main.log_file,
        pcap_dir=Path(main.pcap) if main.pcap is not None else None,
        grpc_host=host,
        grpc_port=port,
        seed=main.seed,
        link_delays_us=link_delays,
        port_queue_rates_pps=port_rates,
        ignored=("--thrift-port",) if main.thrift_port is not None else (),
        tls=tls,
        max_message_bytes=target.max_grpc_message_size,
        policy=_policy(target, tls),
    )


def _port_values(
    flag: str, unit: str, items: list[str], ports: set[int], *, allow_zero: bool
) -> dict[int, float]:
    """Parses repeated ``PORT=VALUE`` options for ports that have an interface."""
    values: dict[int, float] = {}
    bound = ">= 0" if allow_zero else "> 0"
    for item in items:
        port_text, eq, value_text = item.partition("=")
        try:
            port, value = int(port_text, 0), float(value_text)
        except ValueError:
            raise OptionsError(f"p4emu-switch: {flag} {item!r}: expected PORT={unit}") from None
        if not eq or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            raise OptionsError(
                f"p4emu-switch: {flag} {item!r}: the value must be a finite number {bound}"
            )
        if port not in ports:
            raise OptionsError(f"p4emu-switch: {flag} {item!r}: port {port} has no -i interface")
        if port in values:
            raise OptionsError(f"p4emu-switch: {flag}: port {port} is given twice")
        values[port] = value
    return values
