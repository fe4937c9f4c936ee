"""Does the two-process fabric (vfabric.parallel) pay on 2 cores? One JSON document.

Per case, the same workload runs in one process (``VirtualFabric.run``, ``one``) and in
two (``vfabric.parallel.run_two_process``): ``two`` with the default split (halves of the
NICs and of the planes; on one plane the halves of its fat tree, ``tree_halves``) and
``two_nics_switches`` (A every NIC, B every switch), in turn, ``--repeat`` times each,
every run in a fresh Python process (this script with ``--child``); medians are reported:

- ``paper8``: ``topologies/paper-8plane.yaml`` (8 planes, 32 NICs), all-to-all of
  ``--paper-kib`` KiB per ordered pair (992 transfers);
- ``small``: ``small`` (4 planes, 8 NICs), all-to-all of ``--small-kib`` KiB (56 transfers);
- ``perm1``: the htsim comparison's workload (``benchmarks/htsim_compare.py``,
  ``testbed.reference``): one plane, 32 hosts, a permutation of ``--perm-kib`` KiB each
  (split inside the plane by default: A the lower half of the T0 switches, their NICs and
  the lower half of the T1 switches, B the rest).

Each case runs on both paths (``--paths``, default ``pure compiled``): the pure one
(``MRC_TESTBED_PURE=1`` in the child's environment) and the compiled one (the installed
native build, docs/virtual-fabric.md "Compiled hot path"; reported as ``skipped`` with the
reason when this checkout has none). Per case, ``pure`` and ``compiled`` hold the figures
below, each with ``hot_path`` (what its children loaded, checked against the path asked
for); ``paths`` compares them: whether both paths gave the same event logs (one process:
its hash; two processes: A's and B's), and the speedups against the pure one-process run
(``compiled_two_vs_pure_one``: the two paths composed). Figures per case and path:

- measured wall time (``*_wall_s``) and CPU time (``*_cpu_s``, ``time.process_time``) of
  the run alone (the fabric's build is not counted: both build the same fabric once);
  for two processes, per partition, and ``two_call_wall_s``, the whole call (fork, the
  ping-pongs, the final counters) beside ``two_wall_s``, the loop;
- ``windows``, ``crossing_frames`` (both directions), ``bytes_pickled`` (both
  directions), ``wait_wall_s`` per partition (blocked at barriers), ``ping_rtt_us`` (an
  empty barrier's round trip, median of 200 before the run);
- ``critical_path_s``: an *estimate from CPU times*, what the run would take on two idle
  cores: per window the larger of the two partitions' CPU (events + barrier), plus one
  empty round trip per window; split into its parts;
- ``speedup_wall`` = one wall / two wall (*measured*, meaningful on an idle machine only);
  ``speedup_estimate`` = one CPU / critical path (*estimated*); ``paid``: the two-process
  run's measured wall time beat the one-process one's; ``paid_estimate`` the same for the
  estimate;
- every transfer intact on both, the completion times' differences (two - one, per
  transfer, relative), the event-log hashes (A's and B's; the two-process runs' must all
  agree: ``deterministic``);
- at the top of each case: ``paid``, ``speedup`` (measured) and ``speedup_estimate``
  of the default split;
- the load average at the start and the end of the whole benchmark.

Usage: ``python benchmarks/parallel_planes.py [--repeat N] [--paper-kib K] [--small-kib K]
[--perm-kib K] [--skip paper8|small|perm1 ...] [--paths pure|compiled ...]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CASES = {  # name -> (topology, default KiB per transfer: 5-30 s of one-process CPU on paper8)
    "paper8": ("paper-8plane", 64),
    "small": ("small", 1024),
    "perm1": ("htsim-fat-tree-32", 1024),
}
SEED = 1
PATHS = ("pure", "compiled")
PURE_ENV = "MRC_TESTBED_PURE"  # clikit.hotpath.PURE_ENV: the parent imports no hot path


def build(case: str, kib: int) -> Any:
    """The case's fabric, its transfers scheduled: an all-to-all, or for ``perm1`` the
    htsim comparison's 32-host permutation (``testbed.reference``: one plane)."""
    from vfabric import VirtualFabric

    if case == "perm1":
        from testbed.reference import suites, vfside

        work = suites.permutation(32, size=kib << 10)
        return vfside.build(work.shape, work.flows(), work.seed)[0]
    fabric = VirtualFabric(CASES[case][0], seed=SEED)
    for src in fabric.nics:
        for dst in fabric.nics:
            if src != dst:
                fabric.transfer(src, dst, kib << 10)
    return fabric


