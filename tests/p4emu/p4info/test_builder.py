"""Hand-built control-plane models -> P4Info, compared with p4c's expected output.

Expected outputs and where they come from (p4lang/p4c, testdata/p4_16_samples_outputs/):

* data/basic_routing-bmv2.p4info.txtpb: written from basic_routing-bmv2.p4.p4info.txtpb
  (commit 2d948f28). Like p4c 1.2.4.8, no ``initial_default_action`` (newer p4c writes one
  per table, p4c#4773): none of the expected outputs here has one.
* ACTION_PROFILE_EXPECTED: action_profile-bmv2.p4.p4info.txtpb (commit 0d048ba4).
* data/fabric_subset.entries.txtpb: entries of fabric_20190420/fabric.p4.p4info.txtpb
  (commit 478acab2) for a subset of the program (filtering and hashed-next tables, port
  counters, direct counters, action selector, packet I/O headers), values as p4c wrote them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4i

from p4emu.p4info import build_p4info, p4info_from_text, p4info_to_text
from p4emu.p4info.exceptions import (
    DuplicateNameError,
    FieldIdError,
    IdCollisionError,
    ModelError,
)
from p4emu.p4info.model import (
    Action,
    ActionParam,
    ActionProfile,
    ActionRef,
    ActionScope,
    BitstringSpec,
    BoolSpec,
    ControllerHeader,
    ControllerMetadata,
    ControlPlaneModel,
    Counter,
    CounterUnit,
    DefaultAction,
    Digest,
    DirectCounter,
    DirectMeter,
    Documentation,
    EnumDef,
    HeaderDef,
    MatchField,
    MatchType,
    Meter,
    MeterUnit,
    NamedKind,
    NamedSpec,
    NewTypeDef,
    PkgInfo,
    Preamble,
    Register,
    SerializableEnumDef,
    StructDef,
    Table,
    Translation,
    TypeInfo,
    ValueSet,
    ValueSetMatch,
)

DATA = Path(__file__).parent / "data"
NO_ACTION = Action(Preamble("NoAction", annotations=('@noWarn("unused")',)))
DEFAULT_NO_ACTION = ActionRef("NoAction", ActionScope.DEFAULT_ONLY, ("@defaultonly",))


def exact(name: str, width: int, kind: MatchType = MatchType.EXACT) -> MatchField:
    return MatchField(name, width, kind)


def action(name: str, *params: tuple[str, int]) -> Action:
    return Action(Preamble(name), [ActionParam(p, w) for p, w in params])


def table(name: str, keys: list[MatchField], actions: list[str], size: int) -> Table:
    refs = [ActionRef(a) for a in actions] + [DEFAULT_NO_ACTION]
    return Table(Preamble(name), keys, refs, default_action=DefaultAction("NoAction"), size=size)


def basic_routing_model() -> ControlPlaneModel:
    vrf = exact("meta.ingress_metadata.vrf", 12)
    nexthop = exact("meta.ingress_metadata.nexthop_index", 16)
    return ControlPlaneModel(
        tables=[
            table(
                "ingress.bd", [exact("meta.ingress_metadata.bd", 16)], ["ingress.set_vrf"], 65536
            ),
            table(
                "ingress.ipv4_fib",
                [vrf, exact("hdr.ipv4.dstAddr", 32)],
                ["ingress.on_miss", "ingress.fib_hit_nexthop"],
                131072,
            ),
            table(
                "ingress.ipv4_fib_lpm",
                [vrf, exact("hdr.ipv4.dstAddr", 32, MatchType.LPM)],
                ["ingress.on_miss", "ingress.fib_hit_nexthop"],
                16384,
            ),
            table(
                "ingress.nexthop",
                [nexthop],
                ["ingress.on_miss", "ingress.set_egress_details"],
                32768,
            ),
            table(
                "ingress.port_mapping",
                [exact("standard_metadata.ingress_port", 9)],
                ["ingress.set_bd"],
                32768,
            ),
            table(
                "egress.rewrite_mac",
                [nexthop],
                ["egress.on_miss", "egress.rewrite_src_dst_mac"],
                32768,
            ),
        ],
        actions=[
            NO_ACTION,
            action("ingress.set_vrf", ("vrf", 12)),
            action("ingress.on_miss"),
            action("ingress.fib_hit_nexthop", ("nexthop_index", 16)),
            action("ingress.set_egress_details", ("egress_spec", 9)),
            action("ingress.set_bd", ("bd", 16)),
            NO_ACTION,  # localized again into egress: emitted once
            action("egress.on_miss"),
            action("egress.rewrite_src_dst_mac", ("smac", 48), ("dmac", 48)),
        ],
    )


def test_basic_routing_matches_p4c_text_exactly() -> None:
    expected_text = (DATA / "basic_routing-bmv2.p4info.txtpb").read_text()
    info = build_p4info(basic_routing_model())
    assert info == p4info_from_text(expected_text)  # field by field
    assert p4info_to_text(info) == expected_text  # and byte for byte


ACTION_PROFILE_EXPECTED = """\
pkg_info {
  arch: "v1model"
}
tables {
  preamble {
    id: 46872340
    name: "IngressI.indirect"
    alias: "indirect"
  }
  action_refs {
    id: 23455883
  }
  action_refs {
    id: 21257015
  }
  const_default_action_id: 21257015
  implementation_id: 294074782
  size: 1024
}
tables {
  preamble {
    id: 38116258
    name: "IngressI.indirect_ws"
    alias: "indirect_ws"
  }
  action_refs {
    id: 23455883
  }
  action_refs {
    id: 21257015
  }
  const_default_action_id: 21257015
  implementation_id: 300324846
  size: 1024
}
actions {
  preamble {
    id: 21257015
    name: "NoAction"
    alias: "NoAction"
    annotations: "@corelib"
    annotations: "@noWarn(\\"unused\\")"
  }
}
actions {
  preamble {
    id: 23455883
    name: "IngressI.drop"
    alias: "drop"
  }
}
action_profiles {
  preamble {
    id: 294074782
    name: "ap"
    alias: "ap"
  }
  table_ids: 46872340
  size: 128
}
action_profiles {
  preamble {
    id: 300324846
    name: "ap_ws"
    alias: "ap_ws"
  }
  table_ids: 38116258
  with_selector: true
  size: 1024
}
type_info {
}
"""


def test_action_profiles_match_p4c() -> None:
    no_action = Action(Preamble("NoAction", annotations=("@corelib", '@noWarn("unused")')))
    const_no_action = DefaultAction("NoAction", is_const=True)
    refs = [ActionRef("IngressI.drop"), ActionRef("NoAction")]
    model = ControlPlaneModel(
        tables=[
            Table(Preamble("IngressI.indirect"), [], refs, const_no_action, implementation="ap"),
            Table(
                Preamble("IngressI.indirect_ws"),
                [MatchField("meta.hash1", 32, MatchType.SELECTOR)],  # not a P4Runtime key
                refs,
                const_no_action,
                implementation="ap_ws",
            ),
        ],
        actions=[no_action, action("IngressI.drop")],
        action_profiles=[
            ActionProfile(Preamble("ap"), with_selector=False, size=128),
            ActionProfile(Preamble("ap_ws"), with_selector=True, size=1024),
        ],
    )
    assert p4info_to_text(build_p4info(model)).split("\n", 3)[3] == ACTION_PROFILE_EXPECTED


FABRIC_SUBSET_EXPECTED = (DATA / "fabric_subset.entries.txtpb").read_text()


def fabric_subset_model() -> ControlPlaneModel:
    f = "FabricIngress.filtering."
    n = "FabricIngress.next."
    pc = "FabricIngress.port_counters_control."
    both = CounterUnit.BOTH
    return ControlPlaneModel(
        pkg_info=None,
        tables=[
            Table(
                Preamble(f + "ingress_port_vlan"),
                [
                    exact("ig_port", 9),
                    exact("vlan_is_valid", 1),
                    exact("vlan_id", 12, MatchType.TERNARY),
                ],
                [
                    ActionRef(f + "deny"),
                    ActionRef(f + "permit"),
                    ActionRef(f + "permit_with_internal_vlan"),
                ],
                DefaultAction(f + "deny", is_const=True),
                direct_counter=f + "ingress_port_vlan_counter",
            ),
            Table(
                Preamble(f + "fwd_classifier"),
                [
                    exact("ig_port", 9),
                    exact("eth_dst", 48, MatchType.TERNARY),
                    exact("eth_type", 16),
                ],
                [ActionRef(f + "set_forwarding_type")],
                DefaultAction(f + "set_forwarding_type", (0,), is_const=True),
                direct_counter=f + "fwd_classifier_counter",
            ),
            Table(
                Preamble(n + "hashed"),
                [exact("next_id", 32), MatchField("hdr.ipv4.dst_addr", 32, MatchType.SELECTOR)],
                [
                    ActionRef(n + "output_hashed"),
                    ActionRef("nop", ActionScope.DEFAULT_ONLY, ("@defaultonly",)),
                ],
                DefaultAction("nop", is_const=True),
                implementation=n + "hashed_selector",
                direct_counter=n + "hashed_counter",
            ),
        ],
        actions=[
            action("nop"),
            action(f + "deny"),
            action(f + "permit"),
            action(f + "permit_with_internal_vlan", ("vlan_id", 12)),
            action(f + "set_forwarding_type", ("fwd_type", 3)),
            action(n + "output_hashed", ("port_num", 9)),
        ],
        action_profiles=[
            ActionProfile(Preamble(n + "hashed_selector"), True, 1024, max_group_size=16)
        ],
        counters=[
            Counter(Preamble(pc + "egress_port_counter"), both, 511),
            Counter(Preamble(pc + "ingress_port_counter"), both, 511),
        ],
        # declaration order differs from table order on purpose: tables decide
        direct_counters=[
            DirectCounter(Preamble(n + "hashed_counter"), both),
            DirectCounter(Preamble(f + "ingress_port_vlan_counter"), both),
            DirectCounter(Preamble(f + "fwd_classifier_counter"), both),
            DirectCounter(Preamble(f + "unused_counter"), both),  # no table: symbol only
        ],
        controller_headers=[
            ControllerHeader(
                Preamble("packet_in", annotations=('@controller_header("packet_in")',)),
                "packet_in_header_t",
                [ControllerMetadata("ingress_port", 9), ControllerMetadata("_pad", 7)],
            ),
            ControllerHeader(
                Preamble("packet_out", annotations=('@controller_header("packet_out")',)),
                "packet_out_header_t",
                [ControllerMetadata("egress_port", 9), ControllerMetadata("_pad", 7)],
            ),
        ],
    )


def test_fabric_subset_matches_p4c_entries() -> None:
    text = p4info_to_text(build_p4info(fabric_subset_model()))
    assert text.split("\n", 3)[3] == FABRIC_SUBSET_EXPECTED


# ------------------------------------------------------------------ other resources


def test_meters_registers_digests_value_sets_and_type_info() -> None:
    model = ControlPlaneModel(
        pkg_info=PkgInfo(
            name="prog",
            version="1.0",
            annotations=("@custom",),
            doc=Documentation(brief="A program"),
        ),
        tables=[
            Table(
                Preamble("ingress.t", explicit_id=0x02000001, doc=Documentation("b", "d")),
                [
                    MatchField("meta.color", 2, MatchType.EXACT, type_name="color_t"),
                    MatchField("meta.port", 32, MatchType.OPTIONAL, type_name="port_t"),
                ],
                [ActionRef("ingress.a", ActionScope.TABLE_ONLY, ("@tableonly",))],
                DefaultAction("NoAction"),
                direct_meter="ingress.dm",
                supports_timeout=True,
                is_const_table=True,
                has_initial_entries=True,
            )
        ],
        actions=[
            NO_ACTION,
            Action(Preamble("ingress.a"), [ActionParam("p", 9, explicit_id=7)]),
            Action(Preamble("ingress.hidden"), hidden=True),
        ],
        meters=[Meter(Preamble("ingress.m"), MeterUnit.BYTES, 64)],
        direct_meters=[DirectMeter(Preamble("ingress.dm"), MeterUnit.PACKETS)],
        registers=[
            Register(Preamble("ingress.r"), 16, BitstringSpec(48)),
            Register(Preamble("ingress.rs"), 4, NamedSpec(NamedKind.STRUCT, "pair_t")),
        ],
        digests=[
            Digest(Preamble("learn_t"), NamedSpec(NamedKind.STRUCT, "learn_t")),
            Digest(Preamble("learn_t"), NamedSpec(NamedKind.STRUCT, "learn_t")),  # same type
        ],
        value_sets=[
            ValueSet(Preamble("ParserImpl.pvs"), 4, [ValueSetMatch("", 16)]),
        ],
        type_info=TypeInfo(
            structs={
                "learn_t": StructDef((("mac", BitstringSpec(48)), ("ok", BoolSpec()))),
                "pair_t": StructDef((("a", BitstringSpec(8, signed=True)),)),
            },
            headers={"h_t": HeaderDef((("s.f8", BitstringSpec(8)),))},
            enums={"E": EnumDef(("A", "B"))},
            serializable_enums={"color_t": SerializableEnumDef(2, (("GREEN", 0), ("RED", 2)))},
            new_types={
                "port_t": NewTypeDef(translation=Translation("p4.org/port", 32)),
                "name_t": NewTypeDef(translation=Translation("p4.org/name", None)),
                "raw_t": NewTypeDef(original=BitstringSpec(12)),
            },
            error_members=("NoError", "PacketTooShort"),
        ),
    )
    info = build_p4info(model)
    assert info.pkg_info.name == "prog" and info.pkg_info.doc.brief == "A program"
    (t,) = info.tables
    assert t.preamble.id == 0x02000001 and t.preamble.doc.description == "d"
    assert t.idle_timeout_behavior == p4i.Table.NOTIFY_CONTROL
    assert t.is_const_table and t.has_initial_entries
    assert [f.type_name.name for f in t.match_fields] == ["color_t", "port_t"]
    assert t.match_fields[1].match_type == p4i.MatchField.OPTIONAL
    assert t.action_refs[0].scope == p4i.ActionRef.TABLE_ONLY
    assert list(t.direct_resource_ids) == [info.direct_meters[0].preamble.id]
    assert [a.preamble.name for a in info.actions] == ["NoAction", "ingress.a"]
    assert info.actions[1].params[0].id == 7
    assert info.meters[0].spec.unit == p4i.MeterSpec.BYTES and info.meters[0].size == 64
    assert info.direct_meters[0].direct_table_id == t.preamble.id
    assert info.registers[0].type_spec.bitstring.bit.bitwidth == 48
    assert info.registers[1].type_spec.struct.name == "pair_t"
    assert len(info.digests) == 1 and info.digests[0].preamble.id >> 24 == 0x17
    assert info.value_sets[0].match[0].id == 1 and info.value_sets[0].size == 4
    types = info.type_info
    assert types.structs["pair_t"].members[0].type_spec.bitstring.int.bitwidth == 8
    assert types.structs["learn_t"].members[1].type_spec.HasField("bool")
    assert types.serializable_enums["color_t"].members[1].value == b"\x02"
    assert types.new_types["port_t"].translated_type.sdn_bitwidth == 32
    assert types.new_types["name_t"].translated_type.HasField("sdn_string")
    assert types.new_types["raw_t"].original_type.bitstring.bit.bitwidth == 12
    assert list(types.error.members) == ["NoError", "PacketTooShort"]
    # map entries come out sorted, like p4c's text output
    text = p4info_to_text(info)
    assert text.index('key: "learn_t"') < text.index('key: "pair_t"')


def test_no_type_info_when_nothing_touches_it() -> None:
    model = ControlPlaneModel(type_info=None)
    assert not build_p4info(model).HasField("type_info")


# ------------------------------------------------------------------ errors


def test_explicit_id_collision_between_objects_is_reported() -> None:
    model = ControlPlaneModel(
        actions=[
            Action(Preamble("c.a", explicit_id=0x1000010)),
            Action(Preamble("c.b", explicit_id=0x10)),
        ]
    )
    with pytest.raises(IdCollisionError, match=r"action 'c.a' and action 'c.b'"):
        build_p4info(model)


def test_duplicate_table_names_are_reported() -> None:
    model = ControlPlaneModel(
        tables=[Table(Preamble("ingress.t")), Table(Preamble("ingress.t"))],
    )
    with pytest.raises(DuplicateNameError, match=r"'ingress\.t' is used for multiple table"):
        build_p4info(model)


def test_duplicate_param_ids_are_reported() -> None:
    model = ControlPlaneModel(
        actions=[Action(Preamble("a"), [ActionParam("x", 8, 1), ActionParam("y", 8, 1)])]
    )
    with pytest.raises(FieldIdError, match="parameters of action 'a': @id 1 is used multiple"):
        build_p4info(model)


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            ControlPlaneModel(tables=[Table(Preamble("t"), action_refs=[ActionRef("x")])]),
            "table 't' refers to unknown action 'x'",
        ),
        (
            ControlPlaneModel(tables=[Table(Preamble("t"), default_action=DefaultAction("x"))]),
            "unknown default action 'x'",
        ),
        (
            ControlPlaneModel(tables=[Table(Preamble("t"), implementation="p")]),
            "unknown action profile 'p'",
        ),
        (
            ControlPlaneModel(tables=[Table(Preamble("t"), direct_counter="c")]),
            "unknown direct counter 'c'",
        ),
        (
            ControlPlaneModel(
                tables=[
                    Table(Preamble("t1"), direct_meter="m"),
                    Table(Preamble("t2"), direct_meter="m"),
                ],
                direct_meters=[DirectMeter(Preamble("m"), MeterUnit.BYTES)],
            ),
            "direct meter 'm' is used by two tables",
        ),
    ],
)
def test_inconsistent_models_are_rejected(model: ControlPlaneModel, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        build_p4info(model)


def test_no_initial_default_action_as_p4c_1_2_4_8() -> None:
    model = ControlPlaneModel(
        actions=[action("a", ("x", 12))],
        tables=[
            Table(Preamble("t"), default_action=DefaultAction("a", (-1,))),
            Table(Preamble("u"), default_action=DefaultAction("a", (1,), is_const=True)),
        ],
    )
    t, u = build_p4info(model).tables
    assert not t.HasField("initial_default_action") and not t.const_default_action_id
    assert not u.HasField("initial_default_action")
    assert u.const_default_action_id == build_p4info(model).actions[0].preamble.id
