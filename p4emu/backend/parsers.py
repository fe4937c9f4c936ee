"""Parser code generation: one Python function per top-level parser.

The parser graph is flattened first: every ``sub.apply(...)`` of a sub-parser is inlined
by splitting the calling state around the call (states before the call jump to the
sub-parser's start; its ``accept`` jumps to a continuation state holding the rest of the
calling state). Then states with exactly one incoming edge are emitted inline at their
single use; a state entered several times but only from the code of one other state
(through a ``select`` whose cases all lead to it) is emitted right after that code, its
entries falling through to it; the others (``start``, other join points, loop heads)
become branches of a ``while True`` dispatch on ``st``. Offsets are in bytes (BMv2 parses whole bytes).

BMv2 behaviours reproduced (``src/bm_sim/parser.cpp``, p4c ``backends/bmv2/common/
parser.cpp``):

- an error (``PacketTooShort``, ``StackOutOfBounds``, ``HeaderTooShort``, a failed
  ``verify``) stops parsing, sets ``parser_error``, keeps the headers extracted so far
  and the bytes they consumed; the packet still goes to ingress;
- ``transition reject`` (without an error) ends parsing like ``accept`` (p4c warns that
  an explicit reject is not supported on BMv2, which treats it as the end of parsing);
- a ``select`` without a matching case ends parsing without an error, as BMv2's parse
  state has no default transition; ``no_match_error=True`` reports ``NoMatch`` instead
  (the P4 specification's behaviour).

The function returns the payload's offset only; it stores its error code (0, ``NoError``,
when parsing went through) in the standard metadata's ``parser_error`` itself, on every
path, after the last state (a tuple is neither built nor unpacked per packet).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4emu.backend.body import BodyCompiler, Hoist, ProgramContext
from p4emu.backend.body.core import is_simple
from p4emu.backend.codewriter import CodeWriter, py_attr
from p4emu.backend.compile_helpers import (
    CTX_PARAM,
    compile_error,
    const_int,
    to_unsigned,
    unsupported,
)
from p4emu.backend.headercodec import FROM_BYTES, HeaderCodec, native_parse_prologue
from p4emu.backend.pytypes import bit_width, scalar_type
from p4emu.backend.scope import Binding, Scope
from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.frontend.header_groups import leaf_paths

END = "<end>"
PARSER_ERROR = "parser_error"
"""The standard metadata's field the parse function stores its error code in."""


@dataclass
class _State:
    """One state of the flattened parser graph: its dispatch key, scope, the operations it runs
    in order (statements, sub-parser entry and exit) and its transition."""

    key: str
    scope: Scope
    ops: list[tuple[str, Any]] = field(default_factory=list)
    # ("goto", key) or ("select", transition, {case index: key}, default key or None)
    transition: tuple[Any, ...] = ("goto", END)
    name: str = ""

    def targets(self) -> list[str]:
        if self.transition[0] == "goto":
            return [self.transition[1]]
        keys = list(self.transition[2].values())
        return keys


