"""P4 source -> P4Info through the front end, compared with p4c's behaviour.

programs/*.p4 have the control-plane surface of p4c testdata programs (p4lang/p4c,
testdata/p4_16_samples/): basic_routing-bmv2.p4, fabric_20190420/fabric.p4 and
actions-almost-duplicate-names1.p4. Their P4Info must equal p4c's expected outputs
(testdata/p4_16_samples_outputs/*.p4info.txtpb; data/almost_duplicate_names.p4info.txtpb is
written from actions-almost-duplicate-names1.p4.p4info.txtpb at commit 95dc4e2b; see
test_builder.py for the other two).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4i

from p4emu.frontend import load_program, load_program_text
from p4emu.p4info import build_p4info, hashed_id, p4info_to_text
from p4emu.p4info.exceptions import DuplicateNameError, IdCollisionError
from p4emu.p4info.extract import ExtractError, extract_model
from p4emu.p4info.ids import ResourceType

HERE = Path(__file__).parent
PROGRAMS = HERE / "programs"

HEADERS = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<16> f; bit<8> g; }
struct headers { h_t h; h_t[2] stack; }
struct meta_t { bit<32> x; bit<8> y; }
parser P(packet_in pk, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout meta_t m) { apply { } }
control CC(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
"""


def program(ingress: str, egress: str = "apply { }", prelude: str = "") -> str:
    """A v1model program around the given ingress / egress control bodies."""
    return (
        HEADERS
        + prelude
        + "\ncontrol I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {\n"
        + ingress
        + "\n}\ncontrol E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {\n"
        + egress
        + "\n}\nV1Switch(P(), VC(), I(), E(), CC(), D()) main;\n"
    )


def p4info(source: str) -> p4i.P4Info:
    return build_p4info(extract_model(load_program_text(source, "test.p4")))


def names(entities: object) -> list[str]:
    return [entity.preamble.name for entity in entities]  # type: ignore[attr-defined]


# ------------------------------------------------------------------ whole programs


def test_basic_routing_program_gives_p4c_p4info() -> None:
    info = build_p4info(extract_model(load_program(PROGRAMS / "basic_routing.p4")))
    expected = (HERE / "data" / "basic_routing-bmv2.p4info.txtpb").read_text()
    assert p4info_to_text(info) == expected


def test_fabric_subset_program_gives_p4c_entries() -> None:
    expected = (HERE / "data" / "fabric_subset.entries.txtpb").read_text()
    info = build_p4info(extract_model(load_program(PROGRAMS / "fabric_subset.p4")))
    assert info.pkg_info.arch == "v1model"
    info.ClearField("pkg_info")
    assert p4info_to_text(info).split("\n", 3)[3] == expected


def test_global_and_local_name_collisions_give_p4c_p4info() -> None:
    info = build_p4info(extract_model(load_program(PROGRAMS / "almost_duplicate_names.p4")))
    expected = (HERE / "data" / "almost_duplicate_names.p4info.txtpb").read_text()
    assert p4info_to_text(info) == expected


# ------------------------------------------------------------------ names and order


def test_front_end_effects_on_tables_and_actions() -> None:
    info = p4info(
        program(
            """
            action used_by_body() { }
            action unused() { }
            @hidden action hidden_act() { }
            @name(".absolute") action abs_act() { }
            @name("renamed") action ren_act() { }
            table t1 { key = { hdr.h.f: exact; } actions = { abs_act; ren_act; hidden_act; } }
            @name(".top") table t2 { actions = { ren_act; NoAction; } }
            table never_applied { actions = { unused; } }
            apply { t2.apply(); t1.apply(); used_by_body(); }
            """,
            "apply { }",
            "action global_b() { }\naction global_a() { }\n",
        )
    )
    # tables in declaration order, unapplied ones removed
    assert names(info.tables) == ["I.t1", "top"]
    t1, t2 = info.tables
    action_ids = {a.preamble.name: a.preamble.id for a in info.actions}
    # CreateBuiltins: implicit @defaultonly NoAction and default_action = NoAction()
    assert t1.action_refs[-1].id == hashed_id(ResourceType.ACTION, "NoAction")
    assert t1.action_refs[-1].scope == p4i.ActionRef.DEFAULT_ONLY
    assert not t1.HasField("initial_default_action")  # p4c 1.2.4.8 writes none
    assert not t1.const_default_action_id
    # NoAction already listed: no @defaultonly entry added
    assert [ref.scope for ref in t2.action_refs] == [p4i.ActionRef.TABLE_AND_DEFAULT] * 2
    # hidden actions are referenced but not described; unused ones are gone
    assert hashed_id(ResourceType.ACTION, "I.hidden_act") in [r.id for r in t1.action_refs]
    # localized top-level actions first, then used local ones in declaration order
    assert names(info.actions) == ["NoAction", "I.used_by_body", "absolute", "I.renamed"]
    assert action_ids["absolute"] == hashed_id(ResourceType.ACTION, "absolute")


