"""Name resolution, type checking and constant folding; builds the :class:`ast.CheckedProgram`.

The checker walks declarations in source order (P4 requires declaration before use), fills
the resolved attributes of the AST in place (see :mod:`p4emu.frontend.ast`), and rejects what
p4c rejects in the common cases with ``file:line:col`` messages.

One concern per module, each a part of :class:`TypeChecker` over the shared state of
:mod:`.core` (modules know only ``core``; this module composes them):

- :mod:`.declarations`: top-level declarations, constants, variables, functions, actions
- :mod:`.type_decls`: type syntax, headers/structs/enums/externs, parameter lists
- :mod:`.blocks`: parsers, states and keysets, controls, instantiations and packages
- :mod:`.tables`: table properties, action references, const entries
- :mod:`.statements`: statements and l-values
- :mod:`.expressions`: expressions and implicit coercion
- :mod:`.operators`: operators, casts and constant folding
- :mod:`.calls`: calls, overloads, argument binding and type inference
- :mod:`.instances`: the block-instance tree and control-plane objects of the result
"""

from __future__ import annotations

from p4emu.exceptions import P4SourceError, P4SourceErrors
from p4emu.frontend import ast
from p4emu.frontend.typecheck.blocks import BlockChecks
from p4emu.frontend.typecheck.calls import CallChecks
from p4emu.frontend.typecheck.core import Abort
from p4emu.frontend.typecheck.declarations import DeclarationChecks
from p4emu.frontend.typecheck.expressions import EXPRESSIONS, ExpressionChecks
from p4emu.frontend.typecheck.instances import InstanceChecks
from p4emu.frontend.typecheck.operators import OPERATORS, OperatorChecks
from p4emu.frontend.typecheck.statements import StatementChecks
from p4emu.frontend.typecheck.tables import TableChecks
from p4emu.frontend.typecheck.type_decls import TypeDeclChecks


class TypeChecker(
    DeclarationChecks,
    TypeDeclChecks,
    BlockChecks,
    TableChecks,
    StatementChecks,
    ExpressionChecks,
    OperatorChecks,
    CallChecks,
    InstanceChecks,
):
    """Checks one parsed program. Use :func:`check_program`."""

    expression_handlers = {**EXPRESSIONS, **OPERATORS}

    # ------------------------------------------------------------------ driver

    def check(self) -> ast.CheckedProgram:
        for decl in self.program.declarations:
            try:
                self.check_top_declaration(decl)
            except Abort:
                # Keep the name visible so later declarations do not cascade errors; uses of
                # a failed declaration stop silently (see found()).
                self.failed.add(id(decl))
                if decl.name and not self.globals.names.get(decl.name):
                    self.globals.names[decl.name] = [decl]
                if not isinstance(
                    decl, (ast.ControlDecl, ast.ParserDecl, ast.ActionDecl, ast.FunctionDecl)
                ):
                    break
        if self.errors:
            raise _collect(self.errors)
        try:
            checked = self.build_checked_program()
        except Abort:
            raise _collect(self.errors) from None
        if self.errors:
            raise _collect(self.errors)
        return checked


def _collect(errors: list[P4SourceError]) -> P4SourceError:
    return errors[0] if len(errors) == 1 else P4SourceErrors(errors)


def check_program(
    program: ast.Program, source_files: list[str] | None = None, main_file: str = "<string>"
) -> ast.CheckedProgram:
    """Type-check a parsed program; raises P4SourceError (or P4SourceErrors) on rejection."""
    return TypeChecker(program, source_files or [], main_file).check()
