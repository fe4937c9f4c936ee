"""``CounterEntry``, ``MeterEntry``, ``RegisterEntry`` and ``DigestEntry`` entities.

Counters, meters and registers (P4Runtime spec "CounterEntry", "MeterEntry",
"RegisterEntry"): MODIFY only (INSERT/DELETE are INVALID_ARGUMENT); an unset ``index``
writes every cell; a negative index is INVALID_ARGUMENT, one past the array
OUT_OF_RANGE. An unset counter ``data`` changes nothing; an unset meter ``config``
resets the meter to its default (every packet GREEN). Reads: id 0 reads every instance,
an unset index every cell.

Counter data: BMv2 counts packets and bytes for every counter, so reads return both;
a write only sets the unit(s) of the counter's type (PI's ``counter_data_proto_to_pi``),
negative counts are INVALID_ARGUMENT.

Meter configs: rates/bursts must be >= 0 (INVALID_ARGUMENT), ``pir >= cir``
(INVALID_ARGUMENT; BMv2 refuses it), bursts fit 32 bits (UNIMPLEMENTED beyond, as PI);
the all ``-1`` config PI accepts means "default"; ``eburst`` (srTCM) and per-colour
``counter_data`` are UNIMPLEMENTED. A default configuration reads back unset.

Registers: ``data`` is a ``P4Data`` bitstring for ``bit<W>`` / ``int<W>`` cells
(INVALID_ARGUMENT otherwise or when missing). PI/BMv2 answer UNIMPLEMENTED for
registers; p4emu implements the specification.

Digests (spec "DigestEntry"): INSERT enables a digest with its config (ALREADY_EXISTS
if enabled), MODIFY changes it (NOT_FOUND if not enabled), DELETE disables it
(NOT_FOUND); config values must be >= 0. Reads: id 0 reads every enabled digest.
"""

from __future__ import annotations

from collections.abc import Iterator

from p4emu.p4rt.codec import BitstringType, decode_p4data, encode_p4data
from p4emu.p4rt.context import COUNTER, DIGEST, METER, REGISTER, Context, Undo, no_undo
from p4emu.p4rt.exceptions import (
    already_exists,
    invalid,
    not_found,
    out_of_range,
    unimplemented,
)
from p4emu.proto import p4r
from p4emu.runtime.exceptions import ExternError, MeterConfigError
from p4emu.runtime.externs import Counter, CounterType, DigestConfig, Meter, MeterConfig, Register

INSERT, MODIFY, DELETE = p4r.Update.INSERT, p4r.Update.MODIFY, p4r.Update.DELETE

_MAX_BURST = (1 << 32) - 1


# --------------------------------------------------------------------------- helpers


def counter_update(
    data: p4r.CounterData, type_: CounterType, where: str
) -> tuple[int | None, int | None]:
    """``(packets, bytes)`` to write for ``data``; None leaves that unit unchanged."""
    if data.packet_count < 0 or data.byte_count < 0:
        raise invalid(f"{where}: counter values must not be negative")
    if type_ is CounterType.packets:
        return data.packet_count, None
    if type_ is CounterType.bytes:
        return None, data.byte_count
    return data.packet_count, data.byte_count


def decode_meter_config(config: p4r.MeterConfig, where: str) -> MeterConfig | None:
    """The runtime config of a ``MeterConfig`` (None: the default, all packets GREEN)."""
    values = (config.cir, config.cburst, config.pir, config.pburst)
    if values == (-1, -1, -1, -1):
        return None  # PI's backwards-compatible spelling of the default config
    if config.eburst:
        raise unimplemented(f"{where}: eburst (srTCM) is not supported by v1model meters")
    for label, value in zip(("cir", "cburst", "pir", "pburst"), values):
        if value < 0:
            raise invalid(f"{where}: meter {label} must not be negative, got {value}")
    if config.cburst > _MAX_BURST or config.pburst > _MAX_BURST:
        raise unimplemented(f"{where}: meter bursts above {_MAX_BURST} are not supported")
    result = MeterConfig(config.cir, config.cburst, config.pir, config.pburst)
    try:
        result.validate(where)
    except MeterConfigError as error:
        raise invalid(str(error)) from None
    return result


def encode_meter_config(config: MeterConfig) -> p4r.MeterConfig:
    return p4r.MeterConfig(
        cir=config.cir, cburst=config.cburst, pir=config.pir, pburst=config.pburst
    )


