"""Match-action tables: exact, lpm, ternary, range, optional, size, const, default action."""

from __future__ import annotations

import random

import pytest

from p4emu.runtime.clock import VirtualClock
from p4emu.runtime.exceptions import (
    ConstDefaultActionError,
    ConstEntryError,
    DuplicateEntryError,
    EntryNotFoundError,
    InvalidEntryError,
    TableDefinitionError,
    TableFullError,
)
from p4emu.runtime.externs import (
    GREEN,
    RED,
    YELLOW,
    CounterType,
    DirectCounter,
    DirectMeter,
    MeterConfig,
    MeterType,
)
from p4emu.runtime.tables import (
    ActionScope,
    Exact,
    KeyField,
    Lpm,
    MatchKind,
    OptionalMatch,
    ProgramEntry,
    Range,
    Table,
    Ternary,
)

NO_ACTION = 1
FORWARD = 2
DROP = 3
SET_DEFAULT_ONLY = 4


def ip(text: str) -> int:
    a, b, c, d = (int(x) for x in text.split("."))
    return (a << 24) | (b << 16) | (c << 8) | d


def lpm_table(size: int = 1024) -> Table:
    return Table(
        "ingress.ipv4_lpm",
        [KeyField("hdr.ipv4.dstAddr", 32, MatchKind.lpm)],
        size,
        default_action=(DROP, ()),
    )


# --- exact ------------------------------------------------------------------------------


def test_exact_hit_and_miss() -> None:
    table = Table(
        "t",
        [KeyField("a", 8, MatchKind.exact), KeyField("b", 16, MatchKind.exact)],
        default_action=(NO_ACTION, ()),
    )
    table.insert([Exact(1), Exact(0x1234)], FORWARD, [5])
    result = table.apply((1, 0x1234))
    assert result.hit and result.action_id == FORWARD and result.args == (5,)
    miss = table.apply((1, 0x1235))
    assert not miss.hit and miss.action_id == NO_ACTION
    assert table.lookup((1, 0x1234)) is result


def test_exact_duplicate_and_not_found() -> None:
    table = Table("t", [KeyField("a", 8, MatchKind.exact)])
    table.insert([Exact(1)], FORWARD)
    with pytest.raises(DuplicateEntryError, match="table t"):
        table.insert([Exact(1)], DROP)
    with pytest.raises(EntryNotFoundError):
        table.delete([Exact(2)])
    with pytest.raises(InvalidEntryError, match="does not fit"):
        table.insert([Exact(256)], FORWARD)
    with pytest.raises(InvalidEntryError, match="cannot be omitted"):
        table.insert([None], FORWARD)
    with pytest.raises(InvalidEntryError, match="expected 1 key field"):
        table.insert([Exact(1), Exact(2)], FORWARD)
    with pytest.raises(InvalidEntryError, match="priority must be 0"):
        table.insert([Exact(3)], FORWARD, priority=10)


def test_modify_and_delete() -> None:
    table = Table("t", [KeyField("a", 8, MatchKind.exact)])
    table.insert([Exact(1)], FORWARD, [1])
    table.modify([Exact(1)], FORWARD, [2])
    assert table.apply((1,)).args == (2,)
    removed = table.delete([Exact(1)])
    assert removed.args == (2,)
    assert not table.apply((1,)).hit
    assert len(table) == 0


def test_c_arg_values_follow_the_arguments_and_refuse_what_c_cannot_hold() -> None:
    """``TableAction.c_args``' copy (``c_arg_values`` on both paths): the arguments as
    64-bit signed values, copied again whenever ``args`` is another object (a modify, a
    control plane's assignment), None for what a ``long long`` cannot hold exactly."""
    table = Table("t", [KeyField("a", 8, MatchKind.exact)], default_action=(DROP, (7, 8)))
    assert table.miss.c_arg_values() == (7, 8)
    table.insert([Exact(1)], FORWARD, [1, (1 << 63) - 1])
    entry = table.apply((1,))
    assert entry.c_arg_values() == (1, (1 << 63) - 1)
    table.modify([Exact(1)], FORWARD, [2, 0])
    assert entry.c_arg_values() == (2, 0)
    entry.args = (3, -(1 << 63))  # as P4Runtime's modify assigns it
    assert entry.c_arg_values() == (3, -(1 << 63))
    for refused in [(1 << 63,), (-(1 << 63) - 1,), (True,), (1.0,), [4, 5], (4, "5")]:
        entry.args = refused  # type: ignore[assignment]
        assert entry.c_arg_values() is None, refused
    entry.args = ()
    assert entry.c_arg_values() == ()
    table.set_default_action(FORWARD, [9, 10])
    assert table.miss.c_arg_values() == (9, 10)


