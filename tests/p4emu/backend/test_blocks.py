"""A program's blocks as the methods of its generated ``ProgramBlocks`` (a subclass of
:class:`p4emu.backend.rt.Blocks`), and the switch calling them through that object."""

from __future__ import annotations

import ast
from typing import Any

import pytest
from backend_helpers import PROGRAMS
from scapy.all import IP, UDP, Ether, raw

from p4emu.backend import compile_program
from p4emu.backend.exceptions import CompileError
from p4emu.backend.program import (
    BLOCK_PARAMS,
    BLOCKS_CLASS,
    _block_method,
    _bound_names,
    _names_as_attributes,
    _without_exit_catch,
)
from p4emu.backend.rt import Blocks, PacketContext
from p4emu.frontend import load_program
from p4emu.runtime.clock import VirtualClock
from p4emu.runtime.tables import Lpm
from p4emu.switch import Switch


def test_the_blocks_are_bound_methods_of_one_blocks_object() -> None:
    compiled = compile_program(load_program(PROGRAMS / "basic.p4"), clock=VirtualClock())
    blocks = compiled.blocks
    assert isinstance(blocks, Blocks)
    assert type(blocks).__name__ == BLOCKS_CLASS
    for method, name in (
        (compiled.parse, "parse_block"),
        (compiled.verify_checksum, "verify_block"),
        (compiled.ingress, "ingress_block"),
        (compiled.egress, "egress_block"),
        (compiled.compute_checksum, "compute_block"),
        (compiled.deparse, "deparse_block"),
        (compiled.init_packet, "init_packet"),
    ):
        assert method.__self__ is blocks
        assert method.__name__ == name


def test_each_switch_has_its_own_blocks_object_over_its_own_tables() -> None:
    checked = load_program(PROGRAMS / "basic.p4")
    one, two = Switch(checked), Switch(checked)
    assert type(one.program.blocks) is type(two.program.blocks)  # one shared module
    assert one.program.blocks is not two.program.blocks
    frame = raw(Ether() / IP(dst="10.0.1.1") / UDP() / b"x")
    table = one.objects.tables["MyIngress.ipv4_lpm"]
    action = one.objects.actions["MyIngress.ipv4_forward"].id
    table.insert([Lpm(0x0A000100, 24)], action, [0x000000000002, 3])
    one.inject(1, frame)
    two.inject(1, frame)
    assert [port for port, _ in one.collect()] == [3]
    assert two.collect() == []  # its own (empty) table: the default action drops


def test_the_base_methods_refuse() -> None:
    base = Blocks()
    ctx = PacketContext(0)
    with pytest.raises(NotImplementedError):
        base.parse_block(b"", None, None, None, ctx)
    with pytest.raises(NotImplementedError):
        base.ingress_block(None, None, None, ctx)
    with pytest.raises(NotImplementedError):
        base.deparse_block(None, ctx)
    with pytest.raises(NotImplementedError):
        base.init_packet(None, None, None)


