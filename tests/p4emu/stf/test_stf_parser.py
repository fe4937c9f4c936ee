"""STF file parsing: a realistic file and bad lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from p4emu.stf.exceptions import StfSyntaxError
from p4emu.stf.parser import (
    StfActionCall,
    StfAdd,
    StfArg,
    StfCheckCounter,
    StfCheckRegister,
    StfCounterRead,
    StfCounterWrite,
    StfExpect,
    StfMcGroupCreate,
    StfMcNodeAssociate,
    StfMcNodeCreate,
    StfMcNodeUpdate,
    StfMeterGetRates,
    StfMeterRate,
    StfMeterSetRates,
    StfMirroringAdd,
    StfMirroringAddMc,
    StfMirroringDelete,
    StfMirroringGet,
    StfNoPacket,
    StfNumber,
    StfPacket,
    StfRegisterRead,
    StfRegisterReset,
    StfRegisterWrite,
    StfRemoveAll,
    StfSetDefault,
    StfWait,
    parse_stf,
    parse_stf_file,
)

REALISTIC = """\
# SPDX-License-Identifier: Apache-2.0
# modelled on p4c testdata/p4_16_samples/ternary2-bmv2.stf

add test1 0 data.f1:0x****0101 ingress.setb1(val:0x7f, port:2)
add test1 503 data.f1:0x****0202 ingress.setb1(val:7, port:3)

#          f1       f2      h1  b1 b2  h   b1 b2
expect 2 00000101 ******** **** 7f 66
packet 0 00000101 00000202 0303 55 66 7777 88 00
wait

add ex1 100 extra$0.h:0x25** act1(val:0x25)
add ipv4_lpm hdr.ipv4.dstAddr:0x0a000000/8 MyIngress.forward(port:1, mac:0x001122334455) = E1
add acl 10 hdr.ipv4.protocol:0x06&&&0xff hdr.tcp.dstPort:80 allow()
ADD tbl hdr.h[0].f:0b1**0 act()
setdefault ipv4_lpm drop()
setdefault MyIngress.t set(v:0x10)

