"""Property-based fuzzing of an in-process p4emu-switch (hypothesis, bounded in examples).

- Random P4Runtime Write batches (every entity kind, valid and broken, values of any length
  up to 4 KiB) over gRPC: the only outcomes are success or canonical per-update errors
  (never INTERNAL), and after a CONTINUE_ON_ERROR batch the switch holds exactly what a
  replay of the updates reported OK produces on a second switch.
- Random bytes as any P4Runtime request: success or a canonical error, never INTERNAL.
- Random frames into the ports and random PacketOut: processed or refused with a specific
  error, never an exception out of the switch.
"""

from __future__ import annotations

import random
from pathlib import Path

import grpc
import pytest
from finsy.proto import p4i, p4r, rpc_code
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p4emu.p4rt_client.messages import per_update_errors, write_request
from p4emu.server.client import P4RuntimeClient
from p4emu.server.service import P4RuntimeService, start_grpc_server
from p4emu.server.switch_device import DeviceSettings, SwitchDevice

PROGRAM = Path(__file__).parent / "programs" / "fuzz_target.p4"
CPU_PORT = 64
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
# What a canonical refusal may be; INTERNAL (a bug) and UNKNOWN without details never are.
CANONICAL = {code for code in range(1, 17)} - {rpc_code.INTERNAL, rpc_code.UNKNOWN}
WIDE = 4096  # bytes: the 4 KiB value that once got INTERNAL "Exceeds the limit (4300 digits)"


@pytest.fixture(scope="module")
def switch():
    device = SwitchDevice(DeviceSettings(cpu_port=CPU_PORT))
    server, port = start_grpc_server(P4RuntimeService(device), "127.0.0.1:0")
    client = P4RuntimeClient(f"127.0.0.1:{port}")
    try:
        client.connect()
        client.set_pipeline_from_program(PROGRAM)
        replica = SwitchDevice(DeviceSettings(cpu_port=CPU_PORT))
        config = device.pipeline_config()
        assert config is not None
        replica.commit_pipeline(replica.verify_pipeline(config), reconcile=False)
        yield client, device, replica, port
    finally:
        client.close()
        server.stop(None)


# --------------------------------------------------------------------------- generators


class CleanRandom(random.Random):
    """``random()`` confined to [0.2, 0.8): every ``rng.random() < p`` choice of the
    generators below then takes its valid branch, so a batch mixes updates that can succeed
    with every kind of refusal."""

    def random(self) -> float:
        return 0.2 + 0.6 * super().random()


