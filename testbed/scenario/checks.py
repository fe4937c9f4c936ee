"""A scenario's assertions evaluated on a run (docs/scenarios.md, "Assertions").

Every check states what it expected and what it measured, so a failing run says why
in one line per check; ``evaluate`` never raises for a failed assertion.
"""

from __future__ import annotations

import statistics
from dataclasses import replace

from testbed.scenario.model import (
    Assertions,
    Flow,
    GoodputCheck,
    LatencyCheck,
    Scenario,
    TrafficGoodputCheck,
)
from testbed.scenario.results import Check, RunResult
from testbed.scenario.units import format_time_ns as fmt
from topologies.events import (
    EvDropEvent,
    Event,
    LinkRef,
    LinkUpEvent,
    PortRef,
    PortUpEvent,
    SwitchUpEvent,
)

PATH_CUTTING_KINDS = ("link_down", "switch_down", "port_down", "flap")


def evaluate(
    scenario: Scenario,
    assertions: Assertions,
    run: RunResult,
    baseline: RunResult | None = None,
) -> list[Check]:
    """Every assertion of ``assertions`` on ``run`` (``baseline``: the run without the
    timeline, for the assertions that compare with it). Each check names its assertion
    (:meth:`Assertions.path`) and carries the scenario's note when the claim is marked
    as not reproduced. Fabric-independent: the process fabric's runner calls it too."""
    checks: list[tuple[str, Check]] = []
    a = assertions
    if a.expect_failure_within_ns is not None:
        checks.append(("expect_failure_within", _fails_promptly(run, a.expect_failure_within_ns)))
    elif a.byte_exact:
        checks.append(("byte_exact", _byte_exact(run)))
    if a.completion_max_ns is not None:
        done = run.completion_ns()
        checks.append(
            (
                "completion_max",
                Check(
                    "completion",
                    done is not None and done <= a.completion_max_ns,
                    f"every transfer done by {fmt(a.completion_max_ns)}",
                    "not all done" if done is None else f"last done at {fmt(done)}",
                    value=done,
                    unit="ns",
                    worse="high",
                ),
            )
        )
    if a.ideal_factor_max is not None:
        checks.append(("completion_vs_ideal", _vs_ideal(scenario, run, a.ideal_factor_max)))
    if a.repath_max_ns is not None:
        checks += [("repath_max", c) for c in _repaths(run, a.repath_max_ns)]
    if a.repath_median_ns is not None:
        checks.append(("repath_median", _repath_median(run, a.repath_median_ns)))
    if a.retransmit_max_fraction is not None:
        sent = sum(t.nbytes for t in run.transfers)
        rtx = run.retransmitted_bytes()
        fraction = rtx / sent if sent else 0.0
        checks.append(
            (
                "retransmit_max",
                Check(
                    "retransmissions",
                    fraction <= a.retransmit_max_fraction,
                    f"retransmitted bytes <= {a.retransmit_max_fraction:.1%} of the bytes sent",
                    f"{rtx:,} bytes ({fraction:.2%})",
                    value=fraction,
                    unit="fraction",
                    worse="high",
                ),
            )
        )
    if a.stall_max_ns is not None:
        checks.append(("stall_max", _no_stall(run, a.stall_max_ns)))
    for index, check in enumerate(a.goodput):
        checks.append((f"goodput[{index}]", _goodput(scenario, check, run, baseline)))
    for index, tcheck in enumerate(a.traffic_goodput):
        checks.append(
            (f"traffic_goodput[{index}]", _traffic_goodput(scenario, tcheck, run, baseline))
        )
    for index, lcheck in enumerate(a.message_latency):
        checks.append((f"message_latency[{index}]", _latency(run, lcheck)))
    if a.ev_retired_within_ns is not None:
        for index, event in enumerate(scenario.timeline):
            if isinstance(event, EvDropEvent):
                checks.append(
                    ("ev_retired_within", _ev_retired(run, index, event, a.ev_retired_within_ns))
                )
    if a.revived_within_ns is not None:
        for index, event in enumerate(scenario.timeline):
            if isinstance(event, LinkUpEvent | PortUpEvent | SwitchUpEvent):
                checks.append(
                    (
                        "revived_within",
                        _revived(scenario, run, index, event, a.revived_within_ns),
                    )
                )
    for name, key, counter, bound, at_least in (
        ("trims", "trims_min", "trims", a.trims_min, True),
        ("NACKs", "nacks_min", "nacks", a.nacks_min, True),
        ("timeouts", "timeouts_max", "timeouts", a.timeouts_max, False),
    ):
        if bound is not None:
            value = int(run.counters.get(counter, 0))
            checks.append(
                (
                    key,
                    Check(
                        name,
                        value >= bound if at_least else value <= bound,
                        f"{'at least' if at_least else 'at most'} {bound}",
                        str(value),
                        value=value,
                        unit="count",
                        worse="low" if at_least else "high",
                    ),
                )
            )
    return [_named(scenario, a, key, check) for key, check in checks]


