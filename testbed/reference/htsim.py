"""htsim's side of the differential: the connection matrix, the command line, the run,
and the parsing of its output (docs/reference-htsim.md, "One description, both inputs"
and "What is compared").

htsim_uec is found through ``$MRC_HTSIM`` (the binary), else ``shared/htsim/bin/htsim_uec``
in the folder that holds the clone (CI keeps a copy there). Per flow it prints its
completion (``Flow Uec_S_D flowId N ... finished at T``, µs); its traffic
trace (``-log traffic``, a binary logfile) gives every data packet a sender created
(new and retransmitted) and every trim, per flow; the summary line (``New: ... Rtx: ...
NACKs: ...``) gives the run's totals, which the per-flow counts must add up to.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from testbed.reference.exceptions import HtsimNotFoundError, HtsimOutputError, RunFailedError
from testbed.reference.results import ChildRun, FlowResult, SideRun, run_child
from testbed.reference.workload import FabricShape, Flow, check_flows, end_us

ENV_VAR = "MRC_HTSIM"
REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_BINARY = REPO_ROOT.parent / "shared" / "htsim" / "bin" / "htsim_uec"
HTSIM_HEADER_BYTES = 64  # UecSrc::_hdr_size (uec.cpp): a data packet carries MTU - 64 bytes

STDOUT_NAME = "htsim.stdout"
STDERR_NAME = "htsim.stderr"
CM_NAME = "flows.cm"
TRACE_NAME = "trace.dat"
IDMAP_NAME = "idmap.txt"  # htsim writes it to its working directory

# Binary logfile records (logfile.cpp, Logfile::writeRecord): time (s), type, id, event,
# three values. The stored event is 100 x type + the event (the reader subtracts it).
RECORD = np.dtype(
    [
        ("time", "<f8"),
        ("type", "<u4"),
        ("id", "<u4"),
        ("ev", "<u4"),
        ("val1", "<f8"),
        ("val2", "<f8"),
        ("val3", "<f8"),
    ]
)
TRAFFIC_EVENT = 3  # Logger::TRAFFIC_EVENT (loggertypes.h)
PKT_CREATESEND = 2  # TrafficLogger: a sender created and sent a data packet (new or rtx)
PKT_TRIM = 7  # TrafficLogger: a queue trimmed a data packet

_FINISHED = re.compile(
    r"^Flow (?P<name>\S+) flowId (?P<id>\d+) .*?finished at (?P<t>[0-9.eE+-]+) "
    r"total messages \d+ total packets (?P<packets>\d+)"
)
_SUMMARY = re.compile(
    r"^New: (?P<new>\d+) Rtx: (?P<rtx>\d+) RTS: (?P<rts>\d+) Bounced: (?P<bounced>\d+) "
    r"ACKs: (?P<acks>\d+) NACKs: (?P<nacks>\d+)"
)
_MTU = re.compile(r"^Packet size \(MTU\) is (\d+)")


def find_htsim() -> Path:
    """The htsim_uec binary: ``$MRC_HTSIM``, else the shared copy beside the clone."""
    value = os.environ.get(ENV_VAR, "")
    if value:
        path = Path(value)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise HtsimNotFoundError(f"${ENV_VAR}={value} is not an executable file")
        return path
    if SHARED_BINARY.is_file() and os.access(SHARED_BINARY, os.X_OK):
        return SHARED_BINARY
    raise HtsimNotFoundError(
        f"htsim_uec not found: ${ENV_VAR} is unset and there is no executable "
        f"shared/htsim/bin/htsim_uec beside the repository ({SHARED_BINARY})"
    )


def missing_reason() -> str | None:
    """Why the differential cannot run here (for a test's skip), or None."""
    try:
        find_htsim()
    except HtsimNotFoundError as exc:
        return str(exc)
    return None


# ---------------------------------------------------------------------- translation


def connection_matrix(hosts: int, flows: Sequence[Flow]) -> str:
    """htsim's .cm text: each flow's start in whole µs (htsim reads no fraction), ids as
    given (1-based)."""
    check_flows(hosts, flows)
    lines = [f"Nodes {hosts}", f"Connections {len(flows)}"]
    lines += [f"{f.src}->{f.dst} id {f.id} start {f.start_us} size {f.size}" for f in flows]
    return "\n".join(lines) + "\n"


def command(
    binary: Path,
    shape: FabricShape,
    flows: Sequence[Flow],
    seed: int,
    cm: Path,
    log: Path,
    *,
    trace: bool,
) -> list[str]:
    """The command line: the fat tree by -nodes/-tiers, the same link speed, latency,
    packet size, trimming depth and ECN band as the virtual fabric. ``trace``: log every
    packet event (``-log traffic``) to ``log``."""
    return [
        str(binary),
        "-nodes",
        str(shape.hosts),
        "-tiers",
        "2",
        "-tm",
        str(cm),
        "-linkspeed",
        str(round(shape.rate_gbps * 1000)),  # Mb/s
        "-hop_latency",
        f"{shape.delay_us:g}",
        "-mtu",
        str(shape.data_frame_bytes),
        "-q",
        str(shape.trim_packets),
        "-ecn",
        str(shape.ecn_low_packets),
        str(shape.ecn_high_packets),
        "-seed",
        str(seed),
        "-end",
        str(end_us(shape, flows)),
        *(["-log", "traffic"] if trace else []),
        "-o",
        str(log),
    ]


# ---------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class HtsimStdout:
    """What htsim's stdout says: the MTU in bytes, each finished flow's name and completion time
    in µs by flow id, and the run's summary counts."""

    mtu: int
    finished: dict[int, tuple[str, float]]  # flow id -> (name, completion µs)
    summary: dict[str, int]  # New, Rtx, RTS, Bounced, ACKs, NACKs (run totals)


def parse_stdout(text: str, where: Path) -> HtsimStdout:
    mtu: int | None = None
    finished: dict[int, tuple[str, float]] = {}
    summary: dict[str, int] | None = None
    for line in text.splitlines():
        if (m := _FINISHED.match(line)) is not None:
            finished[int(m["id"])] = (m["name"], float(m["t"]))
        elif (m := _SUMMARY.match(line)) is not None:
            summary = {k: int(v) for k, v in m.groupdict().items()}
        elif (m := _MTU.match(line)) is not None:
            mtu = int(m[1])
    if mtu is None:
        raise HtsimOutputError("htsim's stdout has no 'Packet size (MTU) is N' line", where)
    if summary is None:
        raise HtsimOutputError("htsim's stdout has no 'New: ... NACKs: N' summary line", where)
    return HtsimStdout(mtu, finished, summary)


def parse_idmap(text: str, where: Path) -> dict[int, str]:
    """idmap.txt: ``<logged id> <name>`` per line."""
    ids: dict[int, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split(" ", 1)
        if len(parts) != 2 or not parts[0].isdigit():
            raise HtsimOutputError(f"{IDMAP_NAME} line {number} is not '<id> <name>'", where)
        ids[int(parts[0])] = parts[1]
    return ids


def parse_trace(path: Path, idmap: dict[int, str], where: Path) -> dict[str, dict[str, int]]:
    """Per flow name: data packets sent (``sent``, new and retransmitted) and ``trims``."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(1 << 20)
    except OSError as exc:
        raise HtsimOutputError(f"cannot read htsim's trace {path.name}: {exc}", where) from None
    marker = head.find(b"# TRACE\n")
    if marker < 0:
        raise HtsimOutputError(f"{path.name} has no '# TRACE' line before its records", where)
    preamble = head[:marker].decode("utf-8", "replace")
    if "# transpose=0" not in preamble:
        raise HtsimOutputError(f"{path.name} is not a record-per-event (untransposed) log", where)
    offset = marker + len(b"# TRACE\n")
    size = path.stat().st_size - offset
    if size % RECORD.itemsize:
        raise HtsimOutputError(
            f"{path.name}: {size} bytes of records is not a whole number of "
            f"{RECORD.itemsize}-byte records",
            where,
        )
    records = np.fromfile(path, dtype=RECORD, offset=offset)
    traffic = records[records["type"] == TRAFFIC_EVENT]
    events = traffic["ev"].astype(np.int64) - 100 * TRAFFIC_EVENT
    out: dict[str, dict[str, int]] = {}
    for key, code in (("sent", PKT_CREATESEND), ("trims", PKT_TRIM)):
        flows, counts = np.unique(traffic["val1"][events == code], return_counts=True)
        for flow, count in zip(flows, counts):
            name = idmap.get(int(flow))
            if name is None:
                raise HtsimOutputError(
                    f"{path.name}: flow id {int(flow)} is not in {IDMAP_NAME}", where
                )
            out.setdefault(name, {"sent": 0, "trims": 0})[key] = int(count)
    return out


def flow_name(flow: Flow) -> str:
    return f"Uec_{flow.src}_{flow.dst}"  # main_uec.cpp's setName


def results_from_output(
    flows: Sequence[Flow],
    stdout: HtsimStdout,
    per_flow: dict[str, dict[str, int]],
    where: Path,
) -> dict[int, FlowResult]:
    """Per flow: completion (htsim prints the time since 0; a flow's completion runs
    from its own start), retransmissions (packets sent beyond the flow's new ones;
    bytes: their payload, as the virtual fabric counts its own),
    trims, and NACKs (htsim's sink NACKs each trimmed header; the run's total NACKs from
    the summary line must equal the trims)."""
    mss = stdout.mtu - HTSIM_HEADER_BYTES
    out: dict[int, FlowResult] = {}
    for f in flows:
        done = stdout.finished.get(f.id)
        if done is None:
            raise RunFailedError(f"htsim: flow {f.id} ({f.src}->{f.dst}) did not finish", where)
        counts = per_flow.get(flow_name(f), {"sent": 0, "trims": 0})
        new = -(-f.size // mss)
        rtx = counts["sent"] - new
        if rtx < 0:
            raise HtsimOutputError(
                f"htsim's trace has {counts['sent']} data packets of flow {f.id}, fewer than "
                f"its {new} new ones",
                where,
            )
        out[f.id] = FlowResult(
            id=f.id,
            fct_us=round(done[1] - f.start_us, 6),
            retransmitted_packets=rtx,
            retransmitted_bytes=rtx * mss,
            trims=counts["trims"],
            nacks=counts["trims"],
        )
    total_rtx = sum(r.retransmitted_packets for r in out.values())
    if total_rtx != stdout.summary["rtx"]:
        raise HtsimOutputError(
            f"per-flow retransmissions from the trace ({total_rtx}) differ from the "
            f"summary's Rtx: {stdout.summary['rtx']}",
            where,
        )
    return out


# ---------------------------------------------------------------------- running


def run(
    shape: FabricShape,
    flows: Sequence[Flow],
    seed: int,
    directory: Path,
    *,
    binary: Path | None = None,
    timeout_s: float = 600.0,
    keep: bool = False,
) -> SideRun:
    """Run htsim on ``flows`` in ``directory`` (created), twice: once timed, as a user
    would run it, and once with its traffic trace on for the per-flow counters (tracing
    every packet costs more than the simulation); both must print the same completions
    and totals. On success the directory is removed unless ``keep``; on failure it stays
    and the error says where."""
    exe = binary if binary is not None else find_htsim()
    matrix = connection_matrix(shape.hosts, flows)  # checks the flows before any file
    directory.mkdir(parents=True, exist_ok=True)
    cm = directory / CM_NAME
    cm.write_text(matrix, encoding="utf-8")
    timed_dir = directory / "timed"
    traced_dir = directory / "traced"
    child, timed = _run_once(exe, shape, flows, seed, cm, timed_dir, timeout_s, trace=False)
    _, traced = _run_once(exe, shape, flows, seed, cm, traced_dir, timeout_s, trace=True)
    if (timed.finished, timed.summary) != (traced.finished, traced.summary):
        raise HtsimOutputError(
            "htsim's traced run differs from its timed run (same inputs and seed)", directory
        )
    try:
        idmap_text = (traced_dir / IDMAP_NAME).read_text(encoding="utf-8")
    except OSError as exc:
        raise HtsimOutputError(f"htsim wrote no readable {IDMAP_NAME}: {exc}", directory) from None
    per_flow = parse_trace(traced_dir / TRACE_NAME, parse_idmap(idmap_text, directory), directory)
    flows_out = results_from_output(flows, timed, per_flow, directory)
    extra: dict[str, Any] = {"summary": timed.summary, "mtu": timed.mtu}
    if not keep:
        shutil.rmtree(directory, ignore_errors=True)
    return SideRun("htsim", flows_out, child.wall_s, child.peak_rss_mib, extra)


def _run_once(
    exe: Path,
    shape: FabricShape,
    flows: Sequence[Flow],
    seed: int,
    cm: Path,
    where: Path,
    timeout_s: float,
    *,
    trace: bool,
) -> tuple[ChildRun, HtsimStdout]:
    where.mkdir(parents=True, exist_ok=True)
    argv = command(exe, shape, flows, seed, cm, where / TRACE_NAME, trace=trace)
    (where / "command.txt").write_text(" ".join(argv) + "\n", encoding="utf-8")
    try:
        child = run_child(
            argv,
            cwd=where,
            stdout=where / STDOUT_NAME,
            stderr=where / STDERR_NAME,
            timeout_s=timeout_s,
        )
    except OSError as exc:
        raise RunFailedError(f"htsim could not be started: {exc}", where) from None
    if child.timed_out:
        raise RunFailedError(f"htsim did not finish within {timeout_s:g} s", where)
    if child.returncode != 0:
        raise RunFailedError(f"htsim exited with status {child.returncode}", where)
    stdout = parse_stdout(
        (where / STDOUT_NAME).read_text(encoding="utf-8", errors="replace"), where
    )
    if stdout.mtu != shape.data_frame_bytes:
        raise HtsimOutputError(
            f"htsim ran with MTU {stdout.mtu}, asked for {shape.data_frame_bytes}", where
        )
    return child, stdout
