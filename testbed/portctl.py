"""Switch port state through each switch's own management channel — not P4Runtime, so a
controller holding primary arbitration (``mrc-controller watch``) and ``mrc-testbed link``
work at the same time, and nothing the controller writes can revive a cut link.

- **p4emu-switch**: gNMI ``Set /interfaces/interface[name=PORT]/config/enabled`` on the
  switch's gRPC address (the gNMI service is served beside P4Runtime, the way Stratum does
  it; docs/p4emu-switch.md), through p4emu's own client (``PortClient``). A disabled port
  loses frames in both directions, as a cut cable. ``Get .../state/oper-status`` reads it
  back.
- **BMv2** (``simple_switch_grpc``, Mininet mode): it has no gNMI; its runtime CLI over
  Thrift does the same job: ``port_remove PORT`` detaches the port (nothing is received
  from or sent to its veth), ``port_add IFACE PORT`` attaches it again.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from p4emu.server.client import ClientError, PortClient
from testbed.exceptions import ModeError, PortControlError

DEFAULT_TIMEOUT_S = 10.0
# A kept BMv2 CLI's start (Python, the switch's JSON fetched and parsed) before the traffic:
# it took more than 10 s at load average 15-20 on a 2-core machine (a link-cuts run failed
# on it); commands on a running one keep DEFAULT_TIMEOUT_S.
SESSION_START_TIMEOUT_S = 60.0
BMV2_CLI = "simple_switch_CLI"


def gnmi_set_ports(
    address: str, ports: Iterable[int], up: bool, timeout: float = DEFAULT_TIMEOUT_S
) -> None:
    """Enables (``up``) or disables ``ports`` of the switch at ``address``, in one Set
    (p4emu's own gNMI client, :class:`p4emu.server.client.PortClient`)."""
    changes: dict[str | int, bool] = {port: up for port in sorted(set(ports))}
    if changes:
        try:
            with PortClient(address, timeout=timeout) as client:
                client.set_ports(changes)
        except ClientError as exc:
            raise PortControlError(str(exc)) from None


def gnmi_ports(
    address: str, names: Mapping[str, int], timeout: float = DEFAULT_TIMEOUT_S
) -> dict[int, dict[str, Any]]:
    """The ports of the switch at ``address``, by number: ``oper-status`` ("UP"/"DOWN") and
    counters (``in-pkts``, ``out-pkts``). ``names`` maps the names the switch reports (the
    port number, or its interface) to port numbers."""
    try:
        with PortClient(address, timeout=timeout) as client:
            states = client.ports()
            counters = client.counters()
    except ClientError as exc:
        raise PortControlError(str(exc)) from None
    return {
        names[name]: {"oper-status": "UP" if up else "DOWN", **counters.get(name, {})}
        for name, up in states.items()
        if name in names
    }


def bmv2_cli() -> list[str]:
    """The command that runs BMv2's runtime CLI: ``simple_switch_CLI`` on PATH (or next to
    ``simple_switch_grpc``), run by Debian's python3 with BMv2's Python modules beside it
    (p4lang builds ship them under ``lib/python3/site-packages``)."""
    found = shutil.which(BMV2_CLI)
    if found is None:
        grpc_switch = shutil.which("simple_switch_grpc")
        if grpc_switch is not None and (Path(grpc_switch).parent / BMV2_CLI).is_file():
            found = str(Path(grpc_switch).parent / BMV2_CLI)
    if found is None:
        raise ModeError(
            f"link and port changes on BMv2 need {BMV2_CLI} (BMv2's runtime CLI) on PATH"
        )
    python = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
    return [python, found]


def _bmv2_env(cli: list[str]) -> dict[str, str]:
    env = dict(os.environ)
    modules = Path(cli[-1]).resolve().parent.parent / "lib" / "python3" / "site-packages"
    if modules.is_dir():
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(modules), env.get("PYTHONPATH")]))
    return env


def failed_lines(output: str) -> list[str]:
    """The lines of BMv2 runtime CLI output that report a failure: ``Error: ...`` and the
    device manager's ``Invalid device manager operation (ERROR)``."""
    return [x for x in output.splitlines() if "Error" in x or "rror:" in x or "(ERROR)" in x]