mirroring_add 5 3
mirroring_add_mc 6 2
mirroring_get 5
mirroring_delete 6
mc_mgrp_create 1
mc_node_create 0 1 2 3
mc_node_update 0 4 5
mc_node_associate 1 0
counter_read MyIngress.c 3
counter_write MyIngress.c 3 10 1000
register_write MyIngress.r 2 0xff
register_read MyIngress.r 2
register_reset MyIngress.r
meter_set_rates MyIngress.m 0 0.0001:1 0.0005:2
meter_array_set_rates MyIngress.m 1:10 2:20
meter_get_rates MyIngress.m 0
check_counter cntDum(10) packets == 2
check_counter cntDum(E1)
check_register MyIngress.r(2) >= 0x10
expect 1 0011223344 55 $
expect 4
no_packet
remove all
"""


def test_realistic_file() -> None:
    commands = parse_stf(REALISTIC, "t.stf")
    kinds = [type(c).__name__ for c in commands]
    assert kinds == [
        "StfAdd", "StfAdd", "StfExpect", "StfPacket", "StfWait",
        "StfAdd", "StfAdd", "StfAdd", "StfAdd", "StfSetDefault", "StfSetDefault",
        "StfMirroringAdd", "StfMirroringAddMc", "StfMirroringGet", "StfMirroringDelete",
        "StfMcGroupCreate", "StfMcNodeCreate", "StfMcNodeUpdate", "StfMcNodeAssociate",
        "StfCounterRead", "StfCounterWrite", "StfRegisterWrite", "StfRegisterRead",
        "StfRegisterReset", "StfMeterSetRates", "StfMeterSetRates", "StfMeterGetRates",
        "StfCheckCounter", "StfCheckCounter", "StfCheckRegister", "StfExpect", "StfExpect",
        "StfNoPacket", "StfRemoveAll",
    ]  # fmt: skip

    add = commands[0]
    assert isinstance(add, StfAdd)
    assert add.line == 4
    assert add.table == "test1" and add.priority == 0
    (match,) = add.matches
    assert match.field == "data.f1"
    assert match.value.value == 0x0101 and match.value.mask == 0x0000FFFF
    assert add.action.name == "ingress.setb1"
    assert [(a.name, a.value.value) for a in add.action.args] == [("val", 0x7F), ("port", 2)]

    expect = commands[2]
    assert isinstance(expect, StfExpect)
    assert expect.port == 2 and not expect.exact
    assert expect.pattern == "00000101" + "*" * 12 + "7F66"

    packet = commands[3]
    assert isinstance(packet, StfPacket)
    assert packet.port == 0
    assert packet.data == bytes.fromhex("00000101000002020303556677778800")
    assert isinstance(commands[4], StfWait)

    ex1 = commands[5]
    assert isinstance(ex1, StfAdd) and ex1.matches[0].field == "extra$0.h"

    lpm = commands[6]
    assert isinstance(lpm, StfAdd) and lpm.priority is None and lpm.handle == "E1"
    assert lpm.matches[0].value.as_lpm(32) == (0x0A000000, 8)
    assert [a.value.value for a in lpm.action.args] == [1, 0x001122334455]

    acl = commands[7]
    assert isinstance(acl, StfAdd)
    assert acl.matches[0].value.as_ternary(8) == (6, 0xFF)
    assert acl.matches[1].value.as_exact() == 80
    assert acl.action.args == ()

    stack = commands[8]
    assert isinstance(stack, StfAdd)
    assert stack.matches[0].field == "hdr.h[0].f"
    assert stack.matches[0].value.as_ternary(8) == (0b1000, 0b1001)

    assert commands[9] == StfSetDefault(16, "ipv4_lpm", commands[9].action)
    assert isinstance(commands[10], StfSetDefault)
    assert commands[10].action.args[0].value.value == 0x10

    assert commands[11] == StfMirroringAdd(19, 5, 3)
    assert commands[12] == StfMirroringAddMc(20, 6, 2)
    assert commands[13] == StfMirroringGet(21, 5)
    assert commands[14] == StfMirroringDelete(22, 6)
    assert commands[15] == StfMcGroupCreate(23, 1)
    assert commands[16] == StfMcNodeCreate(24, 0, (1, 2, 3))
    assert commands[17] == StfMcNodeUpdate(25, 0, (4, 5))
    assert commands[18] == StfMcNodeAssociate(26, 1, 0)
    assert commands[19] == StfCounterRead(27, "MyIngress.c", 3)
    assert commands[20] == StfCounterWrite(28, "MyIngress.c", 3, 10, 1000)
    assert commands[21] == StfRegisterWrite(29, "MyIngress.r", 2, 0xFF)
    assert commands[22] == StfRegisterRead(30, "MyIngress.r", 2)
    assert commands[23] == StfRegisterReset(31, "MyIngress.r")
    assert commands[24] == StfMeterSetRates(
        32, "MyIngress.m", 0, (StfMeterRate(0.0001, 1), StfMeterRate(0.0005, 2))
    )
    assert commands[25] == StfMeterSetRates(
        33, "MyIngress.m", None, (StfMeterRate(1.0, 10), StfMeterRate(2.0, 20))
    )
    assert commands[26] == StfMeterGetRates(34, "MyIngress.m", 0)
    assert commands[27] == StfCheckCounter(35, "cntDum", 10, "packets", "==", 2)
    assert commands[28] == StfCheckCounter(36, "cntDum", "E1", None, "==", 0)
    assert commands[29] == StfCheckRegister(37, "MyIngress.r", 2, ">=", 0x10)
    exact = commands[30]
    assert exact == StfExpect(38, 1, "001122334455", True)
    assert commands[31] == StfExpect(39, 4, None, False)
    assert commands[32] == StfNoPacket(40)
    assert commands[33] == StfRemoveAll(41)


def test_expect_matching_semantics() -> None:
    (expect,) = parse_stf("expect 1 00 ** 0F")
    assert isinstance(expect, StfExpect)
    assert expect.matches(bytes.fromhex("00ab0f"))
    assert expect.matches(bytes.fromhex("00ab0fffff"))  # longer is fine without $
    assert "too short" in (expect.mismatch(bytes.fromhex("00ab")) or "")
    assert "nibble 5" in (expect.mismatch(bytes.fromhex("00ab0e")) or "")
    (exact,) = parse_stf("expect 1 00ab0f$")
    assert isinstance(exact, StfExpect)
    assert exact.matches(bytes.fromhex("00ab0f"))
    assert "exactly 3" in (exact.mismatch(bytes.fromhex("00ab0f00")) or "")
    (anything,) = parse_stf("expect 2")
    assert isinstance(anything, StfExpect) and anything.matches(b"whatever")


def test_number_helpers() -> None:
    assert StfNumber("0x0a**", 0x0A00, 0xFF00, 16).as_lpm(16) == (0x0A00, 8)
    assert StfNumber("5", 5).as_lpm(9) == (5, 9)
    assert StfNumber("5", 5).as_ternary(9) == (5, 0x1FF)
    assert StfNumber("0x0a", 0x0A, None, 8).as_ternary(16) == (0x0A, 0xFF)
    (add,) = parse_stf("add t k:0x0a000000/40 a()")
    assert isinstance(add, StfAdd) and add.matches[0].value.as_lpm(32) == (0x0A000000, 32)


def test_keywords_are_case_insensitive_and_comments_ignored() -> None:
    commands = parse_stf("WAIT # trailing comment\n\n   # only a comment\nPacket 1 ab\n")
    assert [type(c) for c in commands] == [StfWait, StfPacket]
    assert [c.line for c in commands] == [1, 4]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("frobnicate 1 2", "unknown STF command 'frobnicate'"),
        ("packet x 00", "expected a decimal port number"),
        ("packet 1", "missing packet data"),
        ("packet 1 abc", "odd number of hex digits"),
        ("packet 1 00 zz", "invalid packet data character 'z'"),
        ("packet 1 0*", "invalid packet data character '*'"),
        ("expect 1 00 gg", "invalid packet data character 'g'"),
        ("expect", "missing port"),
        ("add t k:1", "missing action call"),
        ("add t a(x:1)", "no key fields before the action"),
        ("add t k:1 a(x:1", "expected ',', found end of line"),
        ("add t k:1 a(x:1,)", "expected an action argument name"),
        ("add t k: a()", "expected a value for key k"),
        ("add t k:1*2 a()", r"unexpected character '\*'"),
        ("add t k:1 a() extra", "expected an entry handle name|unexpected"),
        ("setdefault t", "expected an action name"),
        ("remove 3", "expected 'all'"),
        ("remove everything", "only 'remove all' is supported"),
        ("check_counter c(1) packets ~ 3", "unexpected character '~'"),
        ("check_counter c(1) frames == 3", "expected 'packets' or 'bytes'"),
        ("check_register r(1) 3", "expected a comparison"),
        ("mirroring_add 1", "expected a port, found end of line"),
        ("mc_node_create 3", "expected at least one port"),
        ("register_write r 1", "expected a value"),
        ("meter_set_rates m 0", "expected RATE:BURST pairs"),
        ("meter_set_rates m 0 1:2 3", "expected ':'"),
        ("wait now", "unexpected 'now' at end of command"),
        ("mirroring_add 0x1* 2", "without wildcards"),
    ],
)
def test_bad_lines_report_file_and_line(line: str, message: str) -> None:
    with pytest.raises(StfSyntaxError, match=message) as info:
        parse_stf(f"wait\n{line}\n", "tests/bad.stf")
    assert info.value.file == "tests/bad.stf"
    assert info.value.line == 2
    assert re.match(r"tests/bad.stf:2:\d+: ", str(info.value)), info.value


def test_parse_stf_file(tmp_path: Path) -> None:
    path = tmp_path / "ok.stf"
    path.write_text("packet 0 00\nexpect 0 00\n", encoding="utf-8")
    assert [type(c) for c in parse_stf_file(path)] == [StfPacket, StfExpect]
    with pytest.raises(StfSyntaxError, match="cannot read STF file"):
        parse_stf_file(tmp_path / "missing.stf")
    binary = tmp_path / "bin.stf"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(StfSyntaxError, match="not UTF-8"):
        parse_stf_file(binary)


P4TESTGEN = """\
# p4testgen seed: 1
setdefault "MrcIngress.switch_config" "MrcIngress.set_switch_config"("plane_id":0x0,"punt_no_route":0x1)
add "I.explicit_prio" 1 "hdr.h.a":0b******** "I.port"("p":0x15F)
add "I.by_error" "sm.parser_error":0x00000002 "NoAction"() = "h1"
add "I.stack" "hdr.s[1].f":0x01 "I.set"()
check_counter "I.c"(3) packets == 1
register_write "I.r#1" 2 7
meter_set_rates "I.m" 0 0.5:10 1:20
packet 510 FF0089
expect 510 FF000589$
"""


def test_p4testgen_quoted_names() -> None:
    """p4c's STF lexer reads ``"..."`` as one identifier (dots, ``#`` and all)."""
    commands = parse_stf(P4TESTGEN)
    default, prio, by_error, stack, check, register, meter = commands[:7]
    assert default == StfSetDefault(
        2,
        "MrcIngress.switch_config",
        StfActionCall(
            "MrcIngress.set_switch_config",
            (StfArg("plane_id", StfNumber("0x0", 0, None, 4)),
             StfArg("punt_no_route", StfNumber("0x1", 1, None, 4))),
        ),
    )  # fmt: skip
    assert isinstance(prio, StfAdd) and prio.table == "I.explicit_prio" and prio.priority == 1
    assert prio.matches[0].field == "hdr.h.a"
    assert prio.matches[0].value.as_ternary(8) == (0, 0)
    assert prio.action == StfActionCall(
        "I.port", (StfArg("p", StfNumber("0x15F", 0x15F, None, 12)),)
    )
    assert isinstance(by_error, StfAdd) and by_error.handle == "h1"
    assert by_error.action == StfActionCall("NoAction")
    assert isinstance(stack, StfAdd) and stack.matches[0].field == "hdr.s[1].f"
    assert check == StfCheckCounter(6, "I.c", 3, "packets", "==", 1)
    assert register == StfRegisterWrite(7, "I.r#1", 2, 7)
    assert isinstance(meter, StfMeterSetRates) and meter.meter == "I.m"
    assert commands[-1] == StfExpect(10, 510, "FF000589", True)