def _named(scenario: Scenario, assertions: Assertions, key: str, check: Check) -> Check:
    """``check`` with its assertion path and, if the scenario marks it, its note."""
    name, _, index = key.partition("[")
    path = assertions.path(name, int(index[:-1]) if index else None)
    return replace(check, assertion=path, not_reproduced=scenario.not_reproduced.get(path))


def compare_checks(
    assertions: Assertions, mrc: RunResult, roce: RunResult, scenario: Scenario | None = None
) -> list[Check]:
    """Cross-run checks of ``mrc-testbed compare``."""
    out: list[Check] = []
    ratio = completion_ratio(mrc, roce)
    if assertions.roce_goodput_min is not None:
        # the same bytes: goodput ratio = the inverse of the completion-time ratio
        share = None if ratio is None else 0.0 if ratio == float("inf") else 1 / ratio
        path = assertions.path("roce_goodput_min")
        out.append(
            Check(
                "RoCE goodput near MRC's",
                share is not None and share >= assertions.roce_goodput_min,
                f"RoCE goodput >= {assertions.roce_goodput_min:.0%} of MRC's",
                "MRC did not complete" if share is None else f"{share:.1%}",
                value=share,
                unit="fraction",
                worse="low",
                assertion=path,
                not_reproduced=scenario.not_reproduced.get(path) if scenario is not None else None,
            )
        )
    if assertions.roce_slower_by is None:
        return out
    factor = assertions.roce_slower_by
    path = assertions.path("roce_slower_by")
    out.append(
        Check(
            "RoCE slower than MRC",
            ratio is not None and ratio >= factor,
            f"RoCE completion >= {factor:g} x MRC's",
            "MRC did not complete"
            if mrc.completion_ns() is None
            else "RoCE did not complete"
            if ratio == float("inf")
            else f"{ratio:.2f} x",
            value=ratio,
            unit="x",
            worse="low",
            assertion=path,
            not_reproduced=scenario.not_reproduced.get(path) if scenario is not None else None,
        )
    )
    return out


def completion_ratio(mrc: RunResult, roce: RunResult) -> float | None:
    """RoCE completion time over MRC's (inf when RoCE never finished, None when MRC did not)."""
    m, r = mrc.completion_ns(), roce.completion_ns()
    if m is None or m == 0:
        return None
    return float("inf") if r is None else r / m


# ------------------------------------------------------------------ single checks


def _byte_exact(run: RunResult) -> Check:
    bad = [t for t in run.transfers if not t.intact]
    total = sum(t.nbytes for t in run.transfers)
    verified = sum(t.bytes_verified for t in run.transfers)
    measured = f"{verified:,} of {total:,} bytes verified"
    if bad:
        first = bad[0]
        measured += f"; {first.name}: " + (first.failure or "not complete at the end of the run")
    return Check("byte-exact delivery", not bad, "every byte delivered and verified", measured)


def _fails_promptly(run: RunResult, within_ns: int) -> Check:
    late = [
        t
        for t in run.transfers
        if t.failure is None or t.failed_at_ns is None or t.failed_at_ns > within_ns
    ]
    measured = (
        "every transfer failed: " + (run.transfers[0].failure or "")
        if not late and run.transfers
        else f"{late[0].name}: "
        + (
            "completed"
            if late[0].completion_ns is not None
            else f"failure at {fmt(late[0].failed_at_ns)}"
            if late[0].failed_at_ns is not None
            else "neither failed nor completed"
        )
    )
    return Check(
        "prompt, specific failure",
        not late and bool(run.transfers),
        f"every transfer fails with a reason by {fmt(within_ns)}",
        measured,
    )


