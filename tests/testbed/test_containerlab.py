"""``mrc-testbed export --containerlab``: valid against containerlab's schema (a copy in
tests/testbed/data, see its README), one link per topology link and plane, every node running
what Mininet mode runs, and a controller configuration that reaches every switch."""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from controller.cli import build_parser as controller_parser
from controller.endpoints import load_endpoints
from p4emu.server.options import parse_options
from testbed import cli, layout
from testbed.containerlab import (
    CONFIG_MOUNT,
    CONTROLLER_NODE,
    P4RUNTIME_PORT,
    ClabOptions,
    container_name,
    default_image,
    export_containerlab,
)
from testbed.exceptions import TestbedError
from testbed.mininet_mode import VETH_MTU
from topologies import Topology, load, loads

from .conftest import OVERRIDDEN

SCHEMA = json.loads((Path(__file__).parent / "data" / "clab.schema.json").read_text())
COMPOSE = yaml.safe_load((Path(__file__).parents[2] / "docker-compose.yml").read_text())
# The schema's port pattern uses \p{N}\p{L} (Unicode digits and letters), which Python's re
# does not know; [^\W_] is the same class.
UNICODE_ALNUM = r"[\p{N}\p{L}]"
# Test ids that are not the marker name "bmv2" (tests/conftest.py skips items with that
# keyword where BMv2 is not installed; exporting needs no BMv2).
TARGETS = ["p4emu", "bmv2"]
TARGET_IDS = ["to-p4emu", "to-simple-switch"]


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:  # jsonschema keyword
    if validator.is_type(instance, "string") and not re.search(
        pattern.replace(UNICODE_ALNUM, r"[^\W_]"), instance
    ):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


Validator = jsonschema.validators.extend(jsonschema.Draft7Validator, {"pattern": _pattern})


def validate(document: dict[str, Any]) -> None:
    Validator(SCHEMA).validate(document)


def export(tmp_path: Path, topology: str | Topology = "tiny", **options: Any) -> dict[str, Any]:
    path = tmp_path / "lab.clab.yml"
    export_containerlab(topology, path, ClabOptions(**options))
    return yaml.safe_load(path.read_text())


def script(tmp_path: Path, lab: str, node: str) -> list[str]:
    return (tmp_path / f"{lab}.config" / "nodes" / f"{node}.sh").read_text().splitlines()


def exec_argv(lines: list[str]) -> list[str]:
    (last,) = [line for line in lines if line.startswith("exec ")]
    return shlex.split(last.removeprefix("exec "))


@pytest.mark.parametrize("topology", ["tiny", "small"])
@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_export_is_valid_against_containerlabs_schema(
    tmp_path: Path, topology: str, target: str
) -> None:
    document = export(tmp_path, topology, target=target)
    validate(document)
    assert document["name"] == f"mrc-{topology}"


