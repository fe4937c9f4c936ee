"""The type checker's state and the pieces every part of it uses.

:class:`CheckerCore` holds what one check of a program accumulates (errors, warnings, the
global scope, the error and match_kind types, named types and constants, failed
declarations) and the primitives on it (report an error, declare a name, open a scope of
type parameters). Each ``p4emu.frontend.typecheck`` module adds the checks for one concern
as a subclass of it; :class:`p4emu.frontend.typecheck.TypeChecker` composes them, so the
parts call each other through ``self`` and know no module but this one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from p4emu.exceptions import P4SourceError
from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.source import SourceLocation

INT_TYPE = t.InfIntType()
BOOL = t.BoolType()
STRING = t.StringType()
VOID = t.VoidType()
DONT_CARE = t.DontCareType()
BIT32 = t.BitsType(32)
STATE = t.StateType()


class Abort(Exception):
    """Internal: stop checking the current top-level declaration (error already recorded)."""


# --------------------------------------------------------------------------- scopes


class Scope:
    """A lexical scope; names map to lists so functions and extern functions can overload."""

    def __init__(self, parent: Scope | None = None, kind: str = "block") -> None:
        self.parent = parent
        self.kind = kind
        self.names: dict[str, list[Any]] = {}

    def lookup(self, name: str) -> list[Any] | None:
        scope: Scope | None = self
        while scope is not None:
            found = scope.names.get(name)
            if found:
                return found
            scope = scope.parent
        return None

    def root(self) -> Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope


OVERLOADABLE = (ast.ExternFunctionDecl, ast.FunctionDecl)
# declarations with type parameters that the checker specializes (one copy per set of type
# arguments): what the back end compiles has none
Generic = ast.FunctionDecl | ast.ParserDecl | ast.ControlDecl


@dataclass
class Context:
    """Where the statement/expression being checked lives."""

    kind: str  # "global", "parser", "control", "action", "function", "apply", "table"
    block: ast.ParserDecl | ast.ControlDecl | None = None
    action: ast.ActionDecl | None = None
    function: ast.FunctionDecl | None = None

    @property
    def in_parser(self) -> bool:
        return isinstance(self.block, ast.ParserDecl)


@dataclass
class Bindings:
    """Type-variable bindings during inference; ``from_literal`` marks vars only seen with int."""

    values: dict[t.TypeVar, t.Type] = field(default_factory=dict)


# The handler of one kind of expression: (checker, expression, scope, context, expected type)
# -> the expression's type. The expression parts register theirs in dispatch tables.
ExpressionHandler = Callable[[Any, Any, Scope, Context, "t.Type | None"], t.Type]


# --------------------------------------------------------------------------- checker state


class CheckerCore:
    """The state of one check and the primitives on it (see the module docstring)."""

    def __init__(self, program: ast.Program, source_files: list[str], main_file: str) -> None:
        self.program = program
        self.source_files = source_files
        self.main_file = main_file
        self.errors: list[P4SourceError] = []
        self.warnings: list[str] = []
        # hdr.h.s (s a struct-typed header field) not followed by a field name, by id
        self._whole_groups: dict[int, ast.Expr] = {}
        self.globals = Scope(None, "global")
        self.error_type = t.ErrorType()
        self.match_kind_type = t.MatchKindType()
        self.named_types: dict[str, t.Type] = {}
        self.constants: dict[str, t.ConstValue] = {}
        self.failed: set[int] = set()  # ids of declarations whose checking failed
        # a generic function's, parser's or control's id -> (its declaration as parsed, its
        # specializations: the type arguments and the copy checked with them)
        self.generic_decls: dict[int, tuple[Generic, list[tuple[tuple[t.Type, ...], Generic]]]] = {}
        self._call_arguments = 0  # inside the arguments of a function or extern call
        self._switch_expression = False  # checking the expression of a switch statement

    # ------------------------------------------------------------------ errors

    def fail(self, loc: SourceLocation, message: str) -> Abort:
        self.errors.append(loc.error(message))
        return Abort()

    def unsupported(self, loc: SourceLocation, construct: str) -> Abort:
        """Valid P4_16 that p4emu does not implement (docs/conformance.md)."""
        self.errors.append(loc.unsupported(construct))
        return Abort()

    def warn(self, loc: SourceLocation, message: str) -> None:
        self.warnings.append(f"{loc}: warning: {message}")

    # ------------------------------------------------------------------ declarations

    def declare(self, scope: Scope, name: str, decl: Any, loc: SourceLocation) -> None:
        existing = scope.names.get(name)
        if existing:
            if isinstance(decl, OVERLOADABLE) and all(
                isinstance(e, OVERLOADABLE) for e in existing
            ):
                arity = len(decl.params)
                for other in existing:
                    if len(other.params) == arity and type(other) is type(decl):
                        raise self.fail(
                            loc,
                            f"duplicate declaration of '{name}' with {arity} parameter(s) (previous declaration at {other.loc})",
                        )
                existing.append(decl)
                return
            previous = existing[0]
            where = getattr(previous, "loc", None)
            suffix = f" (previous declaration at {where})" if where and where.line else ""
            raise self.fail(loc, f"duplicate declaration of '{name}'{suffix}")
        scope.names[name] = [decl]

    def found(self, decls: list[Any]) -> Any:
        """First of a lookup result; abort quietly if it belongs to a failed declaration."""
        if id(decls[0]) in self.failed:
            raise Abort()
        return decls[0]

    @contextmanager
    def type_params(self, params: list[ast.TypeParam], scope: Scope) -> Iterator[Scope]:
        inner = Scope(scope, "type_params")
        for param in params:
            if param.var is None:
                param.var = t.TypeVar(param.name)
            self.declare(inner, param.name, param, param.loc)
        yield inner