class ParserFlattener:
    """Builds the flat state graph of a parser instance and its sub-parsers."""

    def __init__(self, pc: ProgramContext) -> None:
        self.pc = pc
        self.states: dict[str, _State] = {}
        self._count = 0

    def _key(self, hint: str) -> str:
        self._count += 1
        return f"{hint}#{self._count}"

    def flatten(self, instance: ast.BlockInstance, scope: Scope, accept: str) -> str:
        """Add the states of ``instance``; its accept goes to ``accept``. Returns the key of
        its start state."""
        decl = instance.decl
        assert isinstance(decl, ast.ParserDecl)
        keys = {state.name: self._key(f"{instance.name}.{state.name}") for state in decl.states}
        if "start" not in keys:
            raise compile_error(decl, f"parser {decl.name} has no start state")

        def resolve(name: str) -> str:
            if name == ast.ACCEPT:
                return accept
            if name == ast.REJECT:
                return END
            return keys[name]

        for state in decl.states:
            current = _State(keys[state.name], scope, name=f"{instance.name}.{state.name}")
            self.states[current.key] = current
            for statement in state.statements:
                call = statement.call if isinstance(statement, ast.CallStmt) else None
                if call is not None and isinstance(call.target, ast.BlockApply):
                    child = self.pc.child_block(instance, call.target)
                    if not isinstance(child.decl, ast.ParserDecl):
                        raise unsupported(call, "applying a control from a parser")
                    continuation = _State(
                        self._key(f"{state.name}.after"), scope, name=current.name
                    )
                    self.states[continuation.key] = continuation
                    sub_scope = Scope(self.pc.global_scope, child)
                    holder: list[Any] = []
                    current.ops.append(("enter", (call, child, sub_scope, holder)))
                    sub_start = self.flatten(child, sub_scope, continuation.key)
                    current.transition = ("goto", sub_start)
                    continuation.ops.append(("leave", holder))
                    current = continuation
                else:
                    current.ops.append(("stmt", statement))
            transition = state.transition
            if transition is None:
                current.transition = ("goto", END)
            elif transition.select is None:
                current.transition = ("goto", resolve(transition.state or ast.REJECT))
            else:
                targets = {i: resolve(case.state) for i, case in enumerate(transition.cases)}
                current.transition = ("select", transition, targets)
        return keys["start"]


