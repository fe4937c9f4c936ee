"""P4Testgen's STF tests for mrc_switch.p4 and every corpus program: BMv2 and p4emu give
each the same verdict (``-m bmv2``; bounded: a fixed seed and a few tests per program;
``scripts/p4testgen-diff`` runs more)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bmv2_stf import VerdictPair
from p4testgen_diff import (
    MRC_SWITCH,
    ROOT,
    P4TestgenError,
    corpus_programs,
    describe,
    generate,
    missing,
    run_program,
)

CI_SEED = 1
CI_MAX_TESTS = 3
"""Tests per program in CI (P4Testgen's seed 1): about 6 s per program on a loaded 2-core
machine, most of it p4c's and P4Testgen's own start-up."""

P4TESTGEN_CRASHES = {
    "frontend/dontcare_out": "P4Testgen Bug: frontends/p4/alias.h:232: Null result",
    "frontend/struct_eq_list": "Compiler Bug: Exiting with SIGSEGV",
}
"""Corpus programs P4Testgen 1.2.4.8 itself stops on (its message): no tests to compare."""

KNOWN = {
    "frontend/error_key": (
        "error", "pass", "Bytestring provided does not fit within 0 bits",
        "BMv2's P4Runtime server cannot write an `error` key (P4Info bitwidth 0)",
    ),
    "frontend/struct_in_header_out": (
        "crash", None, "std::out_of_range",
        "BMv2 aborts on a header-stack index out of range (frontend/stack_index_out_of_range)",
    ),
}  # fmt: skip
"""Programs some of whose P4Testgen tests get different verdicts, for a documented reason
(docs/conformance.md, "P4Testgen"): (BMv2's verdict, p4emu's verdict or None for any, a
text BMv2's report holds, the reason). Every other test of theirs must agree."""


def name_of(program: Path) -> str:
    if program == MRC_SWITCH:
        return "mrc_switch"
    return program.relative_to(ROOT / "tests" / "conformance").with_suffix("").as_posix()


PROGRAMS = [MRC_SWITCH, *corpus_programs()]


@pytest.mark.bmv2
@pytest.mark.parametrize("program", PROGRAMS, ids=name_of)
def test_bmv2_and_p4emu_agree_on_p4testgen_tests(program: Path, tmp_path: Path) -> None:
    reason = missing()
    if reason is not None:
        pytest.skip(reason)
    crash = P4TESTGEN_CRASHES.get(name_of(program))
    if crash is not None:
        with pytest.raises(P4TestgenError, match="stopped with status"):
            generate(program, tmp_path, CI_SEED, CI_MAX_TESTS)
        return
    report = run_program(program, tmp_path, CI_SEED, CI_MAX_TESTS)
    assert report.pairs, f"P4Testgen wrote no test for {program}"
    known = KNOWN.get(name_of(program))

    def explained(pair: VerdictPair) -> bool:
        if known is None:
            return False
        bmv2, p4emu, text, _ = known
        return (
            pair.bmv2.outcome == bmv2
            and p4emu in (None, pair.p4emu.outcome)
            and text in pair.bmv2.detail
        )

    divergences = [pair for pair in report.divergences if not explained(pair)]
    assert not divergences, "\n\n".join(describe(p) for p in divergences)