# --- lpm --------------------------------------------------------------------------------


def test_lpm_longest_prefix_wins() -> None:
    table = lpm_table()
    table.insert([Lpm(ip("10.0.0.0"), 8)], FORWARD, [1])
    table.insert([Lpm(ip("10.1.0.0"), 16)], FORWARD, [2])
    table.insert([Lpm(ip("10.1.2.0"), 24)], FORWARD, [3])
    table.insert([None], FORWARD, [9])  # default route = prefix 0
    assert table.apply((ip("10.1.2.3"),)).args == (3,)
    assert table.apply((ip("10.1.3.3"),)).args == (2,)
    assert table.apply((ip("10.2.0.1"),)).args == (1,)
    assert table.apply((ip("11.0.0.1"),)).args == (9,)
    table.delete([Lpm(ip("10.1.2.0"), 24)])
    assert table.apply((ip("10.1.2.3"),)).args == (2,)


def test_lpm_with_exact_field() -> None:
    table = Table(
        "vrf_lpm",
        [KeyField("vrf", 8, MatchKind.exact), KeyField("dst", 32, MatchKind.lpm)],
    )
    table.insert([Exact(1), Lpm(ip("10.0.0.0"), 8)], FORWARD, [1])
    table.insert([Exact(2), Lpm(ip("10.0.0.0"), 16)], FORWARD, [2])
    assert table.apply((1, ip("10.0.5.5"))).args == (1,)
    assert table.apply((2, ip("10.0.5.5"))).args == (2,)
    assert not table.apply((2, ip("10.1.5.5"))).hit


def test_lpm_canonicalization_and_validation() -> None:
    table = lpm_table()
    table.insert([Lpm(0, 0)], FORWARD, [1])  # prefix 0 == don't care
    with pytest.raises(DuplicateEntryError):
        table.insert([None], FORWARD, [2])
    with pytest.raises(InvalidEntryError, match="bits outside mask"):
        table.insert([Lpm(ip("10.1.0.0"), 8)], FORWARD, [1])
    entry = table.insert([Lpm(ip("10.1.0.0"), 8)], FORWARD, [1], strict=False)
    assert table.match_of(entry) == [Lpm(ip("10.0.0.0"), 8)]
    with pytest.raises(InvalidEntryError, match="prefix length 33"):
        table.insert([Lpm(0, 33)], FORWARD)
    assert table.match_of(table.get([None])) == [None]


def test_two_lpm_fields_need_a_ternary_table() -> None:
    with pytest.raises(TableDefinitionError, match="at most one lpm"):
        Table("t", [KeyField("a", 8, MatchKind.lpm), KeyField("b", 8, MatchKind.lpm)])


# --- ternary / range / optional -------------------------------------------------------


def acl() -> Table:
    return Table(
        "acl",
        [
            KeyField("proto", 8, MatchKind.ternary),
            KeyField("dport", 16, MatchKind.range),
            KeyField("vlan", 12, MatchKind.optional),
        ],
        default_action=(NO_ACTION, ()),
    )


def test_ternary_priority_larger_wins() -> None:
    table = acl()
    table.insert([Ternary(6, 0xFF), None, None], FORWARD, [1], priority=10)
    table.insert([None, None, None], DROP, priority=1)
    table.insert([Ternary(6, 0xFF), Range(80, 80), None], FORWARD, [2], priority=20)
    assert table.apply((6, 80, 0)).args == (2,)
    assert table.apply((6, 81, 0)).args == (1,)
    assert table.apply((17, 80, 0)).action_id == DROP


def test_ternary_equal_priority_earliest_inserted_wins() -> None:
    table = acl()
    table.insert([Ternary(0, 0xF0), None, None], FORWARD, [1], priority=5)
    table.insert([Ternary(6, 0x0F), None, None], FORWARD, [2], priority=5)
    assert table.apply((6, 0, 0)).args == (1,)
    table.delete([Ternary(0, 0xF0), None, None], priority=5)
    assert table.apply((6, 0, 0)).args == (2,)


