"""p4emu.server.main: what the switch process sets up before it serves."""

from __future__ import annotations

import pytest

from p4emu.backend import native
from p4emu.exceptions import P4EmuError
from p4emu.server import main


def test_a_switch_never_waits_for_a_native_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """A program whose compiled module is not cached runs pure at once while a child builds
    it (docs/virtual-fabric.md, "Compiled hot path"): the switch sets that before loading."""
    monkeypatch.setattr(native, "_background", False)
    seen: list[bool] = []

    class Stopped:  # stands for SwitchProcess: records the policy, then fails to start
        def __init__(self, options: object) -> None:
            seen.append(native._background)

        def start(self) -> None:
            raise P4EmuError("p4emu-switch: stopped by the test")

    monkeypatch.setattr(main, "SwitchProcess", Stopped)
    assert main.main(["--no-p4"]) != 0
    assert seen == [True]
