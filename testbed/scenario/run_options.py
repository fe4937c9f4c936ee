"""How to run a scenario (:class:`RunOptions`): the one type both fabrics' runners take.

It sits below :mod:`testbed.scenario.runner` (which picks the fabric) and
:mod:`testbed.scenario.process` (the process fabric), so neither knows the other's insides.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nic_emu.exceptions import ConfigError
from nic_emu.serve_config import check_tdf
from testbed.layout import link_rate_pps
from testbed.scenario.exceptions import ScenarioRunError
from topologies import Topology

# The default time-dilation factor (docs/testbed.md, "Time dilation") is the smallest power
# of two that slows the busiest NIC's line rate (its ports' rates in full data frames per
# second) to at most this many frames per second of wall clock. Measured on a loaded
# 2-core machine (load average 10-20): at 180 frames/s (small, 4 planes, TDF 65536) the
# bundled scenarios track their virtual runs on BMv2 and on local p4emu; at 360 (8 planes
# at 65536, or small at 32768) the NIC and switch processes fall behind the line rate.
NIC_FRAMES_PER_S = {
    ("mininet", "bmv2"): 200,
    ("mininet", "p4emu"): 200,
    ("local", "p4emu"): 200,
}


def default_tdf(topology: Topology, mode: str, target: str) -> int:
    """The smallest power of two that brings every NIC of ``topology`` under
    :data:`NIC_FRAMES_PER_S` of ``mode`` and ``target``."""
    try:
        budget = NIC_FRAMES_PER_S[(mode, target)]
    except KeyError:
        raise ScenarioRunError(
            f"no time-dilation factor for mode {mode} with target {target}"
        ) from None
    busiest = max(
        sum(link_rate_pps(link.rate_gbps) for link in topology.links_of(nic.name))
        for nic in topology.nics
    )
    tdf = 1
    while busiest / tdf > budget:
        tdf *= 2
    return tdf


@dataclass
class RunOptions:
    """How to run a scenario: the mode (a name of ``testbed.modes``), seed (None: the
    scenario's), progress bar, and the process or virtual fabric's settings (None: the default)."""

    mode: str = "virtual"  # a name of the modes registry (testbed.modes)
    seed: int | None = None
    progress: bool = False  # a progress bar on stderr (drawn only on a TTY)
    run_dir: Path | None = None  # process fabric: where its run directory goes
    udp_base_port: int | None = None  # process fabric, local mode (None: the default)
    grpc_base_port: int | None = None  # process fabric (None: the default)
    thrift_base_port: int | None = None  # mininet mode with BMv2 (None: the default)
    target: str = "p4emu"  # mininet mode: p4emu or bmv2 (simple_switch_grpc)
    tdf: int | None = None  # process fabric: time-dilation factor (None: default_tdf)
    pcap: bool = False  # virtual fabric: one pcap per link direction (in the run's out_dir)

    def __post_init__(self) -> None:
        # the mode is looked up in the registry (testbed.modes) by the runner, and the
        # virtual fabric refuses a TDF (testbed.scenario.virtual.VirtualRun)
        if self.tdf is not None:
            try:
                check_tdf(self.tdf)
            except ConfigError as exc:
                raise ScenarioRunError(f"--tdf: {exc}") from None

    def effective_tdf(self, topology: Topology) -> int:
        """The time-dilation factor of a process run on ``topology``: ``tdf``, else
        :func:`default_tdf`."""
        if self.tdf is not None:
            return self.tdf
        return default_tdf(topology, self.mode, self.target)
