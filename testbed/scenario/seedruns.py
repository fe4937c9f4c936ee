"""``run`` / ``compare --seeds``: one run (or MRC-vs-RoCE comparison) per seed in worker
processes, and what it leaves in ``results/<scenario>/``: the first seed's full results
(as a single run leaves them), every seed's ``result.json`` under ``seeds/``, and
``seeds.json`` with each check's distribution (:mod:`testbed.scenario.seeds`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from testbed.scenario.load import load
from testbed.scenario.model import Scenario
from testbed.scenario.results import Check, RunResult
from testbed.scenario.run_options import RunOptions
from testbed.scenario.runner import Comparison, compare, run_checked
from testbed.scenario.seeds import Distribution, distributions, map_seeds, seed_options
from testbed.scenario.virtual import Variant
from testbed.scenario.write import RESULT_JSON, write_comparison, write_run

SEEDS_JSON = "seeds.json"
ROCE_PREFIX = "RoCE: "


@dataclass
class SeedRun:
    """One seed's runs: the MRC run, the RoCE run when compared (else None) and the checks
    between the two."""

    seed: int
    mrc: RunResult
    roce: RunResult | None = None
    cross: list[Check] = field(default_factory=list)  # MRC-vs-RoCE checks

    def checks(self) -> list[Check]:
        """Every check of the seed; the RoCE run's named with :data:`ROCE_PREFIX`."""
        roce = [] if self.roce is None else self.roce.checks
        return [
            *self.mrc.checks,
            *(Check(**{**vars(c), "name": ROCE_PREFIX + c.name}) for c in roce),
            *self.cross,
        ]

    @property
    def ok(self) -> bool:
        return all(c.accepted for c in self.checks())


@dataclass
class SeedSweep:
    """A scenario run over several seeds: every seed's runs, each check's distribution over the
    seeds, and whether RoCE was run beside MRC."""

    scenario: Scenario
    runs: list[SeedRun]
    distributions: list[Distribution]
    compared: bool

    @property
    def ok(self) -> bool:
        return all(d.accepted for d in self.distributions)

    def seed_lines(self) -> list[tuple[int, str]]:
        out = []
        for r in self.runs:
            failed = [c.name for c in r.checks() if not c.accepted]
            verdict = "PASS" if not failed else "FAIL (" + "; ".join(failed) + ")"
            done = r.mrc.completion_ns()
            out.append(
                (
                    r.seed,
                    f"{verdict}; done at "
                    + (f"{done / 1000:g} us" if done is not None else "never")
                    + (
                        f"; event-log sha256 {r.mrc.event_log_sha256}"
                        if r.mrc.event_log_sha256
                        else ""
                    ),
                )
            )
        return out


def one_seed(source: str, options: RunOptions, compared: bool, seed: int) -> SeedRun:
    """The run (or comparison) of the scenario at ``source`` on ``seed`` (a worker's task)."""
    scenario = load(source)
    opts = seed_options(options, seed)
    if compared:
        c = compare(scenario, opts)
        return SeedRun(seed, c.mrc, c.roce, c.checks)
    return SeedRun(seed, run_checked(scenario, Variant(), opts)[0])


def run_seeds(
    source: str, seeds: list[int], options: RunOptions, jobs: int, *, compared: bool
) -> SeedSweep:
    runs = map_seeds(partial(one_seed, source, options, compared), seeds, jobs)
    return SeedSweep(
        load(source), runs, distributions([(r.seed, r.checks()) for r in runs]), compared
    )


def write_seeds(scenario: Scenario, sweep: SeedSweep, out_dir: Path) -> dict[str, Any]:
    """The first seed's results as a single run leaves them, every seed's JSON under
    ``seeds/``, and ``seeds.json``; returns what ``seeds.json`` holds."""
    out_dir.mkdir(parents=True, exist_ok=True)
    first = sweep.runs[0]
    if sweep.compared and first.roce is not None:
        write_comparison(Comparison(scenario, first.mrc, first.roce, first.cross), out_dir)
    else:
        write_run(scenario, first.mrc, out_dir)
    folder = out_dir / "seeds"
    folder.mkdir(exist_ok=True)
    for r in sweep.runs:
        for run in (r.mrc, r.roce):
            if run is not None:
                name = f"seed-{r.seed}-{run.variant}-{RESULT_JSON}"
                (folder / name).write_text(json.dumps(run.to_json(), indent=1) + "\n", "utf-8")
    data = {
        "scenario": scenario.name,
        "expected": scenario.expected,
        "ok": sweep.ok,
        "seeds": [r.seed for r in sweep.runs],
        "per_seed": [
            {
                "seed": r.seed,
                "ok": r.ok,
                "completion_ns": r.mrc.completion_ns(),
                "event_log_sha256": r.mrc.event_log_sha256,
            }
            for r in sweep.runs
        ],
        "checks": [d.to_json() for d in sweep.distributions],
    }
    (out_dir / SEEDS_JSON).write_text(json.dumps(data, indent=1) + "\n", "utf-8")
    return data
