"""Parser for p4c's STF ("simple test framework") packet-test files.

The grammar is that of p4c ``tools/stf/stf_parser.py`` extended by
``backends/bmv2/bmv2stf.py`` (BMv2 ``simple_switch_CLI`` pass-through commands), one
command per line, ``#`` starts a comment, keywords are case-insensitive::

    add TABLE [PRIORITY] KEY:VALUE... ACTION(ARG:VALUE, ...) [= HANDLE]
    setdefault TABLE ACTION(ARG:VALUE, ...)
    remove all
    packet PORT HEX...
    expect PORT [HEX-OR-*...] [$]        (no data: any packet on PORT; $: exact length)
    no_packet
    wait
    check_counter COUNTER(INDEX|HANDLE) [packets|bytes OP NUMBER]
    mirroring_add SESSION PORT      mirroring_add_mc SESSION GROUP
    mirroring_delete SESSION        mirroring_get SESSION
    mc_mgrp_create GROUP            mc_node_create RID PORT...
    mc_node_update NODE PORT...     mc_node_associate GROUP NODE
    counter_read NAME INDEX         counter_write NAME INDEX PACKETS BYTES
    register_read NAME INDEX        register_write NAME INDEX VALUE
    register_reset NAME
    meter_get_rates NAME INDEX      meter_set_rates NAME INDEX RATE:BURST RATE:BURST
    meter_array_set_rates NAME RATE:BURST RATE:BURST

A name (table, action, key field, argument, counter, register, meter, entry handle) is an
identifier with ``.`` parts and ``[N]`` stack indices, or, as p4c's STF lexer reads it,
anything but ``"`` between double quotes (``"MyIngress.t"``, ``"hdr.h.$valid$"``; P4Testgen
quotes every name); the two forms mix (``"MyIngress".t``). Of a direct meter,
``meter_set_rates`` / ``meter_get_rates`` take the entry instead of INDEX: a handle name
(``add ... = NAME``) or BMv2's entry handle (a number).

p4emu extensions: a ternary value may be written ``VALUE&&&MASK`` (besides hex/binary
digits with ``*`` wildcards), and ``check_register NAME(INDEX) OP NUMBER`` checks a
register cell (OP is one of ``== != < <= > >=``).

Values: decimal, ``0x`` hex, ``0b`` binary (hex/binary may contain ``*`` don't-care
digits). Key and argument names are kept as written (they may carry a control prefix,
``$valid$`` suffixes, ``[N]`` stack indices): resolving them against the program is the
runner's job. STF priorities are passed through unchanged: p4c's BMv2 runner maps them
so that a larger STF priority wins, the P4Runtime convention the table engine uses.

:func:`parse_stf` returns a list of typed commands, each with its 1-based ``line``; a bad
line raises :class:`~p4emu.stf.exceptions.StfSyntaxError` (``file:line:column: message``,
the column of the token at fault).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from p4emu.stf.exceptions import StfSyntaxError

# --- values ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StfNumber:
    """A literal as written: value with ``*`` digits as 0, and what the spelling implies.

    ``mask`` is the don't-care mask implied by ``*`` digits or an explicit ``&&&MASK``
    (None when neither was written); ``literal_bits`` is the number of bits the digits
    spell (4 per hex digit, 1 per binary digit; None for decimal).
    """

    text: str
    value: int
    mask: int | None = None
    literal_bits: int | None = None
    prefix_len: int | None = None

    def as_exact(self) -> int:
        return self.value

    def as_ternary(self, width: int) -> tuple[int, int]:
        """``(value, mask)`` for a ternary key of ``width`` bits, as p4c's BMv2 runner
        builds it (``makeMask``): an explicit ``&&&`` mask wins; otherwise each written
        hex/binary digit contributes all-ones (zero for ``*``) to the mask, so digits not
        written are don't-care; a decimal value matches the whole width exactly."""
        full = (1 << width) - 1
        if self.mask is not None:
            return self.value & full, self.mask & full
        if self.literal_bits is not None:
            return self.value & full, ((1 << self.literal_bits) - 1) & full
        return self.value & full, full

    def as_lpm(self, width: int) -> tuple[int, int]:
        """``(value, prefix_len)``: an explicit ``/len`` wins; otherwise the written
        digits that are not ``*`` times the bits per digit (p4c's ``makeLpm``); a decimal
        value is a full-width prefix."""
        if self.prefix_len is not None:
            return self.value, min(self.prefix_len, width)
        if self.literal_bits is None:
            return self.value, width
        digits = len(self.text) - 2
        bits_per_digit = self.literal_bits // digits if digits else 4
        wildcards = self.text.count("*")
        return self.value, min(width, (digits - wildcards) * bits_per_digit)


