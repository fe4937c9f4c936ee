"""benchmarks/parallel_planes.py: the children's paths and the comparison of both paths."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from benchmark_scripts import load_benchmark


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("parallel_planes")


def test_a_child_on_the_pure_path_forces_it_and_one_on_the_compiled_path_does_not(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(bench.PURE_ENV, "1")
    assert bench.path_env("pure")[bench.PURE_ENV] == "1"
    assert bench.PURE_ENV not in bench.path_env("compiled")


def case(sha: str, sha_a: str, sha_b: str, one_wall: float, two_wall: float) -> dict[str, Any]:
    return {
        "one": {"sha": [sha], "wall_s": one_wall, "cpu_s": one_wall},
        "two": {
            "sha_a": [sha_a],
            "sha_b": [sha_b],
            "measured": {"two_wall_s": two_wall},
            "estimated": {"critical_path_s": two_wall * 0.9},
        },
    }


def test_both_paths_compared_by_their_logs_and_against_the_pure_one_process_run(
    bench: ModuleType,
) -> None:
    pure = case("one", "a", "b", 2.0, 1.2)
    compiled = case("one", "a", "b", 0.8, 0.5)
    out = bench.compare_paths({"pure": pure, "compiled": compiled})
    assert out["same_one_process_log"] and out["same_two_process_logs"]
    assert out["compiled_one_vs_pure_one"] == 2.5 and out["compiled_two_vs_pure_one"] == 4.0
    assert out["compiled_two_vs_pure_one_estimate"] == pytest.approx(2.0 / 0.45, abs=1e-3)
    moved = bench.compare_paths({"pure": pure, "compiled": case("one", "a", "x", 0.8, 0.5)})
    assert moved["same_one_process_log"] and not moved["same_two_process_logs"]
