"""The v1model pipeline of p4emu.switch.Switch against BMv2 simple_switch behaviour:
default port 0, drops, clones, resubmit, recirculate, multicast, priority queues, queue
build-up under a virtual clock, port up/down, controller packet I/O, example programs."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from scapy.all import IP, UDP, Ether, raw

from p4emu.exceptions import SwitchError
from p4emu.frontend import load_program_text
from p4emu.runtime.clock import VirtualClock
from p4emu.runtime.pre import CloneSession, Replica
from p4emu.runtime.tables import Exact, Lpm
from p4emu.runtime.traffic_manager import RateScope, RateUnit
from p4emu.switch import (
    DROP_ADMISSION,
    DROP_EGRESS,
    DROP_INGRESS,
    DROP_PORT_DOWN_RX,
    DROP_PORT_DOWN_TX,
    DROP_QUEUE_FULL,
    MAX_PORT,
    PortOutput,
    Switch,
)

PROGRAMS = Path(__file__).parent / "programs"
ROOT = Path(__file__).resolve().parents[2]

PIPELINE = """
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header extra_t { bit<16> v; }
header info_t {
    bit<32> instance_type; bit<16> rid; bit<16> ingress_port; bit<32> pkt_len;
    bit<32> enq_qdepth; bit<32> deq_timedelta; bit<8> pass_count; bit<8> ing_instance;
    bit<32> enq_ts; bit<48> ing_ts; bit<48> eg_ts; bit<16> egress_port;
}
struct headers_t { eth_t eth; extra_t extra; info_t info; }
struct meta_t {
    @field_list(1) bit<8> pass_count;
    bit<8> ing_instance;
}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        bit<8> cmd = hdr.eth.dst[7:0];
        meta.ing_instance = (bit<8>)sm.instance_type;
        if (cmd == 1) { sm.egress_spec = 2; }
        else if (cmd == 2) { mark_to_drop(sm); }
        else if (cmd == 3) {
            meta.pass_count = 7;
            clone_preserving_field_list(CloneType.I2E, 5, 1);
            sm.egress_spec = 2;
            meta.pass_count = 8;
        } else if (cmd == 4) {
            if (sm.instance_type == 0) {
                meta.pass_count = 1;
                resubmit_preserving_field_list(1);
            } else {
                sm.egress_spec = 2;
            }
        } else if (cmd == 5) { sm.mcast_grp = 10; }
        else if (cmd == 6) { sm.priority = (bit<3>)hdr.eth.src[2:0]; sm.egress_spec = 3; }
        else if (cmd == 7 || cmd == 8) { sm.egress_spec = 2; }
        else if (cmd == 9) { hdr.extra.setValid(); sm.egress_spec = 2; }
        else if (cmd == 10) { clone(CloneType.I2E, 6); mark_to_drop(sm); }
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        bit<8> cmd = hdr.eth.dst[7:0];
        if (cmd == 7 && meta.pass_count == 0) {
            meta.pass_count = 5;
            recirculate_preserving_field_list(1);
        }
        if (cmd == 8 && sm.instance_type == 0) {
            clone_preserving_field_list(CloneType.E2E, 5, 1);
        }
        if (cmd == 11) { mark_to_drop(sm); }
        hdr.info.setValid();
        hdr.info.instance_type = sm.instance_type;
        hdr.info.rid = sm.egress_rid;
        hdr.info.ingress_port = (bit<16>)sm.ingress_port;
        hdr.info.pkt_len = sm.packet_length;
        hdr.info.enq_qdepth = (bit<32>)sm.enq_qdepth;
        hdr.info.deq_timedelta = sm.deq_timedelta;
        hdr.info.pass_count = meta.pass_count;
        hdr.info.ing_instance = meta.ing_instance;
        hdr.info.enq_ts = sm.enq_timestamp;
        hdr.info.ing_ts = sm.ingress_global_timestamp;
        hdr.info.eg_ts = sm.egress_global_timestamp;
        hdr.info.egress_port = (bit<16>)sm.egress_port;
    }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.extra); pkt.emit(hdr.info); }
}
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""

INFO = struct.Struct(">IHHIIIBBI6s6sH")
INFO_FIELDS = [
    "instance_type",
    "rid",
    "ingress_port",
    "pkt_len",
    "enq_qdepth",
    "deq_timedelta",
    "pass_count",
    "ing_instance",
    "enq_ts",
    "ing_ts",
    "eg_ts",
    "egress_port",
]


