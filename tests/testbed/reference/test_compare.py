"""The comparison and the targets of the htsim differential, on made-up runs (no process
is started: the runner is a stand-in)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from testbed.reference.compare import compare, percentile, ratio, summarize
from testbed.reference.exceptions import HtsimDiffError, WorkloadError
from testbed.reference.results import FlowResult, SideRun
from testbed.reference.targets import TARGETS, load_not_reproduced, targets_for
from testbed.reference.workload import MIB, Flow, Workload


def fake_runner(fcts: dict[str, dict[int, float]], rtx: dict[str, int], calls: list[str]):  # type: ignore[no-untyped-def]
    """Per side: the completion of each flow id (the victim alone gets ``alone``)."""

    def run(side: str, workload: Workload, flows: Sequence[Flow], directory: Path) -> SideRun:
        calls.append(f"{side}:{len(flows)}")
        alone = len(flows) == 1 and workload.victim
        out = {
            f.id: FlowResult(
                f.id,
                fcts[side]["alone" if alone else f.id],  # type: ignore[index]
                rtx[side],
                rtx[side] * 4000,
                rtx[side],
                rtx[side],
            )
            for f in flows
        }
        extra = (
            {"summary": {}}
            if side == "htsim"
            else {
                "run_wall_s": 2.0,
                "switch_traversals": 1000,
                "traversals_per_s": 500,
                "event_log_sha256": "ab",
            }
        )
        return SideRun(side, out, 4.0 if side == "vfabric" else 0.5, 100.0, extra)

    return run


def test_percentile_and_summary() -> None:
    assert percentile([5, 1, 3, 2, 4], 50) == 3
    assert percentile(list(range(1, 101)), 99) == 99
    assert percentile(list(range(1, 33)), 99) == 32  # nearest rank: the max of 32 flows
    flows = [FlowResult(i, float(i), 1, 100, 2, 3) for i in range(1, 5)]
    s = summarize(flows)
    assert (s["median_fct_us"], s["max_fct_us"], s["retransmitted_bytes"], s["nacks"]) == (
        2.5,
        4.0,
        400,
        12,
    )
    assert ratio(0, 0) == 1.0 and ratio(5, 0) is None and ratio(3, 2) == 1.5


def test_permutation_comparison_and_targets(tmp_path: Path) -> None:
    w = Workload("perm-8", 8, "permutation", 4 * MIB)
    fcts = {
        "htsim": {i: 100.0 for i in range(1, 9)},
        "vfabric": {**{i: 104.0 for i in range(1, 8)}, 8: 110.0},
    }
    calls: list[str] = []
    out = compare(w, work_dir=tmp_path, runner=fake_runner(fcts, {"htsim": 0, "vfabric": 2}, calls))
    assert calls == ["htsim:8", "vfabric:8"]
    assert out["ratios"]["median_fct_ratio"] == 1.04
    assert out["ratios"]["p99_fct_ratio"] == 1.1
    assert out["ratios"]["retransmitted_bytes_ratio"] is None  # against none
    assert out["ratios"]["wall_s_ratio"] == 8.0
    assert out["vfabric"]["traversals_per_s"] == 500
    checks = {c["id"]: c for c in out["targets"]}
    assert set(checks) == {"permutation_median_fct", "permutation_p99_fct"}
    assert checks["permutation_median_fct"]["met"] is True
    assert checks["permutation_p99_fct"]["met"] is False
    assert checks["permutation_p99_fct"]["as_expected"] is False  # not in the list: a surprise
    listed = {"perm-8": {"permutation_p99_fct": "measured 1.10: because"}}
    again = compare(
        w,
        work_dir=tmp_path,
        runner=fake_runner(fcts, {"htsim": 0, "vfabric": 2}, []),
        not_reproduced=listed,
    )
    p99 = {c["id"]: c for c in again["targets"]}["permutation_p99_fct"]
    assert (p99["expected"], p99["as_expected"]) == ("not reproduced", True)
    assert list(tmp_path.iterdir()) == []  # nothing left behind by successful runs


def test_a_missing_work_directory_is_made_and_one_that_cannot_be_is_an_error(
    tmp_path: Path,
) -> None:
    w = Workload("perm-8", 8, "permutation", 4 * MIB)
    fcts = {side: {i: 100.0 for i in range(1, 9)} for side in ("htsim", "vfabric")}
    runner = fake_runner(fcts, {"htsim": 0, "vfabric": 0}, [])
    compare(w, work_dir=tmp_path / "new" / "keep", runner=runner)
    assert (tmp_path / "new" / "keep").is_dir()
    (tmp_path / "file").write_text("")
    with pytest.raises(HtsimDiffError, match=r"work directory .*file/keep: cannot create it"):
        compare(w, work_dir=tmp_path / "file" / "keep", runner=runner)


def test_incast_with_victim(tmp_path: Path) -> None:
    w = Workload("inc", 32, "incast", 2 * MIB, fan_in=7, victim=True)
    fcts = {
        "htsim": {**{i: 1000.0 for i in range(1, 8)}, 8: 351.0, "alone": 350.0},
        "vfabric": {**{i: 1040.0 for i in range(1, 8)}, 8: 385.0, "alone": 350.0},
    }
    calls: list[str] = []
    out = compare(
        w,
        work_dir=tmp_path,
        runner=fake_runner(fcts, {"htsim": 10, "vfabric": 16}, calls),
        per_flow=True,
        not_reproduced={},
    )
    assert calls == ["htsim:8", "vfabric:8", "htsim:1", "vfabric:1"]
    assert out["htsim"]["flows"] == 7  # the incast's flows; the victim is reported apart
    assert out["victim"]["vfabric"]["slowdown"] == 0.1
    assert out["victim"]["htsim"]["slowdown"] == round(351 / 350 - 1, 4)
    checks = {c["id"]: c["met"] for c in out["targets"]}
    assert checks == {
        "victim_slowdown": False,
        "incast_retransmitted_bytes": False,  # 1.6 x
        "incast_completion": True,  # 1.04
    }
    assert len(out["per_flow"]) == 8 and out["per_flow"][7]["role"] == "victim"


def test_targets_apply_by_kind() -> None:
    assert [t.id for t in targets_for("all_to_all", False)] == []
    assert len(targets_for("incast", True)) == 3 and len(targets_for("incast", False)) == 2
    within = next(t for t in TARGETS if t.id == "incast_completion")
    assert within.met(0.95) and within.met(1.05) and not within.met(1.06)
    assert not within.met(None)


def test_not_reproduced_list() -> None:
    assert isinstance(load_not_reproduced(), dict)  # the shipped list parses
    good = load_not_reproduced("w:\n  victim_slowdown: 'measured 5 %: reasons'\n")
    assert good == {"w": {"victim_slowdown": "measured 5 %: reasons"}}
    for text, words in [
        ("- a\n", "expected a mapping of workload names"),
        ("w: 3\n", "expected a mapping of target ids"),
        ("w:\n  fastness: x\n", "unknown target"),
        ("w:\n  victim_slowdown: ''\n", "needs the measured value and reason"),
        ("w:\n  victim_slowdown: a: b\n", "not valid YAML"),
        ("w:\n  victim_slowdown: x\n  victim_slowdown: y\n", "duplicate key"),
    ]:
        with pytest.raises(WorkloadError, match=words):
            load_not_reproduced(text)
