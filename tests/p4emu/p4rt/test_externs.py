from __future__ import annotations

import pytest
from finsy.proto import p4d, p4r
from p4rt_helpers import (
    CTR,
    CTR_PKTS,
    DCTR_EXACT,
    DIGEST,
    MTR,
    REG,
    REG_SIGNED,
    new_state,
    read,
    update,
    write_one,
)

from p4emu.p4rt import P4RuntimeError

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE


def counter_entry(counter_id: int, index: int | None = None, **data) -> p4r.CounterEntry:
    out = p4r.CounterEntry(counter_id=counter_id)
    if index is not None:
        out.index.index = index
    if data:
        out.data.CopyFrom(p4r.CounterData(**data))
    return out


def test_counter_read_all_cells_and_one_cell() -> None:
    state = new_state()
    counter = state.objects.counters["MyIngress.ctr"]
    counter.count(2, 100)
    cells = read(state, counter_entry=counter_entry(CTR))
    assert [e.counter_entry.index.index for e in cells] == [0, 1, 2, 3]
    [one] = read(state, counter_entry=counter_entry(CTR, 2))
    assert (one.counter_entry.data.packet_count, one.counter_entry.data.byte_count) == (1, 100)
    every = read(state, counter_entry=counter_entry(0))
    assert len(every) == 6  # 4 + 2 cells; direct counters are not counter entries
    assert {e.counter_entry.counter_id for e in every} == {CTR, CTR_PKTS}


def test_counter_write_one_cell_all_cells_and_units() -> None:
    state = new_state()
    assert (
        write_one(
            state,
            update(MODIFY, counter_entry=counter_entry(CTR, 1, packet_count=5, byte_count=50)),
        )
        == "OK"
    )
    assert state.objects.counters["MyIngress.ctr"].read(1) == (5, 50)
    assert (
        write_one(
            state, update(MODIFY, counter_entry=counter_entry(CTR, packet_count=0, byte_count=0))
        )
        == "OK"
    )
    assert all(state.objects.counters["MyIngress.ctr"].read(i) == (0, 0) for i in range(4))
    pkts = state.objects.counters["MyIngress.ctr_pkts"]
    pkts.count(0, 64)
    # a packets counter only takes the packet count
    assert (
        write_one(
            state,
            update(MODIFY, counter_entry=counter_entry(CTR_PKTS, 0, packet_count=9, byte_count=1)),
        )
        == "OK"
    )
    assert pkts.read(0) == (9, 64)
    # data unset: nothing changes
    assert write_one(state, update(MODIFY, counter_entry=counter_entry(CTR_PKTS, 0))) == "OK"
    assert pkts.read(0) == (9, 64)


@pytest.mark.parametrize(
    ("kind", "msg", "code"),
    [
        (INSERT, counter_entry(CTR, 0, packet_count=1), "INVALID_ARGUMENT"),
        (DELETE, counter_entry(CTR, 0), "INVALID_ARGUMENT"),
        (MODIFY, counter_entry(CTR, -1, packet_count=1), "INVALID_ARGUMENT"),
        (MODIFY, counter_entry(CTR, 4, packet_count=1), "OUT_OF_RANGE"),
        (
            MODIFY,
            counter_entry(DCTR_EXACT, 0, packet_count=1),
            "INVALID_ARGUMENT",
        ),  # direct counter id
        (MODIFY, counter_entry(0x12000099, 0, packet_count=1), "INVALID_ARGUMENT"),
        (MODIFY, counter_entry(CTR, 0, packet_count=-1), "INVALID_ARGUMENT"),
    ],
)
def test_counter_write_errors(kind: int, msg: p4r.CounterEntry, code: str) -> None:
    assert write_one(new_state(), update(kind, counter_entry=msg)) == code


def test_counter_read_errors() -> None:
    state = new_state()
    with pytest.raises(P4RuntimeError, match="OUT_OF_RANGE"):
        read(state, counter_entry=counter_entry(CTR, 10))
    with pytest.raises(P4RuntimeError, match="INVALID_ARGUMENT"):
        read(state, counter_entry=counter_entry(CTR, -2))


def meter_entry(index: int | None = None, config: p4r.MeterConfig | None = None) -> p4r.MeterEntry:
    out = p4r.MeterEntry(meter_id=MTR)
    if index is not None:
        out.index.index = index
    if config is not None:
        out.config.CopyFrom(config)
    return out


def test_meter_configure_read_and_reset() -> None:
    state = new_state()
    config = p4r.MeterConfig(cir=1000, cburst=100, pir=2000, pburst=200)
    assert write_one(state, update(MODIFY, meter_entry=meter_entry(1, config))) == "OK"
    cells = read(state, meter_entry=meter_entry())
    assert [e.meter_entry.HasField("config") for e in cells] == [False, True]
    assert cells[1].meter_entry.config == config
    assert write_one(state, update(MODIFY, meter_entry=meter_entry(None, config))) == "OK"
    assert all(e.meter_entry.config == config for e in read(state, meter_entry=meter_entry()))
    assert write_one(state, update(MODIFY, meter_entry=meter_entry(0))) == "OK"  # reset
    assert not read(state, meter_entry=meter_entry(0))[0].meter_entry.HasField("config")
    assert len(read(state, meter_entry=p4r.MeterEntry())) == 2


