"""The realistic programs under tests/p4emu/programs check cleanly and fully annotated."""

from __future__ import annotations

from pathlib import Path

import pytest
from frontend_helpers import PROGRAMS_DIR, walk_skipping_annotations

from p4emu.frontend import ast, load_program
from p4emu.frontend import types as t

PROGRAMS = sorted(PROGRAMS_DIR.glob("*.p4"))


def test_programs_exist() -> None:
    assert {p.name for p in PROGRAMS} >= {
        "basic.p4",
        "ecn.p4",
        "source_routing.p4",
        "stateful.p4",
        "features.p4",
    }


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name)
def test_program_is_fully_annotated(path: Path) -> None:
    checked = load_program(path)
    assert checked.warnings == []
    for node in walk_skipping_annotations(checked.program):
        if isinstance(node, ast.Expr):
            assert node.type is not None, f"untyped {type(node).__name__} at {node.loc}"
            assert not isinstance(node.type, t.TypeVar), f"unresolved type variable at {node.loc}"
        if isinstance(node, ast.Call):
            assert node.target is not None, f"call without target at {node.loc}"
        if isinstance(node, ast.PathExpr) and node.name != "error":
            assert node.decl is not None, f"unresolved name {node.name} at {node.loc}"
        if isinstance(node, ast.TypeRef):
            assert node.resolved is not None, f"unresolved type at {node.loc}"


def test_basic_program_control_plane_names() -> None:
    checked = load_program(PROGRAMS_DIR / "basic.p4")
    assert [table.name for table in checked.tables] == ["MyIngress.ipv4_lpm"]
    assert [action.name for action in checked.actions] == [
        "MyIngress.drop",
        "MyIngress.ipv4_forward",
        "NoAction",
    ]
    table = checked.table("MyIngress.ipv4_lpm")
    assert table.decl.size == 1024
    assert [k.name for k in table.decl.key] == ["hdr.ipv4.dstAddr"]
    forward = checked.action("MyIngress.ipv4_forward").decl
    assert [(p.name, p.type) for p in forward.params] == [
        ("dstAddr", t.BitsType(48)),
        ("port", t.BitsType(9)),
    ]


def test_basic_program_header_layout() -> None:
    checked = load_program(PROGRAMS_DIR / "basic.p4")
    ipv4 = checked.types["ipv4_t"]
    assert isinstance(ipv4, t.HeaderType)
    assert ipv4.width_bits == 160
    offsets = {f.name: f.offset_bits for f in ipv4.fields}
    assert offsets["ttl"] == 64 and offsets["dstAddr"] == 128
    headers = checked.types["headers"]
    assert isinstance(headers, t.StructType) and headers.field_names() == ["ethernet", "ipv4"]
    assert headers.field("ipv4").type is ipv4  # type: ignore[union-attr]


def test_source_routing_stack() -> None:
    checked = load_program(PROGRAMS_DIR / "source_routing.p4")
    headers = checked.types["headers"]
    assert isinstance(headers, t.StructType)
    stack = headers.field("srcRoutes").type  # type: ignore[union-attr]
    assert isinstance(stack, t.HeaderStackType) and stack.size == 9
    assert stack.element is checked.types["srcRoute_t"] and stack.width_bits == 9 * 16


def test_stateful_program_objects() -> None:
    checked = load_program(PROGRAMS_DIR / "stateful.p4")
    externs = sorted((e.name, e.extern_name) for e in checked.extern_instances)
    assert externs == [
        ("FabricIngress.acl_counter", "direct_counter"),
        ("FabricIngress.ecmp", "action_selector"),
        ("FabricIngress.ecmp_meter", "direct_meter"),
        ("FabricIngress.flow_bytes", "register"),
        ("FabricIngress.flow_meter", "meter"),
        ("FabricIngress.port_counter", "counter"),
    ]
    packet_in = checked.types["packet_in_t"]
    annotation = ast.find_annotation(packet_in.annotations, "controller_header")  # type: ignore[union-attr]
    assert annotation is not None and annotation.string_arg() == "packet_in"
    assert checked.table("FabricIngress.smac").decl.support_timeout


def test_features_program_blocks() -> None:
    checked = load_program(PROGRAMS_DIR / "features.p4")
    assert list(checked.parser.children) == ["vlan_parser"]
    assert list(checked.ingress.children) == ["ttl"]
    assert (
        checked.table("MyIngress.tenants").decl.custom["my_custom_property"].value.const_value == 5
    )
    ether = checked.types["EtherType"]
    assert isinstance(ether, t.EnumType) and ether.underlying == t.BitsType(16)
    assert ether.members["VLAN"].value == 0x8100
    union = checked.types["opt_u"]
    assert isinstance(union, t.HeaderUnionType) and union.field_names() == ["a", "b"]
    assert checked.error_type.members["BadOptions"].code == 7
