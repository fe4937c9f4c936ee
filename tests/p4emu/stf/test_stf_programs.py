"""Every program of tests/p4emu/programs/stf passes its STF test; plus checks an STF file
cannot express (P4Runtime value-set writes, digest samples)."""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4r

from p4emu.stf import StfOptions, StfTarget, run_stf

PROGRAMS = Path(__file__).resolve().parents[1] / "programs" / "stf"
CASES = sorted(p.stem for p in PROGRAMS.glob("*.stf"))


def test_there_are_at_least_15_stf_programs() -> None:
    assert len(CASES) >= 15
    for name in CASES:
        assert (PROGRAMS / f"{name}.p4").is_file(), f"{name}.stf has no {name}.p4"


@pytest.mark.parametrize("name", CASES)
def test_stf_program_passes(name: str) -> None:
    # the project's own tests: a frame on a port the STF never names fails them too
    result = run_stf(
        PROGRAMS / f"{name}.p4", PROGRAMS / f"{name}.stf", StfOptions(strict_ports=True)
    )
    assert result.passed, result.report()
    assert result.expects_checked > 0 or result.packets_sent > 0


def target(name: str) -> StfTarget:
    return StfTarget(PROGRAMS / f"{name}.p4", StfOptions())


ETH = bytes.fromhex("000000000002000000000001")


def test_value_set_programmed_through_p4runtime() -> None:
    t = target("value_set")
    [vs_info] = t.objects.p4info.value_sets
    member = p4r.ValueSetMember()
    member.match.add(field_id=vs_info.match[0].id).exact.value = b"\x88\xb5"
    update = p4r.Update(
        type=p4r.Update.MODIFY,
        entity=p4r.Entity(
            value_set_entry=p4r.ValueSetEntry(value_set_id=vs_info.preamble.id, members=[member])
        ),
    )
    [error] = t.state.write([update])
    assert error.canonical_code == 0, error.message
    t.send(0, ETH + bytes.fromhex("88B5AA"))
    t.send(0, ETH + bytes.fromhex("88B6AA"))
    assert [port for port, _ in t.collect()] == [3, 2]


def test_digest_samples_carry_source_mac_and_port() -> None:
    t = target("random_digest")
    t.send(3, ETH[:6] + bytes.fromhex("00000000000A") + bytes.fromhex("12340000"))
    lists = t.switch.digest_queue.poll()
    samples = [sample for digest_list in lists for sample in digest_list.samples]
    assert samples == [(0x0A, 3)]


def test_seeded_random_is_reproducible() -> None:
    outputs = []
    for _ in range(2):
        t = target("random_digest")
        for _ in range(5):
            t.send(0, ETH + bytes.fromhex("12340000"))
        outputs.append([data[15] for _, data in t.collect()])
    assert outputs[0] == outputs[1]
    assert len(set(outputs[0])) > 1  # it does vary from packet to packet