@dataclass(frozen=True)
class StfMatch:
    """``KEY:VALUE``: one key field of an ``add``, its name as written."""

    field: str
    value: StfNumber


@dataclass(frozen=True)
class StfArg:
    """``ARG:VALUE``: one action argument, its name as written."""

    name: str
    value: StfNumber


@dataclass(frozen=True)
class StfActionCall:
    """``ACTION(ARG:VALUE, ...)``: the action's name as written and its arguments."""

    name: str
    args: tuple[StfArg, ...] = ()


# --- commands ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StfCommand:
    """Base of the commands; ``line`` is the command's 1-based line in the file."""

    line: int


@dataclass(frozen=True)
class StfAdd(StfCommand):
    """``add TABLE [PRIORITY] KEY:VALUE... ACTION(...) [= HANDLE]``; ``priority`` and
    ``handle`` None when not written."""

    table: str
    priority: int | None
    matches: tuple[StfMatch, ...]
    action: StfActionCall
    handle: str | None = None


@dataclass(frozen=True)
class StfSetDefault(StfCommand):
    """``setdefault TABLE ACTION(...)``: set the table's default action."""

    table: str
    action: StfActionCall


@dataclass(frozen=True)
class StfRemoveAll(StfCommand):
    """``remove all``: delete every table entry."""


@dataclass(frozen=True)
class StfPacket(StfCommand):
    """``packet PORT HEX...``: send ``data`` into ingress port ``port``."""

    port: int
    data: bytes


@dataclass(frozen=True)
class StfExpect(StfCommand):
    """An expected output packet; ``pattern`` is upper-case hex nibbles with ``*`` wildcards,
    None meaning "any packet(s) on this port". ``exact``: the length must match too."""

    port: int
    pattern: str | None
    exact: bool = False

    def mismatch(self, data: bytes) -> str | None:
        """None if ``data`` matches, else why not (p4c ``comparePacket`` semantics)."""
        if self.pattern is None:
            return None
        received = data.hex().upper()
        if len(received) < len(self.pattern):
            return (
                f"received packet too short: {len(received) // 2} bytes, "
                f"expected {(len(self.pattern) + 1) // 2}"
            )
        if self.exact and len(received) != len(self.pattern):
            return (
                f"received packet has {len(received) // 2} bytes, expected exactly "
                f"{(len(self.pattern) + 1) // 2}"
            )
        for i, want in enumerate(self.pattern):
            if want != "*" and want != received[i]:
                return (
                    f"packet differs at nibble {i} (byte {i // 2}): expected {want}, "
                    f"received {received[i]}"
                )
        return None

    def matches(self, data: bytes) -> bool:
        return self.mismatch(data) is None


@dataclass(frozen=True)
class StfNoPacket(StfCommand):
    """``no_packet``: no packet may be output (p4c STF)."""


@dataclass(frozen=True)
class StfWait(StfCommand):
    """``wait``: let everything in flight drain before the next command."""


