"""Repath time of the nic-emu processes on the local process fabric (issue 15).

Runs the demo's story undilated with testbed's functions (``tiny`` in local mode with the
process defaults, a transfer nic0 -> nic3, the T0-T1 link p0-t0-0 -- p0-t1-0 cut silently
when a third is acknowledged and restored at two thirds: the NIC processes at their own
speed, where ``mrc-testbed demo --mode local`` runs the demo scenario time-dilated)
``--runs`` times, each on its own run directory and ports, and
prints one JSON document: per run the repath time of the cut path (from the send time of
the first packet lost on it to the last data packet sent on it, as the sender's NIC
reports it), every repath event of the transfer (other paths retired on false alarms
included), goodput, the load average and how long the cut took to apply (``cut_call_ms``:
the cut's episode is the first one on the cut path that starts after ``link_down`` was
called); over the runs the median cut-path repath time and the spread (largest /
smallest). Target: median <= 5 ms, spread <= 2. Also per run ``cut_held_ms``, the
sender's reaction: from that first lost packet to the moment the sender stopped choosing
the path (its quarantine or retirement), which the repath time never exceeds, with its
median and spread over the runs; and ``cut_episode``: ``retired_without_loss`` for a run
whose cut path was held out when the cut came (repath 0 ms, no reaction to time).
``--send-gaps`` records every data packet and adds, per run, the gaps between the
sender's packets on the cut path and on all paths in the second before the cut. Where
the time goes: docs/testbed.md, "Repath time on the process fabric".

    python benchmarks/process_repath.py [--runs 5] [--bytes 32M] [--transport JSON]
                                        [--timeline] [--send-gaps]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.startup import free_bases
from clikit import byte_size
from testbed.demo import DEMO_TOPOLOGY, DemoOptions
from testbed.exceptions import TestbedError
from testbed.fabric import Fabric
from testbed.local import up_local
from testbed.options import FabricOptions
from testbed.rundir import teardown
from testbed.traffic import delivered_intact, start_transfer
from topologies import AddressPlan, load

SRC, DST = DemoOptions.src, DemoOptions.dst
CUT = DemoOptions.cut
CUT_PATH = [0, CUT[1]]  # (plane, T1) of the cut T0-T1 link, as repath events name paths
RUN_LIMIT_S = 300.0
POLL_S = 0.02  # how often the sender is asked how much is acknowledged
TARGET_MEDIAN_MS = 5.0
TARGET_SPREAD = 2.0


def wait_acked(
    fabric: Fabric, src: str, transfer_id: Any, target: int, deadline: float
) -> dict[str, Any]:
    """Polls until ``target`` bytes are acknowledged or the transfer is done."""
    nic = fabric.nic(src)
    while True:
        info = nic.transfer(transfer_id)
        if info.get("failed"):
            raise TestbedError(f"the transfer failed: {info['failed']}")
        if info.get("done") or info.get("bytes_acked", 0) >= target:
            return info
        if time.monotonic() > deadline:
            raise TestbedError(
                f"the transfer made too little progress: {info.get('bytes_acked', 0):,} of "
                f"{info.get('bytes_total', 0):,} bytes acknowledged before the time limit"
            )
        time.sleep(POLL_S)


def _records(path: Path) -> list[dict[str, Any]]:
    """The sender's event records (its rotated file first)."""
    out: list[dict[str, Any]] = []
    for f in (path.with_name(path.name + ".1"), path):
        if f.exists():
            out.extend(json.loads(line) for line in f.read_text().splitlines() if line)
    return out


def _ms(t: int | None, origin: int) -> float | None:
    return None if t is None else round((t - origin) / 1e6, 3)


def _on_cut_path() -> Callable[[dict[str, Any]], bool]:
    """Whether an event record names an EV of the cut path (``ev`` or ``evs``)."""
    plan = AddressPlan(load(DEMO_TOPOLOGY))

    def on_cut(rec: dict[str, Any]) -> bool:
        evs = [rec["ev"]] if "ev" in rec else rec.get("evs", [])
        return any(
            plan.ev_plane(ev) == CUT_PATH[0] and plan.path_for_ev(SRC, DST, ev).t1 == CUT_PATH[1]
            for ev in evs
        )

    return on_cut


