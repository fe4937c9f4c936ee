"""Errors of the htsim differential (``testbed.reference``)."""

from __future__ import annotations

from pathlib import Path

from testbed.exceptions import TestbedError


class HtsimDiffError(TestbedError):
    """Base class of the errors of ``testbed.reference``."""


class WorkloadError(HtsimDiffError):
    """A workload description that cannot be translated (a host count that is not a
    two-tier fat tree, a host index out of range, an incast too wide for the fabric...);
    ``key`` names the field as written in the description."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        self.source = source
        self.key = key
        self.reason = reason
        super().__init__(f"{source}: {key}: {reason}" if key else f"{source}: {reason}")


class HtsimNotFoundError(HtsimDiffError):
    """No htsim_uec binary where ``$MRC_HTSIM`` or ``shared/htsim/bin`` beside the clone says."""


class RunFailedError(HtsimDiffError):
    """One side of the differential failed (non-zero exit, timeout, a flow that never
    finished); ``log_dir`` holds its inputs and outputs."""

    def __init__(self, message: str, log_dir: Path) -> None:
        self.log_dir = log_dir
        super().__init__(f"{message} (inputs and logs kept in {log_dir})")


class HtsimOutputError(RunFailedError):
    """htsim ran but its output (stdout, trace, idmap) is not what this parser knows."""
