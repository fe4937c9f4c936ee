"""v1model externs in the generated code: registers, counters, meters, hash, random,
digest, checksums, log_msg, assert, truncate, mark_to_drop."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from backend_helpers import Harness, switch_for, switch_on_path

from p4emu.backend import native
from p4emu.backend.exceptions import CompileError, P4AssertionError
from p4emu.runtime import hashes
from p4emu.runtime.bitbuf import pack_bits
from p4emu.runtime.clock import VirtualClock
from p4emu.runtime.externs import MeterConfig, RandomSource


def test_registers_counters_and_meters() -> None:
    harness = Harness(
        "bit<8> idx; bit<8> val;",
        "bit<32> before; bit<32> after; int<16> signed; bit<8> color; bit<32> oob;",
        """
        reg.read(hdr.o.before, (bit<32>)hdr.i.idx);
        reg.write((bit<32>)hdr.i.idx, hdr.o.before + (bit<32>)hdr.i.val);
        reg.read(hdr.o.after, (bit<32>)hdr.i.idx);
        sreg.write(0, -16s5);
        sreg.read(hdr.o.signed, 0);
        hdr.o.oob = 77;
        reg.read(hdr.o.oob, 32w1000);
        cnt.count((bit<32>)hdr.i.idx);
        hdr.o.color = 5;
        mtr.execute_meter((bit<32>)hdr.i.idx, hdr.o.color);
        """,
        locals_="""
        register<bit<32>>(16) reg;
        register<int<16>>(1) sreg;
        counter(16, CounterType.packets_and_bytes) cnt;
        meter(16, MeterType.packets) mtr;
        """,
        clock=VirtualClock(),
    )
    objects = harness.switch.objects
    objects.meters["Ing.mtr"].configure(3, MeterConfig(cir=1, cburst=1, pir=1, pburst=1))
    first = harness.run(idx=3, val=10)
    second = harness.run(idx=3, val=5)
    assert (first["before"], first["after"]) == (0, 10)
    assert (second["before"], second["after"]) == (10, 15)
    assert first["signed"] == 0xFFFB  # -5 as int<16>
    # out-of-range read leaves the destination unchanged; the store of 77 just before it
    # is removed, as p4c removes it (a new header's 0 stays, as on BMv2)
    assert first["oob"] == 0
    assert objects.registers["Ing.reg"].get(3) == 15
    assert objects.counters["Ing.cnt"].read(3) == (2, 4)
    assert (first["color"], second["color"]) == (0, 2)  # one-packet buckets: then red
    assert harness.run(idx=4, val=0)["color"] == 0  # unconfigured meter: green


def test_registers_and_counters_indexed_always_in_range_use_their_cells() -> None:
    # an index whose type keeps it below the size (bit<8> into 256 cells) is read, written
    # and counted in the cells themselves; a wider one (into 16 cells) through the range
    # check, out-of-range accesses logged and ignored
    harness = Harness(
        "bit<8> idx; bit<8> val;",
        "bit<32> wide; bit<32> narrow;",
        """
        wide.write((bit<32>)hdr.i.idx, (bit<32>)hdr.i.val);
        wide.read(hdr.o.wide, (bit<32>)hdr.i.idx);
        narrow.write((bit<32>)hdr.i.idx, (bit<32>)hdr.i.val);
        hdr.o.narrow = 9;
        narrow.read(hdr.o.narrow, (bit<32>)hdr.i.idx);
        cnt_wide.count((bit<32>)hdr.i.idx);
        cnt_narrow.count((bit<32>)hdr.i.idx);
        """,
        locals_="""
        register<bit<32>>(256) wide;
        register<bit<32>>(16) narrow;
        counter(256, CounterType.packets_and_bytes) cnt_wide;
        counter(16, CounterType.packets_and_bytes) cnt_narrow;
        """,
    )
    source = harness.switch.program.source
    assert "Xcells_Ing_wide" in source and "Xcells_Ing_narrow" not in source
    if native.runtime_native():  # the counter's cells in C: one call counts in range
        assert re.search(r"G_X_Ing_cnt_wide_\d+\.count_at\(i_\d+, ctx\.ingress_length\)", source)
        assert "Xpackets_" not in source and "Xbytes_" not in source
    else:  # the lists of Python ints themselves
        assert "Xpackets_Ing_cnt_wide" in source and "Xbytes_Ing_cnt_wide" in source
    # the narrow one through Counter.count, which checks the index
    assert "Xpackets_Ing_cnt_narrow" not in source
    assert re.search(r"G_X_Ing_cnt_narrow_\d+\.count\(", source)
    assert not re.search(r"G_X_Ing_cnt_narrow_\d+\.count_at\(", source)
    objects = harness.switch.objects
    # narrow: out of range, the destination unchanged; the store of 9 just before the read
    # is removed, as p4c removes it (a new header's 0 stays, as on BMv2)
    assert harness.run(idx=200, val=7) == {"wide": 7, "narrow": 0}
    assert objects.registers["Ing.wide"].get(200) == 7
    assert objects.registers["Ing.narrow"].out_of_range == 2
    assert harness.run(idx=3, val=5) == {"wide": 5, "narrow": 5}
    wide, narrow = objects.counters["Ing.cnt_wide"], objects.counters["Ing.cnt_narrow"]
    assert wide.read(200)[0] == 1 and wide.read(3)[0] == 1
    assert narrow.read(3)[0] == 1 and narrow.out_of_range == 1
    wide.reset()
    objects.registers["Ing.wide"].reset()
    assert harness.run(idx=3, val=1) == {"wide": 1, "narrow": 1}
    assert wide.read(3)[0] == 1 and objects.registers["Ing.wide"].get(200) == 0


HASH_FIELDS = "bit<16> a; bit<8> b; bit<4> c; bit<4> d;"


@pytest.mark.parametrize("algo", ["crc32", "crc16", "identity", "csum16", "xor16", "crc16_custom"])
def test_hash_matches_the_runtime_hash_over_bmv2_field_lists(algo: str) -> None:
    harness = Harness(
        HASH_FIELDS + " bit<8> pad;",
        "bit<32> h; bit<32> based; bit<16> zero_max;",
        f"""
        hash(hdr.o.h, HashAlgorithm.{algo}, 32w0, {{ hdr.i.a, hdr.i.b, hdr.i.c }}, 32w0xFFFFFFFF);
        hash(hdr.o.based, HashAlgorithm.{algo}, 32w100, {{ hdr.i.a, hdr.i.d }}, 32w7);
        hash(hdr.o.zero_max, HashAlgorithm.{algo}, 16w5, {{ hdr.i.b }}, 16w0);
        """,
    )
    a, b, c, d = 0xBEEF, 0x42, 0x9, 0x3
    out = harness.run(a=a, b=b, c=c, d=d)
    fn = hashes.hash_function(hashes.HashAlgorithm(algo))
    assert out["h"] == fn(pack_bits([(a, 16), (b, 8), (c, 4)])) % 0xFFFFFFFF
    assert out["based"] == 100 + fn(pack_bits([(a, 16), (d, 4)])) % 7
    assert out["zero_max"] == 5  # max 0 is treated as 1 (BMv2)


def test_hash_counts_fields_of_invalid_headers_and_custom_crc_is_reconfigurable() -> None:
    # p4c 1.2.4.8 copies each listed field into a temporary, so BMv2 hashes the stored value
    # of a field of an invalid header (0 in one never valid); a whole header is copied with
    # its validity and left out when invalid (tests/conformance/field_lists)
    harness = Harness(
        "bit<16> a;",
        "bit<32> with_invalid; bit<32> whole_invalid; bit<32> custom;",
        """
        opt_t o;
        hash(hdr.o.with_invalid, HashAlgorithm.crc32, 32w0, { hdr.i.a, o.x }, 32w0xFFFFFFFF);
        hash(hdr.o.whole_invalid, HashAlgorithm.crc32, 32w0, { hdr.i.a, o }, 32w0xFFFFFFFF);
        hash(hdr.o.custom, HashAlgorithm.crc32_custom, 32w0, { hdr.i.a }, 32w0xFFFFFFFF);
        """,
        decls="header opt_t { bit<16> x; }",
    )
    out = harness.run(a=0x1234)
    assert out["with_invalid"] == hashes.crc32(b"\x12\x34\x00\x00") % 0xFFFFFFFF
    assert out["whole_invalid"] == hashes.crc32(b"\x12\x34") % 0xFFFFFFFF
    assert out["custom"] == hashes.crc32(b"\x12\x34") % 0xFFFFFFFF
    [crc] = harness.switch.objects.hash_crcs.values()
    crc.configure(hashes.CrcConfig(0x04C11DB7, 0, 0, False, False))
    assert harness.run(a=0x1234)["custom"] != out["custom"]


def test_random_is_seeded_and_within_bounds() -> None:
    source = dict(
        in_fields="bit<8> a;",
        out_fields="bit<16> r1; bit<16> r2; bit<16> r3;",
        body="""
        random(hdr.o.r1, 16w10, 16w20);
        random(hdr.o.r2, 16w0, 16w65535);
        random(hdr.o.r3, 16w7, 16w7);
        """,
    )
    first = Harness(source["in_fields"], source["out_fields"], source["body"], seed=3)
    second = Harness(source["in_fields"], source["out_fields"], source["body"], seed=3)
    runs = [first.run(a=0) for _ in range(20)]
    assert runs == [second.run(a=0) for _ in range(20)]
    assert all(10 <= r["r1"] <= 20 and r["r3"] == 7 for r in runs)
    assert len({r["r2"] for r in runs}) > 1


RANDOM_PROGRAM = dict(
    in_fields="bit<8> a;",
    out_fields="bit<16> r1; bit<1> pad; bit<63> r2; bit<64> r3; bit<32> r4;",
    body="""
        random(hdr.o.r1, 16w10, 16w20);
        random(hdr.o.r2, 63w5, 63w0x7fffffffffffffff);
        random(hdr.o.r3, 64w0, 64w0xffffffffffffffff);
        random(hdr.o.r4, 32w9, 32w3);
        """,
)


def _random_expected(seed: int, runs: int) -> list[dict[str, int]]:
    """What RANDOM_PROGRAM's runs give: the seed's RandomSource drawn in program order."""
    reference = RandomSource(seed)
    return [
        {
            "r1": reference.uniform(10, 20),
            "pad": 0,
            "r2": reference.uniform(5, 2**63 - 1),
            "r3": reference.uniform(0, 2**64 - 1),
            "r4": reference.uniform(9, 3),  # lo > hi: lo, nothing drawn
        }
        for _ in range(runs)
    ]


def test_random_of_up_to_63_bits_is_the_sources_c_draw_pure() -> None:
    # compiled, a draw of at most 63 bits calls RandomSource.uniform_at (a C call); the
    # pure module keeps the bound method, a 64-bit draw both paths
    harness = Harness(**RANDOM_PROGRAM, seed=5)
    source = harness.switch.program.source
    assert len(re.findall(r"RANDOM_SOURCE\.uniform_at\(", source)) == 3
    assert len(re.findall(r"if cython\.compiled else self\.RANDOM\(", source)) == 3
    assert "RANDOM_SOURCE: RandomSource = NS['RANDOM_SOURCE']" in source
    assert [harness.run(a=0) for _ in range(30)] == _random_expected(5, 30)


@pytest.mark.integration
@pytest.mark.skipif(native.build_missing() is not None, reason=str(native.build_missing()))
def test_random_compiled_draws_what_pure_draws(fresh_native: None) -> None:
    harness = Harness(**RANDOM_PROGRAM, seed=5)
    harness.switch = switch_on_path(harness.source, "random-1.p4", "1")
    assert harness.switch.program.shared is not None
    assert harness.switch.program.shared.how == "compiled"
    harness.switch.random.seed(5)
    assert [harness.run(a=0) for _ in range(30)] == _random_expected(5, 30)


def test_digest_copies_its_data_at_the_call() -> None:
    # p4c 1.2.4.8 copies the data into temporaries at the call; BMv2 learns them after
    # ingress, so a later write does not show (checked on BMv2: tests/p4emu/backend/
    # test_field_lists.py)
    harness = Harness(
        "bit<48> mac; bit<8> a;",
        "bit<8> r;",
        """
        meta.port = 3;
        digest<learn_t>(1, { hdr.i.mac, meta.port });
        meta.port = 4;
        """,
        decls="struct learn_t { bit<48> mac; bit<9> port; }",
        meta_fields="bit<9> port; bit<7> pad;",
    )
    harness.run(mac=0xAABBCCDDEEFF, a=0)
    [batch] = harness.switch.digest_queue.poll()
    assert batch.samples == [(0xAABBCCDDEEFF, 3)]
    info = harness.switch.objects.digests["learn_t"]
    assert batch.digest_id == info.id
    assert info.fields == (("mac", 48), ("port", 9))


CHECKSUM_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<16> a; bit<16> b; bit<16> sum; }
header flag_t { bit<8> err; }
struct headers_t { h_t h; flag_t f; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum(hdr.h.isValid(), { hdr.h.a, hdr.h.b }, hdr.h.sum, HashAlgorithm.csum16);
    }
}
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.f.setValid();
        hdr.f.err = (bit<8>)sm.checksum_error;
        hdr.h.b = hdr.h.b + 1;
        sm.egress_spec = 1;
        log_msg("a={} b={}", { hdr.h.a, hdr.h.b });
        assert(hdr.h.a != 0xDEAD);
        if (hdr.h.a == 0xFFFF) { truncate(3); }
        if (hdr.h.a == 0) { mark_to_drop(sm); }
    }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum_with_payload(hdr.h.isValid(), { hdr.h.a, hdr.h.b }, hdr.h.sum,
                                     HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.f); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def test_checksums_log_msg_assert_truncate_and_mark_to_drop() -> None:
    switch = switch_for(CHECKSUM_PROGRAM, "checksum.p4")
    logs: list[str] = []
    switch.log_callback = logs.append
    good = hashes.csum16(b"\x12\x34\x00\x05")
    switch.inject(0, b"\x12\x34\x00\x05" + good.to_bytes(2, "big") + b"pay")
    [(port, frame)] = switch.collect()
    assert port == 1
    assert frame[6] == 0  # checksum_error
    expected = hashes.csum16(b"\x12\x34\x00\x06" + b"pay")  # with payload
    assert frame[:6] == b"\x12\x34\x00\x06" + expected.to_bytes(2, "big")
    assert frame[7:] == b"pay"
    assert logs == ["a=4660 b=6"]
    switch.inject(0, b"\x12\x34\x00\x05\x00\x00")
    assert switch.collect()[0][1][6] == 1  # bad checksum reported, packet still forwarded
    switch.inject(0, b"\xff\xff\x00\x00\x00\x00")
    assert switch.collect()[0][1] == b"\xff\xff\x00"  # truncate(3)
    switch.inject(0, b"\x00\x00\x00\x00\x00\x00")
    assert switch.collect() == [] and switch.dropped(reason="ingress_drop") == 1
    with pytest.raises(P4AssertionError, match=r"Assert error: assert\(hdr.h.a != 0xDEAD\) failed"):
        switch.inject(0, b"\xde\xad\x00\x00\x00\x00")


STRUCT_FIELD_EXTERNS = (
    Path(__file__).parents[2] / "conformance" / "frontend" / "struct_in_header_extern.p4"
)


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ("{hdr.h.f}", "'hdr.h.f' inside a list"),
        ("{hdr.h.f, hdr.h.mode}", "'hdr.h.f' inside a list"),
        ("hdr.h.p", "'hdr.h.p' whose struct pair_t holds a struct"),
    ],
)
def test_a_struct_typed_header_field_bmv2_cannot_load_in_a_field_list_is_refused(
    data: str, where: str
) -> None:
    # p4c 1.2.4.8 accepts these but writes a nested field list, and BMv2 1.15 stops at load
    source = STRUCT_FIELD_EXTERNS.read_text().replace("16w0, hdr.h.f,", f"16w0, {data},")
    assert data in source
    with pytest.raises(CompileError) as info:
        switch_for(source, "fl.p4")
    line = next(n for n, text in enumerate(source.splitlines(), 1) if "hash(" in text)
    assert str(info.value).startswith(f"fl.p4:{line}:")
    assert f"the struct-typed header field {where} in a field list: p4c 1.2.4.8 makes" in str(
        info.value
    )


def test_a_struct_typed_header_field_as_digest_data_is_its_fields() -> None:
    source = STRUCT_FIELD_EXTERNS.read_text().replace(
        "sm.egress_spec = 1;",
        "sm.egress_spec = 1; if (hdr.h.mode == 1) { digest<flat_t>(1, hdr.h.f); } "
        "else { digest<M>(2, {hdr.h.p}); }",
    )
    # its fields are copied first (as p4c does): sampled even when the header is invalid;
    # unlike hash data, nested structs and lists are fine (BMv2 loads p4c's learn lists)
    switch = switch_for(source, "dg.p4")
    switch.inject(0, bytes.fromhex("102034ABCD0100000000000000"))  # mode 1: h invalid
    switch.inject(0, bytes.fromhex("102034ABCD0000000000000000"))
    batches = {batch.digest_id: batch.samples for batch in switch.digest_queue.poll()}
    digests = switch.objects.digests
    assert digests["flat_t"].fields == (("x", 8), ("y", 8))
    assert batches[digests["flat_t"].id] == [(0xAB, 0xCD)]
    assert batches[digests["M"].id] == [(0x11, 0x20, 3, 4)]  # a + 1 (the parser)


def test_a_struct_variable_in_log_msg_is_refused_as_p4c_does() -> None:
    rejected = Path(__file__).parents[2] / "conformance" / "rejected" / "struct_in_log_msg.p4"
    source = rejected.read_text().replace("{hdr.h.p}", "{m.s}")
    with pytest.raises(CompileError, match=r"log\.p4:\d+:\d+: error: log_msg cannot print the "):
        switch_for(source, "log.p4")
