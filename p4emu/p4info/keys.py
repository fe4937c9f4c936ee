"""Match field names: ``@name`` of a key element, or the name p4c's ``TableKeyNames`` pass
derives from the key expression (part of :mod:`p4emu.p4info.extract`).
"""

from __future__ import annotations

import re

from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.p4info.exceptions import ExtractError


def key_name(element: ast.KeyElement) -> str:
    """The match field name: ``@name`` of the key element, or p4c's ``TableKeyNames``."""
    annotation = ast.find_annotation(element.annotations, "name")
    if annotation is not None and annotation.string_arg() is not None:
        return annotation.string_arg() or ""
    name = _key_expr_name(element.expr)
    if name is None:
        raise ExtractError(
            element.expr.loc,
            f"{ast.expr_to_source(element.expr)}: complex key expression requires a @name "
            "annotation",
        )
    return name


def _key_expr_name(expr: ast.Expr) -> str | None:
    if isinstance(expr, ast.PathExpr):
        return ("." if expr.absolute else "") + expr.name
    if isinstance(expr, ast.Member):
        member = expr.member
        if isinstance(expr.resolved, t.FieldInfo):
            member = _field_name_external(expr.resolved) or member
        if member.startswith("."):
            return member[1:]
        left = _key_expr_name(expr.expr)
        return None if left is None else f"{left}.{member}"
    if isinstance(expr, ast.Call):
        callee = expr.callee
        if (
            isinstance(callee, ast.Member)
            and callee.member == "isValid"
            and not expr.args
            and isinstance(callee.expr.type, (t.HeaderType, t.HeaderUnionType))
        ):
            left = _key_expr_name(callee.expr)
            return None if left is None else f"{left}.$valid$"
        return None
    if isinstance(expr, ast.Index):
        left, right = _key_expr_name(expr.expr), _key_expr_name(expr.index)
        return None if left is None or right is None else f"{left}[{right}]"
    if isinstance(expr, ast.IntLiteral):
        return _constant_text(expr)
    if isinstance(expr, ast.Slice):
        parts = [_key_expr_name(expr.expr), _key_expr_name(expr.hi), _key_expr_name(expr.lo)]
        if any(part is None for part in parts):
            return None
        return f"{parts[0]}[{parts[1]}:{parts[2]}]"
    if isinstance(expr, ast.Binary) and expr.op == "&":
        left, right = _key_expr_name(expr.left), _key_expr_name(expr.right)
        return None if left is None or right is None else f"{left} & {right}"
    return None


def _field_name_external(info: t.FieldInfo) -> str | None:
    for annotation in info.annotations:
        if annotation.name == "name" and annotation.string_arg():
            return annotation.string_arg()
    return None


def _constant_text(literal: ast.IntLiteral) -> str:
    """p4c's ``Util::toString(value, 0, false, base)``: the literal's base, no width."""
    match = re.match(r"^(?:\d+[ws])?(0[xbod])?", literal.text.lower().replace("_", ""))
    prefix = match.group(1) if match else None
    value = literal.value
    sign, value = ("-", -value) if value < 0 else ("", value)
    if prefix == "0x":
        return f"{sign}0x{value:x}"
    if prefix == "0b":
        return f"{sign}0b{value:b}"
    if prefix == "0o":
        return f"{sign}0o{value:o}"
    return f"{sign}{value}"