def test_same_key_different_priority_are_different_entries() -> None:
    table = acl()
    table.insert([Ternary(6, 0xFF), None, None], FORWARD, [1], priority=1)
    table.insert([Ternary(6, 0xFF), None, None], FORWARD, [2], priority=2)
    assert len(table) == 2
    assert table.apply((6, 0, 0)).args == (2,)
    assert table.get([Ternary(6, 0xFF), None, None], priority=1).args == (1,)


def test_range_and_optional_matching() -> None:
    table = acl()
    table.insert([None, Range(1000, 2000), OptionalMatch(7)], FORWARD, [1], priority=2)
    table.insert([None, Range(0, 0xFFFF), None], FORWARD, [2], priority=1)
    assert table.apply((0, 1000, 7)).args == (1,)
    assert table.apply((0, 2000, 7)).args == (1,)
    assert table.apply((0, 2001, 7)).args == (2,)
    assert table.apply((0, 1500, 8)).args == (2,)
    # the full range is canonical "don't care"
    assert table.match_of(table.entries()[1]) == [None, None, None]


def test_priority_table_validation() -> None:
    table = acl()
    with pytest.raises(InvalidEntryError, match="needs a priority >= 1"):
        table.insert([None, None, None], DROP)
    with pytest.raises(InvalidEntryError, match="low 9 > high 3"):
        table.insert([None, Range(9, 3), None], DROP, priority=1)
    with pytest.raises(InvalidEntryError, match="bits outside mask"):
        table.insert([Ternary(0x13, 0x0F), None, None], DROP, priority=1)
    entry = table.insert([Ternary(0x13, 0x0F), None, None], DROP, priority=1, strict=False)
    assert table.match_of(entry)[0] == Ternary(0x03, 0x0F)
    with pytest.raises(InvalidEntryError, match="expected a range"):
        table.insert([None, Ternary(1, 1), None], DROP, priority=2)


def test_lpm_inside_ternary_table_uses_priority_not_prefix() -> None:
    table = Table(
        "t",
        [KeyField("dst", 32, MatchKind.lpm), KeyField("proto", 8, MatchKind.ternary)],
    )
    table.insert([Lpm(ip("10.1.0.0"), 16), None], FORWARD, [16], priority=1)
    table.insert([Lpm(ip("10.0.0.0"), 8), None], FORWARD, [8], priority=2)
    assert table.apply((ip("10.1.1.1"), 6)).args == (8,)


# --- size, const, default action ------------------------------------------------------


def test_size_limit() -> None:
    table = lpm_table(size=2)
    table.insert([Lpm(ip("10.0.0.0"), 8)], FORWARD)
    table.insert([Lpm(ip("11.0.0.0"), 8)], FORWARD)
    with pytest.raises(TableFullError, match="full \\(2 entries\\)"):
        table.insert([Lpm(ip("12.0.0.0"), 8)], FORWARD)
    table.delete([Lpm(ip("10.0.0.0"), 8)])
    table.insert([Lpm(ip("12.0.0.0"), 8)], FORWARD)


def test_const_entries_table() -> None:
    table = Table(
        "t",
        [KeyField("h.f1", 8, MatchKind.ternary)],
        const_entries=True,
        default_action=(NO_ACTION, ()),
    )
    installed = table.install_program_entries(
        [
            ProgramEntry([Ternary(0x04, 0xFC)], FORWARD, (1,)),
            ProgramEntry([Ternary(0x04, 0xFF)], FORWARD, (3,)),
            ProgramEntry([None], FORWARD, (5,)),
        ]
    )
    # program order = priority order: the first entry wins
    assert [e.priority for e in installed] == [3, 2, 1]
    assert table.apply((0x04,)).args == (1,)
    assert table.apply((0x07,)).args == (1,)
    assert table.apply((0x99,)).args == (5,)
    assert all(e.is_const for e in table.entries())
    with pytest.raises(ConstEntryError):
        table.insert([Ternary(1, 0xFF)], FORWARD, priority=9)
    with pytest.raises(ConstEntryError):
        table.delete([None], priority=1)
    with pytest.raises(ConstEntryError):
        table.modify([None], DROP, priority=1)
    assert table.clear() == 0


