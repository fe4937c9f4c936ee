"""``mrc-testbed up --tdf N`` in local mode end to end (issue 30): the run records N, the
switches and NICs get the dilated links and transport, and a transfer is delivered intact."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from nic_emu.config import NicConfig
from testbed import cli
from testbed import rundir as rd
from testbed.fabric import Fabric
from testbed.traffic import run_transfer
from topologies import load

from .conftest import free_bases
from .test_local_integration import _p4emu_switch_missing

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        _p4emu_switch_missing(), reason="p4emu-switch (p4emu.server.main) is not installed yet"
    ),
]
TDF = 1024


def test_up_tdf_runs_the_dilated_fabric(capsys: pytest.CaptureFixture[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="mrt-", dir="/tmp") as root:
        udp, grpc = free_bases(load("tiny"))
        argv = ["up", "tiny", "--tdf", str(TDF), "--run-dir", root]
        argv += ["--base-port", str(udp), "--grpc-base-port", str(grpc)]
        assert cli.main(argv) == 0
        assert f"time dilated x{TDF}" in capsys.readouterr().out
        fabric = Fabric.open(None, Path(root))
        try:
            assert fabric.state.settings["tdf"] == TDF
            nic0 = json.loads(fabric.rundir.file("nics", "nic0.json").read_text())
            assert nic0["transport"]["rto_min_ns"] == NicConfig().rto_min_ns * TDF
            assert nic0["transport"]["port_rate_bps"] == NicConfig().port_rate_bps // TDF
            plain = {(link.a, link.b): link for link in load("tiny").links()}
            for link in fabric.topology.links():
                assert link.rate_gbps == plain[(link.a, link.b)].rate_gbps / TDF
                assert link.delay_us == plain[(link.a, link.b)].delay_us * TDF
            outcome = run_transfer(fabric, "nic0", "nic3", 256 * 1024, timeout=240)
            assert outcome.intact and outcome.info["failed"] is None
        finally:
            rd.teardown(fabric.rundir)
