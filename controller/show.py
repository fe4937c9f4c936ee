"""What one switch holds: its tables (decoded with the P4Info it runs) and counters.

Needs no local artefacts: the P4Info comes from the switch (GetForwardingPipelineConfig),
so ``show`` works on any switch, whoever programmed it. Reading needs no arbitration.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from controller.entities import EntityCodec
from controller.exceptions import DecodeError, ReadError
from controller.notation import format_entry, short_name
from controller.p4rt_client import SwitchClient
from controller.plan import Entry
from p4emu.proto import p4r


@dataclass(frozen=True)
class CounterCell:
    """One cell of an indexed counter as read from a switch: counter name, index, packets, bytes."""

    counter: str
    index: int
    packets: int
    bytes: int


@dataclass
class SwitchView:
    """What one switch holds: its name, address, pipeline cookie (None: none set), entries per
    table, counter cells and the codec of the P4Info it runs."""

    switch: str
    address: str
    cookie: int | None
    tables: dict[str, list[Entry]] = field(default_factory=dict)
    counters: list[CounterCell] = field(default_factory=list)
    codec: EntityCodec | None = None


async def read_switch(client: SwitchClient, *, counters: bool = False) -> SwitchView:
    """Everything ``client``'s switch holds (connected, primary not needed)."""
    config = await client.get_pipeline("P4INFO_AND_COOKIE")
    if config is None:
        raise ReadError(client.name, f"{client.address} has no pipeline (nothing programmed yet)")
    codec = EntityCodec(config.p4info, require=False)
    view = SwitchView(
        client.name,
        client.address,
        config.cookie.cookie if config.HasField("cookie") else None,
        codec=codec,
    )
    tables = list(codec.tables)
    entities = await client.read(codec.read_request_entities(tables))
    for name in tables:
        view.tables[name] = []
    for entity in entities:
        try:
            entry = codec.decode(entity)
        except DecodeError as exc:
            raise ReadError(client.name, f"cannot decode an entry: {exc}") from None
        view.tables.setdefault(entry.table, []).append(entry)
    if counters and codec.counters:
        for entity in await client.read(codec.counter_read_entities()):
            view.counters.append(_counter_cell(codec, entity))
        view.counters.sort(key=lambda cell: (cell.counter, cell.index))
    return view


def _counter_cell(codec: EntityCodec, entity: p4r.Entity) -> CounterCell:
    entry = entity.counter_entry
    info = codec.counter_by_id(entry.counter_id)
    return CounterCell(info.name, entry.index.index, entry.data.packet_count, entry.data.byte_count)


def view_lines(view: SwitchView, *, zero_counters: bool = False) -> Iterator[str]:
    cookie = f"cookie {view.cookie:#018x}" if view.cookie is not None else "no cookie"
    total = sum(len(entries) for entries in view.tables.values())
    yield f"{view.switch} at {view.address}: pipeline {cookie}, {total} entries"
    for table, entries in view.tables.items():
        regular = [entry for entry in entries if not entry.is_default]
        yield f"  {short_name(table)}: {len(regular)} entries"
        for entry in sorted(entries, key=lambda e: (not e.is_default, repr(e.match))):
            yield f"    {format_entry(entry, view.codec)}"
    if view.counters:
        cells = [c for c in view.counters if zero_counters or c.packets or c.bytes]
        yield f"  counters: {len(cells)} non-zero cells"
        for cell in cells:
            yield (
                f"    {short_name(cell.counter)}[{cell.index}]: "
                f"{cell.packets} packets, {cell.bytes} bytes"
            )