def _indices(index_set: bool, index: int, size: int, where: str) -> range:
    if not index_set:
        return range(size)
    if index < 0:
        raise invalid(f"{where}: index must not be negative, got {index}")
    if index >= size:
        raise out_of_range(f"{where}: index {index} out of range [0, {size})")
    return range(index, index + 1)


# --------------------------------------------------------------------------- handlers


class Externs:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    # --- counters -----------------------------------------------------------------------

    def write_counter(self, update_type: int, msg: p4r.CounterEntry) -> Undo:
        name, counter = self.ctx.lookup(self.ctx.objects.counters, msg.counter_id, COUNTER)
        where = f"counter {name}"
        if update_type != MODIFY:
            raise invalid(f"{where}: only MODIFY is allowed for a CounterEntry")
        cells = _indices(msg.HasField("index"), msg.index.index, counter.size, where)
        if not msg.HasField("data"):
            return no_undo
        packets, byte_count = counter_update(msg.data, counter.type, where)
        old = [counter.read(i) for i in cells]
        for i, (old_packets, old_bytes) in zip(cells, old):
            counter.write(
                i,
                old_packets if packets is None else packets,
                old_bytes if byte_count is None else byte_count,
            )

        def undo() -> None:
            for i, (p, b) in zip(cells, old):
                counter.write(i, p, b)

        return undo

    def read_counters(self, msg: p4r.CounterEntry) -> Iterator[p4r.Entity]:
        for counter_id, name, counter in self._instances(
            self.ctx.objects.counters, msg.counter_id, COUNTER
        ):
            for i in _indices(
                msg.HasField("index"), msg.index.index, counter.size, f"counter {name}"
            ):
                packets, byte_count = counter.read(i)
                out = p4r.CounterEntry(counter_id=counter_id)
                out.index.index = i
                out.data.packet_count = packets
                out.data.byte_count = byte_count
                yield p4r.Entity(counter_entry=out)

    # --- meters -------------------------------------------------------------------------

    def write_meter(self, update_type: int, msg: p4r.MeterEntry) -> Undo:
        name, meter = self.ctx.lookup(self.ctx.objects.meters, msg.meter_id, METER)
        where = f"meter {name}"
        if update_type != MODIFY:
            raise invalid(f"{where}: only MODIFY is allowed for a MeterEntry")
        if msg.HasField("counter_data"):
            raise unimplemented(f"{where}: per-colour meter counters are not supported")
        cells = _indices(msg.HasField("index"), msg.index.index, meter.size, where)
        config = decode_meter_config(msg.config, where) if msg.HasField("config") else None
        old = [meter.get_config(i) for i in cells]
        for i in cells:
            meter.configure(i, config)

        def undo() -> None:
            for i, previous in zip(cells, old):
                meter.configure(i, previous)

        return undo

    def read_meters(self, msg: p4r.MeterEntry) -> Iterator[p4r.Entity]:
        if msg.HasField("counter_data"):
            raise unimplemented("MeterEntry: per-colour meter counters are not supported")
        for meter_id, name, meter in self._instances(self.ctx.objects.meters, msg.meter_id, METER):
            for i in _indices(msg.HasField("index"), msg.index.index, meter.size, f"meter {name}"):
                out = p4r.MeterEntry(meter_id=meter_id)
                out.index.index = i
                config = meter.get_config(i)
                if config is not None:
                    out.config.CopyFrom(encode_meter_config(config))
                yield p4r.Entity(meter_entry=out)

    # --- registers ----------------------------------------------------------------------

    def write_register(self, update_type: int, msg: p4r.RegisterEntry) -> Undo:
        name, register = self.ctx.lookup(self.ctx.objects.registers, msg.register_id, REGISTER)
        where = f"register {name}"
        if update_type != MODIFY:
            raise invalid(f"{where}: only MODIFY is allowed for a RegisterEntry")
        cells = _indices(msg.HasField("index"), msg.index.index, register.size, where)
        if not msg.HasField("data"):
            raise invalid(f"{where}: the data must be set")
        value = decode_p4data(msg.data, self._register_type(msg.register_id, register), where)
        old = [register.get(i) for i in cells]
        try:
            for i in cells:
                register.set(i, value)
        except ExternError as error:
            raise invalid(str(error)) from None

        def undo() -> None:
            for i, previous in zip(cells, old):
                register.set(i, previous)

        return undo

    def read_registers(self, msg: p4r.RegisterEntry) -> Iterator[p4r.Entity]:
        for register_id, name, register in self._instances(
            self.ctx.objects.registers, msg.register_id, REGISTER
        ):
            type_ = self._register_type(register_id, register)
            for i in _indices(
                msg.HasField("index"), msg.index.index, register.size, f"register {name}"
            ):
                out = p4r.RegisterEntry(register_id=register_id)
                out.index.index = i
                out.data.CopyFrom(encode_p4data(register.get(i), type_))
                yield p4r.Entity(register_entry=out)

    def _register_type(self, register_id: int, register: Register) -> BitstringType:
        for info in self.ctx.objects.p4info.registers:
            if info.preamble.id == register_id:
                spec = info.type_spec
                if spec.WhichOneof("type_spec") == "bitstring":
                    kind = spec.bitstring.WhichOneof("type_spec")
                    if kind == "int":
                        return BitstringType(register.width, signed=True)
                    if kind == "varbit":
                        raise unimplemented(f"register {register.name}: varbit cells")
                elif spec.WhichOneof("type_spec") is not None:
                    raise unimplemented(
                        f"register {register.name}: only bit<W>/int<W> cells are supported"
                    )
        return BitstringType(register.width)

    # --- digests ------------------------------------------------------------------------

    def write_digest(self, update_type: int, msg: p4r.DigestEntry) -> Undo:
        name, _ = self.ctx.lookup(self.ctx.objects.digests, msg.digest_id, DIGEST)
        where = f"digest {name}"
        configs = self.ctx.digest_configs
        queue = self.ctx.objects.digest_queue
        digest_id = msg.digest_id
        old = configs.get(digest_id)
        if update_type == DELETE:
            if old is None:
                raise not_found(f"{where}: the digest is not enabled")
            del configs[digest_id]
            queue.remove(digest_id)

            def undo_delete() -> None:
                configs[digest_id] = old
                queue.configure(digest_id, old)

            return undo_delete
        if update_type not in (INSERT, MODIFY):
            raise invalid(f"{where}: invalid update type {update_type}")
        if not msg.HasField("config"):
            raise invalid(f"{where}: the config must be set")
        c = msg.config
        if c.max_timeout_ns < 0 or c.max_list_size < 0 or c.ack_timeout_ns < 0:
            raise invalid(f"{where}: config values must not be negative")
        if update_type == INSERT and old is not None:
            raise already_exists(f"{where}: the digest is already enabled (use MODIFY)")
        if update_type == MODIFY and old is None:
            raise not_found(f"{where}: the digest is not enabled (use INSERT)")
        config = DigestConfig(c.max_timeout_ns, c.max_list_size, c.ack_timeout_ns)
        configs[digest_id] = config
        queue.configure(digest_id, config)

        def undo() -> None:
            if old is None:
                configs.pop(digest_id, None)
                queue.remove(digest_id)
            else:
                configs[digest_id] = old
                queue.configure(digest_id, old)

        return undo

    def read_digests(self, msg: p4r.DigestEntry) -> Iterator[p4r.Entity]:
        if msg.digest_id:
            self.ctx.lookup(self.ctx.objects.digests, msg.digest_id, DIGEST)
        for digest_id, config in sorted(self.ctx.digest_configs.items()):
            if msg.digest_id and digest_id != msg.digest_id:
                continue
            out = p4r.DigestEntry(digest_id=digest_id)
            out.config.max_timeout_ns = config.max_timeout_ns
            out.config.max_list_size = config.max_list_size
            out.config.ack_timeout_ns = config.ack_timeout_ns
            yield p4r.Entity(digest_entry=out)

    # --- shared -------------------------------------------------------------------------

    def _instances(self, mapping, object_id: int, kind) -> list[tuple[int, str, object]]:
        if object_id:
            name, obj = self.ctx.lookup(mapping, object_id, kind)
            return [(object_id, name, obj)]
        listed = self.ctx.listed_ids()
        found = [(self.ctx.id_of(kind, name), name, obj) for name, obj in mapping.items()]
        return [item for item in found if item[0] in listed]


__all__ = [
    "Counter",
    "Externs",
    "Meter",
    "counter_update",
    "decode_meter_config",
    "encode_meter_config",
]
