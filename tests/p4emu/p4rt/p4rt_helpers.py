"""A hand-built :class:`ProgramObjects` covering every entity kind, plus message builders.

Building the objects directly (rather than compiling P4) keeps these tests independent
of the front end and backend; the STF tests exercise the compiled path.
"""

from __future__ import annotations

from finsy.proto import p4i, p4r, p4t

from p4emu.p4rt import P4RuntimeState
from p4emu.runtime.action_profiles import ActionProfile
from p4emu.runtime.clock import VirtualClock
from p4emu.runtime.externs import (
    Counter,
    CounterType,
    DigestQueue,
    DirectCounter,
    DirectMeter,
    Meter,
    MeterType,
    Register,
)
from p4emu.runtime.objects import (
    ActionInfo,
    ActionParamInfo,
    DigestInfo,
    DirectResourceInfo,
    KeyFieldInfo,
    ProgramObjects,
    TableInfo,
    ValueSet,
    ValueSetField,
)
from p4emu.runtime.pre import ReplicationEngine
from p4emu.runtime.tables import ActionScope, Exact, KeyField, MatchKind, ProgramEntry, Table

# --- ids ------------------------------------------------------------------------------

NO_ACTION = 0x01000001
FWD = 0x01000002  # fwd(bit<9> port)
SET_MAC = 0x01000003  # set_mac(bit<48> mac)
TBL_ONLY = 0x01000004  # @tableonly
DEF_ONLY = 0x01000005  # @defaultonly

T_EXACT = 0x02000001  # dst:exact48 port:exact9, size 4, direct counter, idle timeout
T_LPM = 0x02000002  # dst:lpm32, direct meter, const default fwd(1)
T_TERN = 0x02000003  # a:ternary16 b:range8 c:optional9
T_CONST = 0x02000004  # k:exact8, const entries, direct counter
T_KEYLESS = 0x02000005
T_SEL = 0x02000006  # k:exact8, implementation = selector SEL
T_PROF = 0x02000007  # k:exact8, implementation = profile PROF
T_INIT = 0x02000008  # k:exact8, `entries` with one const and one non-const entry

SEL = 0x11000001
PROF = 0x11000002
CTR = 0x12000001  # packets_and_bytes, size 4
CTR_PKTS = 0x12000002  # packets, size 2
DCTR_EXACT = 0x13000001
DCTR_CONST = 0x13000002
MTR = 0x14000001  # bytes, size 2
DMTR_LPM = 0x15000001
REG = 0x16000001  # bit<16>[4]
REG_SIGNED = 0x16000002  # int<8>[2]
VS = 0x03000001  # value_set<bit<16>>(2)
VS2 = 0x03000002  # value_set<{ternary 8, exact 8}>(4)
DIGEST = 0x17000001


def build_objects() -> ProgramObjects:
    """The run-time objects of a small program (ids above) with every kind of P4Runtime
    entity: tables of each match kind and scope, action profiles, externs, value sets."""
    clock = VirtualClock()
    objects = ProgramObjects(
        p4info=p4i.P4Info(),
        clock=clock,
        pre=ReplicationEngine(),
        digest_queue=DigestQueue(clock),
    )
    widths = _add_actions(objects)
    _add_tables(objects, widths)
    _add_profile_tables(objects, widths)
    _add_externs(objects)
    _add_value_sets_and_digest(objects)
    return objects


def _add_actions(objects: ProgramObjects) -> dict[int, tuple[int, ...]]:
    """The actions; returns their parameter widths by id."""
    actions = [
        ActionInfo(NO_ACTION, "NoAction"),
        ActionInfo(FWD, "MyIngress.fwd", (ActionParamInfo(1, "port", 9),)),
        ActionInfo(SET_MAC, "MyIngress.set_mac", (ActionParamInfo(1, "mac", 48),)),
        ActionInfo(TBL_ONLY, "MyIngress.tbl_only"),
        ActionInfo(DEF_ONLY, "MyIngress.def_only"),
    ]
    for action in actions:
        objects.actions[action.name] = action
        objects.register(action.name, action.id)
    return {a.id: a.param_widths for a in actions}


