"""SwitchDevice in process: pipeline replacement semantics and the controller packet path."""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4r, rpc_code

from p4emu.bundle import device_config_for
from p4emu.frontend import load_program
from p4emu.p4info import p4info_for_program
from p4emu.server.device import DeviceError
from p4emu.server.switch_device import DeviceSettings, SwitchDevice, p4info_mismatch

PROGRAM = Path(__file__).parent / "programs" / "p4rt_demo.p4"


@pytest.fixture(scope="module")
def config() -> p4r.ForwardingPipelineConfig:
    return p4r.ForwardingPipelineConfig(
        p4info=p4info_for_program(load_program(PROGRAM)),
        p4_device_config=device_config_for(PROGRAM),
    )


def table_entry(config: p4r.ForwardingPipelineConfig, mac: int, port: int) -> p4r.Entity:
    table = config.p4info.tables[0]
    forward = next(a for a in config.p4info.actions if a.preamble.name == "DemoIngress.forward")
    entity = p4r.Entity()
    entity.table_entry.table_id = table.preamble.id
    entity.table_entry.match.add(field_id=1).exact.value = mac.to_bytes(6, "big").lstrip(b"\0")
    action = entity.table_entry.action.action
    action.action_id = forward.preamble.id
    action.params.add(param_id=1, value=port.to_bytes(2, "big").lstrip(b"\0"))
    return entity


def group(group_id: int) -> p4r.Entity:
    entity = p4r.Entity()
    entry = entity.packet_replication_engine_entry.multicast_group_entry
    entry.multicast_group_id = group_id
    entry.replicas.add(egress_port=1, instance=1)
    return entity


def state(device: SwitchDevice) -> tuple[int, int]:
    tables = p4r.Entity(table_entry=p4r.TableEntry())
    groups = p4r.Entity()
    groups.packet_replication_engine_entry.multicast_group_entry.SetInParent()
    return len(list(device.read([tables]))), len(list(device.read([groups])))


def test_reconcile_keeps_forwarding_state_and_commit_clears_it(config) -> None:
    device = SwitchDevice(DeviceSettings(cpu_port=510))
    device.commit_pipeline(device.verify_pipeline(config), reconcile=False)
    updates = [
        p4r.Update(type=p4r.Update.INSERT, entity=e)
        for e in (table_entry(config, 0xA, 2), table_entry(config, 0xB, 3), group(4))
    ]
    assert [
        e.canonical_code for e in device.write(updates, p4r.WriteRequest.CONTINUE_ON_ERROR)
    ] == [0, 0, 0]
    assert state(device) == (2, 1)
    device.commit_pipeline(device.verify_pipeline(config), reconcile=True)
    assert state(device) == (2, 1)
    device.commit_pipeline(device.verify_pipeline(config), reconcile=False)
    assert state(device) == (0, 0)


def test_port_down_survives_a_pipeline_change_and_drops_both_ways(config) -> None:
    device = SwitchDevice(DeviceSettings(cpu_port=510))
    sent: list[tuple[int, bytes]] = []
    device.transmit = lambda port, frame: sent.append((port, frame))
    device.commit_pipeline(device.verify_pipeline(config), reconcile=False)
    device.write([p4r.Update(type=p4r.Update.INSERT, entity=table_entry(config, 0xA, 2))], 0)
    frame = (0xA).to_bytes(6, "big") + bytes(6) + b"\x88\xb5payload"
    device.set_port_up(2, False)
    device.commit_pipeline(device.verify_pipeline(config), reconcile=True)
    device.receive(1, frame)
    assert sent == []
    assert device.switch is not None and device.switch.dropped(2, "port_down_tx") == 1
    device.set_port_up(2, True)
    device.receive(1, frame)
    assert sent == [(2, frame)]


def test_packet_out_validation(config) -> None:
    device = SwitchDevice(DeviceSettings(cpu_port=510))
    with pytest.raises(DeviceError, match="no forwarding pipeline"):
        device.packet_out(p4r.PacketOut(payload=b"x"))
    device.commit_pipeline(device.verify_pipeline(config), reconcile=False)
    bad = p4r.PacketOut(payload=b"x")
    bad.metadata.add(metadata_id=9, value=b"\x01")
    with pytest.raises(DeviceError, match="no metadata id 9") as info:
        device.packet_out(bad)
    assert info.value.code == rpc_code.INVALID_ARGUMENT
    wide = p4r.PacketOut(payload=b"x")
    wide.metadata.add(metadata_id=1, value=b"\x02\x00")
    with pytest.raises(DeviceError, match=r"packet_out metadata .*does not fit in 9 bits"):
        device.packet_out(wide)


def test_p4info_mismatch_names_the_difference(config) -> None:
    ours = config.p4info
    assert p4info_mismatch(ours, ours) is None
    other = p4r.ForwardingPipelineConfig().p4info
    other.CopyFrom(ours)
    del other.tables[:]
    assert (
        p4info_mismatch(ours, other)
        == "table 'DemoIngress.l2_fwd' is missing from the given P4Info"
    )
    other.CopyFrom(ours)
    other.actions[0].params.add(id=9, name="extra", bitwidth=1)
    assert "parameters differ" in (p4info_mismatch(ours, other) or "")


def test_pipeline_without_p4info_is_refused(config) -> None:
    device = SwitchDevice(DeviceSettings())
    with pytest.raises(DeviceError, match="has no P4Info"):
        device.verify_pipeline(
            p4r.ForwardingPipelineConfig(p4_device_config=config.p4_device_config)
        )


def test_port_queue_rates_apply_to_each_new_pipeline(config) -> None:
    device = SwitchDevice(DeviceSettings(queue_rate_pps=1000, port_queue_rates_pps={2: 250.0}))
    device.commit_pipeline(device.verify_pipeline(config), reconcile=False)
    first = device.switch
    device.commit_pipeline(device.verify_pipeline(config), reconcile=True)
    assert device.switch is not first
    tm = device.switch.tm
    assert tm.queue_rate(2) == 250.0 and tm.queue_rate(1) == 1000.0
