"""How to run a scenario (:class:`RunOptions`): the one type both fabrics' runners take.

It sits below :mod:`testbed.scenario.runner` (which picks the fabric) and
:mod:`testbed.scenario.process` (the process fabric), so neither knows the other's insides.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from testbed.scenario.exceptions import ScenarioRunError
from testbed.scenario.model import MODES


@dataclass
class RunOptions:
    mode: str = "virtual"
    seed: int | None = None
    progress: bool = False  # a progress bar on stderr (drawn only on a TTY)
    run_dir: Path | None = None  # process fabric: where its run directory goes
    udp_base_port: int | None = None  # process fabric, local mode (None: the default)
    grpc_base_port: int | None = None  # process fabric (None: the default)
    target: str = "p4emu"  # mininet mode: p4emu or bmv2 (simple_switch_grpc)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ScenarioRunError(f"unknown mode {self.mode!r} (known: {', '.join(MODES)})")
