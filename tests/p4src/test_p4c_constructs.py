"""mrc_switch.p4 keeps to what p4c's BMv2 back end accepts (p4src/README.md, "P4_16 /
v1model notes"). p4c is not installed here, so the rules are checked on the program's
syntax tree (p4emu's front end, which itself rejects what p4c rejects in the common
cases); a violation names the file and line."""

from __future__ import annotations

from collections import Counter

from p4src_helpers import ROOT, checked_program

from p4emu.frontend import ast

P4SRC = str(ROOT / "p4src")


def project_decls(kind: type[ast.Declaration]) -> list:
    return [
        node
        for decl in checked_program().program.declarations
        for node in ast.walk(decl)
        if isinstance(node, kind) and node.loc.file.startswith(P4SRC)
    ]


def calls() -> list[ast.Call]:
    return project_decls(ast.Call)  # type: ignore[arg-type]


def where(node: ast.Node) -> str:
    return f"{node.loc.file.removeprefix(P4SRC + '/')}:{node.loc.line}"


def test_the_program_type_checks_without_warnings() -> None:
    assert checked_program().warnings == []


def test_every_table_has_exactly_one_apply_call_site() -> None:
    # BMv2 applies a table at most once per packet; p4c's BMv2 back end rejects a table
    # invoked from two places.
    sites = Counter(
        call.target.table.name for call in calls() if isinstance(call.target, ast.TableApply)
    )
    tables = {t.decl.name for t in checked_program().tables}
    assert tables == set(sites)
    assert {name: n for name, n in sites.items() if n != 1} == {}


def test_actions_contain_no_conditionals() -> None:
    assert len(project_decls(ast.ActionDecl)) >= 10  # the walk sees the program's actions
    offenders = [
        f"{action.name} at {where(node)}"
        for action in project_decls(ast.ActionDecl)
        for node in ast.walk(action.body)
        if isinstance(node, ast.IfStmt | ast.SwitchStmt | ast.Ternary)
    ]
    assert offenders == []


def test_actions_called_directly_get_every_argument() -> None:
    # directionless parameters of an action called from apply act as `in`: all bound
    direct = [c for c in calls() if isinstance(c.target, ast.ActionCall)]
    assert direct  # drop_packet, punt_packet, trim_to_headers
    short = [
        f"{call.target.action.name} at {where(call)}"
        for call in calls()
        if isinstance(call.target, ast.ActionCall)
        and len(call.args) != len(call.target.action.params)
    ]
    assert short == []


def test_no_slice_is_assigned_to() -> None:
    assert any(isinstance(n, ast.Slice) for n in project_decls(ast.Expr))  # slices are read
    assigned = [
        where(stmt) for stmt in project_decls(ast.AssignStmt) if isinstance(stmt.lhs, ast.Slice)
    ]
    assert assigned == []


def test_the_parser_never_transitions_to_reject_explicitly() -> None:
    explicit = [
        where(node)
        for node in project_decls(ast.Transition)
        if node.state == ast.REJECT or any(case.state == ast.REJECT for case in node.cases)
    ]
    assert explicit == []
    # and every state ends in an explicit transition (none falls into an implicit reject)
    states = project_decls(ast.ParserState)
    assert states
    assert [s.name for s in states if s.transition is None] == []