@dataclass(frozen=True)
class StfCheckCounter(StfCommand):
    """``check_counter NAME(INDEX) [TYPE OP VALUE]``; without a check written, p4c's
    parser yields ``count_type=None, op="==", value=0`` and so does this one."""

    counter: str
    index: int | str  # an int, or a handle name given with "add ... = NAME"
    count_type: str | None
    op: str
    value: int


@dataclass(frozen=True)
class StfCheckRegister(StfCommand):
    """``check_register NAME(INDEX) OP NUMBER`` (p4emu extension): compare a register cell."""

    register: str
    index: int
    op: str
    value: int


@dataclass(frozen=True)
class StfMirroringAdd(StfCommand):
    """``mirroring_add SESSION PORT``: a clone session to one port."""

    session: int
    port: int


@dataclass(frozen=True)
class StfMirroringAddMc(StfCommand):
    """``mirroring_add_mc SESSION GROUP``: a clone session to a multicast group."""

    session: int
    group: int


@dataclass(frozen=True)
class StfMirroringDelete(StfCommand):
    """``mirroring_delete SESSION``."""

    session: int


@dataclass(frozen=True)
class StfMirroringGet(StfCommand):
    """``mirroring_get SESSION``."""

    session: int


@dataclass(frozen=True)
class StfMcGroupCreate(StfCommand):
    """``mc_mgrp_create GROUP``."""

    group: int


@dataclass(frozen=True)
class StfMcNodeCreate(StfCommand):
    """``mc_node_create RID PORT...``."""

    rid: int
    ports: tuple[int, ...]


@dataclass(frozen=True)
class StfMcNodeUpdate(StfCommand):
    """``mc_node_update NODE PORT...``: replace a node's ports."""

    node: int
    ports: tuple[int, ...]


@dataclass(frozen=True)
class StfMcNodeAssociate(StfCommand):
    """``mc_node_associate GROUP NODE``."""

    group: int
    node: int


@dataclass(frozen=True)
class StfCounterRead(StfCommand):
    """``counter_read NAME INDEX``."""

    counter: str
    index: int


@dataclass(frozen=True)
class StfCounterWrite(StfCommand):
    """``counter_write NAME INDEX PACKETS BYTES``."""

    counter: str
    index: int
    packets: int
    bytes: int


@dataclass(frozen=True)
class StfRegisterRead(StfCommand):
    """``register_read NAME INDEX``."""

    register: str
    index: int


@dataclass(frozen=True)
class StfRegisterWrite(StfCommand):
    """``register_write NAME INDEX VALUE``."""

    register: str
    index: int
    value: int


@dataclass(frozen=True)
class StfRegisterReset(StfCommand):
    """``register_reset NAME``: every cell back to 0."""

    register: str


@dataclass(frozen=True)
class StfMeterRate:
    """A BMv2 CLI meter rate: ``rate`` in units per microsecond, ``burst`` in units."""

    rate: float
    burst: int


@dataclass(frozen=True)
class StfMeterGetRates(StfCommand):
    """``meter_get_rates NAME INDEX``; of a direct meter, ``index`` is the entry (module
    docstring)."""

    meter: str
    index: int | str  # a direct meter's entry: a handle name, or BMv2's entry handle


@dataclass(frozen=True)
class StfMeterSetRates(StfCommand):
    """``meter_set_rates NAME INDEX RATES``: ``index`` is a cell of a meter array; of a
    direct meter, the entry (a handle name from ``add ... = NAME``, or BMv2's entry
    handle: the number of entries added to the table before it); None for
    ``meter_array_set_rates`` (every cell)."""

    meter: str
    index: int | str | None
    rates: tuple[StfMeterRate, ...] = field(default_factory=tuple)


