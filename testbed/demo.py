"""``mrc-testbed demo``: a link failure under load, end to end, on the ``tiny`` fabric.

One driver (:func:`run_demo`) for every mode of the modes registry (:mod:`testbed.modes`):
the demo is a scenario made here (:func:`demo_scenario`: ``tiny``, one transfer from
``nic0`` under T0 0 to ``nic3`` under T0 1, so every path crosses a T1, and a timeline that
cuts the T0-T1 link ``p0-t0-0 -- p0-t1-0``, a silent fabric failure, and restores it),
run through the one fabric interface (:class:`testbed.scenario.fabric.ScenarioFabric`:
schedule, up, start, run, result, down) of the mode: the virtual fabric (``virtual``, the
default: P4 switches and MRC NICs in one deterministic event loop at 100 Gb/s and µs
timers) or the process fabric (``local`` / ``mininet``: switch and nic-emu processes,
time-dilated as every scenario run on it is, docs/testbed.md "Time dilation").

The phases are defined once (:func:`demo_phases`): the link is cut a third of the way
through the transfer's line-rate time and restored at two thirds (rounded to 10 µs), in
scenario time. The rule is the same on both fabrics: on the process fabric a scenario
time is a wall-clock time divided by the time-dilation factor, which slows the fabric to
a rate its processes keep up with, so the phases fall at the same point of the transfer.

It prints bytes intact, the repath time, goodput before / during / after the outage as a
fraction of the sender's line rate (and, in virtual time, the event log's hash), and
writes ``demo.png`` (the standard scenario figure), ``results.json`` (the run's result,
with a ``demo`` block) and, in virtual time, ``events.jsonl`` to its results directory
(``-o DIR``, default a fresh directory under the run root; never the source tree). A
failed demo still writes what it has and says where; on the process fabric its run
directory (logs, NIC event logs, state) moves to ``<root>/failed/`` and the error says
where.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from clikit import hotpath
from testbed import layout
from testbed.exceptions import DemoError, TestbedError
from testbed.modes import mode
from testbed.options import DEFAULT_SEED
from testbed.rundir import default_root
from testbed.scenario.fabric import ScenarioFabric, Variant
from testbed.scenario.model import Assertions, FabricSpec, Scenario, Traffic
from testbed.scenario.results import RunResult
from testbed.scenario.run_options import RunOptions
from topologies import Topology, TopologyError
from topologies import load as load_topology
from topologies.events import LinkRef

DEMO_TOPOLOGY = "tiny"
DEMO_RUN_NAME = "demo"
# Away from the default ports, so the demo runs beside a fabric started with defaults.
DEMO_UDP_BASE_PORT = layout.DEFAULT_UDP_BASE_PORT + 4000
DEMO_GRPC_BASE_PORT = layout.DEFAULT_GRPC_BASE_PORT + 200
# The transfer's size by the mode's clock: in virtual time 32 MiB take 1.4 ms of virtual
# time (a few seconds of wall clock); on the process fabric every ns is TDF ns of wall
# clock (32768 for tiny: 8 MiB are about 11 s of transfer).
DEFAULT_BYTES = {"virtual": 32 * 1024 * 1024, "wall": 8 * 1024 * 1024}
CUT_FRACTION = 1 / 3
RESTORE_FRACTION = 2 / 3
PHASE_ROUND_DIGITS = -4  # the cut and the restore on 10 us boundaries
DEMO_BIN_NS = 10_000  # 10 us goodput bins (the phase figures)
# The run's hard stop: this many times the transfer's line-rate time, plus a floor (a run
# that takes longer did not recover from the cut)
DURATION_FACTOR = 20
DURATION_FLOOR_NS = 1_000_000
DEMO_PLOT_NAME = "demo.png"
DEMO_RESULTS_NAME = "results.json"

Progress = Callable[[str], None]
T = TypeVar("T", int, float)


@dataclass(frozen=True)
class DemoOptions:
    """One demo: the mode, the transfer and where its results go; the process fabric's
    settings (``run_dir``, ports, ``target``, ``tdf``) as for ``mrc-testbed run``."""

    mode: str = "virtual"  # a name of the modes registry
    size: int | None = None  # None: DEFAULT_BYTES of the mode's clock
    src: str = "nic0"
    dst: str = "nic3"
    cut: tuple[str, str] = ("p0-t0-0", "p0-t1-0")
    seed: int = DEFAULT_SEED
    out_dir: Path | None = None  # default: a fresh directory under the run root
    pcap: bool = False  # virtual mode: one pcap per link direction
    run_dir: Path | None = None  # process fabric: where its run directory goes
    udp_base_port: int = DEMO_UDP_BASE_PORT
    grpc_base_port: int = DEMO_GRPC_BASE_PORT
    target: str = "p4emu"  # mininet mode: p4emu or bmv2
    tdf: int | None = None  # process fabric: time-dilation factor (None: the default)

    def transfer_bytes(self) -> int:
        return self.size if self.size is not None else DEFAULT_BYTES[mode(self.mode).clock]

    def run_options(self) -> RunOptions:
        return RunOptions(
            mode=self.mode,
            seed=self.seed,
            run_dir=self.run_dir,
            udp_base_port=self.udp_base_port,
            grpc_base_port=self.grpc_base_port,
            target=self.target,
            tdf=self.tdf,
            pcap=self.pcap,
        )


@dataclass(frozen=True)
class DemoPhases:
    """When the link is cut and restored (scenario ns), from the transfer's line-rate
    time (:func:`demo_phases`)."""

    line_rate_gbps: float  # the sender's, every port together
    nominal_ns: int  # the transfer's time at that rate
    cut_ns: int
    restore_ns: int

    @property
    def duration_ns(self) -> int:
        return DURATION_FACTOR * self.nominal_ns + DURATION_FLOOR_NS


def demo_phases(size: int, line_rate_gbps: float) -> DemoPhases:
    """The demo's phases, the same on every fabric (module docstring); DemoError when the
    transfer is too short to be cut mid-way."""
    nominal_ns = int(size * 8 / line_rate_gbps)
    cut_ns = int(round(nominal_ns * CUT_FRACTION, PHASE_ROUND_DIGITS))
    restore_ns = int(round(nominal_ns * RESTORE_FRACTION, PHASE_ROUND_DIGITS))
    if cut_ns <= 0 or restore_ns <= cut_ns:
        raise DemoError(
            f"{size:,} bytes take {nominal_ns:,} ns at {line_rate_gbps:g} Gb/s: too little "
            "to cut the link mid-way (10 us steps); give more with --bytes"
        )
    return DemoPhases(line_rate_gbps, nominal_ns, cut_ns, restore_ns)


def phase_bounds(cut: T, restore: T, end: T) -> list[tuple[str, T, T]]:
    """The demo's three phases: before the cut, while the link was down, after it came
    back (until ``end``)."""
    zero = 0 * cut  # in the unit and type of the bounds
    return [("before", zero, cut), ("during", cut, restore), ("after", restore, end)]


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


def demo_scenario(
    options: DemoOptions, topology: Topology, phases: DemoPhases, size: int
) -> Scenario:
    """The demo as a scenario: one transfer, the link cut and restored at the phases."""
    link = LinkRef(*options.cut)
    return Scenario(
        name=DEMO_RUN_NAME,
        description="a T0-T1 link cut and restored under one transfer",
        paper="",
        scale="",
        notes="",
        source="mrc-testbed demo",
        topology_ref=DEMO_TOPOLOGY,
        topology=topology,
        seed=options.seed,
        duration_ns=phases.duration_ns,
        fabric=FabricSpec(),
        nic={},
        traffic=(
            Traffic(
                name="demo",
                pattern="pairs",
                pairs=((options.src, options.dst),),
                nbytes=size,
                messages=1,
                connections=1,
                transport="mrc",
                start_ns=0,
            ),
        ),
        timeline=(link.change(phases.cut_ns, up=False), link.change(phases.restore_ns, up=True)),
        assertions=Assertions(),
        negative_controls=(),
        plot_bin_ns=DEMO_BIN_NS,
    )


@dataclass
class DemoResult:
    """The demo's summary, the same on every mode (times in scenario µs: virtual, or the
    process fabric's wall clock divided by its time-dilation factor)."""

    mode: str
    clock: str  # "virtual" or "wall" (testbed.modes)
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
    event_log_sha256: str | None  # the virtual fabric's (the process fabric has one per NIC)
    out_dir: Path
    plot: Path | None
    wall_s: float  # the whole demo: building the fabric, the run, results and plot
    run_wall_s: float  # the run alone (the event loop, or the processes' transfer)
    tdf: int | None = None  # the process fabric's time-dilation factor
    failure: str | None = None
    switch_traversals: int | None = None  # the virtual fabric's count

    def lines(self) -> list[str]:
        a, b = self.link
        done = (
            f"transfer done at {self.completion_ns / 1000:,.1f} us"
            if self.completion_ns is not None
            else f"TRANSFER NOT DONE ({self.failure})"
        )
        where = (
            "virtual time"
            if self.clock == "virtual"
            else f"{self.mode} process fabric, TDF {self.tdf}: wall-clock times / TDF"
        )
        out = [
            f"demo ({where}): {self.topology}, {self.src} -> {self.dst}, {self.size:,} bytes, "
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
        if self.event_log_sha256 is not None:
            out.append(f"  event-log sha256: {self.event_log_sha256}")
        out.append(f"  wall time: {self.wall_s:.1f} s, of which {self.run_wall_s:.1f} s running")
        if self.clock == "virtual":
            out.append(f"  hot path: {hotpath.summary()}")
        out.append(f"  results: {self.out_dir} (plot: {self.plot})")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "clock": self.clock,
            "hot_path": hotpath.describe(),
            "topology": self.topology,
            "src": self.src,
            "dst": self.dst,
            "bytes": self.size,
            "link": list(self.link),
            "seed": self.seed,
            "tdf": self.tdf,
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
            "switch_traversals": self.switch_traversals,
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
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root)) / "results"