def test_meter_errors() -> None:
    state = new_state()
    bad = p4r.MeterConfig(cir=10, cburst=1, pir=1, pburst=1)
    assert write_one(state, update(MODIFY, meter_entry=meter_entry(0, bad))) == "INVALID_ARGUMENT"
    assert write_one(state, update(MODIFY, meter_entry=meter_entry(2))) == "OUT_OF_RANGE"
    assert write_one(state, update(INSERT, meter_entry=meter_entry(0))) == "INVALID_ARGUMENT"
    colour = meter_entry(0)
    colour.counter_data.SetInParent()
    assert write_one(state, update(MODIFY, meter_entry=colour)) == "UNIMPLEMENTED"


def register_entry(
    register_id: int, index: int | None = None, value: bytes | None = None
) -> p4r.RegisterEntry:
    out = p4r.RegisterEntry(register_id=register_id)
    if index is not None:
        out.index.index = index
    if value is not None:
        out.data.CopyFrom(p4d.P4Data(bitstring=value))
    return out


def test_register_write_read_with_non_canonical_input() -> None:
    state = new_state()
    assert (
        write_one(state, update(MODIFY, register_entry=register_entry(REG, 2, b"\x00\x00\x12\x34")))
        == "OK"
    )
    assert state.objects.registers["MyIngress.reg"].get(2) == 0x1234
    [got] = read(state, register_entry=register_entry(REG, 2))
    assert got.register_entry.data.bitstring == b"\x12\x34"
    cells = read(state, register_entry=register_entry(REG))
    assert [c.register_entry.data.bitstring for c in cells] == [
        b"\x00",
        b"\x00",
        b"\x12\x34",
        b"\x00",
    ]
    assert len(read(state, register_entry=p4r.RegisterEntry())) == 6


def test_register_wildcard_write_and_signed_cells() -> None:
    state = new_state()
    assert (
        write_one(state, update(MODIFY, register_entry=register_entry(REG, None, b"\x07"))) == "OK"
    )
    assert state.objects.registers["MyIngress.reg"].values() == [7, 7, 7, 7]
    assert (
        write_one(state, update(MODIFY, register_entry=register_entry(REG_SIGNED, 0, b"\xff\xfe")))
        == "OK"
    )
    assert state.objects.registers["MyIngress.reg_signed"].get(0) == 0xFE
    [got] = read(state, register_entry=register_entry(REG_SIGNED, 0))
    assert got.register_entry.data.bitstring == b"\xfe"  # -2, canonical


@pytest.mark.parametrize(
    ("kind", "msg", "code"),
    [
        (MODIFY, register_entry(REG, 0, b"\x01\x00\x00"), "INVALID_ARGUMENT"),
        (MODIFY, register_entry(REG, 0), "INVALID_ARGUMENT"),  # no data
        (MODIFY, register_entry(REG, 4, b"\x01"), "OUT_OF_RANGE"),
        (MODIFY, register_entry(REG, -1, b"\x01"), "INVALID_ARGUMENT"),
        (INSERT, register_entry(REG, 0, b"\x01"), "INVALID_ARGUMENT"),
        (MODIFY, register_entry(REG_SIGNED, 0, b"\x00\x80"), "INVALID_ARGUMENT"),  # 128 > int<8>
        (MODIFY, register_entry(0x16000099, 0, b"\x01"), "INVALID_ARGUMENT"),
    ],
)
def test_register_errors(kind: int, msg: p4r.RegisterEntry, code: str) -> None:
    assert write_one(new_state(), update(kind, register_entry=msg)) == code


def digest_entry(digest_id: int = DIGEST, **config) -> p4r.DigestEntry:
    out = p4r.DigestEntry(digest_id=digest_id)
    if config:
        out.config.CopyFrom(p4r.DigestEntry.Config(**config))
    return out


def test_digest_config_lifecycle() -> None:
    state = new_state()
    assert read(state, digest_entry=p4r.DigestEntry()) == []
    assert state.digest_config(DIGEST) is None
    assert (
        write_one(state, update(MODIFY, digest_entry=digest_entry(max_list_size=1))) == "NOT_FOUND"
    )
    assert (
        write_one(
            state, update(INSERT, digest_entry=digest_entry(max_list_size=2, max_timeout_ns=5))
        )
        == "OK"
    )
    assert (
        write_one(state, update(INSERT, digest_entry=digest_entry(max_list_size=2)))
        == "ALREADY_EXISTS"
    )
    assert state.digest_config(DIGEST).max_list_size == 2
    assert (
        write_one(
            state, update(MODIFY, digest_entry=digest_entry(max_list_size=3, ack_timeout_ns=7))
        )
        == "OK"
    )
    [got] = read(state, digest_entry=p4r.DigestEntry())
    assert (got.digest_entry.config.max_list_size, got.digest_entry.config.ack_timeout_ns) == (3, 7)
    assert write_one(state, update(DELETE, digest_entry=digest_entry())) == "OK"
    assert write_one(state, update(DELETE, digest_entry=digest_entry())) == "NOT_FOUND"
    assert (
        write_one(state, update(INSERT, digest_entry=digest_entry())) == "INVALID_ARGUMENT"
    )  # no config
    assert (
        write_one(state, update(INSERT, digest_entry=digest_entry(max_list_size=-1)))
        == "INVALID_ARGUMENT"
    )
    assert (
        write_one(state, update(INSERT, digest_entry=digest_entry(0x17000099, max_list_size=1)))
        == "INVALID_ARGUMENT"
    )