def _scopes(*ids: int, tbl_only: bool = False, def_only: bool = False) -> dict:
    out = {i: ActionScope.table_and_default for i in ids}
    if tbl_only:
        out[TBL_ONLY] = ActionScope.table_only
    if def_only:
        out[DEF_ONLY] = ActionScope.default_only
    return out


def _add_table(
    objects: ProgramObjects,
    widths: dict[int, tuple[int, ...]],
    table_id: int,
    name: str,
    key: list[KeyFieldInfo],
    allowed: dict | None,
    *,
    size: int = 1024,
    default: tuple[int, tuple[int, ...]] = (NO_ACTION, ()),
    const_default: bool = False,
    const_entries: bool = False,
    direct_counter: tuple[int, str] | None = None,
    direct_meter: tuple[int, str] | None = None,
    idle: bool = False,
    profile: str | None = None,
) -> TableInfo:
    dc = DirectCounter(direct_counter[1], CounterType.packets_and_bytes) if direct_counter else None
    dm = DirectMeter(direct_meter[1], MeterType.packets) if direct_meter else None
    table = Table(
        name,
        [KeyField(f.name, f.width, MatchKind(f.match_kind)) for f in key],
        size,
        default_action=default,
        const_default_action=const_default,
        const_entries=const_entries,
        allowed_actions=allowed,
        action_param_widths=widths if allowed is not None else None,
        direct_counter=dc,
        direct_meter=dm,
        supports_idle_timeout=idle,
        clock=objects.clock,
    )
    info = TableInfo(
        table_id,
        name,
        table,
        tuple(key),
        action_ids=tuple(allowed or ()),
        action_profile=profile,
        direct_counter=direct_counter[1] if direct_counter else None,
        direct_meter=direct_meter[1] if direct_meter else None,
        is_const=const_entries,
    )
    objects.tables[name] = table
    objects.table_info[name] = info
    objects.register(name, table_id)
    if dc is not None:
        res = DirectResourceInfo(direct_counter[0], dc.name, name, dc)  # type: ignore[index]
        objects.direct_counters[dc.name] = res
        objects.register(dc.name, res.id)
    if dm is not None:
        res = DirectResourceInfo(direct_meter[0], dm.name, name, dm)  # type: ignore[index]
        objects.direct_meters[dm.name] = res
        objects.register(dm.name, res.id)
    return info


def _add_tables(objects: ProgramObjects, widths: dict[int, tuple[int, ...]]) -> None:
    """The tables of direct actions: one per match kind, a const one, a keyless one."""
    _add_table(
        objects,
        widths,
        T_EXACT,
        "MyIngress.t_exact",
        [
            KeyFieldInfo(1, "hdr.eth.dst", 48, "exact"),
            KeyFieldInfo(2, "std.ingress_port", 9, "exact"),
        ],
        _scopes(FWD, NO_ACTION, SET_MAC, tbl_only=True, def_only=True),
        size=4,
        direct_counter=(DCTR_EXACT, "MyIngress.c_exact"),
        idle=True,
    )
    _add_table(
        objects,
        widths,
        T_LPM,
        "MyIngress.t_lpm",
        [KeyFieldInfo(1, "hdr.ipv4.dst", 32, "lpm")],
        _scopes(FWD, NO_ACTION),
        default=(FWD, (1,)),
        const_default=True,
        direct_meter=(DMTR_LPM, "MyIngress.m_lpm"),
    )
    _add_table(
        objects,
        widths,
        T_TERN,
        "MyIngress.t_tern",
        [
            KeyFieldInfo(1, "a", 16, "ternary"),
            KeyFieldInfo(2, "b", 8, "range"),
            KeyFieldInfo(3, "c", 9, "optional"),
        ],
        _scopes(FWD, NO_ACTION),
    )
    const_info = _add_table(
        objects,
        widths,
        T_CONST,
        "MyIngress.t_const",
        [KeyFieldInfo(1, "k", 8, "exact")],
        _scopes(FWD, NO_ACTION),
        const_entries=True,
        direct_counter=(DCTR_CONST, "MyIngress.c_const"),
    )
    const_info.table.install_program_entries(
        [ProgramEntry([Exact(1)], FWD, (1,)), ProgramEntry([Exact(2)], FWD, (2,))]
    )
    _add_table(objects, widths, T_KEYLESS, "MyIngress.t_keyless", [], _scopes(FWD, NO_ACTION))


