"""Errors of scenario files and scenario runs."""

from __future__ import annotations

from testbed.exceptions import TestbedError


class ScenarioError(TestbedError):
    """Base class of the errors of ``testbed.scenario``."""


class ScenarioFileError(ScenarioError):
    """A scenario cannot be found, read or parsed as YAML."""


class ScenarioSpecError(ScenarioError):
    """A scenario file is YAML but not a valid scenario; ``key_path`` names the key as it is
    written in the file, e.g. ``timeline[2].at`` or ``traffic[0].pairs[1]``."""

    def __init__(self, source: str, key_path: str, reason: str) -> None:
        self.source = source
        self.key_path = key_path
        self.reason = reason
        super().__init__(f"{source}: {key_path}: {reason}" if key_path else f"{source}: {reason}")


class ScenarioRunError(ScenarioError):
    """A scenario cannot be run as asked (a fault kind the chosen fabric cannot do, ...)."""
