"""Random well-typed v1model programs with their STF inputs, and a delta minimiser.

In the spirit of p4c's own fuzzers (p4smith / bludgeon): :func:`generate` draws, from a
seed, a program with headers of random layouts; a parser with ``select`` on a field, on a
``lookahead`` and a header-stack loop; tables with exact / lpm / ternary / range keys;
actions with arithmetic, slices, concatenation, casts and saturating operations; registers,
counters and ``hash``; ``if``, ``switch (t.apply().action_run)``, ``t.apply().hit`` and
``exit``. It also draws an STF file for it: table entries whose keys hit the packets' field
values, and packets built field by field (select values chosen so every parser path runs).
The STF carries no ``expect``: the differential (:mod:`p4fuzz_diff`) compares what BMv2
and p4emu send, packet by packet.

Everything the minimiser may remove is an item of a list in :class:`FuzzProgram`
(statements, nested statement lists, table entries, packets); a statement references only
global declarations (headers, metadata, tables, registers), so any subset still compiles.
:func:`minimise` removes items one at a time while the divergence stays.

Constructs p4emu got wrong until they were fixed (docs/conformance.md, "Random programs")
are each a switch of :class:`Features`, on by default: header sizes whose byte-aligned
runs are 7, 11, 13-15 or >= 17 bytes, ``exit`` inside an action called directly, register
reads at an index out of range. Turning one off narrows the search to the rest.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

HEADER_BYTES = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20)

UNSAFE_RUN_BYTES = frozenset({7, 11, 13, 14, 15})
"""Lengths of a byte-aligned run of fields (from one byte boundary to the next between
fields) that p4emu's extract/emit corrupts, as runs of 17 bytes and more, until the fix in
p4emu's back end lands."""

PORTS = (1, 2, 3)
"""Egress ports the programs send to (1 by default, 2 and 3 from actions)."""


@dataclass(frozen=True)
class Features:
    """Constructs the generator may use (all by default): those p4emu once got wrong."""

    wide_headers: bool = True
    exit_in_direct_action: bool = True
    register_out_of_range: bool = True
    unapplied_table: bool = True
    initial_entries: bool = True
    lpm_any_width: bool = True

    @classmethod
    def names(cls) -> list[str]:
        return list(cls.__dataclass_fields__)


