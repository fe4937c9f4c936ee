"""Mininet mode: the fabric as a Mininet network (root).

- Every switch is a :class:`P4Switch` — a Mininet ``Switch`` in the root namespace whose
  ``start()`` runs ``p4emu-switch`` (or BMv2's ``simple_switch_grpc``) with one
  ``-i PORT@<switch>-eth<PORT>`` per veth port. P4Runtime listens on 127.0.0.1, as in
  local mode, so the same controller code programs it.
- Every NIC is a Mininet ``Host`` (its own network namespace) with one interface per plane,
  ``<nic>-p<plane>``, and runs ``nic-emu serve`` with ``afpacket`` ports inside that
  namespace (``mnexec -a``).
- Every link is a veth pair with offloads off (checksum/segmentation offloads would hand
  the switches frames that never exist on a wire), IPv6 off (no kernel ND/MLD frames in
  the fabric) and a 9,000-byte MTU (MRC data frames are 4,230 bytes). Its rate is a tc
  ``htb`` class on both ends (rate x ``rate_scale``), for both targets; the switches get no
  queue rate of their own (a second limiter in series, counting frames rather than bytes,
  would make two queues build instead of one).
- Link delay (tc ``netem`` is not available on this kernel) is added by each link's sender,
  as in local mode: with p4emu every switch port gets ``--link-delay-us PORT=US`` and every
  NIC port ``delay_us``; BMv2 has no such option, so with ``--target bmv2`` each NIC adds a
  whole path's one-way delay to what it sends (reported at ``up``). There is no random loss.

The network outlives the launcher: switch processes and NIC processes are detached and
recorded in the run directory; each NIC process keeps its host's namespace alive after the
Mininet shell exits. ``mrc-testbed down`` stops the processes (which frees the namespaces
and the veth pairs that end in them) and deletes the recorded root-namespace interfaces.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from controller.artifacts import Pipeline, pipeline_for
from testbed import layout
from testbed.exceptions import ModeError, PortPlanError, TestbedError
from testbed.fabric import (
    SwitchLaunch,
    SwitchStarter,
    nic_command,
    switch_args,
    switch_command,
)
from testbed.local import (
    Launch,
    UpResult,
    check_ports_free,
    up,
)
from testbed.options import FabricOptions
from testbed.rundir import RUN_ENV, ProcessRecord, RunDir, RunState
from topologies import AddressPlan, Topology

Progress = Callable[[str], None]
# Jumbo frames: an MRC data frame is 4,230 bytes (4,096 B payload + headers), more with an
# SRH; veth's default 1,500 would drop it.
VETH_MTU = 9000


def check_environment() -> None:
    """ModeError unless this process can build a Mininet network."""
    if os.geteuid() != 0:
        raise ModeError(
            "--mode mininet needs root (network namespaces, veth pairs, tc); run it with sudo, "
            "or use --mode local"
        )
    for tool, package in (
        ("mnexec", "mininet"),
        ("ip", "iproute2"),
        ("tc", "iproute2"),
        ("ethtool", "ethtool"),
    ):
        if shutil.which(tool) is None:
            raise ModeError(f"--mode mininet needs {tool} (Debian package {package})")
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        raise ModeError(
            "--mode mininet needs the mininet Python library: pip install mininet "
            "(Debian's mininet package provides mnexec)"
        ) from None


def link_rate_mbit(rate_gbps: float, rate_scale: float) -> float:
    return rate_gbps * 1000.0 * rate_scale


def interface_commands(name: str, rate_mbit: float, queue_packets: int | None = None) -> list[str]:
    """Shell commands that prepare one veth end: IPv6 off, jumbo MTU, offloads off, htb rate
    (with ``queue_packets``, a FIFO of the link's depth behind it: the queue where the rate
    makes frames wait, instead of the kernel's 1,000 frames), up."""
    fifo = (
        []
        if queue_packets is None
        else [f"tc qdisc replace dev {name} parent 5:1 handle 10: pfifo limit {queue_packets}"]
    )
    return [
        f"sysctl -q -w net.ipv6.conf.{name}.disable_ipv6=1",
        f"ip link set {name} mtu {VETH_MTU}",
        f"ethtool -K {name} rx off tx off sg off tso off gso off gro off",
        f"tc qdisc replace dev {name} root handle 5: htb default 1",
        f"tc class replace dev {name} parent 5: classid 5:1 htb rate {rate_mbit:.3f}mbit burst 15k",
        *fifo,
        f"ip link set {name} up",
    ]


def _run_root(command: str) -> str:
    result = subprocess.run(command, shell=True, capture_output=True, text=True, check=False)
    return result.stdout + result.stderr if result.returncode else ""


def _configure(run: Callable[[str], str], name: str, rate_mbit: float, queue_packets: int) -> None:
    for command in interface_commands(name, rate_mbit, queue_packets):
        output = run(command)
        # ethtool refuses features a veth cannot change; everything else must succeed.
        if command.startswith(("tc ", "ip ")) and "rror" in output:
            raise ModeError(f"{command!r} failed: {output.strip()}")


@contextlib.contextmanager
def _marked_environment(run_id: str) -> Iterator[None]:
    """Processes Mininet starts itself (node shells) carry the run id, like ours."""
    previous = os.environ.get(RUN_ENV)
    os.environ[RUN_ENV] = run_id
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(RUN_ENV, None)
        else:
            os.environ[RUN_ENV] = previous


def _switch_class() -> type:
    from mininet.node import Switch

    class P4Switch(Switch):  # type: ignore[misc]
        """A Mininet switch whose datapath is a P4Runtime switch process on its veths."""

        def __init__(
            self, name: str, launch: Callable[[Any], None] | None = None, **params: Any
        ) -> None:
            params["inNamespace"] = False  # P4Runtime on 127.0.0.1, as in local mode
            super().__init__(name, **params)
            self.launch = launch

        def start(self, controllers: Sequence[Any]) -> None:
            if self.launch is not None:
                self.launch(self)

        def stop(self, deleteIntfs: bool = True) -> None:
            # The process belongs to the run directory (mrc-testbed down), not to Mininet.
            if deleteIntfs:
                self.deleteIntfs()

    return P4Switch


def nic_ports(topology: Topology, nic: str, target: str = "p4emu") -> dict[str, dict[str, Any]]:
    """The ``ports`` of a NIC's config in Mininet mode: one ``afpacket`` port per plane on the
    host's ``<nic>-p<plane>``, delaying what the NIC sends by its link's ``delay_us`` — with
    BMv2, which cannot delay what it sends, by a whole path's one-way delay
    (:func:`testbed.layout.sender_path_delays_us`)."""
    delays = (
        layout.sender_path_delays_us(topology, nic)
        if target == "bmv2"
        else layout.port_delays_us(topology, nic)
    )
    return {
        str(plane): {
            "driver": "afpacket",
            "interface": layout.nic_interface(nic, plane),
            "delay_us": delays[plane],
        }
        for plane in range(topology.plane_count)
    }


def mininet_notes(topology: Topology, rate_scale: float, target: str) -> list[str]:
    links = list(topology.links())
    rates = sorted({link.rate_gbps for link in links})
    delays = sorted({link.delay_us for link in links})
    notes = [
        f"link rate {', '.join(f'{r:g}' for r in rates)} Gb/s x {rate_scale:g} (per-link "
        "overrides included) is a tc htb class on both ends of each veth pair; the switches "
        "get no queue rate of their own (two limiters in series would build two queues)"
    ]
    if any(delay > 0 for delay in delays):
        shown = ", ".join(f"{d:g}" for d in delays)
        if target == "p4emu":
            notes.append(
                f"link delay {shown} us is added by each link's sender (p4emu-switch "
                "--link-delay-us, nic-emu delay_us), not by tc netem (not available on this "
                "kernel)"
            )
        else:
            notes.append(
                f"link delay {shown} us: BMv2 has no link delay option and tc netem is not "
                "available on this kernel, so each NIC adds a whole path's one-way delay "
                "(access + T0-T1 + T1-T0 + access) to what it sends (nic-emu delay_us); a "
                "path that turns at its T0 is then longer than its links"
            )
    return notes


class MininetMode:
    """Mininet mode: veth links shaped by tc htb; switches in the root namespace, NICs in
    their hosts' namespaces."""

    NAME = "mininet"

    @staticmethod
    def check(options: FabricOptions) -> None:
        check_environment()
        switch_command(options.target, options.switch_command)  # refuses a missing program
        nic_command(options.nic_command)

    def __init__(self, topology: Topology, options: FabricOptions) -> None:
        self.topology = topology
        self.options = options
        self.names = {
            (link.a.node, link.a.port, link.b.node, link.b.port): layout.link_interface_names(
                topology, link
            )
            for link in topology.links()
        }
        self.thrift_ports = {
            sw.name: options.thrift_base_port + i for i, sw in enumerate(topology.switches)
        }
        endpoints = layout.grpc_endpoints(topology, options.grpc_base_port)
        grpc_ports = [layout.grpc_port(e) for e in endpoints.values()]
        bmv2 = options.target == "bmv2"
        self.tcp_ports = grpc_ports + (list(self.thrift_ports.values()) if bmv2 else [])
        if len(set(self.tcp_ports)) != len(self.tcp_ports):
            raise PortPlanError(
                "the Thrift ports (--thrift-base-port) overlap the gRPC ports (--grpc-base-port)"
            )

    def settings(self) -> dict[str, Any]:
        return {"thrift_base_port": self.options.thrift_base_port}

    def preflight(self) -> None:
        for pair in self.names.values():
            for interface in (name for name in pair if not name.startswith("nic")):
                if Path("/sys/class/net", interface).exists():
                    raise ModeError(
                        f"interface {interface} already exists (another Mininet network or a "
                        "leftover of a crashed one? 'mrc-testbed down' or 'mn -c' removes it)"
                    )
        check_ports_free([], self.tcp_ports)

    def start(self, launch: Launch) -> tuple[list[ProcessRecord], list[ProcessRecord]]:
        options = self.options
        launch.use_pipeline(
            lambda: pipeline_for(
                options.target, options.program, p4info=options.p4info, bmv2_json=options.bmv2_json
            )
        )
        with _marked_environment(launch.fabric.state.run_id):
            try:
                records = _build(launch, self.thrift_ports, self.names)
            except TestbedError:
                raise
            except Exception as exc:  # Mininet reports its failures as bare Exceptions
                raise ModeError(f"building the Mininet network failed: {exc}") from exc
        launch.phase("network_built")
        return records

    def notes(self) -> list[str]:
        return mininet_notes(self.topology, self.options.rate_scale, self.options.target)


def up_mininet(
    topology_ref: str | Path | Topology,
    options: FabricOptions | None = None,
    progress: Progress | None = None,
    pipeline: Pipeline | None = None,
) -> UpResult:
    """Builds ``topology`` as a Mininet network, programs it, returns once NICs answer."""
    return up(
        topology_ref, options or FabricOptions(mode="mininet"), MininetMode, progress, pipeline
    )


def _record_shell(rundir: RunDir, state: RunState, kind: str, node: Any) -> None:
    from testbed.rundir import start_ticks

    ticks = start_ticks(node.pid)
    state.processes[f"shell:{node.name}"] = ProcessRecord(
        f"shell:{node.name}",
        "shell",
        node.pid,
        ticks if ticks is not None else -1,
        ["mnexec", kind, node.name],
        "",
    )
    rundir.save(state)


def _build(
    launch: Launch,
    thrift_ports: Mapping[str, int],
    names: Mapping[tuple[str, int, str, int], tuple[str, str]],
) -> tuple[list[ProcessRecord], list[ProcessRecord]]:
    topology, options = launch.topology, launch.options
    rundir, state = launch.fabric.rundir, launch.fabric.state
    endpoints, say = launch.endpoints, launch.say
    addresses = AddressPlan(topology)
    from mininet.link import Link
    from mininet.net import Mininet
    from mininet.node import Host

    P4Switch = _switch_class()
    switch_records: list[ProcessRecord] = []
    seeds = {sw.name: options.seed + i for i, sw in enumerate(topology.switches)}

    starter: SwitchStarter | None = None

    def start_switch(node: Any) -> None:
        assert starter is not None
        ports = {port: intf.name for port, intf in node.intfs.items() if port != 0}
        args = switch_args(
            options.target,
            topology,
            node.name,
            ports,
            None,  # tc htb on the veths is the link rate (module docstring)
            grpc_address=endpoints[node.name].address,
            seed=seeds[node.name],
            thrift_port=thrift_ports[node.name],
        )
        switch_records.append(
            starter.start(
                SwitchLaunch(node.name, args, rundir.file("switches", f"{node.name}.log"))
            )
        )

    say(
        f"building a Mininet network: {topology.switch_count} switches, {topology.nic_count} hosts, {topology.link_count} veth pairs"
    )
    net = Mininet(
        topo=None,
        build=False,
        controller=None,
        autoSetMacs=False,
        autoStaticArp=False,
        waitConnected=False,
    )
    hosts = {}
    for nic in topology.nics:
        host = net.addHost(nic.name, cls=Host, ip=None)
        _record_shell(rundir, state, "host", host)
        # New interfaces in this namespace start with IPv6 off: no ND/MLD frames at all.
        host.cmd("sysctl -q -w net.ipv6.conf.default.disable_ipv6=1")
        hosts[nic.name] = host
    for i, sw in enumerate(topology.switches):
        node = net.addSwitch(sw.name, cls=P4Switch, launch=start_switch, dpid=f"{i + 1:x}")
        _record_shell(rundir, state, "switch", node)
    for link in topology.links():
        lower_name, upper_name = names[(link.a.node, link.a.port, link.b.node, link.b.port)]
        for interface in (lower_name, upper_name):
            if not interface.startswith("nic") and interface not in state.interfaces:
                state.interfaces.append(interface)
        rundir.save(state)
        lower_is_nic = link.a.node.startswith("nic")
        lower_mac = (
            addresses.nic_mac(link.a.node, link.a.port)
            if lower_is_nic
            else addresses.switch_mac(link.a.node)
        )
        net.addLink(
            link.a.node,
            link.b.node,
            port1=link.a.port,
            port2=link.b.port,
            intfName1=lower_name,
            intfName2=upper_name,
            cls=Link,
            addr1=lower_mac,
            addr2=addresses.switch_mac(link.b.node),
        )
        rate = link_rate_mbit(link.rate_gbps, options.rate_scale)
        lower_run = hosts[link.a.node].cmd if lower_is_nic else _run_root
        _configure(lower_run, lower_name, rate, link.queue_packets)
        _configure(_run_root, upper_name, rate, link.queue_packets)
    say("starting switch processes")
    starter = launch.switch_starter()
    try:
        net.start()
    finally:
        starter.close()
    nic_records = [
        launch.start_nic(
            nic.name,
            nic_ports(topology, nic.name, options.target),
            prefix=["mnexec", "-a", str(hosts[nic.name].pid)],
            netns_pid=hosts[nic.name].pid,
        )
        for nic in topology.nics
    ]
    release_shells([*hosts.values(), *(net.get(sw.name) for sw in topology.switches)])
    return switch_records, nic_records


def release_shells(nodes: Sequence[Any]) -> None:
    """Close the launcher's ends of the node shells' terminals once the network is built.
    The shells then exit, as they do when a launcher process ends (module docstring: each
    NIC process keeps its host's namespace); a launcher that builds many networks in one
    process (scripts/verdicts-doc, a Mininet fabric per scenario run) kept two descriptors
    per node per network, about 90 per fabric."""
    for node in nodes:
        if node.shell is None:
            continue
        with contextlib.suppress(OSError):
            node.stdin.close()
        with contextlib.suppress(OSError):
            os.close(node.slave)
        node.shell = None  # Mininet's cleanup() would close them again
