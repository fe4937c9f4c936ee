"""Shared helpers for the front-end tests (imported as ``frontend_helpers``): a v1model program template and error/location helpers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from p4emu.exceptions import P4SourceError
from p4emu.frontend import ast, load_program_text

PROGRAMS_DIR = Path(__file__).resolve().parent.parent / "programs"

DEFAULT_STATES = """    state start {
        pkt.extract(hdr.h);
        transition accept;
    }"""

TEMPLATE = """#include <core.p4>
#include <v1model.p4>
{decls}
header h_t {{ bit<8> a; bit<16> b; bit<32> c; }}
struct headers_t {{ h_t h; {headers} }}
struct meta_t {{ bit<8> x; bit<16> y; bit<32> z; bool flag; {meta} }}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
{parser_locals}
{states}
}}
control VC(inout headers_t hdr, inout meta_t meta) {{ apply {{ }} }}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{
{ingress_locals}
    apply {{
{ingress}
    }}
}}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control CC(inout headers_t hdr, inout meta_t meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers_t hdr) {{ apply {{ pkt.emit(hdr.h); }} }}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def v1_source(
    *,
    decls: str = "",
    headers: str = "",
    meta: str = "",
    parser_locals: str = "",
    states: str = DEFAULT_STATES,
    ingress_locals: str = "",
    ingress: str = "",
) -> str:
    """A complete v1model program with the given pieces filled in."""
    return TEMPLATE.format(
        decls=decls,
        headers=headers,
        meta=meta,
        parser_locals=parser_locals,
        states=states,
        ingress_locals=ingress_locals,
        ingress=ingress,
    )


def check_v1(**parts: str) -> ast.CheckedProgram:
    return load_program_text(v1_source(**parts), "test.p4")


def error_of(source: str, filename: str = "test.p4") -> P4SourceError:
    """Load ``source``, expecting a P4SourceError, and return it."""
    with pytest.raises(P4SourceError) as info:
        load_program_text(source, filename)
    return info.value


def v1_error(**parts: str) -> P4SourceError:
    return error_of(v1_source(**parts))


def location(source: str, needle: str, filename: str = "test.p4", offset: int = 0) -> str:
    """``file:line:col`` of the first occurrence of ``needle`` (plus ``offset`` columns)."""
    index = source.index(needle) + offset
    line = source.count("\n", 0, index) + 1
    column = index - (source.rfind("\n", 0, index) + 1) + 1
    return f"{filename}:{line}:{column}"


def walk_skipping_annotations(node: ast.Node) -> Iterator[ast.Node]:
    yield node
    for child in ast.iter_children(node):
        if not isinstance(child, ast.Annotation):
            yield from walk_skipping_annotations(child)


def nodes(root: ast.Node, cls: type[Any]) -> list[Any]:
    return [node for node in walk_skipping_annotations(root) if isinstance(node, cls)]


def probe(
    expr: str, ingress_locals: str = "", decls: str = "", ingress_prefix: str = ""
) -> ast.Expr:
    """Type an expression without an expected type and return its checked node.

    The expression is the data of ``log_msg("probe", {expr})`` in the ingress apply block."""
    checked = check_v1(
        decls=decls,
        ingress_locals=ingress_locals,
        ingress=f'{ingress_prefix}\n        log_msg("probe", {{{expr}}});',
    )
    calls = [
        call
        for call in nodes(checked.ingress.decl.body, ast.Call)
        if isinstance(call.callee, ast.PathExpr) and call.callee.name == "log_msg"
    ]
    data = calls[-1].bound_args[1].expr
    assert isinstance(data, ast.ListExpr)
    return data.elements[0]
