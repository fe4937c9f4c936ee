"""Lexer: literals, keywords, punctuation, comments and lexical errors."""

from __future__ import annotations

import pytest

from p4emu.frontend.lexer import IDENT, INT, STRING, LexError, lex_text


def kinds(text: str) -> list[str]:
    return [token.kind for token in lex_text(text)]


def int_value(text: str) -> tuple[int, int | None, bool]:
    (token,) = lex_text(text)
    assert token.kind == INT
    return token.value  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("42", (42, None, False)),
        ("0x2A", (42, None, False)),
        ("0X2a", (42, None, False)),
        ("0b101010", (42, None, False)),
        ("0o52", (42, None, False)),
        ("0d42", (42, None, False)),
        ("1_000_000", (1000000, None, False)),
        ("0xFF_FF", (65535, None, False)),
        ("8w5", (5, 8, False)),
        ("16w0x800", (0x800, 16, False)),
        ("32w0b1_0", (2, 32, False)),
        ("8s5", (5, 8, True)),
        ("16s-1", (-1, 16, True)),
        ("4w0o17", (15, 4, False)),
    ],
)
def test_integer_literals(text: str, expected: tuple[int, int | None, bool]) -> None:
    assert int_value(text) == expected


def test_keywords_and_identifiers() -> None:
    tokens = lex_text("header foo_t apply key actions table _x")
    assert [t.kind for t in tokens] == ["header", IDENT, "apply", IDENT, IDENT, "table", IDENT]


def test_longest_match_punctuation() -> None:
    assert kinds("a &&& b |+| c |-| d ++ e .. f && g || h << i <= j") == [
        IDENT, "&&&", IDENT, "|+|", IDENT, "|-|", IDENT, "++", IDENT, "..", IDENT, "&&",
        IDENT, "||", IDENT, "<<", IDENT, "<=", IDENT,
    ]  # fmt: skip


def test_right_angle_brackets_are_separate_tokens() -> None:
    tokens = lex_text("register<bit<32>>(1)")
    assert [t.kind for t in tokens][5:7] == [">", ">"]
    assert not tokens[6].space_before


def test_string_literal_escapes() -> None:
    (token,) = lex_text(r'"a\"b\n"')
    assert token.kind == STRING
    assert token.value == 'a"b\n'


def test_comments_are_skipped_and_columns_tracked() -> None:
    tokens = lex_text("a /* x\n y */ b // c\n  d")
    assert [(t.text, t.loc.line, t.loc.column) for t in tokens] == [
        ("a", 1, 1),
        ("b", 2, 7),
        ("d", 3, 3),
    ]


def test_unterminated_comment() -> None:
    with pytest.raises(LexError) as info:
        lex_text("a\n  /* never closed\n")
    assert (info.value.loc.line, info.value.loc.column, info.value.message) == (
        2,
        3,
        "unterminated comment",
    )


def test_unterminated_string() -> None:
    with pytest.raises(LexError) as info:
        lex_text('x = "abc')
    assert (info.value.loc.column, info.value.message) == (5, "unterminated string literal")


def test_unexpected_character() -> None:
    with pytest.raises(LexError) as info:
        lex_text("a $ b")
    assert (info.value.loc.column, info.value.message) == (3, "unexpected character '$'")


def test_invalid_digit() -> None:
    with pytest.raises(LexError) as info:
        lex_text("0b102")
    assert info.value.message == "invalid digit '2' in integer literal"


def test_zero_width_literal_rejected() -> None:
    with pytest.raises(LexError) as info:
        lex_text("0w1")
    assert info.value.message == "integer literal width must be positive: '0w1'"
