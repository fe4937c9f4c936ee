"""htsim's side of the differential: the .cm text, the command line, finding the binary,
and parsing its output, on a recorded sample (``data/incast-8-3to1-victim.*``: htsim_uec
run by ``testbed.reference.htsim.run`` on an 8-host 3:1 incast of 256 KiB flows beside a
512 KiB victim, seed 1; the trace keeps only the records the parser reads, the stdout its
paths made relative). Runs of the real binary are marked ``htsim``."""

from __future__ import annotations

import stat
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from testbed.reference import htsim
from testbed.reference.exceptions import (
    HtsimNotFoundError,
    HtsimOutputError,
    RunFailedError,
    WorkloadError,
)
from testbed.reference.workload import MIB, Flow, Workload

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "incast-8-3to1-victim"
needs_htsim = pytest.mark.skipif(
    htsim.missing_reason() is not None, reason=htsim.missing_reason() or ""
)


def sample_workload() -> Workload:
    return Workload("s", 8, "incast", 256 * 1024, fan_in=3, victim=True)


def test_connection_matrix_text() -> None:
    w = sample_workload()
    text = htsim.connection_matrix(8, w.flows())
    assert text == (SAMPLE.with_suffix(".cm")).read_text(encoding="utf-8")
    assert text.splitlines()[:3] == ["Nodes 8", "Connections 4", "0->6 id 1 start 0 size 262144"]


def test_connection_matrix_gives_each_flow_its_start() -> None:
    late = Workload("s", 8, "incast", 4096, fan_in=3, victim=True, victim_start_us=30)
    lines = htsim.connection_matrix(8, late.flows()).splitlines()
    assert [line.split(" start ")[1].split()[0] for line in lines[2:]] == ["0", "0", "0", "30"]


def test_connection_matrix_refuses_a_host_out_of_range() -> None:
    with pytest.raises(WorkloadError, match=r"flows\[0\]\.dst: host 8 is not in the fabric"):
        htsim.connection_matrix(8, [Flow(1, 0, 8, 100, "flow")])


def test_command_line() -> None:
    w = Workload("p", 32, "permutation", 4 * MIB)
    argv = htsim.command(
        Path("/bin/htsim_uec"), w.shape, w.flows(), 7, Path("f.cm"), Path("t.dat"), trace=True
    )
    assert argv == [
        "/bin/htsim_uec",
        *("-nodes", "32", "-tiers", "2", "-tm", "f.cm", "-linkspeed", "100000"),
        *("-hop_latency", "1", "-mtu", "4230", "-q", "28", "-ecn", "6", "22", "-seed", "7"),
        *("-end", str(round(50 * 4 * MIB * 8 / 100_000)), "-log", "traffic", "-o", "t.dat"),
    ]
    plain = htsim.command(
        Path("h"), w.shape, w.flows(), 7, Path("f.cm"), Path("t.dat"), trace=False
    )
    assert "-log" not in plain and plain[-2:] == ["-o", "t.dat"]


def test_parse_recorded_output() -> None:
    where = Path("x")
    out = htsim.parse_stdout(SAMPLE.with_suffix(".stdout").read_text(encoding="utf-8"), where)
    assert out.mtu == 4230
    assert out.summary == {
        "new": 315,
        "rtx": 60,
        "rts": 0,
        "bounced": 0,
        "acks": 294,
        "nacks": 60,
    }
    assert out.finished[1] == ("Uec_0_6", 73.1944)
    assert sorted(out.finished) == [1, 2, 3, 4]
    idmap = htsim.parse_idmap((DATA / "incast-8-3to1-victim.idmap.txt").read_text(), where)
    per_flow = htsim.parse_trace(DATA / "incast-8-3to1-victim.trace.dat", idmap, where)
    assert per_flow["Uec_0_6"] == {"sent": 63 + 24, "trims": 24}
    flows = htsim.results_from_output(sample_workload().flows(), out, per_flow, where)
    first, victim = flows[1], flows[4]
    assert (first.fct_us, first.retransmitted_packets, first.trims, first.nacks) == (
        73.1944,
        24,
        24,
        24,
    )
    assert first.retransmitted_bytes == 24 * (4230 - htsim.HTSIM_HEADER_BYTES)
    assert (victim.fct_us, victim.retransmitted_packets) == (66.6005, 6)
    assert sum(f.retransmitted_packets for f in flows.values()) == out.summary["rtx"]
    # htsim prints the time since 0: a flow that started later completed that much sooner
    late = [replace(f, start_us=10) if f.role == "victim" else f for f in sample_workload().flows()]
    shifted = htsim.results_from_output(late, out, per_flow, where)
    assert shifted[4].fct_us == round(66.6005 - 10, 6) and shifted[1].fct_us == 73.1944


