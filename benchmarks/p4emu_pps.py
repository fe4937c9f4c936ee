"""p4emu forwarding throughput on the MRC switch program (SRv6 uSID, IPv6-in-IPv6).

Loads ``p4src/mrc_switch.p4`` into an in-process :class:`p4emu.switch.Switch`, installs a
realistic table population (a T0 of a 4-plane fabric: its own uSID, 64 uSID routes, 256
IPv6 LPM routes, 64 port configs and MAC rewrites), then forwards data packets (outer
IPv6 uSID carrier / inner IPv6 / UDP 4791 / BTH / RETH / 1 KB payload) received on
rotating ports and spread over all routes. Prints one JSON line: ``{"pps": ..., ...}``.

Usage: ``python benchmarks/p4emu_pps.py [--packets N] [--program PATH]``
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import struct
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from p4emu.p4rt import P4RuntimeState  # noqa: E402
from p4emu.p4rt_client.messages import EntityNames  # noqa: E402
from p4emu.p4rt_client.schema import KeyFieldValue  # noqa: E402
from p4emu.proto import p4r  # noqa: E402
from p4emu.runtime.clock import VirtualClock  # noqa: E402
from p4emu.switch import Switch  # noqa: E402

BLOCK = 0xFCBBBB00  # 32-bit uSID block
MY_USID = 0x1400
ETHERTYPE_IPV6 = 0x86DD


def build_switch(program: Path) -> Switch:
    """The switch with its table population, written through p4emu's P4Runtime layer
    (as the controller writes it), key fields and parameters in P4Info order."""
    switch = Switch(program, clock=VirtualClock(), priority_queues=8, cpu_port=510)
    names = EntityNames(switch.p4info)
    updates: list[p4r.Update] = []

    def insert(table: str, key: list[KeyFieldValue], action: str, args: list[int]) -> None:
        fields = names.schema.table(table).fields
        params = names.schema.action(action).params
        entity = names.table_entry(
            table,
            {f.name: value for f, value in zip(fields, key, strict=True)},
            action,
            {p.name: value for p, value in zip(params, args, strict=True)},
        )
        updates.append(p4r.Update(type=p4r.Update.INSERT, entity=entity))

    insert("MrcIngress.my_usid", [(BLOCK << 16) | MY_USID], "MrcIngress.usid_un", [])
    for i in range(64):
        insert("MrcIngress.usid_route", [0x1800 + i], "MrcIngress.forward", [1 + i % 32])
    for i in range(256):
        prefix = int(ipaddress.IPv6Address(f"fd00:{i:x}::"))
        insert("MrcIngress.ipv6_route", [(prefix, 32)], "MrcIngress.forward", [1 + i % 32])
    for port in range(1, 65):
        insert("MrcIngress.egress_port_config", [port], "MrcIngress.set_egress_port_config", [0, 1])
        insert(
            "MrcEgress.egress_port_mac",
            [port],
            "MrcEgress.set_port_macs",
            [0x0A0000001400 + port, 0x020100000000 + port],
        )
    errors = P4RuntimeState(switch.objects).write(updates)
    refused = [e.message for e in errors if e.canonical_code != 0]
    if refused:
        raise SystemExit(f"p4emu_pps: the switch refused {len(refused)} entries: {refused[0]}")
    return switch


def ipv6_header(
    dscp: int, ecn: int, flow: int, payload_len: int, nh: int, src: int, dst: int
) -> bytes:
    first = (6 << 28) | (dscp << 22) | (ecn << 20) | flow
    return (
        struct.pack(">IHBB", first, payload_len, nh, 64)
        + src.to_bytes(16, "big")
        + dst.to_bytes(16, "big")
    )


def build_packets(count: int) -> list[bytes]:
    packets = []
    payload = bytes(range(256)) * 4
    for i in range(count):
        next_usid = 0x1800 + i % 64
        carrier = (BLOCK << 96) | (MY_USID << 80) | (next_usid << 64) | (0xE201 << 48)
        bth = struct.pack(">BBHII", 0x0A, 0x40, 0xFFFF, 0x12, i & 0xFFFFFF)
        reth = struct.pack(">QII", 0x1000 + i * 1024, 0x55, 1024)
        udp = struct.pack(
            ">HHHH", 0xC000 | (i & 0x3FFF), 4791, 8 + len(bth) + len(reth) + len(payload), 0
        )
        l4 = udp + bth + reth + payload
        inner = ipv6_header(
            26, 2, i & 0xFFFF, len(l4), 17, 0xFD000000 << 96 | 1, 0xFD000000 << 96 | 2
        )
        outer = ipv6_header(
            26, 2, i & 0xFFFF, len(inner) + len(l4), 41, 0xFD000000 << 96 | 1, carrier
        )
        ether = (
            bytes.fromhex("0a0000001400")
            + bytes.fromhex("020100000001")
            + struct.pack(">H", ETHERTYPE_IPV6)
        )
        packets.append(ether + outer + inner + l4)
    return packets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=30000)
    parser.add_argument("--program", type=Path, default=ROOT / "p4src" / "mrc_switch.p4")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    switch = build_switch(args.program)
    load_s = time.perf_counter() - t0
    packets = build_packets(256)
    clock = switch.clock
    assert isinstance(clock, VirtualClock)

    # warm up (and check that packets really are forwarded)
    for i in range(200):
        switch.inject(1 + i % 32, packets[i % len(packets)])
    warm = switch.collect()
    if len(warm) != 200:
        print(json.dumps({"error": f"only {len(warm)} of 200 warm-up packets forwarded"}))
        return 1

    count = args.packets
    inject = switch.inject
    forwarded = 0
    start = time.perf_counter()
    cpu_start = time.process_time()
    for i in range(count):
        inject(1 + i % 32, packets[i & 255])
        if i & 1023 == 1023:
            clock.advance(10)  # 10 µs per 1024 packets keeps the queues drained
            forwarded += len(switch.collect())
    switch.run_until_idle()
    forwarded += len(switch.collect())
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    print(
        json.dumps(
            {
                "pps": round(count / elapsed),
                "pps_cpu": round(count / cpu) if cpu > 0 else None,  # robust on a busy host
                "packets": count,
                "forwarded": forwarded,
                "seconds": round(elapsed, 3),
                "cpu_seconds": round(cpu, 3),
                "us_per_packet": round(elapsed / count * 1e6, 2),
                "program": str(
                    args.program.relative_to(ROOT)
                    if args.program.is_relative_to(ROOT)
                    else args.program
                ),
                "packet_bytes": len(packets[0]),
                "compile_seconds": round(load_s, 3),
                "python": sys.version.split()[0],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