def runs(fields: list[tuple[str, int]]) -> list[int]:
    """Byte lengths of the runs of fields between byte boundaries."""
    out, start, at = [], 0, 0
    for _, width in fields:
        at += width
        if at % 8 == 0:
            out.append((at - start) // 8)
            start = at
    return out


def safe_runs(fields: list[tuple[str, int]]) -> bool:
    return all(n not in UNSAFE_RUN_BYTES and n < 17 for n in runs(fields))


# --------------------------------------------------------------------------- the model


@dataclass
class Stmt:
    """A statement: ``text`` with ``{}`` placeholders for its nested statement lists."""

    text: str
    blocks: list[list[Stmt]] = field(default_factory=list)

    def render(self, indent: str) -> list[str]:
        lines = self.text.split("\n")
        out: list[str] = []
        block = 0
        for line in lines:
            if line.strip() == "{}":
                inner = indent + "    " + line[: len(line) - len(line.lstrip())]
                out.append(indent + line.replace("{}", "{"))
                for stmt in self.blocks[block]:
                    out.extend(stmt.render(inner))
                out.append(indent + line[: len(line) - len(line.lstrip())] + "}")
                block += 1
            else:
                out.append(indent + line)
        return out


@dataclass
class Header:
    name: str
    fields: list[tuple[str, int]]

    @property
    def bytes(self) -> int:
        return sum(width for _, width in self.fields) // 8


@dataclass
class Table:
    name: str
    keys: list[tuple[str, int, str]]  # (expression, width, match kind)
    actions: list[str]
    initial: bool = False  # its entries are the program's (``entries``), not the STF's

    @property
    def needs_priority(self) -> bool:
        return any(kind in ("ternary", "range") for _, _, kind in self.keys)


@dataclass
class Action:
    name: str
    params: list[tuple[str, int]]
    body: list[Stmt]
    direction: str = ""  # "inout " for an action called directly with inout parameters


@dataclass
class Entry:
    table: str
    priority: int | None
    keys: list[str]  # STF "name:value"
    action: str
    args: list[str]

    def stf(self) -> str:
        prio = f" {self.priority}" if self.priority is not None else ""
        return f"add {self.table}{prio} {' '.join(self.keys)} {self.action}({', '.join(self.args)})"

    def p4(self, table: Table) -> str:
        """The entry in a table's ``entries`` (no priority: the order written decides)."""
        values = []
        for text, (_expr, _width, kind) in zip(self.keys, table.keys):
            value = text.split(":", 1)[1]
            if kind == "ternary":
                value = value.replace("&&&", " &&& ")
            elif kind == "range":
                value = f"{value} .. {value}"
            values.append(value)
        args = ", ".join(arg.split(":", 1)[1] for arg in self.args)
        return f"({', '.join(values)}) : {self.action}({args});"


@dataclass
class FuzzProgram:
    seed: int
    headers: list[Header]
    stack_size: int
    meta: list[tuple[str, int]]
    select_values: list[int]
    lookahead_values: list[int]
    registers: list[tuple[str, int, int]]  # name, width, size
    actions: list[Action]
    tables: list[Table]
    ingress: list[Stmt]
    egress: list[Stmt]
    entries: list[Entry]
    packets: list[bytes]
    unapplied: list[Table] = field(default_factory=list)
    """Tables declared and never applied (p4c leaves them out of the JSON and P4Info)."""
    late_entries: list[Entry] = field(default_factory=list)
    """Written after the packets (a write both targets refuse: to an unapplied table, or
    to a table with program ``entries``)."""

    # --- the P4 source ------------------------------------------------------------------

    def p4(self) -> str:
        h0, h1, h2 = self.headers
        out = [
            f"// p4fuzz program, seed {self.seed}",
            "#include <core.p4>",
            "#include <v1model.p4>",
            "",
        ]
        for header in self.headers:
            out.append(f"header {header.name}_t {{")
            out += [f"    bit<{w}> {n};" for n, w in header.fields]
            out.append("}")
        out.append("struct headers_t {")
        out.append(f"    {h0.name}_t {h0.name};")
        out.append(f"    {h1.name}_t {h1.name};")
        out.append(f"    {h2.name}_t[{self.stack_size}] stk;")
        out.append("}")
        out.append("struct metadata_t {")
        out += [f"    bit<{w}> {n};" for n, w in self.meta]
        out.append("}")
        sel = h0.fields[0]
        last = h2.fields[0]
        cases = "".join(f"            {v}: parse_{h1.name};\n" for v in self.select_values)
        la_cases = "".join(f"            {v}: parse_stk;\n" for v in self.lookahead_values)
        out.append(
            f"""
parser P(packet_in pk, out headers_t hdr, inout metadata_t meta,
         inout standard_metadata_t sm) {{
    state start {{
        pk.extract(hdr.{h0.name});
        transition select(hdr.{h0.name}.{sel[0]}) {{
{cases}            default: check_next;
        }}
    }}
    state parse_{h1.name} {{
        pk.extract(hdr.{h1.name});
        transition check_next;
    }}
    state check_next {{
        transition select(pk.lookahead<bit<8>>()) {{
{la_cases}            default: accept;
        }}
    }}
    state parse_stk {{
        pk.extract(hdr.stk.next);
        transition select(hdr.stk.last.{last[0]}[0:0]) {{
            1: parse_stk;
            default: accept;
        }}
    }}
}}

control VC(inout headers_t hdr, inout metadata_t meta) {{ apply {{ }} }}
"""
        )
        out.append(
            "control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {"
        )
        for name, width, size in self.registers:
            out.append(f"    register<bit<{width}>>({size}) {name};")
        out.append("    counter(8, CounterType.packets) hits;")
        for action in self.actions:
            params = ", ".join(f"{action.direction}bit<{w}> {n}" for n, w in action.params)
            out.append(f"    action {action.name}({params}) {{")
            for stmt in action.body:
                out += stmt.render("        ")
            out.append("    }")
        for table in self.applied_tables() + self.unapplied:
            out.append(f"    table {table.name} {{")
            keys = " ".join(f"{expr}: {kind};" for expr, _, kind in table.keys)
            out.append(f"        key = {{ {keys} }}")
            out.append(f"        actions = {{ {'; '.join([*table.actions, 'NoAction'])}; }}")
            initial = [e.p4(table) for e in self.entries if e.table == table.name]
            if table.initial and initial:
                out.append("        entries = {")
                out += [f"            {line}" for line in initial]
                out.append("        }")
            out.append("        default_action = NoAction();")
            out.append("    }")
        out.append("    apply {")
        out.append("        sm.egress_spec = 1;")
        for stmt in self.ingress:
            out += stmt.render("        ")
        out.append("    }")
        out.append("}")
        out.append(
            "control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {"
        )
        out.append("    apply {")
        for stmt in self.egress:
            out += stmt.render("        ")
        out.append("    }")
        out.append("}")
        out.append("control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }")
        out.append("control D(packet_out pk, in headers_t hdr) {")
        out.append(
            f"    apply {{ pk.emit(hdr.{h0.name}); pk.emit(hdr.{h1.name}); pk.emit(hdr.stk); }}"
        )
        out.append("}")
        out.append("V1Switch(P(), VC(), I(), E(), CC(), D()) main;")
        return "\n".join(out) + "\n"

    def stf(self) -> str:
        lines = [f"# p4fuzz STF, seed {self.seed}: no expect (BMv2 and p4emu are compared)"]
        applied = {table.name for table in self.applied_tables() if not table.initial}
        lines += [entry.stf() for entry in self.entries if entry.table in applied]
        lines += [f"packet 0 {data.hex().upper()}" for data in self.packets]
        lines += [entry.stf() for entry in self.late_entries]
        return "\n".join(lines) + "\n"

    def applied_tables(self) -> list[Table]:
        """The tables some statement applies (p4c leaves the others out of the BMv2 JSON
        and the P4Info: they are not declared, nor are their entries written)."""
        texts: list[str] = []

        def walk(stmts: list[Stmt]) -> None:
            for stmt in stmts:
                texts.append(stmt.text)
                for block in stmt.blocks:
                    walk(block)

        walk(self.ingress)
        return [t for t in self.tables if any(f"{t.name}.apply()" in x for x in texts)]

    # --- what the minimiser may remove --------------------------------------------------

    def lists(self) -> Iterator[list]:
        """Every list an item may be removed from (statements nested too)."""

        def walk(stmts: list[Stmt]) -> Iterator[list]:
            yield stmts
            for stmt in stmts:
                for block in stmt.blocks:
                    yield from walk(block)

        yield from walk(self.ingress)
        yield from walk(self.egress)
        for action in self.actions:
            yield from walk(action.body)
        yield self.entries
        yield self.packets
        yield self.late_entries

    def size(self) -> int:
        return sum(len(items) for items in self.lists())


# --------------------------------------------------------------------------- generation


class _Gen:
    def __init__(self, seed: int, features: Features) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.features = features
        self.in_action = False
        self.applied: set[str] = set()

    # --- layout -------------------------------------------------------------------------

    def header(self, name: str) -> Header:
        while True:
            total = self.rng.choice(HEADER_BYTES) * 8
            # the first field is 8 bits: select and stack-loop conditions read it
            fields: list[tuple[str, int]] = [("f0", 8)]
            left = total - 8
            while left > 0:
                width = min(left, self.rng.choice([1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 24, 32, 48]))
                fields.append((f"f{len(fields)}", width))
                left -= width
            if self.features.wide_headers or safe_runs(fields):
                return Header(name, fields)

    # --- expressions ----------------------------------------------------------------------

    def const(self, width: int) -> str:
        value = self.rng.choice([0, 1, (1 << width) - 1, self.rng.getrandbits(width)])
        return f"{width}w{value}"

    def leaf(self, width: int, pool: list[tuple[str, int]]) -> str:
        if self.rng.random() < 0.25 or not pool:
            return self.const(width)
        name, w = self.rng.choice(pool)
        if w == width:
            return name
        if w > width and self.rng.random() < 0.5:
            low = self.rng.randrange(w - width + 1)
            return f"{name}[{low + width - 1}:{low}]"
        return f"((bit<{width}>){name})"

    def expr(self, width: int, pool: list[tuple[str, int]], depth: int = 2) -> str:
        if depth == 0 or self.rng.random() < 0.3:
            return self.leaf(width, pool)
        kind = self.rng.randrange(8)
        a = self.expr(width, pool, depth - 1)
        if kind == 0:
            op = self.rng.choice(["+", "-", "*", "&", "|", "^", "|+|", "|-|"])
            return f"({a} {op} {self.expr(width, pool, depth - 1)})"
        if kind == 1:
            return f"(~{a})"
        if kind == 2:
            shift = self.rng.randrange(width)
            return f"({a} {self.rng.choice(['<<', '>>'])} {shift})"
        if kind == 3 and width >= 2:
            left = self.rng.randrange(1, width)
            return f"({self.expr(left, pool, depth - 1)} ++ {self.expr(width - left, pool, depth - 1)})"
        if kind == 4:
            return f"({self.cond(pool, depth - 1)} ? {a} : {self.expr(width, pool, depth - 1)})"
        if kind == 5:
            wider = min(64, width * 2)
            return f"((bit<{width}>)({self.expr(wider, pool, depth - 1)} + {self.const(wider)}))"
        return a

    def cond(self, pool: list[tuple[str, int]], depth: int = 1) -> str:
        kind = self.rng.randrange(5)
        if kind == 0:
            return self.rng.choice([f"hdr.{h}.isValid()" for h in self.header_names])
        width = self.rng.choice([w for _, w in pool] or [8])
        op = self.rng.choice(["==", "!=", "<", ">=", ">"])
        base = f"({self.expr(width, pool, depth)} {op} {self.expr(width, pool, 0)})"
        if kind == 1 and depth > 0:
            return f"({base} {self.rng.choice(['&&', '||'])} {self.cond(pool, 0)})"
        if kind == 2:
            return f"!{base}"
        return base

    # --- statements -------------------------------------------------------------------------

    def assign(self, targets: list[tuple[str, int]], pool: list[tuple[str, int]]) -> Stmt:
        name, width = self.rng.choice(targets)
        return Stmt(f"{name} = {self.expr(width, pool)};")

    def extern_stmt(self, targets: list[tuple[str, int]], pool: list[tuple[str, int]]) -> Stmt:
        kind = self.rng.randrange(4)
        if kind == 0 and self.registers:
            reg, width, size = self.rng.choice(self.registers)
            index = f"(bit<32>)({self.expr(8, pool, 1)} & {size - 1})"
            if self.features.register_out_of_range and self.rng.random() < 0.3:
                index = f"(bit<32>){self.expr(8, pool, 1)}"
            matching = [t for t in targets if t[1] == width] or [
                ("meta." + self.meta[0][0], self.meta[0][1])
            ]
            target, twidth = self.rng.choice(matching)
            if twidth != width:
                return Stmt(f"{reg}.write({index}, {self.expr(width, pool, 1)});")
            return Stmt(f"{reg}.read({target}, {index});")
        if kind == 1 and self.registers:
            reg, width, size = self.rng.choice(self.registers)
            index = f"(bit<32>)({self.expr(8, pool, 1)} & {size - 1})"
            return Stmt(f"{reg}.write({index}, {self.expr(width, pool, 1)});")
        if kind == 2:
            return Stmt(f"hits.count((bit<32>)({self.expr(8, pool, 1)} & 7));")
        target, width = self.rng.choice(targets)
        algo = self.rng.choice(["crc16", "crc32", "csum16", "identity", "xor16"])
        data = ", ".join(self.rng.choice(pool)[0] for _ in range(self.rng.randint(1, 3)))
        bound = self.rng.choice([0x10, 0x400, 0x10000])
        return Stmt(
            f"hash({target}, HashAlgorithm.{algo}, (bit<{width}>)0, {{ {data} }}, "
            f"(bit<32>){bound});"
        )

    def block(self, n: int, targets, pool, depth: int, in_apply: bool) -> list[Stmt]:
        return [self.stmt(targets, pool, depth, in_apply) for _ in range(n)]

    def stmt(self, targets, pool, depth: int, in_apply: bool) -> Stmt:
        """A statement; ``in_apply``: in ingress's apply block (tables, ``exit`` and externs
        there; externs also in actions, which have no ``if``: BMv2 cannot branch around an
        extern call in an action; egress, with depth 1 and no ``in_apply``, only assigns)."""
        roll = self.rng.random()
        unused = [t for t in self.tables if t.name not in self.applied]
        if in_apply and depth > 0 and roll < 0.3 and unused:
            table = self.rng.choice(unused)  # BMv2: a table is applied at most once
            self.applied.add(table.name)
            shape = self.rng.randrange(3)
            if shape == 0:
                return Stmt(f"{table.name}.apply();")
            if shape == 1:
                return Stmt(
                    f"if ({table.name}.apply().hit)\n{{}}\nelse\n{{}}",
                    [self.block(self.rng.randint(0, 2), targets, pool, depth - 1, in_apply),
                     self.block(self.rng.randint(0, 1), targets, pool, depth - 1, in_apply)],
                )  # fmt: skip
            cases = table.actions[: self.rng.randint(1, len(table.actions))]
            text = f"switch ({table.name}.apply().action_run) {{\n"
            text += "".join(f"    {name}:\n    {{}}\n" for name in cases)
            text += "    default:\n    {}\n}"
            blocks = [
                self.block(self.rng.randint(0, 2), targets, pool, depth - 1, in_apply)
                for _ in range(len(cases) + 1)
            ]
            return Stmt(text, blocks)
        if depth > 0 and roll < 0.45:
            guard = self.rng.choice([f"hdr.{self.h1}.isValid()", "hdr.stk[0].isValid()", None])
            inner_pool = pool + (self.h1_fields if guard and self.h1 in guard else [])
            inner_pool = inner_pool + (self.stk_fields if guard and "stk" in guard else [])
            inner_targets = targets + (self.h1_fields if guard and self.h1 in guard else [])
            cond = guard or self.cond(pool)
            return Stmt(
                f"if ({cond})\n{{}}\nelse\n{{}}",
                [self.block(self.rng.randint(1, 3), inner_targets, inner_pool, depth - 1, in_apply),
                 self.block(self.rng.randint(0, 2), targets, pool, depth - 1, in_apply)],
            )  # fmt: skip
        if in_apply and roll < 0.5:
            return Stmt(f"if ({self.cond(pool)}) {{ exit; }}")
        if roll < 0.65 and (in_apply or self.in_action):
            return self.extern_stmt(targets, pool)
        if roll < 0.7:
            return Stmt(f"sm.egress_spec = {self.rng.choice(PORTS)};")
        return self.assign(targets, pool)

    # --- the program ----------------------------------------------------------------------

    def program(self) -> FuzzProgram:
        rng = self.rng
        headers = [self.header("ha"), self.header("hb"), self.header("hc")]
        h0, h1, h2 = headers
        self.h1 = h1.name
        self.header_names = [h0.name, h1.name, "stk[0]", "stk[1]"]
        stack_size = rng.choice([2, 3])
        self.meta = [(f"m{i}", rng.choice([8, 16, 32])) for i in range(4)]
        meta_fields = [(f"meta.{n}", w) for n, w in self.meta]
        h0_fields = [(f"hdr.{h0.name}.{n}", w) for n, w in h0.fields]
        self.h1_fields = [(f"hdr.{h1.name}.{n}", w) for n, w in h1.fields]
        self.stk_fields = [(f"hdr.stk[0].{n}", w) for n, w in h2.fields]
        self.registers = [
            (f"r{i}", rng.choice([8, 16, 32]), rng.choice([4, 8])) for i in range(rng.randint(0, 2))
        ]
        pool = h0_fields + meta_fields
        targets = h0_fields[1:] + meta_fields  # f0 of ha stays: select reads it
        select_values = sorted(rng.sample(range(256), 2))
        lookahead_values = [rng.randrange(256)]
        self.tables = []
        actions: list[Action] = []
        for t in range(rng.randint(1, 3)):
            names = []
            for a in range(rng.randint(1, 3)):
                name = f"t{t}_a{a}"
                params = [(f"p{i}", rng.choice([8, 16, 9])) for i in range(rng.randint(0, 2))]
                ppool = pool + params
                self.in_action = True
                body = self.block(rng.randint(1, 3), targets, ppool, 0, False)
                self.in_action = False
                if rng.random() < 0.3:
                    body.append(
                        Stmt(
                            rng.choice(
                                ["mark_to_drop(sm);", f"sm.egress_spec = {rng.choice(PORTS)};"]
                            )
                        )
                    )
                actions.append(Action(name, params, body))
                names.append(name)
            keys = []
            kinds = ["exact", "ternary", "range", "lpm"]
            for _k in range(rng.randint(1, 2)):
                expr, width = rng.choice(pool)
                if any(expr == e for e, _, _ in keys):
                    continue
                lpm_ok = self.features.lpm_any_width or width % 8 == 0
                kind = rng.choice([k for k in kinds if k != "lpm" or lpm_ok])
                if kind == "lpm":
                    kinds.remove("lpm")
                keys.append((expr, width, kind))
            initial = (
                self.features.initial_entries
                and all(kind != "lpm" for _, _, kind in keys)
                and rng.random() < 0.3
            )
            self.tables.append(Table(f"t{t}", keys, names, initial))
        ingress = self.block(rng.randint(3, 7), targets, pool, 2, True)
        ingress += [Stmt(f"{t.name}.apply();") for t in self.tables if t.name not in self.applied]
        if self.features.exit_in_direct_action:
            target, width = rng.choice(targets)
            actions.append(
                Action("direct_exit", [("x", width)],
                       [Stmt(f"x = x + {self.const(width)};"), Stmt("exit;")], "inout ")
            )  # fmt: skip
            ingress.insert(
                rng.randrange(len(ingress) + 1),
                Stmt(
                    f"if ({self.cond(pool)})\n{{}}\nelse\n{{}}",
                    [[Stmt(f"direct_exit({target});")], []],
                ),
            )
        # metadata becomes visible in the packet
        for (mname, _mwidth), (fname, fwidth) in zip(meta_fields, h0_fields[1:]):
            if rng.random() < 0.6:
                ingress.append(Stmt(f"{fname} = (bit<{fwidth}>){mname};"))
        egress = self.block(rng.randint(0, 2), targets, pool, 1, False)
        program = FuzzProgram(
            self.seed, headers, stack_size, self.meta, select_values, lookahead_values,
            self.registers, actions, self.tables, ingress, egress, [], [],
        )  # fmt: skip
        program.packets = [self.packet(program) for _ in range(rng.randint(4, 8))]
        program.entries = self.entries(program, actions)
        late: list[Entry] = []
        if self.features.unapplied_table:
            name, width = self.meta[0]
            program.unapplied.append(Table("never", [(f"meta.{name}", width, "exact")], []))
            late.append(Entry("never", None, [f"meta.{name}:0x1"], "NoAction", []))
        for table in program.tables:
            if table.initial:
                late += [e for e in program.entries if e.table == table.name][:1]
        if late:
            program.late_entries = [rng.choice(late)]
        return program

    def packet(self, program: FuzzProgram) -> bytes:
        rng = self.rng
        h0, h1, h2 = program.headers
        bits: list[tuple[int, int]] = []

        def put(header: Header, first: int | None = None) -> None:
            for index, (_name, width) in enumerate(header.fields):
                value = first if index == 0 and first is not None else rng.getrandbits(width)
                bits.append((value, width))

        put(h0, rng.choice(program.select_values) if rng.random() < 0.6 else None)
        if bits[0][0] in program.select_values:
            put(h1)
        if rng.random() < 0.5:  # the stack: its first byte drives the loop
            for i in range(rng.randint(1, program.stack_size + 1)):
                first = program.lookahead_values[0] if i == 0 else rng.getrandbits(8)
                put(h2, first)
        payload = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 6)))
        value = 0
        total = 0
        for v, w in bits:
            value = (value << w) | v
            total += w
        return value.to_bytes(total // 8, "big") + payload

    def entries(self, program: FuzzProgram, actions: list[Action]) -> list[Entry]:
        rng = self.rng
        by_name = {a.name: a for a in actions}
        h0 = program.headers[0]
        offsets = {}
        at = 0
        for name, width in h0.fields:
            offsets[f"hdr.{h0.name}.{name}"] = (at, width)
            at += width
        out = []
        for table in program.tables:
            seen = set()
            for _ in range(rng.randint(0, 3)):
                keys = []
                for expr, width, kind in table.keys:
                    value = self.key_value(program, expr, width, offsets)
                    name = expr.removeprefix("hdr.")
                    if kind == "ternary":
                        mask = rng.choice([(1 << width) - 1, rng.getrandbits(width)])
                        keys.append(f"{name}:{value & mask:#x}&&&{mask:#x}")
                    elif kind == "lpm":
                        prefix = rng.randint(0, width)
                        # BMv2 counts the prefix over the key's whole bytes and wants its
                        # last bit 0 when the width is not a multiple of 8: prefix p keeps
                        # p - padding bits of the field (p4emu.p4rt.codec.lpm_padding).
                        # A prefix within the padding is left out: BMv2 holds several such
                        # entries (0/1, 0/2, ...), p4emu one (docs/conformance.md, "Other
                        # differences and limits")
                        pad = -width % 8
                        if 0 < prefix <= pad:
                            prefix = pad + 1 if pad < width else 0
                        kept = max(0, prefix - pad)
                        keep = ((1 << kept) - 1) << (width - kept)
                        keys.append(f"{name}:{value & keep:#x}/{prefix}")
                    else:
                        keys.append(f"{name}:{value:#x}")
                if tuple(keys) in seen or (table.keys and all(k.endswith("/0") for k in keys)):
                    continue
                seen.add(tuple(keys))
                action = by_name[rng.choice(table.actions)]
                args = [f"{n}:{self.param_value(w)}" for n, w in action.params]
                priority = rng.randint(1, 100) if table.needs_priority else None
                out.append(Entry(table.name, priority, keys, action.name, args))
        return out

    def key_value(self, program: FuzzProgram, expr: str, width: int, offsets) -> int:
        if expr in offsets and program.packets and self.rng.random() < 0.7:
            at, w = offsets[expr]
            data = int.from_bytes(
                self.rng.choice(program.packets)[: program.headers[0].bytes], "big"
            )
            return (data >> (program.headers[0].bytes * 8 - at - w)) & ((1 << w) - 1)
        return self.rng.choice([0, self.rng.getrandbits(width)])

    def param_value(self, width: int) -> int:
        if width == 9:
            return self.rng.choice(PORTS)
        return self.rng.getrandbits(width)


def generate(seed: int, features: Features | None = None) -> FuzzProgram:
    """The program of ``seed`` (the same seed gives the same program)."""
    return _Gen(seed, features or Features()).program()


# --------------------------------------------------------------------------- minimising


def minimise(
    program: FuzzProgram, diverges: Callable[[FuzzProgram], bool], budget: int = 200
) -> FuzzProgram:
    """A smaller program on which ``diverges`` still holds: passes over the items
    (statements, entries, packets) remove one at a time, keeping each removal that keeps
    the divergence, until a pass removes nothing (or ``budget`` checks were made)."""
    current = program
    checks = 0
    changed = True
    while changed and checks < budget:
        changed = False
        position = 0  # one pass over the items; a removal leaves the position on the next
        while checks < budget:
            paths = _item_paths(current)
            if position >= len(paths):
                break
            candidate = _without(current, paths[position])
            checks += 1
            if diverges(candidate):
                current = candidate
                changed = True
            else:
                position += 1
    return current


def _item_paths(program: FuzzProgram) -> list[tuple[int, int]]:
    """(list number, index) of every removable item, the largest lists' first."""
    return [(n, i) for n, items in enumerate(program.lists()) for i in range(len(items))]


def _without(program: FuzzProgram, path: tuple[int, int]) -> FuzzProgram:
    copy = _deep_copy(program)
    number, index = path
    for n, items in enumerate(copy.lists()):
        if n == number:
            del items[index]
            break
    return copy


def _deep_copy(program: FuzzProgram) -> FuzzProgram:
    def stmts(items: list[Stmt]) -> list[Stmt]:
        return [Stmt(s.text, [stmts(b) for b in s.blocks]) for s in items]

    return replace(
        program,
        actions=[
            Action(a.name, list(a.params), stmts(a.body), a.direction) for a in program.actions
        ],
        ingress=stmts(program.ingress),
        egress=stmts(program.egress),
        entries=list(program.entries),
        packets=list(program.packets),
    )


__all__ = ["Features", "FuzzProgram", "generate", "minimise"]