def _retired_without_loss(
    records: list[dict[str, Any]], cut_ns: int, restore_ns: int
) -> str | None:
    """The reason the cut path was retired between the cut and the restore with no packet
    lost on it (quarantined before the cut, nothing sent on it since); None otherwise."""
    on_cut = _on_cut_path()
    for r in records:
        if not cut_ns <= r["t_ns"] <= restore_ns or r["kind"] not in ("loss", "ev_state"):
            continue
        if on_cut(r):
            if r["kind"] == "loss":
                return None
            if r.get("new") == "ASSUMED_BAD":
                return str(r.get("reason"))
    return None


def held_after_loss(records: list[dict[str, Any]], cut_ns: int) -> float | None:
    """Ms from the send time of the first packet lost on the cut path (after the cut) to
    the moment the sender stopped choosing the path: its first quarantine (``path_suspect``)
    or EV retirement on the path from then on. The NIC's reaction time, which the repath
    time (to the last data packet sent on the path) never exceeds. None without a loss."""
    on_cut = _on_cut_path()
    sent = [
        r["sent_ns"]
        for r in records
        if r["kind"] == "loss" and r["nic"] == SRC and r["t_ns"] >= cut_ns and on_cut(r)
    ]
    if not sent:
        return None
    first = min(sent[:8])
    for r in records:
        if r["t_ns"] < first or not on_cut(r):
            continue
        if r["kind"] == "path_suspect" or (
            r["kind"] == "ev_state" and r.get("new") == "ASSUMED_BAD"
        ):
            return round((r["t_ns"] - first) / 1e6, 3)
    return None


def send_gaps(records: list[dict[str, Any]], cut_ns: int) -> dict[str, Any] | None:
    """Gaps (ms) between the sender's data packets over the second before the cut, on the
    cut path and over all paths: median, 90th and 99th percentile, largest. The repath
    time ends at the last packet sent on the path before the sender stops choosing it, so
    these gaps are how far it falls short of that moment. Needs ``trace_packets``."""
    on_cut = _on_cut_path()
    tx = [
        r
        for r in records
        if r["kind"] == "tx" and r["nic"] == SRC and cut_ns - 1_000_000_000 <= r["t_ns"] < cut_ns
    ]
    if len(tx) < 3:
        return None

    def summary(times: list[int]) -> dict[str, float] | None:
        gaps = sorted((b - a) / 1e6 for a, b in itertools.pairwise(times))
        if not gaps:
            return None

        def pick(q: float) -> float:
            return round(gaps[max(0, math.ceil(q * len(gaps)) - 1)], 3)  # nearest rank

        return {"median": pick(0.5), "p90": pick(0.9), "p99": pick(0.99), "max": pick(1.0)}

    return {
        "cut_path": summary([r["t_ns"] for r in tx if on_cut(r)]),
        "all_paths": summary([r["t_ns"] for r in tx]),
        "packets": len(tx),
    }


