"""Code generation for v1model / core extern calls with BMv2 (simple_switch) semantics.

References: behavioral-model ``targets/simple_switch/primitives.cpp``,
``src/bm_sim/core/primitives.cpp``, ``simple_switch.cpp`` and p4c's BMv2 backend.

- ``mark_to_drop(sm)``: ``egress_spec`` = drop port, ``mcast_grp`` = 0.
- ``clone``/``clone_preserving_field_list``, ``resubmit_preserving_field_list``,
  ``recirculate_preserving_field_list``, ``digest``, ``truncate`` only *record* the
  request in the packet context; the switch acts at the end of ingress/egress like
  ``simple_switch.cpp`` (the last call of each kind wins, as BMv2 overwrites its
  registers). ``digest`` data is copied at the call (p4c 1.2.4.8 copies it into
  temporaries there, which BMv2 learns from after the ingress pipeline).
- ``hash``: ``result = base + H(fields) % max`` (max 0 treated as 1, as BMv2).
- ``verify_checksum``: a mismatch sets ``standard_metadata.checksum_error`` (through the
  context); no check when the checksum field's header is invalid (BMv2);
  ``update_checksum`` writes the field when the condition holds.
- Registers/counters/meters use :mod:`p4emu.runtime.externs` (out-of-range indices are
  logged and ignored, the destination keeps its value).
- ``assert``/``assume``: a false condition aborts BMv2; p4emu raises
  :class:`p4emu.backend.exceptions.P4AssertionError` out of the switch call.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from p4emu.backend.codewriter import py_attr
from p4emu.backend.compile_helpers import (
    compile_error,
    const_int,
    fit,
    from_unsigned,
    literal,
    to_unsigned,
    unsupported,
)
from p4emu.backend.headercodec import native_emit_bytes_lines
from p4emu.backend.parsers import packet_in_statement, packet_in_value, parser_verify
from p4emu.backend.pytypes import bit_width, scalar_type
from p4emu.frontend import ast
from p4emu.frontend import types as t

if TYPE_CHECKING:
    from p4emu.backend.body import BodyCompiler

#: the widest ``random`` draw made by a C call when compiled (RandomSource.uniform_at
#: takes its bounds as C ``Py_ssize_t``: 63 bits on a 64-bit machine)
C_DRAW_BITS = sys.maxsize.bit_length()


def _args(call: ast.Call) -> dict[str, ast.BoundArg]:
    return {b.param.name: b for b in call.bound_args}


def _arg_list(call: ast.Call) -> list[ast.BoundArg]:
    return list(call.bound_args)


def extern_statement(bc: BodyCompiler, call: ast.Call) -> None:
    target = call.target
    if isinstance(target, ast.ExternFunctionCall):
        name = target.function.name
        handler = _FUNCTIONS.get(name)
        if handler is None:
            raise unsupported(call, f"extern function {name}")
        handler(bc, call)
        return
    assert isinstance(target, ast.ExternMethodCall)
    extern = target.extern.name
    method = target.method.name
    if extern == "packet_in":
        packet_in_statement(bc, call, target)
        return
    if extern == "packet_out" and method == "emit":
        emit_statement(bc, call)
        return
    handler = _METHODS.get((extern, method))
    if handler is None:
        raise unsupported(call, f"extern method {extern}.{method}")
    handler(bc, call, target)


def extern_method_value(bc: BodyCompiler, e: ast.Call, target: ast.ExternMethodCall) -> str:
    if target.extern.name == "packet_in":
        return packet_in_value(bc, e, target)
    raise unsupported(e, f"value of {target.extern.name}.{target.method.name}()")


def extern_function_value(bc: BodyCompiler, e: ast.Call, target: ast.ExternFunctionCall) -> str:
    if e.const_value is not None:
        return literal(e.const_value, e.type)
    raise unsupported(e, f"value of extern function {target.function.name}()")


def _instance(bc: BodyCompiler, target: ast.ExternMethodCall, call: ast.Call) -> str:
    instance = target.instance
    if not isinstance(instance, ast.PathExpr):
        raise unsupported(call, "extern method on an expression that is not an instance name")
    block = bc.scope.block
    return bc.pc.extern_runtime(block, instance.decl, call)


def _instance_object(bc: BodyCompiler, target: ast.ExternMethodCall, call: ast.Call) -> Any:
    instance = target.instance
    if not isinstance(instance, ast.PathExpr):
        raise unsupported(call, "extern method on an expression that is not an instance name")
    return bc.pc.extern_object(bc.scope.block, instance.decl, call)


def _index_bound(expr: ast.Expr) -> int | None:
    """The largest value the unsigned index ``expr`` can have, as far as its type (and,
    through casts, the type of what it was cast from) tells; None when unknown."""
    value = expr.const_value
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value >= 0 else None
    base = scalar_type(expr.type) if expr.type is not None else None
    if not isinstance(base, t.BitsType) or base.signed:
        return None
    own = (1 << base.width) - 1
    if isinstance(expr, ast.Cast) and expr.expr.type is not None:
        inner_type = scalar_type(expr.expr.type)
        if isinstance(inner_type, t.BitsType) and not inner_type.signed:
            inner = _index_bound(expr.expr)
            if inner is not None:
                return min(own, inner)
    return own


def _in_range(index: ast.Expr, size: int) -> bool:
    """True when ``index`` is always a valid index of an array of ``size`` cells."""
    bound = _index_bound(index)
    return bound is not None and bound < size


# --------------------------------------------------------------------------- functions


def _mark_to_drop(bc: BodyCompiler, call: ast.Call) -> None:
    args = _arg_list(call)
    if not args or args[0].expr is None:
        raise unsupported(call, "mark_to_drop() without standard_metadata (deprecated form)")
    sm = bc.ex(args[0].expr)
    bc.w.line(f"{sm}.egress_spec = {bc.pc.drop_port}")
    bc.w.line(f"{sm}.mcast_grp = 0")


def _verify(bc: BodyCompiler, call: ast.Call) -> None:
    if bc.where != "parser":
        raise unsupported(call, "verify() outside a parser")
    parser_verify(bc, call)


def _hash(bc: BodyCompiler, call: ast.Call) -> None:
    a = _args(call)
    result = a["result"]
    algo = a["algo"].expr
    algo_name = _enum_name(algo, call)
    fn = bc.pc.hash_function(algo_name, call)
    data = bc.field_list_bytes(a["data"].expr, copies_fields=True)  # type: ignore[arg-type]
    base = bc.ex(a["base"].expr)  # type: ignore[arg-type]
    max_expr = a["max"].expr
    max_const = const_int(max_expr.const_value) if max_expr is not None else None
    if max_const is not None:
        modulus = str(max_const if max_const else 1)
    else:
        modulus = f"({bc.ex(max_expr)} or 1)"  # type: ignore[arg-type]
    value = f"{base} + {fn}({data}) % {modulus}"
    out_type = result.param_type or result.expr.type  # type: ignore[union-attr]
    bc.assign(result.expr, fit(value, out_type), out_type)  # type: ignore[arg-type]


def _random(bc: BodyCompiler, call: ast.Call) -> None:
    a = _args(call)
    result = a["result"]
    out_type = result.param_type or result.expr.type  # type: ignore[union-attr]
    lo = bc.ex(a["lo"].expr)  # type: ignore[arg-type]
    hi = bc.ex(a["hi"].expr)  # type: ignore[arg-type]
    draw = f"RANDOM({lo}, {hi})"
    if isinstance(out_type, t.BitsType) and not out_type.signed and out_type.width <= C_DRAW_BITS:
        # compiled: the random source's C call on C integers (RandomSource.uniform_at:
        # its bounds a Py_ssize_t's); the pure module keeps the bound method (Cython
        # folds ``cython.compiled``)
        draw = f"(RANDOM_SOURCE.uniform_at({lo}, {hi}) if cython.compiled else {draw})"
    bc.assign(result.expr, fit(draw, out_type), out_type)  # type: ignore[arg-type]


def _checksum(bc: BodyCompiler, call: ast.Call, *, update: bool, payload: bool) -> None:
    a = _args(call)
    condition = bc.ex(a["condition"].expr)  # type: ignore[arg-type]
    algo_name = _enum_name(a["algo"].expr, call)
    fn = bc.pc.hash_function(algo_name, call)
    field = a["checksum"]
    field_type = field.param_type or field.expr.type  # type: ignore[union-attr]
    width = bit_width(field_type)  # type: ignore[arg-type]
    if width is None:
        raise unsupported(call, "checksum field that is not a bit string")
    if not update:
        # BMv2 (Checksum::verify) skips the check when the checksum field's header is
        # invalid, before it evaluates the condition
        target = bc.header_validity(a["checksum"].expr)  # type: ignore[arg-type]
        if target is not None and condition in ("True", target):
            condition = target
        elif target is not None:
            condition = f"{target} and ({condition})"
    with bc.w.block(f"if {condition}:"):
        data = bc.field_list_bytes(a["data"].expr)  # type: ignore[arg-type]
        if payload:
            data = f"({data} + ctx.payload)"
        value = f"({fn}({data}) & {(1 << width) - 1})"
        if update:
            bc.assign(field.expr, from_unsigned(value, field_type), field_type)  # type: ignore[arg-type]
        else:
            current = to_unsigned(bc.ex(field.expr), field_type)  # type: ignore[arg-type]
            with bc.w.block(f"if {value} != {current}:"):
                bc.w.line("ctx.checksum_error = 1")
                if bc.pc.trace:
                    bc.w.line("TRACE('checksum_error', None, None, None)")


def _clone(bc: BodyCompiler, call: ast.Call, *, with_list: bool) -> None:
    a = _args(call)
    session = bc.ex(a["session"].expr)  # type: ignore[arg-type]
    bc.w.line(f"ctx.clone_session = {session}")
    if with_list:
        copier = bc.pc.field_list_copier(_list_index(a["index"].expr, call), call)
    else:
        copier = "None"
    bc.w.line(f"ctx.clone_copier = {copier}")


def _resubmit_like(bc: BodyCompiler, call: ast.Call, *, attribute: str) -> None:
    a = _args(call)
    copier = bc.pc.field_list_copier(_list_index(a["index"].expr, call), call)
    bc.w.line(f"ctx.{attribute} = {copier}")


def _deprecated_with_data(name: str, replacement: str) -> Callable[[BodyCompiler, ast.Call], None]:
    """``clone3``, ``resubmit(data)``, ``recirculate(data)``: v1model.p4 still declares
    them, but p4c 1.2.4.8 refuses them for BMv2 ("unknown extern function")."""

    def refuse(bc: BodyCompiler, call: ast.Call) -> None:
        raise compile_error(
            call,
            f"{name}(...) with data: p4c 1.2.4.8 refuses this deprecated form for BMv2 "
            f"('{name}: unknown extern function'); use {replacement}",
        )

    return refuse


def _truncate(bc: BodyCompiler, call: ast.Call) -> None:
    length = bc.ex(_arg_list(call)[0].expr)  # type: ignore[arg-type]
    bc.w.line(f"ctx.truncate = {length}")


def _digest(bc: BodyCompiler, call: ast.Call) -> None:
    a = _args(call)
    data = a["data"]
    type_ = data.param_type or data.expr.type  # type: ignore[union-attr]
    digest_id = bc.pc.digest_id(type_, call)
    values = []
    for code, width, _validity in bc.field_list(data.expr, copies_fields=True, calculation=False):  # type: ignore[arg-type]
        if width is None:
            raise unsupported(call, "varbit field in a digest")
        values.append(code)
    sample = "(" + "".join(v + ", " for v in values) + ")"
    bc.w.line(f"ctx.digest = ({digest_id}, {sample})")


def _log_msg(bc: BodyCompiler, call: ast.Call) -> None:
    args = _arg_list(call)
    message = args[0].expr
    if not isinstance(message, ast.StringLiteral):
        raise unsupported(call, "log_msg with a non-literal format")
    fmt = bc.pc.log_format(message.value)
    values: list[str] = []
    if len(args) > 1 and args[1].expr is not None:
        data = args[1].expr
        elements = data.elements if isinstance(data, ast.ListExpr) else [data]
        for element in elements:
            if isinstance(element.type, (t.StructType, t.HeaderGroupType)):
                raise compile_error(
                    element,
                    f"log_msg cannot print the struct value '{ast.expr_to_source(element)}' "
                    "(p4c 1.2.4.8 refuses a struct in log_msg's data)",
                )
            code = bc.ex(element)
            if isinstance(scalar_type(element.type), t.BoolType):  # type: ignore[arg-type]
                code = f"(1 if {code} else 0)"
            values.append(code)
    tuple_code = "(" + "".join(v + ", " for v in values) + ")"
    bc.w.line(f"LOG_MSG({fmt}.render({tuple_code}))")


def _assert(bc: BodyCompiler, call: ast.Call, kind: str) -> None:
    condition = bc.ex(_arg_list(call)[0].expr)  # type: ignore[arg-type]
    source = ast.expr_to_source(_arg_list(call)[0].expr)  # type: ignore[arg-type]
    loc = call.loc
    message = f"{kind} error: {kind.lower()}({source}) failed, file {loc.file}, line {loc.line}"
    with bc.w.block(f"if not {condition}:"):
        bc.w.line(f"raise P4AssertionError({message!r})")


_FUNCTIONS = {
    "mark_to_drop": _mark_to_drop,
    "verify": _verify,
    "hash": _hash,
    "random": _random,
    "verify_checksum": lambda bc, c: _checksum(bc, c, update=False, payload=False),
    "update_checksum": lambda bc, c: _checksum(bc, c, update=True, payload=False),
    "verify_checksum_with_payload": lambda bc, c: _checksum(bc, c, update=False, payload=True),
    "update_checksum_with_payload": lambda bc, c: _checksum(bc, c, update=True, payload=True),
    "clone": lambda bc, c: _clone(bc, c, with_list=False),
    "clone_preserving_field_list": lambda bc, c: _clone(bc, c, with_list=True),
    "clone3": _deprecated_with_data("clone3", "clone_preserving_field_list"),
    "resubmit_preserving_field_list": lambda bc, c: _resubmit_like(bc, c, attribute="resubmit"),
    "recirculate_preserving_field_list": lambda bc, c: _resubmit_like(
        bc, c, attribute="recirculate"
    ),
    "resubmit": _deprecated_with_data("resubmit", "resubmit_preserving_field_list"),
    "recirculate": _deprecated_with_data("recirculate", "recirculate_preserving_field_list"),
    "truncate": _truncate,
    "digest": _digest,
    "log_msg": _log_msg,
    "assert": lambda bc, c: _assert(bc, c, "Assert"),
    "assume": lambda bc, c: _assert(bc, c, "Assume"),
}


# --------------------------------------------------------------------------- methods


def _register_read(bc: BodyCompiler, call: ast.Call, target: ast.ExternMethodCall) -> None:
    register = _instance_object(bc, target, call)
    a = _args(call)
    result = a["result"]
    type_ = result.param_type or result.expr.type  # type: ignore[union-attr]
    index = bc.ex(a["index"].expr)  # type: ignore[arg-type]
    if _in_range(a["index"].expr, register.size):  # type: ignore[arg-type]
        # always in range: the cell itself (Register.read would only add the range check)
        cells = bc.pc.bind(register.cells(), "Xcells_" + register.name)
        value = from_unsigned(f"{cells}[{index}]", type_)  # type: ignore[arg-type]
    else:
        obj = _instance(bc, target, call)
        current = to_unsigned(bc.ex(result.expr), type_)  # type: ignore[arg-type]
        value = from_unsigned(f"{obj}.read({index}, {current})", type_)  # type: ignore[arg-type]
    bc.assign(result.expr, value, type_)  # type: ignore[arg-type]


def _register_write(bc: BodyCompiler, call: ast.Call, target: ast.ExternMethodCall) -> None:
    register = _instance_object(bc, target, call)
    a = _args(call)
    value = a["value"]
    type_ = value.param_type or value.expr.type  # type: ignore[union-attr]
    index = bc.ex(a["index"].expr)  # type: ignore[arg-type]
    code = to_unsigned(bc.ex(value.expr), type_)  # type: ignore[arg-type]
    if _in_range(a["index"].expr, register.size) and bit_width(type_) == register.width:  # type: ignore[arg-type]
        # always in range, a value of the register's width: store it in the cell
        cells = bc.pc.bind(register.cells(), "Xcells_" + register.name)
        bc.w.line(f"{cells}[{index}] = {code}")
    else:
        bc.w.line(f"{_instance(bc, target, call)}.write({index}, {code})")


def _counter_count(bc: BodyCompiler, call: ast.Call, target: ast.ExternMethodCall) -> None:
    counter = _instance_object(bc, target, call)
    index_expr = _args(call)["index"].expr
    index = bc.ex(index_expr)  # type: ignore[arg-type]
    if not _in_range(index_expr, counter.size):  # type: ignore[arg-type]
        bc.w.line(f"{_instance(bc, target, call)}.count({index}, ctx.ingress_length)")
        return
    # the index once, in a local annotated as a C index (always in range: the native
    # build indexes the cells in C; Python never evaluates a local's annotation)
    local = bc.fresh("i")
    bc.w.line(f"{local}: cython.Py_ssize_t = {index}")
    index = local
    if bc.pc.native_runtime:
        # a native runtime's counter holds its cells in C: one C call (the object is
        # annotated ``Counter``, program._closure_type) adds to both
        name = _instance(bc, target, call)
        bc.w.line(f"{name}.count_at({index}, ctx.ingress_length)")
        return
    # always in range: count in the cells (Counter.count would only add the range check)
    packets, byte_counts = counter.cells()
    packets_name = bc.pc.bind(packets, "Xpackets_" + counter.name)
    bytes_name = bc.pc.bind(byte_counts, "Xbytes_" + counter.name)
    bc.w.line(f"{packets_name}[{index}] += 1")
    bc.w.line(f"{bytes_name}[{index}] += ctx.ingress_length")


def _direct_counter_count(bc: BodyCompiler, call: ast.Call, target: ast.ExternMethodCall) -> None:
    # BMv2 counts every hit of the table's entries; count() itself does nothing
    return


def _meter_execute(bc: BodyCompiler, call: ast.Call, target: ast.ExternMethodCall) -> None:
    obj = _instance(bc, target, call)
    a = _args(call)
    result = a["result"]
    type_ = result.param_type or result.expr.type  # type: ignore[union-attr]
    index = bc.ex(a["index"].expr)  # type: ignore[arg-type]
    current = to_unsigned(bc.ex(result.expr), type_)  # type: ignore[arg-type]
    value = fit(f"{obj}.execute({index}, ctx.ingress_length, {current})", type_)  # type: ignore[arg-type]
    bc.assign(result.expr, value, type_)  # type: ignore[arg-type]


def _direct_meter_read(bc: BodyCompiler, call: ast.Call, target: ast.ExternMethodCall) -> None:
    a = _args(call)
    result = a["result"]
    type_ = result.param_type or result.expr.type  # type: ignore[union-attr]
    color = bc.meter_color
    if color is None:
        # read() outside an action of the meter's table: BMv2 has no color to give
        return
    with bc.w.block(f"if {color} is not None:"):
        bc.assign(result.expr, fit(color, type_), type_)  # type: ignore[arg-type]


_METHODS = {
    ("register", "read"): _register_read,
    ("register", "write"): _register_write,
    ("counter", "count"): _counter_count,
    ("direct_counter", "count"): _direct_counter_count,
    ("meter", "execute_meter"): _meter_execute,
    ("direct_meter", "read"): _direct_meter_read,
}


# --------------------------------------------------------------------------- deparser


def emit_statement(bc: BodyCompiler, call: ast.Call) -> None:
    if bc.where != "deparser":
        raise unsupported(call, "packet_out.emit outside a deparser")
    arg = _arg_list(call)[0].expr
    if arg is None:
        raise compile_error(call, "emit() needs an argument")
    if isinstance(arg.type, t.HeaderGroupType):
        raise compile_error(
            arg,
            f"cannot emit the struct-typed header field '{ast.expr_to_source(arg)}': emit "
            "takes a header, a stack, a union, or a struct or tuple of those",
        )
    emit_value(bc, bc.ex(arg), arg.type, call)  # type: ignore[arg-type]


def emit_value(bc: BodyCompiler, code: str, type_: t.Type, node: ast.Node, times: int = 1) -> None:
    """Append the wire bytes of a header / stack / union / struct value to ``out`` (pure
    path), or write them into the native deparser's buffer (``cython.compiled``:
    :meth:`p4emu.backend.headercodec.HeaderCodec.native_emit_lines`); ``times``: how
    many elements of a stack this text emits (the buffer's size counts them)."""
    w = bc.w
    if isinstance(type_, t.HeaderType):
        emit = bc.pc.header_emit(type_, code)
        if type_.has_varbit:
            _, fixed_bits, max_bits = bc.pc.varbit_helpers(type_)
            nbytes = (fixed_bits + max_bits + 7) // 8
            native = native_emit_bytes_lines(emit)
        else:
            codec, _ = bc.pc.header_codec(type_)
            nbytes = codec.nbytes
            native = codec.native_emit_lines(code)
        bc.deparse_bytes += nbytes * times
        with w.block(f"if {code}.valid_:"):
            with w.block("if cython.compiled:"):
                for line in native:
                    w.line(line)
            with w.block("else:"):
                w.line(f"OUT_APPEND({emit})")
    elif isinstance(type_, t.HeaderStackType):
        item = bc.fresh("it")
        if isinstance(type_.element, t.HeaderType):  # its class: a C struct natively
            w.line(f"{item}: {bc.pc.types.cls(type_.element)}")
        with w.block(f"for {item} in {code}.items:"):
            emit_value(bc, item, type_.element, node, times * type_.size)
    elif isinstance(type_, (t.HeaderUnionType, t.StructType)):
        for info in type_.fields:
            emit_value(bc, f"{code}.{py_attr(info.name)}", info.type, node, times)
    else:
        raise unsupported(node, f"emit of {type_.describe()}")


# --------------------------------------------------------------------------- helpers


def _enum_name(expr: ast.Expr | None, call: ast.Call) -> str:
    value = expr.const_value if expr is not None else None
    if isinstance(value, t.EnumMemberInfo):
        return value.name
    raise unsupported(call, "a hash algorithm that is not a constant")


def _list_index(expr: ast.Expr | None, call: ast.Call) -> int:
    value = const_int(expr.const_value) if expr is not None else None
    if value is None:
        raise unsupported(call, "a field list index that is not a constant")
    return value
