"""Annotations as P4Info carries them: the strings p4c prints, ``@brief`` /
``@description`` documentation, ``@id``, preambles and control-plane names (part of
:mod:`p4emu.p4info.extract`; see docs/p4info.md).
"""

from __future__ import annotations

from p4emu.frontend import ast
from p4emu.frontend.lexer import EOF, STRING, LexError, lex_text
from p4emu.p4info.exceptions import ExtractError
from p4emu.p4info.ids import control_plane_name
from p4emu.p4info.model import (
    Documentation,
    Preamble,
)

# Annotations P4Info never lists as strings: represented elsewhere (p4RuntimeArchHandler.h).
_NOT_LISTED = frozenset({"name", "id", "brief", "description"})
# Annotations p4c parses into expressions; ToP4 prints their arguments joined by ", ".
# Every other annotation body is printed token by token, separated by single spaces.
_PARSED = frozenset(
    {
        "name", "deprecated", "noWarn", "length", "pkginfo", "controller_header", "id",
        "brief", "description", "max_group_size", "p4runtime_translation", "match",
        "priority", "tableonly", "defaultonly", "hidden", "atomic", "optional",
    }
)  # fmt: skip


def serialize_annotation(annotation: ast.Annotation) -> str:
    """An annotation as p4c prints it into P4Info (``ToP4`` of the annotation)."""
    if annotation.kv is not None:
        pairs = ", ".join(
            f"{key}={ast.expr_to_source(value)}" for key, value in annotation.kv.items()
        )
        return f"@{annotation.name}({pairs})"
    if not annotation.body or not annotation.body.strip():
        return f"@{annotation.name}"
    tokens = body_tokens(annotation)
    if annotation.name in _PARSED:
        groups: list[list[str]] = [[]]
        depth = 0
        for token in tokens:
            if token in ("(", "[", "{", "<"):
                depth += 1
            elif token in (")", "]", "}", ">"):
                depth -= 1
            if token == "," and depth == 0:
                groups.append([])
            else:
                groups[-1].append(token)
        return f"@{annotation.name}(" + ", ".join(" ".join(g) for g in groups) + ")"
    return f"@{annotation.name}(" + " ".join(tokens) + ")"


def body_tokens(annotation: ast.Annotation) -> list[str]:
    try:
        return [tok.text for tok in lex_text(annotation.body or "") if tok.kind != EOF]
    except LexError:
        return [annotation.body or ""]


def listed_annotations(
    annotations: list[ast.Annotation], *, skip: frozenset[str] = frozenset()
) -> tuple[str, ...]:
    """The ``annotations`` strings of a P4Info message (structured ``@x[...]`` ones are not
    represented)."""
    return tuple(
        serialize_annotation(annotation)
        for annotation in annotations
        if annotation.name not in _NOT_LISTED
        and annotation.name not in skip
        and annotation.kv is None
    )


def documentation(annotations: list[ast.Annotation]) -> Documentation | None:
    brief = ast.find_annotation(annotations, "brief")
    description = ast.find_annotation(annotations, "description")
    if brief is None and description is None:
        return None
    return Documentation(
        brief=(brief.string_arg() or "") if brief else "",
        description=(description.string_arg() or "") if description else "",
    )


def explicit_id(annotations: list[ast.Annotation]) -> int | None:
    annotation = ast.find_annotation(annotations, "id")
    if annotation is None:
        return None
    value = annotation.int_arg()
    if value is None or value < 0:
        raise ExtractError(annotation.loc, "@id should be an unsigned integer")
    return value


def preamble(name: str, decl: ast.Declaration | ast.Instantiation) -> Preamble:
    return Preamble(
        name=name,
        explicit_id=explicit_id(decl.annotations),
        annotations=listed_annotations(decl.annotations),
        doc=documentation(decl.annotations),
    )


def type_control_plane_name(decl: ast.Declaration | None, fallback: str) -> str:
    """``controlPlaneName()`` of a top-level type declaration."""
    if decl is None:
        return fallback
    return control_plane_name(decl.name_annotation or decl.name)


def kv_from_body(annotation: ast.Annotation) -> dict[str, ast.Expr]:
    """The ``key = value`` pairs of ``@pkginfo(name="x", version="1")`` (the front end keeps
    the body as text because it is no expression list)."""
    tokens = [tok for tok in lex_text(annotation.body or "") if tok.kind != EOF]
    result: dict[str, ast.Expr] = {}
    for start in range(0, len(tokens), 4):  # key = value [,]
        group = tokens[start : start + 4]
        if len(group) < 3 or group[1].text != "=" or (len(group) == 4 and group[3].text != ","):
            raise ExtractError(annotation.loc, '@pkginfo expects key="value" pairs')
        key, value = group[0], group[2]
        if value.kind == STRING:
            result[key.text] = ast.StringLiteral(str(value.value), loc=annotation.loc)
        else:
            result[key.text] = ast.PathExpr(value.text, loc=annotation.loc)
    return result