# --- lexer ------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<ternop>&&&)
  | (?P<op>==|!=|<=|>=|<|>)
  | (?P<number>0[xX][0-9a-fA-F*]+|0[bB][01*]+|[0-9]+(?:\.[0-9]+)?)
  | (?P<ident>[A-Za-z_$][A-Za-z0-9_$]*)
  | (?P<quoted>"[^"\n]*")
  | (?P<punct>[:,.\[\]()/=])
    """,
    re.VERBOSE,
)

_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


@dataclass
class _Tok:
    """One token of a command line: its kind (the token pattern's group name), text and
    column (1-based)."""

    kind: str
    text: str
    column: int = 0


class _Line:
    """Token cursor over one command line; errors name the column of the token at fault."""

    def __init__(self, text: str, file: str, lineno: int, column: int = 1) -> None:
        self.file = file
        self.lineno = lineno
        self.toks: list[_Tok] = []
        self.end_column = column + len(text)
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            where = column + pos
            if m is None:
                if text[pos] == '"':
                    self.fail("unterminated quoted name (no closing '\"')", where)
                self.fail(f"unexpected character {text[pos]!r}", where)
            kind = m.lastgroup
            assert kind is not None
            if kind == "quoted" and m.group() == '""':
                self.fail("empty quoted name", where)
            if kind != "ws":
                self.toks.append(_Tok(kind, m.group(), where))
            pos = m.end()
        self.pos = 0

    def fail(self, message: str, at: _Tok | int | None = None) -> NoReturn:
        """A syntax error at token or column ``at`` (default: the token under the cursor,
        or the end of the line)."""
        if isinstance(at, _Tok):
            column = at.column
        elif isinstance(at, int):
            column = at
        else:
            tok = self.peek()
            column = tok.column if tok is not None else self.end_column
        raise StfSyntaxError(self.file, self.lineno, message, column)

    def peek(self, offset: int = 0) -> _Tok | None:
        index = self.pos + offset
        return self.toks[index] if index < len(self.toks) else None

    def next(self, what: str) -> _Tok:
        tok = self.peek()
        if tok is None:
            self.fail(f"expected {what}, found end of line")
        self.pos += 1
        return tok

    def expect_punct(self, text: str) -> None:
        tok = self.next(f"'{text}'")
        if tok.text != text:
            self.fail(f"expected '{text}', found {tok.text!r}", tok)

    def accept_punct(self, text: str) -> bool:
        tok = self.peek()
        if tok is not None and tok.kind in ("punct", "ternop") and tok.text == text:
            self.pos += 1
            return True
        return False

    def at_end(self) -> bool:
        return self.pos >= len(self.toks)

    def end(self) -> None:
        tok = self.peek()
        if tok is not None:
            self.fail(f"unexpected {tok.text!r} at end of command", tok)

    def ident(self, what: str) -> str:
        """A name: an identifier, or anything but '"' between double quotes (p4c's STF
        lexer reads ``"MyIngress.t"`` as one identifier, dots and all)."""
        tok = self.next(what)
        if tok.kind == "quoted":
            return tok.text[1:-1]
        if tok.kind != "ident":
            self.fail(f"expected {what}, found {tok.text!r}", tok)
        return tok.text

    def qualified_name(self, what: str) -> str:
        parts = [self._name_part(what)]
        while self.accept_punct("."):
            parts.append(self._name_part(what))
        return ".".join(parts)

    def _name_part(self, what: str) -> str:
        name = self.ident(what)
        while self.accept_punct("["):
            tok = self.next("a stack index")
            if tok.kind != "number" or not tok.text.isdigit():
                self.fail(f"expected a stack index, found {tok.text!r}", tok)
            self.expect_punct("]")
            name += f"[{tok.text}]"
        return name

    def number(self, what: str) -> StfNumber:
        tok = self.next(what)
        if tok.kind != "number":
            self.fail(f"expected {what}, found {tok.text!r}", tok)
        return _parse_number(tok.text, self)

    def integer(self, what: str) -> int:
        tok = self.peek()
        num = self.number(what)
        if num.mask is not None or "." in num.text:
            self.fail(f"expected {what} without wildcards, found {num.text!r}", tok)
        return num.value

    def comparison(self) -> str:
        tok = self.next("a comparison (== != < <= > >=)")
        if tok.kind != "op":
            self.fail(f"expected a comparison (== != < <= > >=), found {tok.text!r}", tok)
        return tok.text


def _parse_number(text: str, line: _Line) -> StfNumber:
    if "." in text:
        return StfNumber(text, 0)  # only meaningful to meter rates; read via float(text)
    lower = text.lower()
    if lower.startswith("0x") or lower.startswith("0b"):
        digits = text[2:]
        bits_per_digit = 4 if lower.startswith("0x") else 1
        base = 16 if bits_per_digit == 4 else 2
        if "*" in digits:
            value = int(digits.replace("*", "0"), base)
            mask_digit = "f" if base == 16 else "1"
            mask = int("".join("0" if c == "*" else mask_digit for c in digits), base)
        else:
            value = int(digits, base)
            mask = None
        return StfNumber(text, value, mask, bits_per_digit * len(digits))
    return StfNumber(text, int(text))


# --- parser -----------------------------------------------------------------------------


def parse_stf(text: str, file: str = "<stf>") -> list[StfCommand]:
    """Parse STF source text; ``file`` is used in error messages."""
    commands: list[StfCommand] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        content = _strip_comment(raw)
        if not content.strip():
            continue
        commands.append(_parse_line(content, file, lineno))
    return commands


def _strip_comment(raw: str) -> str:
    """``raw`` up to a ``#`` that is not inside a quoted name."""
    quoted = False
    for index, char in enumerate(raw):
        if char == '"':
            quoted = not quoted
        elif char == "#" and not quoted:
            return raw[:index]
    return raw


def parse_stf_file(path: str | Path) -> list[StfCommand]:
    """Parse an STF file (errors name the file)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StfSyntaxError(str(path), 0, f"cannot read STF file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise StfSyntaxError(str(path), 0, "STF file is not UTF-8 text") from None
    return parse_stf(text, str(path))


_WORD = re.compile(r"\S+")


def _parse_line(content: str, file: str, lineno: int) -> StfCommand:
    first = _WORD.search(content)
    assert first is not None
    keyword = first.group().lower()
    rest_at = first.end()
    # packet data has its own lexical rules (bare hex digits)
    if keyword in ("packet", "expect"):
        return _parse_packet_line(keyword, content, rest_at, file, lineno)
    handler = _HANDLERS.get(keyword)
    if handler is None:
        raise StfSyntaxError(
            file, lineno, f"unknown STF command {first.group()!r}", first.start() + 1
        )
    line = _Line(content[rest_at:], file, lineno, rest_at + 1)
    command = handler(line, lineno)
    line.end()
    return command


def _parse_packet_line(
    keyword: str, content: str, rest_at: int, file: str, lineno: int
) -> StfPacket | StfExpect:
    """``packet PORT HEX...`` or ``expect PORT [HEX-OR-*...] [$]``."""

    def fail(message: str, column: int) -> NoReturn:
        raise StfSyntaxError(file, lineno, f"{keyword}: {message}", column)

    port_match = _WORD.search(content, rest_at)
    if port_match is None:
        fail("missing port", len(content) + 1)
    if not port_match.group().isdigit():
        fail(
            f"expected a decimal port number, found {port_match.group()!r}", port_match.start() + 1
        )
    port = int(port_match.group())
    allowed = "0123456789abcdefABCDEF" + ("*$" if keyword == "expect" else "")
    digits: list[str] = []
    dollar_at = None
    for index in range(port_match.end(), len(content)):
        char = content[index]
        if char.isspace():
            continue
        if char not in allowed or dollar_at is not None:
            if dollar_at is not None:
                fail(f"unexpected {char!r} after '$' (it ends the packet data)", index + 1)
            fail(f"invalid packet data character {char!r}", index + 1)
        if char == "$":
            dollar_at = index + 1
            continue
        digits.append(char)
    data = "".join(digits)
    if keyword == "packet":
        if not data:
            fail("missing packet data", len(content) + 1)
        if len(data) % 2:
            fail(f"odd number of hex digits ({len(data)})", port_match.end() + 1)
        return StfPacket(lineno, port, bytes.fromhex(data))
    if not data:
        if dollar_at is not None:
            fail("'$' needs packet data before it", dollar_at)
        return StfExpect(lineno, port, None, False)
    return StfExpect(lineno, port, data.upper(), dollar_at is not None)


def _value(line: _Line, what: str) -> StfNumber:
    """A match value: number [/ prefix] or number &&& mask."""
    num = line.number(what)
    if "." in num.text:
        line.fail(f"expected {what}, found {num.text!r}")
    if line.accept_punct("/"):
        prefix = line.integer("a prefix length")
        return StfNumber(num.text + f"/{prefix}", num.value, num.mask, num.literal_bits, prefix)
    if line.accept_punct("&&&"):
        mask = line.integer("a ternary mask")
        return StfNumber(f"{num.text}&&&{mask:#x}", num.value, mask, num.literal_bits)
    return num


def _action(line: _Line) -> StfActionCall:
    name = line.qualified_name("an action name")
    line.expect_punct("(")
    args: list[StfArg] = []
    if not line.accept_punct(")"):
        while True:
            arg_name = line.ident("an action argument name")
            line.expect_punct(":")
            args.append(StfArg(arg_name, _value(line, f"a value for argument {arg_name}")))
            if line.accept_punct(")"):
                break
            line.expect_punct(",")
    return StfActionCall(name, tuple(args))


def _cmd_add(line: _Line, lineno: int) -> StfAdd:
    table = line.qualified_name("a table name")
    priority = None
    tok = line.peek()
    if tok is not None and tok.kind == "number":
        priority = line.integer("a priority")
    matches: list[StfMatch] = []
    while True:
        if line.at_end():
            line.fail("add: missing action call")
        # look ahead: NAME '(' starts the action, NAME ':' a key
        start = line.pos
        name = line.qualified_name("a key field or action name")
        if line.accept_punct(":"):
            matches.append(StfMatch(name, _value(line, f"a value for key {name}")))
            continue
        line.pos = start
        action = _action(line)
        break
    handle = None
    if line.accept_punct("="):
        handle = line.ident("an entry handle name")
    if not matches:
        line.fail("add: no key fields before the action")
    return StfAdd(lineno, table, priority, tuple(matches), action, handle)


def _cmd_setdefault(line: _Line, lineno: int) -> StfSetDefault:
    table = line.qualified_name("a table name")
    return StfSetDefault(lineno, table, _action(line))


def _cmd_remove(line: _Line, lineno: int) -> StfRemoveAll:
    word = line.ident("'all'")
    if word.lower() != "all":
        line.fail(f"only 'remove all' is supported, found 'remove {word}'")
    return StfRemoveAll(lineno)


def _index_or_handle(line: _Line, what: str) -> int | str:
    """A cell index, or the handle name of an entry (``add ... = NAME``)."""
    tok = line.peek()
    if tok is not None and tok.kind in ("ident", "quoted"):
        return line.ident("a handle")
    return line.integer(what)


def _cmd_check_counter(line: _Line, lineno: int) -> StfCheckCounter:
    name = line.qualified_name("a counter name")
    line.expect_punct("(")
    index = _index_or_handle(line, "a counter index")
    line.expect_punct(")")
    if line.at_end():
        return StfCheckCounter(lineno, name, index, None, "==", 0)
    kind = line.ident("'packets' or 'bytes'").lower()
    if kind not in ("packets", "bytes"):
        line.fail(f"expected 'packets' or 'bytes', found {kind!r}")
    op = line.comparison()
    return StfCheckCounter(lineno, name, index, kind, op, line.integer("a count"))


def _cmd_check_register(line: _Line, lineno: int) -> StfCheckRegister:
    name = line.qualified_name("a register name")
    line.expect_punct("(")
    index = line.integer("a register index")
    line.expect_punct(")")
    op = line.comparison()
    return StfCheckRegister(lineno, name, index, op, line.integer("a value"))


def _ports(line: _Line) -> tuple[int, ...]:
    ports = []
    while not line.at_end():
        ports.append(line.integer("a port"))
    if not ports:
        line.fail("expected at least one port")
    return tuple(ports)


def _meter_rates(line: _Line) -> tuple[StfMeterRate, ...]:
    rates = []
    while not line.at_end():
        rate_tok = line.next("a rate")
        if rate_tok.kind != "number" or "*" in rate_tok.text:
            line.fail(f"expected a rate, found {rate_tok.text!r}")
        if "." in rate_tok.text:
            rate = float(rate_tok.text)
        else:
            rate = float(_parse_number(rate_tok.text, line).value)
        line.expect_punct(":")
        rates.append(StfMeterRate(rate, line.integer("a burst size")))
    if not rates:
        line.fail("expected RATE:BURST pairs")
    return tuple(rates)


# The BMv2 CLI commands and the bare ones are a fixed sequence of arguments: each is read by
# one of these, in order, and the command built from them.
Reader = Callable[[_Line], object]
Handler = Callable[[_Line, int], StfCommand]


def _int(what: str) -> Reader:
    return lambda line: line.integer(what)


def _name(what: str) -> Reader:
    return lambda line: line.qualified_name(what)


def _fixed(command: Callable[..., StfCommand], *readers: Reader) -> Handler:
    """The handler of a command made of ``readers``' arguments, in order."""

    def handler(line: _Line, lineno: int) -> StfCommand:
        return command(lineno, *[read(line) for read in readers])

    return handler


_SESSION = _int("a session id")
_INDEX = _int("an index")


def _index_or_entry(line: _Line) -> int | str:
    return _index_or_handle(line, "an index or entry handle")


_HANDLERS: dict[str, Handler] = {
    "add": _cmd_add,
    "setdefault": _cmd_setdefault,
    "remove": _cmd_remove,
    "no_packet": _fixed(StfNoPacket),
    "wait": _fixed(StfWait),
    "check_counter": _cmd_check_counter,
    "check_register": _cmd_check_register,
    "mirroring_add": _fixed(StfMirroringAdd, _SESSION, _int("a port")),
    "mirroring_add_mc": _fixed(StfMirroringAddMc, _SESSION, _int("a group id")),
    "mirroring_delete": _fixed(StfMirroringDelete, _SESSION),
    "mirroring_get": _fixed(StfMirroringGet, _SESSION),
    "mc_mgrp_create": _fixed(StfMcGroupCreate, _int("a multicast group id")),
    "mc_node_create": _fixed(StfMcNodeCreate, _int("a replication id"), _ports),
    "mc_node_update": _fixed(StfMcNodeUpdate, _int("a node handle"), _ports),
    "mc_node_associate": _fixed(StfMcNodeAssociate, _int("a group id"), _int("a node handle")),
    "counter_read": _fixed(StfCounterRead, _name("a counter name"), _INDEX),
    "counter_write": _fixed(
        StfCounterWrite,
        _name("a counter name"),
        _INDEX,
        _int("a packet count"),
        _int("a byte count"),
    ),
    "register_read": _fixed(StfRegisterRead, _name("a register name"), _INDEX),
    "register_write": _fixed(StfRegisterWrite, _name("a register name"), _INDEX, _int("a value")),
    "register_reset": _fixed(StfRegisterReset, _name("a register name")),
    "meter_get_rates": _fixed(StfMeterGetRates, _name("a meter name"), _index_or_entry),
    "meter_set_rates": _fixed(
        StfMeterSetRates, _name("a meter name"), _index_or_entry, _meter_rates
    ),
    "meter_array_set_rates": _fixed(
        StfMeterSetRates, _name("a meter name"), lambda line: None, _meter_rates
    ),
}
