"""``mrc-testbed demo``: a link failure under load, end to end, on the ``tiny`` fabric.

Default mode ``virtual`` (:func:`run_virtual_demo`): the same story on :mod:`vfabric`, the
P4 switches and MRC NICs in one deterministic event loop at 100 Gb/s and µs timers; the
link is cut a third of the way through the transfer's line-rate time and restored at two
thirds; it prints bytes intact, the repath time in µs, goodput before/during/after as a
fraction of line rate and the event log's hash, and writes ``demo.png``, ``events.jsonl``
and ``results.json`` to its results directory. Modes ``local`` / ``mininet`` run the
process fabric, as follows:

1. bring ``tiny`` up locally (its own run name and ports, so it never collides with a
   fabric you are running);
2. start a transfer from ``nic0`` (under T0 0) to ``nic3`` (under T0 1), so every path
   crosses a T1;
3. when a third of it is acknowledged, cut the T0-T1 link ``p0-t0-0 -- p0-t1-0`` (a silent
   fabric failure: the NICs are not told); restore it at two thirds;
4. print what happened — bytes delivered intact, repath times, goodput before / during /
   after the cut — and plot per-plane goodput over time to a PNG in the run's results
   directory (``<root>/results/<name>/mrc-demo.png``, or ``plot``), never the current
   directory;
5. tear the fabric down (``keep=True`` leaves it running).

A failed demo keeps its evidence: the run directory (logs, NIC event logs, state) moves to
``<root>/failed/<name>-<time>/``, the plot shows whatever the transfer got through, and the
error says where both are.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from clikit import hotpath
from testbed import layout
from testbed.exceptions import DemoError, NicControlError, TestbedError
from testbed.fabric import Fabric
from testbed.local import up
from testbed.modes import launcher, mode
from testbed.options import DEFAULT_SEED, FabricOptions
from testbed.rundir import default_root, results_dir, retire, retire_failed, teardown
from testbed.traffic import (
    DEADLINE_GRACE_S,
    DEFAULT_TRANSFER_DEADLINE_S,
    deadline_line,
    delivered_intact,
    start_transfer,
)
from vfabric.plots import write_transfer_plot

DEMO_TOPOLOGY = "tiny"
DEMO_RUN_NAME = "demo"
# Away from the default ports, so the demo runs beside a fabric started with defaults.
DEMO_UDP_BASE_PORT = layout.DEFAULT_UDP_BASE_PORT + 4000
DEMO_GRPC_BASE_PORT = layout.DEFAULT_GRPC_BASE_PORT + 200
DEFAULT_DEMO_BYTES = 64 * 1024 * 1024
DEMO_PLOT_NAME = "mrc-demo.png"
CUT_FRACTION = 1 / 3
RESTORE_FRACTION = 2 / 3
POLL_S = 0.02

Progress = Callable[[str], None]
T = TypeVar("T", int, float)


@dataclass(frozen=True)
class DemoOptions:
    size: int = DEFAULT_DEMO_BYTES
    src: str = "nic0"
    dst: str = "nic3"
    cut: tuple[str, str] = ("p0-t0-0", "p0-t1-0")
    plot: Path | None = None  # default: the run's results directory / DEMO_PLOT_NAME
    deadline: float = DEFAULT_TRANSFER_DEADLINE_S  # the transfer's, printed first
    keep: bool = False  # leave the fabric running afterwards
    local: FabricOptions = field(
        default_factory=lambda: FabricOptions(
            name=DEMO_RUN_NAME,
            udp_base_port=DEMO_UDP_BASE_PORT,
            grpc_base_port=DEMO_GRPC_BASE_PORT,
        )
    )


@dataclass
class PhaseGoodput:
    name: str
    start_s: float
    end_s: float
    bytes: int

    @property
    def gbps(self) -> float:
        span = self.end_s - self.start_s
        return self.bytes * 8 / span / 1e9 if span > 0 else 0.0


@dataclass
class DemoResult:
    topology: str
    src: str
    dst: str
    size: int
    link: tuple[str, str]
    intact: bool
    bytes_delivered_intact: int
    cut_s: float
    restore_s: float
    elapsed_s: float
    up_seconds: float
    repath_us: list[float]
    phases: list[PhaseGoodput]
    per_plane_bytes: dict[str, int]
    retransmissions: int
    plot: Path | None
    evidence: Path | None = None  # a failed run's directory, kept (rundir.retire)
    deadline_s: float = DEFAULT_TRANSFER_DEADLINE_S  # the transfer's deadline at its NIC

    def lines(self) -> list[str]:
        a, b = self.link
        out = [
            f"demo: {self.topology} fabric up in {self.up_seconds:.2f} s; {self.src} -> {self.dst}, "
            f"{self.size:,} bytes",
            f"  delivered intact: {self.bytes_delivered_intact:,} of {self.size:,} bytes"
            + (" (SHA-256 matches)" if self.intact else " (DATA DAMAGED OR MISSING)"),
            f"  link {a} -- {b}: cut at {self.cut_s:.3f} s, restored at {self.restore_s:.3f} s; "
            f"transfer done at {self.elapsed_s:.3f} s (deadline {self.deadline_s:g} s)",
        ]
        if self.repath_us:
            out.append(
                f"  repath: {len(self.repath_us)} events, median "
                f"{statistics.median(self.repath_us):,.0f} us, max {max(self.repath_us):,.0f} us"
            )
        else:
            out.append("  repath: no repath events reported")
        out.append("  goodput: " + ", ".join(f"{p.name} {p.gbps:.3f} Gb/s" for p in self.phases))
        out.append(
            "  bytes per plane: "
            + ", ".join(f"plane {p}: {n:,}" for p, n in sorted(self.per_plane_bytes.items()))
            + f"; {self.retransmissions} retransmissions"
        )
        if self.plot is not None:
            out.append(f"  plot: {self.plot}")
        if self.evidence is not None:
            out.append(f"  logs and state of the failed run: {self.evidence}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "topology": self.topology,
            "src": self.src,
            "dst": self.dst,
            "bytes": self.size,
            "link": list(self.link),
            "intact": self.intact,
            "bytes_delivered_intact": self.bytes_delivered_intact,
            "cut_s": self.cut_s,
            "restore_s": self.restore_s,
            "elapsed_s": self.elapsed_s,
            "deadline_s": self.deadline_s,
            "up_seconds": self.up_seconds,
            "repath_us": self.repath_us,
            "goodput_gbps": {p.name: p.gbps for p in self.phases},
            "per_plane_bytes": self.per_plane_bytes,
            "retransmissions": self.retransmissions,
            "plot": str(self.plot) if self.plot else None,
            "evidence": str(self.evidence) if self.evidence else None,
        }


def phase_bounds(cut: T, restore: T, end: T) -> list[tuple[str, T, T]]:
    """The demo's three phases, in either demo's time unit: before the cut, while the
    link was down, after it came back (until ``end``)."""
    zero = 0 * cut  # in the unit and type of the bounds
    return [("before", zero, cut), ("during", cut, restore), ("after", restore, end)]


def phase_goodput(
    timeline: Sequence[Sequence[float]], cut_s: float, restore_s: float, end_s: float
) -> list[PhaseGoodput]:
    """Bytes delivered before the cut, while the link was down and after it came back."""
    phases = [
        PhaseGoodput(name, float(start), end, 0)
        for name, start, end in phase_bounds(cut_s, restore_s, max(end_s, restore_s))
    ]
    for t, _plane, size in timeline:
        index = 0 if t < cut_s else 1 if t < restore_s else 2
        phases[index].bytes += int(size)
    return phases


def _wait_acked(
    fabric: Fabric, src: str, transfer_id: Any, target: int, deadline: float
) -> dict[str, Any]:
    """Polls until ``target`` bytes are acknowledged or the transfer is done."""
    nic = fabric.nic(src)
    while True:
        info = nic.transfer(transfer_id)
        if info.get("failed"):
            raise DemoError(f"the transfer failed: {info['failed']}")
        if info.get("done") or info.get("bytes_acked", 0) >= target:
            return info
        if time.monotonic() > deadline:
            raise DemoError(
                f"the transfer made too little progress: {info.get('bytes_acked', 0):,} of "
                f"{info.get('bytes_total', 0):,} bytes acknowledged before the time limit"
            )
        time.sleep(POLL_S)


@dataclass
class DemoTrace:
    """What the demo has seen so far, so that a failure can still be plotted."""

    transfer_id: Any = None
    t_start: float = 0.0
    cut_s: float | None = None
    restore_s: float | None = None


def plot_path(options: DemoOptions, run_name: str) -> Path:
    if options.plot is not None:
        return options.plot
    return results_dir(run_name, options.local.root) / DEMO_PLOT_NAME


def run_demo(options: DemoOptions | None = None, progress: Progress | None = None) -> DemoResult:
    options = options if options is not None else DemoOptions()
    say = progress if progress is not None else (lambda _text: None)
    spec = mode(options.local.mode)
    say(f"bringing up {DEMO_TOPOLOGY} {spec.where}")
    result = up(DEMO_TOPOLOGY, options.local, launcher(spec.name), say)
    fabric = result.fabric
    trace = DemoTrace()
    try:
        outcome = _run(fabric, options, result.seconds, say, trace)
    except BaseException as exc:
        _plot_partial(fabric, options, trace, exc)
        if options.keep:
            exc.add_note(f"the fabric is left running (--keep): {fabric.rundir.path}")
            raise
        raise retire_failed(fabric.rundir, fabric.state, exc) from exc.__cause__
    if not outcome.intact and not options.keep:
        outcome.evidence = retire(fabric.rundir, "the demo's data did not arrive intact")
    elif not options.keep:
        teardown(fabric.rundir)
    return outcome


def _plot_partial(
    fabric: Fabric, options: DemoOptions, trace: DemoTrace, exc: BaseException
) -> None:
    """After a failure: plots what the sender reports so far, and notes where."""
    if trace.transfer_id is None:
        return
    try:
        info = fabric.nic(options.src, timeout=2.0).transfer(trace.transfer_id)
        end_s = float(info.get("elapsed_s", time.monotonic() - trace.t_start))
        cut = trace.cut_s if trace.cut_s is not None else end_s
        restore = trace.restore_s if trace.restore_s is not None else end_s
        a, b = options.cut
        path = write_transfer_plot(
            plot_path(options, fabric.state.name),
            info.get("timeline", []),
            cut,
            restore,
            max(end_s, 1e-3),
            f"FAILED: MRC on {fabric.topology.name}: {options.src} -> {options.dst}, "
            f"link {a} -- {b} cut",
            info.get("path_timeline", []),
            options.cut,
        )
    except (TestbedError, OSError, ValueError) as failure:
        exc.add_note(f"no plot of the failed transfer: {failure}")
        return
    exc.add_note(f"plot of what the transfer got through: {path}")


def _run(
    fabric: Fabric, options: DemoOptions, up_seconds: float, say: Progress, trace: DemoTrace
) -> DemoResult:
    deadline = time.monotonic() + options.deadline + DEADLINE_GRACE_S
    a, b = options.cut
    say(f"transfer {options.src} -> {options.dst}: {options.size:,} bytes")
    say(deadline_line(options.deadline))
    transfer_id = start_transfer(
        fabric, options.src, options.dst, options.size, deadline_s=options.deadline
    )
    t_start = time.monotonic()
    trace.transfer_id, trace.t_start = transfer_id, t_start
    info = _wait_acked(fabric, options.src, transfer_id, int(options.size * CUT_FRACTION), deadline)
    if info.get("done"):
        raise DemoError(
            f"the transfer finished before the link could be cut ({options.size:,} bytes is too "
            "little for this machine); give more with --bytes"
        )
    # The sender's timeline counts from when its WRITEs were posted (after it made the
    # data), on the machine-wide monotonic clock: count the cut from there too, and from
    # the moment it is asked for (applying it to both switches takes tens of ms).
    if info.get("started_ns") is not None:
        t_start = int(info["started_ns"]) / 1e9
        trace.t_start = t_start
    cut_s = time.monotonic() - t_start
    fabric.link_down(a, b)
    trace.cut_s = cut_s
    say(f"cut {a} -- {b} at {cut_s:.3f} s")
    info = _wait_acked(
        fabric, options.src, transfer_id, int(options.size * RESTORE_FRACTION), deadline
    )
    restore_s = time.monotonic() - t_start
    fabric.link_up(a, b)
    trace.restore_s = restore_s
    say(f"restored {a} -- {b} at {restore_s:.3f} s")
    try:
        info = fabric.nic(options.src).wait_transfer(
            transfer_id,
            max(1.0, deadline - time.monotonic()),
            peers=(fabric.nic(options.dst),),
        )
    except NicControlError as exc:
        raise DemoError(str(exc)) from None
    if info.get("failed"):
        raise DemoError(f"the transfer failed: {info['failed']}")
    intact = delivered_intact(fabric, options.src, options.dst, info)
    elapsed = float(info.get("elapsed_s", time.monotonic() - t_start))
    timeline = info.get("timeline", [])
    plot = write_transfer_plot(
        plot_path(options, fabric.state.name),
        timeline,
        cut_s,
        restore_s,
        elapsed,
        f"MRC on {fabric.topology.name}: {options.src} -> {options.dst}, link {a} -- {b} cut",
        info.get("path_timeline", []),
        options.cut,
    )
    repaths = [float(event.get("repath_time_us", 0.0)) for event in info.get("repath_events", [])]
    return DemoResult(
        topology=fabric.topology.name,
        src=options.src,
        dst=options.dst,
        size=options.size,
        link=(a, b),
        intact=intact,
        bytes_delivered_intact=int(info.get("bytes_delivered_intact", 0)),
        cut_s=cut_s,
        restore_s=restore_s,
        elapsed_s=elapsed,
        up_seconds=up_seconds,
        repath_us=repaths,
        phases=phase_goodput(timeline, cut_s, restore_s, elapsed),
        per_plane_bytes={str(k): int(v) for k, v in info.get("per_plane_bytes", {}).items()},
        retransmissions=int(info.get("retransmissions", 0)),
        plot=plot,
        deadline_s=options.deadline,
    )


# ---------------------------------------------------------------------- virtual mode

VIRTUAL_DEFAULT_BYTES = 32 * 1024 * 1024
VIRTUAL_BIN_NS = 10_000  # 10 us goodput bins (the phase figures)
VIRTUAL_PLOT_BIN_NS = 20_000  # the plot's: 10 us bins show the EV ring's rhythm, not goodput


@dataclass(frozen=True)
class VirtualDemoOptions:
    """The demo on :mod:`vfabric` (the default mode): same story, virtual time, 100 Gb/s."""

    size: int = VIRTUAL_DEFAULT_BYTES
    src: str = "nic0"
    dst: str = "nic3"
    cut: tuple[str, str] = ("p0-t0-0", "p0-t1-0")
    seed: int = DEFAULT_SEED
    out_dir: Path | None = None  # default: a fresh directory under the run root
    pcap: bool = False


@dataclass
class VirtualDemoResult:
    topology: str
    src: str
    dst: str
    size: int
    link: tuple[str, str]
    seed: int
    line_rate_gbps: float  # the sender's, all planes together
    planes: int
    intact: bool
    bytes_delivered_intact: int
    cut_ns: int
    restore_ns: int
    completion_ns: int | None
    repath_us: list[float]
    goodput_fraction: dict[str, float]
    retransmitted_bytes: int
    event_log_sha256: str
    out_dir: Path
    plot: Path | None
    wall_s: float  # the whole demo: building the fabric, the run, results and plot
    run_wall_s: float  # the simulation alone (the event loop: VirtualFabric.run)
    failure: str | None = None

    def lines(self) -> list[str]:
        a, b = self.link
        done = (
            f"transfer done at {self.completion_ns / 1000:,.1f} us"
            if self.completion_ns is not None
            else f"TRANSFER NOT DONE ({self.failure})"
        )
        out = [
            f"demo (virtual time): {self.topology}, {self.src} -> {self.dst}, {self.size:,} bytes, "
            f"{self.planes} planes x {self.line_rate_gbps / self.planes:g} Gb/s NIC ports, "
            f"seed {self.seed}",
            f"  delivered intact: {self.bytes_delivered_intact:,} of {self.size:,} bytes"
            + (" (byte-exact)" if self.intact else " (DATA DAMAGED OR MISSING)"),
            f"  link {a} -- {b}: cut at {self.cut_ns / 1000:,.1f} us, restored at "
            f"{self.restore_ns / 1000:,.1f} us; {done}",
        ]
        if self.repath_us:
            out.append(
                f"  repath time: {max(self.repath_us):,.1f} us (first packet lost on the cut "
                f"path -> last packet sent on it; {len(self.repath_us)} event(s))"
            )
        else:
            out.append("  repath time: no repath event measured")
        out.append(
            f"  goodput (fraction of {self.line_rate_gbps:g} Gb/s line rate): "
            + ", ".join(f"{k} {v:.2f}" for k, v in self.goodput_fraction.items())
            + f"; {self.retransmitted_bytes:,} bytes retransmitted"
        )
        out.append(f"  event-log sha256: {self.event_log_sha256}")
        out.append(f"  wall time: {self.wall_s:.1f} s, of which {self.run_wall_s:.1f} s simulating")
        out.append(f"  hot path: {hotpath.summary()}")
        out.append(f"  results: {self.out_dir} (plot: {self.plot})")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": "virtual",
            "hot_path": hotpath.describe(),
            "topology": self.topology,
            "src": self.src,
            "dst": self.dst,
            "bytes": self.size,
            "link": list(self.link),
            "seed": self.seed,
            "line_rate_gbps": self.line_rate_gbps,
            "planes": self.planes,
            "intact": self.intact,
            "bytes_delivered_intact": self.bytes_delivered_intact,
            "cut_ns": self.cut_ns,
            "restore_ns": self.restore_ns,
            "completion_ns": self.completion_ns,
            "repath_us": self.repath_us,
            "goodput_fraction": self.goodput_fraction,
            "retransmitted_bytes": self.retransmitted_bytes,
            "event_log_sha256": self.event_log_sha256,
            "out_dir": str(self.out_dir),
            "plot": str(self.plot) if self.plot else None,
            "wall_s": self.wall_s,
            "run_wall_s": self.run_wall_s,
            "failure": self.failure,
        }


def default_results_dir(name: str = DEMO_RUN_NAME) -> Path:
    """A fresh directory for the demo's results under the run root; never inside the
    source tree (a run root that falls there is replaced by the system's temp dir)."""
    root = default_root().resolve()
    source = Path(__file__).resolve().parent.parent
    if root == source or source in root.parents:
        root = Path(tempfile.gettempdir()) / "mrc-testbed"
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{name}-virtual-", dir=root)) / "results"


def phase_fractions(
    delivered: Sequence[float], bin_ns: int, bounds: Sequence[tuple[str, int, int]], rate: float
) -> dict[str, float]:
    """Goodput of each phase (start, end ns) as a fraction of ``rate`` Gb/s, from a
    delivered-Gb/s series in bins of ``bin_ns``."""
    out = {}
    for name, start, end in bounds:
        first, last = start // bin_ns, max(start // bin_ns, -(-end // bin_ns))
        window = delivered[first:last]
        span = (last - first) * bin_ns
        out[name] = (sum(window) * bin_ns / span / rate) if span > 0 and window else 0.0
    return out


def run_virtual_demo(
    options: VirtualDemoOptions | None = None, progress: Progress | None = None
) -> VirtualDemoResult:
    """The demo on the virtual-time fabric (see the module docstring)."""
    from vfabric import VirtualFabric
    from vfabric.faults import LinkDown, LinkUp
    from vfabric.plots import PlotRun, write_scenario_plot

    options = options if options is not None else VirtualDemoOptions()
    say = progress if progress is not None else (lambda _text: None)
    out_dir = options.out_dir if options.out_dir is not None else default_results_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    fabric = VirtualFabric(
        DEMO_TOPOLOGY,
        seed=options.seed,
        event_log=out_dir / "events.jsonl",
        pcap_dir=out_dir / "pcap" if options.pcap else None,
        bin_ns=VIRTUAL_BIN_NS,
    )
    a, b = options.cut
    topo = fabric.topology
    try:
        topo.link(*fabric.link_key(a, b))  # the cut must be a link of the topology
        line_rate = sum(link.rate_gbps for link in topo.links_of(options.src))  # every port
        nominal_ns = int(options.size * 8 / line_rate)
        cut_ns = int(round(nominal_ns * CUT_FRACTION, -4))
        restore_ns = int(round(nominal_ns * RESTORE_FRACTION, -4))
        transfer = fabric.transfer(options.src, options.dst, options.size)
        fabric.schedule(LinkDown(cut_ns, a, b))
        fabric.schedule(LinkUp(restore_ns, a, b))
    except Exception:
        fabric.close()
        raise
    say(
        f"virtual fabric {topo.name}: {options.src} -> {options.dst} {options.size:,} bytes, "
        f"cut {a} -- {b} at {cut_ns / 1000:g} us, restore at {restore_ns / 1000:g} us"
    )
    failure: str | None = None
    interrupted = False
    plot: Path | None = None
    run_started = time.perf_counter()
    try:
        fabric.run(progress=lambda now: say(f"virtual time {now / 1000:,.0f} us"))
        failure = transfer.failure
    except KeyboardInterrupt:  # Ctrl-C: the results say the run did not end
        failure, interrupted = "interrupted (Ctrl-C) before the run ended", True
        raise
    except Exception as exc:  # a failed run still writes what it has
        failure = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        run_wall_s = time.perf_counter() - run_started
        results = fabric.results()
        results["demo"] = {
            "cut_ns": cut_ns,
            "restore_ns": restore_ns,
            "failure": failure,
            "interrupted": interrupted,
        }
        (out_dir / "results.json").write_text(json.dumps(results, indent=1, default=str))
        goodput = fabric.goodput()
        total_evs = len(transfer.sender.evs.entries()) if transfer.sender is not None else 0
        end_ns = max(fabric.now, restore_ns)
        try:
            plot = write_scenario_plot(
                out_dir / "demo.png",
                [PlotRun("goodput", fabric.goodput(VIRTUAL_PLOT_BIN_NS))],
                title=f"MRC on {topo.name} (virtual time, P4 switches): {options.src} -> "
                f"{options.dst}, {a} -- {b} cut and restored",
                end_ns=end_ns,
                events=[(cut_ns, f"link {a} -- {b} cut"), (restore_ns, "link restored")],
                spans=[(cut_ns, restore_ns, "link down")],
                capacity_gbps=line_rate,
                ev_changes=[c for c in fabric.ev_state_changes() if c["nic"] == options.src],
                total_evs=total_evs,
                ev_nic=options.src,
                focus_plane=next((sw.plane for sw in topo.switches if sw.name in (a, b)), None),
            )
        finally:
            fabric.close()
            if failure is not None:
                say(f"the run failed ({failure}); what it produced is in {out_dir}")
    delivered = [sum(col) for col in zip(*goodput["per_plane"].values())]
    end = transfer.completion_ns if transfer.completion_ns is not None else fabric.now
    fractions = phase_fractions(
        delivered, goodput["bin_ns"], phase_bounds(cut_ns, restore_ns, end), line_rate
    )
    repath = [us for r in results["repaths"] for us in r["repath_us"] if us is not None]
    info = results["transfers"][transfer.id]
    return VirtualDemoResult(
        topology=topo.name,
        src=options.src,
        dst=options.dst,
        size=options.size,
        link=(a, b),
        seed=options.seed,
        line_rate_gbps=line_rate,
        planes=topo.plane_count,
        intact=transfer.intact,
        bytes_delivered_intact=transfer.bytes_verified,
        cut_ns=cut_ns,
        restore_ns=restore_ns,
        completion_ns=transfer.completion_ns,
        repath_us=repath,
        goodput_fraction=fractions,
        retransmitted_bytes=int(info["retransmitted_bytes"]),
        event_log_sha256=results["event_log_sha256"],
        out_dir=out_dir,
        plot=plot,
        wall_s=time.perf_counter() - started,
        run_wall_s=run_wall_s,
        failure=failure,
    )