def _add_profile_tables(objects: ProgramObjects, widths: dict[int, tuple[int, ...]]) -> None:
    """An action selector and an action profile with a table each, and a table whose
    program entries are partly const."""
    selector = ActionProfile(
        "MyIngress.sel", id=SEL, size=8, with_selector=True, max_group_size=4,
        action_param_widths={FWD: (9,), NO_ACTION: ()},
        hash_function=lambda data: sum(data), selector_widths=(8,),
    )  # fmt: skip
    profile = ActionProfile(
        "MyIngress.prof", id=PROF, size=4, action_param_widths={FWD: (9,), NO_ACTION: ()}
    )
    for p in (selector, profile):
        objects.action_profiles[p.name] = p
        objects.register(p.name, p.id)
    key = [KeyFieldInfo(1, "k", 8, "exact")]
    _add_table(objects, widths, T_SEL, "MyIngress.t_sel", key, None, profile=selector.name)
    _add_table(objects, widths, T_PROF, "MyIngress.t_prof", key, None, profile=profile.name)
    init_info = _add_table(
        objects, widths, T_INIT, "MyIngress.t_init", key, _scopes(FWD, NO_ACTION)
    )
    init_info.table.install_program_entries(
        [
            ProgramEntry([Exact(1)], FWD, (1,), is_const=True),
            ProgramEntry([Exact(2)], FWD, (2,), is_const=False),
        ]
    )


def _add_externs(objects: ProgramObjects) -> None:
    """Counters, a meter and registers (unsigned and signed, with their P4Info)."""
    clock = objects.clock
    for object_id, name, obj, mapping in (
        (CTR, "MyIngress.ctr", Counter("MyIngress.ctr", 4, CounterType.packets_and_bytes), objects.counters),
        (CTR_PKTS, "MyIngress.ctr_pkts", Counter("MyIngress.ctr_pkts", 2, CounterType.packets), objects.counters),
        (MTR, "MyIngress.mtr", Meter("MyIngress.mtr", 2, MeterType.bytes, clock), objects.meters),
        (REG, "MyIngress.reg", Register("MyIngress.reg", 16, 4), objects.registers),
        (REG_SIGNED, "MyIngress.reg_signed", Register("MyIngress.reg_signed", 8, 2), objects.registers),
    ):  # fmt: skip
        mapping[name] = obj
        objects.register(name, object_id)
    objects.p4info.registers.add(
        preamble=p4i.Preamble(id=REG, name="MyIngress.reg"),
        type_spec=p4t.P4DataTypeSpec(
            bitstring=p4t.P4BitstringLikeTypeSpec(bit=p4t.P4BitTypeSpec(bitwidth=16))
        ),
        size=4,
    )
    objects.p4info.registers.add(
        preamble=p4i.Preamble(id=REG_SIGNED, name="MyIngress.reg_signed"),
        type_spec=p4t.P4DataTypeSpec(
            bitstring=p4t.P4BitstringLikeTypeSpec(int=p4t.P4IntTypeSpec(bitwidth=8))
        ),
        size=2,
    )