def _bmv2_run(thrift_port: int, commands: str, timeout: float) -> str:
    """Runs BMv2 runtime CLI ``commands`` against the switch at ``thrift_port``; its
    output, or PortControlError naming the failing command."""
    cli = bmv2_cli()
    try:
        result = subprocess.run(
            [*cli, "--thrift-port", str(thrift_port)],
            input=commands,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_bmv2_env(cli),
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise PortControlError(
            f"{BMV2_CLI} --thrift-port {thrift_port} did not finish in {timeout:g} s"
        ) from None
    output = result.stdout + result.stderr
    failed = failed_lines(output)
    if result.returncode != 0 or failed:
        detail = "; ".join(failed) or output.strip()[-300:]
        raise PortControlError(f"{BMV2_CLI} --thrift-port {thrift_port}: {detail}")
    return output


def bmv2_port_commands(interfaces: Mapping[int, str], up: bool) -> str:
    """``port_add IFACE PORT`` (up) or ``port_remove PORT`` (down) lines for each of
    ``interfaces`` (port -> veth)."""
    return "".join(
        f"port_add {iface} {port}\n" if up else f"port_remove {port}\n"
        for port, iface in sorted(interfaces.items())
    )


def bmv2_set_ports(
    thrift_port: int,
    interfaces: Mapping[int, str],
    up: bool,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> None:
    """``port_add IFACE PORT`` (up) or ``port_remove PORT`` (down) for each of
    ``interfaces`` (port -> veth) of the BMv2 switch whose Thrift server is ``thrift_port``."""
    if interfaces:
        _set_checked(lambda text: _bmv2_run(thrift_port, text, timeout), interfaces, up)


def _set_checked(run: Callable[[str], str], interfaces: Mapping[int, str], up: bool) -> None:
    """The port commands through ``run``; a refused one (BMv2 refuses to remove a port
    that is not attached, or to add one twice) is an error only if the port is not in
    the state asked for: repeating a change finishes it (docs/testbed.md, "Failures")."""
    try:
        run(bmv2_port_commands(interfaces, up))
    except PortControlError:
        attached = parse_show_ports(run("show_ports\n"))
        if any((port in attached) != up for port in interfaces):
            raise


class Bmv2Session:
    """One BMv2 runtime CLI kept running against a switch, for a caller that changes ports
    often and on time (a scenario's timeline): starting the CLI costs seconds (Python, the
    switch's JSON fetched and parsed; more than 10 s on a loaded 2-core machine), a command
    on a running one milliseconds. The CLI prints its prompt after every command, so each
    command's output is what comes before the next prompt; ``start_timeout`` bounds the
    first prompt, ``timeout`` each command's."""

    PROMPT = "RuntimeCmd: "

    def __init__(
        self,
        thrift_port: int,
        timeout: float = DEFAULT_TIMEOUT_S,
        start_timeout: float = SESSION_START_TIMEOUT_S,
    ) -> None:
        cli = bmv2_cli()
        self.thrift_port = thrift_port
        self.timeout = timeout
        self._lock = threading.Lock()  # one command at a time, whichever thread asks
        self.proc = subprocess.Popen(
            [*cli, "--thrift-port", str(thrift_port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=_bmv2_env(cli),
        )
        try:
            self._until_prompt(start_timeout)
        except PortControlError:
            self.close()
            raise

    def _until_prompt(self, timeout: float | None = None) -> str:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        data = b""
        # a selector, not select.select: a long-lived caller (scripts/verdicts-doc, many
        # Mininet fabrics in one process) may hold descriptors numbered above 1024
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while not data.endswith(self.PROMPT.encode()):
                left = deadline - time.monotonic()
                ready = sel.select(max(0.0, left))
                chunk = os.read(fd, 65536) if ready else b""
                if not chunk:
                    text = data.decode(errors="replace").strip()[-300:]
                    what = "did not answer" if not ready else "exited"
                    raise PortControlError(
                        f"{BMV2_CLI} --thrift-port {self.thrift_port} {what}"
                        + (f": {text}" if text else f" within {timeout:g} s")
                    )
                data += chunk
        return data.decode(errors="replace")[: -len(self.PROMPT)]

    def run(self, commands: str) -> str:
        """Each line of ``commands`` in turn; their output, or PortControlError naming the
        failing command."""
        with self._lock:
            return self._run(commands)

    def _run(self, commands: str) -> str:
        assert self.proc.stdin is not None
        out = []
        failures = []
        for line in commands.splitlines():  # every line runs, as in a one-shot CLI
            try:
                self.proc.stdin.write(line.encode() + b"\n")
                self.proc.stdin.flush()
            except OSError as exc:
                raise PortControlError(
                    f"{BMV2_CLI} --thrift-port {self.thrift_port}: {exc.strerror}"
                ) from None
            output = self._until_prompt()
            failures += [f"{line}: {x}" for x in failed_lines(output)]
            out.append(output)
        if failures:
            raise PortControlError(
                f"{BMV2_CLI} --thrift-port {self.thrift_port}: {'; '.join(failures)}"
            )
        return "".join(out)

    def set_ports(self, interfaces: Mapping[int, str], up: bool) -> None:
        if interfaces:
            _set_checked(self.run, interfaces, up)

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def parse_show_ports(output: str) -> dict[int, bool]:
    """``show_ports`` output -> attached port number -> status is UP."""
    ports: dict[int, bool] = {}
    for line in output.splitlines():
        fields = line.replace("RuntimeCmd:", " ").split()
        if len(fields) >= 3 and fields[0].isdigit():
            ports[int(fields[0])] = fields[2] == "UP"
    return ports


def bmv2_port_states(thrift_port: int, timeout: float = DEFAULT_TIMEOUT_S) -> dict[int, bool]:
    """The ports attached to the BMv2 switch at ``thrift_port``: number -> UP (a removed
    port is absent)."""
    return parse_show_ports(_bmv2_run(thrift_port, "show_ports\n", timeout))
