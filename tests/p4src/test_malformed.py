"""mrc_switch.p4 on malformed and unexpected packets: truncated headers, bad next
headers, inconsistent SRHs. Every packet is counted (a parser-error drop, a no-route
drop, or forwarded) and nothing crashes (p4src/README.md, Counters; docs/wire-format.md
section 4 for the SRH rules; RFC 8754 4.3.1.1 for the SRH length checks).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from p4src_helpers import (
    CPU_PORT,
    HEADER_BYTES,
    MrcSwitch,
    carrier,
    data_frame,
    program_switch,
)

import topologies

T0_0, T0_1, T1_1, DOWN_1 = 0x1400, 0x1401, 0x1801, 0xE201
UPLINK = 4
TO_UPLINK = carrier(T0_0, T1_1, T0_1, DOWN_1)
AFTER_UPLINK = carrier(T1_1, T0_1, DOWN_1)
OTHER = carrier(0x1400, 0xE200)  # an SRH segment (never reached: segments left 0)

DROP_COUNTERS = (
    "MrcIngress.drop_parser_error",
    "MrcIngress.drop_no_route",
    "MrcIngress.drop_hop_limit",
    "MrcIngress.drop_local",
    "MrcIngress.drop_port_down",
    "MrcIngress.drop_queue_full",
)

# offsets without SRH (docs/wire-format.md section 1)
OUTER_NH, INNER_NH, UDP_DPORT, BTH_OPCODE = 20, 60, 96, 102
# offsets with an SRH at 54
SRH_NH, SRH_HEL, SRH_TYPE, SRH_SL, SRH_LE = 54, 55, 56, 57, 58


@functools.cache
def plan() -> topologies.AddressPlan:
    return topologies.AddressPlan(topologies.load("tiny"))


def t0() -> MrcSwitch:
    ms = MrcSwitch()
    program_switch(ms, plan(), "p1-t0-0")
    return ms


def put(frame: bytes, offset: int, value: bytes) -> bytes:
    return frame[:offset] + value + frame[offset + len(value) :]


def with_srh_tlv(frame: bytes) -> bytes:
    """Append an 8-byte PadN TLV after a one-SID segment list (hdr ext len 2 -> 3)."""
    sid_end = 62 + 16
    out = frame[:sid_end] + b"\x04\x06" + bytes(6) + frame[sid_end:]
    out = put(out, SRH_HEL, bytes([3]))
    (plen,) = struct.unpack_from(">H", out, 18)
    return put(out, 18, struct.pack(">H", plen + 8))


def accounted(ms: MrcSwitch) -> int:
    """Packets the switch accounted for: sent (forwarded counter), dropped by the program
    (drop counters) or by the traffic manager. Also checks that every drop at the end
    of ingress (p4emu's ``ingress_drop``) is one the program counted: no silent loss."""
    forwarded = sum(p for p, _ in ms.counters("MrcEgress.forwarded").values())
    dropped = sum(p for name in DROP_COUNTERS for p, _ in ms.counters(name).values())
    assert ms.switch.dropped(reason="ingress_drop") == dropped
    by_tm = ms.switch.dropped(reason="queue_full") + ms.switch.dropped(
        reason="priority_out_of_range"
    )
    return forwarded + dropped + by_tm


# --- parser errors ---------------------------------------------------------------------------

FULL = data_frame(TO_UPLINK, segments=[OTHER], segments_left=0, timestamp=5, payload_len=32)
HEADER_CUTS = {
    "empty": 0,
    "ethernet": 13,
    "outer ipv6": 14 + 39,
    "srh fixed part": 54 + 7,
    "srh segment": 62 + 15,
    "no inner header": 78,
    "inner ipv6": 78 + 39,
    "udp": 118 + 7,
    "bth": 126 + 11,
    "tseth": 138 + 3,
    "reth": 142 + 15,
}


@pytest.mark.parametrize("cut", HEADER_CUTS.values(), ids=HEADER_CUTS.keys())
def test_truncated_headers_are_parser_error_drops(cut: int) -> None:
    ms = t0()
    frame = FULL[:cut]
    ms.send(3, frame)
    ms.run()
    assert ms.take() == []
    assert ms.counters("MrcIngress.drop_parser_error") == {3: (1, len(frame))}
    assert accounted(ms) == 1


def one_sid(**kwargs: int) -> bytes:
    return data_frame(TO_UPLINK, segments=[OTHER], segments_left=0, **kwargs)


PARSER_ERRORS: dict[str, Callable[[], bytes]] = {
    "outer version 4": lambda: put(data_frame(TO_UPLINK), 14, bytes([0x46])),
    "srh segments left > last entry + 1": lambda: put(one_sid(), SRH_SL, bytes([2])),
    # last entry 1 claims two SIDs in a header that holds one: RFC 8754 max_LE check
    "srh list exceeds hdr ext len": lambda: put(
        put(one_sid(), SRH_LE, bytes([1])), SRH_SL, b"\x02"
    ),
    "srh hdr ext len 0": lambda: put(one_sid(), SRH_HEL, bytes([0])),
    "srh last entry 255": lambda: put(one_sid(), SRH_LE, bytes([255])),
    "srh with 5 segments": lambda: data_frame(TO_UPLINK, segments=[OTHER] * 5, segments_left=0),
}


@pytest.mark.parametrize("build", PARSER_ERRORS.values(), ids=PARSER_ERRORS.keys())
def test_invalid_headers_are_parser_error_drops(build: Callable[[], bytes]) -> None:
    ms = t0()
    frame = build()
    ms.send(1, frame)
    ms.run()
    assert ms.take() == []
    assert ms.counters("MrcIngress.drop_parser_error") == {1: (1, len(frame))}


def test_srh_end_never_takes_a_segment_from_beyond_the_header() -> None:
    """hdr ext len says one SID, last entry says two: the 'second SID' would be the
    first 16 bytes of the inner header (its version/flow label/lengths and source)."""
    ms = t0()
    ms.ipv6_route("::/0", 9)  # anything that got through would be forwarded here
    frame = data_frame(carrier(T0_0), segments=[AFTER_UPLINK], segments_left=1)
    frame = put(put(frame, SRH_LE, bytes([1])), SRH_SL, bytes([2]))
    ms.send(1, frame)
    ms.run()
    assert ms.take() == []
    assert ms.counter("MrcIngress.drop_parser_error", 1)[0] == 1


def test_non_ipv6_ethertype_is_a_no_route_drop() -> None:
    ms = t0()
    frame = put(data_frame(TO_UPLINK), 12, b"\x08\x00")
    ms.send(1, frame)
    ms.run()
    assert ms.take() == []
    assert ms.counters("MrcIngress.drop_no_route") == {1: (1, len(frame))}


# --- routed, but never trimmed ------------------------------------------------------------------

UNPARSED: dict[str, Callable[[bytes], bytes]] = {
    "outer next header 59": lambda f: put(f, OUTER_NH, bytes([59])),
    "inner next header 6": lambda f: put(f, INNER_NH, bytes([6])),
    "udp port 4792": lambda f: put(f, UDP_DPORT, struct.pack(">H", 4792)),
    "unknown opcode": lambda f: put(f, BTH_OPCODE, bytes([0x42])),
}
UNPARSED_SRH: dict[str, Callable[[bytes], bytes]] = {
    "srh next header 17": lambda f: put(f, SRH_NH, bytes([17])),
    "routing type 0": lambda f: put(f, SRH_TYPE, bytes([0])),
    "srh with a tlv": with_srh_tlv,
}


def _cases() -> list[tuple[str, Callable[[bytes], bytes], bool]]:
    cases = [(name, m, False) for name, m in UNPARSED.items()]
    return cases + [(name, m, True) for name, m in UNPARSED_SRH.items()]


@pytest.mark.parametrize(("name", "mutate", "srh"), _cases(), ids=[c[0] for c in _cases()])
def test_packets_not_fully_parsed_are_routed_but_never_trimmed(
    name: str, mutate: Callable[[bytes], bytes], srh: bool
) -> None:
    ms = t0()
    ms.set_port_rate(UPLINK, 1000)
    # Not-ECT, so that ECN marking (random in its band) leaves the bytes alone
    extra = {"segments": [OTHER], "segments_left": 0, "ecn": 0} if srh else {"ecn": 0}
    count = 52  # 4 beyond the trim threshold (48), below the queue limit (60)
    for k in range(count):
        ms.send(1, mutate(data_frame(TO_UPLINK, psn=k, **extra)))
    ms.run()
    out = [frame for _, frame in ms.take(UPLINK)]
    assert out == [
        mutate(data_frame(AFTER_UPLINK, psn=k, hop_limit=63, **extra)) for k in range(count)
    ]
    assert ms.counters("MrcIngress.trimmed") == {}
    assert ms.counters("MrcIngress.drop_parser_error") == {}


def test_payload_shorter_than_the_lengths_claim_is_forwarded_untouched() -> None:
    # the switch parses headers only; lengths are the receiver's business (wire-format §12)
    ms = t0()
    ms.send(1, data_frame(TO_UPLINK, payload_len=100)[:-40])
    ms.run()
    [(port, frame)] = ms.take()
    assert port == UPLINK
    assert frame == data_frame(AFTER_UPLINK, payload_len=100, hop_limit=63)[:-40]
    assert len(frame) > HEADER_BYTES


# --- fuzz: nothing crashes, everything is counted -----------------------------------------------

VALID = [
    data_frame(TO_UPLINK),
    data_frame(carrier(T0_0, DOWN_1), timestamp=9, payload_len=8),
    data_frame(carrier(T0_0), segments=[AFTER_UPLINK], segments_left=1),
]


@st.composite
def mangled_frames(draw: st.DrawFn) -> bytes:
    frame = bytearray(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(0, 6))):
        offset = draw(st.integers(0, len(frame) - 1))
        frame[offset] = draw(st.integers(0, 255))
    return bytes(frame[: draw(st.integers(0, len(frame)))])


@pytest.mark.scenario  # a fuzz campaign: 40 switches fed random frames (CI, not -m unit)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    frames=st.lists(
        st.tuples(
            st.sampled_from([1, 2, 3, 4, CPU_PORT]),
            st.one_of(mangled_frames(), st.binary(max_size=200)),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_random_and_mangled_frames_never_crash_and_are_all_counted(
    frames: list[tuple[int, bytes]],
) -> None:
    ms = t0()
    ms.switch_config(plane_id=1, punt_end_of_carrier=1, punt_non_ipv6=1)
    sent = 0
    for port, frame in frames:
        if port == CPU_PORT and len(frame) >= 2 and (frame[0] << 1 | frame[1] >> 7) == 511:
            continue  # a packet_out to BMv2's drop port is a controller bug, not traffic
        ms.send(port, frame)
        sent += 1
    ms.run()
    assert accounted(ms) == sent
    assert len(ms.take()) == sum(p for p, _ in ms.counters("MrcEgress.forwarded").values())
