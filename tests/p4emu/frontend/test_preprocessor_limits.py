"""The preprocessor's bounds (docs/conformance.md, "Compile limits"): macro expansion, include count and
include depth; each refusal names its limit, and comes before the work it bounds is done."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4emu.cli import main as p4emu_main
from p4emu.exceptions import P4SourceError
from p4emu.frontend import load_program, load_program_text
from p4emu.frontend import preprocessor as pp

# The kind of bomb (212 bytes here): every macro expands to ten of the one before,
# seven levels: 10^7 tokens.
MACRO_BOMB = (
    "".join(
        f"#define {name} {' '.join([below] * 10)}\n"
        for name, below in zip("ABCDEFG", ["x", *"ABCDEF"], strict=True)
    )
    + "G\n"
)
# The same growth through function-like macros and their arguments.
FUNCTION_BOMB = (
    "#define T(a) a a a a a a a a a a\n#define U(a) T(T(a))\n#define V(a) U(U(a))\nV(V(x))\n"
)


def include_bomb(directory: Path, levels: int = 18) -> Path:
    """f0 includes f1 twice, f1 includes f2 twice...: 2^levels includes."""
    directory.mkdir(parents=True, exist_ok=True)
    for level in range(levels):
        line = f'#include "f{level + 1}.p4"\n'
        (directory / f"f{level}.p4").write_text(line * 2, encoding="utf-8")
    (directory / f"f{levels}.p4").write_text("// leaf\n", encoding="utf-8")
    return directory / "f0.p4"


def test_the_303_byte_macro_bomb_is_refused_naming_the_limit() -> None:
    with pytest.raises(P4SourceError) as info:
        load_program_text(MACRO_BOMB, "bomb.p4")
    assert "MAX_MACRO_EXPANSION_TOKENS" in str(info.value)
    assert f"more than {pp.MAX_MACRO_EXPANSION_TOKENS} tokens" in str(info.value)


def test_function_like_macros_are_counted_as_they_are_built() -> None:
    with pytest.raises(P4SourceError, match="MAX_MACRO_EXPANSION_TOKENS"):
        load_program_text(FUNCTION_BOMB, "bomb.p4")


@pytest.mark.parametrize("limit", [50, 500, 5000])
def test_expansion_up_to_the_limit_is_allowed_and_one_more_token_is_not(
    monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    monkeypatch.setattr(pp, "MAX_MACRO_EXPANSION_TOKENS", limit)
    fits = "#define X y\n" + "X " * limit + "\n"
    tokens = pp.Preprocessor().run_text(fits).tokens
    assert sum(1 for token in tokens if token.text == "y") == limit
    with pytest.raises(P4SourceError, match="MAX_MACRO_EXPANSION_TOKENS"):
        pp.Preprocessor().run_text(fits + "X\n")


def test_the_include_bomb_is_refused_after_max_includes(tmp_path: Path) -> None:
    main = include_bomb(tmp_path / "bomb")
    with pytest.raises(P4SourceError) as info:
        load_program(main)
    assert f"more than {pp.MAX_INCLUDES} includes" in str(info.value)
    assert "MAX_INCLUDES" in str(info.value)


def test_includes_up_to_the_limit_are_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pp, "MAX_INCLUDES", 2**4 + 2**3 + 2**2 + 2)  # exactly what 4 levels read
    pp.Preprocessor().run_file(include_bomb(tmp_path / "four", levels=4))
    with pytest.raises(P4SourceError, match="MAX_INCLUDES"):
        pp.Preprocessor().run_file(include_bomb(tmp_path / "five", levels=5))


def test_a_self_include_stops_at_the_depth_limit(tmp_path: Path) -> None:
    main = tmp_path / "self.p4"
    main.write_text('#include "self.p4"\n', encoding="utf-8")
    with pytest.raises(P4SourceError, match="MAX_INCLUDE_DEPTH"):
        load_program(main)


@pytest.mark.parametrize("source", [MACRO_BOMB, FUNCTION_BOMB])
def test_p4emu_check_refuses_the_bombs_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str
) -> None:
    path = tmp_path / "bomb.p4"
    path.write_text(source, encoding="utf-8")
    assert p4emu_main(["check", str(path)]) == 2
    assert "MAX_MACRO_EXPANSION_TOKENS" in capsys.readouterr().err


def test_p4emu_check_refuses_the_include_bomb_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert p4emu_main(["check", str(include_bomb(tmp_path / "bomb"))]) == 2
    assert "MAX_INCLUDES" in capsys.readouterr().err