def cut_timeline(records: list[dict[str, Any]], cut_ns: int) -> dict[str, Any]:
    """The cut path's episode on the sender, in ms from the send time of its first lost
    packet: the cut call, the first losses (sent, declared, by what, with SRTT, minimum
    RTT, queueing delay and cwnd when declared), the EVs taken out, the path retired,
    the last data packet sent on it, and what other paths lost meanwhile."""
    on_cut = _on_cut_path()
    losses = [
        r
        for r in records
        if r["kind"] == "loss" and r["nic"] == SRC and r["t_ns"] >= cut_ns and on_cut(r)
    ]
    if not losses:
        return {"error": "no loss on the cut path after the cut"}
    first_sent = min(r["sent_ns"] for r in losses[:8])
    first = min(losses[:8], key=lambda r: r["sent_ns"])
    outs = [
        r
        for r in records
        if r["kind"] == "ev_state"
        and r["t_ns"] >= first["t_ns"]
        and r.get("new") == "ASSUMED_BAD"
        and on_cut(r)
    ]
    revived = next(
        (
            r["t_ns"]
            for r in records
            if r["kind"] == "ev_state"
            and r["t_ns"] >= first["t_ns"]
            and r.get("old") == "ASSUMED_BAD"
            and on_cut(r)
        ),
        None,
    )
    if revived is not None:
        outs = [r for r in outs if r["t_ns"] < revived]
    path_out = next((r for r in outs if str(r.get("reason", "")).startswith("path_")), None)
    end = path_out["t_ns"] if path_out else (outs[-1]["t_ns"] if outs else first["t_ns"])
    other_losses = [
        r for r in records if r["kind"] == "loss" and cut_ns <= r["t_ns"] <= end and not on_cut(r)
    ]
    suspects = [
        r
        for r in records
        if r["kind"] in ("path_suspect", "path_cleared")
        and first_sent - 20_000_000 <= r["t_ns"] <= end
        and on_cut(r)
    ]
    return {
        "cut_called_ms": _ms(cut_ns, first_sent),
        "quarantine": [
            {
                "ms": _ms(r["t_ns"], first_sent),
                "kind": r["kind"],
                **(
                    {"overdue_sent_ms": _ms(r["sent_ns"], first_sent)}
                    if "sent_ns" in r
                    else {"by": r.get("by"), "held_ms": round(r.get("suspect_ns", 0) / 1e6, 3)}
                ),
            }
            for r in suspects[-6:]
        ],
        "losses": [
            {
                "sent_ms": _ms(r["sent_ns"], first_sent),
                "declared_ms": _ms(r["t_ns"], first_sent),
                "reason": r.get("reason"),
                "srtt_ms": round(r["srtt_ns"] / 1e6, 3) if "srtt_ns" in r else None,
                "min_rtt_ms": round(r["min_rtt_ns"] / 1e6, 3) if "min_rtt_ns" in r else None,
                "qdelay_ms": round(r["qdelay_ns"] / 1e6, 3) if "qdelay_ns" in r else None,
                "cwnd_pkts": round(r["cwnd"] / 4096, 1) if "cwnd" in r else None,
                "acked_sent_ms": _ms(r.get("acked_sent_ns"), first_sent),
            }
            for r in losses[:4]
        ],
        "evs_out": [
            {
                "ms": _ms(r["t_ns"], first_sent),
                "reason": r.get("reason"),
                "count": r.get("count", 1),
                "last_tx_ms": _ms(r.get("last_tx_ns"), first_sent),
            }
            for r in outs[:6]
        ],
        "path_retired_ms": _ms(path_out["t_ns"], first_sent) if path_out else None,
        "last_sent_ms": _ms(max(r.get("last_tx_ns", -1) for r in outs), first_sent)
        if outs
        else None,
        "other_path_losses_meanwhile": len(other_losses),
        "rto_events": sum(1 for r in records if r["kind"] == "rto" and r["t_ns"] >= cut_ns),
    }


