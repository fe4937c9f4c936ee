"""Struct-typed header fields used as a whole (``hdr.h.s = m.s``, ``hdr.h.s == m.s``): the
leaf fields they stand for. p4emu flattens such a field into its leaves (``s.a``, ``s.q.c``)
as p4c does, so the checker turns a whole use into one use per leaf, in field order."""

from __future__ import annotations

from p4emu.frontend import ast
from p4emu.frontend import types as t


def group_struct(type_: t.Type) -> t.StructType | None:
    if isinstance(type_, t.HeaderGroupType):
        return type_.struct
    return type_ if isinstance(type_, t.StructType) else None


def leaf_paths(struct: t.StructType) -> list[tuple[str, ...]]:
    """The leaf fields of ``struct`` (nested structs entered), as paths of field names."""
    paths: list[tuple[str, ...]] = []
    for info in struct.fields:
        if isinstance(info.type, t.StructType):
            paths.extend((info.name, *rest) for rest in leaf_paths(info.type))
        else:
            paths.append((info.name,))
    return paths


def leaf_expr(expr: ast.Expr, path: tuple[str, ...], struct: t.StructType) -> ast.Expr:
    """An unchecked expression for the field ``path`` of ``expr`` of type ``struct``: a
    structure expression's component (``{a = 1}`` by name, ``{1}`` by position), or
    ``expr.a.b``."""
    for position, name in enumerate(path):
        index = struct.field_names().index(name)
        if isinstance(expr, ast.StructExpr):
            expr = next(f.value for f in expr.fields if f.name == name)  # checked: all there
        elif isinstance(expr, ast.ListExpr):
            expr = expr.elements[index]
        else:
            return _members(expr, path[position:])
        inner = struct.fields[index].type
        if isinstance(inner, t.StructType):
            struct = inner
    return expr


def _members(expr: ast.Expr, path: tuple[str, ...]) -> ast.Expr:
    for name in path:
        expr = ast.Member(expr, name, loc=expr.loc)
    return expr
