"""The same control-plane writes and packets into p4emu and into BMv2's simple_switch_grpc.

p4emu side: an STF test runs on :class:`p4emu.stf.runner.StfTarget` as usual, and every
P4Runtime update it wrote successfully, every packet it sent and every frame that came out
are recorded. BMv2 side: the program is compiled by the real p4c (BMv2 JSON + P4Info), a
``simple_switch_grpc --use-files`` is started (each port reads ``pN_in.pcap`` and writes
``pN_out.pcap``), the recorded updates are written over P4Runtime (p4emu's P4Info equals
p4c's, so the ids agree) and the recorded packets are replayed from the pcap files.

Binaries come from PATH or ``$MRC_P4LANG_BIN`` (tests/p4lang_tools.py).
"""

from __future__ import annotations

import hashlib
import select
import socket
import subprocess
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from finsy.proto import p4r, rpc_code
from p4lang_tools import find_tool

from p4emu.io.pcap import PcapWriter, read_pcap
from p4emu.p4info import read_p4info
from p4emu.server.client import P4RuntimeClient
from p4emu.stf.parser import parse_stf
from p4emu.stf.runner import StfOptions, StfRunner, StfTarget, options_from_text

PORTS = range(16)
"""Ports attached on both sides; frames p4emu sends elsewhere are ignored (as on BMv2,
where a port with no interface drops them)."""

START_DELAY_S = 6
"""``--use-files`` delay: BMv2 starts reading the pcap files this long after it starts; the
pipeline and the entries must be written before (checked)."""

QUIET_S = 1.5
"""Output is complete when no pcap file has grown for this long."""


@dataclass
class Recording:
    updates: list[p4r.Update] = field(default_factory=list)
    packets: list[tuple[int, bytes]] = field(default_factory=list)
    outputs: list[tuple[int, bytes]] = field(default_factory=list)


class RecordingTarget(StfTarget):
    """An StfTarget that records what goes in and out (writes must precede packets)."""

    def __init__(self, program: str | Path, options: StfOptions) -> None:
        super().__init__(program, options)
        self.recording = Recording()
        write = self.state.write

        def recording_write(updates):
            errors = write(updates)
            for update, error in zip(updates, errors, strict=True):
                if error.canonical_code == rpc_code.OK:
                    if self.recording.packets:
                        raise AssertionError("the BMv2 replay needs every write before packets")
                    self.recording.updates.append(update)
            return errors

        self.state.write = recording_write  # type: ignore[method-assign]

    def send(self, port: int, data: bytes) -> None:
        self.recording.packets.append((port, data))
        super().send(port, data)

    def collect(self) -> list[tuple[int, bytes]]:
        out = super().collect()
        self.recording.outputs.extend((p, d) for p, d in out if p in PORTS)
        return out


