"""Random programs (:mod:`p4fuzz`) on BMv2 and on p4emu: the same frames must come out.

Each program is compiled by p4c and loaded into ``simple_switch_grpc`` (:mod:`bmv2_stf`),
and loaded by p4emu; its STF (entries and packets, no ``expect``) runs on both through the
same STF runner, and the frames out are compared port by port, in order. A divergence is
also p4emu refusing a program p4c accepts, or a write one side refuses. p4c refusing a
generated program is a generator bug (an error, not a divergence).

``scripts/p4fuzz-diff [--seed S] [--count N] [--minimise] [--without NAME ...] [--jobs J]``
runs programs ``S .. S+N-1`` (p4c compiling the next ``J`` while one runs; a divergence
counts when a second run of the program shows it too, else it is reported as unconfirmed),
prints one JSON line per divergence (with the minimised program
when asked) and a summary; ``tests/conformance/test_p4fuzz.py`` runs a few in CI.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bmv2_harness import Bmv2Crash, by_port, compile_with_p4c, tools_missing
from bmv2_stf import Bmv2StfTarget, shared_switch
from p4fuzz import Features, FuzzProgram, generate, minimise

from p4emu.exceptions import P4EmuError
from p4emu.frontend import load_program
from p4emu.stf.parser import parse_stf
from p4emu.stf.runner import StfOptions, StfRunner, StfTarget


class GeneratorError(AssertionError):
    """p4c refuses a generated program: the generator is wrong, not a target."""


@dataclass
class CaseResult:
    seed: int
    diverged: bool
    why: str = ""
    p4emu_frames: int = 0
    bmv2_frames: int = 0
    unconfirmed: str = ""
    """A divergence the program's second run did not show (BMv2 late on a loaded machine)."""


def _frames(runner_target: StfTarget, stf: Path, commands) -> tuple[list, str]:
    runner = StfRunner(runner_target, str(stf))
    try:
        runner.run(commands)
    except P4EmuError as error:
        return runner.received, f"error: {error}"
    return runner.received, ""


def write_case(program: FuzzProgram, workdir: Path) -> Path:
    """``fuzz.p4`` and ``fuzz.stf`` of ``program`` in ``workdir``; the program's path."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "fuzz.p4").write_text(program.p4(), encoding="utf-8")
    (workdir / "fuzz.stf").write_text(program.stf(), encoding="utf-8")
    return workdir / "fuzz.p4"


def run_case(
    program: FuzzProgram, workdir: Path, compiled: Future[tuple[Path, Path]] | None = None
) -> CaseResult:
    """Run ``program`` with its STF on p4emu and BMv2 and compare the frames out
    (``compiled``: p4c's outputs of the program written by :func:`write_case`, being
    made ahead; else p4c compiles it here)."""
    p4 = write_case(program, workdir) if compiled is None else workdir / "fuzz.p4"
    stf = workdir / "fuzz.stf"
    commands = parse_stf(stf.read_text(encoding="utf-8"), str(stf))
    try:
        checked = load_program(p4)
        emu_target = StfTarget(checked, StfOptions())  # type: ignore[arg-type]
    except P4EmuError as error:
        emu_target = None
        emu_error = str(error)
    switch = shared_switch()
    try:
        if compiled is None:
            switch.load(p4, workdir)
        else:
            switch.use(*compiled.result())
    except AssertionError as error:
        if "p4c rejects" in str(error):
            raise GeneratorError(f"seed {program.seed}: {error}") from None
        raise
    if emu_target is None:
        return CaseResult(program.seed, True, f"p4emu refuses the program: {emu_error}")
    emu, emu_why = _frames(emu_target, stf, commands)
    switch.reset()
    target = Bmv2StfTarget(switch, emu_target.objects, len(emu))
    try:
        bmv2, bmv2_why = _frames(target, stf, commands)
        switch._check_alive()
    except Bmv2Crash as crash:
        return CaseResult(program.seed, True, f"BMv2 stopped: {crash.stderr[-300:]}", len(emu))
    result = CaseResult(program.seed, False, "", len(emu), len(bmv2))
    if _refusal(emu_why) != _refusal(bmv2_why):
        result.diverged = True
        result.why = f"p4emu: {emu_why or 'ran'}; BMv2: {bmv2_why or 'ran'}"
        return result
    if by_port(emu) != by_port(bmv2):  # the frames before a refusal too
        result.diverged = True
        result.why = _frame_diff(by_port(emu), by_port(bmv2))
    return result


_REFUSAL = re.compile(r"refused: ([A-Z_]+):")


def _refusal(why: str) -> str:
    """What stopped a run: "" (nothing), the refused write's code, or the whole error."""
    if not why:
        return ""
    found = _REFUSAL.search(why)
    return found.group(1) if found else why


def _frame_diff(emu: dict[int, list[str]], bmv2: dict[int, list[str]]) -> str:
    lines = []
    for port in sorted(set(emu) | set(bmv2)):
        a, b = emu.get(port, []), bmv2.get(port, [])
        if a != b:
            lines.append(f"port {port}: p4emu {len(a)} frame(s), BMv2 {len(b)}")
            for index, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    lines.append(f"  #{index + 1} p4emu {x}")
                    lines.append(f"  #{index + 1} BMv2  {y}")
                    break
    return "\n".join(lines)


