"""P4_16 tokens and a line-oriented lexer.

The preprocessor feeds the lexer one logical line at a time (carrying the "inside a block
comment" state between lines) so that every token keeps the location of its original
file, line and column, and so that directives can be recognised at line starts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from p4emu.frontend.source import SourceLocation

KEYWORDS = frozenset(
    {
        "abstract", "action", "apply", "bit", "bool", "const", "control", "default", "else",
        "enum", "error", "exit", "extern", "false", "header", "header_union", "if", "in",
        "inout", "int", "match_kind", "out", "package", "parser", "return", "select", "state",
        "string", "struct", "switch", "table", "transition", "true", "tuple", "type",
        "typedef", "value_set", "varbit", "void", "list", "this", "for", "break", "continue",
    }
)  # fmt: skip
"""Reserved words. ``key``, ``actions``, ``entries``, ``priority`` are contextual."""

# Longest first so that maximal munch works with a simple prefix scan.
PUNCTUATORS = (
    "&&&", "|+|", "|-|",
    "<<", "<=", ">=", "==", "!=", "&&", "||", "++", "..", "##",
    "+", "-", "*", "/", "%", "&", "|", "^", "~", "!", "?", ":", ";", ",", ".", "=",
    "(", ")", "{", "}", "[", "]", "<", ">", "@", "#",
)  # fmt: skip

IDENT = "IDENT"
INT = "INT"
STRING = "STRING"
EOF = "EOF"


@dataclass(frozen=True, slots=True)
class Token:
    """A token. ``kind`` is IDENT, INT, STRING, EOF, a keyword or a punctuator string.

    For INT tokens ``value`` is ``(value, width or None, signed)``; for STRING the decoded
    text. ``space_before`` tells whether whitespace preceded the token (to glue ``>`` ``>``
    into a shift and to stringize macro arguments).
    """

    kind: str
    text: str
    loc: SourceLocation
    value: object = None
    space_before: bool = False

    def at(self, loc: SourceLocation) -> Token:
        return replace(self, loc=loc)

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.text!r}, {self.loc})"


class LexError(Exception):
    """Raised with a location; converted to P4SourceError by callers."""

    def __init__(self, loc: SourceLocation, message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message


@dataclass
class LexState:
    """Carries an open block comment across lines (``comment_start`` for error messages)."""

    comment_start: SourceLocation | None = None


_DIGITS = {
    "x": (16, "0123456789abcdefABCDEF_"),
    "b": (2, "01_"),
    "o": (8, "01234567_"),
    "d": (10, "0123456789_"),
}


def _is_ident_start(char: str) -> bool:
    return char.isalpha() or char == "_"


def _is_ident_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _scan_unsigned(text: str, pos: int, loc: SourceLocation) -> tuple[int, int]:
    """Scan an unsigned integer (with optional 0x/0b/0o/0d prefix); return (value, end)."""
    base, allowed = 10, "0123456789_"
    start = pos
    if text.startswith("0", pos) and pos + 1 < len(text) and text[pos + 1].lower() in _DIGITS:
        base, allowed = _DIGITS[text[pos + 1].lower()]
        pos += 2
        start = pos
    while pos < len(text) and (text[pos] in allowed):
        pos += 1
    digits = text[start:pos].replace("_", "")
    if not digits:
        raise LexError(loc, f"malformed integer literal '{text[start - 2 : pos + 1]}'")
    if pos < len(text) and _is_ident_char(text[pos]):
        raise LexError(loc, f"invalid digit '{text[pos]}' in integer literal")
    return int(digits, base), pos


def _scan_number(text: str, pos: int, loc: SourceLocation) -> tuple[Token, int]:
    start = pos
    width_end = pos
    while width_end < len(text) and text[width_end].isdigit():
        width_end += 1
    # Width-prefixed literal: 8w5, 16s0x1F, 8s-1
    if (
        width_end < len(text)
        and text[width_end] in "ws"
        and width_end + 1 < len(text)
        and (text[width_end + 1].isdigit() or text[width_end + 1] == "-")
        and not text[start:width_end].startswith("0x")
    ):
        width = int(text[start:width_end])
        signed = text[width_end] == "s"
        pos = width_end + 1
        negative = False
        if text[pos] == "-":
            negative = True
            pos += 1
            if pos >= len(text) or not text[pos].isdigit():
                raise LexError(loc, "malformed integer literal")
        value, pos = _scan_unsigned(text, pos, loc)
        if negative:
            value = -value
        if width <= 0 and not (width == 0 and value == 0):
            raise LexError(loc, f"integer literal width must be positive: '{text[start:pos]}'")
        return Token(INT, text[start:pos], loc, (value, width, signed)), pos
    value, pos = _scan_unsigned(text, start, loc)
    return Token(INT, text[start:pos], loc, (value, None, False)), pos


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "0": "\0", "'": "'"}


def _scan_string(text: str, pos: int, loc: SourceLocation) -> tuple[Token, int]:
    start = pos
    pos += 1
    chars: list[str] = []
    while pos < len(text):
        char = text[pos]
        if char == '"':
            return Token(STRING, text[start : pos + 1], loc, "".join(chars)), pos + 1
        if char == "\\" and pos + 1 < len(text):
            chars.append(_ESCAPES.get(text[pos + 1], text[pos + 1]))
            pos += 2
            continue
        chars.append(char)
        pos += 1
    raise LexError(loc, "unterminated string literal")


def lex_line(text: str, file: str, line: int, state: LexState) -> list[Token]:
    """Tokenize one line (column = index + 1), continuing an open block comment."""
    tokens: list[Token] = []
    pos = 0
    space_before = True
    length = len(text)

    def location(index: int) -> SourceLocation:
        return SourceLocation(file, line, index + 1)

    while pos < length:
        if state.comment_start is not None:
            end = text.find("*/", pos)
            if end < 0:
                return tokens
            pos = end + 2
            state.comment_start = None
            space_before = True
            continue
        char = text[pos]
        if char in " \t\r\f\v\n":
            pos += 1
            space_before = True
            continue
        if text.startswith("//", pos):
            break
        if text.startswith("/*", pos):
            state.comment_start = location(pos)
            pos += 2
            space_before = True
            continue
        loc = location(pos)
        if _is_ident_start(char):
            end = pos + 1
            while end < length and _is_ident_char(text[end]):
                end += 1
            word = text[pos:end]
            kind = word if word in KEYWORDS else IDENT
            tokens.append(Token(kind, word, loc, None, space_before))
            pos = end
        elif char.isdigit():
            token, pos = _scan_number(text, pos, loc)
            tokens.append(replace(token, space_before=space_before))
        elif char == '"':
            token, pos = _scan_string(text, pos, loc)
            tokens.append(replace(token, space_before=space_before))
        else:
            for punct in PUNCTUATORS:
                if text.startswith(punct, pos):
                    tokens.append(Token(punct, punct, loc, None, space_before))
                    pos += len(punct)
                    break
            else:
                raise LexError(loc, f"unexpected character '{char}'")
        space_before = False
    return tokens


def lex_text(text: str, file: str = "<string>") -> list[Token]:
    """Tokenize a whole text without preprocessing (used for directive bodies and tests)."""
    state = LexState()
    tokens: list[Token] = []
    for number, line in enumerate(text.split("\n"), start=1):
        tokens.extend(lex_line(line, file, number, state))
    if state.comment_start is not None:
        raise LexError(state.comment_start, "unterminated comment")
    return tokens