@pytest.mark.parametrize(
    ("drop", "words"),
    [("Packet size (MTU)", "no 'Packet size"), ("New: ", "no 'New: ... NACKs: N'")],
)
def test_unparseable_stdout(drop: str, words: str) -> None:
    text = SAMPLE.with_suffix(".stdout").read_text(encoding="utf-8")
    text = "\n".join(line for line in text.splitlines() if not line.startswith(drop))
    with pytest.raises(HtsimOutputError, match=words) as err:
        htsim.parse_stdout(text, Path("logs"))
    assert err.value.log_dir == Path("logs") and "kept in logs" in str(err.value)


def test_flow_that_did_not_finish() -> None:
    text = SAMPLE.with_suffix(".stdout").read_text(encoding="utf-8")
    text = "\n".join(line for line in text.splitlines() if "flowId 3 " not in line)
    out = htsim.parse_stdout(text, Path("x"))
    idmap = htsim.parse_idmap((DATA / "incast-8-3to1-victim.idmap.txt").read_text(), Path("x"))
    per_flow = htsim.parse_trace(DATA / "incast-8-3to1-victim.trace.dat", idmap, Path("x"))
    with pytest.raises(RunFailedError, match=r"flow 3 \(4->6\) did not finish"):
        htsim.results_from_output(sample_workload().flows(), out, per_flow, Path("x"))


def test_trace_and_summary_must_agree() -> None:
    out = htsim.parse_stdout(SAMPLE.with_suffix(".stdout").read_text(encoding="utf-8"), Path("x"))
    idmap = htsim.parse_idmap((DATA / "incast-8-3to1-victim.idmap.txt").read_text(), Path("x"))
    per_flow = htsim.parse_trace(DATA / "incast-8-3to1-victim.trace.dat", idmap, Path("x"))
    per_flow["Uec_0_6"]["sent"] += 1
    with pytest.raises(HtsimOutputError, match=r"from the trace \(61\) differ .* Rtx: 60"):
        htsim.results_from_output(sample_workload().flows(), out, per_flow, Path("x"))
    per_flow["Uec_0_6"]["sent"] = 3
    with pytest.raises(HtsimOutputError, match="fewer than its 63 new ones"):
        htsim.results_from_output(sample_workload().flows(), out, per_flow, Path("x"))


def test_bad_idmap() -> None:
    with pytest.raises(HtsimOutputError, match=r"idmap\.txt line 2 is not"):
        htsim.parse_idmap("1 PacketFlow\nPacketFlow\n", Path("x"))


def write_trace(path: Path, preamble: bytes, records: np.ndarray, extra: bytes = b"") -> Path:
    path.write_bytes(preamble + records.tobytes() + extra)
    return path


def test_bad_traces(tmp_path: Path) -> None:
    rec = np.zeros(2, dtype=htsim.RECORD)
    rec["type"] = htsim.TRAFFIC_EVENT
    rec["ev"] = 100 * htsim.TRAFFIC_EVENT + htsim.PKT_TRIM
    rec["val1"] = 9
    good = b": x=1\n# transpose=0\n# TRACE\n"
    ok = write_trace(tmp_path / "ok.dat", good, rec)
    assert htsim.parse_trace(ok, {9: "Uec_1_2"}, tmp_path) == {"Uec_1_2": {"sent": 0, "trims": 2}}
    cases = [
        (write_trace(tmp_path / "a.dat", b"# transpose=0\n", rec), "no '# TRACE' line"),
        (write_trace(tmp_path / "b.dat", b"# transpose=1\n# TRACE\n", rec), "untransposed"),
        (write_trace(tmp_path / "c.dat", good, rec, b"\0" * 5), "whole number of 44-byte"),
        (ok, "flow id 9 is not in idmap.txt"),
        (tmp_path / "missing.dat", "cannot read htsim's trace"),
    ]
    for path, words in cases:
        idmap = {} if words.startswith("flow id") else {9: "Uec_1_2"}
        with pytest.raises(HtsimOutputError, match=words):
            htsim.parse_trace(path, idmap, tmp_path)


