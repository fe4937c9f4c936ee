"""``p4emu-switch``: the process — port drivers, the switch, and the gRPC server together.

Threads: the I/O reactor runs the packet path (frames in → pipeline → frames out, queue
departures, periodic digest/idle-timeout work); gRPC threads run control-plane requests.
Both go through :class:`SwitchDevice`, whose lock serialises them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from clikit import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, run_main
from p4emu.bundle import DeviceConfigError, device_config_for, remove_workspace
from p4emu.exceptions import P4EmuError, P4SourceError
from p4emu.io import PcapWriter, PortDriver, PortIOError, Reactor
from p4emu.limits import CompileLimitError
from p4emu.proto import p4r
from p4emu.server.device import DeviceError
from p4emu.server.exceptions import ServerError
from p4emu.server.options import SwitchOptions, parse_options
from p4emu.server.ports import GnmiPortService, PortStatus
from p4emu.server.service import P4RuntimeService, start_grpc_server
from p4emu.server.switch_device import DeviceSettings, SwitchDevice
from p4emu.switch import build_in_background

log = logging.getLogger("p4emu.server")
PROG = "p4emu-switch"
# Digest batching, idle timeouts and late departures are checked this often; hundreds of idle
# switches in local mode must not keep the CPUs busy.
HOUSEKEEPING_PERIOD_S = 0.05
# Longest wait for gRPC to cancel its calls when stopping (it normally takes milliseconds).
STOP_TIMEOUT_S = 1.0
_LEVELS = {
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "off": logging.CRITICAL + 10,
}


class JsonLogFormatter(logging.Formatter):
    """One JSON object per line: ``{"ts": ..., "level": ..., "logger": ..., "msg": ...}``."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def configure_logging(options: SwitchOptions, stream: TextIO = sys.stderr) -> None:
    root = logging.getLogger("p4emu")
    root.setLevel(_LEVELS[options.log_level])
    root.handlers.clear()
    if options.log_console:
        console = logging.StreamHandler(stream)
        console.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(console)
    if options.log_file is not None:
        handler = logging.FileHandler(options.log_file)
        handler.setFormatter(JsonLogFormatter())
        root.addHandler(handler)
    if not root.handlers:
        quiet = logging.StreamHandler(stream)
        quiet.setLevel(logging.WARNING)
        quiet.setFormatter(logging.Formatter("p4emu-switch: %(levelname)s: %(message)s"))
        root.addHandler(quiet)


