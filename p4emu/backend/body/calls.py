"""Calls: parameter binding with copy-in / copy-out, inlined actions, sub-controls and
table actions, generated P4 functions, and table applies handed to the emitters."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from p4emu.backend.body.core import BodyCore, is_simple, writes_state
from p4emu.backend.compile_helpers import (
    compile_error,
    from_unsigned,
    unsupported,
)
from p4emu.backend.pytypes import (
    is_aggregate,
)
from p4emu.backend.scope import Binding, Scope
from p4emu.frontend import ast
from p4emu.frontend import types as t


class CallCode(BodyCore):
    """Calls: a part of
    :class:`~p4emu.backend.body.BodyCompiler`."""

    # ------------------------------------------------------------------ calls

    def bind_params(
        self,
        params: list[ast.Parameter],
        bound: list[ast.BoundArg],
        scope: Scope,
        node: ast.Node,
        body: ast.Node | None = None,
    ) -> list[tuple[ast.Expr, str, t.Type]]:
        """Bind directional parameters of an inlined unit to its arguments.

        Returns the copy-back list ``(argument lvalue, local, type)`` for scalar
        ``out``/``inout`` parameters. An aggregate ``inout`` argument is bound by reference
        unless it may alias (:func:`aliased_params`; ``body`` is the unit's body): then it
        is copied in and copied out like a scalar, as BMv2 (p4c) does.
        """
        by_param = {id(b.param): b for b in bound}
        copy_back: list[tuple[ast.Expr, str, t.Type]] = []
        aliased = aliased_params(params, by_param, body)
        for param in params:
            arg = by_param.get(id(param))
            type_ = (arg.param_type if arg is not None else None) or param.type
            if type_ is None:
                raise compile_error(node, f"parameter {param.name} has no type")
            expr = arg.expr if arg is not None else None
            if expr is None:
                if param.default is not None:
                    expr = param.default
                elif param.direction != "out" and not param.is_optional:
                    # an omitted `out` or optional argument is simply left unbound
                    raise compile_error(node, f"missing argument for {param.name}")
            if param.direction in ("out", "inout"):
                expr = self.pin(expr)
            if isinstance(type_, t.ExternType) or (
                isinstance(type_, t.SpecializedType) and isinstance(type_.base, t.ExternType)
            ):
                # an extern object passed down (packet_in/out): same binding as the argument
                if isinstance(expr, ast.PathExpr):
                    outer = self.scope.lookup(expr.decl)
                    if outer is not None:
                        scope.bind(param, outer)
                        continue
                raise unsupported(node, f"extern argument {param.name}")
            if is_aggregate(type_):
                if param.direction == "out":
                    # out: a fresh (invalid / zero) object, copied to the argument after
                    local = self.fresh(param.name)
                    self.w.line(f"{local} = {self.pc.types.new(type_)}")
                    scope.bind(param, Binding("var", local, type_))
                    if expr is not None and not isinstance(expr, ast.DontCare):
                        copy_back.append((expr, local, type_))
                    continue
                if expr is None:
                    raise compile_error(node, f"missing argument for {param.name}")
                if isinstance(expr.type, t.HeaderGroupType):
                    # a struct-typed header field: copied in to a new struct, copied out
                    # (inout) at the end
                    local = self.ex(expr)
                    scope.bind(param, Binding("var", local, type_))
                    if param.direction == "inout":
                        copy_back.append((expr, local, type_))
                    continue
                ref = self.aggregate_value(expr, type_)
                if id(param) in aliased:
                    local = self.fresh(param.name)
                    self.w.line(f"{local} = {self.pc.types.copy(ref, type_)}")
                    scope.bind(param, Binding("var", local, type_))
                    if param.direction == "inout":
                        copy_back.append((expr, local, type_))
                    continue
                if param.direction in ("in", "") and not is_simple(ref):
                    local = self.fresh(param.name)
                    self.w.line(f"{local} = {self.pc.types.copy(ref, type_)}")
                    ref = local
                elif not is_simple(ref):
                    local = self.fresh(param.name)
                    self.w.line(f"{local} = {ref}")
                    ref = local
                scope.bind(param, Binding("var", ref, type_))
                continue
            local = self.fresh(param.name)
            if param.direction == "out":
                self.w.line(f"{local} = {self.pc.types.new(type_)}")
            else:
                if expr is None or isinstance(expr, ast.DontCare):
                    self.w.line(f"{local} = {self.pc.types.new(type_)}")
                else:
                    self.w.line(f"{local} = {self.owned(self.ex(expr), type_)}")
            scope.bind(param, Binding("var", local, type_))
            if (
                param.direction in ("out", "inout")
                and expr is not None
                and not isinstance(expr, ast.DontCare)
            ):
                copy_back.append((expr, local, type_))
        return copy_back

    def pin(self, expr: ast.Expr | None) -> ast.Expr | None:
        """``expr`` (an ``out``/``inout`` argument) with the stack element a run-time index
        names evaluated now, once, into a local: the copy-in reads it and the copy-out
        writes it, as P4_16 evaluates an argument's lvalue once, at the call (the index may
        call a function that changes what it reads)."""
        if expr is None or not _has_runtime_index(expr):
            return expr
        if isinstance(expr, ast.Index) and not isinstance(expr.expr.type, t.TupleType):
            local = self.fresh("el")
            self.w.line(f"{local} = {self.ex(expr)}")
            decl = object()  # a declaration of its own, bound to the local
            self.scope.bind(decl, Binding("var", local, expr.type))
            return ast.PathExpr(name=local, loc=expr.loc, decl=decl, type=expr.type)
        if isinstance(expr, (ast.Member, ast.Slice, ast.Index)):
            return dataclasses.replace(expr, expr=self.pin(expr.expr))
        return expr

    def copy_back(self, copies: list[tuple[ast.Expr, str, t.Type]]) -> None:
        for target, local, type_ in copies:
            self.assign(target, local, type_)

    def run_unit(self, scope: Scope, body: ast.BlockStmt, copies: list) -> None:
        """Emit an inlined body (action / sub-control apply) in ``scope``."""
        saved = self.scope
        self.scope = scope
        exits = bool(copies) and may_exit(body)
        try:
            if exits:
                # ``exit`` still copies the unit's out/inout arguments out (BMv2: p4c
                # inlines the unit with its copy-out before the exit)
                self.w.line("try:")
                self.w.level += 1
            if contains_return(body):
                self.returns.append(("break",))
                with self.w.block("for _ in ONCE:"):
                    self.stmts(body.statements)
                self.returns.pop()
            else:
                self.stmts(body.statements)
        finally:
            self.scope = saved
        if exits:
            self.w.line("pass")
            self.w.level -= 1
            with self.w.block("except ExitSignal:"):
                self.copy_back(copies)
                self.w.line("raise")
        self.copy_back(copies)

    def action_scope(self, action: ast.ActionDecl) -> Scope:
        """Scope an action body runs in: its block's scope, or the program's for top-level
        actions."""
        block_scope = self.pc.block_scope_of(action, self.scope)
        return block_scope.child()

    def inline_action_call(self, call: ast.Call, action: ast.ActionDecl) -> None:
        """A direct action call ``a(args)`` from a control body or another action."""
        scope = self.action_scope(action)
        by_param = {id(b.param): b for b in call.bound_args}
        directional = []
        bound_dir = []
        for param in action.params:
            arg = by_param.get(id(param))
            if param.is_directionless:
                if arg is None or arg.expr is None:
                    raise compile_error(call, f"missing argument for {param.name}")
                local = self.fresh(param.name)
                self.w.line(f"{local} = {self.ex(arg.expr)}")
                scope.bind(param, Binding("var", local, arg.param_type or param.type))
            else:
                directional.append(param)
                if arg is not None:
                    bound_dir.append(arg)
        copies = self.bind_params(directional, bound_dir, scope, call, action.body)
        self.run_unit(scope, action.body, copies)

    def inline_table_action(
        self,
        action: ast.ActionDecl,
        args_code: str,
        ref: ast.ActionRef | None,
        node: ast.Node,
    ) -> None:
        """An action run by a table: directionless params come from ``args_code`` (the
        entry's argument tuple), directional ones from the ``actions`` list entry."""
        scope = self.action_scope(action)
        cp_params = action.control_plane_params
        start = len(self.w.lines)
        names: list[str] = []
        if cp_params:
            for param in cp_params:
                names.append(self.fresh(param.name))
            self.w.line(f"{', '.join(names)}{',' if len(names) == 1 else ''} = {args_code}")
            for param, name in zip(cp_params, names):
                type_ = param.type
                if type_ is None:
                    raise compile_error(param, f"parameter {param.name} has no type")
                converted = from_unsigned(name, type_)
                if converted != name:
                    self.w.line(f"{name} = {converted}")
                scope.bind(param, Binding("var", name, type_))
        directional = action.directional_params
        copies: list = []
        if directional:
            bound = ref.bound_args if ref is not None else []
            copies = self.bind_params(
                directional, [b for b in bound if b.expr is not None], scope, node, action.body
            )
        self.run_unit(scope, action.body, copies)
        if (
            names
            and self.pc.native_runtime
            and args_code.endswith(".args")
            and all(_c_arg_type(param.type) for param in cp_params)
        ):
            _stores_from_c_args(self.w.lines, start, names, args_code[: -len(".args")], self.fresh)

    def call_function(
        self, call: ast.Call, target: ast.FunctionCall, statement: bool = False
    ) -> str:
        """Call of a P4 function; returns the value expression. Scalar ``out``/``inout``
        arguments come back in the result (see :func:`function_return`) and are written
        to their arguments after the call; aggregate ``out`` arguments get a fresh object
        copied to the argument after the call."""
        fn = target.function
        name, _ = self.pc.function(fn)
        by_param = {id(b.param): b for b in call.bound_args}
        args = ["ctx"]
        scalar_outs: list[tuple[ast.Expr | None, t.Type]] = []
        aggregate_outs: list[tuple[ast.Expr, str, t.Type]] = []
        for param in fn.params:
            arg = by_param.get(id(param))
            type_ = (arg.param_type if arg is not None else None) or param.type
            if type_ is None:
                raise compile_error(call, f"parameter {param.name} has no type")
            expr = arg.expr if arg is not None else None
            if expr is None and param.default is not None:
                expr = param.default
            if len(args) > 1 and writes_state(expr):
                # arguments are evaluated left to right: the values before are taken now
                # (held as they are: an ``in`` aggregate's code is its copy, an ``inout``
                # one's the object itself)
                args[1:] = [self.hold(code, None) for code in args[1:]]
            if param.direction in ("out", "inout"):
                expr = self.pin(expr)
            if is_aggregate(type_):
                if param.direction == "out":
                    tmp = self.fresh(param.name)
                    self.w.line(f"{tmp} = {self.pc.types.new(type_)}")
                    args.append(tmp)
                    if expr is not None and not isinstance(expr, ast.DontCare):
                        aggregate_outs.append((expr, tmp, type_))
                elif expr is None:
                    args.append(self.pc.types.new(type_))
                elif isinstance(expr.type, t.HeaderGroupType):
                    # a struct-typed header field: a new struct holding its leaves, stored
                    # back into them after the call (inout)
                    value = self.ex(expr)
                    args.append(value)
                    if param.direction == "inout":
                        aggregate_outs.append((expr, value, type_))
                elif param.direction == "inout":
                    args.append(self.aggregate_value(expr, type_))
                else:
                    args.append(self.pc.types.copy(self.aggregate_value(expr, type_), type_))
                continue
            if param.direction == "out" or expr is None or isinstance(expr, ast.DontCare):
                args.append(self.pc.types.new(type_))
            else:
                args.append(self.owned(self.ex(expr), type_))
            if param.direction in ("out", "inout"):
                usable = expr if expr is not None and not isinstance(expr, ast.DontCare) else None
                scalar_outs.append((usable, type_))
        returns_value = not isinstance(fn.return_type.resolved, t.VoidType)
        invocation = f"{name}({', '.join(args)})"
        if not scalar_outs and not aggregate_outs:
            return invocation
        result = self.fresh("r")
        self.w.line(f"{result} = {invocation}")
        if returns_value:
            positions = [f"{result}[{i + 1}]" for i in range(len(scalar_outs))]
            value = f"{result}[0]" if scalar_outs else result
        elif len(scalar_outs) == 1:
            positions = [result]
            value = "None"
        else:
            positions = [f"{result}[{i}]" for i in range(len(scalar_outs))]
            value = "None"
        for (expr, type_), code in zip(scalar_outs, positions):
            if expr is not None:
                self.assign(expr, code, type_)
        for expr, tmp, type_ in aggregate_outs:
            self.assign(expr, tmp, type_)
        return "" if statement else value

    # ------------------------------------------------------------------ sub-controls

    def inline_subcontrol(self, call: ast.Call, target: ast.BlockApply) -> None:
        block = self.scope.block
        instance = self.pc.child_block(block, target)
        decl = instance.decl
        if not isinstance(decl, ast.ControlDecl):
            raise unsupported(call, "applying a parser from a control")
        scope = Scope(self.pc.global_scope, instance)
        self.pc.bind_constructor_params(scope, instance)
        copies = self.bind_params(decl.params, self.pc.apply_args(call, instance), scope, call)
        saved = self.scope
        self.scope = scope
        try:
            self.declare_locals(decl.locals)
        finally:
            self.scope = saved
        self.run_unit(scope, decl.body, copies)

    def declare_locals(self, locals_: list[ast.Declaration]) -> None:
        """Variables and constants declared among a control's locals (per packet)."""
        for decl in locals_:
            if isinstance(decl, (ast.VariableDecl, ast.ConstDecl)):
                self.declare(decl)

    # ------------------------------------------------------------------ tables

    def table_apply(
        self,
        call: ast.Call,
        *,
        want_hit: bool = False,
        switch: ast.SwitchStmt | None = None,
    ) -> str:
        """Generate a table application; returns the name of its ``hit`` variable."""
        return self.emitters.table_apply(self, call, want_hit=want_hit, switch=switch)


def _lvalue_path(expr: ast.Expr | None) -> tuple[object, ...] | None:
    """``hdr.h.a`` -> ``(id(hdr decl), "h", "a")``; a run-time index is ``"*"``; None when
    ``expr`` is not an lvalue path."""
    if isinstance(expr, ast.PathExpr):
        return (id(expr.decl),)
    if isinstance(expr, ast.Member):
        base = _lvalue_path(expr.expr)
        step = expr.member if expr.kind == ast.MEMBER_FIELD else "*"  # stack.next / .last
        return None if base is None else (*base, step)
    if isinstance(expr, ast.Index):
        base = _lvalue_path(expr.expr)
        value = expr.index.const_value
        return None if base is None else (*base, value if isinstance(value, int) else "*")
    if isinstance(expr, ast.Slice):
        return _lvalue_path(expr.expr)
    return None


def _has_runtime_index(expr: ast.Expr) -> bool:
    """True when lvalue ``expr`` indexes a header stack with a non-constant index."""
    while isinstance(expr, (ast.Member, ast.Slice, ast.Index)):
        if isinstance(expr, ast.Index) and not isinstance(expr.index.const_value, int):
            return True
        expr = expr.expr
    return False


def _overlap(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    return all(x == y or "*" in (x, y) for x, y in zip(a, b, strict=False))


def aliased_params(
    params: list[ast.Parameter], by_param: dict[int, ast.BoundArg], body: ast.Node | None
) -> set[int]:
    """ids of the aggregate ``inout`` and ``in`` parameters whose argument overlaps another
    directional argument (an ``out``/``inout`` one, for an ``in`` parameter), or whose
    argument's root variable ``body`` also uses directly: those are copied in (an ``in``
    argument is a value taken at the call, whatever the body writes later)."""
    paths: list[tuple[ast.Parameter, tuple[object, ...]]] = []
    for param in params:
        arg = by_param.get(id(param))
        if param.direction in ("out", "inout", "in") and arg is not None:
            path = _lvalue_path(arg.expr)
            if path is not None:
                paths.append((param, path))
    candidates = [
        (param, path)
        for param, path in paths
        if param.direction in ("inout", "in")
        and param.type is not None
        and is_aggregate(param.type)
    ]
    if not candidates:
        return set()
    used = (
        {id(n.decl) for n in ast.walk(body) if isinstance(n, ast.PathExpr)}
        if body is not None
        else set()
    )
    aliased: set[int] = set()
    for param, path in candidates:
        if path[0] in used or any(
            other is not param
            and (param.direction == "inout" or other.direction != "in")
            and _overlap(path, other_path)
            for other, other_path in paths
        ):
            aliased.add(id(param))
    return aliased


def may_exit(node: ast.Node, seen: set[int] | None = None) -> bool:
    """True when running ``node`` may execute ``exit``: its own, or one in an action it
    calls, an action of a table it applies, or a control it applies."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return False
    seen.add(id(node))
    for sub in ast.walk(node):
        if isinstance(sub, ast.ExitStmt):
            return True
        if not isinstance(sub, ast.Call):
            continue
        target = sub.target
        if isinstance(target, ast.ActionCall):
            if may_exit(target.action.body, seen):
                return True
        elif isinstance(target, ast.TableApply):
            table = target.table
            refs = [*table.actions, table.default_action]
            for ref in refs:
                if ref is not None and ref.action is not None and may_exit(ref.action.body, seen):
                    return True
        elif isinstance(target, ast.BlockApply):
            block = target.block
            if isinstance(block, (ast.ParserDecl, ast.ParserTypeDecl)):
                continue  # parsers have no exit
            if not isinstance(block, ast.ControlDecl) or may_exit(block.body, seen):
                return True  # a control passed in (a type) is not known here: it may
    return False


def contains_return(node: ast.Node) -> bool:
    return any(isinstance(sub, ast.ReturnStmt) for sub in ast.walk(node))


#: the widest ``bit<W>`` action parameter read from :meth:`TableAction.c_args`
#: (:func:`_stores_from_c_args`): its values are C ``long long``s
C_ARG_BITS = 63


def _c_arg_type(type_: t.Type | None) -> bool:
    """A control-plane parameter of this type may be read from the entry's C copy of its
    arguments: ``bit<W>`` up to :data:`C_ARG_BITS` (a table checks each argument
    against its width; an unsigned value needs no conversion)."""
    return isinstance(type_, t.BitsType) and not type_.signed and type_.width <= C_ARG_BITS


def _stores_from_c_args(
    lines: list[str], start: int, names: list[str], entry: str, fresh: Callable[[str], str]
) -> None:
    """An inlined table action whose parameters (``names``, unpacked from ``entry.args``
    at ``lines[start]``) are each only stored whole (``<target> = <name>`` lines): the
    compiled module stores the entry's C copy of its arguments instead
    (:meth:`p4emu.runtime.tables.TableAction.c_args`: ``target = _ca[i]``, a C value,
    no tuple unpacked, no ``int`` converted), and runs the lines as they were when the
    entry has no such copy (an argument beyond 64 signed bits) and on the pure path
    (``cython.compiled`` is False there; Python never evaluates the pointer's
    annotation). Anything else done with a parameter leaves the lines as they are."""
    unpack = lines[start]
    indent = unpack[: len(unpack) - len(unpack.lstrip())]
    body = lines[start + 1 :]
    index = {name: i for i, name in enumerate(names)}
    pattern = re.compile(r"\b(" + "|".join(re.escape(name) for name in names) + r")\b")
    store = re.compile(r"^(\s*[\w.]+) = (\w+)$")
    pointer = fresh("_ca")
    compiled: list[str] = []
    for line in body:
        if not line.startswith(indent) and line.strip():
            return  # not inside the action's lines (never expected): leave them
        if pattern.search(line) is None:
            compiled.append(line)
            continue
        found = store.match(line)
        if found is None or found.group(2) not in index or pattern.search(found.group(1)):
            return  # a parameter read in an expression: the lines stay
        compiled.append(f"{found.group(1)} = {pointer}[{index[found.group(2)]}]")
    if compiled == body:
        return  # no parameter used: nothing to gain
    lines[start:] = [
        f"{indent}{pointer}: cython.p_longlong",
        f"{indent}if cython.compiled:",
        # the entry's pointer while its copy is of these arguments: no call
        f"{indent}    {pointer} = {entry}._c_argp if {entry}._c_src is {entry}.args"
        f" else {entry}.c_args()",
        f"{indent}if cython.compiled and {pointer} != cython.NULL:",
        *("    " + line if line.strip() else line for line in compiled),
        f"{indent}else:",
        *("    " + line if line.strip() else line for line in [unpack, *body]),
    ]