def test_global_actions_come_first_in_first_use_order() -> None:
    info = p4info(
        program(
            """
            action local() { }
            table t1 { actions = { local; g2; g1; } default_action = g1(); }
            table t2 { actions = { g3; g1; } }
            apply { t1.apply(); t2.apply(); g4(); }
            """,
            "table te { actions = { g2; g5; } } apply { te.apply(); }",
            "action g1() { }\naction g2() { }\naction g3() { }\naction g4() { }\naction g5() { }\n",
        )
    )
    assert names(info.actions) == ["g2", "g1", "g3", "NoAction", "g4", "I.local", "g5"]


def test_sub_control_objects_are_inlined_with_instance_prefix() -> None:
    info = p4info(
        program(
            """
            counter(4, CounterType.packets) c_first;
            @name("inner") Sub() sub;
            Sub() unused_sub;
            table t_last { actions = { NoAction; } }
            apply { sub.apply(hdr); t_last.apply(); }
            """,
            prelude="""
            control Sub(inout headers hdr) {
                counter(2, CounterType.bytes) c;
                action a() { c.count(0); }
                table t { key = { hdr.h.g: exact; } actions = { a; } }
                apply { t.apply(); }
            }
            """,
        )
    )
    assert names(info.tables) == ["I.inner.t", "I.t_last"]
    assert names(info.counters) == ["I.c_first", "I.inner.c"]
    assert "I.unused_sub.t" not in names(info.tables)
    assert info.tables[0].preamble.alias == "t"


def test_key_field_names_follow_p4c_table_key_names() -> None:
    info = p4info(
        program(
            """
            table t {
                key = {
                    hdr.h.f: exact;
                    hdr.h.f[7:0]: ternary;
                    hdr.h.isValid(): exact;
                    hdr.stack[1].g: lpm;
                    hdr.h.g & 0x0F: ternary;
                    m.x: range @name("explicit");
                    m.y: optional @my_anno(1, "x");
                }
                actions = { NoAction; }
            }
            apply { t.apply(); }
            """
        )
    )
    fields = info.tables[0].match_fields
    assert [f.name for f in fields] == [
        "hdr.h.f",
        "hdr.h.f[7:0]",
        "hdr.h.$valid$",
        "hdr.stack[1].g",
        "hdr.h.g & 0xf",
        "explicit",
        "m.y",
    ]
    assert [f.bitwidth for f in fields] == [16, 8, 1, 8, 8, 32, 8]
    assert [f.match_type for f in fields] == [
        p4i.MatchField.EXACT,
        p4i.MatchField.TERNARY,
        p4i.MatchField.EXACT,
        p4i.MatchField.LPM,
        p4i.MatchField.TERNARY,
        p4i.MatchField.RANGE,
        p4i.MatchField.OPTIONAL,
    ]
    assert list(fields[6].annotations) == ['@my_anno(1 , "x")']


# ------------------------------------------------------------------ table properties


def test_default_actions_entries_timeout_and_direct_meter() -> None:
    info = p4info(
        program(
            """
            direct_meter<bit<2>>(MeterType.packets) dm;
            action set(bit<9> port, bool flag) { sm.egress_spec = port; }
            action metered() { bit<2> c; dm.read(c); }
            table t_const {
                key = { hdr.h.g: exact; }
                actions = { set; }
                const default_action = set(5, true);
                const entries = { 1 : set(3, false); }
            }
            table t_init {
                key = { hdr.h.g: exact; }
                actions = { @tableonly set; @defaultonly metered; }
                default_action = metered();
                entries = { 2 : set(1, true); }
                meters = dm;
                support_timeout = true;
                size = 0;
            }
            apply { t_const.apply(); t_init.apply(); }
            """
        )
    )
    t_const, t_init = info.tables
    set_id = hashed_id(ResourceType.ACTION, "I.set")
    assert t_const.const_default_action_id == set_id
    assert not t_const.HasField("initial_default_action")
    assert t_const.is_const_table and t_const.has_initial_entries
    assert not t_init.is_const_table and t_init.has_initial_entries
    assert t_init.size == 1024  # size = 0 means the default
    assert t_init.idle_timeout_behavior == p4i.Table.NOTIFY_CONTROL
    assert [r.scope for r in t_init.action_refs] == [
        p4i.ActionRef.TABLE_ONLY,
        p4i.ActionRef.DEFAULT_ONLY,
    ]
    assert list(t_init.direct_resource_ids) == [info.direct_meters[0].preamble.id]
    assert info.direct_meters[0].direct_table_id == t_init.preamble.id


