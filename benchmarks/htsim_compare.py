"""The cost of the same work on htsim_uec and on the virtual fabric, side by side (one JSON).

Each workload (``testbed.reference``: a one-plane fat tree and its flows, described once)
runs on uet-htsim's ``htsim_uec`` and on the virtual fabric, each in a child process
measured by the same launcher (``testbed.reference.results.run_child``), the sides
alternating ``--repeat`` times so that both see the same machine load. Per side it prints
wall seconds (the child, start to exit) and peak RSS (MiB); for the virtual fabric also
its simulation's wall seconds (``VirtualFabric.run`` alone), its switch traversals, and
traversals per wall second (the traversals over the child's wall time, and over the
simulation alone). htsim does the same work, so ``htsim.traversals_per_s`` is the virtual
fabric's traversal count over htsim's wall time. The ratios (ours / htsim's) are those of
the best run of each side; the targets of issue #27 are a wall ratio of at most 10 and a
virtual-fabric peak RSS of at most 100 MB. ``hot_path`` says which path the virtual
fabric ran (docs/virtual-fabric.md, "Compiled hot path"), ``python`` which interpreter
(its version, the file it resolves to, its build): the same code runs at different speeds
on differently built interpreters, so only figures of one interpreter compare. Unlike
``benchmarks/htsim_diff.py`` it compares no transport figures and runs no victim alone.

By default the 32-host permutation runs at two flow sizes (``--flow-kib``, 1 and 4 MiB),
and ``rss_growth`` gives each side's peak RSS per size and the MiB of peak RSS per MiB
sent between the smallest and the largest: what grows with the bytes sent
(docs/virtual-fabric.md, "Memory in long runs").

``--processes 2`` adds a third side, ``vfabric_two_process``: the same workload on the
two-process fabric (``vfabric.parallel.run_two_process`` with its default split: the one
plane splits inside itself, by the fat tree's halves, ``vfabric.parallel.tree_halves``:
A the lower half of the T0 switches, their NICs and the lower half of the T1 switches, B
the rest; docs/virtual-fabric.md "Several cores", "Split inside a plane"), in its own child measured by the same launcher,
alternating with the other two, on the same hot path. Its run is *not the one-process event
log*: its two partitions' logs are hashed apart (``event_log_sha256_a``, ``_b``), and each
repeat must give the same pair. Its figures: the child's wall seconds (start to exit:
imports, build, fork, run), the run alone (``run_wall_s``, the slower partition's loop)
and its estimate on two idle cores from CPU times (``critical_path_s``, per window the
slower side's CPU plus an empty barrier's round trip), traversals per second, and
``peak_rss_mib``: the *sum* of both processes' own peak RSS (``ru_maxrss``; B's counts the
pages it shares with A since the fork, so the sum overstates what both used together),
beside ``pss_end_mib`` (both processes' proportional set size at the end of the run:
shared pages split between them). Its ratios to htsim are in ``ratios_two_process``.

Python's bytecode: the children run as an installed program does, with the project's
modules' compiled bytecode cached (``__pycache__``, written by a warm-up run of a small
workload before the measured ones): a ``PYTHONDONTWRITEBYTECODE`` in the environment (set
on some CI machines) is left out of the children's, as ``python_bytecode`` says, since it
would make every child compile every module from source (about 0.13 s of CPU on the
machine of docs/virtual-fabric.md). ``--bytecode-as-environment`` keeps the environment
as it is.

htsim_uec comes from ``$MRC_HTSIM`` or ``shared/htsim/bin/htsim_uec`` beside the clone.

Usage: ``python benchmarks/htsim_compare.py [--ci] [--flow-kib KIB ...] [--only NAME ...]
[--repeat N] [--processes 1|2] [--bytecode-as-environment]``
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TWO_PROCESS_CHILD = "--two-process-child"  # argv[1] of this script as the two-process side
if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == TWO_PROCESS_CHILD:
    gc.disable()  # the child's start-up, as testbed.reference.vfside's child: see there

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clikit import hotpath  # noqa: E402
from testbed.reference import suites, vfside  # noqa: E402
from testbed.reference.exceptions import HtsimDiffError, RunFailedError  # noqa: E402
from testbed.reference.results import SideRun, rss_floor_mib, run_child  # noqa: E402
from testbed.reference.workload import FabricShape, Flow, Workload, end_us  # noqa: E402

TARGET_WALL_RATIO = 10.0
TARGET_PEAK_RSS_MB = 100.0
MB_PER_MIB = 1.048576
MIB = 1 << 20
KIB = 1 << 10
DEFAULT_FLOW_KIB = (1024, 4096)  # the permutation's flow sizes: 1 and 4 MiB
TWO_PROCESS_SIDE = "vfabric_two_process"
TWO_PROCESS_LABEL = (
    "two processes (vfabric.parallel, the plane split by its fat tree's halves): partitions "
    "A's and B's event logs, not the one-process event log"
)
CHILD_TIMEOUT_S = 3600.0


def workloads(args: argparse.Namespace) -> list[Workload]:
    if args.ci:
        pool = list(suites.CI)
    else:
        pool = [suites.permutation(32, size=kib * KIB) for kib in args.flow_kib]
    return suites.select(pool, args.only)


def ratio(ours: float, theirs: float) -> float | None:
    return round(ours / theirs, 2) if theirs else None


def side_figures(run: SideRun, traversals: int) -> dict[str, Any]:
    out: dict[str, Any] = {
        "wall_s": round(run.wall_s, 3),
        "peak_rss_mib": round(run.peak_rss_mib, 1),
        "traversals_per_s": round(traversals / run.wall_s) if run.wall_s else None,
    }
    if run.side == "vfabric":
        run_wall = run.extra["run_wall_s"]
        out["run_wall_s"] = round(run_wall, 3)
        out["switch_traversals"] = traversals
        out["traversals_per_run_s"] = round(traversals / run_wall) if run_wall else None
        out["event_log_sha256"] = run.extra["event_log_sha256"]
    return out


def simulate_two_process(shape: FabricShape, flows: Sequence[Flow], seed: int) -> dict[str, Any]:
    """The two-process side, in this (child) process: the fabric as
    :func:`testbed.reference.vfside.simulate` builds it, run by
    :func:`vfabric.parallel.run_two_process` to the same end."""
    from vfabric.parallel import run_two_process  # the child's import, as vfside's

    fabric, _ = vfside.build(shape, flows, seed)
    started = time.perf_counter()
    run = run_two_process(fabric, until_ns=end_us(shape, flows) * 1000)
    call_wall = time.perf_counter() - started
    a, b = run.a, run.b
    return {
        "finished": run.finished,
        "split": run.split,
        "failures": sum(not t.intact for t in fabric.transfers),
        "hot_path": hotpath.summary(),
        "call_wall_s": call_wall,
        "run_wall_s": max(a.run_wall_s, b.run_wall_s),
        "run_cpu_s": [a.run_cpu_s, b.run_cpu_s],
        "critical_path_s": run.critical_path_cpu_s(),
        "virtual_ns": fabric.now,
        "switch_traversals": run.traversals,
        "windows": a.windows,
        "crossing_frames": a.frames_sent + b.frames_sent,
        "peak_rss_kib": [a.peak_rss_kib, b.peak_rss_kib],
        "pss_end_kib": [a.pss_end_kib, b.pss_end_kib],
        "event_log_sha256_a": fabric.event_log_sha256,
        "event_log_sha256_b": run.b_event_log_sha256,
    }


def run_two_process_side(
    shape: FabricShape, flows: Sequence[Flow], seed: int, directory: Path
) -> SideRun:
    """:func:`simulate_two_process` in a child (this script with :data:`TWO_PROCESS_CHILD`)
    measured by the launcher that measures the other sides; its ``peak_rss_mib`` is the
    sum of both partitions' own peaks (see the module docstring)."""
    directory.mkdir(parents=True, exist_ok=True)
    request, result = directory / "request.json", directory / "result.json"
    vfside.write_request(request, shape, flows, seed)
    env = vfside.child_env()
    argv = [
        sys.executable,
        str(Path(__file__).resolve()),
        TWO_PROCESS_CHILD,
        str(request),
        str(result),
    ]
    child = run_child(
        argv,
        cwd=directory,
        stdout=directory / "stdout",
        stderr=directory / "stderr",
        timeout_s=CHILD_TIMEOUT_S,
        env=env,
    )
    if child.timed_out or child.returncode != 0:
        raise RunFailedError(
            f"the two-process fabric {'timed out' if child.timed_out else 'failed'} "
            f"(status {child.returncode})",
            directory,
        )
    data = json.loads(result.read_text(encoding="utf-8"))
    if data["failures"]:
        raise RunFailedError(
            f"two-process fabric: {data['failures']} flow(s) not delivered intact", directory
        )
    data["launcher_peak_rss_mib"] = child.peak_rss_mib  # the larger of the two, in effect
    shutil.rmtree(directory, ignore_errors=True)
    return SideRun(TWO_PROCESS_SIDE, {}, child.wall_s, sum(data["peak_rss_kib"]) / 1024, data)


