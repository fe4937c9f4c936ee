"""Run p4c STF tests on BMv2 (``simple_switch_grpc`` over veth pairs) and on p4emu, and
compare their verdicts.

BMv2's verdict on an STF test is what p4c's runner (``bmv2stf``) decides: whether the
expected packets came out of the ports the STF names. Here the STF is executed by p4emu's
own :class:`~p4emu.stf.runner.StfRunner` against a :class:`Bmv2StfTarget`: the runner
resolves names against the program (p4emu's P4Info equals p4c's, so the ids agree) and
writes entries, default actions, PRE entries, counters, registers and meters as P4Runtime
updates, which go to BMv2 over gRPC; packets go in and out over BMv2's nanomsg packet
interface (``--packet-in``, :class:`NanomsgPorts`: every port, frames of any length, runts
included, as the pcap files of p4c's runner; no root needed). The same comparison of
expected and received packets then gives BMv2's verdict.

One ``simple_switch_grpc`` (per set of switch options) serves every test of every program
of a process: before each test the program's pipeline is set (``SetForwardingPipelineConfig``),
which gives BMv2 a fresh state (no entries, registers and counters at 0, initial default
actions), as p4c's runner starts a new switch per test.
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import os
import shutil
import struct
import subprocess
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bmv2_harness import Bmv2Crash, _free_port, compile_with_p4c
from finsy.proto import p4r, rpc_code
from p4lang_tools import find_tool

from p4emu.exceptions import P4EmuError
from p4emu.frontend import CheckedProgram, load_program
from p4emu.p4info import read_p4info
from p4emu.p4rt import P4RuntimeError
from p4emu.runtime.objects import ProgramObjects
from p4emu.server.client import ClientError, P4RuntimeClient, WriteError
from p4emu.stf.parser import StfCommand, StfExpect, parse_stf
from p4emu.stf.runner import StfOptions, StfRunner, StfTarget, options_from_text

PACKET_GAP_S = 0.05
"""Quiet time on the test ends after a packet before the next command (keeps the order of
frames across ports as BMv2 sends them)."""

SETTLE_QUIET_S = 0.4
"""Quiet time that ends a test (``wait`` and the end of the file): no frame for this long."""

EXPECTED_WAIT_S = 5.0
"""Longest wait for the frames the STF expects (a loaded machine) before the quiet time."""

PASS, FAIL, ERROR, CRASH = "pass", "fail", "error", "crash"
"""Verdicts; ``crash``: BMv2 stopped (it aborts on some run-time errors, e.g. a header-stack
index out of range)."""


def expected_frames(commands: Sequence[StfCommand]) -> int:
    return sum(1 for c in commands if isinstance(c, StfExpect) and c.pattern is not None)


@dataclass
class Verdict:
    """One target's outcome of one STF test: ``pass``, ``fail``, ``error`` (a command was
    refused) or ``crash`` (BMv2 stopped)."""

    outcome: str
    detail: str = ""


class _Bmv2State:
    """Stands for :class:`p4emu.p4rt.P4RuntimeState`: writes and reads go to BMv2."""

    def __init__(self, client: P4RuntimeClient) -> None:
        self.client = client

    def write(self, updates: Sequence[p4r.Update]) -> list[p4r.Error]:
        errors = []
        for update in updates:
            try:
                self.client.write([(update.type, update.entity)])
            except WriteError as error:
                errors.append(
                    error.errors[0]
                    if error.errors
                    else p4r.Error(canonical_code=rpc_code.UNKNOWN, message=str(error))
                )
            else:
                errors.append(p4r.Error(canonical_code=rpc_code.OK))
        return errors

    def read(self, entity: p4r.Entity) -> list[p4r.Entity]:
        try:
            return self.client.read(entity)
        except ClientError as error:
            raise P4RuntimeError(rpc_code.UNKNOWN, str(error)) from None


NANOMSG = "libnanomsg.so.5"
"""The nanomsg library BMv2 1.15 is linked with (it needs it: Debian's ``libnanomsg5``)."""

_AF_SP, _NN_PAIR, _NN_SOL_SOCKET, _NN_RCVTIMEO, _NN_DONTWAIT = 1, 16, 0, 5, 1
_HEADER = struct.Struct("=iii")  # BMv2 packet-in message: type, port, length (native ints)
_PACKET_IN, _PACKET_OUT = 3, 4
_MAX_FRAME = 65536


class NanomsgPorts:
    """BMv2's ``--packet-in`` interface: a nanomsg PAIR socket carrying every port's frames
    (a 12-byte header, then the frame), for any port number and any frame length."""

    def __init__(self, address: str) -> None:
        try:
            self.nn = ctypes.CDLL(ctypes.util.find_library("nanomsg") or NANOMSG)
        except OSError as error:
            raise AssertionError(f"nanomsg ({NANOMSG}) cannot be loaded: {error}") from None
        self.nn.nn_recv.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        self.nn.nn_send.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
        self.nn.nn_strerror.restype = ctypes.c_char_p
        self.socket = self.nn.nn_socket(_AF_SP, _NN_PAIR)
        if self.socket < 0 or self.nn.nn_connect(self.socket, address.encode()) < 0:
            raise AssertionError(f"nanomsg: cannot connect to {address}: {self._error()}")
        self.buffer = ctypes.create_string_buffer(_HEADER.size + _MAX_FRAME)

    def _error(self) -> str:
        return self.nn.nn_strerror(self.nn.nn_errno()).decode()

    def send(self, port: int, data: bytes) -> None:
        message = _HEADER.pack(_PACKET_IN, port, len(data)) + data
        if self.nn.nn_send(self.socket, message, len(message), 0) != len(message):
            raise AssertionError(f"nanomsg: sending a frame to port {port}: {self._error()}")

    def receive(self, wait: float) -> tuple[int, bytes] | None:
        """The next frame BMv2 sends (port, bytes), or None after ``wait`` seconds."""
        timeout = ctypes.c_int(max(1, int(wait * 1000)))
        self.nn.nn_setsockopt(
            self.socket, _NN_SOL_SOCKET, _NN_RCVTIMEO, ctypes.byref(timeout), ctypes.sizeof(timeout)
        )
        while True:
            size = self.nn.nn_recv(self.socket, self.buffer, len(self.buffer), 0)
            if size < 0:
                return None  # timed out
            kind, port, length = _HEADER.unpack_from(self.buffer.raw)
            if kind == _PACKET_OUT:
                return port, self.buffer.raw[_HEADER.size : _HEADER.size + length]

    def close(self) -> None:
        self.nn.nn_close(self.socket)


class Bmv2StfTarget(StfTarget):
    """An STF target whose switch is a running BMv2 (see :class:`Bmv2Switch`)."""

    def __init__(self, switch: Bmv2Switch, objects: ProgramObjects, expected: int) -> None:
        self.bmv2 = switch
        self.objects = objects
        self.state = _Bmv2State(switch.client)  # type: ignore[assignment]
        self.expected = expected
        self.out: list[tuple[int, bytes]] = []
        self.received = 0

    def send(self, port: int, data: bytes) -> None:
        self.bmv2.ports.send(port, data)
        self._drain(PACKET_GAP_S)

    def _drain(self, wait: float) -> None:
        """Frames until none came for ``wait`` seconds."""
        while (frame := self.bmv2.ports.receive(wait)) is not None:
            self.out.append(frame)
            self.received += 1

    def settle(self) -> None:
        deadline = time.monotonic() + EXPECTED_WAIT_S
        while self.received < self.expected and time.monotonic() < deadline:
            frame = self.bmv2.ports.receive(deadline - time.monotonic())
            if frame is not None:
                self.out.append(frame)
                self.received += 1
        self._drain(SETTLE_QUIET_S)

    def collect(self) -> list[tuple[int, bytes]]:
        out, self.out = self.out, []
        return out


@dataclass
class Bmv2Switch:
    """A ``simple_switch_grpc`` with its nanomsg packet interface (a context manager: the
    process goes away at the end). :meth:`load` gives it a program (compiled by p4c), so
    one switch runs the tests of many programs (:func:`shared_switch`)."""

    workdir: Path
    target_options: Sequence[str] = ()
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)

    def __enter__(self) -> Bmv2Switch:
        binary = find_tool("simple_switch_grpc")
        assert binary is not None
        # a short path: a unix socket's name is at most 107 bytes
        self.ipc_path = Path("/tmp") / f"mrc-bmv2-{uuid.uuid4().hex[:12]}.ipc"
        grpc_port, thrift_port = _free_port(), _free_port()
        command = [binary, "--log-level", "off", "--thrift-port", str(thrift_port),
                   "--packet-in", f"ipc://{self.ipc_path}", "--no-p4",
                   "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}",
                   *self.target_options]  # fmt: skip
        self.process = subprocess.Popen(
            command, cwd=self.workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            self.client = P4RuntimeClient(f"127.0.0.1:{grpc_port}", device_id=0)
            self.client.connect(timeout=30)
            self.ports = NanomsgPorts(f"ipc://{self.ipc_path}")
        except BaseException:
            self.__exit__()
            raise
        return self

    def load(self, program: Path, workdir: Path, include_dirs: Sequence[Path] = ()) -> None:
        """Compile ``program`` with p4c into ``workdir``: the pipeline of the next tests."""
        self.use(*compile_with_p4c(program, workdir, [f"-I{d}" for d in include_dirs]))

    def use(self, json_path: Path, p4info_path: Path) -> None:
        """p4c's outputs (compiled elsewhere, e.g. ahead): the pipeline of the next tests."""
        self.json_path = json_path
        self.p4info = read_p4info(p4info_path)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def reset(self) -> None:
        """A fresh BMv2 state: the pipeline set again, frames still in flight discarded."""
        self.client.set_pipeline(self.p4info, self.json_path.read_bytes())
        while self.ports.receive(0.02) is not None:
            pass

    def run(self, commands: Sequence[StfCommand], objects: ProgramObjects, file: str) -> Verdict:
        """BMv2's verdict on one STF test (parsed ``commands``)."""
        self.reset()
        target = Bmv2StfTarget(self, objects, expected_frames(commands))
        try:
            result = StfRunner(target, file).run(commands)
        except P4EmuError as error:
            self._check_alive()
            return Verdict(ERROR, str(error))
        self._check_alive()
        return Verdict(PASS if result.passed else FAIL, result.report())

    def _check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            stderr = self.process.communicate()[1].decode(errors="replace")
            raise Bmv2Crash(self.process.returncode, stderr[-2000:])

    def __exit__(self, *exc: object) -> None:
        ports = getattr(self, "ports", None)
        if ports is not None:
            ports.close()
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.communicate()
        ipc = getattr(self, "ipc_path", None)
        if ipc is not None and ipc.exists():
            os.unlink(ipc)


_SHARED: dict[tuple[str, ...], Bmv2Switch] = {}


def shared_switch(target_options: Sequence[str] = ()) -> Bmv2Switch:
    """A running switch with ``target_options``, started once per process and stopped when
    the process exits (started again if it stopped, e.g. after BMv2 aborted)."""
    key = tuple(target_options)
    switch = _SHARED.get(key)
    if switch is None or not switch.alive:
        if switch is not None:
            switch.__exit__()
        workdir = Path(tempfile.mkdtemp(prefix="mrc-bmv2-"))
        switch = Bmv2Switch(workdir, target_options).__enter__()
        _SHARED[key] = switch
        atexit.register(_stop, switch)
    return switch


def _stop(switch: Bmv2Switch) -> None:
    switch.__exit__()
    shutil.rmtree(switch.workdir, ignore_errors=True)


def p4emu_verdict(program: Path | CheckedProgram, stf: Path) -> Verdict:
    """p4emu's verdict on an STF test (``p4emu stf`` with BMv2's runner defaults);
    ``program`` may be loaded once for many tests (:func:`p4emu.frontend.load_program`)."""
    text = stf.read_text(encoding="utf-8")
    options = StfOptions()
    try:
        options_from_text(text, str(stf), options)
        target = StfTarget(program, options)  # type: ignore[arg-type]
        result = StfRunner(target, str(stf)).run(parse_stf(text, str(stf)))
    except P4EmuError as error:
        return Verdict(ERROR, str(error))
    return Verdict(PASS if result.passed else FAIL, result.report())


@dataclass
class VerdictPair:
    stf: Path
    p4emu: Verdict
    bmv2: Verdict

    @property
    def same(self) -> bool:
        return self.p4emu.outcome == self.bmv2.outcome


def compare_stfs(
    program: Path,
    stfs: Sequence[Path],
    workdir: Path,
    include_dirs: Sequence[Path] = (),
    target_options: Sequence[str] = (),
) -> list[VerdictPair]:
    """p4emu's and BMv2's verdicts on every STF test in ``stfs`` of ``program``."""
    parsed = {stf: parse_stf(stf.read_text(encoding="utf-8"), str(stf)) for stf in stfs}
    checked = load_program(program, tuple(str(d) for d in include_dirs))
    objects = StfTarget(checked, StfOptions()).objects  # type: ignore[arg-type]
    emu = {stf: p4emu_verdict(checked, stf) for stf in stfs}
    pairs = []
    for stf in stfs:
        bmv2 = shared_switch(target_options)
        bmv2.load(program, workdir, include_dirs)
        try:
            verdict = bmv2.run(parsed[stf], objects, str(stf))
        except Bmv2Crash as crash:  # the next test starts another switch
            verdict = Verdict(CRASH, crash.stderr)
        pairs.append(VerdictPair(stf, emu[stf], verdict))
    return pairs


__all__ = ["Bmv2Switch", "Verdict", "VerdictPair", "compare_stfs", "p4emu_verdict", "shared_switch"]