class ParserGenerator:
    """Emits the parse function of one top-level parser."""

    def __init__(self, pc: ProgramContext, instance: ast.BlockInstance, fn_name: str) -> None:
        self.pc = pc
        self.instance = instance
        self.fn_name = fn_name
        self.w = CodeWriter()

    def generate(self) -> list[str]:
        pc = self.pc
        decl = self.instance.decl
        assert isinstance(decl, ast.ParserDecl)
        scope = Scope(pc.global_scope, self.instance)
        pc.bind_constructor_params(scope, self.instance)
        params = []
        struct_params: set[str] = set()
        error_store = None  # where the parse's error goes: the standard metadata's field
        for position, param in enumerate(decl.params):
            ptype = param.type
            if _is_extern(ptype, "packet_in"):
                scope.bind(param, Binding("packet_in", ""))
            else:
                name = f"p{position}"
                scope.bind(param, Binding("var", name, ptype))
                params.append(pc.annotated(name, ptype))
                if isinstance(ptype, t.StructType):
                    struct_params.add(name)
                    if position == 3 and _has_parser_error(ptype):
                        error_store = f"{name}.{py_attr(PARSER_ERROR)}"
        flattener = ParserFlattener(pc)
        start = flattener.flatten(self.instance, scope, END)
        states = flattener.states
        incoming: dict[str, int] = {key: 0 for key in states}
        preds: dict[str, list[str]] = {key: [] for key in states}
        for state in states.values():
            for target in state.targets():
                if target != END:
                    incoming[target] += 1
                    preds[target].append(state.key)
        self._plan_joins(start, incoming, preds)
        dispatch = [start] + [
            key
            for key in states
            if key != start and incoming[key] != 1 and incoming[key] > 0 and key not in self.joined
        ]
        self.ids = {key: index for index, key in enumerate(dispatch)}
        self.roots = set(dispatch) | set(self.joined)
        self.current: list[str] = []  # the roots being emitted, innermost last
        self.states = states
        w = self.w
        bc = BodyCompiler(pc, w, scope, where="parser")
        bc.hoist = Hoist(frozenset(struct_params))
        self.bc = bc
        w.line(f"def {self.fn_name}(data, {', '.join(params)}, {CTX_PARAM}):")
        w.level += 1
        for line in native_parse_prologue():
            w.line(line)
        # the packet's length, the offset and the state as C integers in the native build
        # (Python never evaluates a local's annotation): an offset only grows by a
        # header's or an advance's bytes once checked against the length (an amount
        # computed from a field is added as an object, checked, then stored), a state is
        # an index of the dispatch
        w.line("dlen: cython.Py_ssize_t = len(data)")
        w.line("off: cython.Py_ssize_t = 0")
        w.line("err = 0")
        bc.declare_locals(decl.locals)
        if len(dispatch) > 1:
            w.line("st: cython.int = 0")
        with w.block("while True:"):
            for index, key in enumerate(dispatch):
                if len(dispatch) == 1:
                    self.emit_state(key)
                else:
                    with w.block(f"{'if' if index == 0 else 'elif'} st == {index}:"):
                        self.emit_state(key)
            w.line("break")
        if error_store is not None:  # every path: 0 (NoError) when parsing went through
            w.line(f"{error_store} = err")
        w.line("return off")
        w.level -= 1
        w.line("")
        return bc.hoist.finish(w.lines, 1, "    ")

    def _plan_joins(
        self, start: str, incoming: dict[str, int], preds: dict[str, list[str]]
    ) -> None:
        """Find the joins: a state entered more than once, but only from the code of one
        dispatched (or joined) state R (R and the states inlined into it), is emitted
        right after R's code, where every ``goto`` to it falls through (``self.joined``:
        join -> R, ``self.joins``: R -> join; one join per R)."""

        def root(key: str) -> str:
            seen = {key}
            while key != start and incoming[key] == 1:
                key = preds[key][0]
                if key in seen:  # a cycle of inlined states: not reached from start
                    break
                seen.add(key)
            return key

        candidates: dict[str, list[str]] = {}
        for key, count in incoming.items():
            if key == start or count < 2:
                continue
            owners = {root(pred) for pred in preds[key]}
            if len(owners) == 1 and key not in owners:
                candidates.setdefault(owners.pop(), []).append(key)
        self.joins = {owner: keys[0] for owner, keys in candidates.items() if len(keys) == 1}
        self.joined = {join: owner for owner, join in self.joins.items()}

    # ------------------------------------------------------------------ states

    def emit_state(self, key: str) -> None:
        is_root = key in self.roots
        if is_root:
            self.current.append(key)
        try:
            self._emit_state(key)
        finally:
            if is_root:
                self.current.pop()
        join = self.joins.get(key)
        if join is not None:
            self.emit_state(join)

    def _emit_state(self, key: str) -> None:
        state = self.states[key]
        bc = self.bc
        saved = bc.scope
        bc.scope = state.scope
        try:
            if self.pc.trace:
                bc.w.line(f"TRACE('state', {state.name!r}, off, None)")
            for kind, payload in state.ops:
                if kind == "stmt":
                    bc.stmt(payload)
                elif kind == "enter":
                    call, child, sub_scope, holder = payload
                    self.pc.bind_constructor_params(sub_scope, child)
                    bc.scope = sub_scope
                    holder.extend(_bind_sub_params(bc, state.scope, call, child, sub_scope))
                    bc.declare_locals(child.decl.locals)
                    bc.scope = state.scope
                elif kind == "leave":
                    bc.copy_back(payload)
            self.emit_transition(state)
        finally:
            bc.scope = saved

    def goto(self, target: str) -> None:
        if self.current and self.joined.get(target) == self.current[-1]:
            return  # falls through to the join, emitted after the current root's code
        if target == END:
            self.bc.w.line("break")
        elif target in self.ids:
            self.bc.w.line(f"st = {self.ids[target]}")
            self.bc.w.line("continue")
        else:
            self.emit_state(target)

    def emit_transition(self, state: _State) -> None:
        kind = state.transition[0]
        if kind == "goto":
            self.goto(state.transition[1])
            return
        _, transition, targets = state.transition
        bc = self.bc
        w = bc.w
        keys = []
        key_types = []
        # a key that is an attribute chain (reading it has no effect) is read by each case
        # that tests it: compiled, a C field compared in C (a local would hold it boxed)
        for expr in transition.select:
            code = bc.ex(expr)
            type_ = expr.type
            if bit_width(type_) is not None:  # type: ignore[arg-type]
                code = to_unsigned(code, type_)  # type: ignore[arg-type]
            if not code.isidentifier() and not is_simple(code):
                tmp = bc.fresh("k")
                w.line(f"{tmp} = {code}")
                code = tmp
            keys.append(code)
            key_types.append(type_)
        first = True
        has_default = False
        for index, case in enumerate(transition.cases):
            test = self.case_test(case.keyset, keys, key_types, case)
            if test == "True":
                if first:
                    self.goto(targets[index])
                else:
                    with w.block("else:"):
                        self.goto(targets[index])
                has_default = True
                break
            with w.block(f"{'if' if first else 'elif'} {test}:"):
                self.goto(targets[index])
            first = False
        if not has_default:
            block = w.block("else:") if not first else None
            if block is not None:
                block.__enter__()
            if self.pc.no_match_error:
                w.line(f"err = {self.pc.error_code('NoMatch')}")
            w.line("break")
            if block is not None:
                block.__exit__(None, None, None)

    def case_test(
        self, keyset: ast.Expr, keys: list[str], key_types: list[Any], case: ast.SelectCase
    ) -> str:
        if isinstance(keyset, ast.DefaultExpr):
            return "True"
        if isinstance(keyset, ast.PathExpr) and isinstance(keyset.decl, ast.ValueSetDecl):
            name = self.pc.value_set_runtime(self.bc.scope.block, keyset.decl, case)
            values = "(" + "".join(k + ", " for k in keys) + ")"
            return f"{name}.contains({values})"
        elements = keyset.elements if isinstance(keyset, ast.TupleKeyset) else [keyset]
        if len(elements) != len(keys):
            if len(keys) > 1 and len(elements) == 1 and isinstance(elements[0], ast.DontCare):
                return "True"
            raise compile_error(case, "select case arity does not match the select key")
        tests = []
        for element, key, type_ in zip(elements, keys, key_types):
            test = self.element_test(element, key, type_, case)
            if test != "True":
                tests.append(test)
        return " and ".join(tests) if tests else "True"

    def element_test(self, element: ast.Expr, key: str, type_: Any, case: ast.SelectCase) -> str:
        if isinstance(element, (ast.DontCare, ast.DefaultExpr)):
            return "True"
        if isinstance(element, ast.Mask):
            value, mask = element.const_value or (
                element.value.const_value,
                element.mask.const_value,
            )
            v, m = _bits(value, type_), _bits(mask, type_)
            return f"({key} & {m}) == {v & m}"
        if isinstance(element, ast.Range):
            lo, hi = element.const_value or (element.lo.const_value, element.hi.const_value)
            return f"{_bits(lo, type_)} <= {key} <= {_bits(hi, type_)}"
        if isinstance(element, ast.PathExpr) and isinstance(element.decl, ast.ValueSetDecl):
            name = self.pc.value_set_runtime(self.bc.scope.block, element.decl, case)
            return f"{name}.contains(({key},))"
        if element.const_value is not None:
            return f"{key} == {_bits(element.const_value, type_)}"
        code = self.bc.ex(element)
        return f"{key} == {to_unsigned(code, type_) if bit_width(type_) else code}"