def two_process_figures(run: SideRun, htsim_run: SideRun) -> dict[str, Any]:
    """The two-process side's row and its ratios to htsim's best run."""
    extra = run.extra
    traversals = extra["switch_traversals"]
    rss_mb = run.peak_rss_mib * MB_PER_MIB
    wall_ratio = ratio(run.wall_s, htsim_run.wall_s)
    row = {
        "label": TWO_PROCESS_LABEL,
        "split": extra["split"],
        "hot_path": extra["hot_path"],
        "wall_s": round(run.wall_s, 3),
        "run_wall_s": round(extra["run_wall_s"], 3),
        "critical_path_s": round(extra["critical_path_s"], 3),
        "run_cpu_s": [round(x, 3) for x in extra["run_cpu_s"]],
        "switch_traversals": traversals,
        "traversals_per_s": round(traversals / run.wall_s) if run.wall_s else None,
        "traversals_per_run_s": round(traversals / extra["run_wall_s"])
        if extra["run_wall_s"]
        else None,
        "peak_rss_mib": round(run.peak_rss_mib, 1),
        "peak_rss_mib_a_b": [round(k / 1024, 1) for k in extra["peak_rss_kib"]],
        "pss_end_mib": round(sum(extra["pss_end_kib"]) / 1024, 1),
        "launcher_peak_rss_mib": round(extra["launcher_peak_rss_mib"], 1),
        "windows": extra["windows"],
        "crossing_frames": extra["crossing_frames"],
        "event_log_sha256_a": extra["event_log_sha256_a"],
        "event_log_sha256_b": extra["event_log_sha256_b"],
    }
    ratios = {
        "wall_s": wall_ratio,
        "run_wall_s_vs_htsim_wall_s": ratio(extra["run_wall_s"], htsim_run.wall_s),
        "critical_path_s_vs_htsim_wall_s": ratio(extra["critical_path_s"], htsim_run.wall_s),
        "peak_rss": ratio(run.peak_rss_mib, htsim_run.peak_rss_mib),
        "wall_ratio_met": wall_ratio is not None and wall_ratio <= TARGET_WALL_RATIO,
        "peak_rss_mb": round(rss_mb, 1),
        "peak_rss_met": rss_mb <= TARGET_PEAK_RSS_MB,
    }
    return {"row": row, "ratios": ratios}