def one_run(
    index: int, size: int, transport: dict[str, Any], timeline: bool = False
) -> dict[str, Any]:
    """The demo's steps (testbed functions): up, transfer, cut at 1/3, restore at 2/3."""
    started = time.monotonic()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="mrc-repath-", dir="/tmp") as root:
        udp, grpc = free_bases(load(DEMO_TOPOLOGY))
        options = FabricOptions(
            name=f"repath{index}",
            root=Path(root),
            udp_base_port=udp,
            grpc_base_port=grpc,
            transport=transport,
        )
        fabric = up_local(DEMO_TOPOLOGY, options).fabric
        try:
            deadline = time.monotonic() + RUN_LIMIT_S
            tid = start_transfer(fabric, SRC, DST, size)
            info = wait_acked(fabric, SRC, tid, size // 3, deadline)
            if info.get("done"):
                raise TestbedError(f"{size} bytes finished before the cut; give more --bytes")
            cut_ns = time.monotonic_ns()  # the cut starts now: no episode of it starts earlier
            fabric.link_down(*CUT)
            cut_call_ms = (time.monotonic_ns() - cut_ns) / 1e6
            wait_acked(fabric, SRC, tid, 2 * size // 3, deadline)
            restore_ns = time.monotonic_ns()
            fabric.link_up(*CUT)
            info = fabric.nic(SRC).wait_transfer(tid, max(1.0, deadline - time.monotonic()))
            intact = delivered_intact(fabric, SRC, DST, info)
            records = _records(fabric.rundir.file("nics", f"{SRC}.events.jsonl"))
        except TestbedError as exc:
            return {
                "run": index,
                "error": str(exc),
                "seconds": round(time.monotonic() - started, 2),
            }
        finally:
            teardown(fabric.rundir)
    if info.get("failed"):
        return {
            "run": index,
            "error": info["failed"],
            "seconds": round(time.monotonic() - started, 2),
        }
    events = info.get("repath_events", [])
    cut_s = (cut_ns - int(info["started_ns"])) / 1e9
    # The cut path's episode: the first one on it that starts after the cut began (the
    # NIC's clock and ours are the same system-wide monotonic clock).
    cut_events = [e for e in events if e["path"] == CUT_PATH and e["t_s"] >= cut_s]
    all_ms = [round(e["repath_time_us"] / 1000, 3) for e in events]
    cut_ms = round(cut_events[0]["repath_time_us"] / 1000, 3) if cut_events else None
    lost = cut_events[0]["packets_lost"] if cut_events else None
    # what found the cut: reorder (RACK), timeout (RTO), tail_probe, path_quarantine...
    reason = cut_events[0]["reason"] if cut_events else None
    if not cut_events:
        # No episode with a loss: the path may have been held out (quarantined) when the
        # cut came and retired without losing a packet: nothing was sent on it after the
        # cut, a repath time of 0.
        reason = _retired_without_loss(records, cut_ns, restore_ns)
        if reason is not None:
            cut_ms, lost = 0.0, 0
    return {
        "run": index,
        "intact": intact,
        # "measured": the sender reported a repath episode of the cut path; otherwise the
        # path was held out when the cut came and retired without losing a packet (0 ms)
        "cut_episode": "measured" if cut_events else ("retired_without_loss" if reason else None),
        "cut_repath_ms": cut_ms,
        "cut_held_ms": held_after_loss(records, cut_ns),
        "cut_packets_lost": lost,
        "cut_reason": reason,
        "cut_call_ms": round(cut_call_ms, 1),  # how long link_down took (gNMI to 2 switches)
        "repath_events": len(events),
        # quarantines (path_quarantine): paths held out at a first overdue packet, and how
        # many of them delivered again (false alarms that cost no retirement)
        "path_suspects": sum(1 for r in records if r["kind"] == "path_suspect"),
        "path_suspects_cleared": sum(1 for r in records if r["kind"] == "path_cleared"),
        "ev_probes": sum(r.get("count", 1) for r in records if r["kind"] == "probe_tx"),
        "repath_ms_all": all_ms,
        "median_repath_ms_all": statistics.median(all_ms) if all_ms else None,
        "goodput_gbps": round(size * 8 / float(info["elapsed_s"]) / 1e9, 4),
        "retransmissions": info.get("retransmissions"),
        "load_average_1m": round(load_before, 2),
        "seconds": round(time.monotonic() - started, 2),
        **({"timeline": cut_timeline(records, cut_ns)} if timeline else {}),
        **({"send_gaps_ms": send_gaps(records, cut_ns)} if transport.get("trace_packets") else {}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="demo runs (default 5)")
    parser.add_argument(
        "--bytes", type=byte_size, default="32M", help="transfer size per run (default 32M)"
    )
    parser.add_argument("--transport", default="{}", help="nic-emu transport overrides (JSON)")
    parser.add_argument(
        "--timeline",
        action="store_true",
        help="per run, the cut path's episode from the sender's event log",
    )
    parser.add_argument(
        "--send-gaps",
        action="store_true",
        help="record every data packet (trace_packets) and report, per run, the gaps "
        "between sends on the cut path and on all paths in the second before the cut",
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    try:
        transport = json.loads(args.transport)
    except json.JSONDecodeError as exc:
        parser.error(f"--transport is not JSON: {exc}")
    if not isinstance(transport, dict):
        parser.error("--transport must be a JSON object")
    if args.send_gaps:
        transport = {**transport, "trace_packets": True}
    runs = [one_run(i, args.bytes, transport, args.timeline) for i in range(args.runs)]
    medians = [r["cut_repath_ms"] for r in runs if r.get("cut_repath_ms") is not None]
    median = statistics.median(medians) if medians else None
    spread = max(medians) / min(medians) if medians and min(medians) > 0 else None
    held = [r["cut_held_ms"] for r in runs if r.get("cut_held_ms") is not None]
    failed = [r for r in runs if "error" in r or not r.get("intact")]
    result = {
        "benchmark": "process_repath",
        "topology": DEMO_TOPOLOGY,
        "runs": runs,
        "median_repath_ms": median,  # of the runs' cut-path repath times
        "spread": round(spread, 3) if spread is not None else None,
        # the sender's reaction: first lost packet sent -> the path no longer chosen
        "median_held_ms": statistics.median(held) if held else None,
        "held_spread": round(max(held) / min(held), 3) if held and min(held) > 0 else None,
        "runs_retired_without_loss": sum(
            1 for r in runs if r.get("cut_episode") == "retired_without_loss"
        ),
        "target_median_ms": TARGET_MEDIAN_MS,
        "target_spread": TARGET_SPREAD,
        "meets_target": bool(
            median is not None
            and spread is not None
            and median <= TARGET_MEDIAN_MS
            and spread <= TARGET_SPREAD
            and not failed
            and len(medians) == len(runs)
        ),
        "failed_runs": len(failed),
        "python": sys.version.split()[0],
    }
    print(json.dumps(result, indent=2))
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
