"""Random batches of valid and invalid updates leave exactly the valid ones.

A small reference model of two tables (an exact table of size 4 and a ternary table) and
a register array predicts every update's code; the state read back must equal the model.
"""

from __future__ import annotations

from dataclasses import dataclass

from finsy.proto import p4d, p4r
from hypothesis import given, settings
from hypothesis import strategies as st
from p4rt_helpers import (
    FWD,
    NO_ACTION,
    REG,
    T_EXACT,
    T_TERN,
    action,
    b,
    codes,
    entry,
    exact,
    new_state,
    ternary,
)

from p4emu.p4rt import CONTINUE_ON_ERROR, ROLLBACK_ON_ERROR

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


@dataclass(frozen=True)
class Op:
    kind: int
    table: str  # "exact" | "tern" | "reg" (register MyIngress.reg, bit<16>[4])
    key: int  # 0..5
    priority: int  # ternary only
    port: int  # action argument; >= 512 is invalid
    flaw: str  # "" | "bad_port" | "bad_priority" | "bad_key"


ops = st.builds(
    Op,
    kind=st.sampled_from([INSERT, MODIFY, DELETE]),
    table=st.sampled_from(["exact", "tern", "reg"]),
    key=st.integers(0, 5),
    priority=st.integers(1, 3),
    port=st.integers(0, 511),
    flaw=st.sampled_from(["", "", "", "bad_port", "bad_priority", "bad_key"]),
)


def to_update(op: Op) -> p4r.Update:
    port = 600 if op.flaw == "bad_port" else op.port
    if op.table == "reg":
        reg_entry = p4r.RegisterEntry(register_id=REG, data=p4d.P4Data(bitstring=b(op.port)))
        reg_entry.index.index = op.key
        if op.flaw == "bad_key":
            reg_entry.data.bitstring = b(1 << 16)
        return p4r.Update(
            type=MODIFY if op.kind != DELETE else DELETE,
            entity=p4r.Entity(register_entry=reg_entry),
        )
    act = action(FWD, port) if op.kind != DELETE else action(NO_ACTION)
    if op.table == "exact":
        key_value = (1 << 48) if op.flaw == "bad_key" else op.key
        te = entry(T_EXACT, [exact(1, key_value), exact(2, 1)], act)
        if op.flaw == "bad_priority":
            te.priority = 1
    else:
        mask = 0 if op.flaw == "bad_key" else 0xFF
        te = entry(T_TERN, [ternary(1, op.key & mask, mask)] if mask else [ternary(1, 0, 0)], act)
        te.priority = 0 if op.flaw == "bad_priority" else op.priority
    return p4r.Update(type=op.kind, entity=p4r.Entity(table_entry=te))


def predict(model: dict, op: Op) -> str:
    """Expected code of ``op`` against ``model`` (updated in place when OK)."""
    if op.table == "reg":
        if op.kind == DELETE:
            return "INVALID_ARGUMENT"
        if op.key >= 4:
            return "OUT_OF_RANGE"
        if op.flaw == "bad_key":
            return "INVALID_ARGUMENT"
        if op.port:
            model[("reg", op.key, 0)] = op.port
        else:
            model.pop(("reg", op.key, 0), None)
        return "OK"
    if op.flaw == "bad_key" or op.flaw == "bad_priority":
        return "INVALID_ARGUMENT"
    if op.flaw == "bad_port" and op.kind != DELETE:
        return "INVALID_ARGUMENT"
    identity = (op.table, op.key, op.priority if op.table == "tern" else 0)
    present = identity in model
    if op.kind == INSERT:
        if present:
            return "ALREADY_EXISTS"
        if op.table == "exact" and sum(1 for k in model if k[0] == "exact") >= 4:
            return "RESOURCE_EXHAUSTED"
        model[identity] = op.port
        return "OK"
    if not present:
        return "NOT_FOUND"
    if op.kind == MODIFY:
        model[identity] = op.port
    else:
        del model[identity]
    return "OK"


def read_model(state) -> dict:
    out = {}
    for table_id, name in ((T_EXACT, "exact"), (T_TERN, "tern")):
        for e in state.read(p4r.Entity(table_entry=p4r.TableEntry(table_id=table_id))):
            te = e.table_entry
            if name == "exact":
                key = int.from_bytes(te.match[0].exact.value, "big")
            else:
                key = int.from_bytes(te.match[0].ternary.value, "big")
            port = int.from_bytes(te.action.action.params[0].value, "big")
            out[(name, key, te.priority)] = port
    for e in state.read(p4r.Entity(register_entry=p4r.RegisterEntry(register_id=REG))):
        value = int.from_bytes(e.register_entry.data.bitstring, "big")
        if value:
            out[("reg", e.register_entry.index.index, 0)] = value
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(ops, max_size=8), max_size=6))
def test_continue_on_error_keeps_exactly_the_valid_updates(batches: list[list[Op]]) -> None:
    state = new_state()
    model: dict = {}
    for batch in batches:
        expected = [predict(model, op) for op in batch]
        assert codes(state.write([to_update(op) for op in batch], CONTINUE_ON_ERROR)) == expected
        assert read_model(state) == model


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(ops, max_size=8), max_size=6))
def test_rollback_applies_whole_batches_or_nothing(batches: list[list[Op]]) -> None:
    state = new_state()
    model: dict = {}
    for batch in batches:
        trial = dict(model)
        expected = [predict(trial, op) for op in batch]
        result = codes(state.write([to_update(op) for op in batch], ROLLBACK_ON_ERROR))
        if all(code == "OK" for code in expected):
            assert result == expected
            model = trial
        else:
            failed = next(i for i, code in enumerate(expected) if code != "OK")
            assert result[failed] == expected[failed]
            assert all(code == "ABORTED" for i, code in enumerate(result) if i != failed)
        assert read_model(state) == model