def compare_cost(workload: Workload, repeat: int, work: Path, processes: int = 1) -> dict[str, Any]:
    from testbed.reference import htsim  # numpy: kept out of the two-process child

    flows = workload.flows()
    runs: dict[str, list[SideRun]] = {"htsim": [], "vfabric": []}
    if processes == 2:
        runs[TWO_PROCESS_SIDE] = []
    for i in range(repeat):
        runs["htsim"].append(htsim.run(workload.shape, flows, workload.seed, work / f"h{i}"))
        runs["vfabric"].append(vfside.run(workload.shape, flows, workload.seed, work / f"v{i}"))
        if processes == 2:
            runs[TWO_PROCESS_SIDE].append(
                run_two_process_side(workload.shape, flows, workload.seed, work / f"p{i}")
            )
    hashes = {r.extra["event_log_sha256"] for r in runs["vfabric"]}
    if len(hashes) != 1:
        raise HtsimDiffError(f"{workload.name}: the virtual fabric's runs differ: {hashes}")
    pairs = {
        (r.extra["event_log_sha256_a"], r.extra["event_log_sha256_b"])
        for r in runs.get(TWO_PROCESS_SIDE, [])
    }
    if len(pairs) > 1:
        raise HtsimDiffError(f"{workload.name}: the two-process runs differ: {pairs}")
    traversals = runs["vfabric"][0].extra["switch_traversals"]
    best = {side: min(rs, key=lambda r: r.wall_s) for side, rs in runs.items()}
    ours, theirs = best["vfabric"], best["htsim"]
    rss_mb = ours.peak_rss_mib * MB_PER_MIB
    wall_ratio = ratio(ours.wall_s, theirs.wall_s)
    out = {
        "workload": workload.name,
        "flows": len(flows),
        "bytes_sent": sum(f.size for f in flows),
        "htsim": side_figures(theirs, traversals),
        "vfabric": side_figures(ours, traversals),
        "wall_s_all": {side: [round(r.wall_s, 3) for r in rs] for side, rs in runs.items()},
        "ratios": {
            "wall_s": wall_ratio,
            "run_wall_s_vs_htsim_wall_s": ratio(ours.extra["run_wall_s"], theirs.wall_s),
            "peak_rss": ratio(ours.peak_rss_mib, theirs.peak_rss_mib),
        },
        "targets": {
            "wall_ratio_max": TARGET_WALL_RATIO,
            "wall_ratio_met": wall_ratio is not None and wall_ratio <= TARGET_WALL_RATIO,
            "peak_rss_mb_max": TARGET_PEAK_RSS_MB,
            "vfabric_peak_rss_mb": round(rss_mb, 1),
            "peak_rss_met": rss_mb <= TARGET_PEAK_RSS_MB,
        },
    }
    if processes == 2:
        two = min(runs[TWO_PROCESS_SIDE], key=lambda r: r.wall_s)
        figures = two_process_figures(two, theirs)
        out[TWO_PROCESS_SIDE] = figures["row"]
        out["wall_s_all"][TWO_PROCESS_SIDE] = [round(r.wall_s, 3) for r in runs[TWO_PROCESS_SIDE]]
        out["ratios_two_process"] = figures["ratios"]
    return out


