"""The P4 program's copies of the wire format agree with mrc_wire.constants (the single
source of truth), its built-in queue thresholds and priorities with mrc_wire.queues, its
header layouts have the sizes docs/wire-format.md gives, and p4src/README.md documents
every table, counter and register the program declares."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mrc_wire import constants as c
from mrc_wire import queues as q
from mrc_wire.queues import QueueDepthError, queue_thresholds
from topologies.model import DEFAULT_QUEUE_PACKETS

P4SRC = Path(__file__).resolve().parents[2] / "p4src"
DEFINES = (P4SRC / "include" / "defines.p4").read_text(encoding="utf-8")
HEADERS = (P4SRC / "include" / "headers.p4").read_text(encoding="utf-8")
README = (P4SRC / "README.md").read_text(encoding="utf-8")
SOURCES = "\n".join(
    path.read_text(encoding="utf-8")
    for path in [P4SRC / "mrc_switch.p4", *P4SRC.glob("include/*.p4")]
)


def p4_constants(text: str) -> dict[str, tuple[int, int]]:
    """``const bit<W> NAME = VALUE;`` -> {NAME: (W, VALUE)}."""
    found = re.findall(r"const\s+bit<(\d+)>\s+(\w+)\s*=\s*(0x[0-9A-Fa-f]+|\d+)\s*;", text)
    return {name: (int(width), int(value, 0)) for width, name, value in found}


P4_CONSTS = p4_constants(DEFINES)

EXPECTED: dict[str, int] = {
    "ETHERTYPE_IPV6": c.ETHERTYPE_IPV6,
    "IPPROTO_IPV6": c.IPPROTO_IPV6,
    "IPPROTO_ROUTING": c.IPPROTO_ROUTING,
    "IPPROTO_UDP": c.IPPROTO_UDP,
    "SRH_ROUTING_TYPE": c.SRH_ROUTING_TYPE,
    "MRC_UDP_PORT": c.MRC_UDP_PORT,
    "OP_WRITE": c.Opcode.WRITE,
    "OP_WRITE_IMM": c.Opcode.WRITE_IMM,
    "OP_SACK": c.Opcode.SACK,
    "OP_NACK": c.Opcode.NACK,
    "OP_PROBE": c.Opcode.PROBE,
    "ECN_NOT_ECT": c.Ecn.NOT_ECT,
    "ECN_ECT1": c.Ecn.ECT1,
    "ECN_ECT0": c.Ecn.ECT0,
    "ECN_CE": c.Ecn.CE,
    "ETH_LEN": c.ETH_LEN,
    "IPV6_LEN": c.IPV6_LEN,
    "SRH_FIXED_LEN": c.SRH_FIXED_LEN,
    "UDP_LEN": c.UDP_LEN,
    "BTH_LEN": c.BTH_LEN,
    "TSETH_LEN": c.TSETH_LEN,
    "RETH_LEN": c.RETH_LEN,
    **{f"DSCP_{d.name}": int(d) for d in c.Dscp},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_p4_constant_matches_mrc_wire(name: str) -> None:
    assert name in P4_CONSTS, f"{name} missing from p4src/include/defines.p4"
    width, value = P4_CONSTS[name]
    assert value == EXPECTED[name], f"{name}: P4 has {value:#x}, mrc_wire {EXPECTED[name]:#x}"
    assert value < 1 << width, f"{name} = {value} does not fit bit<{width}>"


# The program's built-in per-class defaults are the thresholds of the topologies' default
# (and BMv2's) 64-packet queue.
DEFAULT_THRESHOLDS = queue_thresholds(DEFAULT_QUEUE_PACKETS)
EXPECTED_QUEUES: dict[str, int] = {
    "DEFAULT_ECN_MIN_QDEPTH": DEFAULT_THRESHOLDS.ecn_min_qdepth,
    "DEFAULT_ECN_MAX_QDEPTH": DEFAULT_THRESHOLDS.ecn_max_qdepth,
    "DEFAULT_ECN_MAX_PROB": q.ECN_MAX_PROB,
    "DEFAULT_TRIM_QDEPTH": DEFAULT_THRESHOLDS.trim_qdepth,
    "DEFAULT_QUEUE_LIMIT": DEFAULT_THRESHOLDS.queue_limit,
    "DATA_PRIORITY": q.DATA_PRIORITY,
    "DEFAULT_CONTROL_PRIORITY": q.DEFAULT_CONTROL_PRIORITY,
}


@pytest.mark.parametrize("name", sorted(EXPECTED_QUEUES))
def test_p4_queue_default_matches_mrc_wire_queues(name: str) -> None:
    assert name in P4_CONSTS, f"{name} missing from p4src/include/defines.p4"
    width, value = P4_CONSTS[name]
    assert value == EXPECTED_QUEUES[name], (
        f"{name}: P4 has {value}, mrc_wire.queues {EXPECTED_QUEUES[name]}"
    )
    assert value < 1 << width, f"{name} = {value} does not fit bit<{width}>"


def test_queue_thresholds_of_the_default_queue() -> None:
    assert (
        DEFAULT_THRESHOLDS.ecn_min_qdepth,
        DEFAULT_THRESHOLDS.ecn_max_qdepth,
        DEFAULT_THRESHOLDS.trim_qdepth,
        DEFAULT_THRESHOLDS.queue_limit,
    ) == (10, 38, 48, 60)
    assert DEFAULT_THRESHOLDS.queue_limit == q.QUEUE_LIMIT_FRACTION * DEFAULT_QUEUE_PACKETS


@pytest.mark.parametrize("depth", [q.MIN_QUEUE_PACKETS - 1, q.MAX_QDEPTH_VALUE + 1])
def test_queue_thresholds_reject_a_depth_out_of_range(depth: int) -> None:
    with pytest.raises(QueueDepthError, match=f"queue depth {depth} packets is outside 4..65535"):
        queue_thresholds(depth)


@pytest.mark.parametrize("depth", [q.MIN_QUEUE_PACKETS, 8, 100, 1000, q.MAX_QDEPTH_VALUE])
def test_queue_thresholds_are_ordered(depth: int) -> None:
    t = queue_thresholds(depth)
    assert 1 <= t.ecn_min_qdepth < t.ecn_max_qdepth <= t.trim_qdepth <= t.queue_limit < depth


def test_srh_stack_bound_matches() -> None:
    match = re.search(r"#define\s+MAX_SRH_SIDS\s+(\d+)", DEFINES)
    assert match is not None
    assert int(match.group(1)) == c.MAX_SRH_SEGMENTS


def _typedefs() -> dict[str, int]:
    return {name: int(w) for w, name in re.findall(r"typedef\s+bit<(\d+)>\s+(\w+)\s*;", DEFINES)}


def header_bits(name: str) -> int:
    """Total width of ``header NAME { ... }`` in headers.p4."""
    body = re.search(rf"header\s+{name}\s*\{{(.*?)\}}", HEADERS, re.S)
    assert body is not None, f"header {name} not found"
    typedefs = _typedefs()
    total = 0
    for line in body.group(1).split(";"):
        line = re.sub(r"/\*.*?\*/", "", line, flags=re.S).strip()
        if not line:
            continue
        type_name = line.split()[0]
        bit = re.fullmatch(r"bit<(\d+)>", type_name)
        total += int(bit.group(1)) if bit else typedefs[type_name]
    return total


@pytest.mark.parametrize(
    ("header", "size"),
    [
        ("ethernet_t", c.ETH_LEN),
        ("ipv6_t", c.IPV6_LEN),
        ("srh_t", c.SRH_FIXED_LEN),
        ("srh_sid_t", c.SID_LEN),
        ("udp_t", c.UDP_LEN),
        ("bth_t", c.BTH_LEN),
        ("tseth_t", c.TSETH_LEN),
        ("reth_t", c.RETH_LEN),
        ("packet_in_t", 3),
        ("packet_out_t", 2),
    ],
)
def test_p4_header_sizes(header: str, size: int) -> None:
    assert header_bits(header) == 8 * size


def test_readme_documents_every_table_counter_and_register() -> None:
    tables = set(re.findall(r"^\s*table\s+(\w+)\s*\{", SOURCES, re.M))
    counters = set(re.findall(r"counter\([^)]*\)\s+(\w+)\s*;", SOURCES))
    registers = set(re.findall(r"register<(?:[^<>]|<[^<>]*>)*>\([^)]*\)\s+(\w+)\s*;", SOURCES))
    assert len(tables) == 9 and len(counters) == 13 and registers == {"port_qdepth_est"}
    missing = sorted(
        n
        for n in tables | counters | registers
        if f"`{n}`" not in README and f".{n}`" not in README
    )
    assert not missing, f"p4src/README.md does not document: {missing}"