def _add_value_sets_and_digest(objects: ProgramObjects) -> None:
    for vs in (
        ValueSet("MyParser.vs", [ValueSetField(1, "", 16)], 2, id=VS),
        ValueSet(
            "MyParser.vs2",
            [ValueSetField(1, "f1", 8, MatchKind.ternary), ValueSetField(2, "f2", 8)],
            4,
            id=VS2,
        ),
    ):
        objects.value_sets[vs.name] = vs
        objects.register(vs.name, vs.id)
    digest = DigestInfo(DIGEST, "learn_t", (("mac", 48), ("port", 9)))
    objects.digests[digest.name] = digest
    objects.register(digest.name, digest.id)


def new_state() -> P4RuntimeState:
    return P4RuntimeState(build_objects())


# --- message builders ------------------------------------------------------------------


def b(value: int) -> bytes:
    """Canonical bytestring of ``value``."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def exact(field_id: int, value: int | bytes) -> p4r.FieldMatch:
    data = value if isinstance(value, bytes) else b(value)
    return p4r.FieldMatch(field_id=field_id, exact=p4r.FieldMatch.Exact(value=data))


def lpm(field_id: int, value: int, prefix: int) -> p4r.FieldMatch:
    return p4r.FieldMatch(
        field_id=field_id, lpm=p4r.FieldMatch.LPM(value=b(value), prefix_len=prefix)
    )


def ternary(field_id: int, value: int, mask: int) -> p4r.FieldMatch:
    return p4r.FieldMatch(
        field_id=field_id, ternary=p4r.FieldMatch.Ternary(value=b(value), mask=b(mask))
    )


def range_(field_id: int, low: int, high: int) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=field_id, range=p4r.FieldMatch.Range(low=b(low), high=b(high)))


def optional(field_id: int, value: int) -> p4r.FieldMatch:
    return p4r.FieldMatch(field_id=field_id, optional=p4r.FieldMatch.Optional(value=b(value)))


def action(action_id: int, *args: int | bytes) -> p4r.TableAction:
    params = [
        p4r.Action.Param(param_id=i, value=a if isinstance(a, bytes) else b(a))
        for i, a in enumerate(args, start=1)
    ]
    return p4r.TableAction(action=p4r.Action(action_id=action_id, params=params))


def entry(
    table_id: int,
    matches: list[p4r.FieldMatch] = (),  # type: ignore[assignment]
    act: p4r.TableAction | None = None,
    **fields,
) -> p4r.TableEntry:
    te = p4r.TableEntry(table_id=table_id, match=list(matches), **fields)
    if act is not None:
        te.action.CopyFrom(act)
    return te


def update(kind: int, **entity) -> p4r.Update:
    return p4r.Update(type=kind, entity=p4r.Entity(**entity))


def insert(te: p4r.TableEntry) -> p4r.Update:
    return update(p4r.Update.INSERT, table_entry=te)


def modify(te: p4r.TableEntry) -> p4r.Update:
    return update(p4r.Update.MODIFY, table_entry=te)


def delete(te: p4r.TableEntry) -> p4r.Update:
    return update(p4r.Update.DELETE, table_entry=te)


def codes(errors: list[p4r.Error]) -> list[str]:
    from finsy.proto import rpc_code

    return [rpc_code.Code.Name(e.canonical_code) for e in errors]


def write_one(state: P4RuntimeState, upd: p4r.Update) -> str:
    """The code name of a single-update write ("OK", "INVALID_ARGUMENT"...)."""
    return codes(state.write([upd]))[0]


def read(state: P4RuntimeState, **entity) -> list[p4r.Entity]:
    return list(state.read(p4r.Entity(**entity)))


def table_entries(state: P4RuntimeState, table_id: int = 0, **fields) -> list[p4r.TableEntry]:
    return [
        e.table_entry for e in read(state, table_entry=p4r.TableEntry(table_id=table_id, **fields))
    ]