def frame(cmd: int, src: int = 0, payload: bytes = b"payload") -> bytes:
    return bytes(5) + bytes([cmd]) + src.to_bytes(6, "big") + b"\x88\xb5" + payload


def info(data: bytes, extra: bool = False) -> dict[str, int]:
    start = 14 + (2 if extra else 0)
    values = INFO.unpack_from(data, start)
    out = dict(zip(INFO_FIELDS, values))
    for key in ("ing_ts", "eg_ts"):
        out[key] = int.from_bytes(out[key], "big")  # type: ignore[arg-type]
    return out  # type: ignore[return-value]


def make(**options: object) -> Switch:
    return Switch(load_program_text(PIPELINE, "pipeline.p4"), **options)  # type: ignore[arg-type]


def test_egress_spec_defaults_to_port_0_and_metadata_starts_at_zero() -> None:
    switch = make(clock=VirtualClock(250))
    switch.inject(7, frame(0))
    [(port, data)] = switch.collect()
    assert port == 0
    fields = info(data)
    assert fields["instance_type"] == 0 and fields["ingress_port"] == 7
    assert fields["pkt_len"] == 21 and fields["ing_ts"] == 250 and fields["enq_ts"] == 250
    assert data.endswith(b"payload")


def test_mark_to_drop_in_ingress_and_egress_is_counted() -> None:
    switch = make()
    switch.inject(1, frame(2))
    switch.inject(1, frame(11))
    assert switch.collect() == []
    assert switch.dropped(1, DROP_INGRESS) == 1
    assert switch.dropped(0, DROP_EGRESS) == 1


def test_ingress_clone_preserves_the_field_list_and_resets_the_rest() -> None:
    switch = make()
    switch.pre.insert_clone_session(CloneSession(5, (Replica(4, 0),)))
    switch.inject(3, frame(3))
    outputs = switch.collect()
    assert [port for port, _ in outputs] == [4, 2]  # the clone is enqueued first
    clone, original = info(outputs[0][1]), info(outputs[1][1])
    assert clone["instance_type"] == 1 and clone["pass_count"] == 8  # value at end of ingress
    assert clone["ingress_port"] == 0 and clone["ing_instance"] == 0  # metadata reset
    assert original["instance_type"] == 0 and original["pass_count"] == 8
    assert original["ingress_port"] == 3


def test_clone_to_an_unconfigured_session_does_nothing() -> None:
    switch = make()
    switch.inject(3, frame(10))
    assert switch.collect() == []


def test_resubmit_reparses_the_original_packet_with_preserved_fields() -> None:
    switch = make()
    switch.inject(3, frame(4))
    [(port, data)] = switch.collect()
    fields = info(data)
    assert port == 2
    assert fields["pass_count"] == 1 and fields["ing_instance"] == 6  # RESUBMIT
    assert fields["instance_type"] == 0  # BMv2 marks the enqueued packet NORMAL
    assert fields["ingress_port"] == 0  # not in the field list: reset


def test_recirculate_sends_the_deparsed_packet_back_to_ingress() -> None:
    switch = make()
    switch.inject(3, frame(7))
    [(port, data)] = switch.collect()
    assert port == 2
    # the recirculated packet carries the first pass's info header after the Ethernet one
    second = info(data)
    assert second["ing_instance"] == 4 and second["pass_count"] == 5
    assert second["pkt_len"] == 21 + INFO.size


def test_egress_clone_copies_the_egress_headers() -> None:
    switch = make()
    switch.pre.insert_clone_session(CloneSession(5, (Replica(6, 0),)))
    switch.inject(3, frame(8))
    outputs = dict(switch.collect())
    assert set(outputs) == {2, 6}
    clone = outputs[6]
    # the clone copies the headers as egress left them (info already valid), then runs
    # egress again as an EGRESS_CLONE with metadata reset
    assert len(clone) == len(outputs[2])
    assert info(clone)["instance_type"] == 2 and info(clone)["pass_count"] == 0
    assert info(clone)["egress_port"] == 6


def test_multicast_replicates_with_egress_rid() -> None:
    switch = make()
    switch.pre.insert_group(10, [Replica(2, 1), Replica(3, 2), Replica(2, 7)])
    switch.inject(1, frame(5))
    outputs = switch.collect()
    # replicas leave in replication order (ports are served independently)
    assert [(port, info(data)["rid"]) for port, data in outputs] == [(2, 1), (3, 2), (2, 7)]
    assert all(info(data)["instance_type"] == 5 for _, data in outputs)


