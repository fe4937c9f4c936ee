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

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from controller.artifacts import TARGETS
from testbed import layout
from testbed.exceptions import TestbedError
from testbed.local import nic_config, resolve_topology
from testbed.mininet_mode import (
    VETH_MTU,
    interface_commands,
    link_rate_mbit,
    nic_ports,
    switch_args,
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
# containerlab's rule for lab names (its schema's `name` pattern).
LAB_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9-._]*$")


def default_image(target: str) -> str:
    """The image docker-compose.yml builds for ``target`` (docs/docker.md)."""
    return f"mrc-testbed/{target}:latest"


@dataclass(frozen=True)
class ClabOptions:
    target: str = "p4emu"
    image: str | None = None  # default: default_image(target)
    lab: str | None = None  # default: mrc-<topology name>
    grpc_base_port: int = layout.DEFAULT_GRPC_BASE_PORT  # host port of switch 0's P4Runtime
    rate_scale: float = 1.0
    seed: int = 1
    transport: Mapping[str, Any] = field(default_factory=dict)
    force: bool = False  # overwrite FILE and its configuration directory


@dataclass(frozen=True)
class ClabExport:
    path: Path
    config_dir: Path
    lab: str
    switches: int
    nics: int
    links: int

    def lines(self) -> list[str]:
        return [
            f"wrote {self.path}: lab {self.lab}, {self.switches} switches, {self.nics} NICs, "
            f"1 controller, {self.links} links",
            f"controller configuration: {self.config_dir}/ (topology.yaml, endpoints.yaml, "
            "nics/*.json)",
            f"deploy: containerlab deploy -t {self.path}",
        ]


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


def controller_endpoints(topology: Topology, lab: str) -> dict[str, str]:
    """The controller's endpoints file: every switch by its container name."""
    return {sw.name: f"{container_name(lab, sw.name)}:{P4RUNTIME_PORT}" for sw in topology.switches}


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
            f"0.0.0.0:{P4RUNTIME_PORT}",
            THRIFT_PORT,
            options.seed,
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


def containerlab_files(
    topology: Topology, options: ClabOptions, file_name: str
) -> tuple[str, dict[str, str]]:
    """(lab name, files): ``file_name`` (the containerlab topology) and the configuration
    directory's files, by path relative to the directory ``file_name`` is written to."""
    if options.target not in TARGETS:
        raise TestbedError(f"target must be one of {', '.join(TARGETS)}, got {options.target!r}")
    lab = lab_name(topology, options)
    config = f"{lab}.config"
    image = options.image or default_image(options.target)
    names = [sw.name for sw in topology.switches] + [nic.name for nic in topology.nics]
    if CONTROLLER_NODE in names:
        raise TestbedError(f"the topology has a node named {CONTROLLER_NODE!r}, the controller's")
    host_ports = layout.grpc_endpoints(topology, options.grpc_base_port)

    files: dict[str, str] = {}
    nodes: dict[str, Any] = {}
    for sw in topology.switches:
        node = _node(image, f"./{config}", f"plane-{sw.plane}", "switch", sw.name)
        node["ports"] = [f"{layout.grpc_port(host_ports[sw.name])}:{P4RUNTIME_PORT}"]
        nodes[sw.name] = node
        files[f"{config}/nodes/{sw.name}.sh"] = _switch_script(topology, sw.name, options)
    for nic in topology.nics:
        nodes[nic.name] = _node(image, f"./{config}", "nics", "nic", nic.name)
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
    nodes[CONTROLLER_NODE] = _node(
        image, f"./{config}", "controller", "controller", CONTROLLER_NODE
    )
    files[f"{config}/nodes/{CONTROLLER_NODE}.sh"] = _controller_script(options.target)
    files[f"{config}/topology.yaml"] = yaml.safe_dump(to_mapping(topology), sort_keys=False)
    files[f"{config}/endpoints.yaml"] = yaml.safe_dump(
        controller_endpoints(topology, lab), sort_keys=False
    )
    links = [
        {
            "endpoints": [
                f"{end.node}:{name}"
                for end, name in zip(
                    (link.a, link.b), layout.link_interface_names(topology, link), strict=True
                )
            ],
            "mtu": VETH_MTU,
        }
        for link in topology.links()
    ]
    document = {"name": lab, "topology": {"nodes": nodes, "links": links}}
    files[file_name] = (
        f"# containerlab topology of {topology.name}, written by `mrc-testbed export`"
        " (docs/containerlab.md)\n" + yaml.safe_dump(document, sort_keys=False)
    )
    return lab, files


def export_containerlab(
    topology: str | Path | Topology, path: Path, options: ClabOptions | None = None
) -> ClabExport:
    """Writes the containerlab topology to ``path`` and its configuration directory next
    to it. Refuses to overwrite either unless ``options.force``."""
    options = options if options is not None else ClabOptions()
    topo = resolve_topology(topology)
    lab, files = containerlab_files(topo, options, path.name)
    config_dir = path.parent / f"{lab}.config"
    if not options.force:
        for existing in (path, config_dir):
            if existing.exists():
                raise TestbedError(f"{existing} exists; use --force to overwrite it")
    try:
        for relative, content in files.items():
            target = path.parent / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
    except OSError as exc:
        raise TestbedError(f"cannot write the containerlab export: {exc}") from None
    links = yaml.safe_load(files[path.name])["topology"]["links"]
    return ClabExport(
        path=path,
        config_dir=config_dir,
        lab=lab,
        switches=len(topo.switches),
        nics=len(topo.nics),
        links=len(links),
    )
