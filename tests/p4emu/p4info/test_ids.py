"""Id derivation, probing, aliases and field ids against values p4c produced.

Every (resource, name) -> id vector below is copied from an expected P4Info that p4c's test
suite checks in (p4lang/p4c, testdata/p4_16_samples_outputs/):

* basic_routing-bmv2.p4.p4info.txtpb (commit 2d948f28)
* fabric_20190420/fabric.p4.p4info.txtpb (commit 478acab2)
* action_profile-bmv2.p4.p4info.txtpb (commit 0d048ba4)
* actions-almost-duplicate-names1.p4.p4info.txtpb (commit 95dc4e2b)
* p4rt_digest_complex.p4.p4info.txtpb (commit bf63d1ec)
"""

from __future__ import annotations

import pytest

from p4emu.p4info.exceptions import (
    FieldIdError,
    IdCollisionError,
    IdPrefixError,
    ModelError,
)
from p4emu.p4info.ids import (
    ResourceType,
    SuffixSet,
    SymbolTable,
    allocate_field_ids,
    control_plane_name,
    hashed_id,
    jenkins_one_at_a_time,
)

A = ResourceType.ACTION
T = ResourceType.TABLE

P4C_VECTORS = [
    # basic_routing-bmv2
    (T, "ingress.bd", 48392551),
    (T, "ingress.ipv4_fib", 41084491),
    (T, "ingress.ipv4_fib_lpm", 42875950),
    (T, "ingress.nexthop", 43581057),
    (T, "ingress.port_mapping", 39645634),
    (T, "egress.rewrite_mac", 40309161),
    (A, "NoAction", 21257015),
    (A, "ingress.set_vrf", 33505590),
    (A, "ingress.on_miss", 22594144),
    (A, "ingress.fib_hit_nexthop", 26104220),
    (A, "ingress.set_egress_details", 19738113),
    (A, "ingress.set_bd", 27500220),
    (A, "egress.on_miss", 28864280),
    (A, "egress.rewrite_src_dst_mac", 28966416),
    # fabric
    (T, "FabricIngress.filtering.ingress_port_vlan", 43310977),
    (T, "FabricIngress.next.hashed", 47960972),
    (T, "FabricEgress.egress_next.egress_vlan", 49262446),
    (A, "nop", 28485346),
    (A, "FabricIngress.next.mpls_routing_hashed", 27920375),
    (ResourceType.ACTION_PROFILE, "FabricIngress.next.hashed_selector", 291115404),
    (ResourceType.COUNTER, "FabricIngress.port_counters_control.egress_port_counter", 314528581),
    (
        ResourceType.COUNTER,
        "FabricIngress.port_counters_control.ingress_port_counter",
        312947283,
    ),
    (
        ResourceType.DIRECT_COUNTER,
        "FabricIngress.filtering.ingress_port_vlan_counter",
        326221069,
    ),
    (ResourceType.DIRECT_COUNTER, "FabricEgress.egress_next.egress_vlan_counter", 318892680),
    # controller headers are hashed by their header *type* name
    (ResourceType.CONTROLLER_HEADER, "packet_in_header_t", 81826293),
    (ResourceType.CONTROLLER_HEADER, "packet_out_header_t", 76689799),
    # action_profile-bmv2
    (ResourceType.ACTION_PROFILE, "ap", 294074782),
    (ResourceType.ACTION_PROFILE, "ap_ws", 300324846),
    (T, "IngressI.indirect", 46872340),
    (A, "IngressI.drop", 23455883),
    # actions-almost-duplicate-names1
    (A, "foo1", 25646030),
    (A, "ingressImpl.foo1", 30176274),
    (A, "bar", 21008649),
    (A, "ingressImpl.bar", 27458909),
    (T, "ingressImpl.t1", 49173205),
    # p4rt_digest_complex (psa)
    (ResourceType.DIGEST, "MyID.digest", 387633770),
]


@pytest.mark.parametrize(("resource", "name", "expected"), P4C_VECTORS)
def test_hashed_id_matches_p4c(resource: ResourceType, name: str, expected: int) -> None:
    assert hashed_id(resource, name) == expected


def test_symbol_table_reproduces_a_whole_p4c_program() -> None:
    symbols = SymbolTable()
    for resource, name, _ in P4C_VECTORS:
        symbols.add(resource, name)
    symbols.assign_ids()
    for resource, name, expected in P4C_VECTORS:
        assert symbols.id(resource, name) == expected


def test_jenkins_known_values() -> None:
    # Wikipedia's test vector for the one-at-a-time hash.
    assert jenkins_one_at_a_time(b"a") == 0xCA2E9442
    assert jenkins_one_at_a_time(b"The quick brown fox jumps over the lazy dog") == 0x519E91F5
    assert jenkins_one_at_a_time(b"") == 0


def test_prefixes_are_p4info_proto_values() -> None:
    assert [int(r) for r in ResourceType] == [1, 2, 3, 4, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17]
    assert ResourceType.DIRECT_METER.prefix == 0x15000000
    assert ResourceType.ACTION_PROFILE.label == "action profile"


def test_control_plane_name_strips_one_leading_dot() -> None:
    assert control_plane_name(".NoAction") == "NoAction"
    assert control_plane_name("ingress.t") == "ingress.t"


# "c.t1626" and "c.t3872" share their low 24 hash bits (0x3a2734).
COLLIDING = ("c.t1626", "c.t3872")


