"""SetForwardingPipelineConfig through the real gRPC server: a source bundle cannot make the
switch read a host file (issue: file read through the pipeline source)."""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4r

from p4emu import bundle as bundle_module
from p4emu.bundle import SourceBundle, device_config_for
from p4emu.frontend import load_program
from p4emu.p4info import p4info_for_program
from p4emu.server.client import ClientError, P4RuntimeClient
from p4emu.server.service import P4RuntimeService, start_grpc_server
from p4emu.server.switch_device import DeviceSettings, SwitchDevice

PROGRAM = Path(__file__).parent / "programs" / "p4rt_demo.p4"


@pytest.fixture(scope="module")
def rig():
    device = SwitchDevice(DeviceSettings(cpu_port=510))
    grpc_server, port = start_grpc_server(P4RuntimeService(device), "127.0.0.1:0")
    client = P4RuntimeClient(f"127.0.0.1:{port}").connect()
    client.set_pipeline_from_program(PROGRAM)
    yield client, device
    client.close()
    grpc_server.stop(None)


@pytest.mark.parametrize(
    ("files", "include"),
    [
        ({"main.p4": '#include "/etc/passwd"\n'}, '"/etc/passwd"'),
        ({"main.p4": '#include "../../../../etc/hostname"\n'}, '"../../../../etc/hostname"'),
        ({"main.p4": '#include "inc/a.p4"\n', "inc/a.p4": '#include "../../x"\n'}, '"../../x"'),
        ({"main.p4": "#include </etc/passwd>\n"}, "</etc/passwd>"),
        ({"main.p4": '#include "/dev/zero"\n'}, '"/dev/zero"'),
    ],
)
def test_includes_outside_the_bundle_are_refused(rig, files: dict[str, str], include: str) -> None:
    client, device = rig
    running = device.pipeline_config()
    info = p4info_for_program(load_program(PROGRAM))
    config = SourceBundle(main="main.p4", files=files).to_bytes()
    with pytest.raises(ClientError) as error:
        client.set_pipeline(info, config)
    message = str(error.value)
    assert "INVALID_ARGUMENT" in message
    assert f"#include {include} refused: it leads outside" in message
    assert "root" not in message and "p4emu-bundle-" not in message  # nothing of the host
    assert device.pipeline_config() == running  # the running pipeline stays


def test_an_oversized_config_is_refused(rig, monkeypatch: pytest.MonkeyPatch) -> None:
    client, device = rig
    info = p4info_for_program(load_program(PROGRAM))
    monkeypatch.setattr(bundle_module, "MAX_SOURCE_FILE_BYTES", 1000)
    with pytest.raises(ClientError, match=r"INVALID_ARGUMENT: .*over the per-file limit of 1000"):
        client.set_pipeline(info, b"// " + b"x" * 2000)
    assert device.pipeline_config() is not None


def test_the_program_still_loads_from_its_bundle(rig) -> None:
    client, device = rig
    client.set_pipeline(p4info_for_program(load_program(PROGRAM)), device_config_for(PROGRAM))
    config = device.pipeline_config()
    assert isinstance(config, p4r.ForwardingPipelineConfig)
    assert config.p4_device_config == device_config_for(PROGRAM)
