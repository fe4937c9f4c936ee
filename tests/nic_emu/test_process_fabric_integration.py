"""The nic-emu processes on the local process fabric (p4emu-switch over loopback UDP):
transfers use every path the failures leave, and a dead peer is named as unreachable
(issue 17)."""

from __future__ import annotations

import os
import re
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed import rundir as rd
from testbed.fabric import Fabric
from testbed.local import up_local
from testbed.options import FabricOptions
from testbed.traffic import TransferError, run_transfer, start_transfer
from topologies import load

from ..testbed.conftest import free_bases, nic_program
from ..testbed.test_local_integration import _p4emu_switch_missing

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(_p4emu_switch_missing(), reason="p4emu-switch is not installed"),
]
SIZE = 4 << 20


@pytest.fixture
def tiny() -> Iterator[Fabric]:
    with tempfile.TemporaryDirectory(prefix="mrt-", dir="/tmp") as root:
        udp, grpc = free_bases(load("tiny"))
        options = FabricOptions(
            root=Path(root), udp_base_port=udp, grpc_base_port=grpc, nic_command=nic_program()
        )
        result = up_local("tiny", options)
        try:
            yield result.fabric
        finally:
            rd.teardown(result.fabric.rundir)


def test_two_switch_failures_leave_a_path_that_carries_the_transfer(tiny: Fabric) -> None:
    """Issue 17: with p1-t1-0 and p0-t0-0 powered off, nic0 -> p1-t0-0 -> p1-t1-1 ->
    p1-t0-1 -> nic3 is intact and carries both directions, byte-exact."""
    tiny.switch_down("p1-t1-0")
    tiny.switch_down("p0-t0-0")
    for src, dst in (("nic0", "nic3"), ("nic3", "nic0")):
        outcome = run_transfer(tiny, src, dst, SIZE, timeout=120)
        assert outcome.intact, outcome.line()


def test_a_dead_peer_process_is_reported_unreachable(tiny: Fabric) -> None:
    run_transfer(tiny, "nic1", "nic2", 64 << 10, timeout=60)  # the peer answered once
    os.kill(tiny.state.processes["nic:nic2"].pid, signal.SIGKILL)
    started = time.monotonic()
    # The NIC's own verdict (the sender's control socket only; no launcher pid check).
    transfer = start_transfer(tiny, "nic1", "nic2", SIZE)
    info = tiny.nic("nic1").wait_transfer(transfer, 120)
    assert re.search(r"peer_unreachable.*nic2 is unreachable", str(info.get("failed"))), info
    # Reported after the process's peer timeout (2 s), not after ~26 s of retries.
    assert time.monotonic() - started < 20
    # The launcher's send checks the processes too, and names the dead one by its pid.
    pid = tiny.state.processes["nic:nic2"].pid
    with pytest.raises(TransferError, match=rf"nic2: the NIC process \(pid {pid}\) has exited"):
        run_transfer(tiny, "nic1", "nic2", SIZE, timeout=120)
