"""``mrc-testbed export TOPO --containerlab FILE``: the fabric as a containerlab topology.

One container per switch (``p4emu-switch`` or BMv2's ``simple_switch_grpc``), one per NIC
(``nic-emu serve``), one for the controller (``mrc-controller push`` then ``watch``), and one
containerlab link (a veth pair) per topology link and plane. Everything a node runs is what
Mininet mode runs for the same topology (:mod:`testbed.mininet_mode`: the switch arguments,
the NIC ports, the per-interface commands, the interface names), so a fabric behaves the
same under containerlab as under ``mrc-testbed up --mode mininet``; containerlab adds the
ability to place nodes on several hosts (docs/containerlab.md).

Next to FILE goes a configuration directory, ``<lab>.config/``, mounted at ``/etc/mrc``
in the NIC and controller nodes:

- ``topology.yaml``: the topology (the controller plans from it, the NICs read it);
- ``endpoints.yaml``: the controller's endpoints file, each switch by its containerlab
  name on the management network (``clab-<lab>-<switch>:9559``);
- ``nics/<nic>.json``: each NIC's nic-emu configuration.

Each switch's P4Runtime port (9559 in its container) is also published on the host at
``grpc_base_port + i`` (switch ``i`` in topology order): the controller's default convention,
so ``mrc-controller push TOPO`` on the containerlab host needs no endpoints file.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from controller.artifacts import TARGETS
from testbed import layout
from testbed.exceptions import TestbedError
from testbed.fabric import switch_args
from testbed.local import nic_config, resolve_topology
from testbed.mininet_mode import (
    VETH_MTU,
    interface_commands,
    link_rate_mbit,
    nic_ports,
)
from testbed.rundir import RunDir
from topologies import Topology, to_mapping

NODE_KIND = "linux"
P4RUNTIME_PORT = 9559  # inside every switch container
THRIFT_PORT = 9090  # BMv2's default; each switch has its own network namespace
CONFIG_MOUNT = Path("/etc/mrc")
NIC_RUN_DIR = Path("/run/mrc")
CONTROLLER_NODE = "controller"
CLAB_PREFIX = "clab"  # containerlab's default container-name prefix: clab-<lab>-<node>
INTERFACE_WAIT_S = 0.2
VXLAN_PORT = 4789  # IANA's VXLAN port
VXLAN_FIRST_VNI = 1000  # link i (topology order) crossing hosts gets VNI 1000 + i
# containerlab's rule for lab names (its schema's `name` pattern).
LAB_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9-._]*$")


def default_image(target: str) -> str:
    """The image docker-compose.yml builds for ``target`` (docs/docker.md)."""
    return f"mrc-testbed/{target}:latest"


@dataclass(frozen=True)
class ClabOptions:
    """How to export a fabric for containerlab: the switch target and image, the lab name, the
    host ports, link rate scale, seed and NIC transport overrides, and the hosts to place it on."""

    target: str = "p4emu"
    image: str | None = None  # default: default_image(target)
    lab: str | None = None  # default: mrc-<topology name>
    grpc_base_port: int = layout.DEFAULT_GRPC_BASE_PORT  # host port of switch 0's P4Runtime
    rate_scale: float = 1.0
    seed: int = 1
    transport: Mapping[str, Any] = field(default_factory=dict)
    force: bool = False  # overwrite FILE and its configuration directory
    # Underlay addresses of the hosts (two or more: one lab file per host, VXLAN between).
    hosts: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClabExport:
    """What an export wrote: the lab files (one per host), the configuration directory, the lab
    name and the counts of switches, NICs and links."""

    paths: tuple[Path, ...]  # one containerlab topology per host
    hosts: tuple[str, ...]
    config_dir: Path
    lab: str
    switches: int
    nics: int
    links: int

    def lines(self) -> list[str]:
        out = [
            f"wrote lab {self.lab}: {self.switches} switches, {self.nics} NICs, 1 controller, "
            f"{self.links} links",
            f"controller configuration: {self.config_dir}/ (topology.yaml, endpoints.yaml, "
            "nics/*.json, nodes/*.sh)",
        ]
        if len(self.paths) == 1:
            return [*out, f"deploy: containerlab deploy -t {self.paths[0]}"]
        for path, host in zip(self.paths, self.hosts, strict=True):
            out.append(
                f"on {host} (with {self.config_dir.name}/ beside it): containerlab deploy -t {path}"
            )
        return out


def lab_name(topology: Topology, options: ClabOptions) -> str:
    name = options.lab if options.lab is not None else f"mrc-{topology.name}"
    if not LAB_NAME.match(name):
        raise TestbedError(
            f"lab name {name!r} is not valid for containerlab: letters, digits, '-', '.', '_', "
            "starting with a letter or digit"
        )
    return name


def container_name(lab: str, node: str) -> str:
    """A node's container (and DNS) name on containerlab's management network."""
    return f"{CLAB_PREFIX}-{lab}-{node}"


def _wait_and_configure(interfaces: Mapping[str, float]) -> list[str]:
    """Shell lines: wait until containerlab has attached every interface, then prepare each
    as Mininet mode does (only ``ip`` and ``tc`` must succeed, as there)."""
    lines = [
        f"for i in {' '.join(interfaces)}; do",
        f"    while [ ! -e /sys/class/net/$i ]; do sleep {INTERFACE_WAIT_S}; done",
        "done",
    ]
    for name, rate_mbit in interfaces.items():
        for command in interface_commands(name, rate_mbit):
            required = command.startswith(("ip ", "tc "))
            lines.append(command if required else f"{command} || true")
    return lines


def _script(role: str, node: str, lines: list[str]) -> str:
    return "\n".join(
        [
            "#!/bin/sh",
            f"# {role} {node}, started by containerlab (mrc-testbed export, docs/containerlab.md)",
            "set -e",
            *lines,
            "",
        ]
    )


def _rates(topology: Topology, node: str, rate_scale: float) -> dict[str, float]:
    """Interface name -> htb rate (Mbit/s) of every link of ``node``, by interface name."""
    rates = {}
    for link in topology.links_of(node):
        end = link.endpoint(node)
        name = (
            layout.switch_interface(node, end.port)
            if node in {sw.name for sw in topology.switches}
            else layout.nic_interface(node, end.port)
        )
        rates[name] = link_rate_mbit(link.rate_gbps, rate_scale)
    return dict(sorted(rates.items()))


def _switch_script(topology: Topology, switch: str, options: ClabOptions) -> str:
    ports = {
        link.endpoint(switch).port: layout.switch_interface(switch, link.endpoint(switch).port)
        for link in topology.links_of(switch)
    }
    program = "simple_switch_grpc" if options.target == "bmv2" else "p4emu-switch"
    argv = [
        program,
        *switch_args(
            options.target,
            topology,
            switch,
            ports,
            None,  # link rates: tc on the container's veths, as in Mininet mode
            grpc_address=f"0.0.0.0:{P4RUNTIME_PORT}",
            seed=options.seed,
            thrift_port=THRIFT_PORT,
        ),
    ]
    return _script(
        "switch",
        switch,
        [
            *_wait_and_configure(_rates(topology, switch, options.rate_scale)),
            f"exec {shlex.join(argv)}",
        ],
    )


def _nic_script(topology: Topology, nic: str, options: ClabOptions) -> str:
    serve = ["nic-emu", "serve", "--config", str(CONFIG_MOUNT / "nics" / f"{nic}.json")]
    return _script(
        "NIC",
        nic,
        [
            f"mkdir -p {NIC_RUN_DIR / 'nics'}",
            *_wait_and_configure(_rates(topology, nic, options.rate_scale)),
            f"exec {shlex.join(serve)}",
        ],
    )


def _controller_script(target: str) -> str:
    args = [
        str(CONFIG_MOUNT / "topology.yaml"),
        "--target",
        target,
        "--endpoints",
        str(CONFIG_MOUNT / "endpoints.yaml"),
    ]
    push = shlex.join(["mrc-controller", "push", *args])
    watch = shlex.join(["mrc-controller", "watch", *args])
    # Switches come up in any order: push until every one is programmed, then watch.
    return _script(
        "controller",
        CONTROLLER_NODE,
        [f"until {push}; do sleep 2; done", f"exec {watch}"],
    )


def _node(image: str, config: str, group: str, role: str, name: str) -> dict[str, Any]:
    return {
        "kind": NODE_KIND,
        "image": image,
        "group": group,
        "binds": [f"{config}:{CONFIG_MOUNT}:ro"],
        "cmd": f"sh {CONFIG_MOUNT / 'nodes' / f'{name}.sh'}",
        "labels": {"mrc-testbed.role": role},
    }


def _host_of(topology: Topology, node: str, hosts: int) -> int:
    """Host index of a node: plane ``p`` on host ``p mod hosts``; NICs and the controller on
    host 0 (a NIC has a port on every plane, so it cannot follow one)."""
    if node in {sw.name for sw in topology.switches}:
        return topology.switch(node).plane % hosts
    return 0


def _check_hosts(hosts: Sequence[str]) -> None:
    for host in hosts:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise TestbedError(
                f"host {host!r} is not an IP address (containerlab's VXLAN links need the "
                "underlay address of each host)"
            ) from None
    if len(set(hosts)) != len(hosts):
        raise TestbedError(f"hosts must be distinct, got {', '.join(hosts)}")


def lab_files(options: ClabOptions, path_name: str, hosts: int) -> list[str]:
    """The containerlab topology file of each host: ``path_name`` itself for one host, else
    ``<stem>.host<i>.clab.yml`` beside it."""
    if hosts <= 1:
        return [path_name]
    stem = path_name.removesuffix(".yml").removesuffix(".yaml").removesuffix(".clab")
    return [f"{stem}.host{i}.clab.yml" for i in range(hosts)]


def containerlab_files(
    topology: Topology, options: ClabOptions, file_name: str
) -> tuple[str, dict[str, str]]:
    """(lab name, files): the containerlab topology ``file_name`` (one per host with
    ``options.hosts``, :func:`lab_files`) and the configuration directory's files, by path
    relative to the directory ``file_name`` is written to."""
    if options.target not in TARGETS:
        raise TestbedError(f"target must be one of {', '.join(TARGETS)}, got {options.target!r}")
    _check_hosts(options.hosts)
    lab = lab_name(topology, options)
    config = f"{lab}.config"
    image = options.image or default_image(options.target)
    names = [sw.name for sw in topology.switches] + [nic.name for nic in topology.nics]
    if CONTROLLER_NODE in names:
        raise TestbedError(f"the topology has a node named {CONTROLLER_NODE!r}, the controller's")
    host_count = max(len(options.hosts), 1)
    published = layout.grpc_endpoints(topology, options.grpc_base_port)

    def host_of(node: str) -> int:
        return _host_of(topology, node, host_count)

    files: dict[str, str] = {}
    nodes: list[dict[str, Any]] = [{} for _ in range(host_count)]
    endpoints: dict[str, str] = {}
    for sw in topology.switches:
        node = _node(image, f"./{config}", f"plane-{sw.plane}", "switch", sw.name)
        host_port = layout.grpc_port(published[sw.name])
        node["ports"] = [f"{host_port}:{P4RUNTIME_PORT}"]
        nodes[host_of(sw.name)][sw.name] = node
        files[f"{config}/nodes/{sw.name}.sh"] = _switch_script(topology, sw.name, options)
        # The controller (host 0) reaches its own host's switches by container name, the
        # others at their host's published port.
        endpoints[sw.name] = (
            f"{container_name(lab, sw.name)}:{P4RUNTIME_PORT}"
            if host_of(sw.name) == 0
            else f"{options.hosts[host_of(sw.name)]}:{host_port}"
        )
    for nic in topology.nics:
        nodes[0][nic.name] = _node(image, f"./{config}", "nics", "nic", nic.name)
        files[f"{config}/nodes/{nic.name}.sh"] = _nic_script(topology, nic.name, options)
        nic_file = nic_config(
            RunDir(NIC_RUN_DIR),
            CONFIG_MOUNT / "topology.yaml",
            nic.name,
            nic_ports(topology, nic.name),
            options.seed + nic.index,
            options.transport,
        )
        files[f"{config}/nics/{nic.name}.json"] = json.dumps(nic_file, indent=1) + "\n"
    nodes[0][CONTROLLER_NODE] = _node(
        image, f"./{config}", "controller", "controller", CONTROLLER_NODE
    )
    files[f"{config}/nodes/{CONTROLLER_NODE}.sh"] = _controller_script(options.target)
    files[f"{config}/topology.yaml"] = yaml.safe_dump(to_mapping(topology), sort_keys=False)
    files[f"{config}/endpoints.yaml"] = yaml.safe_dump(endpoints, sort_keys=False)

    links: list[list[dict[str, Any]]] = [[] for _ in range(host_count)]
    for index, link in enumerate(topology.links()):
        ends = list(zip((link.a, link.b), layout.link_interface_names(topology, link), strict=True))
        sides = [host_of(end.node) for end, _ in ends]
        if sides[0] == sides[1]:
            links[sides[0]].append(
                {"endpoints": [f"{end.node}:{name}" for end, name in ends], "mtu": VETH_MTU}
            )
            continue
        # Across hosts: one VXLAN link on each side, the same VNI, each naming the other host.
        for (end, name), here, there in zip(ends, sides, reversed(sides), strict=True):
            links[here].append(
                {
                    "type": "vxlan",
                    "endpoint": {"node": end.node, "interface": name},
                    "remote": options.hosts[there],
                    "vni": VXLAN_FIRST_VNI + index,
                    "dst-port": VXLAN_PORT,
                    "mtu": VETH_MTU,
                }
            )
    for host, lab_file in enumerate(lab_files(options, file_name, host_count)):
        document: dict[str, Any] = {
            "name": lab,
            "topology": {"nodes": nodes[host], "links": links[host]},
        }
        where = f" (host {host}: {options.hosts[host]})" if host_count > 1 else ""
        files[lab_file] = (
            f"# containerlab topology of {topology.name}{where}, written by `mrc-testbed export`"
            " (docs/containerlab.md)\n" + yaml.safe_dump(document, sort_keys=False)
        )
    return lab, files


def export_containerlab(
    topology: str | Path | Topology, path: Path, options: ClabOptions | None = None
) -> ClabExport:
    """Writes the containerlab topology to ``path`` (one file per host with
    ``options.hosts``) and its configuration directory next to it. Refuses to overwrite
    anything unless ``options.force``."""
    options = options if options is not None else ClabOptions()
    topo = resolve_topology(topology)
    lab, files = containerlab_files(topo, options, path.name)
    config_dir = path.parent / f"{lab}.config"
    lab_paths = [path.parent / name for name in lab_files(options, path.name, len(options.hosts))]
    if not options.force:
        for existing in (*lab_paths, config_dir):
            if existing.exists():
                raise TestbedError(f"{existing} exists; use --force to overwrite it")
    try:
        for relative, content in files.items():
            target = path.parent / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
    except OSError as exc:
        raise TestbedError(f"cannot write the containerlab export: {exc}") from None
    return ClabExport(
        paths=tuple(lab_paths),
        hosts=options.hosts,
        config_dir=config_dir,
        lab=lab,
        switches=len(topo.switches),
        nics=len(topo.nics),
        links=len(list(topo.links())),
    )
