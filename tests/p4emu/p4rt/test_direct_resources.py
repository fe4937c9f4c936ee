from __future__ import annotations

import pytest
from finsy.proto import p4r
from p4rt_helpers import (
    FWD,
    T_CONST,
    T_EXACT,
    T_LPM,
    T_TERN,
    action,
    entry,
    exact,
    insert,
    lpm,
    modify,
    new_state,
    read,
    table_entries,
    ternary,
    update,
    write_one,
)

from p4emu.p4rt import P4RuntimeError
from p4emu.runtime.tables import Exact

MODIFY, INSERT, DELETE = p4r.Update.MODIFY, p4r.Update.INSERT, p4r.Update.DELETE
KEY = [exact(1, 0xAA), exact(2, 1)]
LPM_KEY = [lpm(1, 0x0A000000, 8)]


def dce(te: p4r.TableEntry, **fields) -> p4r.DirectCounterEntry:
    return p4r.DirectCounterEntry(table_entry=te, **fields)


def dme(te: p4r.TableEntry, **fields) -> p4r.DirectMeterEntry:
    return p4r.DirectMeterEntry(table_entry=te, **fields)


def test_direct_counter_counts_hits_and_can_be_written() -> None:
    state = new_state()
    assert write_one(state, insert(entry(T_EXACT, KEY, action(FWD, 1)))) == "OK"
    table = state.objects.tables["MyIngress.t_exact"]
    table.apply((0xAA, 1), 100)
    table.apply((0xAA, 1), 50)
    [got] = read(state, direct_counter_entry=dce(entry(T_EXACT, KEY)))
    assert (
        got.direct_counter_entry.data.packet_count,
        got.direct_counter_entry.data.byte_count,
    ) == (2, 150)
    data = p4r.CounterData(packet_count=10, byte_count=1000)
    assert (
        write_one(state, update(MODIFY, direct_counter_entry=dce(entry(T_EXACT, KEY), data=data)))
        == "OK"
    )
    [te] = table_entries(state, T_EXACT, counter_data=p4r.CounterData())
    assert (te.counter_data.packet_count, te.counter_data.byte_count) == (10, 1000)
    # unset data: unchanged
    assert write_one(state, update(MODIFY, direct_counter_entry=dce(entry(T_EXACT, KEY)))) == "OK"
    assert table.find([Exact(0xAA), Exact(1)]).packets == 10


@pytest.mark.parametrize(
    ("kind", "te", "code"),
    [
        (INSERT, entry(T_EXACT, KEY), "INVALID_ARGUMENT"),
        (DELETE, entry(T_EXACT, KEY), "INVALID_ARGUMENT"),
        (MODIFY, entry(T_EXACT, [exact(1, 1), exact(2, 1)]), "NOT_FOUND"),
        (MODIFY, entry(T_TERN, [ternary(1, 1, 1)], priority=1), "INVALID_ARGUMENT"),  # no counter
        (MODIFY, entry(0x02000099, KEY), "INVALID_ARGUMENT"),
        (MODIFY, entry(T_EXACT, [], is_default_action=True), "UNIMPLEMENTED"),
    ],
)
def test_direct_counter_write_errors(kind: int, te: p4r.TableEntry, code: str) -> None:
    state = new_state()
    assert write_one(state, insert(entry(T_EXACT, KEY, action(FWD, 1)))) == "OK"
    data = p4r.CounterData(packet_count=1)
    assert write_one(state, update(kind, direct_counter_entry=dce(te, data=data))) == code


def test_direct_counter_entry_without_table_entry_is_invalid() -> None:
    state = new_state()
    assert (
        write_one(state, update(MODIFY, direct_counter_entry=p4r.DirectCounterEntry()))
        == "INVALID_ARGUMENT"
    )


def test_direct_counter_wildcard_reads() -> None:
    state = new_state()
    for port in (1, 2):
        assert (
            write_one(state, insert(entry(T_EXACT, [exact(1, 5), exact(2, port)], action(FWD, 1))))
            == "OK"
        )
    per_table = read(state, direct_counter_entry=dce(entry(T_EXACT)))
    assert len(per_table) == 2
    everything = read(state, direct_counter_entry=dce(entry(0)))
    assert len(everything) == 4  # two in t_exact + two const entries of t_const
    assert {e.direct_counter_entry.table_entry.table_id for e in everything} == {T_EXACT, T_CONST}
    with pytest.raises(P4RuntimeError, match="NOT_FOUND"):
        read(state, direct_counter_entry=dce(entry(T_EXACT, [exact(1, 9), exact(2, 9)])))


