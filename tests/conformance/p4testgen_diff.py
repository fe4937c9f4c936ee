"""P4Testgen's STF tests on BMv2 and on p4emu: both must give every test the same verdict.

P4Testgen (p4c's test generator, ``p4testgen``) writes STF tests for a program from its own
model of v1model. Each test runs on BMv2 (:mod:`bmv2_stf`: its verdict is whether the
expected packets came out) and on p4emu (``p4emu stf``); a test on which they disagree is a
divergence. P4Testgen's own verdict does not matter here (its model is not BMv2: a test
BMv2 fails is fine when p4emu fails it too).

``scripts/p4testgen-diff [--seed N] [--max-tests N] [PROGRAM.p4 ...]`` runs it by hand
(default: ``p4src/mrc_switch.p4`` and every corpus program) and prints one JSON line per
program, then a summary; ``tests/conformance/test_p4testgen.py`` runs it in CI bounded.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bmv2_harness import tools_missing
from bmv2_stf import VerdictPair, compare_stfs
from p4lang_tools import find_tool, missing_reason

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MRC_SWITCH = ROOT / "p4src" / "mrc_switch.p4"
INCLUDE_ENV = "P4C_16_INCLUDE_PATH"
"""P4Testgen does not find ``p4include`` by itself: it reads this variable."""

SKIPPED_DIRS = ("rejected", "digests")
"""Corpus directories whose programs are not STF tests (p4c rejects them; a digest test)."""


def corpus_programs() -> list[Path]:
    """Every corpus program with an STF test (tests/conformance/<feature>/NAME.p4)."""
    return sorted(
        p
        for p in HERE.glob("*/*.p4")
        if p.parent.name not in SKIPPED_DIRS and p.with_suffix(".stf").is_file()
    )


def include_dirs_of(program: Path) -> list[Path]:
    include = program.parent / "include"
    return [include] if include.is_dir() else []


def missing() -> str | None:
    """Why the P4Testgen differential cannot run here, or None."""
    if find_tool("p4testgen") is None:
        return missing_reason("p4testgen")
    return tools_missing()


def p4include() -> Path:
    """p4c's ``p4include`` beside the p4testgen binary (``bin/../share/p4c/p4include``)."""
    tool = find_tool("p4testgen")
    assert tool is not None
    return Path(tool).resolve().parent.parent / "share" / "p4c" / "p4include"


class P4TestgenError(AssertionError):
    """p4testgen stopped with an error on a program."""


def generate(program: Path, out: Path, seed: int, max_tests: int) -> list[Path]:
    """The STF tests P4Testgen writes for ``program`` into ``out`` (sorted by number)."""
    tool = find_tool("p4testgen")
    assert tool is not None
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.setdefault(INCLUDE_ENV, str(p4include()))
    command = [tool, "--target", "bmv2", "--arch", "v1model", "--std", "p4-16",
               "--test-backend", "stf", "--seed", str(seed), "--max-tests", str(max_tests),
               "--out-dir", str(out)]  # fmt: skip
    for directory in include_dirs_of(program):
        command += ["-I", str(directory)]
    done = subprocess.run(
        [*command, str(program)], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise P4TestgenError(
            f"p4testgen stopped with status {done.returncode} on {program}:\n{done.stderr[-2000:]}"
        )
    return sorted(out.glob("*.stf"), key=lambda p: int(p.stem.rsplit("_", 1)[-1]))


@dataclass
class ProgramReport:
    program: Path
    pairs: list[VerdictPair]
    seconds: float
    error: str = ""

    @property
    def divergences(self) -> list[VerdictPair]:
        return [pair for pair in self.pairs if not pair.same]

    def as_json(self) -> dict:
        return {
            "program": str(self.program.relative_to(ROOT)),
            "tests": len(self.pairs),
            "bmv2_passed": sum(p.bmv2.outcome == "pass" for p in self.pairs),
            "p4emu_passed": sum(p.p4emu.outcome == "pass" for p in self.pairs),
            "divergences": [
                {"stf": p.stf.name, "bmv2": p.bmv2.outcome, "p4emu": p.p4emu.outcome}
                for p in self.divergences
            ],
            "seconds": round(self.seconds, 1),
            **({"error": self.error} if self.error else {}),
        }


def run_program(program: Path, workdir: Path, seed: int, max_tests: int) -> ProgramReport:
    """Generate ``max_tests`` tests for ``program`` and compare their verdicts."""
    started = time.monotonic()
    stfs = generate(program, workdir / "tests", seed, max_tests)
    pairs = compare_stfs(program, stfs, workdir, include_dirs_of(program)) if stfs else []
    return ProgramReport(program, pairs, time.monotonic() - started)


def describe(pair: VerdictPair) -> str:
    """A divergence, readable: the STF's commands and both targets' reports."""
    commands = [
        line
        for line in pair.stf.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return "\n".join(
        [
            f"{pair.stf}: BMv2 {pair.bmv2.outcome}, p4emu {pair.p4emu.outcome}",
            *("    " + line for line in commands),
            "  BMv2:",
            *("    " + line for line in pair.bmv2.detail.splitlines()),
            "  p4emu:",
            *("    " + line for line in pair.p4emu.detail.splitlines()),
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="p4testgen-diff", description=__doc__.split("\n\n")[0])
    parser.add_argument("programs", nargs="*", type=Path, help="default: mrc_switch + corpus")
    parser.add_argument("--seed", type=int, default=1, help="P4Testgen's seed (1)")
    parser.add_argument("--max-tests", type=int, default=20, help="tests per program (20)")
    parser.add_argument("--keep", type=Path, help="keep the generated tests in this directory")
    args = parser.parse_args(argv)
    reason = missing()
    if reason is not None:
        print(f"p4testgen-diff: cannot run: {reason}", file=sys.stderr)
        return 2
    programs = [p.resolve() for p in args.programs] or [MRC_SWITCH, *corpus_programs()]
    total = divergent = 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="p4testgen-diff-") as scratch:
        base = args.keep or Path(scratch)
        for index, program in enumerate(programs):
            workdir = base / f"{index:03d}-{program.stem}"
            workdir.mkdir(parents=True, exist_ok=True)
            try:
                report = run_program(program, workdir, args.seed, args.max_tests)
            except AssertionError as error:
                report = ProgramReport(program, [], 0.0, str(error).splitlines()[0])
            total += len(report.pairs)
            divergent += len(report.divergences)
            print(json.dumps(report.as_json()), flush=True)
            for pair in report.divergences:
                print(describe(pair), file=sys.stderr)
    summary = {
        "programs": len(programs),
        "tests": total,
        "divergences": divergent,
        "seed": args.seed,
        "max_tests": args.max_tests,
        "seconds": round(time.monotonic() - started, 1),
    }
    print(json.dumps(summary))
    return 1 if divergent else 0


if __name__ == "__main__":
    sys.exit(main())