def test_set_valid_in_ingress_grows_the_egress_packet_length() -> None:
    switch = make()
    switch.inject(1, frame(9))
    [(_, data)] = switch.collect()
    assert info(data, extra=True)["pkt_len"] == 21 + 2


def test_priority_queues_serve_the_highest_priority_first() -> None:
    clock = VirtualClock()
    switch = make(clock=clock, priority_queues=8)
    switch.set_queue_rate(1000, port=3)
    switch.inject(1, frame(6, src=0, payload=b"A"))
    switch.inject(1, frame(6, src=0, payload=b"B"))
    switch.inject(1, frame(6, src=7, payload=b"C"))
    assert switch.collect() == []
    switch.advance(5000)
    assert [data[-1:] for _, data in switch.collect()] == [b"C", b"A", b"B"]


def test_priority_out_of_range_is_dropped() -> None:
    switch = make()  # one queue per port
    switch.inject(1, frame(6, src=1))
    assert switch.collect() == [] and switch.dropped(3, "priority_out_of_range") == 1


def test_oversubscribed_port_builds_a_queue_and_tail_drops() -> None:
    clock = VirtualClock()
    switch = make(clock=clock, queue_depth=8, queue_rate_pps=1000)
    for _ in range(12):
        switch.inject(1, frame(1))
    assert switch.dropped(2, DROP_QUEUE_FULL) == 4
    switch.advance(20_000)
    outputs = [info(data) for _, data in switch.collect()]
    assert len(outputs) == 8
    assert [o["enq_qdepth"] for o in outputs] == list(range(8))
    deltas = [o["deq_timedelta"] for o in outputs]
    assert deltas == [1000 * (i + 1) for i in range(8)]
    assert [o["eg_ts"] for o in outputs] == deltas


def test_run_until_idle_drains_rate_limited_queues_on_a_virtual_clock() -> None:
    clock = VirtualClock()
    switch = make(clock=clock, queue_rate_pps=100)
    for _ in range(3):
        switch.inject(1, frame(1))
    switch.run_until_idle()
    assert len(switch.collect()) == 3
    assert clock.now_us() == 30_000


def test_port_down_loses_frames_in_both_directions() -> None:
    switch = make()
    switch.set_port_up(2, False)
    switch.inject(1, frame(1))
    switch.inject(2, frame(1))
    assert switch.collect() == []
    assert switch.dropped(2, DROP_PORT_DOWN_TX) == 1
    assert switch.dropped(2, DROP_PORT_DOWN_RX) == 1
    switch.set_port_up(2, True)
    switch.inject(1, frame(1))
    assert len(switch.collect()) == 1


def test_admission_and_release_hooks_account_by_ingress_port() -> None:
    """The hooks a fabric's PFC uses: asked before every enqueue (refusal drops the
    packet, counted), told when an admitted packet leaves the traffic manager."""
    clock = VirtualClock()
    switch = make(clock=clock, queue_rate_scope=RateScope.port)
    switch.set_queue_rate(8e9, 2, unit=RateUnit.bits_per_second)
    held: dict[int, int] = {}
    limit = 3 * len(frame(1))

    def admit(ingress: int, egress: int, priority: int, length: int) -> bool:
        if held.get(ingress, 0) + length > limit:
            return False
        held[ingress] = held.get(ingress, 0) + length
        return True

    def release(ingress: int, priority: int, length: int) -> None:
        held[ingress] -= length

    switch.admission_callback = admit
    switch.release_callback = release
    for _ in range(5):
        switch.inject(1, frame(1))
    assert switch.dropped(2, DROP_ADMISSION) == 1  # the first left at once: 3 held + 1
    assert held[1] == 3 * len(frame(1))
    switch.run_until_idle()
    assert held[1] == 0 and len(switch.collect()) == 4


def test_a_paused_priority_waits_until_resumed() -> None:
    clock = VirtualClock()
    switch = make(clock=clock, queue_rate_scope=RateScope.port)
    switch.set_queue_rate(8e9, 2, unit=RateUnit.bits_per_second)
    assert switch.set_paused(2, 0, True) is None  # nothing queued yet
    switch.inject(1, frame(1))
    switch.advance(100)
    assert switch.collect() == []
    due = switch.set_paused(2, 0, False)
    assert due is None and [port for port, _ in switch.collect()] == [2]
    with pytest.raises(SwitchError, match="port 600 out of range"):
        switch.set_paused(600, 0, True)


