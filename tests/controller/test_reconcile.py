"""The pure diff: planned vs. read-back entries -> the minimal updates."""

from __future__ import annotations

import pytest

from controller import p4names
from controller.exceptions import ControllerError, PlanError
from controller.plan import Entry
from controller.reconcile import SyncOptions, diff_entries

NOACTION_DEFAULTS = {
    p4names.USID_ROUTE: Entry(p4names.USID_ROUTE, (), p4names.NO_ACTION, (), True),
    p4names.SWITCH_CONFIG: Entry(
        p4names.SWITCH_CONFIG, (), p4names.SET_SWITCH_CONFIG, (0, 7, 0, 0, 0, 0), True
    ),
}


def route(usid: int, port: int) -> Entry:
    return Entry(p4names.USID_ROUTE, (usid,), p4names.FORWARD, (port,))


def config(plane: int) -> Entry:
    return Entry(p4names.SWITCH_CONFIG, (), p4names.SET_SWITCH_CONFIG, (plane, 7, 1, 0, 0, 0), True)


def kinds(diff) -> list[tuple[str, Entry]]:
    return [(c.kind, c.entry) for c in diff.changes]


def test_empty_switch_gets_everything_default_as_modify() -> None:
    planned = [config(1), route(1, 3), route(2, 4)]
    diff = diff_entries(planned, [], NOACTION_DEFAULTS)
    assert kinds(diff) == [("MODIFY", config(1)), ("INSERT", route(1, 3)), ("INSERT", route(2, 4))]


def test_equal_switch_needs_nothing() -> None:
    planned = [config(1), route(1, 3)]
    current = [config(1), route(1, 3), NOACTION_DEFAULTS[p4names.USID_ROUTE]]
    assert not diff_entries(planned, current, NOACTION_DEFAULTS)


def test_only_the_difference_deletes_first() -> None:
    planned = [config(1), route(1, 3), route(2, 4), route(3, 5)]
    current = [config(0), route(1, 3), route(2, 9), route(7, 1)]
    diff = diff_entries(planned, current, NOACTION_DEFAULTS)
    assert kinds(diff) == [
        ("DELETE", route(7, 1)),
        ("MODIFY", route(2, 4)),
        ("MODIFY", config(1)),
        ("INSERT", route(3, 5)),
    ]
    modify = diff.changes[1]
    assert modify.current == route(2, 9)
    assert diff.count("MODIFY") == 2


def test_changed_default_of_an_unplanned_table_is_reset() -> None:
    changed = Entry(p4names.USID_ROUTE, (), p4names.TO_CPU, (), True)
    diff = diff_entries([], [changed], NOACTION_DEFAULTS)
    assert kinds(diff) == [("MODIFY", NOACTION_DEFAULTS[p4names.USID_ROUTE])]
    assert not diff_entries([], [changed], {p4names.USID_ROUTE: None})  # unknown initial


def test_plan_errors() -> None:
    with pytest.raises(PlanError, match="two entries with the key of usid_route usid=0x0001"):
        diff_entries([route(1, 2), route(1, 3)], [], NOACTION_DEFAULTS)
    with pytest.raises(
        PlanError, match=r"writes MrcIngress.my_usid, which the controller does not own"
    ):
        diff_entries([Entry(p4names.MY_USID, (1,), p4names.USID_UN)], [], NOACTION_DEFAULTS)


def test_sync_options_are_checked() -> None:
    with pytest.raises(ControllerError, match="pipeline mode 'sometimes'"):
        SyncOptions(pipeline_mode="sometimes")
    with pytest.raises(ControllerError, match="batch size must be >= 1"):
        SyncOptions(batch_size=0)