def child(case: str, mode: str, kib: int) -> dict[str, Any]:
    """One run in this (fresh) process: ``one`` or ``two`` processes, on the path its
    environment selects (:func:`spawn`)."""
    from clikit import hotpath
    from vfabric.parallel import run_two_process

    started = time.perf_counter()
    fabric = build(case, kib)
    out: dict[str, Any] = {"build_wall_s": time.perf_counter() - started}
    if mode == "one":
        wall0, cpu0 = time.perf_counter(), time.process_time()
        finished = fabric.run()
        out["wall_s"] = time.perf_counter() - wall0
        out["cpu_s"] = time.process_time() - cpu0
        out["traversals"] = fabric.traversals()
    else:
        wall0 = time.perf_counter()
        # "two": the default split; "two-nics": NICs | switches (A every NIC, B every switch)
        run = run_two_process(fabric, nics_b=frozenset() if mode == "two-nics" else None)
        out["call_wall_s"] = time.perf_counter() - wall0
        finished = run.finished
        a, b = run.a, run.b
        rtt = max(a.ping_rtt_s, b.ping_rtt_s)
        windows = list(
            zip(
                a.window_compute,
                a.window_exchange,
                b.window_compute,
                b.window_exchange,
                strict=True,
            )
        )
        out.update(
            wall_s=max(a.run_wall_s, b.run_wall_s),
            cpu_a_s=a.run_cpu_s,
            cpu_b_s=b.run_cpu_s,
            compute_a_s=a.compute_cpu_s,
            compute_b_s=b.compute_cpu_s,
            exchange_a_s=a.exchange_cpu_s,
            exchange_b_s=b.exchange_cpu_s,
            wait_a_s=a.wait_wall_s,
            wait_b_s=b.wait_wall_s,
            ping_rtt_us=rtt * 1e6,
            windows=a.windows,
            window_ns=run.window_ns,
            crossing_frames=a.frames_sent + b.frames_sent,
            frames_a_to_b=a.frames_sent,
            bytes_pickled=a.bytes_pickled + b.bytes_pickled,
            critical_path_s=run.critical_path_cpu_s(),
            critical_compute_s=sum(max(ca, cb) for ca, _, cb, _ in windows),
            critical_barrier_cpu_s=run.critical_path_cpu_s(0.0)
            - sum(max(ca, cb) for ca, _, cb, _ in windows),
            critical_rtt_s=rtt * a.windows,
            traversals=run.traversals,
            planes_a=a.planes,
            planes_b=b.planes,
            nics_a=a.nics,
            nics_b=b.nics,
            switches_a=a.switches,
            switches_b=b.switches,
            split=run.split,
            b_sha=run.b_event_log_sha256,
            logs=[str(p) for p in run.logs],
        )
    info = hotpath.describe()
    out.update(
        path=info["path"],
        hot_path=hotpath.summary(),
        finished=finished,
        virtual_ns=fabric.now,
        intact=all(t.intact for t in fabric.transfers),
        transfers=len(fabric.transfers),
        completion_ns=[t.completion_ns for t in fabric.transfers],
        sha=fabric.event_log_sha256,
    )
    return out


def path_env(path: str) -> dict[str, str]:
    """The environment of a child on ``path``: pure forced, or left to the native build."""
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    if path == "pure":
        env[PURE_ENV] = "1"
    return env


