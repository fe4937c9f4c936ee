"""What one side of the differential measured, and how a child process is measured."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testbed.reference.exceptions import HtsimDiffError


@dataclass(frozen=True)
class FlowResult:
    """One flow as one simulator saw it. ``nacks`` are NACKs the sender received."""

    id: int
    fct_us: float  # completion time since the flow's start
    retransmitted_packets: int
    retransmitted_bytes: int  # on the sender's wire
    trims: int  # of this flow's data packets
    nacks: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "fct_us": self.fct_us,
            "retransmitted_packets": self.retransmitted_packets,
            "retransmitted_bytes": self.retransmitted_bytes,
            "trims": self.trims,
            "nacks": self.nacks,
        }


@dataclass
class SideRun:
    """One simulator's run of a flow set: per flow results, cost, and side notes."""

    side: str  # "htsim" or "vfabric"
    flows: dict[int, FlowResult]
    wall_s: float  # the child process, start to exit
    peak_rss_mib: float  # the child process's own peak RSS
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChildRun:
    """How a child process ended: its exit status (-1 when it could not be measured), wall
    seconds, peak RSS in MiB and whether it was killed at its timeout."""

    returncode: int
    wall_s: float
    peak_rss_mib: float
    timed_out: bool


# The launcher: a bare interpreter (-S -E: a few MiB) that forks, execs the command and
# reports its exit status, wall time and rusage. Measuring from the launcher and not from
# this process matters for the RSS: a child's ru_maxrss includes the memory of the
# process it was forked from (the kernel keeps the old address space's high-water mark
# at exec), so a child of a large Python process would report at least that process's
# size. The launcher's own size is the floor of the figure instead.
LAUNCHER = """
import os, signal, sys, time
report, timeout, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
killed = []
def kill(*_):
    killed.append(1)
    os.kill(pid, signal.SIGKILL)
signal.signal(signal.SIGALRM, kill)
signal.setitimer(signal.ITIMER_REAL, timeout)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
signal.setitimer(signal.ITIMER_REAL, 0)
with open(report, "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {wall!r} {usage.ru_maxrss} {len(killed)}")
"""
LAUNCHER_GRACE_S = 30.0  # beyond the command's own timeout, for the launcher itself


def run_child(
    argv: list[str],
    *,
    cwd: Path,
    stdout: Path,
    stderr: Path,
    timeout_s: float,
    env: dict[str, str] | None = None,
) -> ChildRun:
    """Run ``argv`` (``argv[0]`` an absolute path) in ``cwd`` with its output in files:
    its exit status, wall seconds from start to exit and its own peak RSS (``wait4`` in
    :data:`LAUNCHER`); killed after ``timeout_s``."""
    import subprocess  # (here: a child process, which imports this module, starts none)

    report = cwd / ".child-report"
    launcher = [sys.executable, "-S", "-E", "-c", LAUNCHER, str(report), repr(timeout_s), *argv]
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        try:
            subprocess.run(
                launcher,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=env,
                timeout=timeout_s + LAUNCHER_GRACE_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return ChildRun(-1, timeout_s, 0.0, True)
    try:
        code, wall, maxrss_kib, killed = report.read_text(encoding="utf-8").split()
    except (OSError, ValueError):
        return ChildRun(-1, 0.0, 0.0, False)  # the launcher itself failed: see stderr
    report.unlink()
    return ChildRun(int(code), float(wall), int(maxrss_kib) / 1024, killed != "0")


def rss_floor_mib() -> float:
    """The peak RSS :func:`run_child` reports for a command that does nothing (``true``):
    the floor under both sides' peak RSS figures."""
    import shutil
    import tempfile

    exe = shutil.which("true")
    if exe is None:
        raise HtsimDiffError("no 'true' command on PATH to measure the RSS floor")
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        child = run_child([exe], cwd=where, stdout=where / "o", stderr=where / "e", timeout_s=30)
    return round(child.peak_rss_mib, 1)