def test_in_place_action_profile_uses_the_property_name() -> None:
    info = p4info(
        program(
            """
            action a(bit<9> p) { sm.egress_spec = p; }
            table t {
                key = { hdr.h.g: exact; hdr.h.f: selector; }
                actions = { a; }
                @name("sel") @max_group_size(8)
                implementation = action_selector(HashAlgorithm.crc16, 32w128, 32w16);
            }
            apply { t.apply(); }
            """
        )
    )
    (profile,) = info.action_profiles
    assert profile.preamble.name == "sel"  # not prefixed, as in p4c
    assert profile.preamble.id == hashed_id(ResourceType.ACTION_PROFILE, "sel")
    assert profile.with_selector and profile.size == 128 and profile.max_group_size == 8
    assert list(profile.preamble.annotations) == []
    assert list(profile.table_ids) == [info.tables[0].preamble.id]
    assert [f.id for f in info.tables[0].match_fields] == [1]


# ------------------------------------------------------------------ externs and types


def test_registers_counters_meters_digests_and_type_info() -> None:
    info = p4info(
        program(
            """
            register<bit<48>>(16) r48;
            register<pair_t>(4) rpair;
            meter(64, MeterType.bytes) m1;
            counter(8, CounterType.packets_and_bytes) c1;
            action learn() { digest<pair_t>(1, {m.x, m.x}); }
            table t { key = { hdr.h.g: exact; } actions = { learn; } }
            apply { t.apply(); r48.write(0, 1); }
            """,
            "apply { digest(2, m); }",
            "struct pair_t { bit<32> a; bit<32> b; }\n",
        )
    )
    assert names(info.registers) == ["I.r48", "I.rpair"]
    assert info.registers[0].type_spec.bitstring.bit.bitwidth == 48
    assert info.registers[1].type_spec.struct.name == "pair_t"
    assert info.meters[0].spec.unit == p4i.MeterSpec.BYTES
    assert info.counters[0].spec.unit == p4i.CounterSpec.BOTH
    assert names(info.digests) == ["pair_t", "meta_t"]
    assert info.digests[0].preamble.id == hashed_id(ResourceType.DIGEST, "pair_t")
    assert set(info.type_info.structs) == {"pair_t", "meta_t"}


def test_global_extern_instances_keep_bare_names_and_come_first() -> None:
    info = p4info(
        program(
            "register<bit<8>>(2) local_r; apply { local_r.write(0, 1); global_r.write(0, 2); }",
            prelude="register<bit<8>>(4) global_r;\n",
        )
    )
    assert names(info.registers) == ["global_r", "I.local_r"]


def test_controller_headers_value_sets_new_types_and_enums() -> None:
    source = """
    #include <core.p4>
    #include <v1model.p4>
    @p4runtime_translation("p4.org/psa/v1/PortId_t", 32)
    type bit<9> port_t;
    type bit<16> raw_t;
    enum bit<8> color_t { GREEN = 0, RED = 2 }
    @controller_header("packet_in")
    header packet_in_t { @id(2) port_t port; bit<3> a; bit<4> b; @id(1) bit<1> pad; }
    header h_t { bit<16> f; }
    struct vs_t { @match(ternary) bit<16> f; bit<16> f2; }
    struct headers { h_t h; }
    struct meta_t { color_t color; raw_t raw; }
    parser P(packet_in pk, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
        value_set<bit<16>>(4) pvs;
        value_set<vs_t>(8) svs;
        value_set<bit<16>>(2) unused_vs;
        state start {
            pk.extract(hdr.h);
            transition select(hdr.h.f) { pvs: next; default: accept; }
        }
        state next {
            transition select(hdr.h.f, hdr.h.f) { svs: accept; default: accept; }
        }
    }
    control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
        action set(port_t p, raw_t r) { }
        table t { key = { m.color: exact; m.raw: exact; } actions = { set; } }
        apply { t.apply(); }
    }
    control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
    control VC(inout headers hdr, inout meta_t m) { apply { } }
    control CC(inout headers hdr, inout meta_t m) { apply { } }
    control D(packet_out pk, in headers hdr) { apply { } }
    @pkginfo(name="prog", version="1.2") @brief("demo")
    V1Switch(P(), VC(), I(), E(), CC(), D()) main;
    """
    info = p4info(source)
    (header,) = info.controller_packet_metadata
    assert header.preamble.name == header.preamble.alias == "packet_in"
    assert header.preamble.id == hashed_id(ResourceType.CONTROLLER_HEADER, "packet_in_t")
    # explicit ids first; p4c's counter also moves past explicitly numbered fields
    assert [(m.id, m.name, m.bitwidth) for m in header.metadata] == [
        (2, "port", 32),
        (3, "a", 3),
        (4, "b", 4),
        (1, "pad", 1),
    ]
    assert names(info.value_sets) == ["P.pvs", "P.svs"]
    assert info.value_sets[1].match[0].match_type == p4i.MatchField.TERNARY
    params = info.actions[-1].params
    assert [(p.name, p.bitwidth, p.type_name.name) for p in params] == [
        ("p", 32, "port_t"),
        ("r", 16, "raw_t"),
    ]
    key = info.tables[0].match_fields
    assert [(f.bitwidth, f.type_name.name) for f in key] == [(8, ""), (16, "raw_t")]
    types = info.type_info
    assert types.new_types["port_t"].translated_type.sdn_bitwidth == 32
    assert types.new_types["raw_t"].original_type.bitstring.bit.bitwidth == 16
    assert [m.value for m in types.serializable_enums["color_t"].members] == [b"\x00", b"\x02"]
    assert info.pkg_info.name == "prog" and info.pkg_info.version == "1.2"
    assert info.pkg_info.doc.brief == "demo"