def test_output_callback_receives_frames_instead_of_collect() -> None:
    switch = make()
    seen: list[tuple[int, bytes]] = []
    switch.output_callback = lambda port, data: seen.append((port, data))
    switch.inject(1, frame(1))
    assert [port for port, _ in seen] == [2] and switch.collect() == []


class _Sink(PortOutput):
    """A Python subclass of the C base: its own ``output`` is the one called."""

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen: list[tuple[int, bytes]] = []

    def output(self, port: int, frame: bytes) -> None:
        self.seen.append((port, frame))


def test_an_output_sink_receives_frames_before_the_callback_and_collect() -> None:
    switch = make()
    sink, called = _Sink(), []
    switch.output_sink = sink
    switch.output_callback = lambda port, data: called.append(port)
    sent = frame(1)
    switch.inject(1, sent)
    switch.inject(1, bytearray(sent))  # any buffer: the switch takes its bytes
    assert [port for port, _ in sink.seen] == [2, 2] and called == []
    (_, first), (_, second) = sink.seen
    assert type(first) is bytes and type(second) is bytes and len(first) == len(second)
    switch.output_sink = None  # back to the callback
    switch.inject(1, sent)
    assert called == [2] and switch.collect() == []
    switch.output_sink = PortOutput()  # the base sends nowhere: it says so
    with pytest.raises(NotImplementedError, match=r"must override PortOutput\.output"):
        switch.inject(1, sent)


def test_bad_arguments_are_reported() -> None:
    switch = make()
    with pytest.raises(SwitchError, match="ingress port 600 out of range"):
        switch.inject(600, frame(1))
    # the bounds inject checks (MAX_PORT written out there): refused just past each
    for port in (-1, MAX_PORT + 1, 2**70):
        with pytest.raises(SwitchError, match=rf"ingress port {port} out of range \[0, 511\]"):
            switch.inject(port, frame(1))
    assert MAX_PORT == 511
    switch.inject(MAX_PORT, frame(1))  # the highest port and the lowest are taken
    switch.inject(0, frame(1))
    with pytest.raises(SwitchError, match="needs a CPU port"):
        switch.packet_out(b"x")
    with pytest.raises(SwitchError, match="needs a VirtualClock"):
        switch.advance(10)
    with pytest.raises(SwitchError, match="CPU port and drop port"):
        make(cpu_port=511)


# --------------------------------------------------------------------------- example programs


def test_basic_program_forwards_and_updates_the_ipv4_checksum() -> None:
    switch = Switch(PROGRAMS / "basic.p4")
    objects = switch.objects
    forward = objects.actions["MyIngress.ipv4_forward"]
    objects.tables["MyIngress.ipv4_lpm"].insert(
        [Lpm(0x0A000000, 8)], forward.id, [0x112233445566, 3]
    )
    packet = Ether(dst="00:00:00:00:00:01") / IP(dst="10.1.2.3", ttl=64) / UDP() / b"hi"
    switch.inject(1, raw(packet))
    [(port, data)] = switch.collect()
    out = Ether(data)
    assert port == 3 and out.dst == "11:22:33:44:55:66" and out[IP].ttl == 63
    recomputed = Ether(raw(out[Ether].copy()))
    del recomputed[IP].chksum
    assert out[IP].chksum == Ether(raw(recomputed))[IP].chksum
    switch.inject(1, raw(Ether() / IP(dst="11.0.0.1")))
    assert switch.collect() == [] and switch.dropped(reason=DROP_INGRESS) == 1


def test_source_routing_program_pops_the_stack() -> None:
    switch = Switch(PROGRAMS / "source_routing.p4")
    routes = [(0, 2), (0, 3), (1, 4)]
    stack = b"".join(((bos << 15) | port).to_bytes(2, "big") for bos, port in routes)
    data = bytes(12) + b"\x12\x34" + stack + raw(IP(dst="10.0.0.1", ttl=9))
    switch.inject(1, data)
    [(port, out)] = switch.collect()
    assert port == 2
    assert out[14:18] == stack[2:6]  # the first entry was popped