def test_quoted_and_bare_names_mix() -> None:
    [add] = parse_stf('add "MyIngress".t "hdr.h".f:1 MyIngress."a"(x:2)\n')
    assert isinstance(add, StfAdd)
    assert (add.table, add.matches[0].field, add.action.name) == (
        "MyIngress.t",
        "hdr.h.f",
        "MyIngress.a",
    )


@pytest.mark.parametrize(
    ("line", "column", "message"),
    [
        ('add "t k:1 a()', 5, "unterminated quoted name"),
        ('add "" k:1 a()', 5, "empty quoted name"),
        ('setdefault "t" "a"("x" 1)', 24, "expected ':', found '1'"),
        ('add "t" "k":0x1* "a"(x:"y")', 24, "expected a value for argument x, found '\"y\"'"),
        ("add t k:1 a() = 5", 17, "expected an entry handle name, found '5'"),
        ("add t k:1 a() b", 15, "unexpected 'b' at end of command"),
        ("  frob x", 3, "unknown STF command 'frob'"),
        ("packet 1 00 0g", 14, "packet: invalid packet data character 'g'"),
        ("packet 1 0*", 11, "packet: invalid packet data character '*'"),
        ("packet", 7, "packet: missing port"),
        ("expect x 00", 8, "expect: expected a decimal port number, found 'x'"),
        ("expect 1 00 $ 11", 15, r"expect: unexpected '1' after '\$'"),
        ("expect 1 $", 10, r"expect: '\$' needs packet data before it"),
        ("check_counter c(0x1*) packets == 1", 17, "expected a counter index without wildcards"),
        ("meter_set_rates m 0 1:2 3", 26, "expected ':', found end of line"),
        ("register_write r 1 0x1*", 20, "expected a value without wildcards"),
    ],
)
def test_malformed_lines_name_line_and_column(line: str, column: int, message: str) -> None:
    with pytest.raises(StfSyntaxError) as info:
        parse_stf(f"# header\n{line}\n", "gen/t.stf")
    assert (info.value.line, info.value.column) == (2, column), info.value
    assert re.search(message, info.value.message), info.value.message
    assert str(info.value).startswith(f"gen/t.stf:2:{column}: ")
