"""Name bindings used while generating code: P4 declaration -> Python expression."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from p4emu.frontend import ast
from p4emu.frontend import types as t


@dataclass
class Binding:
    """What a P4 declaration is in the generated code.

    ``kind``: ``"var"`` (a Python local holding a scalar, or a reference to an aggregate
    object; ``code`` is the expression), ``"const"`` (``code`` is a literal),
    ``"packet_in"`` / ``"packet_out"`` (the packet cursor of a parser / deparser).
    """

    kind: str
    code: str
    type: t.Type | None = None


class Scope:
    """Nested bindings; ``block`` is the block instance whose locals are visible."""

    def __init__(self, parent: Scope | None = None, block: ast.BlockInstance | None = None):
        self.parent = parent
        self._block = block
        self.bindings: dict[int, Binding] = {}
        self._keep: list[Any] = []

    def bind(self, decl: Any, binding: Binding) -> Binding:
        self.bindings[id(decl)] = binding
        self._keep.append(decl)
        return binding

    def lookup(self, decl: Any) -> Binding | None:
        scope: Scope | None = self
        key = id(decl)
        while scope is not None:
            found = scope.bindings.get(key)
            if found is not None:
                return found
            scope = scope.parent
        return None

    @property
    def block(self) -> ast.BlockInstance | None:
        scope: Scope | None = self
        while scope is not None:
            if scope._block is not None:
                return scope._block
            scope = scope.parent
        return None

    def child(self, block: ast.BlockInstance | None = None) -> Scope:
        return Scope(self, block)
