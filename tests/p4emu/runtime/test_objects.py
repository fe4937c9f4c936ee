"""The control-plane objects of a compiled program: value sets, action profiles and
selectors, controller packet headers, lookups by id."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4emu.backend import compile_program
from p4emu.frontend import load_program
from p4emu.runtime.action_profiles import GROUP_REF, MEMBER_REF, ActionProfile
from p4emu.runtime.exceptions import (
    ControllerHeaderError,
    InvalidMemberError,
    MemberExistsError,
    MemberInUseError,
    MemberNotFoundError,
    ProfileFullError,
    ValueSetError,
    ValueSetFullError,
)
from p4emu.runtime.objects import ControllerField, ControllerHeader, ValueSet, ValueSetField
from p4emu.runtime.tables import Exact, MatchKind, Range, Ternary

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"


def test_value_set_membership_limits_and_errors() -> None:
    value_set = ValueSet(
        "P.vs",
        [ValueSetField(1, "a", 8), ValueSetField(2, "b", 16, MatchKind.ternary)],
        size=2,
    )
    value_set.add([Exact(1), Ternary(0x0100, 0xFF00)])
    assert value_set.contains((1, 0x01AB)) and not value_set.contains((1, 0x02AB))
    assert value_set.entries() == [[Exact(1), Ternary(0x0100, 0xFF00)]]
    with pytest.raises(ValueSetError, match="already in the set"):
        value_set.add([Exact(1), Ternary(0x0100, 0xFF00)])
    with pytest.raises(ValueSetError, match="does not fit"):
        value_set.add([Exact(256), None])
    with pytest.raises(ValueSetError, match="bits outside mask"):
        value_set.add([Exact(2), Ternary(0x0101, 0xFF00)])
    value_set.add([Exact(2), None])
    with pytest.raises(ValueSetFullError, match="full"):
        value_set.add([Exact(3), None])
    with pytest.raises(ValueSetFullError, match="exceed the size 2"):
        value_set.replace([[Exact(i), None] for i in range(3)])
    value_set.remove([Exact(2), None])
    with pytest.raises(ValueSetError, match="not in the set"):
        value_set.remove([Exact(2), None])
    value_set.clear()
    assert len(value_set) == 0 and not value_set.contains((1, 0x01AB))


def test_value_set_with_a_range_field() -> None:
    value_set = ValueSet("P.r", [ValueSetField(1, "", 16, MatchKind.range)], size=4)
    value_set.replace([[Range(10, 20)], [Range(100, 100)]])
    assert [value_set.contains((v,)) for v in (9, 10, 20, 21, 100)] == [
        False,
        True,
        True,
        False,
        True,
    ]


def test_action_profile_members_groups_and_references() -> None:
    profile = ActionProfile(
        "Ing.sel",
        size=3,
        with_selector=True,
        max_group_size=2,
        action_param_widths={7: (8,)},
        hash_function=lambda data: data[0],
        selector_widths=(8,),
    )
    profile.insert_member(1, 7, [10])
    profile.insert_member(2, 7, [20])
    with pytest.raises(MemberExistsError):
        profile.insert_member(1, 7, [10])
    with pytest.raises(InvalidMemberError, match="not an action of the profile's tables"):
        profile.insert_member(3, 8, [])
    with pytest.raises(InvalidMemberError, match="does not fit in 8 bits"):
        profile.insert_member(3, 7, [256])
    profile.insert_member(3, 7, [30])
    with pytest.raises(ProfileFullError):
        profile.insert_member(4, 7, [40])
    with pytest.raises(InvalidMemberError, match="exceed the maximum 2"):
        profile.insert_group(9, {1: 1, 2: 1, 3: 1})
    profile.insert_group(9, {2: 1, 1: 1})
    assert [profile.resolve(GROUP_REF, (9,), (v,)).member_id for v in range(4)] == [1, 2, 1, 2]
    assert profile.resolve(MEMBER_REF, (3,), ()).args == (30,)
    profile.reference(GROUP_REF, (9,))
    with pytest.raises(MemberInUseError, match="used by 1 table entries"):
        profile.delete_group(9)
    with pytest.raises(MemberInUseError, match="is in group"):
        profile.delete_member(1)
    profile.release(GROUP_REF, (9,))
    profile.modify_group(9, {})
    assert profile.resolve(GROUP_REF, (9,), (0,)) is None  # empty group: default action
    profile.delete_group(9)
    profile.delete_member(1)
    profile.insert_member(5, 7, [50])  # reuses BMv2 handle 0
    assert profile.get_member(5).handle == 0
    with pytest.raises(MemberNotFoundError):
        profile.reference(MEMBER_REF, (1,))
    with pytest.raises(InvalidMemberError, match="must name a member or a group"):
        profile.reference(4, (1,))


def test_action_profile_without_selector_has_no_groups() -> None:
    profile = ActionProfile("Ing.prof")
    with pytest.raises(InvalidMemberError, match="not a selector"):
        profile.insert_group(1)


def test_controller_header_encode_decode_and_errors() -> None:
    header = ControllerHeader(
        1,
        "packet_out",
        "packet_out_t",
        (
            ControllerField(1, "egress_port", 9),
            ControllerField(2, "flag", 1),
            ControllerField(3, "_pad", 6),
        ),
    )
    data = header.encode({"egress_port": 5, 2: 1})
    assert data == bytes([0x02, 0xC0]) and header.nbytes == 2
    assert header.decode(data + b"rest") == ({"egress_port": 5, "flag": 1, "_pad": 0}, b"rest")
    with pytest.raises(ControllerHeaderError, match="does not fit"):
        header.encode({"egress_port": 512})
    with pytest.raises(ControllerHeaderError, match="no metadata field 'nope'"):
        header.encode({"nope": 1})
    with pytest.raises(ControllerHeaderError, match="given twice"):
        header.encode({"egress_port": 1, 1: 1})
    with pytest.raises(ControllerHeaderError, match="shorter than the 2-byte"):
        header.decode(b"\x01")


def test_program_objects_lookups_by_id() -> None:
    compiled = compile_program(load_program(PROGRAMS / "stateful.p4"))
    objects = compiled.objects
    for name, info in objects.table_info.items():
        assert objects.table_by_id(info.id) is info and objects.name_of(info.id) == name
    ecmp = objects.table_info["FabricIngress.ecmp"]
    assert ecmp.is_indirect and [f.match_kind for f in ecmp.selector_fields] == ["selector"]
    assert objects.action_profiles[ecmp.action_profile].with_selector  # type: ignore[index]
    assert ecmp.direct_meter in objects.direct_meters
    assert objects.table_info["FabricIngress.acl"].direct_counter == "FabricIngress.acl_counter"
    assert objects.table_info["FabricIngress.acl"].is_const
    assert set(objects.controller_headers) == {"packet_in", "packet_out"}
    with pytest.raises(KeyError, match="no table with id"):
        objects.table_by_id(0x01000001)
    # stateful.p4 has an anonymous implementation: p4c emits no P4Info for it
    assert objects.p4info is None and compiled.ids.p4info_error
