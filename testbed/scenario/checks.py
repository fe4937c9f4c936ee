"""A scenario's assertions evaluated on a run (docs/scenarios.md, "Assertions").

Every check states what it expected and what it measured, so a failing run says why
in one line per check; ``evaluate`` never raises for a failed assertion.
"""

from __future__ import annotations

from testbed.scenario.model import (
    Assertions,
    EvDropEvent,
    Event,
    GoodputCheck,
    LinkRef,
    LinkUpEvent,
    PortRef,
    PortUpEvent,
    Scenario,
    SwitchUpEvent,
)
from testbed.scenario.results import Check, RunResult
from testbed.scenario.units import format_time_ns as fmt


def evaluate(
    scenario: Scenario,
    assertions: Assertions,
    run: RunResult,
    baseline: RunResult | None = None,
) -> list[Check]:
    checks: list[Check] = []
    a = assertions
    if a.expect_failure_within_ns is not None:
        checks.append(_fails_promptly(run, a.expect_failure_within_ns))
    elif a.byte_exact:
        checks.append(_byte_exact(run))
    if a.completion_max_ns is not None:
        done = run.completion_ns()
        checks.append(
            Check(
                "completion",
                done is not None and done <= a.completion_max_ns,
                f"every transfer done by {fmt(a.completion_max_ns)}",
                "not all done" if done is None else f"last done at {fmt(done)}",
            )
        )
    if a.repath_max_ns is not None:
        checks.append(_repath(run, a.repath_max_ns))
    if a.retransmit_max_fraction is not None:
        sent = sum(t.nbytes for t in run.transfers)
        rtx = run.retransmitted_bytes()
        fraction = rtx / sent if sent else 0.0
        checks.append(
            Check(
                "retransmissions",
                fraction <= a.retransmit_max_fraction,
                f"retransmitted bytes <= {a.retransmit_max_fraction:.1%} of the bytes sent",
                f"{rtx:,} bytes ({fraction:.2%})",
            )
        )
    for check in a.goodput:
        checks.append(_goodput(scenario, check, run, baseline))
    for tcheck in a.traffic_goodput:
        mine = _traffic_gbps(run, tcheck.traffic)
        ref = _traffic_gbps(baseline, tcheck.traffic) if baseline is not None else None
        fraction = mine / ref if ref else 0.0
        checks.append(
            Check(
                f"goodput of {tcheck.traffic}",
                ref is not None and _within(fraction, tcheck.min_fraction, tcheck.max_fraction),
                f"{_bounds(tcheck.min_fraction, tcheck.max_fraction)} of its goodput without "
                "the timeline",
                "no baseline run"
                if ref is None
                else f"{mine:.1f} of {ref:.1f} Gb/s ({fraction:.1%})",
            )
        )
    if a.ev_retired_within_ns is not None:
        for event in scenario.timeline:
            if isinstance(event, EvDropEvent):
                checks.append(_ev_retired(run, event, a.ev_retired_within_ns))
    if a.revived_within_ns is not None:
        for index, event in enumerate(scenario.timeline):
            if isinstance(event, LinkUpEvent | PortUpEvent | SwitchUpEvent):
                checks.append(_revived(scenario, run, index, event, a.revived_within_ns))
    for name, key, bound, at_least in (
        ("trims", "trims", a.trims_min, True),
        ("NACKs", "nacks", a.nacks_min, True),
        ("timeouts", "timeouts", a.timeouts_max, False),
    ):
        if bound is not None:
            value = int(run.counters.get(key, 0))
            checks.append(
                Check(
                    name,
                    value >= bound if at_least else value <= bound,
                    f"{'at least' if at_least else 'at most'} {bound}",
                    str(value),
                )
            )
    return checks


def compare_checks(assertions: Assertions, mrc: RunResult, roce: RunResult) -> list[Check]:
    """Cross-run checks of ``mrc-testbed compare``."""
    out: list[Check] = []
    ratio = completion_ratio(mrc, roce)
    if assertions.roce_goodput_min is not None:
        # the same bytes: goodput ratio = the inverse of the completion-time ratio
        share = None if ratio is None else 0.0 if ratio == float("inf") else 1 / ratio
        out.append(
            Check(
                "RoCE goodput near MRC's",
                share is not None and share >= assertions.roce_goodput_min,
                f"RoCE goodput >= {assertions.roce_goodput_min:.0%} of MRC's",
                "MRC did not complete" if share is None else f"{share:.1%}",
            )
        )
    if assertions.roce_slower_by is None:
        return out
    factor = assertions.roce_slower_by
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


def _repath(run: RunResult, bound_ns: int) -> Check:
    values = [v for e in run.events for v in e.repath_ns]
    if not values:
        return Check(
            "repath time", False, f"<= {fmt(bound_ns)}", "no repath measured for any event"
        )
    never = sum(1 for v in values if v is None)
    worst = max((v for v in values if v is not None), default=None)
    ok = never == 0 and worst is not None and worst <= bound_ns
    measured = f"worst {fmt(worst)} over {len(values)}" if worst is not None else ""
    if never:
        measured += f"{'; ' if measured else ''}{never} connection(s) never left the failed path"
    return Check("repath time", ok, f"<= {fmt(bound_ns)}", measured)


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
    )


def _ev_retired(run: RunResult, event: EvDropEvent, within_ns: int) -> Check:
    retired = [
        c["t_ns"]
        for c in run.ev_changes
        if c.get("nic") == event.nic
        and c.get("ev") == event.ev
        and c.get("to") in ("ASSUMED_BAD", "DENIED")
        and c["t_ns"] >= event.at_ns
    ]
    first = min(retired) if retired else None
    return Check(
        f"EV {event.ev:#010x} retired",
        first is not None and first - event.at_ns <= within_ns,
        f"within {fmt(within_ns)} of the drop starting",
        "never retired" if first is None else f"after {fmt(first - event.at_ns)}",
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
    topo = scenario.topology
    flows = scenario.flows()

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


def _within(value: float, low: float | None, high: float | None) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


def _bounds(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"between {low:.0%} and {high:.0%}"
    if low is not None:
        return f">= {low:.0%}"
    return f"<= {high:.0%}"