#: what a child process runs to make p4emu's compiled module of a program ahead of its
#: run (argv[1]: the program): the switch :func:`run_case` makes, so the same cache entry
PREPARE_NATIVE = (
    "import sys\n"
    "from p4emu.frontend import load_program\n"
    "from p4emu.stf.runner import StfOptions, StfTarget\n"
    "StfTarget(load_program(sys.argv[1]), StfOptions())\n"
)


def native_builds() -> bool:
    """Whether this process runs a program's generated code compiled (then each new
    program is compiled once, by Cython and the C compiler: several seconds, more than p4c;
    :mod:`p4emu.backend.native`)."""
    from p4emu.backend import native

    return native.wanted() is None


def prepare_ahead(p4: Path, workdir: Path) -> tuple[Path, Path]:
    """p4c's outputs of ``p4`` and, when :func:`native_builds`, p4emu's compiled module of
    it built into the native cache by a child process meanwhile (the run finds it there, or
    waits for the child's build lock). A child that fails leaves its output in
    ``prepare-native.log`` beside the program: the run then builds, or reports, the program
    itself."""
    if not native_builds():
        return compile_with_p4c(p4, workdir)
    with (workdir / "prepare-native.log").open("wb") as log:
        child = subprocess.Popen(
            [sys.executable, "-c", PREPARE_NATIVE, str(p4)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            return compile_with_p4c(p4, workdir)
        finally:
            child.wait()


def run_many(
    seeds: Iterable[int], features: Features, base: Path, jobs: int = 1
) -> Iterator[tuple[FuzzProgram, CaseResult]]:
    """Each seed's program run as :func:`run_case` does, in order, while p4c compiles the
    next ones (``jobs`` p4c processes at a time: p4c is nearly all of a program's cost)
    and, on the compiled path, p4emu's native build of each is made beside p4c's
    (:func:`prepare_ahead`)."""
    pending: deque[tuple[FuzzProgram, Path, Future[tuple[Path, Path]]]] = deque()
    upcoming = iter(seeds)
    with ThreadPoolExecutor(max_workers=jobs) as pool:

        def submit() -> None:
            seed = next(upcoming, None)
            if seed is None:
                return
            program = generate(seed, features)
            workdir = base / f"seed{seed}"
            p4 = write_case(program, workdir)
            pending.append((program, workdir, pool.submit(prepare_ahead, p4, workdir)))

        for _ in range(jobs + 1):
            submit()
        while pending:
            program, workdir, compiled = pending.popleft()
            submit()
            result = run_case(program, workdir, compiled)
            if result.diverged:  # confirmed only if a second run diverges too
                again = run_case(program, workdir.with_name(workdir.name + "-again"))
                if not again.diverged:
                    again.unconfirmed = result.why
                result = again
            yield program, result


def minimise_case(program: FuzzProgram, workdir: Path, budget: int = 60) -> FuzzProgram:
    """The divergence of ``program`` on a smaller program (``budget`` runs at most)."""
    counter = iter(range(1_000_000))

    def diverges(candidate: FuzzProgram) -> bool:
        try:
            return run_case(candidate, workdir / f"min{next(counter):03d}").diverged
        except GeneratorError:
            return False

    return minimise(program, diverges, budget)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="p4fuzz-diff", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1, help="first program's seed (1)")
    parser.add_argument("--count", type=int, default=50, help="programs (50)")
    parser.add_argument("--minimise", action="store_true", help="minimise each divergence")
    parser.add_argument(
        "--without", action="append", default=[], choices=Features.names(),
        help="leave out a construct (each was once a p4emu bug; all are on by default)",
    )  # fmt: skip
    parser.add_argument("--keep", type=Path, help="keep programs and runs in this directory")
    parser.add_argument(
        "--jobs", type=int, default=1, help="p4c processes compiling ahead at a time (1)"
    )
    args = parser.parse_args(argv)
    reason = tools_missing()
    if reason is not None:
        print(f"p4fuzz-diff: cannot run: {reason}", file=sys.stderr)
        return 2
    features = Features(**{name: False for name in args.without})
    started = time.monotonic()
    divergences = 0
    unconfirmed = 0
    with tempfile.TemporaryDirectory(prefix="p4fuzz-") as scratch:
        base = args.keep or Path(scratch)
        seeds = range(args.seed, args.seed + args.count)
        for program, result in run_many(seeds, features, base, args.jobs):
            seed = program.seed
            if result.unconfirmed:
                unconfirmed += 1
                print(json.dumps({"seed": seed, "unconfirmed": result.unconfirmed}), flush=True)
            if not result.diverged:
                continue
            divergences += 1
            record = {"seed": seed, "why": result.why}
            if args.minimise:
                small = minimise_case(program, base / f"seed{seed}-min")
                record["minimised_p4"] = small.p4()
                record["minimised_stf"] = small.stf()
            print(json.dumps(record), flush=True)
    seconds = time.monotonic() - started
    summary = {
        "programs": args.count,
        "first_seed": args.seed,
        "without": sorted(args.without),
        "jobs": args.jobs,
        "divergences": divergences,
        "unconfirmed": unconfirmed,
        "seconds": round(seconds, 1),
        "programs_per_minute": round(60 * args.count / seconds, 1),
    }
    print(json.dumps(summary))
    return 1 if divergences else 0


if __name__ == "__main__":
    sys.exit(main())
