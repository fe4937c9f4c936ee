"""The modes registry: one table of mode name -> the fabric that runs it, and what it
supports (docs/architecture.md, "One fabric interface"; docs/testbed.md, "Modes").

Everything that takes a ``--mode`` reads this table: the command line's choices, ``up``
(the launcher that starts a standing fabric), the scenario runner and the demo (the
:class:`~testbed.scenario.fabric.ScenarioFabric` a run goes through), and the docs'
list of modes (checked by tests/testbed/test_modes.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from testbed.exceptions import UnknownModeError
from testbed.local import LocalMode, Mode
from testbed.mininet_mode import MininetMode
from testbed.scenario.fabric import Progress, ScenarioFabric, Variant
from testbed.scenario.model import Scenario
from testbed.scenario.process import ProcessRun
from testbed.scenario.run_options import RunOptions
from testbed.scenario.virtual import VirtualRun

FabricClass = Callable[..., ScenarioFabric]  # (scenario, variant, options, *, out_dir, progress)


@dataclass(frozen=True)
class ModeSpec:
    """One mode: its name, what runs a scenario on it (``fabric``) and what ``up`` starts
    (``launcher``; None: no standing fabric, as in virtual time, where everything is one
    process that ends with the run)."""

    name: str
    summary: str  # one line for --help and the docs
    clock: str  # "virtual" (deterministic, virtual ns) or "wall" (time-dilated processes)
    where: str  # where its fabric runs, as the demo says it ("locally", "in Mininet")
    fabric: FabricClass
    launcher: type[Mode] | None = None

    @property
    def standing(self) -> bool:
        """Whether ``up`` can start it (and ``link``/``switch``/``port``/``send`` act on it)."""
        return self.launcher is not None

    def make(
        self,
        scenario: Scenario,
        variant: Variant,
        options: RunOptions,
        *,
        out_dir: Path | None = None,
        progress: Progress | None = None,
    ) -> ScenarioFabric:
        """The fabric one run of ``scenario`` goes through on this mode."""
        return self.fabric(scenario, variant, options, out_dir=out_dir, progress=progress)


MODES: dict[str, ModeSpec] = {
    spec.name: spec
    for spec in (
        ModeSpec(
            "virtual",
            "P4 switches and NICs in one deterministic event loop, virtual time (vfabric)",
            "virtual",
            "in virtual time",
            VirtualRun,
        ),
        ModeSpec(
            "local",
            "p4emu-switch and nic-emu processes over loopback UDP links",
            "wall",
            "locally",
            partial(ProcessRun, launcher=LocalMode),
            LocalMode,
        ),
        ModeSpec(
            "mininet",
            "p4emu-switch or BMv2 and nic-emu processes on veth links shaped by tc (root)",
            "wall",
            "in Mininet",
            partial(ProcessRun, launcher=MininetMode),
            MininetMode,
        ),
    )
}


def mode(name: str) -> ModeSpec:
    """The mode called ``name``; UnknownModeError listing the known ones otherwise."""
    try:
        return MODES[name]
    except KeyError:
        raise UnknownModeError(f"unknown mode {name!r} (known: {', '.join(MODES)})") from None


def names(*, standing: bool = False) -> tuple[str, ...]:
    """Every mode's name (``standing``: only those ``up`` can start), table order."""
    return tuple(name for name, spec in MODES.items() if spec.standing or not standing)


def launcher(name: str) -> type[Mode]:
    """What ``up --mode NAME`` starts; UnknownModeError for a mode without one."""
    spec = mode(name)
    if spec.launcher is None:
        raise UnknownModeError(
            f"mode {name!r} has no standing fabric to bring up (modes up can start: "
            f"{', '.join(names(standing=True))})"
        )
    return spec.launcher
