"""Mutation test: a NIC whose EV retirement is broken on one plane must fail the bundled
suite, whichever plane it is (the faults are spread over the planes)."""

from __future__ import annotations

import pytest

from nic_emu.ev_set import EvEntry, EvSet
from testbed.scenario.runner import run_checked
from testbed.scenario.virtual import Variant

from .runs import OPTIONS, compared, heavy, plain_names, scenario
from .test_bundled_scenarios import planes_of

PLANES = range(8)  # the most planes a bundled topology has (paper-8plane-2t0)


def scenarios_hitting(plane: int) -> list[str]:
    """The bundled scenarios with a fault on ``plane``, smallest traffic first."""
    names = [
        n
        for n in plain_names()
        if not compared(scenario(n))
        and not heavy(n)
        and any(plane in planes_of(scenario(n), e) for e in scenario(n).timeline)
    ]
    return sorted(names, key=lambda n: sum(f.nbytes for f in scenario(n).flows()))


@pytest.mark.parametrize("plane", PLANES)
def test_broken_retirement_on_one_plane_fails_the_suite(
    plane: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    retire = EvSet._retire

    def broken(self: EvSet, e: EvEntry, reason: str, now: int) -> bool:
        if e.plane == plane:
            return False  # kept in service, as if the floor held it
        return retire(self, e, reason, now)

    monkeypatch.setattr(EvSet, "_retire", broken)
    names = scenarios_hitting(plane)
    assert names, f"no bundled scenario has a fault on plane {plane}"
    caught = []
    for name in names:
        run = run_checked(scenario(name), Variant(name=f"retirement-off-plane{plane}"), OPTIONS)[0]
        caught = [c for c in run.checks if not c.accepted]
        if caught:
            break
    assert caught, f"retirement broken on plane {plane}: every scenario of {names} still passes"