class SwitchProcess:
    """Everything one p4emu-switch runs; :meth:`close` is idempotent."""

    def __init__(self, options: SwitchOptions) -> None:
        self.options = options
        self.device = SwitchDevice(
            DeviceSettings(
                device_id=options.device_id,
                cpu_port=options.cpu_port,
                drop_port=options.drop_port,
                priority_queues=options.priority_queues,
                queue_depth=options.queue_depth,
                queue_rate_pps=options.queue_rate_pps,
                port_queue_rates_pps=dict(options.port_queue_rates_pps),
                seed=options.seed,
                trace=options.log_level == "trace",
            )
        )
        self.reactor = Reactor(self._on_frame, after_frames=self._schedule)
        self.drivers: dict[int, PortDriver] = {}
        self.pcaps: dict[tuple[int, str], PcapWriter] = {}
        self.server = None
        self.grpc_port = 0
        self._closed = False
        self._next_tick: float | None = None
        self.device.transmit = self._transmit
        try:
            self._open_ports()
            if options.program is not None:
                self._load_initial_program(options.program)
            service = P4RuntimeService(self.device, options.policy)
            self.server, self.grpc_port = start_grpc_server(
                service,
                options.grpc_address,
                gnmi_service=GnmiPortService(self, options.policy),
                max_message_bytes=options.max_message_bytes,
                tls=options.tls,
            )
        except BaseException:
            self.close()
            raise

    # --- setup ---------------------------------------------------------------------------
    def _open_ports(self) -> None:
        for spec in self.options.interfaces:
            driver = spec.open()
            self.drivers[spec.port] = driver
            self.reactor.add(driver)
            if self.options.pcap_dir is not None:
                for direction in ("in", "out"):
                    path = self.options.pcap_dir / f"port{spec.port}_{direction}.pcap"
                    self.pcaps[(spec.port, direction)] = PcapWriter(path)

    def _load_initial_program(self, program: Path) -> None:
        from p4emu.frontend import load_program
        from p4emu.p4info import p4info_for_program

        try:
            p4info = p4info_for_program(load_program(program))
            config = p4r.ForwardingPipelineConfig(
                p4info=p4info, p4_device_config=device_config_for(program)
            )
            self.device.commit_pipeline(self.device.verify_pipeline(config), reconcile=False)
        except (DeviceConfigError, DeviceError) as exc:
            raise ServerError(f"{program}: {getattr(exc, 'message', exc)}") from None

    # --- packet path ---------------------------------------------------------------------
    def _on_frame(self, port: int, frame: bytes) -> None:
        # Departures that became due are scheduled once per batch (Reactor after_frames).
        if self.pcaps:
            pcap = self.pcaps.get((port, "in"))
            if pcap is not None:
                pcap.write(frame, time.time_ns() // 1000)
        if not self.device.is_port_up(port):
            return  # a cut cable: nothing arrives (counted by the switch when it has a pipeline)
        self.device.receive(port, frame)

    def _transmit(self, port: int, frame: bytes) -> None:
        driver = self.drivers.get(port)
        if driver is None:
            return  # no interface on that port: the frame leaves into nothing, as in BMv2
        delay_us = self.options.link_delays_us.get(port)
        if delay_us:
            # Link delay: the frame goes on the wire delay_us after it left the switch. The
            # timer is set on the reactor thread (this may run on a gRPC thread: PacketOut).
            due = time.monotonic() + delay_us / 1e6
            self.reactor.call_soon(
                lambda: self.reactor.call_at(due, lambda: self._send(port, driver, frame))
            )
            return
        self._send(port, driver, frame)

    def _send(self, port: int, driver: PortDriver, frame: bytes) -> None:
        if not self.device.is_port_up(port):
            return  # the cable was cut while the frame was in flight
        if self.pcaps:
            pcap = self.pcaps.get((port, "out"))
            if pcap is not None:
                pcap.write(frame, time.time_ns() // 1000)
        try:
            driver.send(frame)
        except PortIOError as exc:
            log.error("%s", exc)

    def _schedule(self) -> None:
        delay_ns = self.device.poll()
        if delay_ns is None:
            return
        when = time.monotonic() + delay_ns / 1e9
        if self._next_tick is None or when < self._next_tick:
            self._next_tick = when
            self.reactor.call_at(when, self._tick)

    def _tick(self) -> None:
        self._next_tick = None
        self._schedule()

    def _housekeeping(self) -> None:
        try:
            self._schedule()
            self.device.housekeeping()
        except Exception:
            log.exception("housekeeping failed")
        self.reactor.call_at(time.monotonic() + HOUSEKEEPING_PERIOD_S, self._housekeeping)

    # --- PortControl (gNMI) --------------------------------------------------------------
    def port_statuses(self) -> list[PortStatus]:
        counters = self.device.counters
        statuses = []
        for port, driver in sorted(self.drivers.items()):
            name = getattr(driver, "interface", None) or str(port)
            statuses.append(
                PortStatus(
                    port,
                    name,
                    self.device.is_port_up(port),
                    {
                        "in-pkts": counters.per_port_rx.get(port, 0),
                        "out-pkts": counters.per_port_tx.get(port, 0),
                    },
                )
            )
        return statuses

    def set_port_up(self, port: int, up: bool) -> None:
        self.device.set_port_up(port, up)
        log.info("port %d set %s", port, "up" if up else "down")

    # --- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        self.reactor.call_soon(self._housekeeping)
        self.reactor.start()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.server is not None:
            # No grace: a stopping switch answers nothing more; open streams are cancelled
            # at once (their clients see the switch go away, as with simple_switch_grpc).
            self.server.stop(grace=None).wait(STOP_TIMEOUT_S)
        self.reactor.stop()
        for pcap in self.pcaps.values():
            pcap.close()


EXIT_CODES: dict[type[BaseException], int] = {
    ServerError: EXIT_USAGE,  # the command line, a TLS file, the program: bad input
    P4SourceError: EXIT_USAGE,
    DeviceConfigError: EXIT_USAGE,
    CompileLimitError: EXIT_USAGE,
    DeviceError: EXIT_USAGE,  # the gRPC address given cannot be bound (in use)
    PortIOError: EXIT_USAGE,  # an interface given cannot be opened
}
"""clikit's convention (docs/exit-codes.md): 2 a bad invocation, input file or an address /
interface the command line names that cannot be had; any other error 1."""


def main(argv: list[str] | None = None) -> int:
    """Exit status (clikit's convention, docs/exit-codes.md): 0 stopped by SIGTERM, 2 a bad
    command line, a program / TLS file that cannot be loaded or an address / interface that
    cannot be opened, 1 anything else that fails, 130 stopped by Ctrl-C (SIGINT); never a
    traceback."""
    args = sys.argv[1:] if argv is None else argv
    return run_main(
        PROG,
        lambda: _serve(args),
        expected=(P4EmuError,),
        codes=EXIT_CODES,
        message=lambda exc: str(getattr(exc, "message", exc)).removeprefix(f"{PROG}: "),
    )


def _serve(args: list[str]) -> int:
    options = parse_options(args)
    configure_logging(options)
    # a switch answers SetForwardingPipelineConfig at once: a program whose compiled module
    # is not cached yet runs pure while a detached child builds it (p4emu.backend.native)
    build_in_background()
    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        received.append(signum)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    process = SwitchProcess(options)
    process.start()
    ports = ", ".join(f"{p}@{d.description}" for p, d in sorted(process.drivers.items())) or "none"
    program = options.program or "no program (--no-p4)"
    host = options.grpc_host if ":" not in options.grpc_host else f"[{options.grpc_host}]"
    tls = options.tls
    security = "" if tls is None else " (mutual TLS)" if tls.with_client_auth else " (TLS)"
    ready = (
        f"ready: device {options.device_id}, P4Runtime on {host}:{process.grpc_port}{security}, "
        f"ports {ports}, {program}"
    )
    log.info("%s", ready)
    print(f"{PROG} {ready}", flush=True)
    try:
        stop.wait()  # a signal handler sets it; the wait wakes at once
    finally:
        process.close()
    log.info("stopped")
    _exit_now(EXIT_INTERRUPTED if received and received[0] == signal.SIGINT else EXIT_OK)
    return EXIT_OK


def _exit_now(code: int) -> None:
    """Ends the process once everything is closed and flushed.

    Tearing down the interpreter (modules, the compiled pipeline, gRPC's core) takes
    200-400 ms on a busy machine and achieves nothing for a process that is leaving; a
    stopped switch must be gone within 200 ms of SIGTERM (docs/p4emu-switch.md).
    """
    remove_workspace()  # os._exit skips atexit: the bundles of a cancelled push go here
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
