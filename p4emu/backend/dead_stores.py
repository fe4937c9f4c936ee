"""Stores p4c removes before an extern call's ``out`` argument.

p4c's def-use analysis counts an extern's ``out`` argument as written by the call, so a
store to the same location just before it is dead and removed. ``register.read`` and
``meter.execute_meter`` at an index out of range, and ``direct_meter.read`` in an action a
table runs on a miss, do not write it in BMv2: the location keeps the value it had before
the removed store (0 for a local declared with that initializer). p4emu removes the same
stores: a store followed, in the same block, by such a call (or by a table apply every
action of which starts by such a call or an assignment to the location, reading nothing of
it first), when every statement between them is transparent to the location: it does not
name it (neither reads nor writes it), contains no ``exit`` or ``return`` (the stored
value could then reach the end of the control, where it is used), and calls nothing but
externs and built-in methods (an action, function, table or control could read it).
p4c's pass is ``SimplifyDefUse`` (its def-use analysis finds no use of the store).
"""

from __future__ import annotations

from p4emu.frontend import ast

CONDITIONAL_OUT = {
    ("register", "read"): "result",
    ("meter", "execute_meter"): "result",
    ("direct_meter", "read"): "result",
}
"""Extern methods whose ``out`` argument BMv2 may leave unwritten, and its parameter."""


def lvalue_path(expr: ast.Expr | None) -> tuple[object, ...] | None:
    """``hdr.h.a`` -> ``(id(hdr decl), "h", "a")``; None unless a plain field path (no
    index, no slice)."""
    if isinstance(expr, ast.PathExpr):
        return (id(expr.decl),)
    if isinstance(expr, ast.Member) and expr.kind == ast.MEMBER_FIELD:
        base = lvalue_path(expr.expr)
        return None if base is None else (*base, expr.member)
    return None


def dead_stores(statements: list[ast.Statement]) -> set[int]:
    """ids of the statements (assignments, variable declarations' initializers) of
    ``statements`` that p4c removes."""
    dead: set[int] = set()
    for index, store in enumerate(statements):
        path = _stored_path(store)
        if path is None:
            continue
        for after in statements[index + 1 :]:
            if _kills(after, path):
                dead.add(id(store))
                break
            if not _transparent(after, path):
                break
    return dead


_TRANSPARENT_CALLS = (ast.ExternMethodCall, ast.ExternFunctionCall, ast.BuiltinMethodCall)


def _transparent(statement: ast.Statement, path: tuple[object, ...]) -> bool:
    """``statement`` can neither see nor skip past a value stored at ``path``."""
    if _reads(statement, path):
        return False
    for node in ast.walk(statement):
        if isinstance(node, (ast.ExitStmt, ast.ReturnStmt)):
            return False
        if isinstance(node, ast.Call) and not isinstance(node.target, _TRANSPARENT_CALLS):
            return False
    return True


def _stored_path(statement: ast.Statement) -> tuple[object, ...] | None:
    """The location a store without calls writes (a call's effects stay)."""
    if isinstance(statement, ast.AssignStmt):
        if statement.leaves is None and not _has_call(statement.rhs):
            return lvalue_path(statement.lhs)
    elif isinstance(statement, ast.DeclStmt) and isinstance(statement.decl, ast.VariableDecl):
        init = statement.decl.init
        if init is not None and not _has_call(init):
            return (id(statement.decl),)
    return None


def _has_call(expr: ast.Expr) -> bool:
    return any(isinstance(sub, ast.Call) for sub in ast.walk(expr))


def _reads(node: ast.Node | None, path: tuple[object, ...]) -> bool:
    """``node`` reads a location overlapping ``path`` (a field path holding it or in it)."""
    if node is None:
        return False
    if isinstance(node, ast.Expr):
        own = lvalue_path(node)
        if own is not None:
            shorter = min(len(own), len(path))
            return own[:shorter] == path[:shorter]
    return any(_reads(child, path) for child in ast.iter_children(node))


def _extern_out(statement: ast.Statement, path: tuple[object, ...]) -> bool:
    """``statement`` is an extern call with a conditional ``out`` argument ``path`` whose
    other arguments do not read it."""
    if not isinstance(statement, ast.CallStmt):
        return False
    call = statement.call
    target = call.target
    if not isinstance(target, ast.ExternMethodCall):
        return False
    param = CONDITIONAL_OUT.get((target.extern.name, target.method.name))
    if param is None:
        return False
    found = False
    for bound in call.bound_args:
        if bound.param.name == param:
            found = lvalue_path(bound.expr) == path
        elif _reads(bound.expr, path):
            return False
    return found


def _writes_first(body: ast.BlockStmt, path: tuple[object, ...]) -> bool:
    """The action body's first statement writes ``path`` without reading it."""
    if not body.statements:
        return False
    first = body.statements[0]
    if _extern_out(first, path):
        return True
    return (
        isinstance(first, ast.AssignStmt)
        and first.leaves is None
        and lvalue_path(first.lhs) == path
        and not _reads(first.rhs, path)
    )


def _kills(statement: ast.Statement, path: tuple[object, ...]) -> bool:
    if _extern_out(statement, path):
        return True
    if not isinstance(statement, ast.CallStmt):
        return False
    target = statement.call.target
    if not isinstance(target, ast.TableApply):
        return False
    table = target.table
    if any(_reads(element.expr, path) for element in table.key):
        return False
    refs = [*table.actions, table.default_action]
    for ref in refs:
        if ref is None:
            continue
        action = ref.action
        if action is None or action.params or not _writes_first(action.body, path):
            return False
    return bool(table.actions)