@dataclass
class _Run:
    """What the driver has seen of one demo run (a failed run still writes it)."""

    result: RunResult | None = None
    failure: str | None = None
    interrupted: bool = False
    run_wall_s: float = 0.0
    plot: Path | None = None
    notes: list[str] = field(default_factory=list)


def run_demo(options: DemoOptions | None = None, progress: Progress | None = None) -> DemoResult:
    """The demo on ``options.mode`` (see the module docstring)."""
    options = options if options is not None else DemoOptions()
    say = progress if progress is not None else (lambda _text: None)
    spec = mode(options.mode)
    size = options.transfer_bytes()
    topology = load_topology(DEMO_TOPOLOGY)
    try:
        line_rate = sum(link.rate_gbps for link in topology.links_of(options.src))
    except TopologyError as exc:
        raise DemoError(f"{DEMO_TOPOLOGY}: {exc}") from None
    phases = demo_phases(size, line_rate)
    scenario = demo_scenario(options, topology, phases, size)
    out_dir = options.out_dir if options.out_dir is not None else default_results_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    fabric = spec.make(
        scenario,
        Variant(name="demo"),
        options.run_options(),
        out_dir=out_dir,
        progress=lambda now: say(f"scenario time {now / 1000:,.0f} us"),
    )
    fabric.schedule(scenario.timeline)  # an unknown cut link is refused here
    a, b = options.cut
    say(
        f"{DEMO_TOPOLOGY} {spec.where}: {options.src} -> {options.dst} {size:,} bytes, "
        f"cut {a} -- {b} at {phases.cut_ns / 1000:g} us, restore at "
        f"{phases.restore_ns / 1000:g} us"
    )
    run = _drive(fabric, scenario, phases, out_dir, say)  # raises unless it has a result
    return _summary(options, spec.clock, scenario, phases, run, out_dir, started)


