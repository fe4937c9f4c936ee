"""The virtual fabric's side of the differential, in its child process."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from testbed.reference import vfside
from testbed.reference.exceptions import RunFailedError, WorkloadError
from testbed.reference.workload import Flow, Workload


@pytest.mark.integration
def test_child_run_of_a_small_incast(tmp_path: Path) -> None:
    w = Workload("i", 8, "incast", 64 * 1024, fan_in=2, victim=True)
    run = vfside.run(w.shape, w.flows(), 1, tmp_path / "run")
    assert not (tmp_path / "run").exists()  # removed on success
    assert sorted(run.flows) == [1, 2, 3]
    assert all(f.fct_us > 0 for f in run.flows.values())
    assert run.wall_s > run.extra["run_wall_s"] > 0 and run.peak_rss_mib > 20
    assert run.extra["switch_traversals"] > 0 and len(run.extra["event_log_sha256"]) == 64
    again = vfside.run(w.shape, w.flows(), 1, tmp_path / "again")
    assert again.extra["event_log_sha256"] == run.extra["event_log_sha256"]


@pytest.mark.integration
def test_a_run_that_times_out_keeps_its_inputs(tmp_path: Path) -> None:
    w = Workload("p", 8, "permutation", 4096)
    with pytest.raises(RunFailedError, match=r"did not finish within 0\.2 s") as err:
        vfside.run(w.shape, w.flows(), 1, tmp_path / "run", timeout_s=0.2)
    assert err.value.log_dir == tmp_path / "run"
    assert (tmp_path / "run" / vfside.REQUEST_NAME).is_file()


@pytest.mark.integration
def test_a_crashed_child_is_reported_with_its_logs(tmp_path: Path) -> None:
    w = Workload("p", 8, "permutation", 4096)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / vfside.REQUEST_NAME).write_text("not json")
    # the child reads the request it is given: make it unreadable after writing it
    original = Path.write_text

    def corrupt(self: Path, data: str, *args: object, **kwargs: object) -> int:
        if self.name == vfside.REQUEST_NAME:
            data = "{broken"
        return original(self, data, *args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Path, "write_text", corrupt)
        with pytest.raises(RunFailedError, match="exited with status 1") as err:
            vfside.run(w.shape, w.flows(), 1, run_dir)
    assert "JSONDecodeError" in (err.value.log_dir / vfside.STDERR_NAME).read_text()


def test_flows_are_checked_before_any_process() -> None:
    w = Workload("p", 8, "permutation", 4096)
    with pytest.raises(WorkloadError, match="host 9 is not in the fabric"):
        vfside.run(w.shape, [Flow(1, 0, 9, 10, "flow")], 1, Path("unused"))


def test_nic_config_takes_the_fabric_rate_and_base_rtt() -> None:
    shape = Workload("p", 8, "permutation", 4096, rate_gbps=50).shape
    cfg = vfside.nic_config(shape)
    assert (cfg.port_rate_bps, cfg.base_rtt_ns) == (50_000_000_000, shape.base_rtt_ns)


def test_a_late_flow_is_timed_from_its_own_start() -> None:
    """The issue's placement starts the victim late: alone, it takes as long starting at
    30 µs as at 0 (its completion runs from its start), and it does start late."""
    w = Workload("i", 8, "incast", 16 * 1024, fan_in=2, victim=True, victim_start_us=30)
    (victim,) = [f for f in w.flows() if f.role == "victim"]
    at_zero = vfside.simulate(w.shape, [replace(victim, start_us=0)], 1)
    late = vfside.simulate(w.shape, [victim], 1)
    assert late["flows"][victim.id]["fct_us"] == at_zero["flows"][victim.id]["fct_us"] > 0
    assert late["virtual_ns"] >= at_zero["virtual_ns"] + 30_000


def test_simulate_makes_no_digest_of_the_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """It reads fct, retransmissions, trims and NACKs: the transfers' SHA-256 (a pass over
    all the data sent) is never asked for, and every flow still arrives intact."""
    from vfabric.transfers import SentData

    def no_digest(self: SentData) -> str:
        raise AssertionError("simulate asked for a transfer's sha256")

    monkeypatch.setattr(SentData, "sha256", no_digest)
    w = Workload("p", 8, "permutation", 16 * 1024)
    out = vfside.simulate(w.shape, w.flows(), 1)
    assert out["finished"] and not out["failures"]
    assert sorted(out["flows"]) == sorted(f.id for f in w.flows())


def test_leave_flushes_the_output_and_skips_the_teardown() -> None:
    """A child ends through ``leave``: what it printed arrives, its status is the one
    given, and no teardown runs (an atexit hook would print)."""
    code = (
        "import atexit, sys\n"
        "from testbed.reference import vfside\n"
        "atexit.register(lambda: print('teardown ran'))\n"
        "print('result written', end='')\n"
        "sys.stderr.write('a note')\n"
        "vfside.leave(3)\n"
        "print('after leave')\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", code], env=vfside.child_env(), capture_output=True, text=True
    )
    assert child.returncode == 3
    assert child.stdout == "result written"  # flushed, no newline needed, nothing after
    assert child.stderr == "a note"


def test_a_child_starts_without_the_collector_until_its_fabric_is_built() -> None:
    """The child's prelude turns the collector off before the project's imports;
    ``build`` turns it back on, the start-up's objects in the oldest generation."""
    code = (
        "import gc\n"
        "from testbed.reference import vfside\n"
        "from testbed.reference.workload import Workload\n"
        "assert gc.isenabled()  # an import alone changes nothing\n"
        "vfside.start_without_collector()\n"
        "assert not gc.isenabled()\n"
        "w = Workload('i', 8, 'incast', 4096, fan_in=2)\n"
        "fabric, transfers = vfside.build(w.shape, w.flows(), 1)\n"
        "assert gc.isenabled() and gc.get_count()[0] < 50 and gc.get_freeze_count() == 0\n"
        "fabric, transfers = vfside.build(w.shape, w.flows(), 1)  # once: built as before\n"
        "gc.disable()\n"
        "vfside.build(w.shape, w.flows(), 1)\n"
        "assert not gc.isenabled()  # a caller's own choice stays\n"
        "print(len(transfers))\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", code], env=vfside.child_env(), capture_output=True, text=True
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout == "2\n"  # fan_in=2: two flows
    assert vfside.CHILD_PRELUDE.startswith("import gc, sys; gc.disable(); ")
