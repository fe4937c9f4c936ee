"""The one options type of ``up``, whatever the mode (local or Mininet), the target
(p4emu or BMv2) or the caller (the CLI, the demo, tests, benchmarks).

A mode supplies only what differs between modes (ports, rates, interface names); the
settings here are shared, validated once, and the switch's command line is built from them
by one function (:func:`testbed.fabric.switch_args`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nic_emu.exceptions import ServeConfigError
from nic_emu.serve_config import transport_config
from testbed import layout
from testbed.exceptions import UsageError

TARGETS = ("p4emu", "bmv2")
DEFAULT_START_TIMEOUT_S = 120.0
#: the seed of switches, NICs and the virtual fabric when none is given (every mode)
DEFAULT_SEED = 1
DEFAULT_THRIFT_BASE_PORT = 9090  # BMv2's default Thrift port, + switch index


def check_transport(overrides: Mapping[str, Any]) -> None:
    """UsageError naming the key unless nic-emu accepts ``overrides`` as its ``transport``
    (docs/nic-emu-process.md): checked before anything starts, not by every NIC after."""
    try:
        transport_config(dict(overrides))
    except ServeConfigError as exc:
        raise UsageError(f"--transport: {exc}") from None


@dataclass(frozen=True)
class FabricOptions:
    """Everything ``up`` needs besides the topology: run name and root, mode, target, ports,
    program, commands, NIC transport overrides, seed and timeouts (None: the default)."""

    name: str | None = None  # run name; default: the topology's name
    root: Path | None = None  # where run directories live (rundir.default_root())
    mode: str = "local"  # a mode of testbed.modes that up can start (its launcher's NAME)
    target: str = "p4emu"  # p4emu | bmv2 (bmv2: Mininet mode only)
    udp_base_port: int = layout.DEFAULT_UDP_BASE_PORT  # local mode: links' UDP ports
    grpc_base_port: int = layout.DEFAULT_GRPC_BASE_PORT  # switch i serves base + i
    thrift_base_port: int = DEFAULT_THRIFT_BASE_PORT  # bmv2 only
    rate_scale: float = 1.0  # multiplies every link rate
    program: Path | None = None  # P4 program (default p4src/mrc_switch.p4)
    bmv2_json: Path | None = None  # bmv2, with p4info: p4c's output instead of running p4c
    p4info: Path | None = None
    switch_command: Sequence[str] | None = None
    nic_command: Sequence[str] | None = None
    transport: Mapping[str, Any] = field(default_factory=dict)  # nic-emu transport overrides
    seed: int = DEFAULT_SEED
    start_timeout: float = DEFAULT_START_TIMEOUT_S
    fork_server: bool = True  # fork p4emu-switches from one zygote (testbed.zygote)
    # The fabric runs this many times slower than the virtual one (``up --tdf``): recorded
    # in the run's settings; the topology and ``transport`` given are already dilated.
    tdf: int | None = None

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise UsageError(f"unknown target {self.target!r} (known: {', '.join(TARGETS)})")
        if self.mode == "local" and self.target == "bmv2":
            raise UsageError(
                "--target bmv2 needs --mode mininet: simple_switch_grpc ports are Linux "
                "interfaces, local mode links are loopback UDP"
            )
        if (self.bmv2_json or self.p4info) and self.target != "bmv2":
            raise UsageError("--bmv2-json / --p4info are for --target bmv2")
        if not self.rate_scale > 0:
            raise UsageError(f"rate scale must be positive, got {self.rate_scale}")
        check_transport(self.transport)
