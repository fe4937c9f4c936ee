"""What one run of a scenario produced, fabric-independent, and its JSON form.

The schema is documented in docs/scenarios.md ("Results JSON"); ``SCHEMA`` names its
version. Goodput series are Gb/s per bin of ``bin_ns``, keyed ``total``, ``plane:<p>``,
``t1:<switch>`` and ``link:<a>--<b>`` (whichever the fabric reports).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA = "mrc-testbed/scenario-result/1"
# result.json records at most this many bins per goodput series (about a plot's width in
# pixels): a longer run's series are merged into coarser bins, each the mean of a whole
# number of measured ones (docs/scenarios.md, "Results JSON"). A RoCE run waiting for its
# 67 ms ACK timeouts would otherwise record 10 us bins for 134 ms in every series (~7 MB).
RECORDED_BINS_MAX = 1000


@dataclass
class TransferResult:
    """One transfer of a run: what was sent (bytes, transport, start), when it completed
    (None: it did not), what arrived and was verified, why it failed (None: it did not) and
    its retransmissions, NACKs and timeouts. Times in ns."""

    name: str
    traffic: str
    src: str
    dst: str
    transport: str
    nbytes: int
    start_ns: int
    completion_ns: int | None
    bytes_delivered: int
    bytes_verified: int
    failure: str | None
    message_completion_ns: list[int | None] = field(default_factory=list)
    retransmitted_bytes: int = 0
    nacks: int = 0
    failed_at_ns: int | None = None  # when the transfer was declared failed
    timeouts: int = 0  # retransmission timeouts of its sender

    @property
    def intact(self) -> bool:
        return self.completion_ns is not None and self.bytes_verified == self.nbytes

    @property
    def duration_ns(self) -> int | None:
        return None if self.completion_ns is None else self.completion_ns - self.start_ns

    def message_latencies_ns(self) -> list[int]:
        return [t - self.start_ns for t in self.message_completion_ns if t is not None]


@dataclass
class EventResult:
    """One timeline event of a run: its index, kind, time in ns, description, target and
    parameters, and the repath time in ns of each connection it affected (None: none measured)."""

    index: int
    kind: str
    at_ns: int
    description: str
    target: Any
    params: dict[str, Any] = field(default_factory=dict)
    repath_ns: list[int | None] = field(default_factory=list)  # per affected connection


NOT_REPRODUCED = "not reproduced"


@dataclass
class Check:
    """One assertion evaluated on a run: what was expected and what was measured.

    ``assertion`` names the assertion in the scenario file (``assertions.goodput[1]``,
    ``roce.traffic_goodput[0]``): what a negative control's ``caught_by`` and the
    scenario's ``not_reproduced`` refer to. ``not_reproduced`` holds the scenario's note
    when the claim is marked as not reproduced by the model: a failure of such a check is
    expected and reported as "not reproduced", not as a failed run.
    """

    name: str
    ok: bool
    expected: str
    measured: str
    assertion: str = ""
    not_reproduced: str | None = None
    # the measured figure as a number, for distributions over seeds: ``unit`` is "ns",
    # "fraction", "count" or "x" (a ratio); ``worse`` says which way is worse ("high",
    # "low" or "" when the check has bounds on both sides or no number)
    value: float | None = None
    unit: str = ""
    worse: str = ""

    @property
    def accepted(self) -> bool:
        """Whether the run's verdict can stand with this check: it holds, or it is a claim
        marked as not reproduced."""
        return self.ok or self.not_reproduced is not None

    @property
    def verdict(self) -> str:
        if self.not_reproduced is None:
            return "ok" if self.ok else "FAIL"
        return "holds (marked not reproduced)" if self.ok else NOT_REPRODUCED


@dataclass
class RunResult:
    """Everything one run of a scenario produced: its transfers and events, goodput per bin,
    counters, EV changes, the event log's hash (None: none kept), the checks, the files
    written and what ran it."""

    scenario: str
    variant: str  # "mrc", "roce", "baseline", "control:<name>", "case:<...>"
    mode: str
    transport: str  # what the traffic used ("mrc", "roce" or "as-written")
    seed: int
    topology: str
    end_ns: int
    wall_seconds: float
    transfers: list[TransferResult]
    events: list[EventResult]
    bin_ns: int
    goodput: dict[str, list[float]]  # Gb/s per bin
    counters: dict[str, Any]
    ev_changes: list[dict[str, Any]]  # t_ns, nic, qpn, plane, ev, from, to, reason
    event_log_sha256: str | None = None
    checks: list[Check] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # what the run wrote, by role
    # what ran: clock ("virtual" | "wall"); on the process fabric also mode, target and
    # its version, tdf, the load average before and after (docs/scenarios.md)
    fabric: dict[str, Any] = field(default_factory=lambda: {"clock": "virtual"})

    @property
    def ok(self) -> bool:
        """Every check holds, but the claims the scenario marks as not reproduced."""
        return all(c.accepted for c in self.checks)

    def failed(self, assertion: str) -> bool:
        """Whether a check of ``assertion`` (a path such as ``assertions.repath_max``) failed."""
        return any(not c.ok and c.assertion == assertion for c in self.checks)

    # -- measurements used by checks and reports

    def completion_ns(self) -> int | None:
        """When the last transfer completed (None if any did not)."""
        ends = [t.completion_ns for t in self.transfers]
        if not ends or any(e is None for e in ends):
            return None
        return max(e for e in ends if e is not None)

    def message_percentiles_ns(self) -> tuple[float | None, float | None]:
        latencies = sorted(x for t in self.transfers for x in t.message_latencies_ns())
        if not latencies:
            return None, None
        return statistics.median(latencies), _percentile(latencies, 0.99)

    def retransmitted_bytes(self) -> int:
        return sum(t.retransmitted_bytes for t in self.transfers)

    def goodput_gbps(self, start_ns: int, end_ns: int, key: str = "total") -> float:
        """Mean goodput of series ``key`` over ``[start_ns, end_ns)`` (bins cut pro rata)."""
        series = self.goodput.get(key, [])
        if end_ns <= start_ns or not series:
            return 0.0
        total = 0.0
        for i, value in enumerate(series):
            lo, hi = i * self.bin_ns, (i + 1) * self.bin_ns
            overlap = min(hi, end_ns) - max(lo, start_ns)
            if overlap > 0:
                total += value * overlap
        return total / (end_ns - start_ns)

    def to_json(self) -> dict[str, Any]:
        p50, p99 = self.message_percentiles_ns()
        return {
            "schema": SCHEMA,
            "scenario": self.scenario,
            "variant": self.variant,
            "mode": self.mode,
            "transport": self.transport,
            "seed": self.seed,
            "topology": self.topology,
            "ok": self.ok,
            "end_ns": self.end_ns,
            "wall_seconds": round(self.wall_seconds, 3),
            "event_log_sha256": self.event_log_sha256,
            "summary": {
                "completion_ns": self.completion_ns(),
                "bytes": sum(t.nbytes for t in self.transfers),
                "bytes_delivered": sum(t.bytes_delivered for t in self.transfers),
                "bytes_verified": sum(t.bytes_verified for t in self.transfers),
                "retransmitted_bytes": self.retransmitted_bytes(),
                "message_p50_ns": p50,
                "message_p99_ns": p99,
            },
            "transfers": [
                {**asdict(t), "intact": t.intact, "duration_ns": t.duration_ns}
                for t in self.transfers
            ],
            "events": [asdict(e) for e in self.events],
            "checks": [asdict(c) for c in self.checks],
            "counters": self.counters,
            "ev_changes": self.ev_changes,
            "goodput": recorded_goodput(self.bin_ns, self.goodput),
            "files": self.files,
            "fabric": self.fabric,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunResult:
        transfers = []
        for raw in data["transfers"]:
            raw = {k: v for k, v in raw.items() if k not in ("intact", "duration_ns")}
            transfers.append(TransferResult(**raw))
        return cls(
            scenario=data["scenario"],
            variant=data["variant"],
            mode=data["mode"],
            transport=data["transport"],
            seed=data["seed"],
            topology=data["topology"],
            end_ns=data["end_ns"],
            wall_seconds=data["wall_seconds"],
            transfers=transfers,
            events=[EventResult(**e) for e in data["events"]],
            bin_ns=data["goodput"]["bin_ns"],
            goodput=data["goodput"]["series"],
            counters=data["counters"],
            ev_changes=data["ev_changes"],
            event_log_sha256=data.get("event_log_sha256"),
            checks=[Check(**c) for c in data["checks"]],
            files=data.get("files", {}),
            fabric=data.get("fabric", {"clock": "virtual"}),
        )


def recorded_goodput(bin_ns: int, series: dict[str, list[float]]) -> dict[str, Any]:
    """The goodput block of result.json: every series with at most
    :data:`RECORDED_BINS_MAX` bins. Bins are merged ``factor`` at a time (the recorded
    ``bin_ns`` is ``factor`` measured bins; ``measured_bin_ns`` is the measured one), each
    merged bin the sum of its measured bins over ``factor`` (a missing tail counts as
    zero), so every series' bytes, ``sum(values) * bin_ns``, are exactly the measured ones."""
    longest = max((len(v) for v in series.values()), default=0)
    factor = max(1, math.ceil(longest / RECORDED_BINS_MAX))
    if factor == 1:
        return {"bin_ns": bin_ns, "unit": "Gb/s", "series": series}
    merged = {
        key: [sum(values[i : i + factor]) / factor for i in range(0, len(values), factor)]
        for key, values in series.items()
    }
    return {
        "bin_ns": bin_ns * factor,
        "measured_bin_ns": bin_ns,
        "unit": "Gb/s",
        "series": merged,
    }


def _percentile(sorted_values: list[int], q: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, min(len(sorted_values), math.ceil(q * len(sorted_values))))
    return float(sorted_values[rank - 1])
