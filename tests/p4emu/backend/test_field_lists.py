"""Field lists naming invalid headers, where the conformance corpus cannot show them: digest
data (not compared with BMv2 by the corpus) and the ``@field_list`` of clone, resubmit and
recirculate. Hash and checksum data: ``tests/conformance/field_lists``."""

from __future__ import annotations

from pathlib import Path

import pytest
from backend_helpers import switch_for

from p4emu.backend.exceptions import CompileError
from p4emu.exceptions import P4EmuError

DIGEST_PROGRAM = Path(__file__).parents[2] / "conformance" / "digests" / "invalid_header.p4"
"""Digest data naming invalid headers' fields (also run on BMv2 by
tests/conformance/test_bmv2_digests.py)."""


def test_digest_data_holds_the_stored_values_of_invalid_headers_at_the_call() -> None:
    # p4c 1.2.4.8 copies digest data into temporaries at the call and BMv2 learns them
    # after ingress (simple_switch_grpc 1.15 sends the same: test_bmv2_digests.py)
    switch = switch_for(DIGEST_PROGRAM.read_text(), "dg.p4")
    switch.inject(0, bytes.fromhex("1100"))  # a valid; n never valid: its field 0
    switch.inject(0, bytes.fromhex("2201"))  # a invalid before the call: its values kept
    switch.inject(0, bytes.fromhex("3302"))  # a invalid, then valid again: zeroed
    samples = [sample for batch in switch.digest_queue.poll() for sample in batch.samples]
    # the writes after the call (port 4, a zeroed) do not show
    assert samples == [(0x11, 0, 3, 0x00), (0x22, 0, 3, 0x01), (0, 0, 3, 0)]


FIELD_LIST_PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> x; bit<8> y; }
struct H { a_t a; }
struct W { bit<8> z; MEMBER }
struct M { @field_list(1) bit<8> k; @field_list(1) KEPT }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.a); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; INGRESS }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { EGRESS } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.a); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""

CALLS = {
    "clone": ("clone_preserving_field_list(CloneType.I2E, 5, 1);", ""),
    "resubmit": ("resubmit_preserving_field_list(1);", ""),
    "recirculate": ("", "recirculate_preserving_field_list(1);"),
}


@pytest.mark.parametrize("extern", sorted(CALLS))
@pytest.mark.parametrize(
    ("kept", "member", "what"),
    [
        ("a_t h;", "", "'h' (a_t)"),
        ("a_t[2] hs;", "", "'hs' (a_t[2])"),
        ("W w;", "a_t h;", "'w' (W)"),
    ],
)
def test_a_header_in_a_preserved_field_list_is_refused(
    extern: str, kept: str, member: str, what: str
) -> None:
    # p4c 1.2.4.8 accepts it but writes the header into the JSON field list as '<null>';
    # BMv2 1.15 then refuses the program ("No field '<null>' can be found")
    ingress, egress = CALLS[extern]
    source = (
        FIELD_LIST_PROGRAM.replace("KEPT", kept)
        .replace("MEMBER", member)
        .replace("INGRESS", ingress)
        .replace("EGRESS", egress)
    )
    with pytest.raises(CompileError) as info:
        switch_for(source, "fl.p4")
    call = (ingress or egress).split("(")[0]
    line = next(n for n, text in enumerate(source.splitlines(), 1) if call in text)
    message = str(info.value)
    assert message.startswith(f"fl.p4:{line}:"), message
    assert f"field list 1 holds {what}, a header or a struct holding one: p4c 1.2.4.8" in message


def test_bit_fields_in_a_preserved_field_list_are_kept() -> None:
    source = (
        FIELD_LIST_PROGRAM.replace("KEPT", "bit<8> j;")
        .replace("MEMBER", "")
        .replace("INGRESS", "if (sm.instance_type == 0) { m.k = 7; m.j = 9; "
                 "resubmit_preserving_field_list(1); } else { hdr.a.x = m.k; hdr.a.y = m.j; }")
        .replace("EGRESS", "")
    )  # fmt: skip
    switch = switch_for(source, "fl.p4")
    switch.inject(0, bytes.fromhex("0000"))
    assert switch.collect() == [(1, bytes.fromhex("0709"))]


HASH_PROGRAM = Path(__file__).parents[2] / "conformance" / "field_lists" / "hash_invalid_header.p4"


@pytest.mark.parametrize(("data", "type_"), [("hdr.st", r"a_t\[2\]"), ("hdr.u", "u_t")])
def test_a_whole_stack_or_union_in_hash_data_is_unsupported(data: str, type_: str) -> None:
    # p4c 1.2.4.8 accepts it but BMv2 1.15 cannot load its calculation (a header_stack
    # input; a union copied as a header that does not exist)
    source = HASH_PROGRAM.read_text()
    whole = "hash(hdr.o.h_whole, HashAlgorithm.identity, 32w0, hdr.a, 64w4294967296);"
    assert whole in source
    source = source.replace(whole, whole.replace("hdr.a,", f"{{8w0xF0, {data}}},"))
    line = next(n for n, text in enumerate(source.splitlines(), 1) if "8w0xF0" in text)
    with pytest.raises(
        P4EmuError,
        match=rf"^hl\.p4:{line}:\d+: error: unsupported construct: "
        rf"field of type {type_} in a field list",
    ):
        switch_for(source, "hl.p4")
