"""A tiny indentation-aware writer for generated Python source, plus naming helpers."""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator
from contextlib import contextmanager

_IDENT = re.compile(r"[^0-9A-Za-z_]")

#: Attribute names the generated classes use for themselves; P4 fields never get them.
RESERVED_ATTRIBUTES = frozenset({"valid_", "items", "nxt"})


def py_attr(name: str) -> str:
    """The Python attribute holding the P4 field ``name``."""
    attr = name.replace(".", "_f_")  # a flattened struct field of a header: "s.f"
    while keyword.iskeyword(attr) or attr in RESERVED_ATTRIBUTES or attr.startswith("__"):
        attr = attr + "_"
    return attr


def sanitize(name: str) -> str:
    """A Python identifier fragment derived from ``name`` (for readable generated code)."""
    cleaned = _IDENT.sub("_", name)
    return cleaned or "x"


class CodeWriter:
    """Collects lines of Python source with the current indentation."""

    def __init__(self, indent: int = 0) -> None:
        self.lines: list[str] = []
        self.level = indent

    def line(self, text: str = "") -> None:
        self.lines.append(("    " * self.level + text) if text else "")

    def extend(self, lines: list[str]) -> None:
        for text in lines:
            self.line(text)

    @contextmanager
    def indented(self) -> Iterator[None]:
        self.level += 1
        start = len(self.lines)
        try:
            yield
        finally:
            if len(self.lines) == start:
                self.line("pass")
            self.level -= 1

    def block(self, header: str) -> contextmanager:  # type: ignore[type-arg]
        """``with w.block("if x:"):`` writes the header and indents the body."""
        self.line(header)
        return self.indented()

    def source(self) -> str:
        return "\n".join(self.lines) + "\n"


class Names:
    """Unique Python names for generated locals and globals."""

    def __init__(self) -> None:
        self._count = 0

    def fresh(self, hint: str = "t") -> str:
        self._count += 1
        return f"{sanitize(hint)}_{self._count}"
