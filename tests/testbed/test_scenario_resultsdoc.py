"""docs/results.md rendering from scenario summaries (the runs themselves: tests/failover)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testbed.scenario.load import bundled_names
from testbed.scenario.results import Check
from testbed.scenario.resultsdoc import main, render, scenario_sha256
from testbed.scenario.seeds import distributions


def _checks(*per_seed: list[Check]) -> list[dict]:
    return [d.to_json() for d in distributions(list(enumerate(per_seed, 1)))]


def test_render_shows_claims_seed_distributions_and_what_is_not_reproduced() -> None:
    def seed(repath: int, goodput: float) -> list[Check]:
        return [
            Check("byte-exact delivery", True, "all", "all", "assertions.byte_exact"),
            Check(
                "repath after event 0 (T1 down)",
                repath <= 50_000,
                "<= 50 us",
                f"worst {repath} ns",
                "assertions.repath_max",
                value=repath,
                unit="ns",
                worse="high",
            ),
            Check(
                "goodput 60 us..120 us after event 0 (T1 down)",
                goodput >= 0.97,
                ">= 97% of the same window without the timeline",
                f"{goodput:.1%}",
                "assertions.goodput[0]",
                "measured about 90 %: proportional spraying",
                value=goodput,
                unit="fraction",
                worse="low",
            ),
        ]

    summaries = [
        {
            "scenario": "t1-down",
            "paper": "T1 down: no steady-state loss.",
            "ok": True,
            "expected": "not reproduced",
            "seeds": [1, 2, 3],
            "not_reproduced": {"assertions.goodput[0]": "measured about 90 %: why"},
            "checks": _checks(seed(21_000, 0.9), seed(18_000, 0.91), seed(30_000, 0.88)),
            "mrc_roce_completion_ratio": float("inf"),
            "controls": [
                {
                    "name": "ev-retirement-off",
                    "description": "d",
                    "caught_by": ["assertions.repath_max"],
                    "caught": False,
                    "detail": "still hold: assertions.repath_max",
                }
            ],
        },
        {
            "scenario": "pair-failures",
            "paper": "",
            "ok": False,
            "seeds": [1],
            "checks": [],
            "cases": 120,
            "cases_ok": 119,
            "cases_with_path": 116,
            "failure_ns": [1_000_000, 12_600_000],
            "controls": [],
        },
    ]
    text = render(summaries)
    assert "on seeds 1-3 (t1-down); 1 (pair-failures)." in text  # a sweep: its first seed
    assert (
        "| [t1-down](#t1-down) | T1 down: no steady-state loss. | 1 not reproduced, the others "
        "hold | repath after event 0: 30 us; goodput 60 us..120 us after event 0: 88.0% "
        "(not reproduced); RoCE did not complete |" in text
    )
    assert "| repath after event 0 (T1 down) | <= 50 us | 21 us | 30 us | 3/3 | holds |" in text
    assert "| 90.0% | 88.0% | 0/3 | **not reproduced** |" in text
    assert "- Expected: not reproduced (1 claim(s) marked)" in text
    assert "- Not reproduced (`assertions.goodput[0]`): measured about 90 %: why" in text
    assert "| [pair-failures](#pair-failures) | (beyond the paper) | **FAIL** | 119 of 120" in text
    assert "ev-retirement-off (d): NOT CAUGHT by assertions.repath_max: still hold" in text
    assert "119 of 120 cases pass (116 leave a path" in text
    assert "after 1 ms to 12.6 ms" in text
    assert "Scaled down: small" in text  # from the bundled scenario file


# ------------------------------------------------------------------ --keep and results.json


def _saved(tmp_path: Path, **override: dict) -> Path:
    """A results.json with a minimal (sweep-shaped) summary of every bundled scenario."""
    scenarios = {
        name: {
            "scenario": name,
            "paper": "",
            "ok": True,
            "seeds": [1],
            "scenario_sha256": scenario_sha256(name),
            "checks": [],
            "cases": 3,
            "cases_ok": 3,
            "cases_with_path": 3,
            "failure_ns": None,
            "controls": [],
        }
        for name in bundled_names()
    }
    for name, changes in override.items():
        scenarios[name] = scenarios[name] | changes
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"scenarios": scenarios}), "utf-8")
    return path


def test_keep_renders_every_scenario_from_results_json_without_running(tmp_path: Path) -> None:
    _saved(tmp_path)
    out = tmp_path / "results.md"
    assert main(["-o", str(out), "--keep"]) == 0
    text = out.read_text("utf-8")
    for name in bundled_names():
        assert f"| [{name}](#{name}) |" in text
    saved = json.loads((tmp_path / "results.json").read_text("utf-8"))["scenarios"]
    assert sorted(saved) == sorted(bundled_names())


def test_keep_refuses_a_summary_whose_scenario_file_changed(tmp_path: Path) -> None:
    _saved(tmp_path, **{"t1-down": {"scenario_sha256": "0" * 64}})
    with pytest.raises(SystemExit, match=r"no current summary in .*results.json for t1-down"):
        main(["-o", str(tmp_path / "results.md"), "--keep"])
    assert not (tmp_path / "results.md").exists()


def test_keep_refuses_a_missing_or_malformed_results_json(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    with pytest.raises(SystemExit, match="does not exist; run without --keep"):
        main(["-o", str(out), "--keep"])
    (tmp_path / "results.json").write_text('{"scenarios": [1, 2]}', "utf-8")
    with pytest.raises(SystemExit, match=r"is not a results\.json \('scenarios' is not a mapping"):
        main(["-o", str(out), "--keep"])
    (tmp_path / "results.json").write_text("{not json", "utf-8")
    with pytest.raises(SystemExit, match=r"is not a results\.json"):
        main(["-o", str(out), "--keep"])


def test_unknown_scenario_names_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--keep", "no-such-scenario"])
    assert exc.value.code == 2
    assert "not bundled scenarios: no-such-scenario" in capsys.readouterr().err
