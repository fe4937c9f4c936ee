"""Human and JSON views of plans, entries and reports.

Values are shown in the notation of their kind: locators and uSIDs in hex, addresses as
IPv6, MACs with colons, ports and flags in decimal. ``plan --txt`` adds, per route, what
the uSID names and where the port leads (from the topology).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

import controller.p4names as p4names
from controller.entities import field_names, param_names
from controller.notation import format_entry, format_value, padded_names, short_name
from controller.plan import Entry, LpmPrefix, RoutePlan, SwitchPlan
from controller.reconcile import SwitchReport
from topologies import Role, TopologyError

__all__ = [
    "diff_lines",
    "entry_to_json",
    "format_entry",
    "format_value",
    "report_line",
    "report_to_json",
    "short_name",
    "switch_heading",
    "write_plan_json",
    "write_plan_text",
]


def _annotation(plan: RoutePlan, sw: SwitchPlan, entry: Entry) -> str:
    """What a route's uSID names and where its port leads."""
    parts = []
    if entry.table == p4names.USID_ROUTE and entry.match:
        parts.append(str(plan.addresses.describe_usid(int(entry.match[0])).name))
    if entry.action == p4names.FORWARD or entry.table in (
        p4names.EGRESS_PORT_CONFIG,
        p4names.INGRESS_PORT_STATUS,
        p4names.EGRESS_PORT_MAC,
    ):
        port = entry.params[0] if entry.action == p4names.FORWARD else entry.match[0]
        try:
            peer = plan.topology.peer(sw.name, int(port))  # type: ignore[arg-type]
            parts.append(f"port {port} -> {peer}")
        except TopologyError:
            parts.append(f"port {port} -> nothing")
    if entry.table == p4names.EGRESS_PORT_CONFIG:
        parts.append(
            p4names.PORT_CLASS_NAMES.get(entry.params[0], "?")
            + ("" if entry.params[1] else ", DOWN")
        )
    return "  # " + "; ".join(parts) if parts else ""


def switch_heading(plan: RoutePlan, sw: SwitchPlan) -> str:
    role = "T0" if sw.role is Role.T0 else "T1"
    address = plan.addresses.switch_address(sw.name)
    return (
        f"{sw.name}  {role} plane {sw.plane}  uSID 0x{sw.usid:04x}  {address}  "
        f"({len(sw.entries)} entries)"
    )


def write_plan_text(plan: RoutePlan, out: TextIO) -> None:
    out.write(
        f"# {plan.topology.name}: {len(plan)} switches, {plan.entry_count()} entries "
        f"({plan.entry_count() - plan.default_action_count()} table entries + "
        f"{plan.default_action_count()} default actions); "
        f"uSID block {plan.addresses.block}\n"
    )
    if plan.down_links:
        out.write(
            "# links marked down: " + ", ".join(f"{a}--{b}" for a, b in plan.down_links) + "\n"
        )
    for sw in plan:
        out.write("\n" + switch_heading(plan, sw) + "\n")
        for entry in sw.entries:
            out.write(f"  {format_entry(entry)}{_annotation(plan, sw, entry)}\n")


def entry_to_json(entry: Entry) -> dict[str, Any]:
    fields = padded_names(field_names(entry.table), len(entry.match))
    params = padded_names(param_names(entry.action), len(entry.params))
    match: dict[str, Any] = {}
    for name, value in zip(fields, entry.match):
        match[name] = (
            {"value": value.value, "prefix_len": value.prefix_len}
            if isinstance(value, LpmPrefix)
            else value
        )
    document: dict[str, Any] = {
        "table": entry.table,
        "match": match,
        "action": entry.action,
        "params": dict(zip(params, entry.params)),
    }
    if entry.is_default:
        document["default"] = True
    if entry.priority:
        document["priority"] = entry.priority
    return document


def write_plan_json(plan: RoutePlan, out: TextIO) -> None:
    """Streams the plan as one JSON document (switch by switch: no giant dict in memory)."""
    head = {
        "topology": plan.topology.name,
        "usid_block": str(plan.addresses.block),
        "switch_count": len(plan),
        "entry_count": plan.entry_count(),
        "down_links": [list(link) for link in plan.down_links],
    }
    out.write(json.dumps(head)[:-1] + ', "switches": [')
    for i, sw in enumerate(plan):
        document = {
            "name": sw.name,
            "role": sw.role.value,
            "plane": sw.plane,
            "usid": sw.usid,
            "entries": [entry_to_json(entry) for entry in sw.entries],
        }
        out.write(("," if i else "") + "\n" + json.dumps(document))
    out.write("\n]}\n")


# ---------------------------------------------------------------------- reports


def report_line(report: SwitchReport) -> str:
    if report.ok:
        counts = f"+{report.inserted} ~{report.modified} -{report.deleted}"
        if report.written == 0 and report.pipeline == "same":
            what = "unchanged"
        else:
            what = f"{counts}" + (", pipeline set" if report.pipeline == "set" else "")
        verified = " (read-back verified)" if report.verified else ""
        return f"{report.switch:<12} ok      {what}{verified} in {report.seconds:.2f} s"
    return f"{report.switch:<12} FAILED  {report.error_kind}: {report.error}"


def diff_lines(report: SwitchReport, limit: int | None = None) -> Iterator[str]:
    if not report.ok:
        yield f"{report.switch}: cannot diff: {report.error_kind}: {report.error}"
        return
    pipeline = {
        "same": "",
        "missing": " (no pipeline: push would install it)",
        "different": " (runs another pipeline: push would replace it)",
    }.get(report.pipeline, "")
    if not report.changes:
        yield f"{report.switch}: in sync{pipeline}"
        return
    yield (
        f"{report.switch}: {len(report.changes)} changes "
        f"(+{_count(report.changes, 'INSERT')} ~{_count(report.changes, 'MODIFY')} "
        f"-{_count(report.changes, 'DELETE')}){pipeline}"
    )
    shown = report.changes if limit is None else report.changes[:limit]
    symbol = {"INSERT": "+", "MODIFY": "~", "DELETE": "-"}
    for change in shown:
        line = f"  {symbol[change.kind]} {format_entry(change.entry)}"
        if change.kind == "MODIFY" and change.current is not None:
            line += f"   (now: {format_entry(change.current)})"
        yield line
    if limit is not None and len(report.changes) > limit:
        yield f"  ... {len(report.changes) - limit} more"


def _count(changes: Iterable[Any], kind: str) -> int:
    return sum(1 for change in changes if change.kind == kind)


def report_to_json(report: SwitchReport, with_changes: bool = False) -> dict[str, Any]:
    document: dict[str, Any] = {
        "switch": report.switch,
        "address": report.address,
        "status": report.status,
        "pipeline": report.pipeline,
        "planned": report.planned,
        "inserted": report.inserted,
        "modified": report.modified,
        "deleted": report.deleted,
        "seconds": round(report.seconds, 4),
    }
    if report.verified is not None:
        document["verified"] = report.verified
    if report.error is not None:
        document["error"] = {
            "kind": report.error_kind,
            "code": report.error_code,
            "message": report.error,
            "failures": [
                {
                    "update": f.update_type,
                    "entry": f.entity,
                    "code": f.code,
                    "message": f.message,
                }
                for f in report.failures
            ],
        }
    if with_changes:
        document["changes"] = [
            {"kind": change.kind, **entry_to_json(change.entry)} for change in report.changes
        ]
    return document
