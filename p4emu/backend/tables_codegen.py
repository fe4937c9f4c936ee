"""Code generation for ``table.apply()``: key, lookup, indirect resolution, action dispatch.

Generated shape (direct table)::

    e = T_apply((key1, key2))   # runtime Table.apply
    a = e.action_id
    if a == <id of action 1>:
        p1, p2 = e.args
        <action 1 body, inlined>
        <switch case body for action 1, if any>
    elif a == <id of action 2>:
        ...
    else:
        <switch default body, if any>

An exact table without a direct counter or idle timeout is looked up in its dictionary
instead (``e = T_entries.get((key1, key2)) or T.miss``, and ``T_entries.get(key1)`` for
a table of one key field: :meth:`Table.packet_dict`; compiled, a table of one key field
of up to 63 bits is looked up in its C map instead, ``T.exact_at(key1)``), a
keyless one gives ``T.miss`` (its default action); the packet length is passed
(``T_apply(key, ctx.ingress_length)``) only to a table with a direct counter. Without a ``switch``, branches of actions with nothing to run (``NoAction``,
an empty action) are left out, and so is ``a = e.action_id`` when no branch is left (a
table applied for ``hit`` alone).

Indirect tables (action profile / selector) first map ``MEMBER_REF``/``GROUP_REF``
entries to the member's action; a direct meter attached to the table is executed at
lookup time on a hit (BMv2 executes direct meters in the match table), and
``direct_meter.read()`` inside the action reads that color.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p4emu.backend.compile_helpers import compile_error, to_unsigned, unsupported
from p4emu.frontend import ast
from p4emu.runtime.tables import C_KEY_BITS

if TYPE_CHECKING:
    from p4emu.backend.body import BodyCompiler


def emit_table_apply(
    bc: BodyCompiler,
    call: ast.Call,
    *,
    want_hit: bool,
    switch: ast.SwitchStmt | None,
) -> str:
    target = call.target
    assert isinstance(target, ast.TableApply)
    decl = target.table
    block = bc.scope.block
    if block is None:
        raise compile_error(call, f"table {decl.name} applied outside a control")
    runtime = bc.pc.table_runtime(block, decl)
    w = bc.w

    keys = []
    for element in runtime.key_elements:
        code = to_unsigned(bc.ex(element.expr), element.expr.type)  # type: ignore[arg-type]
        keys.append(code)
    selector = [
        to_unsigned(bc.ex(element.expr), element.expr.type)  # type: ignore[arg-type]
        for element in runtime.selector_elements
    ]
    entry = bc.fresh("e")
    key_tuple = "(" + "".join(k + ", " for k in keys) + ")"
    table = runtime.table
    entries = table.packet_dict()
    # annotated: a hit's entry or a miss's default action, one C struct to the native build
    typed = f"{entry}: TableAction"
    if not keys:  # nothing to match: the default action
        w.line(f"{typed} = {runtime.table_name}.miss")
    elif entries is not None:  # exact, nothing to count: one dictionary lookup
        lookup = bc.pc.bind(entries, "Tentries_" + runtime.name)
        key = keys[0] if len(keys) == 1 else key_tuple  # one field: entries by its value
        found = f"{lookup}.get({key}) or {runtime.table_name}.miss"
        if 0 < table.exact_key_bits() <= C_KEY_BITS:
            # compiled: the table's C map (Table.exact_at), a C call on a C integer key;
            # the pure module keeps the dictionary (Cython folds ``cython.compiled``)
            found = f"{runtime.table_name}.exact_at({key}) if cython.compiled else ({found})"
        w.line(f"{typed} = {found}")
    else:  # the length only matters to a direct counter
        length = ", ctx.ingress_length" if table.direct_counter is not None else ""
        w.line(f"{typed} = {runtime.apply_name}({key_tuple}{length})")
    if bc.pc.trace:
        w.line(f"TRACE('table', {runtime.name!r}, {key_tuple}, {entry})")
    action = bc.fresh("a")
    action_line = len(w.lines)
    # compiled: a C integer (an action id is P4Runtime's 32 bits, a member reference a
    # negative one), so each branch's test is a C comparison; Python ignores the annotation
    w.line(f"{action}: cython.longlong = {_action_id_read(bc, entry)}")
    args = f"{entry}.args"
    hit = bc.fresh("hit")
    if want_hit:  # compiled: a C flag (no bool object tested per use)
        w.line(f"{hit}: cython.bint = {entry}.hit")
    if runtime.profile_name is not None:
        args = bc.fresh("args")
        w.line(f"{args} = {entry}.args")
        member = bc.fresh("m")
        with w.block(f"if {action} < 0:"):
            sel = "(" + "".join(s + ", " for s in selector) + ")"
            w.line(f"{member} = {runtime.profile_name}.resolve({action}, {args}, {sel})")
            with w.block(f"if {member} is None:"):
                w.line(f"{action} = {runtime.table_name}.default_action.action_id")
                w.line(f"{args} = {runtime.table_name}.default_action.args")
            with w.block("else:"):
                w.line(f"{action} = {member}.action_id")
                w.line(f"{args} = {member}.args")
    saved_color = bc.meter_color
    if runtime.has_direct_meter:
        color = bc.fresh("color")
        w.line(
            f"{color} = {runtime.table_name}.direct_meter_color({entry}, ctx.ingress_length, None)"
        )
        bc.meter_color = color

    cases, default_body = _switch_bodies(switch, call) if switch is not None else ({}, None)
    branches: list[int] = []  # where each action's branch starts
    first = True
    for ref in runtime.action_refs:
        action_decl = ref.action
        if action_decl is None:
            continue
        action_id = bc.pc.action_id(action_decl, block)
        header = f"{'if' if first else 'elif'} {action} == {action_id}:"
        first = False
        branches.append(len(w.lines))
        with w.block(header):
            bc.inline_table_action(action_decl, args, ref, call)
            body = cases.get(id(action_decl), default_body) if switch is not None else None
            if body is not None:
                bc.stmt_scoped(body)
    extra_default = runtime.implicit_default
    if extra_default is not None and all(
        r.action is not extra_default for r in runtime.action_refs
    ):
        # the implicit NoAction default of a table without default_action
        action_id = bc.pc.action_id(extra_default, block)
        branches.append(len(w.lines))
        with w.block(f"{'if' if first else 'elif'} {action} == {action_id}:"):
            if switch is not None:
                body = cases.get(id(extra_default), default_body)
                if body is not None:
                    bc.stmt_scoped(body)
        first = False
    if switch is not None and default_body is not None:
        if first:
            bc.stmt_scoped(default_body)
        else:
            with w.block("else:"):
                bc.stmt_scoped(default_body)
    elif runtime.profile_name is None:
        _drop_empty_branches(w.lines, branches, action_line)
    bc.meter_color = saved_color
    return hit


def _action_id_read(bc: BodyCompiler, entry: str) -> str:
    """The expression reading ``entry``'s action id: on a native runtime, compiled, the
    entry's C copy while it is of its current action id (no call, no conversion:
    :meth:`p4emu.runtime.tables.TableAction.c_action_id`)."""
    read = f"{entry}.action_id"
    if not bc.pc.native_runtime:
        return read
    copy = f"{entry}._c_id if {entry}._c_id_src is {read} else {entry}.c_action_id()"
    return f"({copy}) if cython.compiled else {read}"


def _drop_empty_branches(lines: list[str], branches: list[int], action_line: int) -> None:
    """Remove the branches of an action dispatch without ``else`` (starting at the
    indices ``branches``, the last one ending ``lines``) whose body is only ``pass``;
    when none is left, the line reading the action id (``action_line``) goes too."""
    ends = [*branches[1:], len(lines)]
    empty = {
        start
        for start, end in zip(branches, ends)
        if end - start == 2 and lines[start + 1].strip() == "pass"
    }
    if not empty:
        return
    first_kept = next((start for start in branches if start not in empty), None)
    out = lines[: branches[0]] if branches else list(lines)
    for start, end in zip(branches, ends):
        if start in empty:
            continue
        branch = lines[start:end]
        if start == first_kept:
            branch[0] = branch[0].replace("elif ", "if ", 1)
        out.extend(branch)
    if first_kept is None:
        del out[action_line]
    lines[:] = out


def _switch_bodies(
    switch: ast.SwitchStmt, call: ast.Call
) -> tuple[dict[int, ast.Statement], ast.Statement | None]:
    """Map action decl id -> case body (fall-through labels resolved), plus default."""
    cases: dict[int, ast.Statement] = {}
    default_body: ast.Statement | None = None
    pending: list[ast.ActionDecl] = []
    pending_default = False
    for case in switch.cases:
        is_default = case.label is None or isinstance(case.label, ast.DefaultExpr)
        if is_default:
            pending_default = True
        else:
            if case.action is None:
                raise unsupported(case, "switch label that is not an action of the table")
            pending.append(case.action)
        if case.body is not None:
            for action in pending:
                cases[id(action)] = case.body
            if pending_default:
                default_body = case.body
            pending = []
            pending_default = False
    if pending or pending_default:
        raise compile_error(call, "switch ends with a label without a body")
    return cases, default_body