def test_direct_meter_config_via_table_entry_and_direct_meter_entry() -> None:
    state = new_state()
    config = p4r.MeterConfig(cir=100, cburst=10, pir=200, pburst=20)
    assert (
        write_one(state, insert(entry(T_LPM, LPM_KEY, action(FWD, 1), meter_config=config))) == "OK"
    )
    [te] = table_entries(state, T_LPM, meter_config=p4r.MeterConfig())
    assert te.meter_config == config
    [te] = table_entries(state, T_LPM)
    assert not te.HasField("meter_config")  # only when requested
    [got] = read(state, direct_meter_entry=dme(entry(T_LPM, LPM_KEY)))
    assert got.direct_meter_entry.config == config
    # DirectMeterEntry MODIFY without config resets to the default (read back unset)
    assert write_one(state, update(MODIFY, direct_meter_entry=dme(entry(T_LPM, LPM_KEY)))) == "OK"
    [got] = read(state, direct_meter_entry=dme(entry(T_LPM, LPM_KEY)))
    assert not got.direct_meter_entry.HasField("config")
    new = p4r.MeterConfig(cir=1, cburst=1, pir=2, pburst=2)
    assert (
        write_one(state, update(MODIFY, direct_meter_entry=dme(entry(T_LPM, LPM_KEY), config=new)))
        == "OK"
    )
    [te] = table_entries(state, T_LPM, meter_config=p4r.MeterConfig())
    assert te.meter_config == new


def test_table_entry_modify_without_meter_config_resets_the_meter() -> None:
    state = new_state()
    config = p4r.MeterConfig(cir=100, cburst=10, pir=200, pburst=20)
    assert (
        write_one(state, insert(entry(T_LPM, LPM_KEY, action(FWD, 1), meter_config=config))) == "OK"
    )
    assert write_one(state, modify(entry(T_LPM, LPM_KEY, action(FWD, 2)))) == "OK"
    [te] = table_entries(state, T_LPM, meter_config=p4r.MeterConfig())
    assert not te.HasField("meter_config")


@pytest.mark.parametrize(
    ("config", "code"),
    [
        (p4r.MeterConfig(cir=-5, cburst=1, pir=1, pburst=1), "INVALID_ARGUMENT"),
        (p4r.MeterConfig(cir=10, cburst=1, pir=5, pburst=1), "INVALID_ARGUMENT"),  # pir < cir
        (p4r.MeterConfig(cir=1, cburst=1, pir=1, pburst=1, eburst=3), "UNIMPLEMENTED"),
        (p4r.MeterConfig(cir=1, cburst=1 << 33, pir=1, pburst=1), "UNIMPLEMENTED"),
        (p4r.MeterConfig(cir=-1, cburst=-1, pir=-1, pburst=-1), "OK"),  # PI's default spelling
    ],
)
def test_meter_config_validation(config: p4r.MeterConfig, code: str) -> None:
    state = new_state()
    assert write_one(state, insert(entry(T_LPM, LPM_KEY, action(FWD, 1)))) == "OK"
    assert (
        write_one(
            state, update(MODIFY, direct_meter_entry=dme(entry(T_LPM, LPM_KEY), config=config))
        )
        == code
    )


def test_direct_meter_entry_errors() -> None:
    state = new_state()
    assert write_one(state, insert(entry(T_LPM, LPM_KEY, action(FWD, 1)))) == "OK"
    assert (
        write_one(state, update(INSERT, direct_meter_entry=dme(entry(T_LPM, LPM_KEY))))
        == "INVALID_ARGUMENT"
    )
    assert (
        write_one(state, update(MODIFY, direct_meter_entry=dme(entry(T_EXACT, KEY))))
        == "INVALID_ARGUMENT"
    )
    other = entry(T_LPM, [lpm(1, 0x0B000000, 8)])
    assert write_one(state, update(MODIFY, direct_meter_entry=dme(other))) == "NOT_FOUND"
    colour = dme(entry(T_LPM, LPM_KEY), counter_data=p4r.MeterCounterData())
    assert write_one(state, update(MODIFY, direct_meter_entry=colour)) == "UNIMPLEMENTED"


def test_direct_meter_colours_packets_after_configuration() -> None:
    state = new_state()
    config = p4r.MeterConfig(cir=1, cburst=1, pir=1, pburst=1)  # packets meter: one packet burst
    assert (
        write_one(state, insert(entry(T_LPM, LPM_KEY, action(FWD, 1), meter_config=config))) == "OK"
    )
    table = state.objects.tables["MyIngress.t_lpm"]
    colours = [table.direct_meter_color(table.apply((0x0A000001,), 64), 64) for _ in range(3)]
    assert colours == [0, 2, 2]  # GREEN then RED (no tokens left, clock not moving)
