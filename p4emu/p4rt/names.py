"""Build P4Runtime entities by *name* from a P4Info — never by numeric id.

Shared by the P4Runtime client (:mod:`p4emu.server.client`) and in-process harnesses that
write through :class:`p4emu.p4rt.state.P4RuntimeState`::

    names = EntityNames(p4info)
    names.table_entry("Ingress.fwd", {"hdr.eth.dst": 0x0A}, "Ingress.forward", {"port": 2})

Match values: exact/optional ``int``; lpm ``(value, prefix_len)`` (prefix 0 = don't care,
left out as the spec requires); ternary ``(value, mask)``; range ``(low, high)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from finsy.proto import p4i, p4r

from p4emu.p4rt.exceptions import EntityNameError

MatchSpec = int | tuple[int, int]


def encode_value(value: int, bitwidth: int) -> bytes:
    """Canonical P4Runtime bytestring (shortest big-endian; zero is one zero byte)."""
    if value < 0 or value >> bitwidth:
        raise EntityNameError(f"value {value} does not fit bit<{bitwidth}>")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


class EntityNames:
    def __init__(self, p4info: p4i.P4Info) -> None:
        self.p4info = p4info

    def find(self, section: str, name: str):
        for item in getattr(self.p4info, section):
            if name in (item.preamble.name, item.preamble.alias):
                return item
        raise EntityNameError(f"no {section[:-1].replace('_', ' ')} named {name!r} in the P4Info")

    def table_entry(
        self,
        table: str,
        match: Mapping[str, MatchSpec],
        action: str | None = None,
        params: Mapping[str, int] | None = None,
        *,
        priority: int = 0,
        default: bool = False,
    ) -> p4r.Entity:
        info = self.find("tables", table)
        entity = p4r.Entity()
        entry = entity.table_entry
        entry.table_id = info.preamble.id
        entry.priority = priority
        entry.is_default_action = default
        fields = {f.name: f for f in info.match_fields}
        for name, spec in match.items():
            if name not in fields:
                raise EntityNameError(
                    f"table {table}: no match field {name!r} (has {sorted(fields)})"
                )
            field = fields[name]
            kind = field.match_type
            if kind == p4i.MatchField.LPM and spec[1] == 0:  # type: ignore[index]
                continue  # P4Runtime: a don't-care LPM match is left out
            item = entry.match.add(field_id=field.id)
            if kind == p4i.MatchField.EXACT:
                item.exact.value = encode_value(int(spec), field.bitwidth)  # type: ignore[arg-type]
            elif kind == p4i.MatchField.LPM:
                value, prefix = spec  # type: ignore[misc]
                item.lpm.value, item.lpm.prefix_len = encode_value(value, field.bitwidth), prefix
            elif kind == p4i.MatchField.TERNARY:
                value, mask = spec  # type: ignore[misc]
                item.ternary.value, item.ternary.mask = (
                    encode_value(value, field.bitwidth),
                    encode_value(mask, field.bitwidth),
                )
            elif kind == p4i.MatchField.RANGE:
                low, high = spec  # type: ignore[misc]
                item.range.low, item.range.high = (
                    encode_value(low, field.bitwidth),
                    encode_value(high, field.bitwidth),
                )
            elif kind == p4i.MatchField.OPTIONAL:
                item.optional.value = encode_value(int(spec), field.bitwidth)  # type: ignore[arg-type]
            else:
                raise EntityNameError(
                    f"table {table}: match kind of {name} is not supported by this builder"
                )
        if action is not None:
            entry.action.action.CopyFrom(self.action(action, params or {}))
        return entity

    def action(self, name: str, params: Mapping[str, int]) -> p4r.Action:
        info = self.find("actions", name)
        action = p4r.Action(action_id=info.preamble.id)
        known = {p.name: p for p in info.params}
        for pname in params:
            if pname not in known:
                raise EntityNameError(
                    f"action {name}: no parameter {pname!r} (has {sorted(known)})"
                )
        for param in info.params:
            if param.name not in params:
                raise EntityNameError(f"action {name}: parameter {param.name!r} is missing")
            action.params.add(
                param_id=param.id, value=encode_value(params[param.name], param.bitwidth)
            )
        return action

    def counter_entry(self, name: str, index: int | None = None) -> p4r.Entity:
        entity = p4r.Entity()
        entity.counter_entry.counter_id = self.find("counters", name).preamble.id
        if index is not None:
            entity.counter_entry.index.index = index
        return entity

    def register_entry(
        self, name: str, index: int | None = None, value: int | None = None
    ) -> p4r.Entity:
        info = self.find("registers", name)
        entity = p4r.Entity()
        entity.register_entry.register_id = info.preamble.id
        if index is not None:
            entity.register_entry.index.index = index
        if value is not None:
            entity.register_entry.data.bitstring = encode_value(
                value, info.type_spec.bitstring.bit.bitwidth
            )
        return entity

    @staticmethod
    def multicast_group(group_id: int, replicas: Iterable[tuple[int, int]] = ()) -> p4r.Entity:
        entity = p4r.Entity()
        group = entity.packet_replication_engine_entry.multicast_group_entry
        group.multicast_group_id = group_id
        for port, instance in replicas:
            group.replicas.add(egress_port=port, instance=instance)
        return entity
