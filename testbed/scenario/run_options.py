"""How to run a scenario (:class:`RunOptions`): the one type both fabrics' runners take.

It sits below :mod:`testbed.scenario.runner` (which picks the fabric) and
:mod:`testbed.scenario.process` (the process fabric), so neither knows the other's insides.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nic_emu.exceptions import ConfigError
from nic_emu.serve_config import check_tdf
from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.model import MODES

# The time-dilation factor of each process fabric (docs/testbed.md, "Time dilation"):
# chosen so that every switch forwards well under what it can on a loaded 2-core machine
# (BMv2's knee is ~5,000 packets/s, a p4emu-switch's ~1,000) and the machine's stalls
# (milliseconds) are a small part of the dilated round trip.
DEFAULT_TDF = {
    ("mininet", "bmv2"): 65536,
    ("mininet", "p4emu"): 65536,
    ("local", "p4emu"): 65536,
}


@dataclass
class RunOptions:
    mode: str = "virtual"
    seed: int | None = None
    progress: bool = False  # a progress bar on stderr (drawn only on a TTY)
    run_dir: Path | None = None  # process fabric: where its run directory goes
    udp_base_port: int | None = None  # process fabric, local mode (None: the default)
    grpc_base_port: int | None = None  # process fabric (None: the default)
    thrift_base_port: int | None = None  # mininet mode with BMv2 (None: the default)
    target: str = "p4emu"  # mininet mode: p4emu or bmv2 (simple_switch_grpc)
    tdf: int | None = None  # process fabric: time-dilation factor (None: DEFAULT_TDF)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ScenarioRunError(f"unknown mode {self.mode!r} (known: {', '.join(MODES)})")
        if self.tdf is not None:
            if self.mode == "virtual":
                raise ScenarioRunError("--tdf is for the process fabric (--mode local|mininet)")
            try:
                check_tdf(self.tdf)
            except ConfigError as exc:
                raise ScenarioRunError(f"--tdf: {exc}") from None

    def effective_tdf(self) -> int:
        """The time-dilation factor of a process run: ``tdf``, else the default of its
        mode and target."""
        if self.tdf is not None:
            return self.tdf
        try:
            return DEFAULT_TDF[(self.mode, self.target)]
        except KeyError:
            raise ScenarioRunError(
                f"no time-dilation factor for mode {self.mode} with target {self.target}"
            ) from None
