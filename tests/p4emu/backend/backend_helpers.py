"""Small P4 programs built around a statement list, run through the in-process switch.

``Harness(in_fields, out_fields, body)`` builds a v1model program whose parser extracts
header ``hdr.i`` (``in_fields``) from the packet, whose ingress makes ``hdr.o``
(``out_fields``) valid and runs ``body``, and whose deparser emits ``hdr.i`` then
``hdr.o``. ``run(**inputs)`` sends one packet and returns the fields of ``hdr.o`` as
unsigned ints. Field declarations are ``"bit<8> a; int<16> b;"``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from p4emu.backend.pytypes import TypeRegistry
from p4emu.frontend import load_program_text
from p4emu.frontend import types as t
from p4emu.switch import Switch

if TYPE_CHECKING:
    from p4emu import CheckedProgram
    from p4emu.backend.program import CompiledProgram, ProgramCompiler

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"

_FIELD = re.compile(r"(bit|int)\s*<\s*(\d+)\s*>\s+(\w+)\s*;")


def fields_of(decl: str) -> list[tuple[str, int]]:
    return [(name, int(width)) for _kind, width, name in _FIELD.findall(decl)]


def pack(fields: list[tuple[str, int]], values: dict[str, int]) -> bytes:
    acc = 0
    total = 0
    for name, width in fields:
        acc = (acc << width) | (values.get(name, 0) & ((1 << width) - 1))
        total += width
    assert total % 8 == 0, "test header must be whole bytes"
    return acc.to_bytes(total // 8, "big")


def unpack(fields: list[tuple[str, int]], data: bytes) -> dict[str, int]:
    total = sum(width for _, width in fields)
    acc = int.from_bytes(data[: total // 8], "big")
    out = {}
    for name, width in fields:
        total -= width
        out[name] = (acc >> total) & ((1 << width) - 1)
    return out


PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header in_t {{ {in_fields} }}
header out_t {{ {out_fields} }}
{decls}
struct headers_t {{ in_t i; out_t o; }}
struct meta_t {{ {meta_fields} }}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.i); transition accept; }}
}}
control VC(inout headers_t hdr, inout meta_t meta) {{ apply {{ }} }}
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
    {locals}
    apply {{
        hdr.o.setValid();
        {body}
    }}
}}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control CC(inout headers_t hdr, inout meta_t meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers_t hdr) {{ apply {{ pkt.emit(hdr.i); pkt.emit(hdr.o); }} }}
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


class Harness:
    def __init__(
        self,
        in_fields: str,
        out_fields: str,
        body: str,
        *,
        decls: str = "",
        locals_: str = "",
        meta_fields: str = "bit<8> unused;",
        **switch_options: object,
    ) -> None:
        self.source = PROGRAM.format(
            in_fields=in_fields,
            out_fields=out_fields,
            decls=decls,
            body=body,
            locals=locals_,
            meta_fields=meta_fields,
        )
        self.inputs = fields_of(in_fields)
        self.outputs = fields_of(out_fields)
        self.switch = Switch(load_program_text(self.source, "harness.p4"), **switch_options)  # type: ignore[arg-type]

    def run(self, **values: int) -> dict[str, int]:
        self.switch.inject(1, pack(self.inputs, values))
        frames = self.switch.collect()
        assert len(frames) == 1, f"expected one frame, got {frames}"
        in_len = sum(w for _, w in self.inputs) // 8
        return unpack(self.outputs, frames[0][1][in_len:])


def program_compiler(source: str | CheckedProgram, name: str = "test.p4") -> ProgramCompiler:
    """A :class:`ProgramCompiler` of ``source`` (P4 text or a checked program) with
    ``compile_program``'s defaults on fresh run-time objects: for tests that read the
    generated text or its declarations without a switch."""
    from p4emu.backend.program import ProgramCompiler
    from p4emu.runtime.clock import VirtualClock
    from p4emu.runtime.externs import DigestQueue, RandomSource
    from p4emu.runtime.pre import ReplicationEngine

    checked = load_program_text(source, name) if isinstance(source, str) else source
    clock = VirtualClock()
    return ProgramCompiler(
        checked,
        clock=clock,
        pre=ReplicationEngine(),
        digest_queue=DigestQueue(clock),
        random=RandomSource(0),
        drop_port=511,
        no_match_error=False,
        trace=False,
    )


def generated_declarations(compiler: ProgramCompiler) -> tuple[CompiledProgram, str]:
    """``compiler``'s program compiled, and the declarations the native build would give
    its generated module (:func:`p4emu.backend.native.program_declarations`; no C
    compiler runs)."""
    from p4emu.backend import native

    compiled = compiler.compile()
    pxd = native.program_declarations(
        compiled.source, compiler.types.classes, compiler.types.scalars
    )
    return compiled, pxd


def switch_for(source: str, name: str = "test.p4", **options: object) -> Switch:
    """A switch running P4 source text."""
    return Switch(load_program_text(source, name), **options)  # type: ignore[arg-type]


def switch_on_path(source: str, name: str, native_env: str) -> Switch:
    """A switch of ``source`` whose generated module runs compiled (``native_env`` "1")
    or pure ("0", ``$MRC_TESTBED_P4_NATIVE``), on a virtual clock. ``name`` must differ
    per path: another file name is another shared module, not the other path's."""
    from p4emu.backend import native
    from p4emu.runtime.clock import VirtualClock

    os.environ[native.NATIVE_ENV] = native_env
    try:
        return Switch(load_program_text(source, name), clock=VirtualClock())
    finally:
        del os.environ[native.NATIVE_ENV]


def header_class(type_: t.HeaderType) -> type:
    """The pure class p4emu generates for header ``type_`` (a wide field held as two
    halves behind its property: p4emu.backend.wide), for codec code to fill and read."""
    registry = TypeRegistry()
    name = registry.cls(type_)
    names: dict[str, object] = {}
    exec(compile("\n".join(registry.lines) + "\n", "<classes>", "exec"), names)
    cls = names[name]
    assert isinstance(cls, type)
    return cls