def compiled_available() -> str:
    """``clikit.hotpath.summary()`` in a child on the compiled path: ``compiled ...`` when
    this checkout's native build loads, else ``pure (why)``."""
    done = subprocess.run(
        [sys.executable, "-c", "from clikit import hotpath; print(hotpath.summary())"],
        cwd=ROOT,
        env=path_env("compiled"),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def spawn(case: str, mode: str, kib: int, path: str = "pure") -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", case, mode, str(kib)],
        env=path_env(path),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{case} {mode} {path}: child failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    if result["path"] != path:
        raise SystemExit(f"{case} {mode}: asked for the {path} path, ran {result['hot_path']}")
    return result


def median(rows: list[dict[str, Any]], key: str, ndigits: int = 3) -> float:
    return round(statistics.median(float(r[key]) for r in rows), ndigits)


def two_figures(ones: list[dict[str, Any]], twos: list[dict[str, Any]]) -> dict[str, Any]:
    """A split's figures against the one-process runs: measured, estimated, exchanged."""
    one_wall, one_cpu = median(ones, "wall_s"), median(ones, "cpu_s")
    two_wall, crit = median(twos, "wall_s"), median(twos, "critical_path_s")
    base = ones[0]["completion_ns"]
    diffs = [(t - o) / o for t, o in zip(twos[0]["completion_ns"], base, strict=True) if t and o]
    return {
        "split": {
            "name": twos[0]["split"],
            "a_switches": twos[0]["switches_a"],
            "b_switches": twos[0]["switches_b"],
            "a_planes": twos[0]["planes_a"],
            "b_planes": twos[0]["planes_b"],
            "a_nics": twos[0]["nics_a"],
            "b_nics": twos[0]["nics_b"],
        },
        "measured": {
            "two_wall_s": two_wall,
            "two_call_wall_s": median(twos, "call_wall_s"),
            "two_cpu_a_s": median(twos, "cpu_a_s"),
            "two_cpu_b_s": median(twos, "cpu_b_s"),
            "two_compute_a_s": median(twos, "compute_a_s"),
            "two_compute_b_s": median(twos, "compute_b_s"),
            "two_exchange_cpu_a_s": median(twos, "exchange_a_s"),
            "two_exchange_cpu_b_s": median(twos, "exchange_b_s"),
            "wait_wall_a_s": median(twos, "wait_a_s"),
            "wait_wall_b_s": median(twos, "wait_b_s"),
            "ping_rtt_us": median(twos, "ping_rtt_us", 1),
            "speedup_wall": round(one_wall / two_wall, 3),
            "paid": two_wall < one_wall,
        },
        "estimated": {
            "critical_path_s": crit,
            "critical_compute_s": median(twos, "critical_compute_s"),
            "critical_barrier_cpu_s": median(twos, "critical_barrier_cpu_s"),
            "critical_rtt_s": median(twos, "critical_rtt_s", 4),
            "speedup_estimate": round(one_cpu / crit, 3),
            "paid_estimate": crit < one_cpu,
        },
        "windows": twos[0]["windows"],
        "window_ns": twos[0]["window_ns"],
        "crossing_frames": twos[0]["crossing_frames"],
        "bytes_pickled": twos[0]["bytes_pickled"],
        "traversals": twos[0]["traversals"],
        "virtual_ns": twos[0]["virtual_ns"],
        "all_intact": all(r["intact"] and r["finished"] for r in twos),
        "completion_diff": {
            "last_one_ns": max(c for c in base if c is not None),
            "last_two_ns": max(c for c in twos[0]["completion_ns"] if c is not None),
            "median_rel": round(statistics.median(diffs), 4),
            "max_abs_rel": round(max(abs(d) for d in diffs), 4),
        },
        "sha_a": sorted({r["sha"][:16] for r in twos}),
        "sha_b": sorted({r["b_sha"][:16] for r in twos}),
        "deterministic": len({(r["sha"], r["b_sha"]) for r in twos}) == 1
        and len({tuple(r["completion_ns"]) for r in twos}) == 1,
        "logs": twos[-1]["logs"],
    }


def summarise(case: str, kib: int, runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    ones = runs["one"]
    out: dict[str, Any] = {
        "hot_path": ones[0]["hot_path"],
        "topology": CASES[case][0],
        "workload": f"permutation, {kib} KiB per host (htsim_compare's)"
        if case == "perm1"
        else f"all-to-all, {kib} KiB per ordered pair, seed {SEED}",
        "transfers": ones[0]["transfers"],
        "repeats": len(ones),
        "one": {
            "wall_s": median(ones, "wall_s"),
            "cpu_s": median(ones, "cpu_s"),
            "build_wall_s": median(ones, "build_wall_s", 2),
            "traversals": ones[0]["traversals"],
            "virtual_ns": ones[0]["virtual_ns"],
            "all_intact": all(r["intact"] and r["finished"] for r in ones),
            "sha": sorted({r["sha"][:16] for r in ones}),
        },
        "two": two_figures(ones, runs["two"]),
    }
    out["paid"] = out["two"]["measured"]["paid"]
    out["speedup"] = out["two"]["measured"]["speedup_wall"]
    out["speedup_estimate"] = out["two"]["estimated"]["speedup_estimate"]
    if runs.get("two-nics"):
        out["two_nics_switches"] = two_figures(ones, runs["two-nics"])
    return out


def compare_paths(by_path: dict[str, Any]) -> dict[str, Any]:
    """Both paths of one case: the same event logs? The speedups against the pure
    one-process run, the compiled two-process one's the two gains composed."""
    pure, compiled = by_path["pure"], by_path["compiled"]
    base = pure["one"]["wall_s"]
    base_cpu = pure["one"]["cpu_s"]
    out: dict[str, Any] = {
        "same_one_process_log": pure["one"]["sha"] == compiled["one"]["sha"],
        "same_two_process_logs": all(
            pure[key]["sha_a"] == compiled[key]["sha_a"]
            and pure[key]["sha_b"] == compiled[key]["sha_b"]
            for key in ("two", "two_nics_switches")
            if key in pure
        ),
        "compiled_one_vs_pure_one": round(base / compiled["one"]["wall_s"], 3),
        "compiled_two_vs_pure_one": round(base / compiled["two"]["measured"]["two_wall_s"], 3),
        "compiled_two_vs_pure_one_estimate": round(
            base_cpu / compiled["two"]["estimated"]["critical_path_s"], 3
        ),
    }
    return out


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--paper-kib", type=int, default=CASES["paper8"][1])
    parser.add_argument("--small-kib", type=int, default=CASES["small"][1])
    parser.add_argument("--perm-kib", type=int, default=CASES["perm1"][1])
    parser.add_argument("--skip", nargs="*", default=[], choices=sorted(CASES))
    parser.add_argument("--paths", nargs="+", default=list(PATHS), choices=PATHS)
    args = parser.parse_args()
    sizes = {"paper8": args.paper_kib, "small": args.small_kib, "perm1": args.perm_kib}
    paths = [p for p in PATHS if p in args.paths]
    report: dict[str, Any] = {
        "paths": {},
        "cores": os.cpu_count(),
        "load_start": [round(x, 2) for x in os.getloadavg()],
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if "pure" in paths:
        report["paths"]["pure"] = f"pure ({PURE_ENV}=1)"
    if "compiled" in paths:
        summary = compiled_available()
        report["paths"]["compiled"] = summary
        if not summary.startswith("compiled"):
            paths.remove("compiled")  # reported as skipped, with the reason
    for case in CASES:
        if case in args.skip:
            continue
        # the default split, then NICs | switches (on one plane: the split inside the plane
        # against the one it replaced)
        modes = ["one", "two", "two-nics"]
        runs: dict[str, dict[str, list[dict[str, Any]]]] = {
            p: {m: [] for m in modes} for p in paths
        }
        for r in range(args.repeat):  # alternating, the order turned every repeat
            for path in paths if r % 2 == 0 else paths[::-1]:
                for mode in modes[r % len(modes) :] + modes[: r % len(modes)]:
                    runs[path][mode].append(spawn(case, mode, sizes[case], path))
        by_path: dict[str, Any] = {p: summarise(case, sizes[case], runs[p]) for p in paths}
        if "compiled" in args.paths and "compiled" not in paths:
            by_path["compiled"] = {"skipped": report["paths"]["compiled"]}
        if "pure" in paths and "compiled" in paths:
            by_path["paths"] = compare_paths(by_path)
        report[case] = by_path
    report["load_end"] = [round(x, 2) for x in os.getloadavg()]
    report["ended_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