def test_stateful_program_punts_with_packet_in_and_accepts_packet_out() -> None:
    switch = Switch(PROGRAMS / "stateful.p4", cpu_port=255)
    punted: list[tuple[bytes, dict[str, int]]] = []
    switch.packet_in_callback = lambda payload, metadata: punted.append((payload, metadata))
    arp = raw(Ether(dst="ff:ff:ff:ff:ff:ff", type=0x0806) / (b"\x00" * 28))
    switch.inject(9, arp)
    [(payload, metadata)] = punted
    assert metadata == {"ingress_port": 9, "_pad": 0}
    assert payload == arp
    switch.packet_out(b"\x01" * 20, {"egress_port": 4})
    [(port, data)] = switch.collect()
    assert port == 4 and data == b"\x01" * 20  # packet_out header removed by the program


def test_mrc_switch_program_forwards_usid_traffic() -> None:
    switch = Switch(ROOT / "p4src" / "mrc_switch.p4", priority_queues=8, cpu_port=510)
    objects = switch.objects
    objects.tables["MrcIngress.my_usid"].insert(
        [Exact(0xFCBBBB001400)], objects.actions["MrcIngress.usid_un"].id
    )
    objects.tables["MrcIngress.usid_route"].insert(
        [Exact(0x1801)], objects.actions["MrcIngress.forward"].id, [5]
    )
    dst = (0xFCBBBB00 << 96) | (0x1400 << 80) | (0x1801 << 64) | (0xE201 << 48)
    first = (6 << 28) | (26 << 22) | (2 << 20)
    outer = struct.pack(">IHBB", first, 8, 17, 64) + bytes(16) + dst.to_bytes(16, "big")
    packet = bytes(12) + b"\x86\xdd" + outer + struct.pack(">HHHH", 1, 2, 8, 0)
    switch.inject(1, packet)
    [(port, data)] = switch.collect()
    assert port == 5
    new_dst = int.from_bytes(data[14 + 24 : 14 + 40], "big")
    assert new_dst == (0xFCBBBB00 << 96) | (0x1801 << 80) | (0xE201 << 64)
    assert data[14 + 7] == 63  # hop limit
    assert objects.counters["MrcEgress.forwarded"].read(5) == (1, len(packet))


# ------------------------------------------------------------------ standard metadata

V1MODEL = ROOT / "p4emu" / "include" / "v1model.p4"
FORWARD_WITH_OWN_V1MODEL = """
#include <core.p4>
#include "v1model.p4"
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers_t { eth_t eth; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 2; hdr.eth.type = (bit<16>)sm.ingress_port; }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { EGRESS }
}
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def own_v1model(tmp_path: Path, old: str, new: str, egress: str = "") -> Switch:
    """A switch of a program that includes its own v1model.p4: p4emu's with ``old`` in
    its standard_metadata_t replaced by ``new``."""
    text = V1MODEL.read_text(encoding="utf-8")
    assert old in text
    (tmp_path / "v1model.p4").write_text(text.replace(old, new, 1), encoding="utf-8")
    source = FORWARD_WITH_OWN_V1MODEL.replace("EGRESS", egress)
    return Switch(
        load_program_text(source, str(tmp_path / "own.p4"), [tmp_path]), clock=VirtualClock()
    )


def test_the_stock_standard_metadata_is_the_runtimes_on_the_compiled_path() -> None:
    """v1model's standard_metadata_t derives from rt.StandardMetadata where that is an
    extension type (the switch then sets its fields in C); on the pure path it is the
    plain generated class. Either way it has exactly v1model's fields, all 0."""
    from p4emu.backend import native
    from p4emu.backend.rt import STANDARD_METADATA_FIELDS, StandardMetadata

    sm = make().program.new_standard_metadata()
    assert isinstance(sm, StandardMetadata) == native.runtime_native()
    assert all(getattr(sm, name) == 0 for name in STANDARD_METADATA_FIELDS)
    assert type(sm).__slots__ == (() if native.runtime_native() else STANDARD_METADATA_FIELDS)


def test_a_standard_metadata_with_more_fields_is_accepted(tmp_path: Path) -> None:
    """An own v1model.p4 whose standard_metadata_t has a field more: the switch runs it,
    the extra field is the generated class's own (0 for every new packet)."""
    switch = own_v1model(
        tmp_path,
        "bit<3>  priority;",
        "bit<3>  priority;\n    bit<12> site;",
        egress="hdr.eth.src = (bit<48>)sm.site; sm.site = 5;",
    )
    sm = switch.program.new_standard_metadata()
    assert sm.site == 0 and "site" in type(sm).__slots__
    frame = bytes(12) + b"\x08\x00" + b"payload"
    for _ in range(2):  # the second reuses the first's objects: site is 0 again
        switch.inject(3, frame)
        [(port, out)] = switch.collect()
        assert port == 2 and out == bytes(12) + b"\x00\x03" + b"payload"


