"""``ValueSetEntry``: the members of a parser ``value_set``.

Semantics (P4Runtime spec "ValueSetEntry"): MODIFY only (INSERT/DELETE are
INVALID_ARGUMENT); it replaces every member (an empty list empties the set). Each member
is a list of ``FieldMatch`` following the table match rules (INVALID_ARGUMENT); the same
member twice is ALREADY_EXISTS; more members than the P4Info ``size`` is
RESOURCE_EXHAUSTED. Reads: ``value_set_id`` 0 reads every value set; members come back
canonical, in the order written. (PI/BMv2 answer UNIMPLEMENTED for value sets; p4emu
implements the specification.)
"""

from __future__ import annotations

from collections.abc import Iterator

from p4emu.p4rt.codec import decode_matches, encode_matches
from p4emu.p4rt.context import VALUE_SET, Context, Undo
from p4emu.p4rt.exceptions import already_exists, invalid, resource_exhausted
from p4emu.p4rt_client.schema import FieldSchema
from p4emu.proto import p4r
from p4emu.runtime.exceptions import ValueSetError, ValueSetFullError
from p4emu.runtime.objects import ValueSet

MODIFY = p4r.Update.MODIFY


def _specs(value_set: ValueSet) -> list[FieldSchema]:
    return [
        FieldSchema(f.name or "value", f.id, f.width, f.match_kind.value.upper())
        for f in value_set.fields
    ]


class ValueSets:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def write(self, update_type: int, msg: p4r.ValueSetEntry) -> Undo:
        name, value_set = self.ctx.lookup(self.ctx.objects.value_sets, msg.value_set_id, VALUE_SET)
        where = f"value set {name}"
        if update_type != MODIFY:
            raise invalid(f"{where}: only MODIFY is allowed for a ValueSetEntry")
        specs = _specs(value_set)
        members = []
        seen = set()
        for position, member in enumerate(msg.members):
            values = decode_matches(member.match, specs, f"{where} member #{position}")
            identity = tuple(values)
            if identity in seen:
                raise already_exists(f"{where}: member #{position} is a duplicate")
            seen.add(identity)
            members.append(values)
        if len(members) > value_set.size:
            raise resource_exhausted(
                f"{where}: {len(members)} members exceed the value set size {value_set.size}"
            )
        old = value_set.entries()
        try:
            value_set.replace(members)
        except ValueSetFullError as error:
            raise resource_exhausted(str(error)) from None
        except ValueSetError as error:
            raise invalid(str(error)) from None
        return lambda: value_set.replace(old)

    def read(self, msg: p4r.ValueSetEntry) -> Iterator[p4r.Entity]:
        if msg.value_set_id:
            _, value_set = self.ctx.lookup(self.ctx.objects.value_sets, msg.value_set_id, VALUE_SET)
            targets = [(msg.value_set_id, value_set)]
        else:
            targets = [
                (self.ctx.id_of(VALUE_SET, name), vs)
                for name, vs in self.ctx.objects.value_sets.items()
            ]
        for value_set_id, value_set in targets:
            specs = _specs(value_set)
            out = p4r.ValueSetEntry(value_set_id=value_set_id)
            for values in value_set.entries():
                out.members.add().match.extend(encode_matches(values, specs))
            yield p4r.Entity(value_set_entry=out)
