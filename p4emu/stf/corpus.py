"""Run a directory of STF tests (a conformance corpus): every ``X.p4`` with an ``X.stf``
next to it, found recursively, in path order.

Each test ends as ``passed``, ``failed`` (an expectation not met, or an error: a program
p4emu rejects, a bad STF line, a refused entry) or ``unsupported`` (the program uses a
valid construct p4emu does not implement: :class:`p4emu.exceptions.P4UnsupportedError`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from p4emu.exceptions import P4EmuError, P4SourceErrors, P4UnsupportedError
from p4emu.stf.runner import StfOptions, run_stf

PASSED = "passed"
FAILED = "failed"
UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class CorpusCase:
    """One test of a corpus: the program, its STF file, the outcome (``passed``, ``failed`` or
    ``unsupported``) and the detail (the run's report, or the error)."""

    program: Path
    stf: Path
    outcome: str
    detail: str


@dataclass
class CorpusResult:
    """Every case of a corpus run, in path order."""

    cases: list[CorpusCase] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        return sum(case.outcome == outcome for case in self.cases)

    @property
    def passed(self) -> bool:
        """No failures (unsupported constructs are reported, not failed)."""
        return self.count(FAILED) == 0

    def summary(self) -> str:
        return (
            f"{self.count(PASSED)} passed, {self.count(FAILED)} failed, "
            f"{self.count(UNSUPPORTED)} unsupported"
        )


def find_cases(directory: Path) -> list[tuple[Path, Path]]:
    """``(program, stf)`` pairs under ``directory``; a ``.p4`` without ``.stf`` is skipped
    (an include file)."""
    if not directory.is_dir():
        raise P4EmuError(f"{directory}: not a directory")
    pairs = []
    for program in sorted(directory.rglob("*.p4")):
        stf = program.with_suffix(".stf")
        if stf.is_file():
            pairs.append((program, stf))
    if not pairs:
        raise P4EmuError(f"{directory}: no PROGRAM.p4 with a PROGRAM.stf next to it")
    return pairs


def _unsupported(error: P4EmuError) -> P4UnsupportedError | None:
    if isinstance(error, P4UnsupportedError):
        return error
    if isinstance(error, P4SourceErrors):
        found = [e for e in error.errors if isinstance(e, P4UnsupportedError)]
        if found and len(found) == len(error.errors):
            return found[0]
    return None


def run_corpus(
    directory: str | Path,
    make_options: Callable[[], StfOptions] = StfOptions,
    progress: Callable[[CorpusCase], None] | None = None,
) -> CorpusResult:
    """Run every test of ``directory``; ``progress`` is called after each one."""
    result = CorpusResult()
    for program, stf in find_cases(Path(directory)):
        try:
            run = run_stf(program, stf, make_options())
        except P4EmuError as error:
            unsupported = _unsupported(error)
            outcome = UNSUPPORTED if unsupported is not None else FAILED
            case = CorpusCase(program, stf, outcome, str(unsupported or error))
        else:
            outcome = PASSED if run.passed else FAILED
            case = CorpusCase(program, stf, outcome, run.report())
        result.cases.append(case)
        if progress is not None:
            progress(case)
    return result