def _repaths(run: RunResult, bound_ns: int) -> list[Check]:
    """One check per path-cutting event: a repath measured for it, each within the bound."""
    out = []
    cutting = [e for e in run.events if e.kind in PATH_CUTTING_KINDS]
    for event in cutting:
        values = event.repath_ns
        affected = event.params.get("affected_evs")
        name = f"repath after event {event.index} ({event.description})"
        if not values:
            out.append(
                Check(
                    name,
                    affected == 0,
                    f"<= {fmt(bound_ns)}",
                    "it cut no path of the traffic"
                    if affected == 0
                    else "no repath measured for it",
                )
            )
            continue
        never = sum(1 for v in values if v is None)
        worst = max((v for v in values if v is not None), default=None)
        measured = f"worst {fmt(worst)} over {len(values)} path(s)" if worst is not None else ""
        if never:
            measured += f"{'; ' if measured else ''}{never} path(s) never left"
        out.append(
            Check(
                name,
                never == 0 and worst is not None and worst <= bound_ns,
                f"<= {fmt(bound_ns)}",
                measured,
                value=None if never else worst,
                unit="ns",
                worse="high",
            )
        )
    if not cutting:
        out.append(Check("repath time", False, f"<= {fmt(bound_ns)}", "no path-cutting event"))
    return out