def test_trivial_program_has_no_type_info() -> None:
    info = p4info(program("apply { }"))
    assert not info.HasField("type_info")
    assert info.pkg_info.arch == "v1model"


# ------------------------------------------------------------------ errors


def test_explicit_id_collision_is_an_error() -> None:
    source = program(
        """
        @id(7) table t1 { actions = { NoAction; } }
        @id(0x02000007) table t2 { actions = { NoAction; } }
        apply { t1.apply(); t2.apply(); }
        """
    )
    with pytest.raises(IdCollisionError, match=r"@id 0x02000007 .*'I.t1'.*'I.t2'"):
        p4info(source)


def test_duplicate_names_are_an_error() -> None:
    source = program(
        """
        @name("same") table t1 { actions = { NoAction; } }
        @name("same") table t2 { actions = { NoAction; } }
        apply { t1.apply(); t2.apply(); }
        """
    )
    with pytest.raises(DuplicateNameError, match=r"'I\.same' is used for multiple table"):
        p4info(source)


@pytest.mark.parametrize(
    ("ingress", "message"),
    [
        (
            "table t { key = { hdr.h.f + 1: exact; } actions = { NoAction; } }"
            " apply { t.apply(); }",
            "complex key expression requires a @name annotation",
        ),
        (
            "action a() { } table t { key = { hdr.h.f: selector; } actions = { a; }"
            " implementation = action_profile(32w4); } apply { t.apply(); }",
            "anonymous table property 'implementation' with no name annotation",
        ),
        (
            "table t { actions = { @tableonly @defaultonly NoAction; } } apply { t.apply(); }",
            "annotated with both '@tableonly' and '@defaultonly'",
        ),
    ],
)
def test_programs_p4runtime_cannot_describe_are_rejected(ingress: str, message: str) -> None:
    with pytest.raises(ExtractError, match=message):
        p4info(program(ingress))


def test_value_set_struct_fields_must_be_bit_strings() -> None:
    source = program("apply { }").replace(
        "state start {",
        "value_set<e_t>(2) vs; state start { transition select(m.c, m.y) { vs: accept; "
        "default: accept; } }\n state unused {",
    )
    source = source.replace(
        "struct meta_t { bit<32> x; bit<8> y; }",
        "enum bit<8> color_t { A = 1 }\nstruct e_t { color_t c; bit<8> y; }\n"
        "struct meta_t { bit<32> x; bit<8> y; color_t c; }",
    )
    with pytest.raises(ExtractError, match=r"value set P\.vs: field 'c' must be bit<W>"):
        p4info(source)


def test_extract_errors_carry_the_source_location() -> None:
    source = program(
        "table t { key = { hdr.h.f + 1: exact; } actions = { NoAction; } } apply { t.apply(); }"
    )
    with pytest.raises(ExtractError) as caught:
        p4info(source)
    assert str(caught.value).startswith("test.p4:")


def test_direct_type_invocation_gets_an_implicit_instance_named_after_the_type() -> None:
    # p4c's InstantiateDirectCalls: `Sub.apply()` behaves as `Sub() Sub; Sub.apply()`.
    info = p4info(
        program(
            "apply { Sub.apply(hdr); }",
            prelude=(
                "control Sub(inout headers hdr) {\n"
                "    table t { actions = { NoAction; } }\n"
                "    apply { t.apply(); }\n"
                "}\n"
            ),
        )
    )
    assert names(info.tables) == ["I.Sub.t"]


def test_malformed_pkginfo_is_reported() -> None:
    source = program("apply { }").replace("V1Switch(", "@pkginfo(name) V1Switch(")
    with pytest.raises(ExtractError, match="@pkginfo expects"):
        p4info(source)


def test_hidden_tables_take_ids_but_are_not_described() -> None:
    info = p4info(
        program(
            """
            @hidden table t_hidden { actions = { NoAction; } }
            table t { actions = { NoAction; } }
            apply { t_hidden.apply(); t.apply(); }
            """
        )
    )
    assert names(info.tables) == ["I.t"]
