"""p4runtime-shell (which pins protobuf < 3.21) drives p4emu-switch from its own venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from p4emu.bundle import device_config_for
from p4emu.frontend import load_program
from p4emu.p4info import p4info_for_program, write_p4info

pytestmark = pytest.mark.integration

HERE = Path(__file__).parent
PROGRAM = HERE / "programs" / "p4rt_demo.p4"
SHELL_VERSION = "0.0.6"
VENV = (
    Path(os.environ.get("MRC_TESTBED_CACHE", Path.home() / ".cache" / "mrc-testbed"))
    / f"p4runtime-shell-{SHELL_VERSION}"
)


@pytest.fixture(scope="module")
def shell_python() -> Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
        result = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", f"p4runtime-shell=={SHELL_VERSION}"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if result.returncode != 0:
            pytest.fail(f"cannot install p4runtime-shell into {VENV}:\n{result.stderr[-2000:]}")
    return python


def test_p4runtime_shell_end_to_end(shell_python: Path, tmp_path: Path) -> None:
    sys.path.insert(0, str(HERE))
    from test_switch_process import SwitchProc, free_udp_port

    sys.path.remove(str(HERE))
    p4info_path = tmp_path / "demo.p4info.txtpb"
    write_p4info(p4info_for_program(load_program(PROGRAM)), p4info_path)
    config_path = tmp_path / "demo.p4emu"
    config_path.write_bytes(device_config_for(PROGRAM))
    ports = {name: (free_udp_port(), free_udp_port()) for name in ("h1", "h2")}
    switch = SwitchProc(
        [
            f"--interface=1@udp:{ports['h1'][1]}/{ports['h1'][0]}",
            f"--interface=2@udp:{ports['h2'][1]}/{ports['h2'][0]}",
            "--cpu-port", "510", "--no-p4", "--", "--grpc-server-addr", "127.0.0.1:0",
        ]
    )  # fmt: skip
    try:
        result = subprocess.run(
            [str(shell_python), str(HERE / "p4runtime_shell_session.py"), switch.address, str(p4info_path), str(config_path), f"{ports['h1'][0]}:{ports['h1'][1]}", f"{ports['h2'][0]}:{ports['h2'][1]}"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        switch.stop()
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["read_after_insert"] == [2]
    assert seen["forwarded"] is True
    assert seen["read_after_modify"] == [1]
    assert seen["counter_packets"] == [1]
    assert seen["register"] == ["1234"]
    assert seen["groups"] == [7] and seen["groups_after_delete"] == []
    ((payload, metadata),) = seen["packet_in"]
    assert bytes.fromhex(payload).endswith(b"to-controller")
    assert int(metadata[0], 16) == 2  # ingress_port
    assert seen["packet_out_received"] is True
    assert seen["read_after_delete"] == 0