def _drive(
    fabric: ScenarioFabric, scenario: Scenario, phases: DemoPhases, out_dir: Path, say: Progress
) -> _Run:
    """The steps of a run on ``fabric``; a failed run writes what it has and tears the
    fabric down with its failure (the process fabric keeps its evidence)."""
    run = _Run()
    error: BaseException | None = None
    try:
        fabric.up()
        fabric.start(fabric.flows())
        run_started = time.perf_counter()
        try:
            fabric.run(scenario.duration_ns)
        finally:
            run.run_wall_s = time.perf_counter() - run_started
        run.result = fabric.result()
        _check_demonstrated(run.result, phases)
    except KeyboardInterrupt as exc:  # Ctrl-C: the results say the run did not end
        error, run.failure, run.interrupted = exc, "interrupted (Ctrl-C) before the run ended", True
        raise
    except Exception as exc:  # a failed run still writes what it has
        error, run.failure = exc, f"{type(exc).__name__}: {exc}"
        raise
    finally:
        try:
            if run.result is None:
                run.result = _partial_result(fabric)
            _write_outputs(scenario, phases, run, out_dir)
        finally:
            fabric.down(error)
            if error is not None:
                say(f"the run failed ({run.failure}); what it produced is in {out_dir}")
                for note in run.notes:
                    error.add_note(note)
    return run