def test_mutable_table_with_const_program_entry() -> None:
    table = Table("t", [KeyField("a", 8, MatchKind.exact)])
    table.install_program_entries([ProgramEntry([Exact(1)], FORWARD, (1,), is_const=True)])
    table.insert([Exact(2)], FORWARD, [2])
    with pytest.raises(ConstEntryError):
        table.delete([Exact(1)])
    assert table.clear() == 1
    assert [e.args for e in table.entries()] == [(1,)]


def test_default_action_settable_unless_const() -> None:
    table = Table("t", [KeyField("a", 8, MatchKind.exact)], default_action=(NO_ACTION, ()))
    table.set_default_action(DROP)
    assert table.apply((1,)).action_id == DROP
    table.reset_default_action()
    assert table.apply((1,)).action_id == NO_ACTION
    const = Table(
        "c",
        [KeyField("a", 8, MatchKind.exact)],
        default_action=(DROP, ()),
        const_default_action=True,
    )
    with pytest.raises(ConstDefaultActionError):
        const.set_default_action(NO_ACTION)


def test_action_scopes_and_params() -> None:
    table = Table(
        "t",
        [KeyField("a", 8, MatchKind.exact)],
        allowed_actions={
            FORWARD: ActionScope.table_and_default,
            DROP: ActionScope.table_only,
            SET_DEFAULT_ONLY: ActionScope.default_only,
        },
        action_param_widths={FORWARD: (9,)},
    )
    with pytest.raises(InvalidEntryError, match="not in the table"):
        table.insert([Exact(1)], 99)
    with pytest.raises(InvalidEntryError, match="@defaultonly"):
        table.insert([Exact(1)], SET_DEFAULT_ONLY)
    with pytest.raises(InvalidEntryError, match="@tableonly"):
        table.set_default_action(DROP)
    with pytest.raises(InvalidEntryError, match="takes 1 argument"):
        table.insert([Exact(1)], FORWARD, [])
    with pytest.raises(InvalidEntryError, match="does not fit in 9 bits"):
        table.insert([Exact(1)], FORWARD, [512])
    table.insert([Exact(1)], FORWARD, [511])
    table.set_default_action(SET_DEFAULT_ONLY)


def test_keyless_table_only_has_a_default() -> None:
    table = Table("t", [], default_action=(FORWARD, (3,)))
    assert table.apply(()).args == (3,)
    with pytest.raises(InvalidEntryError, match="no key"):
        table.insert([], FORWARD)


def test_packet_dict_lookup_gives_what_apply_gives() -> None:
    exact = Table("t", [KeyField("a", 8, MatchKind.exact)], default_action=(NO_ACTION, ()))
    entry = exact.insert([Exact(1)], FORWARD, [5])
    entries = exact.packet_dict()
    assert entries is not None

    def fast(key: tuple[int, ...]) -> object:
        # what generated code does: one key field, looked up by its value
        return entries.get(key[0]) or exact.miss

    assert fast((1,)) is entry is exact.apply((1,))
    assert entries == {1: entry}
    assert fast((2,)) is exact.apply((2,)) and not exact.miss.hit
    exact.set_default_action(DROP)  # the miss result follows the default action
    assert fast((2,)) is exact.apply((2,)) and fast((2,)).action_id == DROP
    exact.delete([Exact(1)])
    exact.insert([Exact(3)], FORWARD, [6])  # the same dictionary, kept up to date
    assert fast((1,)).action_id == DROP and fast((3,)).args == (6,)
    exact.reset_default_action()
    assert fast((1,)).action_id == NO_ACTION
    # two key fields: entries by the tuple of their values
    pair = Table(
        "p",
        [KeyField("a", 8, MatchKind.exact), KeyField("b", 128, MatchKind.exact)],
        default_action=(NO_ACTION, ()),
    )
    both = pair.insert([Exact(1), Exact(1 << 127)], FORWARD, [7])
    assert pair.packet_dict() == {(1, 1 << 127): both}
    assert pair.apply((1, 1 << 127)) is both and not pair.apply((1, 0)).hit
    pair.delete([Exact(1), Exact(1 << 127)])
    assert pair.packet_dict() == {}
    # what apply does beyond the lookup (direct counter, idle timeout) keeps apply
    counted = Table(
        "c",
        [KeyField("a", 8, MatchKind.exact)],
        direct_counter=DirectCounter("c_counter", CounterType.packets_and_bytes),
    )
    assert counted.packet_dict() is None
    assert lpm_table().packet_dict() is None


