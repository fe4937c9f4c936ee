"""Failover figures of every bundled scenario on the virtual fabric (docs/scenarios.md).

Per scenario prints: the worst repath time measured (ns), the goodput kept (the fault-free
run's completion time over the faulty run's: the same bytes, so the goodput ratio), the
RoCE/MRC completion-time ratio (scenarios that compare with RoCE), whether the
assertions held, and the wall seconds the scenario took (its runs: main, fault-free
baseline and RoCE; negative controls are not run here). Prints one JSON document.

    python benchmarks/failover.py [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from testbed.scenario.load import bundled_names
from testbed.scenario.resultsdoc import summarise

FIELDS = (
    "ok",
    "repath_ns_max",
    "repaths_measured",
    "goodput_fraction_kept",
    "mrc_roce_completion_ratio",
    "completion_ns",
    "baseline_completion_ns",
    "roce_completion_ns",
    "cases",
    "cases_ok",
    "failure_ns",
    "event_log_sha256",
    "wall_seconds",
)


def _finite(value: object) -> object:
    """JSON has no infinity: a RoCE run that never completed is reported as such."""
    return "RoCE did not complete" if value == float("inf") else value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="scenarios (default: every bundled one)")
    args = parser.parse_args()
    started = time.perf_counter()
    out = {}
    for name in args.names or bundled_names():
        summary = summarise(name, controls=False)
        out[name] = {key: _finite(summary[key]) for key in FIELDS if key in summary}
    report = {"scenarios": out, "total_wall_seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