def _partial_result(fabric: ScenarioFabric) -> RunResult | None:
    """What a failed run measured, if its fabric can still say."""
    try:
        return fabric.result()
    except TestbedError:
        return None


def _check_demonstrated(result: RunResult, phases: DemoPhases) -> None:
    """DemoError unless the transfer ran through the cut and arrived intact."""
    transfer = result.transfers[0]
    if transfer.completion_ns is not None and transfer.completion_ns <= phases.cut_ns:
        raise DemoError(
            f"the transfer finished at {transfer.completion_ns / 1000:,.1f} us, before the link "
            f"could be cut ({phases.cut_ns / 1000:,.1f} us); give more with --bytes"
        )
    if not transfer.intact:
        raise DemoError(
            f"the demo's data did not arrive intact: {transfer.bytes_verified:,} of "
            f"{transfer.nbytes:,} bytes verified ({transfer.failure or 'damaged'})"
        )


def _write_outputs(scenario: Scenario, phases: DemoPhases, run: _Run, out_dir: Path) -> None:
    """``results.json`` (the run's result and the demo's phases) and the plot."""
    from testbed.scenario.write import write_plot

    demo = {
        "cut_ns": phases.cut_ns,
        "restore_ns": phases.restore_ns,
        "failure": run.failure,
        "interrupted": run.interrupted,
    }
    data = run.result.to_json() if run.result is not None else {}
    (out_dir / DEMO_RESULTS_NAME).write_text(json.dumps({**data, "demo": demo}, indent=1))
    if run.result is None:
        run.notes.append("no plot: the run produced no result")
        return
    try:
        run.plot = write_plot(scenario, run.result, out_dir / DEMO_PLOT_NAME)
    except (OSError, ValueError) as failure:
        run.notes.append(f"no plot of the run: {failure}")


def _summary(
    options: DemoOptions,
    clock: str,
    scenario: Scenario,
    phases: DemoPhases,
    run: _Run,
    out_dir: Path,
    started: float,
) -> DemoResult:
    result = run.result
    assert result is not None
    transfer = result.transfers[0]
    # the data the receiving ports took in where the fabric counts it (virtual), else
    # what the sender saw acknowledged
    delivered = result.goodput.get("wire") or result.goodput["total"]
    end = transfer.completion_ns if transfer.completion_ns is not None else result.end_ns
    bounds = phase_bounds(phases.cut_ns, phases.restore_ns, end)
    repaths = [ns / 1000 for ns in result.events[0].repath_ns if ns is not None]
    traversals = result.counters.get("switch_traversals")
    return DemoResult(
        mode=options.mode,
        clock=clock,
        topology=scenario.topology.name,
        src=options.src,
        dst=options.dst,
        size=transfer.nbytes,
        link=options.cut,
        seed=result.seed,
        line_rate_gbps=phases.line_rate_gbps,
        planes=scenario.topology.plane_count,
        intact=transfer.intact,
        bytes_delivered_intact=transfer.bytes_verified,
        cut_ns=phases.cut_ns,
        restore_ns=phases.restore_ns,
        completion_ns=transfer.completion_ns,
        repath_us=repaths,
        goodput_fraction=phase_fractions(delivered, result.bin_ns, bounds, phases.line_rate_gbps),
        retransmitted_bytes=result.retransmitted_bytes(),
        event_log_sha256=result.event_log_sha256,
        out_dir=out_dir,
        plot=run.plot,
        wall_s=time.perf_counter() - started,
        run_wall_s=run.run_wall_s,
        tdf=result.fabric.get("tdf"),
        failure=transfer.failure,
        switch_traversals=None if traversals is None else int(traversals),
    )