class CountingBlocks(Blocks):
    """A Python subclass: each method counted, then the program's own run."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def parse_block(self, data: Any, hdr: Any, meta: Any, sm: Any, ctx: PacketContext) -> int:
        self.calls.append("parse")
        return int(self.inner.parse_block(data, hdr, meta, sm, ctx))

    def verify_block(self, hdr: Any, meta: Any, ctx: PacketContext) -> None:
        self.calls.append("verify")
        self.inner.verify_block(hdr, meta, ctx)

    def ingress_block(self, hdr: Any, meta: Any, sm: Any, ctx: PacketContext) -> None:
        self.calls.append("ingress")
        self.inner.ingress_block(hdr, meta, sm, ctx)

    def egress_block(self, hdr: Any, meta: Any, sm: Any, ctx: PacketContext) -> None:
        self.calls.append("egress")
        self.inner.egress_block(hdr, meta, sm, ctx)

    def compute_block(self, hdr: Any, meta: Any, ctx: PacketContext) -> None:
        self.calls.append("compute")
        self.inner.compute_block(hdr, meta, ctx)

    def deparse_block(self, hdr: Any, ctx: PacketContext) -> bytes:
        self.calls.append("deparse")
        return bytes(self.inner.deparse_block(hdr, ctx))

    def init_packet(self, hdr: Any, meta: Any, sm: Any) -> None:
        self.calls.append("init")
        self.inner.init_packet(hdr, meta, sm)


def test_the_switch_calls_the_blocks_object_in_pipeline_order() -> None:
    switch = Switch(PROGRAMS / "basic.p4")
    table = switch.objects.tables["MyIngress.ipv4_lpm"]
    action = switch.objects.actions["MyIngress.ipv4_forward"].id
    table.insert([Lpm(0x0A000100, 24)], action, [0x000000000002, 3])
    counting = CountingBlocks(switch.program.blocks)
    switch._blocks = counting
    frame = raw(Ether() / IP(dst="10.0.1.1", ttl=9) / UDP() / b"x")
    switch.inject(1, frame)
    switch.inject(1, frame)  # the first packet's context is reused: init_packet
    assert switch.program.has_verify_checksum and switch.program.has_compute_checksum
    one = ["parse", "verify", "ingress", "egress", "compute", "deparse"]
    assert counting.calls == [*one, "init", *one]
    out = switch.collect()
    assert [port for port, _ in out] == [3, 3]
    assert out[0][1] == out[1][1]
    assert Ether(out[0][1])[IP].ttl == 8


class NotTheHeaders:
    """An object of no generated class: every attribute reads None, none can be set."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return None


def test_a_block_refuses_headers_of_another_class_and_takes_its_own() -> None:
    compiled = compile_program(load_program(PROGRAMS / "basic.p4"), clock=VirtualClock())
    frame = raw(Ether() / IP(dst="10.0.1.1") / UDP() / b"x")
    hdr, meta, sm = (
        compiled.new_headers(),
        compiled.new_metadata(),
        compiled.new_standard_metadata(),
    )
    ctx = PacketContext(len(frame), b"", hdr, meta, sm)
    offset = compiled.parse(frame, hdr, meta, sm, ctx)
    assert offset == 34  # Ethernet and IPv4 parsed, from the module's own objects
    assert hdr.ipv4.valid_ and hdr.ipv4.dstAddr == 0x0A000101
    wrong = NotTheHeaders()
    # compiled: the exact class is taken without a test, any other object is tested
    # (TypeError); Python: the block reads an attribute the object does not have right
    with pytest.raises((TypeError, AttributeError)):
        compiled.parse(frame, wrong, meta, sm, PacketContext(len(frame)))
    with pytest.raises((TypeError, AttributeError)):
        compiled.deparse(wrong, ctx)
    with pytest.raises((TypeError, AttributeError)):
        compiled.init_packet(hdr, meta, wrong)
    if compiled.shared.how == "compiled":
        with pytest.raises(TypeError):
            compiled.deparse(wrong, ctx)


def test_names_as_attributes_renames_names_only() -> None:
    lines = [
        "    x = G_a(G_b.miss, obj.G_a, 'G_a')  # G_b",
        "    if G_c:",
        "        return G_a",
    ]
    out, found = _names_as_attributes(lines, {"G_a", "G_b", "G_c", "G_d"})
    assert out == [
        "    x = self.G_a(self.G_b.miss, obj.G_a, 'G_a')  # G_b",
        "    if self.G_c:",
        "        return self.G_a",
    ]
    assert found == {"G_a", "G_b", "G_c"}