def _value(rng: random.Random, width: int) -> bytes:
    """A bytestring for a ``width``-bit field: mostly fitting, sometimes empty or far too wide."""
    roll = rng.random()
    if roll < 0.05:
        return b""
    if roll < 0.10:
        return rng.randbytes(WIDE)
    if roll < 0.18:
        return rng.randbytes((width + 7) // 8 + rng.randint(1, 3))
    value = rng.randrange(1 << width)
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def _match(rng: random.Random, field: p4i.MatchField) -> p4r.FieldMatch:
    width = field.bitwidth
    match = p4r.FieldMatch(field_id=field.id if rng.random() < 0.95 else rng.randrange(1, 20))
    kind = field.match_type if rng.random() < 0.9 else rng.randrange(1, 6)
    if kind == p4i.MatchField.EXACT:
        match.exact.value = _value(rng, width)
    elif kind == p4i.MatchField.LPM:
        prefix = rng.randint(1, width) if rng.random() < 0.9 else rng.randint(-2, width + 2)
        value = (
            rng.randrange(1 << width)
            >> (width - max(0, min(prefix, width)))
            << (width - max(0, min(prefix, width)))
        )
        match.lpm.value = value.to_bytes((width + 7) // 8, "big")
        match.lpm.prefix_len = prefix
        if rng.random() < 0.1:
            match.lpm.value = _value(rng, width)
    elif kind == p4i.MatchField.TERNARY:
        mask = rng.randrange(1, 1 << width)
        match.ternary.value = (rng.randrange(1 << width) & mask).to_bytes((width + 7) // 8, "big")
        match.ternary.mask = mask.to_bytes((width + 7) // 8, "big")
        if rng.random() < 0.1:
            match.ternary.mask = _value(rng, width)
    elif kind == p4i.MatchField.RANGE:
        low, high = sorted(rng.randrange(1 << width) for _ in range(2))
        if rng.random() < 0.1:
            low, high = high, low
        match.range.low = low.to_bytes((width + 7) // 8, "big")
        match.range.high = high.to_bytes((width + 7) // 8, "big")
    else:
        match.optional.value = _value(rng, width)
    return match


def _action(rng: random.Random, info: p4i.P4Info, action_id: int) -> p4r.Action:
    action = p4r.Action(action_id=action_id)
    spec = next((a for a in info.actions if a.preamble.id == action_id), None)
    params = list(spec.params) if spec is not None else []
    for param in params:
        if rng.random() < 0.95:
            action.params.add(param_id=param.id, value=_value(rng, param.bitwidth))
    if rng.random() < 0.05:
        action.params.add(param_id=rng.randrange(1, 9), value=b"\x01")
    return action


def _table_entry(rng: random.Random, info: p4i.P4Info) -> p4r.Entity:
    entity = p4r.Entity()
    entry = entity.table_entry
    table = rng.choice(list(info.tables))
    entry.table_id = table.preamble.id if rng.random() < 0.95 else rng.randrange(1 << 32)
    for field in table.match_fields:
        if field.match_type == p4i.MatchField.EXACT or rng.random() < 0.6:
            entry.match.append(_match(rng, field))
    ternary_like = any(f.match_type != p4i.MatchField.EXACT for f in table.match_fields)
    entry.priority = rng.randint(1, 100) if ternary_like or rng.random() < 0.05 else 0
    refs = [ref.id for ref in table.action_refs] or [0]
    if table.implementation_id and rng.random() < 0.8:
        if rng.random() < 0.5:
            entry.action.action_profile_member_id = rng.randint(1, 4)
        else:
            entry.action.action_profile_group_id = rng.randint(1, 4)
    elif rng.random() < 0.95:
        entry.action.action.CopyFrom(_action(rng, info, rng.choice(refs)))
    if rng.random() < 0.05:
        entry.is_default_action = True
        del entry.match[:]
        entry.priority = 0
    return entity


def _entity(rng: random.Random, info: p4i.P4Info) -> p4r.Entity:
    entity = p4r.Entity()
    kind = rng.randrange(9)
    if kind <= 2:
        return _table_entry(rng, info)
    if kind == 3:
        member = entity.action_profile_member
        profile = rng.choice(list(info.action_profiles))
        member.action_profile_id = profile.preamble.id
        member.member_id = rng.randint(0, 4)
        table = next(t for t in info.tables if t.implementation_id == profile.preamble.id)
        member.action.CopyFrom(_action(rng, info, rng.choice(table.action_refs).id))
    elif kind == 4:
        group = entity.action_profile_group
        group.action_profile_id = rng.choice(list(info.action_profiles)).preamble.id
        group.group_id = rng.randint(0, 4)
        group.max_size = rng.choice([0, 4, 14, 100])
        for member_id in rng.sample(range(0, 5), rng.randint(0, 3)):
            group.members.add(member_id=member_id, weight=rng.randint(0, 3))
    elif kind == 5:
        pre = entity.packet_replication_engine_entry
        if rng.random() < 0.5:
            group = pre.multicast_group_entry
            group.multicast_group_id = rng.choice([0, 1, 2, 3, 40000])
            for _ in range(rng.randint(0, 3)):
                group.replicas.add(port=_value(rng, 9), instance=rng.randint(0, 3))
        else:
            session = pre.clone_session_entry
            session.session_id = rng.choice([0, 1, 2, 40000])
            session.packet_length_bytes = rng.choice([0, 64, -1])
            for _ in range(rng.randint(0, 2)):
                session.replicas.add(port=_value(rng, 9), instance=rng.randint(0, 2))
    elif kind == 6:
        cell = entity.register_entry
        register = rng.choice(list(info.registers))
        cell.register_id = register.preamble.id
        if rng.random() < 0.9:
            cell.index.index = rng.randint(-1, register.size)
        cell.data.bitstring = _value(rng, register.type_spec.bitstring.bit.bitwidth or 32)
    elif kind == 7:
        cell = entity.counter_entry
        counter = rng.choice(list(info.counters))
        cell.counter_id = counter.preamble.id
        if rng.random() < 0.9:
            cell.index.index = rng.randint(-1, counter.size)
        cell.data.packet_count = rng.randint(0, 1 << 40)
        cell.data.byte_count = rng.randint(0, 1 << 40)
    else:
        cell = entity.meter_entry
        meter = rng.choice(list(info.meters))
        cell.meter_id = meter.preamble.id
        cell.index.index = rng.randint(-1, meter.size)
        cell.config.cir, cell.config.pir = sorted(rng.randint(-1, 10_000) for _ in range(2))
        cell.config.cburst, cell.config.pburst = (rng.randint(-1, 1000) for _ in range(2))
    return entity


def _snapshot(device: SwitchDevice, info: p4i.P4Info) -> list[bytes]:
    """Every piece of control-plane state a Write can change, as sorted serialized entities."""
    queries = []
    for kind in ("table_entry", "action_profile_member", "action_profile_group"):
        entity = p4r.Entity()
        getattr(entity, kind).SetInParent()
        queries.append(entity)
    for kind in ("multicast_group_entry", "clone_session_entry"):
        entity = p4r.Entity()
        getattr(entity.packet_replication_engine_entry, kind).SetInParent()
        queries.append(entity)
    for kind in ("register_entry", "counter_entry", "meter_entry", "direct_counter_entry"):
        entity = p4r.Entity()
        getattr(entity, kind).SetInParent()
        queries.append(entity)
    for table in info.tables:
        entity = p4r.Entity()
        entity.table_entry.table_id = table.preamble.id
        entity.table_entry.is_default_action = True
        queries.append(entity)
    return sorted(e.SerializeToString(deterministic=True) for e in device.state.read_all(queries))


# --------------------------------------------------------------------------- properties


# Entities written so far (across examples): later updates modify or delete some of them.
HISTORY: list[p4r.Entity] = []
# Hypothesis draws a seed; the entities come from random.Random(seed), whose values are
# spread evenly (hypothesis' own random favours zeros, which hides width bugs).
SEEDS = st.integers(0, 2**64 - 1)


@pytest.mark.scenario  # a fuzz campaign of write batches (CI, not -m unit)
@FUZZ
@given(seed=SEEDS, size=st.integers(1, 12))
def test_random_write_batches_are_canonical_and_replayable(switch, seed, size) -> None:
    client, device, replica, _ = switch
    rng = random.Random(seed)
    info = client.p4info
    request = write_request(0, client.election_id, ())
    for _ in range(size):
        if HISTORY and rng.random() < 0.3:  # change or remove something that was written
            entity = rng.choice(HISTORY)
            kind = rng.choice([p4r.Update.MODIFY, p4r.Update.DELETE])
        else:
            source = CleanRandom(rng.getrandbits(64)) if rng.random() < 0.5 else rng
            entity = _entity(source, info)
            cell = entity.WhichOneof("entity") in ("register_entry", "counter_entry", "meter_entry")
            if rng.random() < 0.1:
                kind = rng.choice([p4r.Update.UNSPECIFIED, 7])
            elif cell:
                kind = p4r.Update.MODIFY
            else:
                kind = p4r.Update.INSERT
        request.updates.add(type=kind, entity=entity)
    try:
        client.stub.Write(request)
        codes = [rpc_code.OK] * size
    except grpc.RpcError as exc:
        assert exc.code() == grpc.StatusCode.UNKNOWN, exc.details()
        errors = per_update_errors(exc)
        assert len(errors) == size
        codes = [error.canonical_code for error in errors]
        for error in errors:
            if error.canonical_code != rpc_code.OK:
                assert error.canonical_code in CANONICAL, error.message
                assert error.message and len(error.message) < 2000
    accepted = [u for u, code in zip(request.updates, codes) if code == rpc_code.OK]
    HISTORY.extend(u.entity for u in accepted if u.type == p4r.Update.INSERT)
    for update in accepted:
        (error,) = replica.write([update], p4r.WriteRequest.CONTINUE_ON_ERROR)
        assert error.canonical_code == rpc_code.OK, error.message
    assert _snapshot(device, info) == _snapshot(replica, info)


METHODS = [
    ("/p4.v1.P4Runtime/Write", "unary"),
    ("/p4.v1.P4Runtime/Read", "stream"),
    ("/p4.v1.P4Runtime/SetForwardingPipelineConfig", "unary"),
    ("/p4.v1.P4Runtime/GetForwardingPipelineConfig", "unary"),
    ("/p4.v1.P4Runtime/Capabilities", "unary"),
    ("/gnmi.gNMI/Get", "unary"),
]


@FUZZ
@given(method=st.sampled_from(METHODS), payload=st.binary(max_size=300))
def test_random_request_bytes_get_success_or_a_canonical_error(switch, method, payload) -> None:
    _, _, _, port = switch
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        path, shape = method
        call = (channel.unary_stream if shape == "stream" else channel.unary_unary)(path)
        try:
            result = call(payload, timeout=10)
            if shape == "stream":
                list(result)
        except grpc.RpcError as exc:
            assert exc.code().value[0] in CANONICAL, (exc.code(), exc.details())


@FUZZ
@given(
    seed=SEEDS,
    frames=st.lists(st.tuples(st.integers(0, 63), st.binary(max_size=200)), max_size=20),
)
def test_random_frames_and_packet_outs_never_escape(switch, seed, frames) -> None:
    client, device, _, _ = switch
    rng = random.Random(seed)
    before = device.counters.frames_rx
    for port, frame in frames:
        device.receive(port, frame)  # any exception here fails the test
    assert device.counters.frames_rx == before + len(frames)
    header = next(
        m for m in client.p4info.controller_packet_metadata if m.preamble.name == "packet_out"
    )
    packet = p4r.PacketOut(payload=rng.randbytes(rng.randint(0, 100)))
    for item in header.metadata:
        if rng.random() < 0.9:
            packet.metadata.add(metadata_id=item.id, value=_value(rng, item.bitwidth))
    try:
        device.packet_out(packet)
    except Exception as exc:  # only a DeviceError with a canonical code
        assert type(exc).__name__ == "DeviceError", repr(exc)
        assert exc.code in CANONICAL and exc.message  # type: ignore[attr-defined]