def test_find_htsim(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(htsim.ENV_VAR, str(tmp_path / "nope"))
    with pytest.raises(HtsimNotFoundError, match=r"\$MRC_HTSIM=.*nope is not an executable"):
        htsim.find_htsim()
    assert "is not an executable" in (htsim.missing_reason() or "")
    exe = fake_binary(tmp_path, "exit 0")
    monkeypatch.setenv(htsim.ENV_VAR, str(exe))
    assert htsim.find_htsim() == exe and htsim.missing_reason() is None
    monkeypatch.delenv(htsim.ENV_VAR)
    monkeypatch.setattr(htsim, "SHARED_BINARY", tmp_path / "shared" / "htsim_uec")
    with pytest.raises(HtsimNotFoundError, match="MRC_HTSIM is unset and there is no"):
        htsim.find_htsim()


def fake_binary(tmp_path: Path, body: str) -> Path:
    exe = tmp_path / "fake_htsim"
    exe.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_failed_binary_leaves_its_logs(tmp_path: Path) -> None:
    w = sample_workload()
    exe = fake_binary(tmp_path, "echo 'segfault-ish' >&2; exit 3")
    with pytest.raises(RunFailedError, match="htsim exited with status 3") as err:
        htsim.run(w.shape, w.flows(), 1, tmp_path / "run", binary=exe)
    logs = err.value.log_dir
    assert str(logs) in str(err.value)
    assert (logs / htsim.STDERR_NAME).read_text() == "segfault-ish\n"
    assert (logs.parent / htsim.CM_NAME).read_text().startswith("Nodes 8\n")
    assert "-nodes 8" in (logs / "command.txt").read_text()


def test_garbage_output_is_an_output_error(tmp_path: Path) -> None:
    w = sample_workload()
    exe = fake_binary(tmp_path, "echo 'hello'")
    with pytest.raises(HtsimOutputError, match="no 'Packet size"):
        htsim.run(w.shape, w.flows(), 1, tmp_path / "run", binary=exe)


def test_hung_binary_times_out(tmp_path: Path) -> None:
    w = sample_workload()
    exe = fake_binary(tmp_path, "exec sleep 30")
    with pytest.raises(RunFailedError, match=r"did not finish within 0\.5 s"):
        htsim.run(w.shape, w.flows(), 1, tmp_path / "run", binary=exe, timeout_s=0.5)


@pytest.mark.htsim
@pytest.mark.integration
@needs_htsim
def test_real_htsim_reproduces_the_recorded_sample(tmp_path: Path) -> None:
    w = sample_workload()
    run = htsim.run(w.shape, w.flows(), 1, tmp_path / "run")
    assert not (tmp_path / "run").exists()  # removed on success
    recorded = htsim.parse_stdout(SAMPLE.with_suffix(".stdout").read_text(), tmp_path)
    assert {i: f.fct_us for i, f in run.flows.items()} == {
        i: t for i, (_, t) in recorded.finished.items()
    }
    assert run.extra["summary"] == recorded.summary
    assert run.wall_s > 0 and run.peak_rss_mib > 0


@pytest.mark.htsim
@pytest.mark.integration
@needs_htsim
def test_htsims_own_queue_for_our_packet_is_our_trim_depth(tmp_path: Path) -> None:
    """htsim sizes its default queue to one BDP; given our packet size it comes to the
    same number of packets as workload.bdp_packets, which sets our trim depth."""
    w = Workload("p", 8, "permutation", 4096)
    (tmp_path / "f.cm").write_text(htsim.connection_matrix(8, w.flows()))
    argv = htsim.command(
        htsim.find_htsim(), w.shape, w.flows(), 1, tmp_path / "f.cm", tmp_path / "o", trace=False
    )
    q = argv.index("-q")
    del argv[q : q + 2]  # htsim's automatic 1 x BDP queue
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    sizes = {line.split()[-2] for line in out.splitlines() if "QueueSize" in line}
    assert sizes == {str(w.shape.trim_packets * w.shape.data_frame_bytes)}


def test_bad_flows_are_refused_before_any_file(tmp_path: Path) -> None:
    w = sample_workload()
    with pytest.raises(WorkloadError, match="to itself"):
        htsim.run(w.shape, [Flow(1, 2, 2, 10, "flow")], 1, tmp_path / "run", binary=Path("x"))
    assert not (tmp_path / "run").exists()