@pytest.mark.parametrize(
    ("old", "new", "problem"),
    [
        ("bit<3>  priority;", "bit<3>  prio;", "has no field priority"),
        ("bit<32>  instance_type;", "bit<64>  instance_type;", "instance_type is bit<64>"),
        ("bit<32>  packet_length;", "int<32>  packet_length;", "packet_length is int<32>"),
        ("error    parser_error;", "bit<8>    parser_error;", "parser_error is bit<8>, not error"),
    ],
)
def test_a_standard_metadata_without_v1models_fields_is_refused(
    tmp_path: Path, old: str, new: str, problem: str
) -> None:
    """BMv2's simple_switch needs v1model's fields (and so does the switch: it sets them
    in C on the compiled path): a struct missing one, or holding one wider than 63 bits,
    signed or of another type, is refused when the switch is made, on both paths."""
    with pytest.raises(SwitchError, match=f"not v1model's: .*{problem}"):
        own_v1model(tmp_path, old, new)


class _PlainClock:
    """A Clock (the protocol) that is no ClockBase: the switch reads it through Python."""

    def __init__(self, start_us: int) -> None:
        self.ns = start_us * 1000

    def now_ns(self) -> int:
        return self.ns

    def now_us(self) -> int:
        return self.ns // 1000


class _Skewed(VirtualClock):
    """A Python subclass of the virtual clock: the compiled switch's C read reaches it."""

    def now_us(self) -> int:
        return super().now_us() + 1000


def test_any_clock_stamps_ingress_and_queueing_the_same() -> None:
    outputs = {}
    for name, clock in [
        ("virtual", VirtualClock(250)),
        ("plain", _PlainClock(250)),
        ("skewed", _Skewed(250)),
    ]:
        switch = make(clock=clock)
        switch.inject(7, frame(0))
        [(_, data)] = switch.collect()
        outputs[name] = info(data)
    assert outputs["virtual"] == outputs["plain"]
    assert outputs["virtual"]["ing_ts"] == 250 and outputs["virtual"]["enq_ts"] == 250
    assert outputs["skewed"] == {**outputs["virtual"], "ing_ts": 1250}


def test_inject_c_and_poll_c_return_the_public_departure_with_minus_one_for_none() -> None:
    """The C-returning variants the fabric calls (vfabric.nodes.SwitchNode) give what
    inject and poll give, -1 where they give None, over the same sequence on twin switches
    (a port down, a queue building up and draining on a virtual clock)."""
    clocks = VirtualClock(), VirtualClock()
    public, c = (make(clock=clock, queue_depth=4, queue_rate_pps=1000) for clock in clocks)
    for switch in (public, c):
        switch.set_port_up(3, False)
    seen: list[int | None] = []
    for step in range(12):
        port = 3 if step == 5 else 1
        due = public.inject(port, frame(1))
        due_c = c.inject_c(port, frame(1))
        assert due_c == (-1 if due is None else due)
        seen.append(due)
        if step % 3 == 2:
            for clock in clocks:
                clock.advance(700)
            due, due_c = public.poll(), c.poll_c()
            assert due_c == (-1 if due is None else due)
            seen.append(due)
    for _ in range(10):
        for clock in clocks:
            clock.advance(1000)
        due, due_c = public.poll(), c.poll_c()
        assert due_c == (-1 if due is None else due)
        seen.append(due)
    assert None in seen and any(d is not None and d > 0 for d in seen)
    assert c.poll_c() == -1 and public.poll() is None
    assert c.collect() == public.collect()
    assert c.dropped(3, DROP_PORT_DOWN_RX) == public.dropped(3, DROP_PORT_DOWN_RX) == 1
    assert c.tm.next_departure_c() == -1 and c.tm.next_departure_ns() is None


def test_the_drop_and_cpu_ports_read_back_and_cannot_be_set() -> None:
    plain = Switch(PROGRAMS / "basic.p4")
    assert plain.drop_port == 511 and plain.cpu_port is None
    punting = Switch(PROGRAMS / "basic.p4", drop_port=100, cpu_port=0)
    assert punting.drop_port == 100 and punting.cpu_port == 0  # port 0 is a CPU port
    # read-only: the switch holds them as C integers read on every packet
    with pytest.raises(AttributeError):
        punting.cpu_port = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        punting.drop_port = 5  # type: ignore[misc]
