"""docs/results.md rendering from scenario summaries (the runs themselves: tests/failover)."""

from __future__ import annotations

from testbed.scenario.resultsdoc import render


def test_render_puts_the_paper_beside_the_measurement() -> None:
    summaries = [
        {
            "scenario": "t1-down",
            "paper": "T1 down: no steady-state loss.",
            "ok": True,
            "checks": [
                {"name": "byte-exact delivery", "ok": True, "measured": "all", "expected": "all"},
                {
                    "name": "repath time",
                    "ok": True,
                    "measured": "worst 21 us",
                    "expected": "<= 50 us",
                },
            ],
            "mrc_roce_completion_ratio": float("inf"),
            "controls": [
                {"name": "ev-retirement-off", "description": "d", "caught": False, "detail": ""}
            ],
        },
        {
            "scenario": "pair-failures",
            "paper": "",
            "ok": False,
            "checks": [],
            "cases": 120,
            "cases_ok": 119,
            "cases_with_path": 116,
            "failure_ns": [1_000_000, 12_600_000],
            "controls": [],
        },
    ]
    text = render(summaries)
    assert (
        "| [t1-down](#t1-down) | T1 down: no steady-state loss. | repath time: worst 21 us; "
        "RoCE did not complete | hold |" in text
    )
    assert "| [pair-failures](#pair-failures) | (beyond the paper) | 119 of 120" in text
    assert "| FAIL |" in text
    assert "ev-retirement-off (d): NOT CAUGHT" in text
    assert "119 of 120 cases pass (116 leave a path" in text
    assert "after 1 ms to 12.6 ms" in text
    assert "Scaled down: small" in text  # from the bundled scenario file
    assert "Where we differ: " in text
