"""Generated header layouts, the P4 programs that extract and emit them, and a bit-level
reference of what those programs send.

A *layout* is a list of fields ``(kind, width)`` with kind ``bit``, ``int`` or ``bool``
(width 1) whose widths add up to whole bytes. :func:`layouts_program` declares one header
type per layout; its parser reads a 16-bit selector and extracts header ``hN`` for
selector ``N``, then changes its first and last fields (``f + 1`` for bit strings and
signed integers, ``!f`` for a bool: every field would make p4c take minutes); its deparser emits the selector and every header (only the
valid one goes out), then the payload follows. :func:`expected` computes the frame
out of a packet in with big-integer bit slicing, knowing nothing of p4emu.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

Field = tuple[str, int]
Layout = list[Field]
EGRESS_PORT = 1
PAYLOAD = bytes.fromhex("a55a")


def width_layouts(widths: Sequence[int]) -> list[Layout]:
    """One layout per width W: a ``bit<W>`` field, then a pad field to the next byte."""
    layouts = []
    for width in widths:
        layout: Layout = [("bit", width)]
        if width % 8:
            layout.append(("bit", 8 - width % 8))
        layouts.append(layout)
    return layouts


def offset_layouts() -> list[Layout]:
    """A sub-byte field at every bit offset 0..7 with every width that fits in two bytes,
    between bit-string pads (the pad before it sets its offset)."""
    layouts = []
    for offset in range(8):
        for width in range(1, 17 - offset):
            layout: Layout = [("bit", offset)] if offset else []
            layout.append(("bit", width))
            rest = -(offset + width) % 8
            if rest:
                layout.append(("bit", rest))
            layouts.append(layout)
    return layouts


def random_layouts(seed: int, count: int) -> list[Layout]:
    """``count`` random mixtures: byte-aligned groups of 1 to 128 bytes, each cut into
    random fields (sub-byte ones at any offset, wide ones up to the whole group), of
    kinds ``bit``, ``int`` and ``bool``."""
    rng = random.Random(seed)
    layouts = []
    for _ in range(count):
        layout: Layout = []
        for _group in range(rng.randint(1, 4)):
            left = 8 * rng.choice((rng.randint(1, 16), rng.randint(1, 128)))
            while left:
                width = rng.choice((rng.randint(1, 8), rng.randint(1, 64), rng.randint(1, left)))
                width = min(width, left)
                kind = rng.choice(("bit", "bool")) if width == 1 else None  # BMv2 aborts on int<1>
                kind = kind or rng.choice(("bit", "bit", "int"))
                layout.append((kind, width))
                left -= width
        layouts.append(layout)
    return layouts


def packed(layouts: Sequence[Layout], per_header: int) -> list[Layout]:
    """``per_header`` layouts at a time joined into one header: each keeps its own
    byte-aligned run of fields, and p4c's time grows with the number of headers."""
    return [
        [field for layout in layouts[i : i + per_header] for field in layout]
        for i in range(0, len(layouts), per_header)
    ]


def changed(layout: Layout) -> set[int]:
    """Indices of the fields the parser changes."""
    return {0, len(layout) - 1}


def _type(kind: str, width: int) -> str:
    return "bool" if kind == "bool" else f"{kind}<{width}>"


def _change(kind: str, name: str) -> str:
    return f"{name} = !{name};" if kind == "bool" else f"{name} = {name} + 1;"


def layouts_program(layouts: Sequence[Layout]) -> str:
    """A v1model program that extracts and emits header ``hN`` for selector ``N``."""
    lines = ["#include <core.p4>", "#include <v1model.p4>", "header sel_t { bit<16> id; }"]
    for index, layout in enumerate(layouts):
        fields = " ".join(f"{_type(k, w)} f{i};" for i, (k, w) in enumerate(layout))
        lines.append(f"header h{index}_t {{ {fields} }}")
    members = " ".join(f"h{index}_t h{index};" for index in range(len(layouts)))
    lines.append(f"struct H {{ sel_t sel; {members} }}")
    lines.append("struct M { }")
    lines.append("parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {")
    cases = " ".join(f"{index}: s{index};" for index in range(len(layouts)))
    lines.append(
        f"    state start {{ pk.extract(hdr.sel); transition select(hdr.sel.id) "
        f"{{ {cases} default: accept; }} }}"
    )
    for index, layout in enumerate(layouts):
        changes = " ".join(
            _change(layout[i][0], f"hdr.h{index}.f{i}") for i in sorted(changed(layout))
        )
        lines.append(
            f"    state s{index} {{ pk.extract(hdr.h{index}); {changes} transition accept; }}"
        )
    lines.append("}")
    lines.append("control V(inout H hdr, inout M m) { apply { } }")
    lines.append(
        "control I(inout H hdr, inout M m, inout standard_metadata_t sm) "
        f"{{ apply {{ sm.egress_spec = {EGRESS_PORT}; }} }}"
    )
    lines.append("control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }")
    lines.append("control C(inout H hdr, inout M m) { apply { } }")
    emits = " ".join(f"pk.emit(hdr.h{index});" for index in range(len(layouts)))
    lines.append(f"control D(packet_out pk, in H hdr) {{ apply {{ pk.emit(hdr.sel); {emits} }} }}")
    lines.append("V1Switch(P(), V(), I(), E(), C(), D()) main;")
    return "\n".join(lines) + "\n"


def layout_bytes(layout: Layout) -> int:
    total = sum(width for _, width in layout)
    assert total % 8 == 0, layout
    return total // 8


def packets(layouts: Sequence[Layout], seed: int) -> list[bytes]:
    """One packet per layout: its selector, random header bytes, the payload."""
    rng = random.Random(seed)
    return [
        index.to_bytes(2, "big") + rng.randbytes(layout_bytes(layout)) + PAYLOAD
        for index, layout in enumerate(layouts)
    ]


def expected(layout: Layout, packet: bytes) -> bytes:
    """The frame out for ``packet``: the header's fields changed as the parser does,
    computed by slicing the header as one big integer."""
    size = layout_bytes(layout)
    value = int.from_bytes(packet[2 : 2 + size], "big")
    out = 0
    left = size * 8
    touched = changed(layout)
    for index, (kind, width) in enumerate(layout):
        left -= width
        mask = (1 << width) - 1
        bits = (value >> left) & mask
        if index in touched:
            bits = bits ^ 1 if kind == "bool" else (bits + 1) & mask
        out |= bits << left
    return packet[:2] + out.to_bytes(size, "big") + packet[2 + size :]