def test_the_schema_check_rejects_what_containerlab_would() -> None:
    good = {"name": "lab", "topology": {"nodes": {"a": {"kind": "linux"}}}}
    validate(good)
    for bad in (
        {"name": "-lab", "topology": {}},
        {"name": "lab", "topology": {"nodes": {"a": {"kind": "no-such-kind"}}}},
        {"name": "lab", "topology": {"nodes": {"a": {"ports": ["9559:99999"]}}}},
        {"name": "lab", "topology": {"nodes": {}, "links": [{"type": "veth", "endpoints": []}]}},
        {"name": "lab", "topology": {"nodes": {"a": {"kind": "linux", "colour": "red"}}}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            validate(bad)


@pytest.mark.parametrize("topology", ["tiny", "small"])
def test_one_link_per_topology_link_and_plane_each_interface_once(
    tmp_path: Path, topology: str
) -> None:
    topo = load(topology)
    document = export(tmp_path, topology)
    links = document["topology"]["links"]
    expected = {
        frozenset(
            f"{end.node}:{name}"
            for end, name in zip(
                (link.a, link.b), layout.link_interface_names(topo, link), strict=True
            )
        )
        for link in topo.links()
    }
    assert {frozenset(link["endpoints"]) for link in links} == expected
    assert len(links) == len(list(topo.links()))
    assert {link["mtu"] for link in links} == {VETH_MTU}
    uses = Counter(end for link in links for end in link["endpoints"])
    assert set(uses.values()) == {1}
    planes = Counter(topo.switch(link.b.node).plane for link in topo.links())
    assert set(planes) == set(range(topo.plane_count))


def test_nodes_switches_nics_and_the_controller_on_one_image(tmp_path: Path) -> None:
    topo = load("tiny")
    nodes = export(tmp_path)["topology"]["nodes"]
    assert set(nodes) == {sw.name for sw in topo.switches} | {n.name for n in topo.nics} | {
        CONTROLLER_NODE
    }
    assert {node["image"] for node in nodes.values()} == {default_image("p4emu")}
    assert {node["kind"] for node in nodes.values()} == {"linux"}
    for name, node in nodes.items():
        assert node["cmd"] == f"sh {CONFIG_MOUNT}/nodes/{name}.sh"
        assert node["binds"] == [f"./mrc-tiny.config:{CONFIG_MOUNT}:ro"]


def test_default_image_is_the_one_docker_compose_builds() -> None:
    image = COMPOSE["services"]["fabric"]["image"]
    for target in ("p4emu", "bmv2"):
        assert default_image(target) == image.replace("${TARGET:-p4emu}", target).replace(
            "${MRC_IMAGE_TAG:-latest}", "latest"
        )


def test_p4runtime_ports_are_published_at_the_controllers_default_addresses(
    tmp_path: Path,
) -> None:
    topo = load("small")
    nodes = export(tmp_path, "small", grpc_base_port=30000)["topology"]["nodes"]
    published = {sw.name: nodes[sw.name]["ports"] for sw in topo.switches}
    expected = layout.grpc_endpoints(topo, 30000)
    for name, ports in published.items():
        assert ports == [f"{layout.grpc_port(expected[name])}:{P4RUNTIME_PORT}"]
    assert all("ports" not in nodes[nic.name] for nic in topo.nics)


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_switch_nodes_run_the_switch_on_their_link_interfaces(tmp_path: Path, target: str) -> None:
    topo = load("tiny")
    export(tmp_path, target=target)
    for sw in topo.switches:
        lines = script(tmp_path, "mrc-tiny", sw.name)
        argv = exec_argv(lines)
        interfaces = {
            link.endpoint(sw.name).port: layout.switch_interface(
                sw.name, link.endpoint(sw.name).port
            )
            for link in topo.links_of(sw.name)
        }
        if target == "p4emu":
            assert argv[0] == "p4emu-switch"
            options = parse_options(argv[1:])
            assert {spec.port: spec.interface for spec in options.interfaces} == interfaces
            assert options.grpc_address == f"0.0.0.0:{P4RUNTIME_PORT}"
            assert options.link_delays_us == {port: 1.0 for port in interfaces}
        else:
            assert argv[0] == "simple_switch_grpc"
            assert "--link-delay-us" not in argv
            assert [argv[i + 1] for i, a in enumerate(argv) if a == "-i"] == [
                f"{port}@{name}" for port, name in sorted(interfaces.items())
            ]
            assert argv[argv.index("--grpc-server-addr") + 1] == f"0.0.0.0:{P4RUNTIME_PORT}"
        # Waits for every interface containerlab attaches, then prepares it.
        assert f"for i in {' '.join(sorted(interfaces.values()))}; do" in lines
        for name in interfaces.values():
            assert f"ip link set {name} mtu {VETH_MTU}" in lines
            assert f"ip link set {name} up" in lines


def test_link_rates_and_rate_scale_reach_both_ends(tmp_path: Path) -> None:
    topo = loads(OVERRIDDEN)
    export(tmp_path, topo, rate_scale=0.01)
    for link in topo.links():
        lower, upper = layout.link_interface_names(topo, link)
        rate = f"htb rate {link.rate_gbps * 1000 * 0.01:.3f}mbit"
        for node, name in ((link.a.node, lower), (link.b.node, upper)):
            lines = script(tmp_path, "mrc-overridden", node)
            (line,) = [x for x in lines if x.startswith(f"tc class replace dev {name} ")]
            assert rate in line


def test_nic_nodes_serve_their_configuration_on_afpacket_ports(tmp_path: Path) -> None:
    topo = load("tiny")
    export(tmp_path, transport={"ev_count": 64}, seed=7)
    config_dir = tmp_path / "mrc-tiny.config"
    assert yaml.safe_load((config_dir / "topology.yaml").read_text())["name"] == "tiny"
    for nic in topo.nics:
        argv = exec_argv(script(tmp_path, "mrc-tiny", nic.name))
        assert argv == ["nic-emu", "serve", "--config", f"{CONFIG_MOUNT}/nics/{nic.name}.json"]
        config = json.loads((config_dir / "nics" / f"{nic.name}.json").read_text())
        assert config["topology"] == f"{CONFIG_MOUNT}/topology.yaml"
        assert config["transport"] == {"ev_count": 64}
        assert config["seed"] == 7 + nic.index
        assert {plane: port["interface"] for plane, port in config["ports"].items()} == {
            str(plane): layout.nic_interface(nic.name, plane) for plane in range(topo.plane_count)
        }
        assert {port["driver"] for port in config["ports"].values()} == {"afpacket"}


def test_controller_pushes_then_watches_every_switch_by_its_lab_name(tmp_path: Path) -> None:
    topo = load("tiny")
    export(tmp_path, target="bmv2", lab="fabric-a")
    config_dir = tmp_path / "fabric-a.config"
    endpoints = load_endpoints(config_dir / "endpoints.yaml", topo)
    assert {name: e.address for name, e in endpoints.items()} == {
        sw.name: f"{container_name('fabric-a', sw.name)}:{P4RUNTIME_PORT}" for sw in topo.switches
    }
    lines = script(tmp_path, "fabric-a", CONTROLLER_NODE)
    push = shlex.split(re.fullmatch(r"until (.*); do sleep 2; done", lines[-2])[1])
    watch = exec_argv(lines)
    for argv, command in ((push, "push"), (watch, "watch")):
        args = controller_parser().parse_args(argv[1:])
        assert args.command == command
        assert args.target == "bmv2"
        assert str(args.topology) == f"{CONFIG_MOUNT}/topology.yaml"
        assert str(args.endpoints) == f"{CONFIG_MOUNT}/endpoints.yaml"


def test_existing_files_are_not_overwritten_without_force(tmp_path: Path) -> None:
    path = tmp_path / "lab.clab.yml"
    path.write_text("mine\n")
    with pytest.raises(TestbedError, match=r"lab\.clab\.yml exists; use --force"):
        export_containerlab("tiny", path)
    assert path.read_text() == "mine\n"
    assert not (tmp_path / "mrc-tiny.config").exists()
    export_containerlab("tiny", path, ClabOptions(force=True))
    validate(yaml.safe_load(path.read_text()))


def test_an_existing_configuration_directory_is_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "mrc-tiny.config").mkdir()
    with pytest.raises(TestbedError, match=r"mrc-tiny\.config exists"):
        export_containerlab("tiny", tmp_path / "lab.clab.yml")
    assert not (tmp_path / "lab.clab.yml").exists()


@pytest.mark.parametrize("lab", ["-x", "a b", "lab/1", ""])
def test_lab_names_containerlab_refuses_are_refused(tmp_path: Path, lab: str) -> None:
    with pytest.raises(TestbedError, match="not valid for containerlab"):
        export_containerlab("tiny", tmp_path / "lab.clab.yml", ClabOptions(lab=lab))
    assert list(tmp_path.iterdir()) == []


def test_cli_export_writes_the_lab_and_reports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tiny.clab.yml"
    assert cli.main(["export", "tiny", "--containerlab", str(path), "--target", "bmv2"]) == 0
    out = capsys.readouterr().out
    assert "wrote lab mrc-tiny: 8 switches, 4 NICs, 1 controller, 16 links" in out
    assert f"containerlab deploy -t {path}" in out
    document = yaml.safe_load(path.read_text())
    validate(document)
    assert {n["image"] for n in document["topology"]["nodes"].values()} == {
        "mrc-testbed/bmv2:latest"
    }


@pytest.mark.parametrize(
    ("argv", "message", "code"),
    [
        # a bad input file is 2 (docs/exit-codes.md), an export that fails is 1
        (["export", "no-such-topology", "--containerlab", "{path}"], "no-such-topology", 2),
        (
            ["export", "tiny", "--containerlab", "{path}", "--lab=-bad"],
            "not valid for containerlab",
            1,
        ),
        (["export", "tiny", "--containerlab", "{missing}/x.clab.yml"], "cannot write", 1),
    ],
)
def test_cli_export_errors_are_one_line_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str, code: int
) -> None:
    args = [a.format(path=tmp_path / "x.clab.yml", missing=tmp_path / "file") for a in argv]
    (tmp_path / "file").write_text("not a directory")
    assert cli.main(args) == code
    err = capsys.readouterr().err
    assert err.startswith("mrc-testbed export: ") and message in err
    assert "Traceback" not in err