def run_stf_recorded(program: Path, stf: Path) -> tuple[bool, str, Recording]:
    """Run ``stf`` on p4emu; returns (passed, report, recording)."""
    text = stf.read_text(encoding="utf-8")
    options = StfOptions()
    options_from_text(text, str(stf), options)
    target = RecordingTarget(program, options)
    result = StfRunner(target, str(stf)).run(parse_stf(text, str(stf)))
    return result.passed, result.report(), target.recording


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def compile_with_p4c(program: Path, out: Path, extra: Sequence[str] = ()) -> tuple[Path, Path]:
    """(BMv2 JSON, P4Info text) of ``program`` compiled by p4c (with ``extra`` options,
    e.g. ``-Idir``) into ``out``."""
    p4c = find_tool("p4c")
    assert p4c is not None
    p4info = out / f"{program.stem}.p4info.txtpb"
    json_path = out / f"{program.stem}.json"
    key = (str(program.resolve()), hashlib.sha256(program.read_bytes()).hexdigest(), *extra)
    cached = _COMPILED.get(key)
    if cached is not None:  # the same program compiled before in this process
        json_path.write_bytes(cached[0])
        p4info.write_bytes(cached[1])
        return json_path, p4info
    result = subprocess.run(
        [p4c, "--target", "bmv2", "--arch", "v1model", "--p4runtime-files", str(p4info),
         *extra, "-o", str(out), str(program)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise AssertionError(f"p4c rejects {program}:\n{result.stderr}")
    _COMPILED[key] = (json_path.read_bytes(), p4info.read_bytes())
    return json_path, p4info


_COMPILED: dict[tuple[str, ...], tuple[bytes, bytes]] = {}
"""p4c's outputs per (program, its sha256, options): the corpus and P4Testgen tests compile
the same programs (a program's includes are taken as unchanged within one process)."""


def run_on_bmv2(
    program: Path,
    updates: Sequence[p4r.Update],
    packets: Sequence[tuple[int, bytes]],
    workdir: Path,
    target_options: Sequence[str] = (),
    expected_frames: int = 0,
) -> list[tuple[int, bytes]]:
    """Frames BMv2 sends, per port in order, for ``packets`` after ``updates``; waits (up to
    ``MISSING_FRAMES_WAIT_S``) for at least ``expected_frames`` (what p4emu sent) before the
    quiet time ends the run, so a slow BMv2 on a loaded machine is not read as drops."""
    binary = find_tool("simple_switch_grpc")
    assert binary is not None
    json_path, p4info_path = compile_with_p4c(program, workdir)
    for port in PORTS:
        writer = PcapWriter(workdir / f"p{port}_in.pcap")
        for index, (in_port, data) in enumerate(packets):
            if in_port == port:
                writer.write(data, 1_000_000 + 20_000 * index)  # 20 ms apart, in send order
        writer.close()
    grpc_port, thrift_port = _free_port(), _free_port()
    command = [binary, "--use-files", str(START_DELAY_S), "--log-level", "off",
               "--thrift-port", str(thrift_port)]  # fmt: skip
    for port in PORTS:
        command += ["-i", f"{port}@p{port}"]
    command += [str(json_path), "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]
    command += list(target_options)  # simple_switch_grpc's own (--cpu-port, --priority-queues)
    started = time.monotonic()
    process = subprocess.Popen(
        command, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        client = P4RuntimeClient(f"127.0.0.1:{grpc_port}", device_id=0)
        client.connect(timeout=20)
        try:
            client.set_pipeline(read_p4info(p4info_path), json_path.read_bytes())
            for update in updates:
                client.write([(update.type, update.entity)])
        finally:
            client.close()
        elapsed = time.monotonic() - started
        if elapsed >= START_DELAY_S:
            raise AssertionError(
                f"configuring BMv2 took {elapsed:.1f} s, longer than the --use-files delay"
            )
        time.sleep(START_DELAY_S - elapsed)
        _wait_quiet(workdir, process, expected_frames)
    finally:
        process.terminate()
        try:
            _, stderr = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
    if process.returncode not in (0, -15):  # exited by itself: BMv2 crashed
        raise Bmv2Crash(process.returncode, stderr.decode(errors="replace")[-2000:])
    outputs: list[tuple[int, bytes]] = []
    for port in PORTS:
        path = workdir / f"p{port}_out.pcap"
        if path.exists() and path.stat().st_size:
            outputs.extend((port, data) for _, data in read_pcap(path))
    return outputs


class Bmv2Crash(AssertionError):
    """simple_switch_grpc stopped by itself (BMv2 aborts on some run-time errors)."""

    def __init__(self, status: int, stderr: str) -> None:
        self.status = status
        self.stderr = stderr
        super().__init__(f"simple_switch_grpc stopped with status {status}: {stderr}")


PACKET_GAP_S = 0.03
"""Quiet time after a packet sent over veth ports before the next one."""

FRAME_WAIT_S = 2.0
"""Longest wait for the frames a packet should produce (a loaded machine)."""


def run_on_bmv2_veth(
    program: Path,
    updates: Sequence[p4r.Update],
    packets: Sequence[tuple[int, bytes]],
    workdir: Path,
    ports: Sequence[int],
    target_options: Sequence[str] = (),
    expected_counts: Sequence[int] | None = None,
) -> list[tuple[int, bytes]]:
    """Like :func:`run_on_bmv2` over veth pairs (needs root): packets go in one at a time so
    queues never build up (pcap replay sends a burst). ``expected_counts[i]`` (what p4emu
    sent for packet i) only paces the run: the next packet goes once that many frames came
    out (at most ``FRAME_WAIT_S``), else after ``PACKET_GAP_S`` of quiet; the comparison
    itself is the caller's."""
    binary = find_tool("simple_switch_grpc")
    assert binary is not None
    json_path, p4info_path = compile_with_p4c(program, workdir)
    tag = uuid.uuid4().hex[:6]
    pairs = {port: (f"c{tag}s{port}", f"c{tag}t{port}") for port in ports}
    created: list[str] = []
    sockets: dict[int, socket.socket] = {}
    process = None
    try:
        for switch_end, test_end in pairs.values():
            subprocess.run(
                ["ip", "link", "add", switch_end, "type", "veth", "peer", "name", test_end],
                check=True, capture_output=True,
            )  # fmt: skip
            created.append(switch_end)
            for end in (switch_end, test_end):
                _sysctl(f"net/ipv6/conf/{end}/disable_ipv6", "1")
                subprocess.run(["ip", "link", "set", end, "up"], check=True, capture_output=True)
        for port, (_, test_end) in pairs.items():
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
            sock.bind((test_end, 0))
            sock.setblocking(False)
            sockets[port] = sock
        grpc_port, thrift_port = _free_port(), _free_port()
        command = [binary, "--log-level", "off", "--thrift-port", str(thrift_port)]
        for port, (switch_end, _) in pairs.items():
            command += ["-i", f"{port}@{switch_end}"]
        command += [str(json_path), "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]
        command += list(target_options)
        process = subprocess.Popen(
            command, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        client = P4RuntimeClient(f"127.0.0.1:{grpc_port}", device_id=0)
        client.connect(timeout=20)
        try:
            client.set_pipeline(read_p4info(p4info_path), json_path.read_bytes())
            for update in updates:
                client.write([(update.type, update.entity)])
            outputs: list[tuple[int, bytes]] = []
            _drain(sockets, outputs, 0.2)
            outputs.clear()  # nothing the kernel or BMv2 sent before the test counts
            for index, (port, data) in enumerate(packets):
                sockets[port].send(data)
                want = len(outputs) + (expected_counts[index] if expected_counts else 0)
                deadline = time.monotonic() + FRAME_WAIT_S
                while len(outputs) < want and time.monotonic() < deadline:
                    _drain(sockets, outputs, PACKET_GAP_S)
                _drain(sockets, outputs, PACKET_GAP_S)
            _drain(sockets, outputs, QUIET_S)
        finally:
            client.close()
        if process.poll() is not None:
            raise Bmv2Crash(process.returncode, process.communicate()[1].decode(errors="replace"))
        return outputs
    finally:
        for sock in sockets.values():
            sock.close()
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
        for name in created:
            subprocess.run(["ip", "link", "del", name], check=False, capture_output=True)


def _sysctl(key: str, value: str) -> None:
    with open(f"/proc/sys/{key}", "w", encoding="ascii") as stream:
        stream.write(value)


def _drain(sockets: dict[int, socket.socket], into: list[tuple[int, bytes]], wait: float) -> None:
    """Read every frame that arrives on the test ends within ``wait`` seconds."""
    deadline = time.monotonic() + wait
    by_fd = {sock.fileno(): port for port, sock in sockets.items()}
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        ready, _, _ = select.select(list(by_fd), [], [], left)
        for fd in ready:
            port = by_fd[fd]
            try:
                data, address = sockets[port].recvfrom(65536)
            except BlockingIOError:
                continue
            if address[2] != socket.PACKET_OUTGOING:
                into.append((port, data))


def veth_missing() -> str | None:
    """Why veth ports cannot be made here, or None."""
    import capabilities  # tests/capabilities.py: probed, not guessed from the user id

    return capabilities.veth_missing()


MISSING_FRAMES_WAIT_S = 30.0
"""Longest wait for BMv2 to send as many frames as p4emu did (a loaded machine)."""


def _frames_out(workdir: Path) -> int:
    paths = [workdir / f"p{port}_out.pcap" for port in PORTS]
    return sum(
        len(list(read_pcap(path))) for path in paths if path.exists() and path.stat().st_size
    )


def _wait_quiet(workdir: Path, process: subprocess.Popen, expected_frames: int = 0) -> None:
    def sizes() -> tuple[int, ...]:
        return tuple(
            (workdir / f"p{port}_out.pcap").stat().st_size
            if (workdir / f"p{port}_out.pcap").exists()
            else 0
            for port in PORTS
        )

    last, since = sizes(), time.monotonic()
    started, deadline = since, since + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return  # reported by the caller
        time.sleep(0.2)
        now = sizes()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= QUIET_S:
            waited = time.monotonic() - started
            if waited >= MISSING_FRAMES_WAIT_S or _frames_out(workdir) >= expected_frames:
                return
    raise AssertionError("BMv2 kept sending for 120 s")


def by_port(frames: Sequence[tuple[int, bytes]]) -> dict[int, list[str]]:
    """Frames grouped per port (order kept), as hex for readable assertion diffs."""
    grouped: dict[int, list[str]] = {}
    for port, data in frames:
        grouped.setdefault(port, []).append(data.hex())
    return grouped


def tools_missing() -> str | None:
    """Why the BMv2 differential cannot run here, or None."""
    for tool in ("p4c", "simple_switch_grpc"):
        if find_tool(tool) is None:
            from p4lang_tools import missing_reason

            return missing_reason(tool)
    return None


__all__ = ["Recording", "by_port", "run_on_bmv2", "run_stf_recorded", "tools_missing"]
