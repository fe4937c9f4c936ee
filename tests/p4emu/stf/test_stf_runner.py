"""The STF runner: command semantics, failure reports, errors and the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from p4emu.stf import StfCommandError, StfError, StfOptions, StfRunner, StfTarget, run_stf
from p4emu.stf.diff import first_difference, packet_diff

ROOT = Path(__file__).resolve().parents[3]
PROGRAMS = ROOT / "tests" / "p4emu" / "programs" / "stf"
DATA = Path(__file__).resolve().parent / "data"
ETH = "000000000002 000000000001 1234"


def run(tmp_path: Path, program: str, text: str, options: StfOptions | None = None):
    stf = tmp_path / "test.stf"
    stf.write_text(text)
    return run_stf(PROGRAMS / f"{program}.p4", stf, options)


def test_mismatching_byte_is_reported_with_offset_and_diff(tmp_path: Path) -> None:
    result = run(
        tmp_path,
        "table_actions",
        f"add t_hit a:0x01 set_v(v:0x55)\npacket 0 {ETH} 01 05 00\nexpect 2 {ETH} 01 15 54\n",
    )
    assert not result.passed
    report = result.report()
    assert "FAIL" in report and "expect at line 3" in report
    assert "first difference at byte 16 (0x10): expected 54, received ee" in report
    assert "^^" in report


def test_extra_and_missing_packets_fail(tmp_path: Path) -> None:
    text = f"packet 0 {ETH} 02 20 00\nexpect 9 {ETH}\n"
    result = run(tmp_path, "table_actions", text, StfOptions(strict_ports=True))
    assert not result.passed
    problems = "\n".join(result.failures)
    assert "port 2: 1 unexpected packet(s)" in problems
    assert "port 9: 1 expected packet(s) not received" in problems


def test_ports_the_stf_never_names_are_not_checked_unless_strict(tmp_path: Path) -> None:
    """As bmv2stf, which gives BMv2 interfaces only for the ports the STF names."""
    text = f"packet 0 {ETH} 02 20 00\n"
    result = run(tmp_path, "table_actions", text)
    assert result.passed, result.report()
    assert "1 frame(s) sent to port 2, which the STF never names (ignored)" in result.report()
    strict = run(tmp_path, "table_actions", text, StfOptions(strict_ports=True))
    assert not strict.passed
    assert "port 2: 1 unexpected packet(s)" in "\n".join(strict.failures)
    # a port named only by 'packet' is checked: nothing may come out there unexpected
    named = run(tmp_path, "table_actions", text + f"packet 2 {ETH} 02 20 00\n")
    assert "port 2: 2 unexpected packet(s)" in "\n".join(named.failures)


def test_strict_ports_from_the_command_line_and_options_comment(tmp_path: Path) -> None:
    stf = tmp_path / "test.stf"
    stf.write_text(f"# p4emu-options: --strict-ports\npacket 0 {ETH} 02 20 00\n")
    program = str(PROGRAMS / "table_actions.p4")
    assert not run_stf(program, stf).passed
    stf.write_text(f"packet 0 {ETH} 02 20 00\n")
    done = subprocess.run(
        [sys.executable, "-m", "p4emu", "stf", "--strict-ports", program, str(stf)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "unexpected packet(s)" in done.stdout


def test_wildcards_length_and_any_packet_expectations(tmp_path: Path) -> None:
    base = f"packet 0 {ETH} 02 20 00 FFFF\n"
    assert run(tmp_path, "table_actions", base + f"expect 2 {ETH} ** 2* EE\n").passed
    # without '$' the received packet may be longer; with '$' it may not
    assert not run(tmp_path, "table_actions", base + f"expect 2 {ETH} FF 20 EE $\n").passed
    assert run(tmp_path, "table_actions", base + "expect 2\n").passed


def test_expect_order_is_per_port(tmp_path: Path) -> None:
    text = (
        f"add t_switch b:0x12 to_port(port:4)\n"
        f"expect 4 {ETH} FF 12 01\nexpect 2 {ETH} FF 20 EE\n"
        f"packet 0 {ETH} 02 20 00\npacket 0 {ETH} 02 12 00\n"
    )
    assert run(tmp_path, "table_actions", text).passed


def test_check_counter_and_check_register_failures_are_reported(tmp_path: Path) -> None:
    text = (
        f"packet 0 {ETH} 02 00000005\nexpect 1 {ETH} 02 00000000\n"
        "check_counter hits(2) packets == 5\ncheck_register acc(2) == 4\n"
        "check_register acc(2) >= 5\n"
    )
    result = run(tmp_path, "register_counter", text)
    assert [f.split(": ", 1)[1] for f in result.failures] == [
        "check_counter MyIngress.hits[2]: packets is 1, expected == 5 (packets 1, bytes 19)",
        "check_register MyIngress.acc[2] is 5, expected == 4",
    ]


def test_informational_commands_add_notes(tmp_path: Path) -> None:
    text = (
        "register_write acc 1 9\nregister_read acc 1\ncounter_write hits 0 3 30\n"
        "counter_read hits 0\nregister_reset acc\nregister_read acc 1\n"
    )
    result = run(tmp_path, "register_counter", text)
    assert result.passed
    notes = "\n".join(result.notes)
    assert "register_read MyIngress.acc[1] = 9" in notes
    assert "counter_read MyIngress.hits[0]: packets 3, bytes 30" in notes
    assert "register_read MyIngress.acc[1] = 0" in notes


def test_remove_all_keeps_const_entries(tmp_path: Path) -> None:
    text = (
        "add t_exact h.addr:0x0a000001 set_port(port:1)\nremove all\n"
        f"packet 0 {ETH} 01 0a000001 0000\n"
        f"packet 0 {ETH} 04 00000000 0007\nexpect 5 {ETH} 04 00000000 0007\n"
    )
    assert run(tmp_path, "table_kinds", text).passed


def test_direct_meter_rates_by_handle_name_and_bmv2_entry_handle(tmp_path: Path) -> None:
    text = (
        "add t idx:7 colour() = seven\nadd t idx:9 colour()\n"
        'meter_set_rates dm seven 0.5:10 1:20\nmeter_set_rates "MyIngress.dm" 1 0.25:5 1:6\n'
        "meter_get_rates dm 0\nmeter_get_rates dm 1\n"
    )
    result = run(tmp_path, "direct_meter", text)
    assert result.passed, result.report()
    assert [note.split(": ", 1)[1] for note in result.notes] == [
        "meter_get_rates direct meter MyIngress.dm(0): 0.5:10 1.0:20",
        "meter_get_rates direct meter MyIngress.dm(1): 0.25:5 1.0:6",
    ]


def test_meter_rates_round_trip_and_wait(tmp_path: Path) -> None:
    text = "meter_set_rates policer 1 0.5:10 1:20\nmeter_get_rates policer 1\nwait\nno_packet\n"
    result = run(tmp_path, "meter", text)
    assert result.passed
    assert "meter_get_rates meter MyIngress.policer[1]: 0.5:10 1.0:20" in "\n".join(result.notes)


def test_mirroring_and_multicast_node_update(tmp_path: Path) -> None:
    text = (
        "mirroring_add 5 4\nmirroring_add 5 6\nmirroring_get 5\n"
        f"packet 0 {ETH} 01 00 00 00\nexpect 1 {ETH} 01 AA 00 01\nexpect 6 {ETH} 01 00 01 01\n"
    )
    result = run(tmp_path, "clone", text)
    assert result.passed, result.report()
    assert "mirroring session 5: ports [6]" in "\n".join(result.notes)
    text = (
        "mc_mgrp_create 1\nmc_node_create 5 2\nmc_node_associate 1 0\nmc_node_update 0 3\n"
        f"packet 0 {ETH} 0001 0000 0000 00\nexpect 3 {ETH} 0001 0005 0003 05\n"
    )
    assert run(tmp_path, "multicast", text).passed


@pytest.mark.parametrize(
    ("program", "text", "needle"),
    [
        ("table_actions", "add t_nope a:1 set_v(v:1)\n", "no table 't_nope'"),
        ("table_actions", "add t_hit a:1 nope(v:1)\n", "no action of table MyIngress.t_hit 'nope'"),
        ("table_actions", "add t_hit zz:1 set_v(v:1)\n", "has no key field 'zz'"),
        ("table_actions", "add t_hit a:1 set_v(w:1)\n", "has no parameter 'w'"),
        ("table_actions", "add t_hit a:1 set_v()\n", "missing argument(s) v"),
        ("table_actions", "add t_hit a:0x1** set_v(v:1)\n", "wildcards"),
        ("table_actions", "add t_hit a:0x100 set_v(v:1)\n", "INVALID_ARGUMENT"),
        ("table_actions", "add t_hit a:1 set_v(v:1)\nadd t_hit a:1 set_v(v:2)\n", "ALREADY_EXISTS"),
        ("table_kinds", "add t_ternary addr:0x0a****** set_port(port:1)\n", "give a priority"),
        ("table_kinds", "add t_range 1 val:5 set_port(port:1)\n", "PERMISSION_DENIED"),
        ("register_counter", "check_counter by_src(NOPE)\n", "no entry was added with handle"),
        ("register_counter", "register_write acc 9 1\n", "OUT_OF_RANGE"),
        ("multicast", "mc_node_associate 1 0\n", "no node with handle 0"),
        ("meter", "meter_set_rates policer 0 1:1\n", "exactly 2 rates"),
        ("meter", "meter_set_rates policer e0 1:1 2:2\n", "is a meter array: give an index"),
        ("direct_meter", "meter_array_set_rates dm 1:1 2:2\n", "use meter_set_rates with an entry"),
        ("direct_meter", "meter_set_rates dm 0 1:1 2:2\n", "entry handle 0 does not exist (0 entries"),
        ("direct_meter", "add t idx:0 colour()\nmeter_set_rates dm 1 1:1 2:2\n", "(1 entries added)"),
        ("direct_meter", "meter_set_rates dm nope 1:1 2:2\n", "no entry was added with handle 'nope'"),
        ("direct_meter", "meter_get_rates dm nope\n", "no entry was added with handle 'nope'"),
        ("direct_meter", "add t idx:0 colour()\nremove all\nmeter_set_rates dm 0 1:1 2:2\n", "(0 entries"),
        ("direct_meter", "meter_set_rates nope 0 1:1 2:2\n", "no meter 'nope' (known: MyIngress.dm)"),
        ("truncate", "packet 600 00\n", "packet on port 600: ingress port 600 out of range"),
    ],
)  # fmt: skip
def test_bad_commands_raise_with_the_line(
    tmp_path: Path, program: str, text: str, needle: str
) -> None:
    with pytest.raises(StfCommandError) as info:
        run(tmp_path, program, text)
    assert needle in str(info.value)
    assert str(info.value).startswith(str(tmp_path / "test.stf") + ":")


def test_names_resolve_like_bmv2stf() -> None:
    runner = StfRunner(StfTarget(PROGRAMS / "table_kinds.p4", StfOptions()), "t.stf")
    tables = ["MyIngress.t_a", "MyEgress.t_a", "MyIngress.x_t_b"]
    assert runner._resolve("MyEgress.t_a", tables, "table") == "MyEgress.t_a"
    assert runner._resolve("t_b", tables, "table") == "MyIngress.x_t_b"  # raw suffix
    with pytest.raises(StfCommandError, match=r"ambiguous: MyIngress\.t_a, MyEgress\.t_a"):
        runner._resolve("t_a", tables, "table")


def test_p4emu_options_comment_and_precedence(tmp_path: Path) -> None:
    text = f"# p4emu-options: --priority-queues 8\npacket 0 {ETH} 07\nexpect 1 {ETH} 07\n"
    assert run(tmp_path, "priority_queues", text).passed
    options = StfOptions(priority_queues=1, explicit={"priority_queues"})
    assert not run(tmp_path, "priority_queues", text, options).passed  # 7 >= 1 queue: dropped
    with pytest.raises(StfCommandError, match="unknown p4emu option"):
        run(tmp_path, "priority_queues", "# p4emu-options: --bogus 1\n")


def test_missing_stf_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StfError, match="cannot read the STF file"):
        run_stf(PROGRAMS / "truncate.p4", tmp_path / "missing.stf")


def test_diff_helpers() -> None:
    assert first_difference("00AA", False, b"\x00\xaa\xff") is None
    assert "expected exactly 2" in first_difference("00AA", True, b"\x00\xaa\xff")
    assert "too short" in first_difference("00AA11", False, b"\x00\xaa")
    rows = packet_diff("00**22", True, b"\x00\x01\x33\x44")
    assert rows[2].split() == ["^^", "++"]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "p4emu", "stf", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_exits_non_zero_with_a_readable_diff_on_a_failing_test() -> None:
    done = run_cli(str(PROGRAMS / "table_actions.p4"), str(DATA / "failing_table_actions.stf"))
    assert done.returncode == 1
    assert "FAIL" in done.stdout and "3 problem(s)" in done.stdout
    assert "expected 57, received 56" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_cli_passes_quietly_and_reports_errors_without_traceback(tmp_path: Path) -> None:
    done = run_cli("-q", str(PROGRAMS / "truncate.p4"), str(PROGRAMS / "truncate.stf"))
    assert done.returncode == 0 and done.stdout == ""
    bad = tmp_path / "bad.stf"
    bad.write_text("packet zero 00\n")
    done = run_cli(str(PROGRAMS / "truncate.p4"), str(bad))
    assert done.returncode == 1
    assert "bad.stf:1:" in done.stderr and "Traceback" not in done.stderr
