"""benchmarks/htsim_compare.py's two-process side (``--processes 2``): its child, its row
and its ratios, labelled apart from the one-process event log."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from benchmark_scripts import load_benchmark

from testbed.reference.results import SideRun
from testbed.reference.workload import Workload


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("htsim_compare")


def made_up_two_process_run(bench: ModuleType, wall_s: float = 2.0) -> SideRun:
    extra = {
        "hot_path": "compiled (27 native modules)",
        "run_wall_s": 1.0,
        "critical_path_s": 0.8,
        "run_cpu_s": [0.9, 0.7],
        "switch_traversals": 4000,
        "peak_rss_kib": [80 * 1024, 60 * 1024],
        "pss_end_kib": [50 * 1024, 30 * 1024],
        "launcher_peak_rss_mib": 80.0,
        "windows": 100,
        "split": "tree halves",
        "crossing_frames": 5000,
        "event_log_sha256_a": "a" * 64,
        "event_log_sha256_b": "b" * 64,
    }
    return SideRun(bench.TWO_PROCESS_SIDE, {}, wall_s, 140.0, extra)


def test_the_two_process_row_sums_both_peaks_and_keeps_its_own_logs(bench: ModuleType) -> None:
    htsim_run = SideRun("htsim", {}, 0.1, 7.0)
    figures = bench.two_process_figures(made_up_two_process_run(bench), htsim_run)
    row, ratios = figures["row"], figures["ratios"]
    assert "not the one-process event log" in row["label"] and "fat tree" in row["label"]
    assert row["split"] == "tree halves"
    assert (row["event_log_sha256_a"], row["event_log_sha256_b"]) == ("a" * 64, "b" * 64)
    assert "event_log_sha256" not in row  # never mistaken for the one-process log's hash
    assert row["peak_rss_mib"] == 140.0 and row["peak_rss_mib_a_b"] == [80.0, 60.0]
    assert row["pss_end_mib"] == 80.0
    assert row["traversals_per_s"] == 2000 and row["traversals_per_run_s"] == 4000
    assert ratios["wall_s"] == 20.0 and ratios["run_wall_s_vs_htsim_wall_s"] == 10.0
    assert ratios["critical_path_s_vs_htsim_wall_s"] == 8.0 and ratios["peak_rss"] == 20.0
    assert not ratios["wall_ratio_met"] and not ratios["peak_rss_met"]  # 146.8 MB > 100 MB
    fast = bench.two_process_figures(made_up_two_process_run(bench, wall_s=0.9), htsim_run)
    assert fast["ratios"]["wall_ratio_met"]


def test_only_one_or_two_processes(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench.main(["--processes", "3"])
    assert "--processes" in capsys.readouterr().err


@pytest.mark.integration
def test_the_two_process_child_runs_the_workload_twice_alike(
    bench: ModuleType, tmp_path: Path
) -> None:
    w = Workload("p", 8, "permutation", 64 * 1024)
    runs = [bench.run_two_process_side(w.shape, w.flows(), 1, tmp_path / f"p{i}") for i in range(2)]
    first, second = (r.extra for r in runs)
    assert not (tmp_path / "p0").exists()  # removed on success
    assert first["finished"] and first["switch_traversals"] > 0 and first["windows"] > 0
    assert first["split"] == "tree halves"  # the default on one plane of several T0s
    assert (first["event_log_sha256_a"], first["event_log_sha256_b"]) == (
        second["event_log_sha256_a"],
        second["event_log_sha256_b"],
    )
    assert first["event_log_sha256_a"] != first["event_log_sha256_b"]
    a_kib, b_kib = first["peak_rss_kib"]
    assert runs[0].peak_rss_mib == pytest.approx((a_kib + b_kib) / 1024)
    assert a_kib > 20 * 1024 and b_kib > 20 * 1024
    assert runs[0].wall_s > first["run_wall_s"] > 0
    row = bench.two_process_figures(runs[0], SideRun("htsim", {}, 0.01, 5.0))["row"]
    assert row["launcher_peak_rss_mib"] <= row["peak_rss_mib"]


def test_bytecode_is_cached_for_the_children_unless_asked_not_to(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment's PYTHONDONTWRITEBYTECODE leaves the children's environment (and
    says so) after a warm-up child; with --bytecode-as-environment it stays."""
    runs: list[list[str]] = []

    class Done:
        returncode = 0
        stderr = b""

    def fake_run(argv: list[str], **kwargs: object) -> Done:
        runs.append(argv)
        return Done()

    monkeypatch.setattr(bench.subprocess, "run", fake_run)
    monkeypatch.setenv(bench.NO_BYTECODE_ENV, "1")
    kept = bench.cache_bytecode(True)
    assert kept == {"cached": False, bench.NO_BYTECODE_ENV: "1", "as_environment": True}
    assert runs == [] and bench.os.environ[bench.NO_BYTECODE_ENV] == "1"
    cached = bench.cache_bytecode(False)
    assert cached == {"cached": True, bench.NO_BYTECODE_ENV: "1", "as_environment": False}
    assert bench.NO_BYTECODE_ENV not in bench.os.environ
    assert len(runs) == 1 and runs[0][-1] == bench.WARM_UP


def test_a_failed_warm_up_is_a_specific_error(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Failed:
        returncode = 3
        stderr = b"ModuleNotFoundError: no module named vfabric"

    monkeypatch.setattr(bench.subprocess, "run", lambda argv, **kwargs: Failed())
    monkeypatch.delenv(bench.NO_BYTECODE_ENV, raising=False)
    with pytest.raises(bench.HtsimDiffError, match=r"warm-up run failed .status 3.*vfabric"):
        bench.cache_bytecode(False)


def test_the_report_names_the_interpreter_that_ran(bench: ModuleType) -> None:
    import os
    import platform
    import sys

    said = bench.interpreter()
    assert said["version"] == platform.python_version()
    assert said["executable"] == os.path.realpath(sys.executable)
    assert os.path.isfile(said["executable"])
    assert said["build"] and said["compiler"] == platform.python_compiler()
