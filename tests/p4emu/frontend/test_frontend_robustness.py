"""Mangled sources are rejected with P4SourceError, never with a Python exception."""

from __future__ import annotations

import re

from frontend_helpers import PROGRAMS_DIR
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p4emu.exceptions import P4SourceError
from p4emu.frontend import load_program_text

SOURCES = [path.read_text() for path in sorted(PROGRAMS_DIR.glob("*.p4"))]
PIECES = [
    "bit<8>", "int", "8w1", "{", "}", "(", ")", ";", "hdr", ".", "apply", "table", "action", "<",
    ">", "=", "==", "_", "default", "select", "transition", "1", "true", "const", "error", "[",
    "]", ":", ",", "&&&", "..", "++", "#if 0", "\n#endif\n", '@name("x")', "exit", "return",
    "switch", "state", "extern", "void", "/*", "\"", "#define X(", "\n#include <nothing.p4>\n",
]  # fmt: skip

mutation = st.tuples(
    st.sampled_from(["delete", "replace", "insert", "swap"]),
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=0, max_value=10**6),
    st.sampled_from(PIECES),
)


def mutate(source: str, mutations: list[tuple[str, int, int, str]]) -> str:
    tokens = re.findall(r"\w+|[^\w\s]|\s+", source)
    for kind, first, second, piece in mutations:
        index = first % len(tokens)
        if kind == "delete":
            del tokens[index]
        elif kind == "replace":
            tokens[index] = piece
        elif kind == "insert":
            tokens.insert(index, piece)
        else:
            other = second % len(tokens)
            tokens[index], tokens[other] = tokens[other], tokens[index]
    return "".join(tokens)


@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.sampled_from(range(len(SOURCES))), st.lists(mutation, min_size=1, max_size=3))
def test_mutated_programs_fail_cleanly(
    which: int, mutations: list[tuple[str, int, int, str]]
) -> None:
    text = mutate(SOURCES[which], mutations)
    try:
        load_program_text(text, "mutated.p4")
    except P4SourceError as error:
        assert str(error).startswith(("mutated.p4:", "/")), str(error)
        assert ": error: " in str(error)


def test_deep_nesting_is_accepted_up_to_a_limit() -> None:
    from frontend_helpers import v1_source

    deep = "(" * 500 + "meta.x" + ")" * 500
    load_program_text(v1_source(ingress=f"meta.x = {deep};"), "deep.p4")
    chain = " + ".join(["meta.x"] * 2000)
    load_program_text(v1_source(ingress=f"meta.x = {chain};"), "deep.p4")


def test_runaway_nesting_is_a_source_error() -> None:
    from frontend_helpers import v1_source

    runaway = "(" * 5000 + "meta.x" + ")" * 5000
    try:
        load_program_text(v1_source(ingress=f"meta.x = {runaway};"), "deep.p4")
    except P4SourceError as error:
        assert str(error) == "deep.p4:1:1: error: program is nested too deeply to be processed"
    else:
        raise AssertionError("expected a P4SourceError")
