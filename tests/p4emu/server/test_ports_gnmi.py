from __future__ import annotations

import grpc
import pytest
from finsy.proto import gnmi, gnmi_grpc

from p4emu.server.client import ClientError, PortClient
from p4emu.server.ports import GnmiPortService, PortStatus, interface_path
from p4emu.server.service import P4RuntimeService, start_grpc_server


class IdleDevice:
    """P4Runtime is not exercised here; the service only needs a device id."""

    device_id = 0


class Ports:
    def __init__(self) -> None:
        self.up = {1: True, 2: True}

    def port_statuses(self) -> list[PortStatus]:
        return [
            PortStatus(p, f"veth{p}", up, {"in-pkts": 10 * p}) for p, up in sorted(self.up.items())
        ]

    def set_port_up(self, port: int, up: bool) -> None:
        self.up[port] = up


@pytest.fixture
def gnmi_stub():
    ports = Ports()
    server, port = start_grpc_server(
        P4RuntimeService(IdleDevice()), "127.0.0.1:0", gnmi_service=GnmiPortService(ports)
    )  # type: ignore[arg-type]
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    yield ports, gnmi_grpc.gNMIStub(channel), f"127.0.0.1:{port}"
    channel.close()
    server.stop(None)


def set_enabled(stub, name: str, enabled: bool, leaf=("config", "enabled")) -> gnmi.SetResponse:
    request = gnmi.SetRequest()
    update = request.update.add()
    update.path.CopyFrom(interface_path(name, *leaf))
    update.val.bool_val = enabled
    return stub.Set(request)


def oper_status(stub, name: str) -> dict[str, str]:
    request = gnmi.GetRequest()
    request.path.append(interface_path(name, "state", "oper-status"))
    response = stub.Get(request)
    return {
        u.path.elem[1].key["name"]: u.val.string_val
        for n in response.notification
        for u in n.update
    }


def test_port_down_and_up_by_number_or_name(gnmi_stub) -> None:
    ports, stub, _ = gnmi_stub
    set_enabled(stub, "1", False)
    assert ports.up == {1: False, 2: True}
    assert oper_status(stub, "*") == {"veth1": "DOWN", "veth2": "UP"}
    set_enabled(stub, "veth1", True)
    assert oper_status(stub, "veth1") == {"veth1": "UP"}


def test_counters_are_readable(gnmi_stub) -> None:
    _, stub, _ = gnmi_stub
    request = gnmi.GetRequest()
    request.path.append(interface_path("2", "state", "counters"))
    updates = [u for n in stub.Get(request).notification for u in n.update]
    assert [(u.path.elem[-1].name, u.val.uint_val) for u in updates] == [("in-pkts", 20)]


@pytest.mark.parametrize(
    ("name", "leaf", "code", "message"),
    [
        ("9", ("config", "enabled"), grpc.StatusCode.NOT_FOUND, "no port named '9'"),
        ("1", ("state", "oper-status"), grpc.StatusCode.INVALID_ARGUMENT, "not settable"),
    ],
)
def test_bad_set_paths(gnmi_stub, name, leaf, code, message) -> None:
    ports, stub, _ = gnmi_stub
    with pytest.raises(grpc.RpcError) as info:
        set_enabled(stub, name, False, leaf)
    assert info.value.code() == code and message in info.value.details()
    assert ports.up == {1: True, 2: True}


def test_set_needs_a_bool_and_paths_outside_interfaces_are_refused(gnmi_stub) -> None:
    ports, stub, _ = gnmi_stub
    request = gnmi.SetRequest()
    update = request.update.add()
    update.path.CopyFrom(interface_path("1", "config", "enabled"))
    update.val.string_val = "false"
    with pytest.raises(grpc.RpcError, match="needs a bool_val"):
        stub.Set(request)
    request = gnmi.GetRequest()
    request.path.add().elem.add(name="system")
    with pytest.raises(grpc.RpcError) as info:
        stub.Get(request)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    assert ports.up == {1: True, 2: True}


def test_port_client_sets_several_ports_all_or_nothing_and_reads_state(gnmi_stub) -> None:
    ports, _, address = gnmi_stub
    with PortClient(address) as client:
        client.set_ports({1: False, "veth2": False})
        assert ports.up == {1: False, 2: False}
        assert client.ports() == {"veth1": False, "veth2": False}
        with pytest.raises(ClientError, match=r"NOT_FOUND: no port named '7'"):
            client.set_ports({1: True, 7: True})
        assert ports.up == {1: False, 2: False}  # the valid half was not applied either
        client.set_ports({"*": True})
        assert client.ports() == {"veth1": True, "veth2": True}
        assert client.ports("veth2") == {"veth2": True}
        assert client.counters() == {"veth1": {"in-pkts": 10}, "veth2": {"in-pkts": 20}}


def test_admin_status_and_enabled_follow_the_port(gnmi_stub) -> None:
    _, stub, _ = gnmi_stub
    set_enabled(stub, "2", False)
    request = gnmi.GetRequest()
    request.path.append(interface_path("veth2", "state"))
    request.path.append(interface_path("veth2", "config", "enabled"))
    leaves = {
        "/".join(e.name for e in u.path.elem[2:]): u.val
        for n in stub.Get(request).notification
        for u in n.update
    }
    assert leaves["state/admin-status"].string_val == "DOWN"
    assert leaves["state/oper-status"].string_val == "DOWN"
    assert leaves["config/enabled"].bool_val is False


def test_port_client_reports_an_unreachable_switch() -> None:
    with PortClient("127.0.0.1:1", timeout=1.0) as client, pytest.raises(ClientError):
        client.ports()