def test_colliding_names_are_probed_in_sorted_order() -> None:
    assert hashed_id(T, COLLIDING[0]) == hashed_id(T, COLLIDING[1]) == 0x023A2734
    for order in (COLLIDING, tuple(reversed(COLLIDING))):
        symbols = SymbolTable()
        for name in order:
            symbols.add(T, name)
        symbols.assign_ids()
        # p4c sorts the names first, so declaration order does not matter.
        assert symbols.id(T, "c.t1626") == 0x023A2734
        assert symbols.id(T, "c.t3872") == 0x023A2735


def test_explicit_id_takes_precedence_and_pushes_the_hashed_name_along() -> None:
    symbols = SymbolTable()
    symbols.add(T, "c.t1626")
    symbols.add(T, "c.other", explicit=0x3A2734)  # no prefix given: the table prefix is added
    symbols.assign_ids()
    assert symbols.id(T, "c.other") == 0x023A2734
    assert symbols.id(T, "c.t1626") == 0x023A2735


def test_same_hash_in_other_resource_types_does_not_collide() -> None:
    symbols = SymbolTable()
    symbols.add(T, "x")
    symbols.add(A, "x")
    symbols.assign_ids()
    assert symbols.id(T, "x") & 0xFFFFFF == symbols.id(A, "x") & 0xFFFFFF


def test_explicit_id_with_matching_prefix_is_kept() -> None:
    symbols = SymbolTable()
    symbols.add(A, "a", explicit=0x01000010)
    symbols.assign_ids()
    assert symbols.id(A, "a") == 0x01000010


def test_explicit_id_with_wrong_prefix_is_rejected() -> None:
    symbols = SymbolTable()
    with pytest.raises(IdPrefixError, match=r"action 'a'.*wrong 8-bit prefix.*0x01.*0x02"):
        symbols.add(A, "a", explicit=0x02000010)


def test_explicit_id_collision_is_a_clear_error() -> None:
    symbols = SymbolTable()
    symbols.add(A, "c.a", explicit=5)
    with pytest.raises(IdCollisionError, match=r"@id 0x01000005.*action 'c.a' and action 'c.b'"):
        symbols.add(A, "c.b", explicit=0x01000005)


def test_same_name_twice_is_one_symbol() -> None:
    symbols = SymbolTable()
    symbols.add(A, "NoAction")
    symbols.add(A, "NoAction")
    symbols.assign_ids()
    assert symbols.names(A) == ["NoAction"]
    assert symbols.id(A, "NoAction") == 21257015


def test_id_lookup_errors() -> None:
    symbols = SymbolTable()
    symbols.add(A, "a")
    with pytest.raises(ModelError, match="not assigned"):
        symbols.id(A, "a")
    symbols.assign_ids()
    with pytest.raises(ModelError, match="unknown table 'a'"):
        symbols.id(T, "a")
    with pytest.raises(ModelError, match="after ids were assigned"):
        symbols.add(A, "b")
    with pytest.raises(ModelError, match="empty"):
        SymbolTable().add(A, "")


# ------------------------------------------------------------------ aliases


def test_aliases_are_shortest_unique_suffixes() -> None:
    suffixes = SuffixSet()
    for name in ("ingress.on_miss", "egress.on_miss", "ingress.set_vrf", "NoAction", "foo1",
                 "ingressImpl.foo1", "d.a.c", "e.b.c"):  # fmt: skip
        suffixes.add(name)
    assert suffixes.shortest_unique_suffix("ingress.on_miss") == "ingress.on_miss"
    assert suffixes.shortest_unique_suffix("ingress.set_vrf") == "set_vrf"
    assert suffixes.shortest_unique_suffix("NoAction") == "NoAction"
    # a name that is a suffix of another keeps all of its components (p4c output)
    assert suffixes.shortest_unique_suffix("foo1") == "foo1"
    assert suffixes.shortest_unique_suffix("ingressImpl.foo1") == "ingressImpl.foo1"
    assert suffixes.shortest_unique_suffix("d.a.c") == "a.c"


def test_alias_spans_all_resource_types() -> None:
    symbols = SymbolTable()
    symbols.add(T, "ingress.t")
    symbols.add(ResourceType.COUNTER, "egress.t")
    symbols.add(ResourceType.COUNTER, "egress.t")  # duplicates do not count twice
    symbols.assign_ids()
    assert symbols.alias("ingress.t") == "ingress.t"
    assert symbols.alias("egress.t") == "egress.t"


def test_alias_of_unknown_name_is_an_error() -> None:
    with pytest.raises(ModelError, match="not in the symbol table"):
        SuffixSet().shortest_unique_suffix("x")


# ------------------------------------------------------------------ field ids


def test_field_ids_default_to_declaration_order() -> None:
    assert allocate_field_ids([None, None, None], "t") == [1, 2, 3]


def test_field_ids_honour_explicit_ids_with_p4c_counter_quirk() -> None:
    # p4c advances its counter past explicitly numbered fields, so id 1 stays unused here.
    assert allocate_field_ids([5, None, None], "t") == [5, 2, 3]
    assert allocate_field_ids([None, 1, None], "t") == [2, 1, 3]
    assert allocate_field_ids([None, 2, None], "t") == [1, 2, 3]
    assert allocate_field_ids([None, None, 1], "t") == [2, 3, 1]


def test_field_id_errors() -> None:
    with pytest.raises(FieldIdError, match="params of a: 0 is not a valid @id"):
        allocate_field_ids([0], "params of a")
    with pytest.raises(FieldIdError, match="@id 3 is used multiple times"):
        allocate_field_ids([3, None, 3], "params of a")