def test_cli_export_needs_the_containerlab_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["export", "tiny"]) == 2  # clikit: usage errors are returned
    assert "--containerlab" in capsys.readouterr().err


HOSTS = ("192.0.2.10", "192.0.2.11", "192.0.2.12")


def lab_documents(tmp_path: Path, hosts: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        yaml.safe_load((tmp_path / f"lab.host{i}.clab.yml").read_text()) for i in range(len(hosts))
    ]


@pytest.mark.parametrize("hosts", [HOSTS[:2], HOSTS])
def test_across_hosts_planes_spread_and_cross_host_links_are_vxlan_pairs(
    tmp_path: Path, hosts: tuple[str, ...]
) -> None:
    topo = load("small")
    export_containerlab("small", tmp_path / "lab.clab.yml", ClabOptions(hosts=hosts))
    assert not (tmp_path / "lab.clab.yml").exists()
    documents = lab_documents(tmp_path, hosts)
    for document in documents:
        validate(document)
        assert document["name"] == "mrc-small"
    placed = {name: i for i, d in enumerate(documents) for name in d["topology"]["nodes"]}
    for sw in topo.switches:
        assert placed[sw.name] == sw.plane % len(hosts)
    for nic in topo.nics:
        assert placed[nic.name] == 0
    assert placed[CONTROLLER_NODE] == 0

    seen: Counter[frozenset[str]] = Counter()
    vxlan: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    for i, document in enumerate(documents):
        for link in document["topology"]["links"]:
            if link.get("type") == "vxlan":
                vxlan.setdefault(link["vni"], []).append((i, link))
            else:
                assert {placed[e.split(":")[0]] for e in link["endpoints"]} == {i}
                seen[frozenset(link["endpoints"])] += 1
    for vni, sides in vxlan.items():
        assert len(sides) == 2, vni
        (here, a), (there, b) = sides
        assert here != there
        assert (a["remote"], b["remote"]) == (hosts[there], hosts[here])
        assert a["dst-port"] == b["dst-port"] == 4789
        ends = {f"{x['endpoint']['node']}:{x['endpoint']['interface']}" for x in (a, b)}
        for end in ends:
            assert placed[end.split(":")[0]] in (here, there)
        seen[frozenset(ends)] += 1
    expected = Counter(
        frozenset(
            f"{end.node}:{name}"
            for end, name in zip(
                (link.a, link.b), layout.link_interface_names(topo, link), strict=True
            )
        )
        for link in topo.links()
    )
    assert seen == expected
    # Only NIC links of planes away from host 0 cross hosts.
    crossing = [
        link
        for link in topo.links()
        if topo.switch(link.b.node).plane % len(hosts) != 0 and link.a.node.startswith("nic")
    ]
    assert len(vxlan) == len(crossing)


