"""The p4emu front end: preprocessor, lexer, parser, AST and type checker.

Typical use::

    from p4emu.frontend import load_program
    checked = load_program("basic.p4")
    checked.ingress.decl          # the ControlDecl bound to V1Switch's ingress slot
    checked.table("MyIngress.ipv4_lpm")
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from p4emu.exceptions import P4SourceError
from p4emu.frontend.ast import CheckedProgram, Program

if TYPE_CHECKING:
    from p4emu.frontend.preprocessor import BUILTIN_INCLUDE_DIR

__all__ = [
    "BUILTIN_INCLUDE_DIR",
    "CheckedProgram",
    "load_checked",
    "load_program",
    "load_program_text",
    "parse_program",
    "parse_program_text",
]

# The preprocessor, parser and type checker are imported when a program is read, not with
# the package: a program from the checked-program cache (p4emu.frontend.cache) needs none.
_LAZY = {"BUILTIN_INCLUDE_DIR": "p4emu.frontend.preprocessor"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'p4emu.frontend' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


RECURSION_LIMIT = 20000
"""The recursive-descent parser and checker recurse once per nesting level; CPython 3.11
runs Python-to-Python calls without growing the C stack, so a generous limit is safe."""


@contextmanager
def _nesting_guard(filename: str) -> Iterator[None]:
    """Allow deep (but finite) nesting and turn runaway nesting into a source error."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, RECURSION_LIMIT))
    try:
        yield
    except RecursionError:
        raise P4SourceError(
            filename, 1, 1, "program is nested too deeply to be processed"
        ) from None
    finally:
        sys.setrecursionlimit(previous)


def parse_program(
    path: str | Path,
    include_dirs: Iterable[str | Path] = (),
    defines: Mapping[str, str] | None = None,
) -> tuple[Program, list[str], list[str]]:
    """Preprocess and parse a file; returns (program, files read, preprocessor warnings)."""
    from p4emu.frontend.parser import parse_tokens
    from p4emu.frontend.preprocessor import Preprocessor

    preprocessor = Preprocessor(tuple(include_dirs), dict(defines or {}))
    source = preprocessor.run_file(path)
    return parse_tokens(source.tokens), source.files, source.warnings


def parse_program_text(
    text: str,
    filename: str = "<string>",
    include_dirs: Iterable[str | Path] = (),
    defines: Mapping[str, str] | None = None,
) -> tuple[Program, list[str], list[str]]:
    """Preprocess and parse source text (``#include "x"`` is relative to the working directory)."""
    from p4emu.frontend.parser import parse_tokens
    from p4emu.frontend.preprocessor import Preprocessor

    preprocessor = Preprocessor(tuple(include_dirs), dict(defines or {}))
    source = preprocessor.run_text(text, filename)
    return parse_tokens(source.tokens), source.files, source.warnings


def load_program(
    path: str | Path,
    include_dirs: Iterable[str | Path] = (),
    defines: Mapping[str, str] | None = None,
) -> CheckedProgram:
    """Preprocess, parse and type-check a v1model P4_16 program.

    Raises :class:`p4emu.exceptions.P4SourceError` (``file:line:col: error: ...``) for any
    rejected source, :class:`p4emu.exceptions.P4UnsupportedError` for valid constructs p4emu
    does not implement."""
    from p4emu.frontend.typecheck import check_program

    with _nesting_guard(str(path)):
        program, files, warnings = parse_program(path, include_dirs, defines)
        checked = check_program(program, files, str(path))
    checked.warnings[:0] = warnings
    return checked


def load_program_text(
    text: str,
    filename: str = "<string>",
    include_dirs: Iterable[str | Path] = (),
    defines: Mapping[str, str] | None = None,
) -> CheckedProgram:
    """Like :func:`load_program` for source held in a string."""
    from p4emu.frontend.typecheck import check_program

    with _nesting_guard(filename):
        program, files, warnings = parse_program_text(text, filename, include_dirs, defines)
        checked = check_program(program, files, filename)
    checked.warnings[:0] = warnings
    return checked


def load_checked(path: str | Path) -> CheckedProgram:
    """:func:`load_program` of ``path`` (no include directories, no defines), kept on disk
    and taken from there while the program and the front end stay the same
    (:mod:`p4emu.frontend.cache`)."""
    from p4emu.frontend.cache import load_cached

    return load_cached(path, load_program)
