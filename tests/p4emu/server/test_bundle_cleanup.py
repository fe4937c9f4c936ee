"""A pushed bundle leaves nothing behind: p4emu-switch writes it in a private directory
(``$TMPDIR/p4emu-PID-*``) that goes when the switch stops, also by SIGTERM in the middle of
a push (docs/p4emu-switch.md, "Trust model": temporary files)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from p4emu.bundle import device_config_for
from p4emu.frontend import load_program
from p4emu.p4info import p4info_for_program
from p4emu.p4rt_client.messages import pipeline_config, set_pipeline_request
from p4emu.server.client import P4RuntimeClient

pytestmark = pytest.mark.integration
PROGRAM = Path(__file__).resolve().parents[3] / "p4src" / "mrc_switch.p4"  # a bundle
WAIT_S = 60.0


def test_sigterm_during_a_push_removes_the_pushed_source(tmp_path: Path) -> None:
    request = set_pipeline_request(
        0,
        1,
        pipeline_config(p4info_for_program(load_program(PROGRAM)), device_config_for(PROGRAM)),
    )
    switch = subprocess.Popen(
        [sys.executable, "-m", "p4emu.server.main", "--no-p4", "--", "--grpc-server-addr",
         "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )  # fmt: skip
    try:
        assert switch.stdout is not None
        match = re.search(r"P4Runtime on ([\d.]+):(\d+)", switch.stdout.readline())
        assert match, switch.stderr.read() if switch.stderr else ""
        with P4RuntimeClient(f"{match[1]}:{match[2]}") as client:  # the primary
            push = client.stub.SetForwardingPipelineConfig.future(request, timeout=WAIT_S)
            deadline = time.monotonic() + WAIT_S
            bundles: list[Path] = []
            while not bundles and not push.done() and time.monotonic() < deadline:
                bundles = list(tmp_path.glob("p4emu-*/p4emu-bundle-*/*.p4"))
                time.sleep(0.002)
            assert list(tmp_path.glob("p4emu-*")), "the switch made no private directory"
            switch.send_signal(signal.SIGTERM)
            assert switch.wait(WAIT_S) == 0
    finally:
        if switch.poll() is None:
            switch.kill()
            switch.wait()
    assert list(tmp_path.iterdir()) == []