def test_across_hosts_the_controller_reaches_remote_switches_at_their_published_port(
    tmp_path: Path,
) -> None:
    topo = load("tiny")
    export_containerlab("tiny", tmp_path / "lab.clab.yml", ClabOptions(hosts=HOSTS[:2]))
    endpoints = load_endpoints(tmp_path / "mrc-tiny.config" / "endpoints.yaml", topo)
    published = layout.grpc_endpoints(topo)
    for sw in topo.switches:
        expected = (
            f"{container_name('mrc-tiny', sw.name)}:{P4RUNTIME_PORT}"
            if sw.plane % 2 == 0
            else f"{HOSTS[1]}:{layout.grpc_port(published[sw.name])}"
        )
        assert endpoints[sw.name].address == expected


@pytest.mark.parametrize(
    ("hosts", "message"),
    [
        (("192.0.2.1", "host-b"), "'host-b' is not an IP address"),
        (("192.0.2.1", "192.0.2.1"), "hosts must be distinct"),
    ],
)
def test_bad_hosts_are_refused_before_anything_is_written(
    tmp_path: Path, hosts: tuple[str, ...], message: str
) -> None:
    with pytest.raises(TestbedError, match=message):
        export_containerlab("tiny", tmp_path / "lab.clab.yml", ClabOptions(hosts=hosts))
    assert list(tmp_path.iterdir()) == []


def test_cli_export_across_hosts_says_where_each_file_goes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tiny.clab.yml"
    argv = ["export", "tiny", "--containerlab", str(path), "--hosts", "192.0.2.1,192.0.2.2"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    for i, host in enumerate(("192.0.2.1", "192.0.2.2")):
        assert f"on {host} (with mrc-tiny.config/ beside it): containerlab deploy -t " in out
        assert (tmp_path / f"tiny.host{i}.clab.yml").is_file()
