"""A scenario over many seeds (``--seeds 1-16``): one run per seed, in parallel processes
where the machine has cores, and each assertion as a distribution (median / worst /
passes) over the seeds (docs/scenarios.md, "Seeds").

A run is deterministic for its seed, so a claim that holds on seed 1 may still fail on
seed 3: the bundled scenarios' assertions must hold on every seed of
:data:`BUNDLED_SEEDS` (or be marked ``not_reproduced``).
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from testbed.modes import mode
from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.model import Scenario
from testbed.scenario.results import Check, RunResult
from testbed.scenario.run_options import RunOptions
from testbed.scenario.units import format_time_ns as fmt

BUNDLED_SEEDS = range(1, 17)  # the seeds every bundled assertion holds on
# A scenario on more NICs than HEAVY_NICS (paper-8plane's permutations, the 64-NIC
# collective) takes minutes per run on a 2-core machine: scripts/results-doc runs it on
# HEAVY_SEEDS only, and tests/failover on every seed only with -m slow.
HEAVY_NICS = 16
HEAVY_SEEDS = range(1, 5)
MAX_SEEDS = 1000  # a range longer than this is a typo


def is_heavy(scenario: Scenario) -> bool:
    """A scenario on a loaded fabric (minutes per run): more than :data:`HEAVY_NICS` NICs."""
    return scenario.topology.nic_count > HEAVY_NICS


def parse_seeds(text: str) -> list[int]:
    """``"1-16"``, ``"3"`` or ``"1,4,7-9"`` -> the seeds, in order, without repeats."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        try:
            first = int(low)
            last = int(high) if dash else first
        except ValueError:
            raise ScenarioRunError(
                f"--seeds: expected seeds like '1-16' or '1,3,5', got {text!r}"
            ) from None
        if first < 0 or last < first:
            raise ScenarioRunError(
                f"--seeds: {part!r} is not a range of seeds (0 or more, low-high)"
            )
        seeds += [s for s in range(first, last + 1) if s not in seeds]
        if len(seeds) > MAX_SEEDS:
            raise ScenarioRunError(f"--seeds: more than {MAX_SEEDS} seeds in {text!r}")
    return seeds


def default_jobs(count: int, options: RunOptions) -> int:
    """Processes for ``count`` seeds: one per core (the process fabric: one at a time, as
    its runs share ports and namespaces)."""
    if mode(options.mode).standing:
        return 1
    return max(1, min(count, os.cpu_count() or 1))


Task = Callable[[int], Any]


def map_seeds(task: Task, seeds: Sequence[int], jobs: int) -> list[Any]:
    """``task(seed)`` for every seed, in ``jobs`` processes (in this one when 1); results
    in the order of ``seeds``. ``task`` must be picklable (a module-level function or a
    :func:`functools.partial` of one)."""
    if jobs <= 1 or len(seeds) <= 1:
        return [task(seed) for seed in seeds]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(task, seeds))


def seed_options(options: RunOptions, seed: int) -> RunOptions:
    return replace(options, seed=seed, progress=False)


# ------------------------------------------------------------------ distributions


@dataclass
class Distribution:
    """One check over the seeds: its figure per seed and how many seeds it held on."""

    name: str
    assertion: str
    expected: str
    unit: str
    worse: str
    not_reproduced: str | None
    seeds: list[int] = field(default_factory=list)
    values: list[float | None] = field(default_factory=list)
    oks: list[bool] = field(default_factory=list)

    @property
    def passes(self) -> int:
        return sum(self.oks)

    @property
    def median(self) -> float | None:
        known = [v for v in self.values if v is not None]
        return statistics.median(known) if known else None

    @property
    def worst(self) -> float | None:
        """The worst figure (None counts as worst of all: nothing was measured)."""
        known = [v for v in self.values if v is not None]
        if not known or len(known) < len(self.values) or not self.worse:
            return None
        return max(known) if self.worse == "high" else min(known)

    @property
    def worst_seed(self) -> int | None:
        """The seed of the worst figure (of the first failure when there is no figure)."""
        worst = self.worst
        if worst is not None:
            return next(s for s, v in zip(self.seeds, self.values) if v == worst)
        failing = [s for s, ok in zip(self.seeds, self.oks) if not ok]
        return failing[0] if failing else None

    @property
    def accepted(self) -> bool:
        """Held on every seed, or a claim marked not reproduced."""
        return self.passes == len(self.oks) or self.not_reproduced is not None

    def summary(self) -> str:
        """``median 12.3 us, worst 20.6 us (seed 5), 16/16 pass``."""
        parts = []
        if self.median is not None:
            parts.append(f"median {format_value(self.median, self.unit)}")
        if self.worse:
            worst = self.worst
            text = (
                "nothing measured on some seed" if worst is None else format_value(worst, self.unit)
            )
            seed = self.worst_seed
            parts.append(f"worst {text}" + (f" (seed {seed})" if seed is not None else ""))
        elif self.values and all(v is not None for v in self.values):
            known = [v for v in self.values if v is not None]
            parts.append(
                f"range {format_value(min(known), self.unit)} .. "
                f"{format_value(max(known), self.unit)}"
            )
        parts.append(f"{self.passes}/{len(self.oks)} pass")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "assertion": self.assertion,
            "expected": self.expected,
            "not_reproduced": self.not_reproduced,
            "unit": self.unit,
            "seeds": self.seeds,
            "values": self.values,
            "ok": self.oks,
            "median": self.median,
            "worst": self.worst,
            "passes": self.passes,
            "summary": self.summary(),
        }


def distributions(per_seed: Sequence[tuple[int, Sequence[Check]]]) -> list[Distribution]:
    """The checks of runs on several seeds, grouped by check name, in first-seen order."""
    out: dict[str, Distribution] = {}
    for seed, checks in per_seed:
        for c in checks:
            d = out.get(c.name)
            if d is None:
                d = out[c.name] = Distribution(
                    c.name, c.assertion, c.expected, c.unit, c.worse, c.not_reproduced
                )
            d.seeds.append(seed)
            d.values.append(None if c.value is None else float(c.value))
            d.oks.append(c.ok)
    return list(out.values())


def format_value(value: float, unit: str) -> str:
    if unit == "ns":
        return fmt(round(value))
    if unit == "fraction":
        return f"{value:.1%}"
    if unit == "x":
        return "inf" if value == float("inf") else f"{value:.2f} x"
    if unit == "count":
        return f"{value:g}"
    return f"{value:g}"


def runs_ok(runs: Sequence[RunResult]) -> bool:
    return all(run.ok for run in runs)
