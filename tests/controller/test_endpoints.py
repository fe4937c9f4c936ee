"""Switch addresses: the port convention and the endpoints file."""

from __future__ import annotations

from pathlib import Path

import pytest

import topologies
from controller.endpoints import P4RuntimeTarget, default_endpoints, endpoint_of, load_endpoints
from controller.exceptions import EndpointError


def test_convention_numbers_switches_in_topology_order() -> None:
    topo = topologies.load("tiny")
    endpoints = default_endpoints(topo)
    names = [sw.name for sw in topo.switches]
    assert endpoints[names[0]] == P4RuntimeTarget("127.0.0.1:9559")
    assert endpoints[names[-1]] == P4RuntimeTarget(f"127.0.0.1:{9559 + len(names) - 1}")
    assert default_endpoints(topo, "::1", 50000)["p0-t0-0"].address == "[::1]:50000"


def test_convention_refuses_ports_beyond_65535() -> None:
    with pytest.raises(EndpointError, match=r"ports up to 65542 \(> 65535\)"):
        default_endpoints(topologies.load("tiny"), base_port=65535)


def test_endpoints_file(tmp_path: Path) -> None:
    path = tmp_path / "ep.yaml"
    path.write_text("p0-t0-0: p0-t0-0:9559\np0-t1-0: {address: '[::1]:9560', device_id: 3}\n")
    endpoints = load_endpoints(path, topologies.load("tiny"))
    assert endpoints == {
        "p0-t0-0": P4RuntimeTarget("p0-t0-0:9559"),
        "p0-t1-0": P4RuntimeTarget("[::1]:9560", 3),
    }
    assert str(endpoints["p0-t1-0"]) == "[::1]:9560 (device 3)"
    with pytest.raises(EndpointError, match=r"no P4Runtime address for p1-t0-0 in ep.yaml"):
        endpoint_of(endpoints, "p1-t0-0", "ep.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("p0-t0-0: nowhere\n", "'nowhere' is not HOST:PORT"),
        ("p0-t0-0: host:99999\n", "is not HOST:PORT"),
        ("p9-t0-0: h:1\n", "tiny has no switch named 'p9-t0-0'"),
        ("nic0: h:1\n", "tiny has no switch named 'nic0'"),
        ("p0-t0-0: {address: h:1, port: 3}\n", "unknown key 'port'"),
        ("p0-t0-0: {address: h:1, device_id: -1}\n", "device_id: expected an integer >= 0"),
        ("p0-t0-0: [1, 2]\n", "expected HOST:PORT or"),
        ("- a\n", "expected a mapping"),
        ("p0-t0-0: {address: 7}\n", "address: expected HOST:PORT"),
        ("a: [\n", "not valid YAML"),
    ],
)
def test_bad_endpoints_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "ep.yaml"
    path.write_text(text)
    with pytest.raises(EndpointError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_endpoints(path, topologies.load("tiny"))


def test_missing_endpoints_file(tmp_path: Path) -> None:
    with pytest.raises(EndpointError, match="cannot read endpoints file"):
        load_endpoints(tmp_path / "none.yaml")