def _bits(value: Any, type_: Any) -> int:
    number = const_int(value)
    if number is None:
        raise ValueError(f"not a constant: {value!r}")
    width = bit_width(type_) if type_ is not None else None
    return number & ((1 << width) - 1) if width else number


def _has_parser_error(type_: t.StructType) -> bool:
    """Whether the struct (the parser's fourth parameter) has v1model's ``parser_error``
    field of type ``error``, which the parse function sets to its error code."""
    return any(
        f.name == PARSER_ERROR and isinstance(scalar_type(f.type), t.ErrorType)
        for f in type_.fields
    )


def _is_extern(type_: t.Type | None, name: str) -> bool:
    if isinstance(type_, t.ExternType):
        return type_.name == name
    if isinstance(type_, t.SpecializedType):
        return type_.base.name == name
    return False


def _bind_sub_params(
    bc: BodyCompiler,
    caller_scope: Scope,
    call: ast.Call,
    child: ast.BlockInstance,
    sub_scope: Scope,
) -> list:
    decl = child.decl
    saved = bc.scope
    bc.scope = caller_scope
    try:
        return bc.bind_params(decl.params, bc.pc.apply_args(call, child), sub_scope, call)
    finally:
        bc.scope = saved


# --------------------------------------------------------------------------- packet_in