def slope(rows: list[dict[str, Any]], side: str) -> float:
    """MiB of ``side``'s peak RSS per MiB sent, between the first and the last row."""
    first, last = rows[0], rows[-1]
    rss = last[side]["peak_rss_mib"] - first[side]["peak_rss_mib"]
    return round(rss / ((last["bytes_sent"] - first["bytes_sent"]) / MIB), 4)


def rss_growth(results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Peak RSS against the bytes sent, over the workloads that differ only in their flow
    size (the permutations of ``--flow-kib``); None with fewer than two sizes."""
    rows = sorted(
        (r for r in results if r["workload"].startswith("permutation-")),
        key=lambda r: r["bytes_sent"],
    )
    if len({r["bytes_sent"] for r in rows}) < 2:
        return None
    return {
        "workloads": [r["workload"] for r in rows],
        "bytes_sent_mib": [round(r["bytes_sent"] / MIB, 2) for r in rows],
        "vfabric_peak_rss_mib": [r["vfabric"]["peak_rss_mib"] for r in rows],
        "htsim_peak_rss_mib": [r["htsim"]["peak_rss_mib"] for r in rows],
        "vfabric_rss_mib_per_mib_sent": slope(rows, "vfabric"),
        "htsim_rss_mib_per_mib_sent": slope(rows, "htsim"),
    }


def two_process_child(request_path: str, result_path: str) -> int:
    """This script as the two-process side's child: a request in, its figures out (the
    collector off until the fabric is built: :func:`vfside.start_without_collector`)."""
    vfside.start_without_collector()
    return vfside.serve(request_path, result_path, simulate_two_process)


#: the variable that stops Python writing the bytecode it compiles (see module docs)
NO_BYTECODE_ENV = "PYTHONDONTWRITEBYTECODE"
#: the warm-up run's workload: every module a measured child imports, compiled once
WARM_UP = (
    "from testbed.reference import suites, vfside; import vfabric.parallel; "
    "w = suites.permutation(32, size=4096); vfside.simulate(w.shape, w.flows(), w.seed)"
)


def interpreter() -> dict[str, Any]:
    """Which Python ran both sides' children (the benchmark's own, ``sys.executable``):
    its version, the file it resolves to, its build and compiler. The interpreter's own
    build weighs on the figures: the same code ran its loop in about 6 % fewer
    instructions on Debian 12's ``/usr/bin/python3`` than on a Python built without
    profile-guided and link-time optimization (docs/virtual-fabric.md, "Against htsim")."""
    import platform

    return {
        "version": platform.python_version(),
        "executable": os.path.realpath(sys.executable),
        "build": " ".join(platform.python_build()),
        "compiler": platform.python_compiler(),
    }


def cache_bytecode(as_environment: bool) -> dict[str, Any]:
    """What ``python_bytecode`` reports; unless ``as_environment``, take
    :data:`NO_BYTECODE_ENV` out of this process's environment (the children's) and run
    :data:`WARM_UP` once in a child, so the measured children load cached bytecode."""
    said = os.environ.get(NO_BYTECODE_ENV)
    if as_environment or said is None:
        cached = said is None
    else:
        del os.environ[NO_BYTECODE_ENV]
        cached = True
    if cached:
        warm = subprocess.run(
            [sys.executable, "-c", WARM_UP],
            cwd=ROOT,
            env=vfside.child_env(),
            capture_output=True,
            check=False,
        )
        if warm.returncode != 0:
            raise HtsimDiffError(
                f"the warm-up run failed (status {warm.returncode}): "
                f"{warm.stderr.decode(errors='replace')[-2000:]}"
            )
    return {"cached": cached, NO_BYTECODE_ENV: said, "as_environment": as_environment}


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if len(args_in) == 3 and args_in[0] == TWO_PROCESS_CHILD:
        vfside.leave(two_process_child(args_in[1], args_in[2]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ci", action="store_true", help="the CI workloads (adds the incast)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run these workloads only")
    parser.add_argument("--repeat", type=int, default=1, help="runs per side (best of)")
    parser.add_argument(
        "--flow-kib",
        type=int,
        nargs="+",
        default=list(DEFAULT_FLOW_KIB),
        metavar="KIB",
        help="without --ci: the 32-host permutation's flow sizes, KiB (default: 1024 4096)",
    )
    parser.add_argument(
        "--processes",
        type=int,
        choices=(1, 2),
        default=1,
        help="2: also run each workload on the two-process fabric (its own row and ratios)",
    )
    parser.add_argument(
        "--bytecode-as-environment",
        action="store_true",
        help=f"keep ${NO_BYTECODE_ENV} for the children (default: bytecode cached)",
    )
    args = parser.parse_args(args_in)
    if args.repeat < 1:
        print(f"htsim_compare: --repeat {args.repeat}: must be at least 1", file=sys.stderr)
        return 2
    if any(kib < 1 for kib in args.flow_kib):
        print(f"htsim_compare: --flow-kib {args.flow_kib}: sizes must be >= 1", file=sys.stderr)
        return 2
    try:
        chosen = workloads(args)
        from testbed.reference import htsim

        binary = htsim.find_htsim()
        bytecode = cache_bytecode(args.bytecode_as_environment)
    except HtsimDiffError as exc:
        print(f"htsim_compare: {exc}", file=sys.stderr)
        return 2
    load_start = os.getloadavg()
    started = time.perf_counter()
    results, failed = [], []
    with tempfile.TemporaryDirectory(prefix="htsim-compare-") as tmp:
        for workload in chosen:
            print(f"htsim_compare: {workload.name} ...", file=sys.stderr, flush=True)
            try:
                results.append(
                    compare_cost(workload, args.repeat, Path(tmp) / workload.name, args.processes)
                )
            except HtsimDiffError as exc:  # reported; the other workloads still run
                print(f"htsim_compare: {workload.name}: {exc}", file=sys.stderr)
                failed.append({"workload": workload.name, "error": str(exc)})
    report = {
        "htsim": binary.name,
        "hot_path": hotpath.describe(),
        "python": interpreter(),
        "processes": args.processes,
        "python_bytecode": bytecode,
        "rss_floor_mib": rss_floor_mib(),
        "workloads": results,
        "rss_growth": rss_growth(results),
        "failed": failed,
        "load_average": {"start": load_start, "end": os.getloadavg()},
        "total_wall_s": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(report, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
