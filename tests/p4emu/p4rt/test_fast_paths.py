"""The INSERT fast path (key and parameters decoded straight to the canonical form) and the
encoded reads give exactly what the full decode and the parsed reads give.

Every entity is written twice: in the usual form (fields in P4Info order, canonical bytes:
the fast path) and in a form only the full decode accepts (fields reversed, a leading zero
byte on every value): the second INSERT must find the first (ALREADY_EXISTS), a DELETE in
either form must remove it. Values the fast path refuses get the full decode's error.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from finsy.proto import p4r, rpc_code

from p4emu.p4rt import P4RuntimeState
from p4emu.p4rt_client.messages import EntityNames
from p4emu.server.service import read_response
from p4emu.switch import Switch

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"


@pytest.fixture(scope="module")
def features() -> tuple[EntityNames, P4RuntimeState]:
    switch = Switch(PROGRAMS / "features.p4")
    return EntityNames(switch.p4info), P4RuntimeState(switch.objects)


@pytest.fixture(scope="module")
def basic() -> tuple[EntityNames, P4RuntimeState]:
    switch = Switch(PROGRAMS / "basic.p4")
    return EntityNames(switch.p4info), P4RuntimeState(switch.objects)


def _write(state: P4RuntimeState, kind: int, entity: p4r.Entity) -> p4r.Error:
    (error,) = state.write([p4r.Update(type=kind, entity=entity)])
    return error


def _full_decode_form(entity: p4r.Entity) -> p4r.Entity:
    """The same entry with its fields reversed and a leading zero byte on every value."""
    other = p4r.Entity()
    other.CopyFrom(entity)
    entry = other.table_entry
    matches = list(reversed(entry.match))
    del entry.match[:]
    for match in matches:
        item = entry.match.add()
        item.CopyFrom(match)
        kind = item.WhichOneof("field_match_type")
        holder = getattr(item, kind)
        for name in ("value", "mask"):
            if name in holder.DESCRIPTOR.fields_by_name:
                setattr(holder, name, b"\0" + getattr(holder, name))
    params = list(reversed(entry.action.action.params))
    del entry.action.action.params[:]
    for param in params:
        entry.action.action.params.add(param_id=param.param_id, value=b"\0" + param.value)
    return other


def _random_entries(names: EntityNames, rng: random.Random) -> list[p4r.Entity]:
    entries = []
    for _ in range(60):
        mask = rng.randrange(1, 256)
        entries.append(
            names.table_entry(
                "MyIngress.tenants",
                {
                    "hdr.ethernet.src": rng.getrandbits(48),
                    "ipv4_valid": rng.getrandbits(1),
                    "dst_hi": (rng.getrandbits(8) & mask, mask),
                },
                "MyIngress.fwd",
                {"port": rng.randrange(512)},
                priority=rng.randrange(1, 1000),
            )
        )
    return entries


def _random_routes(names: EntityNames, rng: random.Random) -> list[p4r.Entity]:
    routes = []
    for _ in range(60):
        prefix = rng.randrange(1, 33)
        value = rng.getrandbits(32) & ~((1 << (32 - prefix)) - 1) & 0xFFFFFFFF
        routes.append(
            names.table_entry(
                "MyIngress.ipv4_lpm",
                {"hdr.ipv4.dstAddr": (value, prefix)},
                "MyIngress.ipv4_forward",
                {"dstAddr": rng.getrandbits(48), "port": rng.randrange(512)},
            )
        )
    return routes


@pytest.mark.parametrize("which", ["features", "basic"])
def test_fast_and_full_decode_give_the_same_entry(which: str, request) -> None:
    names, state = request.getfixturevalue(which)
    make = _random_entries if which == "features" else _random_routes
    rng = random.Random(7)
    written = {}
    for entity in make(names, rng):
        key = entity.table_entry.SerializeToString()
        if key in written:
            continue
        first = _write(state, p4r.Update.INSERT, entity)
        if first.canonical_code == rpc_code.ALREADY_EXISTS:  # same key drawn twice
            continue
        assert first.canonical_code == rpc_code.OK, first.message
        again = _write(state, p4r.Update.INSERT, _full_decode_form(entity))
        assert again.canonical_code == rpc_code.ALREADY_EXISTS, again.message
        written[key] = entity
    query = p4r.Entity()
    query.table_entry.table_id = next(iter(written.values())).table_entry.table_id
    read = {e.table_entry.SerializeToString() for e in state.read(query)}
    assert set(written) <= read
    for index, entity in enumerate(written.values()):
        form = entity if index % 2 else _full_decode_form(entity)
        assert _write(state, p4r.Update.DELETE, form).canonical_code == rpc_code.OK
        assert _write(state, p4r.Update.DELETE, entity).canonical_code == rpc_code.NOT_FOUND


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda te: setattr(te.match[0].lpm, "value", b"\x0a\x00\x00\x01"), "past the /8 prefix"),
        (lambda te: setattr(te.match[0].lpm, "prefix_len", 33), "prefix length 33"),
        (lambda te: setattr(te.match[0].lpm, "value", b""), "empty bytestring"),
        (
            lambda te: setattr(te.action.action.params[1], "value", b"\x02\x00"),
            "does not fit in 9 bits",
        ),
        (lambda te: setattr(te.action.action.params[0], "param_id", 9), "unknown parameter id 9"),
        (lambda te: te.match[0].ClearField("lpm"), "no match value set"),
    ],
)
def test_what_the_fast_path_refuses_gets_the_full_decode_error(
    basic: tuple[EntityNames, P4RuntimeState], change, message: str
) -> None:
    names, state = basic
    entity = names.table_entry(
        "MyIngress.ipv4_lpm",
        {"hdr.ipv4.dstAddr": (0x0A000000, 8)},
        "MyIngress.ipv4_forward",
        {"dstAddr": 1, "port": 1},
    )
    change(entity.table_entry)
    error = _write(state, p4r.Update.INSERT, entity)
    assert error.canonical_code == rpc_code.INVALID_ARGUMENT
    assert message in error.message


def test_encoded_reads_are_the_parsed_reads_serialized(
    basic: tuple[EntityNames, P4RuntimeState],
) -> None:
    names, state = basic
    for entity in _random_routes(names, random.Random(3))[:20]:
        _write(state, p4r.Update.INSERT, entity)
    queries = [names.table_entry("MyIngress.ipv4_lpm", {})]
    default = names.table_entry("MyIngress.ipv4_lpm", {})
    default.table_entry.is_default_action = True
    queries.append(default)
    counters = p4r.Entity()
    counters.counter_entry.SetInParent()
    queries.append(counters)
    parsed = state.read_all(queries)
    assert len(parsed) > 20
    encoded = state.read_encoded(queries)
    assert encoded == [e.SerializeToString() for e in parsed]
    response = p4r.ReadResponse.FromString(read_response(encoded))
    assert list(response.entities) == parsed
    assert read_response(parsed) == read_response(encoded)
