"""The stores p4c's SimplifyDefUse removes before an extern's ``out`` argument, as p4emu
finds them (:mod:`p4emu.backend.dead_stores`); BMv2 compares the packets of the same
programs in ``tests/conformance/semantics/extern_out_dead_store*``."""

from __future__ import annotations

from pathlib import Path

from p4emu.backend.dead_stores import dead_stores
from p4emu.frontend import ast, load_program

HEADER = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> idx; bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { bit<8> x; bit<8> y; }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control V(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    counter(4, CounterType.packets) hits;
    action touch() { m.y = hdr.h.a; }
    apply {
"""
FOOTER = """
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def removed(body: str, tmp_path: Path) -> list[str]:
    """The source lines of the apply block's statements that are removed."""
    path = tmp_path / "p.p4"
    path.write_text(HEADER + body + FOOTER)
    checked = load_program(path)
    [control] = [
        d for d in checked.program.declarations if isinstance(d, ast.ControlDecl) and d.name == "I"
    ]
    statements = control.body.statements
    dead = dead_stores(statements)
    lines = path.read_text().splitlines()
    return [lines[s.loc.line - 1].strip() for s in statements if id(s) in dead]


READ = "r.read(hdr.h.a, (bit<32>)hdr.h.idx);"


def test_a_store_just_before_the_call_is_removed(tmp_path: Path) -> None:
    assert removed(f"hdr.h.a = 1; {READ}".replace("; ", ";\n"), tmp_path) == ["hdr.h.a = 1;"]


def test_statements_that_do_not_name_the_location_stand_between(tmp_path: Path) -> None:
    body = """
        hdr.h.a = 1;
        m.x = 2;
        hits.count(0);
        if (hdr.h.idx == 3) { m.y = 4; } else { hdr.h.b = 5; }
        bit<8> t = m.x + 1;
    """
    assert removed(body + READ, tmp_path) == ["hdr.h.a = 1;"]


def test_a_read_a_write_an_exit_or_a_call_between_keeps_it(tmp_path: Path) -> None:
    for between in (
        "m.x = hdr.h.a;",  # a read
        "if (m.x == 0) { hdr.h.a = 7; }",  # a write (p4emu keeps the first store then)
        "if (m.x == 0) { exit; }",  # the value can reach the end of the control
        "touch();",  # an action reads it
        "hdr.h.setInvalid();",  # names the header holding it
    ):
        assert removed(f"hdr.h.a = 1;\n{between}\n{READ}", tmp_path) == [], between


def test_a_store_whose_value_holds_a_call_stays(tmp_path: Path) -> None:
    body = "hdr.h.a = hdr.h.isValid() ? 8w1 : 8w2;\nm.x = 3;\n" + READ
    assert removed(body, tmp_path) == []