def _repath_median(run: RunResult, bound_ns: int) -> Check:
    """The median of every repath measured for the path-cutting events (each connection
    and path once, timed as for ``repath_max``); a path that never left counts as the
    longest, so it can only raise the median."""
    values = [v for e in run.events if e.kind in PATH_CUTTING_KINDS for v in e.repath_ns]
    expected = f"median <= {fmt(bound_ns)}"
    if not values:
        return Check("repath time (median)", False, expected, "no repath measured")
    ordered = sorted(values, key=lambda v: (v is None, v or 0))
    median = ordered[(len(ordered) - 1) // 2]
    never = sum(1 for v in values if v is None)
    measured = (
        f"median {fmt(median)} over {len(values)} path(s)"
        if median is not None
        else f"more than half of {len(values)} path(s) never left"
    )
    if never and median is not None:
        measured += f"; {never} never left"
    return Check(
        "repath time (median)",
        median is not None and median <= bound_ns,
        expected,
        measured,
        value=median,
        unit="ns",
        worse="high",
    )


def _no_stall(run: RunResult, bound_ns: int) -> Check:
    """The longest stretch of bins with nothing delivered between the first transfer's
    start and the last one's end (or the end of the run)."""
    series = run.goodput.get("total", [])
    start = min((t.start_ns for t in run.transfers), default=0)
    end = run.completion_ns() or run.end_ns
    longest = current = 0
    for i, value in enumerate(series):
        lo, hi = i * run.bin_ns, (i + 1) * run.bin_ns
        if hi <= start or lo >= end:
            continue
        current = current + (min(hi, end) - max(lo, start)) if value <= 0 else 0
        longest = max(longest, current)
    return Check(
        "no stall",
        longest <= bound_ns,
        f"no stretch longer than {fmt(bound_ns)} with nothing delivered",
        f"longest {fmt(longest)} (bins of {fmt(run.bin_ns)})",
        value=longest,
        unit="ns",
        worse="high",
    )


def ideal_completion_ns(scenario: Scenario, run: RunResult) -> int | None:
    """When the run's transfers would end if every sending and receiving NIC moved its
    bytes at its full port rate from the first start (the capacity-scaled ideal)."""
    topo = scenario.topology
    load: dict[str, tuple[int, int]] = {}  # NIC -> (earliest start, bytes), both directions
    for t in run.transfers:
        for nic in (t.src, t.dst):
            first, nbytes = load.get(nic, (t.start_ns, 0))
            load[nic] = (min(first, t.start_ns), nbytes + t.nbytes)
    ends = []
    for nic, (first, nbytes) in load.items():
        rate = sum(link.rate_gbps for link in topo.links_of(nic))
        ends.append(first + nbytes * 8 / rate if rate else 0)
    return round(max(ends)) if ends else None


def _vs_ideal(scenario: Scenario, run: RunResult, factor: float) -> Check:
    ideal = ideal_completion_ns(scenario, run)
    done = run.completion_ns()
    ratio = done / ideal if done is not None and ideal else None
    return Check(
        "completion against the ideal",
        ratio is not None and ratio <= factor,
        f"every transfer done by {factor:g} x the ideal at full port rate"
        + (f" ({fmt(ideal)})" if ideal else ""),
        "not all done" if done is None else f"last done at {fmt(done)} ({ratio or 0:.2f} x)",
        value=ratio,
        unit="x",
        worse="high",
    )


def _goodput(
    scenario: Scenario, check: GoodputCheck, run: RunResult, baseline: RunResult | None
) -> Check:
    event = scenario.timeline[check.event]
    start = event.at_ns + check.settle_ns
    end = start + check.window_ns
    value = run.goodput_gbps(start, end)
    what = f"goodput {fmt(check.settle_ns)}..{fmt(check.settle_ns + check.window_ns)} after " + (
        f"event {check.event} ({event.describe()})"
    )
    if check.of == "before":
        reference: float | None = run.goodput_gbps(event.at_ns - check.window_ns, event.at_ns)
        ref_text = "the window before it"
    elif check.of == "baseline":
        reference = baseline.goodput_gbps(start, end) if baseline is not None else None
        ref_text = "the same window without the timeline"
    else:
        reference = line_rate_gbps(scenario)
        ref_text = "the senders' line rate"
    fraction = value / reference if reference else 0.0
    return Check(
        what,
        bool(reference) and _within(fraction, check.min_fraction, check.max_fraction),
        f"{_bounds(check.min_fraction, check.max_fraction)} of {ref_text}",
        "no reference"
        if not reference
        else f"{value:.1f} of {reference:.1f} Gb/s ({fraction:.1%})",
        value=fraction if reference else None,
        unit="fraction",
        worse=_worse(check.min_fraction, check.max_fraction),
    )


def _traffic_goodput(
    scenario: Scenario, check: TrafficGoodputCheck, run: RunResult, baseline: RunResult | None
) -> Check:
    mine = _traffic_gbps(run, check.traffic)
    if check.of == "line_rate":
        ref: float | None = traffic_line_rate_gbps(scenario, check.traffic)
        ref_text = "its line rate"
    else:
        ref = _traffic_gbps(baseline, check.traffic) if baseline is not None else None
        ref_text = "its goodput without the timeline"
    fraction = mine / ref if ref else 0.0
    return Check(
        f"goodput of {check.traffic}",
        ref is not None and _within(fraction, check.min_fraction, check.max_fraction),
        f"{_bounds(check.min_fraction, check.max_fraction)} of {ref_text}",
        "no baseline run" if ref is None else f"{mine:.1f} of {ref:.1f} Gb/s ({fraction:.1%})",
        value=fraction if ref else None,
        unit="fraction",
        worse=_worse(check.min_fraction, check.max_fraction),
    )


def _latency(run: RunResult, check: LatencyCheck) -> Check:
    latencies = sorted(
        x for t in run.transfers if t.traffic == check.traffic for x in t.message_latencies_ns()
    )
    median = statistics.median(latencies) if latencies else None
    return Check(
        f"message latency of {check.traffic}",
        median is not None and median <= check.max_ns,
        f"median write completion <= {fmt(check.max_ns)} after the start",
        "no message completed"
        if median is None
        else f"median {fmt(round(median))} over {len(latencies)} message(s)",
        value=median,
        unit="ns",
        worse="high",
    )


def traffic_line_rate_gbps(scenario: Scenario, traffic: str) -> float:
    """What one traffic entry could move at most: its senders' or receivers' ports."""
    return _flows_line_rate(scenario, [f for f in scenario.flows() if f.traffic == traffic])


def _ev_retired(run: RunResult, index: int, event: EvDropEvent, within_ns: int) -> Check:
    """The EV leaves service within the bound of the drop's first effect: the send of the
    first packet it took (``first_loss_sent_ns``, as a repath starts at the first packet
    lost), or the drop's start when no packet was lost. How long the EV carried nothing
    the drop took is chance (its share of the packets), not the NIC's reaction."""
    retired = [
        c["t_ns"]
        for c in run.ev_changes
        if c.get("nic") == event.nic
        and c.get("ev") == event.ev
        and c.get("to") in ("ASSUMED_BAD", "DENIED")
        and c["t_ns"] >= event.at_ns
    ]
    first = min(retired) if retired else None
    params = run.events[index].params if index < len(run.events) else {}
    lost_ns = params.get("first_loss_sent_ns")
    origin = event.at_ns if lost_ns is None else int(lost_ns)
    if first is None:
        measured = "never retired" + (
            "; no packet on it was lost"
            if lost_ns is None
            else f"; first loss sent at {fmt(origin)}"
        )
    else:
        measured = f"after {fmt(first - origin)}" + (
            f" (first packet lost {fmt(origin - event.at_ns)} after the drop started)"
            if lost_ns is not None
            else " (no packet on it lost)"
        )
    return Check(
        f"EV {event.ev:#010x} retired",
        first is not None and first - origin <= within_ns,
        f"within {fmt(within_ns)} of the first packet the drop took",
        measured,
        value=None if first is None else first - origin,
        unit="ns",
        worse="high",
    )


def _revived(scenario: Scenario, run: RunResult, index: int, event: Event, within_ns: int) -> Check:
    """After an up event: an EV revived by probes, and data on the restored element."""
    end = event.at_ns + within_ns
    revived = [
        c["t_ns"]
        for c in run.ev_changes
        if c.get("to") == "GOOD"
        and c.get("from") == "ASSUMED_BAD"
        and event.at_ns <= c["t_ns"] <= end
    ]
    keys = restored_link_keys(scenario, event)
    carried = max((run.goodput_gbps(event.at_ns, end, key) for key in keys), default=0.0)
    ok = bool(revived) and carried > 0
    measured = (
        f"first EV revived after {fmt(min(revived) - event.at_ns)}" if revived else "no EV revived"
    )
    measured += f"; {carried:.1f} Gb/s on it in that time"
    return Check(
        f"traffic back after event {index} ({event.describe()})",
        ok,
        f"EVs revived by probes and data on it within {fmt(within_ns)}",
        measured,
    )


# ------------------------------------------------------------------ helpers


def link_key(a: str, b: str) -> str:
    """Goodput series key of a link (ends in the topology's order: lower tier first)."""
    return f"link:{a}--{b}"


def restored_link_keys(scenario: Scenario, event: Event) -> list[str]:
    topo = scenario.topology
    target = event.target
    if isinstance(target, LinkRef):
        link = topo.link(target.a, target.b)
        return [link_key(link.a.node, link.b.node)]
    if isinstance(target, PortRef):
        link = topo.links_of(target.nic)[target.plane]
        return [link_key(link.a.node, link.b.node)]
    if isinstance(target, str):
        return [link_key(link.a.node, link.b.node) for link in topo.links_of(target)]
    return []


def line_rate_gbps(scenario: Scenario) -> float:
    """What the traffic could move at most: the senders' or the receivers' port rate."""
    return _flows_line_rate(scenario, scenario.flows())


def _flows_line_rate(scenario: Scenario, flows: list[Flow]) -> float:
    topo = scenario.topology

    def ports(nics: set[str]) -> float:
        return sum(link.rate_gbps for nic in nics for link in topo.links_of(nic))

    return min(ports({f.src for f in flows}), ports({f.dst for f in flows}))


def _traffic_gbps(run: RunResult | None, traffic: str) -> float:
    if run is None:
        return 0.0
    mine = [t for t in run.transfers if t.traffic == traffic]
    if not mine or any(t.completion_ns is None for t in mine):
        return 0.0
    start = min(t.start_ns for t in mine)
    end = max(t.completion_ns for t in mine if t.completion_ns is not None)
    return sum(t.nbytes for t in mine) * 8 / (end - start) if end > start else 0.0


def _worse(low: float | None, high: float | None) -> str:
    """Which way a fraction bounded by ``low`` / ``high`` gets worse ("" if both)."""
    if low is not None and high is not None:
        return ""
    return "low" if low is not None else "high"


def _within(value: float, low: float | None, high: float | None) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


def _bounds(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"between {low:.0%} and {high:.0%}"
    if low is not None:
        return f">= {low:.0%}"
    return f"<= {high:.0%}"
