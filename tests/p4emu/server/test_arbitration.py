from __future__ import annotations

import pytest
from finsy.proto import rpc_code

from p4emu.server.arbitration import Arbiter, ArbitrationError


def codes(notifications) -> dict[object, int]:
    return {n.client: n.code for n in notifications}


def test_highest_election_id_is_primary_and_everyone_is_told() -> None:
    arbiter = Arbiter(device_id=1)
    assert codes(arbiter.update("a", 1, "", (0, 5))) == {"a": rpc_code.OK}
    assert codes(arbiter.update("b", 1, "", (0, 3))) == {"b": rpc_code.ALREADY_EXISTS}
    assert arbiter.is_primary((0, 5)) and not arbiter.is_primary((0, 3))
    # c outranks a: primary changes, all three are told, each with the new primary's id
    notified = arbiter.update("c", 1, "", (1, 0))
    assert codes(notified) == {
        "a": rpc_code.ALREADY_EXISTS,
        "b": rpc_code.ALREADY_EXISTS,
        "c": rpc_code.OK,
    }
    assert {n.election_id for n in notified} == {(1, 0)}
    assert arbiter.primary_election_id() == (1, 0)


def test_primary_leaving_leaves_no_primary_until_an_id_as_high_returns() -> None:
    arbiter = Arbiter(device_id=0)
    arbiter.update("a", 0, "", (0, 10))
    arbiter.update("b", 0, "", (0, 7))
    assert codes(arbiter.disconnect("a")) == {"b": rpc_code.NOT_FOUND}
    assert arbiter.primary_election_id() is None
    assert not arbiter.is_primary((0, 7))
    assert codes(arbiter.update("b", 0, "", (0, 10))) == {"b": rpc_code.OK}
    assert arbiter.disconnect("nobody") == []


def test_roles_are_independent() -> None:
    arbiter = Arbiter(device_id=0)
    arbiter.update("a", 0, "", (0, 1))
    assert codes(arbiter.update("b", 0, "monitor", (0, 1))) == {"b": rpc_code.OK}
    assert arbiter.is_primary((0, 1), "monitor") and arbiter.is_primary((0, 1), "")
    assert arbiter.role_of("b") == "monitor"


@pytest.mark.parametrize(
    ("setup", "call", "code", "message"),
    [
        ([], ("a", 9, "", (0, 1)), rpc_code.NOT_FOUND, "device id 9 does not exist"),
        ([("a", 0, "", (0, 1))], ("b", 0, "", (0, 1)), rpc_code.INVALID_ARGUMENT, "already used"),
        (
            [("a", 0, "", (0, 1))],
            ("a", 0, "other", (0, 1)),
            rpc_code.FAILED_PRECONDITION,
            "cannot change its role",
        ),
    ],
)
def test_arbitration_errors(setup, call, code, message) -> None:
    arbiter = Arbiter(device_id=0)
    for args in setup:
        arbiter.update(*args)
    with pytest.raises(ArbitrationError, match=message) as info:
        arbiter.update(*call)
    assert info.value.code == code