def packet_in_statement(bc: BodyCompiler, call: ast.Call, target: ast.ExternMethodCall) -> None:
    if bc.where != "parser":
        raise unsupported(call, f"packet_in.{target.method.name} outside a parser")
    method = target.method.name
    if method == "extract":
        _extract(bc, call)
    elif method == "advance":
        amount = call.bound_args[0].expr
        const = const_int(amount.const_value) if amount is not None else None
        w = bc.w
        # BMv2: a number of bits that is not a whole number of bytes is
        # ParserInvalidArgument (checked first), one past the packet PacketTooShort
        if const is not None:
            if const % 8:
                w.line(f"err = {bc.pc.error_code('ParserInvalidArgument')}")
                w.line("break")
                return
            nbytes = str(const // 8)
        else:
            bits = bc.fresh("bits")
            w.line(f"{bits} = {bc.ex(amount)}")  # type: ignore[arg-type]
            with w.block(f"if {bits} & 7:"):
                w.line(f"err = {bc.pc.error_code('ParserInvalidArgument')}")
                w.line("break")
            nbytes = f"({bits} >> 3)"
        with w.block(f"if off + {nbytes} > dlen:"):
            w.line(f"err = {bc.pc.error_code('PacketTooShort')}")
            w.line("break")
        w.line(f"off += {nbytes}")
    elif method == "lookahead":
        packet_in_value(bc, call, target)
    else:
        raise unsupported(call, f"packet_in.{method}")


def packet_in_value(bc: BodyCompiler, e: ast.Call, target: ast.ExternMethodCall) -> str:
    method = target.method.name
    if method != "lookahead":
        raise unsupported(e, f"packet_in.{method}() as a value")
    type_ = e.type
    width = bit_width(type_) if type_ is not None else None
    if width is not None:
        nbytes = (width + 7) // 8
        pad = nbytes * 8 - width
        _lookahead_length(bc, nbytes)
        value = f"int.from_bytes(data[off:off + {nbytes}], 'big')"
        if pad:
            value = f"({value} >> {pad})"
        base = scalar_type(type_)  # type: ignore[arg-type]
        if isinstance(base, t.BoolType):
            return f"({value} != 0)"
        if isinstance(base, t.BitsType) and base.signed:
            half = 1 << (width - 1)
            return f"(({value} ^ {half}) - {half})"
        return value
    if isinstance(type_, t.HeaderType):
        codec, struct_name = bc.pc.header_codec(type_)
        tmp = bc.fresh("la")
        buf = bc.fresh("lb")
        _lookahead_length(bc, codec.nbytes)
        bc.w.line(f"{tmp} = {bc.pc.types.new(type_)}")
        bc.w.line(f"{buf} = data[off:off + {codec.nbytes}]")
        for line in codec.extract_lines(tmp, buf, "0", struct_name, _from_bytes(bc.pc, codec)):
            bc.w.line(line)
        return tmp
    if isinstance(type_, t.StructType) and type_.width_bits is not None:
        return _lookahead_struct(bc, e, type_)
    raise unsupported(e, f"lookahead of {type_.describe() if type_ else '?'}")


def _lookahead_length(bc: BodyCompiler, nbytes: int) -> None:
    """A ``lookahead`` of ``nbytes`` bytes past the end of the packet stops the parser with
    ``error.PacketTooShort``, in an assignment and in a ``select`` alike (BMv2 checks the
    bytes it would read, rounded up to whole bytes)."""
    with bc.w.block(f"if off + {nbytes} > dlen:"):
        bc.w.line(f"err = {bc.pc.error_code('PacketTooShort')}")
        bc.w.line("break")


def _lookahead_struct(bc: BodyCompiler, e: ast.Call, type_: t.StructType) -> str:
    """``lookahead<S>()`` of a struct of bit strings (``hdr.h.s = pk.lookahead<S>()``): a
    new struct whose fields, in order and nested structs entered, take the next bits."""
    leaves: list[tuple[str, t.Type]] = []
    for names in leaf_paths(type_):
        inner: t.Type = type_
        for name in names:
            info = inner.field(name)  # type: ignore[attr-defined]
            assert info is not None, names
            inner = info.type
        leaves.append((".".join(py_attr(name) for name in names), inner))
    width = type_.width_bits or 0
    nbytes = (width + 7) // 8
    bits = bc.fresh("la")
    value = bc.fresh("ls")
    _lookahead_length(bc, nbytes)
    bc.w.line(f"{bits} = int.from_bytes(data[off:off + {nbytes}], 'big')")
    bc.w.line(f"{value} = {bc.pc.types.new(type_)}")
    shift = nbytes * 8
    for path, leaf_type in leaves:
        leaf_width = bit_width(leaf_type)
        if leaf_width is None:
            raise unsupported(e, f"lookahead<{type_}> with the field {path} of {leaf_type}")
        shift -= leaf_width
        field = f"(({bits} >> {shift}) & {(1 << leaf_width) - 1})"
        base = scalar_type(leaf_type)
        if isinstance(base, t.BoolType):
            field = f"({field} != 0)"
        elif isinstance(base, t.BitsType) and base.signed:
            half = 1 << (leaf_width - 1)
            field = f"(({field} ^ {half}) - {half})"
        bc.w.line(f"{value}.{path} = {field}")
    return value


def parser_verify(bc: BodyCompiler, call: ast.Call) -> None:
    args = {b.param.name: b for b in call.bound_args}
    check = bc.ex(args["check"].expr)  # type: ignore[arg-type]
    error = bc.ex(args["toSignal"].expr)  # type: ignore[arg-type]
    with bc.w.block(f"if not {check}:"):
        bc.w.line(f"err = {error}")
        bc.w.line("break")


def _extract_into_dont_care(bc: BodyCompiler, call: ast.Call) -> None:
    """``pk.extract<H>(_)``: the header's bytes are read and dropped (PacketTooShort when
    they are not all there), as BMv2 runs p4c's extraction into a temporary."""
    target = call.target
    type_ = call.bound_args[0].param_type
    if isinstance(target, ast.ExternMethodCall) and target.type_args:
        type_ = target.type_args[0]
    if not isinstance(type_, t.HeaderType) or type_.has_varbit:
        raise unsupported(call, "extract into _ of a type that is not a fixed-size header")
    codec, _ = bc.pc.header_codec(type_)
    with bc.w.block(f"if off + {codec.nbytes} > dlen:"):
        bc.w.line(f"err = {bc.pc.error_code('PacketTooShort')}")
        bc.w.line("break")
    bc.w.line(f"off += {codec.nbytes}")


def _extract(bc: BodyCompiler, call: ast.Call) -> None:
    args = call.bound_args
    target_expr = args[0].expr
    if target_expr is None:
        raise compile_error(call, "extract() needs a header")
    if isinstance(target_expr, ast.DontCare):
        _extract_into_dont_care(bc, call)
        return
    type_ = target_expr.type
    if not isinstance(type_, t.HeaderType):
        raise unsupported(call, f"extract into {type_.describe() if type_ else '?'}")
    w = bc.w
    pc = bc.pc
    # the destination header object; ``after``: what follows the extraction
    siblings_done = False
    if isinstance(target_expr, ast.Member) and target_expr.kind == ast.MEMBER_STACK_NEXT:
        stack = bc.ex(target_expr.expr)
        size = target_expr.expr.type.size  # type: ignore[union-attr]
        with w.block(f"if {stack}.nxt >= {size}:"):
            w.line(f"err = {pc.error_code('StackOutOfBounds')}")
            w.line("break")
        header = bc.fresh("h")
        # annotated with its class: a C struct to the native build
        w.line(f"{header}: {pc.types.cls(type_)} = {stack}.items[{stack}.nxt]")
        after = [f"{stack}.nxt += 1"]
    elif (
        isinstance(target_expr, ast.Member)
        and target_expr.kind == ast.MEMBER_FIELD
        and isinstance(target_expr.expr, ast.Member)
        and target_expr.expr.kind == ast.MEMBER_STACK_NEXT
    ):
        # ``stack.next.member`` of a stack of header unions: the member of the next element,
        # and the stack's next index advances (BMv2), its siblings invalid
        next_expr = target_expr.expr
        stack = bc.ex(next_expr.expr)
        size = next_expr.expr.type.size  # type: ignore[union-attr]
        union_type = next_expr.type
        assert isinstance(union_type, t.HeaderUnionType)
        with w.block(f"if {stack}.nxt >= {size}:"):
            w.line(f"err = {pc.error_code('StackOutOfBounds')}")
            w.line("break")
        union = bc.fresh("u")
        w.line(f"{union} = {stack}.items[{stack}.nxt]")
        header = f"{union}.{py_attr(target_expr.member)}"
        after = [f"{stack}.nxt += 1"]
        after.extend(
            f"{union}.{py_attr(sibling.name)}.valid_ = False"
            for sibling in union_type.fields
            if sibling.name != target_expr.member
        )
        siblings_done = True
    else:
        header = bc.ex(target_expr)
        if not header.replace(".", "").replace("_", "").isalnum():
            tmp = bc.fresh("h")
            w.line(f"{tmp} = {header}")
            header = tmp
        after = []
    cls = pc.types.cls(type_)
    if len(args) > 1 and args[1].expr is not None:
        # varbit extract
        _, fixed_bits, max_bits = pc.varbit_helpers(type_)
        vl = bc.fresh("vl")
        w.line(f"{vl} = {bc.ex(args[1].expr)}")
        # BMv2 (extract_VL): a length that is negative as a 32-bit signed value or not a
        # whole number of bytes is ParserInvalidArgument; one over the maximum HeaderTooShort
        with w.block(f"if {vl} & 0x80000007:"):
            w.line(f"err = {pc.error_code('ParserInvalidArgument')}")
            w.line("break")
        with w.block(f"if {vl} > {max_bits}:"):
            w.line(f"err = {pc.error_code('HeaderTooShort')}")
            w.line("break")
        with w.block(f"if off + (({fixed_bits} + {vl}) >> 3) > dlen:"):
            w.line(f"err = {pc.error_code('PacketTooShort')}")
            w.line("break")
        w.line(f"off += extract_vl_{cls}({header}, data, off, {vl})")
    else:
        if type_.has_varbit:
            raise unsupported(call, "one-argument extract of a header with a varbit field")
        codec, struct_name = pc.header_codec(type_)
        with w.block(f"if off + {codec.nbytes} > dlen:"):
            w.line(f"err = {pc.error_code('PacketTooShort')}")
            w.line("break")
        from_bytes = _from_bytes(pc, codec)
        with w.block("if cython.compiled:"):  # the fields read in C
            for line in codec.native_extract_lines(header):
                w.line(line)
        with w.block("else:"):
            for line in codec.extract_lines(header, "data", "off", struct_name, from_bytes):
                w.line(line)
        w.line(f"off += {codec.nbytes}")
    for line in after:
        w.line(line)
    if not siblings_done:
        bc.after_validity_change(target_expr, valid=True)
    if pc.trace:
        w.line(f"TRACE('extract', {type_.name!r}, off, {header})")


def _from_bytes(pc: ProgramContext, codec: HeaderCodec) -> str:
    """The generated code's name of ``int.from_bytes`` (bound once, when a header needs
    it: :attr:`HeaderCodec.wide`)."""
    return pc.bind_shared(FROM_BYTES, "from_bytes") if codec.wide else "int.from_bytes"
