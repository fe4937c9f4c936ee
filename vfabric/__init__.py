"""vfabric: the real P4 switch program and the MRC NICs in one deterministic event loop.

One process, one event list in virtual nanoseconds (docs/virtual-fabric.md). Every switch
is a :class:`p4emu.switch.Switch` running ``p4src/mrc_switch.p4`` (checked once, shared) on
one :class:`p4emu.runtime.clock.VirtualClock`, programmed with the controller's plan through
p4emu's P4Runtime layer (the Update messages ``mrc-controller push`` sends); its egress
queues are its traffic manager draining at the link rate, so queue depth, ECN marks and
trims come from the P4 program. Every NIC is a :class:`nic_emu.core.NicCore` with its µs
defaults. Links have the topology's rate and propagation delay.

Public API (stable; docs/virtual-fabric.md)::

    from vfabric import VirtualFabric
    from topologies.events import LinkRef   # faults: the one vocabulary, topologies.events

    fabric = VirtualFabric("tiny", seed=0, nic_config=None, trimming=True, ecn=True,
                           pcap_dir=None, event_log="run/events.jsonl", bin_ns=10_000)
    t = fabric.transfer("nic0", "nic3", 4 << 20, start_ns=0, messages=1,
                        transport="mrc", background=False)
    fabric.schedule(LinkRef("p0-t0-0", "p0-t1-0").change(300_000, up=False))
    fabric.schedule(LinkRef("p0-t0-0", "p0-t1-0").change(600_000, up=True))
    finished = fabric.run(until_ns=None, progress=None)   # True: every foreground done
    t.intact, t.completion_ns, fabric.transfer_result(t)  # per transfer
    fabric.results()            # transfers, repaths, planes, links, switches, evs,
                                # ev_states, event_log_sha256
    fabric.goodput(bin_ns)      # Gb/s per plane, per T1, per link direction over time
    fabric.ev_state_changes()   # [{t_ns, nic, qpn, ev, plane, from, to, reason}]
    fabric.repaths()            # per fault: repath times (µs) of the EVs it cut
    fabric.event_log_sha256     # hash of the JSON-lines event log
    fabric.close()

Errors a user can cause are :class:`vfabric.exceptions.VirtualFabricError` subclasses:
``FabricSetupError`` (topology, plan, NIC config, outputs), ``UnknownLinkError``,
``UnknownNodeError``, ``FaultTimeError``, ``FaultValueError``, ``TransferSetupError``,
``ProgramError``.
Plots: :mod:`vfabric.plots`.
"""

from __future__ import annotations

from clikit import hotpath  # noqa: F401 - first: the compiled-or-pure finder (docs/virtual-fabric.md)
from vfabric.exceptions import VirtualFabricError
from vfabric.fabric import VirtualFabric
from vfabric.transfers import Transfer

__all__ = ["Transfer", "VirtualFabric", "VirtualFabricError"]
