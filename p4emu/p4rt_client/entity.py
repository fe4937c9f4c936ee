"""One table entry by name that encodes and decodes itself: the client stack's entity.

:class:`P4TableEntry` is the project's one table-entry builder (finsy's ``P4TableEntry``
is the example): a value by *name* -- table, match fields, action, parameters -- that
:meth:`P4TableEntry.encode` turns into a ``p4.v1.Entity`` through a
:class:`~p4emu.p4rt_client.schema.P4Schema` (ids, widths, match kinds, canonical
bytestrings) and :meth:`P4TableEntry.decode` builds back from what a switch sends::

    schema = P4Schema(p4info)
    entry = P4TableEntry("Ingress.fwd", {"hdr.eth.dst": 0x0A}, "Ingress.forward", {"port": 2})
    entity = entry.encode(schema)
    assert P4TableEntry.decode(entity, schema) == entry

The synchronous client (``EntityNames.table_entry``) and the controller
(``controller.entities.EntityCodec``) both build their entries here.

Wire form: match fields in the order of ``match`` (a don't-care LPM, prefix 0, left out),
parameters in P4Info order, ``priority`` and ``is_default_action`` only when set, values
in canonical form (:func:`~p4emu.p4rt_client.schema.encode_unsigned`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NoReturn

from p4emu.p4rt_client.exceptions import EntityNameError
from p4emu.p4rt_client.schema import (
    FieldSchema,
    KeyFieldValue,
    P4Schema,
    decode_match,
    decode_value,
    encode_match,
    encode_value,
)
from p4emu.proto import p4r


@dataclass(slots=True)
class P4TableEntry:
    """A table entry (or a table's default entry when ``is_default``) by name.

    ``match`` maps key field names to :data:`~p4emu.p4rt_client.schema.KeyFieldValue`
    shapes (don't-care fields left out); ``params`` the parameters of ``action`` by name
    (``action`` None: an entry without action, e.g. a read or a DELETE key). A value: make
    a new one rather than changing one (not frozen only because a frozen dataclass's
    ``__init__`` costs the controller a tenth of its encoding time)."""

    table: str
    match: Mapping[str, KeyFieldValue] = field(default_factory=dict)
    action: str | None = None
    params: Mapping[str, int] = field(default_factory=dict)
    priority: int = 0
    is_default: bool = False

    def encode(self, schema: P4Schema) -> p4r.Entity:
        """The ``p4.v1.Entity`` of this entry (EntityNameError for a name not in the
        P4Info, a value that does not fit, a missing or unknown parameter)."""
        entity = p4r.Entity()
        self.encode_into(schema, entity.table_entry)
        return entity

    def encode_into(
        self, schema: P4Schema, message: p4r.TableEntry, *, key_only: bool = False
    ) -> None:
        """Fills ``message`` (a fresh ``TableEntry``) in place; ``key_only`` writes only
        what identifies the entry (table, match, priority: what a DELETE carries)."""
        info = schema.table(self.table)
        message.table_id = info.id
        if self.is_default and not key_only:
            message.is_default_action = True
        for name, value in self.match.items():
            match_field = info.by_name.get(name)
            if match_field is None:
                raise EntityNameError(
                    f"table {self.table}: no match field {name!r} (has {sorted(info.by_name)})"
                )
            encode_match(
                match_field,
                value,
                message.match,
                lambda name=name: f"{self.table} key {name}",  # type: ignore[misc]
            )
        if self.priority:
            message.priority = self.priority
        if self.action is not None and not key_only:
            encode_action(schema, message.action.action, self.action, self.params)

    def encode_update(self, schema: P4Schema, update_type: int) -> p4r.Update:
        """A ``p4.v1.Update`` of this entry; a DELETE of a non-default entry carries only
        its key (P4Runtime reads nothing else of it)."""
        update = p4r.Update(type=update_type)
        key_only = update_type == p4r.Update.DELETE and not self.is_default
        self.encode_into(schema, update.entity.table_entry, key_only=key_only)
        return update

    @classmethod
    def decode(cls, entity: p4r.Entity, schema: P4Schema) -> P4TableEntry:
        """The entry a switch sent (EntityNameError for ids not in the P4Info, a match of
        the wrong kind, a missing exact field or action parameter, an indirect action)."""
        kind = entity.WhichOneof("entity")
        if kind != "table_entry":
            raise EntityNameError(f"expected a table entry, got {kind}")
        message = entity.table_entry
        info = schema.table_by_id(message.table_id)
        match: dict[str, KeyFieldValue] = {}
        for item in message.match:
            match_field = info.by_id.get(item.field_id)
            if match_field is None:
                raise EntityNameError(f"{info.name}: match field id {item.field_id} is unknown")
            match[match_field.name] = decode_match(match_field, item, info.name)
        if not message.is_default_action:
            for match_field in info.fields:
                if match_field.kind == "EXACT" and match_field.name not in match:
                    raise EntityNameError(f"{info.name}: entry lacks key field {match_field.name}")
        which = message.action.WhichOneof("type")
        action: str | None = None
        params: dict[str, int] = {}
        if which == "action":
            call = message.action.action
            action, params = decode_action_call(
                schema, call.action_id, [(p.param_id, p.value) for p in call.params]
            )
        elif which is not None:
            raise EntityNameError(f"{info.name}: entry uses {which}, not a direct action")
        return cls(info.name, match, action, params, message.priority, message.is_default_action)


def encode_action(
    schema: P4Schema, message: p4r.Action, name: str, params: Mapping[str, int]
) -> None:
    """Fills ``message`` with action ``name`` and every one of its parameters (by name,
    sent in P4Info order)."""
    info = schema.action(name)
    message.action_id = info.id
    if len(params) != len(info.params):
        _refuse_params(name, info.params, params)
    add = message.params.add
    for param in info.params:
        try:
            value = params[param.name]
        except KeyError:  # as many names as parameters, so one of them is unknown
            _refuse_params(name, info.params, params)
        add(
            param_id=param.id,
            value=encode_value(
                value,
                param.bitwidth,
                lambda pname=param.name: f"{name}({pname})",  # type: ignore[misc]
            ),
        )


def _refuse_params(
    name: str, declared: Iterable[FieldSchema], params: Mapping[str, int]
) -> NoReturn:
    """The error of parameters that are not the action's: an unknown name first, else the
    first missing one."""
    names = [param.name for param in declared]
    for pname in params:
        if pname not in names:
            raise EntityNameError(f"action {name}: no parameter {pname!r} (has {sorted(names)})")
    missing = next(pname for pname in names if pname not in params)
    raise EntityNameError(f"action {name}: parameter {missing!r} is missing")


def decode_action_call(
    schema: P4Schema, action_id: int, args: Iterable[tuple[int, bytes]]
) -> tuple[str, dict[str, int]]:
    """``(action name, {parameter: value})`` of an action id and ``(param_id, value)``
    pairs (as in an ``Action`` or a P4Info initial default action)."""
    action = schema.action_by_id(action_id)
    params: dict[str, int] = {}
    for param_id, raw in args:
        param = action.by_id.get(param_id)
        if param is None:
            raise EntityNameError(f"{action.name}: parameter id {param_id} is unknown")
        params[param.name] = decode_value(raw)
    for param in action.params:
        if param.name not in params:
            raise EntityNameError(f"{action.name}: parameter {param.name} is missing")
    return action.name, params


__all__ = ["P4TableEntry", "decode_action_call", "encode_action"]