def test_block_method_takes_the_runtime_parameters_and_reads_closures_from_self() -> None:
    lines = [
        "def ingress_block(p0: H, p1: M, p2, ctx: PacketContext):",
        "    p1.x = T_1.apply(p0.y, p2)",
        "    LOG(p1)",
    ]
    method, used = _block_method(lines, {"T_1": ": Table", "LOG": "", "UNUSED": ""})
    assert method == [
        "def ingress_block(self, hdr, meta, sm, ctx: PacketContext):",
        "    p0: H",
        "    if cython.compiled and type(hdr) is H:",
        "        p0 = cython.cast(H, hdr)",
        "    else:",
        "        p0 = hdr",
        "    p1: M",
        "    if cython.compiled and type(meta) is M:",
        "        p1 = cython.cast(M, meta)",
        "    else:",
        "        p1 = meta",
        "    p2 = sm",
        "    p1.x = self.T_1.apply(p0.y, p2)",
        "    self.LOG(p1)",
    ]
    assert used == ["T_1", "LOG"]
    ast.parse("\n".join(method))


def test_block_method_refuses_another_signature() -> None:
    with pytest.raises(CompileError, match="v1model signature"):
        _block_method(["def egress_block(p0, p1, ctx: PacketContext):", "    pass"], {})
    with pytest.raises(CompileError, match="internal error"):
        _block_method(["def helper(p0, ctx: PacketContext):", "    pass"], {})
    with pytest.raises(CompileError, match="assigns"):  # a local would hide the object
        _block_method(["def deparse_block(p1, ctx: PacketContext):", "    T = 1"], {"T": ""})


def test_bound_names_are_the_top_level_bindings() -> None:
    lines = ["A = 1", "B: int = 2", "C, (D, E) = 3, (4, 5)", "def f(x):", "    inner = x"]
    assert _bound_names(lines) == ["A", "B", "C", "D", "E", "f"]


def test_every_block_has_the_parameters_of_the_runtime_base() -> None:
    for name, params in BLOCK_PARAMS.items():
        method = getattr(Blocks, name)
        code = getattr(method, "__code__", None)
        if code is not None:  # the pure class (the compiled one's are C methods)
            assert code.co_varnames[1 : 1 + len(params)] == params
            assert code.co_varnames[1 + len(params)] == "ctx"


def test_every_example_program_keeps_no_closure_read_in_its_blocks() -> None:
    for path in sorted(PROGRAMS.glob("*.p4")):
        compiled = compile_program(load_program(path), clock=VirtualClock())
        tree = ast.parse(compiled.source)
        [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == BLOCKS_CLASS]
        make = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "__make__")
        closure = {
            t.id
            for stmt in make.body
            for t in ast.walk(stmt)
            if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
        }
        for method in cls.body:
            reads = {n.id for n in ast.walk(method) if isinstance(n, ast.Name)}
            assert not reads & (closure - {"B"}), (path.name, method.name)


def test_only_a_program_that_exits_catches_exit_signal() -> None:
    def catches(name: str) -> int:
        compiled = compile_program(load_program(PROGRAMS / name), clock=VirtualClock())
        return compiled.source.count("except ExitSignal:")

    assert catches("basic.p4") == 0  # no exit: no try around any block's body
    assert "exit;" in (PROGRAMS / "stateful.p4").read_text()
    assert catches("stateful.p4") == 5  # each of the five controls (not the parser) catches it


def test_without_exit_catch_lifts_the_body_and_keeps_the_rest() -> None:
    lines = [
        "def deparse_block(p1, ctx):",
        "    x = 1",
        "    try:",
        "        if x:",
        "            y = 2",
        "    except ExitSignal:",
        "        pass",
        "    return y",
    ]
    assert _without_exit_catch(lines) == [
        "def deparse_block(p1, ctx):",
        "    x = 1",
        "    if x:",
        "        y = 2",
        "    return y",
    ]
    parser = ["def parse_block(data, p1, ctx):", "    return 0"]
    assert _without_exit_catch(parser) == parser
    with pytest.raises(CompileError, match="does more"):
        _without_exit_catch([*lines[:6], "        raise", *lines[7:]])