def test_exact_at_gives_what_the_packet_dict_gives_through_every_write() -> None:
    """exact_at (compiled: a C map rebuilt from the dictionary after any change) against
    ``packet_dict().get(key) or miss`` after inserts, modifies, deletes, default action
    changes and clear, for keys that collide in the map (every key hashed to few slots,
    keys at 0 and 2**48 - 1) and keys never inserted."""
    rng = random.Random(5)
    table = Table("t", [KeyField("a", 48, MatchKind.exact)], 4096, default_action=(NO_ACTION, ()))
    entries = table.packet_dict()
    assert entries is not None and table.exact_key_bits() == 48

    def check(keys: list[int]) -> None:
        for key in keys:
            expected = entries.get(key) or table.miss
            assert table.exact_at(key) is expected

    assert table.exact_at(0) is table.miss
    live: list[int] = []
    probes = [0, 1, (1 << 48) - 1, 1 << 47]
    for round_ in range(6):
        fresh = [rng.randrange(1 << 48) for _ in range(300)] + [
            round_ * 1024 + i
            for i in range(64)  # neighbouring values
        ]
        for key in fresh:
            if key not in entries:
                table.insert([Exact(key)], FORWARD, [key & 0xFF])
                live.append(key)
        check(live + probes + [rng.randrange(1 << 48) for _ in range(200)])
        for key in rng.sample(live, 40):
            table.modify([Exact(key)], DROP)
        check(live + probes)
        gone = rng.sample(live, 150)
        for key in gone:
            table.delete([Exact(key)])
            live.remove(key)
        check(live + probes + gone)
        assert not any(table.exact_at(key).hit for key in gone)
        table.set_default_action(DROP)
        check(probes + [rng.randrange(1 << 48) for _ in range(50)])
        table.reset_default_action()
    assert table.exact_at(-1) is table.miss  # below every key: the empty slots' marker
    table.clear()
    check(live + probes)
    assert all(table.exact_at(key) is table.miss for key in live)
    # a full table, the map at its fewest slots and full to one half
    small = Table("s", [KeyField("p", 9, MatchKind.exact)], 4)
    for port in (0, 8, 16, 511):
        small.insert([Exact(port)], FORWARD, [port])
    assert [small.exact_at(p).args for p in (0, 8, 16, 511)] == [(0,), (8,), (16,), (511,)]
    assert not any(small.exact_at(p).hit for p in range(1, 8))


def test_exact_key_bits_names_the_tables_exact_at_serves() -> None:
    assert Table("a", [KeyField("a", 63, MatchKind.exact)]).exact_key_bits() == 63
    assert Table("w", [KeyField("w", 128, MatchKind.exact)]).exact_key_bits() == 128
    two = [KeyField("a", 8, MatchKind.exact), KeyField("b", 8, MatchKind.exact)]
    assert Table("p", two).exact_key_bits() == 0
    counted = Table(
        "c",
        [KeyField("a", 8, MatchKind.exact)],
        direct_counter=DirectCounter("c_counter", CounterType.packets_and_bytes),
    )
    assert counted.exact_key_bits() == 0
    assert lpm_table().exact_key_bits() == 0


# --- direct counters, meters, idle timeout --------------------------------------------


def test_direct_counter_counts_hits_only() -> None:
    table = Table(
        "t",
        [KeyField("a", 8, MatchKind.exact)],
        direct_counter=DirectCounter("t_counter", CounterType.packets_and_bytes),
    )
    entry = table.insert([Exact(1)], FORWARD, counter=(10, 1000))
    table.apply((1,), 64)
    table.apply((1,), 100)
    table.apply((2,), 100)
    assert (entry.packets, entry.bytes) == (12, 1164)


