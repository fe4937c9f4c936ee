"""Digest data on BMv2 and on p4emu: the same samples for the same packets.

The packet corpus compares frames only; here the digest lists ``simple_switch_grpc`` sends
over P4Runtime (after a ``DigestEntry`` enables the digest) are compared with the samples
p4emu queues, for data naming fields of invalid headers and written after the call.
"""

from __future__ import annotations

import queue
import subprocess
import time
from pathlib import Path

import pytest
from bmv2_harness import START_DELAY_S, _free_port, compile_with_p4c, tools_missing
from finsy.proto import p4r
from p4lang_tools import find_tool

from p4emu.io.pcap import PcapWriter
from p4emu.p4info import read_p4info
from p4emu.server.client import P4RuntimeClient
from p4emu.switch import Switch

PROGRAM = Path(__file__).parent / "digests" / "invalid_header.p4"
PACKETS = [bytes.fromhex(data) for data in ("1100", "2201", "3302")]
DIGEST_WAIT_S = 60
"""Longest wait for the digest lists after the packets start (a loaded machine)."""


def digests_on_bmv2(program: Path, packets: list[bytes], workdir: Path) -> list[tuple[int, ...]]:
    """Samples of the one digest of ``program`` BMv2 sends for ``packets`` (port 0)."""
    binary = find_tool("simple_switch_grpc")
    assert binary is not None
    json_path, p4info_path = compile_with_p4c(program, workdir)
    for port in (0, 1):
        writer = PcapWriter(workdir / f"p{port}_in.pcap")
        for index, data in enumerate(packets if port == 0 else []):
            writer.write(data, 1_000_000 + 20_000 * index)
        writer.close()
    grpc_port, thrift_port = _free_port(), _free_port()
    command = [binary, "--use-files", str(START_DELAY_S), "--log-level", "off",
               "--thrift-port", str(thrift_port), "-i", "0@p0", "-i", "1@p1", str(json_path),
               "--", "--grpc-server-addr", f"127.0.0.1:{grpc_port}"]  # fmt: skip
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=workdir, stdout=subprocess.DEVNULL)
    samples: list[tuple[int, ...]] = []
    try:
        client = P4RuntimeClient(f"127.0.0.1:{grpc_port}", device_id=0)
        client.connect(timeout=20)
        try:
            info = read_p4info(p4info_path)
            client.set_pipeline(info, json_path.read_bytes())
            [digest] = info.digests
            config = p4r.DigestEntry.Config(max_timeout_ns=0, max_list_size=1, ack_timeout_ns=0)
            client.insert(
                p4r.Entity(
                    digest_entry=p4r.DigestEntry(digest_id=digest.preamble.id, config=config)
                )
            )
            assert time.monotonic() - started < START_DELAY_S, "BMv2 configured too late"
            deadline = time.monotonic() + START_DELAY_S + DIGEST_WAIT_S
            while len(samples) < len(packets) and time.monotonic() < deadline:
                try:
                    message = client.digests.get(timeout=1)
                except queue.Empty:
                    continue
                for data in message.data:
                    members = data.struct.members
                    samples.append(tuple(int.from_bytes(m.bitstring, "big") for m in members))
        finally:
            client.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
    return samples


@pytest.mark.bmv2
def test_digest_data_of_invalid_headers_is_what_bmv2_learns(tmp_path: Path) -> None:
    reason = tools_missing()
    if reason is not None:
        pytest.skip(reason)
    switch = Switch(PROGRAM)
    for data in PACKETS:
        switch.inject(0, data)
    ours = [sample for batch in switch.digest_queue.poll() for sample in batch.samples]
    assert ours == digests_on_bmv2(PROGRAM, PACKETS, tmp_path)