def test_direct_meter_per_entry() -> None:
    clock = VirtualClock()
    table = Table(
        "t",
        [KeyField("a", 8, MatchKind.exact)],
        direct_meter=DirectMeter("t_meter", MeterType.packets),
        clock=clock,
    )
    table.insert([Exact(1)], FORWARD, meter_config=MeterConfig(1000, 1, 1000, 2))
    table.insert([Exact(2)], FORWARD)
    hit = table.apply((1,))
    assert [table.direct_meter_color(hit, 64) for _ in range(3)] == [GREEN, YELLOW, RED]
    other = table.apply((2,))
    assert table.direct_meter_color(other, 64) == GREEN  # unconfigured
    miss = table.apply((3,))
    assert table.direct_meter_color(miss, 64, unchanged=9) == 9
    table.set_direct_meter_config([Exact(2)], MeterConfig(0, 0, 0, 0))
    assert table.direct_meter_color(table.apply((2,)), 64) == RED
    plain = Table("p", [KeyField("a", 8, MatchKind.exact)])
    with pytest.raises(InvalidEntryError, match="no direct meter"):
        plain.insert([Exact(1)], FORWARD, meter_config=MeterConfig(1, 1, 1, 1))


def test_idle_timeout_notifications() -> None:
    clock = VirtualClock()
    table = Table("t", [KeyField("a", 8, MatchKind.exact)], supports_idle_timeout=True, clock=clock)
    entry = table.insert([Exact(1)], FORWARD, idle_timeout_ns=1_000_000)
    table.insert([Exact(2)], FORWARD)  # no timeout
    clock.advance(600)
    table.apply((1,))
    clock.advance(600)
    assert table.expired_entries() == []
    clock.advance(500)
    assert table.expired_entries() == [entry]
    assert table.expired_entries() == []  # reported once
    table.apply((1,))
    clock.advance(1000)
    assert table.expired_entries() == [entry]
    no_idle = Table("n", [KeyField("a", 8, MatchKind.exact)])
    with pytest.raises(InvalidEntryError, match="idle timeouts"):
        no_idle.insert([Exact(1)], FORWARD, idle_timeout_ns=5)
    with pytest.raises(TableDefinitionError, match="need a clock"):
        Table("x", [KeyField("a", 8, MatchKind.exact)], supports_idle_timeout=True)


def test_entries_iterate_in_insertion_order_and_find() -> None:
    table = acl()
    for prio in (3, 1, 2):
        table.insert([Ternary(prio, 0xFF), None, None], FORWARD, [prio], priority=prio)
    assert [e.priority for e in table.entries()] == [3, 1, 2]
    assert [e.priority for e in table] == [3, 1, 2]
    assert table.find([Ternary(9, 0xFF), None, None], priority=9) is None
    key = [Ternary(1, 0xFF), None, None]
    assert table.find(key, priority=1) is table.get(key, priority=1)


def test_insert_validated_stores_a_canonical_key_and_keeps_the_table_invariants() -> None:
    table = lpm_table(size=2)
    key = table.canonicalize([Lpm(ip("10.0.0.0"), 8)])
    entry = table.insert_validated(key, FORWARD, (7,), priority=0, controller_metadata=3)
    assert table.find_canonical(key) is entry
    assert table.find([Lpm(ip("10.0.0.0"), 8)]) is entry
    assert (entry.args, entry.controller_metadata) == ((7,), 3)
    assert table.apply((ip("10.1.2.3"),)) is entry
    with pytest.raises(DuplicateEntryError, match=r"hdr\.ipv4\.dstAddr=Lpm"):
        table.insert_validated(key, FORWARD, (8,), priority=0)
    table.insert_validated(table.canonicalize([Lpm(ip("11.0.0.0"), 8)]), DROP, (), priority=0)
    with pytest.raises(TableFullError, match="full \\(2 entries\\)"):
        table.insert_validated(table.canonicalize([Lpm(ip("12.0.0.0"), 8)]), DROP, (), priority=0)
    const = Table("t", [KeyField("a", 8, MatchKind.exact)], const_entries=True)
    with pytest.raises(ConstEntryError):
        const.insert_validated(const.canonicalize([Exact(1)]), FORWARD, (), priority=0)
    assert len(const) == 0


def test_table_and_counter_are_final_compiled() -> None:
    """Compiled, ``Table`` and ``Counter`` are final extension types (their per-packet
    methods, ``exact_at`` and ``count_at``, are then called without the check for a
    Python override): deriving from them is a ``TypeError`` there; pure classes still
    allow it (nothing in the project derives from either)."""
    from p4emu.runtime.externs import Counter

    for base in (Table, Counter):
        compiled = hasattr(base, "__pyx_vtable__")  # an extension type's C methods
        if compiled:
            with pytest.raises(TypeError):
                type("Derived", (base,), {})
        else:
            assert issubclass(type("Derived", (base,), {}), base)
