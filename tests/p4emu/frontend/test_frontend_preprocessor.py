"""Preprocessor: includes, macros, conditionals and location tracking."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4emu.exceptions import P4SourceError
from p4emu.frontend.lexer import EOF
from p4emu.frontend.preprocessor import BUILTIN_INCLUDE_DIR, Preprocessor


def texts(source: str, **defines: str) -> list[str]:
    result = Preprocessor((), defines).run_text(source, "t.p4")
    return [token.text for token in result.tokens if token.kind != EOF]


def pp_error(source: str, filename: str = "t.p4", include_dirs: tuple[Path, ...] = ()) -> str:
    with pytest.raises(P4SourceError) as info:
        Preprocessor(include_dirs).run_text(source, filename)
    return str(info.value)


def test_object_like_macro() -> None:
    assert texts("#define N 8\nbit<N> x;") == ["bit", "<", "8", ">", "x", ";"]


def test_function_like_macro_with_nested_parentheses() -> None:
    source = "#define ADD(a, b) ((a) + (b))\nx = ADD(f(1, 2), 3);"
    assert "".join(texts(source)) == "x=((f(1,2))+(3));"


def test_function_like_macro_spanning_lines() -> None:
    source = "#define PAIR(a, b) a b\nPAIR(x,\n     y)"
    assert texts(source) == ["x", "y"]


def test_function_macro_name_without_parentheses_is_not_expanded() -> None:
    assert texts("#define F(x) x\nF;") == ["F", ";"]


def test_macro_recursion_is_stopped() -> None:
    assert texts("#define A B\n#define B A\nA") == ["A"]


def test_macro_result_is_rescanned_with_following_tokens() -> None:
    assert texts("#define F(x) [x]\n#define G F\nG(1)") == ["[", "1", "]"]


def test_stringize_and_paste() -> None:
    source = "#define S(x) #x\n#define CAT(a, b) a ## b\nS(hello world) CAT(foo, _bar)"
    assert texts(source) == ['"hello world"', "foo_bar"]


def test_variadic_macro() -> None:
    assert "".join(texts("#define CALL(f, ...) f(__VA_ARGS__)\nCALL(g, 1, 2)")) == "g(1,2)"


def test_undef() -> None:
    assert texts("#define X 1\n#undef X\nX") == ["X"]


def test_command_line_defines() -> None:
    assert texts("#ifdef FAST\nfast\n#else\nslow\n#endif\nWIDTH", FAST="1", WIDTH="16") == [
        "fast",
        "16",
    ]


@pytest.mark.parametrize(
    ("condition", "taken"),
    [
        ("1", True),
        ("0", False),
        ("2 * 3 == 6", True),
        ("(1 << 4) > 15 && !0", True),
        ("defined(A)", True),
        ("defined A && A >= 3", True),
        ("defined(B)", False),
        ("UNDEFINED_NAME", False),
        ("A == 3 ? 0 : 1", False),
        ("-1 < 0", True),
        ("7 / 2 == 3 && 7 % 2 == 1", True),
    ],
)
def test_if_expressions(condition: str, taken: bool) -> None:
    source = f"#define A 3\n#if {condition}\nyes\n#else\nno\n#endif"
    assert texts(source) == (["yes"] if taken else ["no"])


def test_nested_conditionals_and_elif() -> None:
    source = """
#define V 2
#if V == 1
one
#elif V == 2
  #ifdef MISSING
    wrong
  #else
    two
    #if 0
      also wrong
    #endif
  #endif
#elif V == 2
duplicate
#else
other
#endif
"""
    assert texts(source) == ["two"]


def test_skipped_region_may_contain_anything() -> None:
    source = "#if 0\nit's not P4 $ @@ \"\n#endif\nok"
    assert texts(source) == ["ok"]


def test_comment_spanning_a_skipped_endif() -> None:
    source = "#if 1\na\n/*\n#endif\n*/\n#endif\nb"
    assert texts(source) == ["a", "b"]


def test_include_guards(tmp_path: Path) -> None:
    (tmp_path / "h.p4").write_text("#ifndef H\n#define H\nconst bit<8> K = 1;\n#endif\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "h.p4"\n#include "h.p4"\n')
    tokens = Preprocessor().run_file(main).tokens
    assert [t.text for t in tokens].count("K") == 1


def test_pragma_once(tmp_path: Path) -> None:
    (tmp_path / "h.p4").write_text("#pragma once\nx\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "h.p4"\n#include "h.p4"\n')
    assert [t.text for t in Preprocessor().run_file(main).tokens if t.kind != EOF] == ["x"]


def test_include_relative_to_including_file_and_include_dirs(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "sub" / "a.p4").write_text('#include "b.p4"\na\n')
    (tmp_path / "sub" / "b.p4").write_text("b\n")
    (tmp_path / "lib" / "c.p4").write_text("c\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "sub/a.p4"\n#include <c.p4>\n')
    result = Preprocessor([tmp_path / "lib"]).run_file(main)
    assert [t.text for t in result.tokens if t.kind != EOF] == ["b", "a", "c"]
    assert any(f.endswith("b.p4") for f in result.files)


def test_angle_includes_resolve_to_p4emu_copies() -> None:
    result = Preprocessor().run_text("#include <core.p4>\n#include <v1model.p4>\n", "t.p4")
    assert str(BUILTIN_INCLUDE_DIR / "core.p4") in result.files
    assert str(BUILTIN_INCLUDE_DIR / "v1model.p4") in result.files


def test_locations_point_into_original_files(tmp_path: Path) -> None:
    (tmp_path / "inc.p4").write_text("\n\n   inner\n")
    main = tmp_path / "main.p4"
    main.write_text('#define M expanded\n#include "inc.p4"\n  M after\n')
    tokens = [t for t in Preprocessor().run_file(main).tokens if t.kind != EOF]
    where = [(Path(t.loc.file).name, t.loc.line, t.loc.column, t.text) for t in tokens]
    assert where == [
        ("inc.p4", 3, 4, "inner"),
        ("main.p4", 3, 3, "expanded"),
        ("main.p4", 3, 5, "after"),
    ]


def test_line_directive() -> None:
    tokens = Preprocessor().run_text('a\n#line 100 "orig.p4"\nb\n# 7 "x.p4"\nc', "t.p4").tokens
    assert [(t.loc.file, t.loc.line) for t in tokens[:3]] == [
        ("t.p4", 1),
        ("orig.p4", 100),
        ("x.p4", 7),
    ]


def test_line_and_file_builtins() -> None:
    assert texts("\n__LINE__ __FILE__") == ["2", '"t.p4"']


def test_predefined_target_macros() -> None:
    assert texts("#if defined(__TARGET_BMV2__) && __p4emu__\nyes\n#endif") == ["yes"]


def test_missing_include_error() -> None:
    assert (
        pp_error('x\n  #include "nothere.p4"\n')
        == 't.p4:2:3: error: include file not found: "nothere.p4"'
    )


def test_missing_angle_include_error() -> None:
    assert (
        pp_error("#include <nothere.p4>\n")
        == "t.p4:1:1: error: include file not found: <nothere.p4>"
    )


def test_unterminated_comment_error() -> None:
    assert pp_error("a\nb /* open\nc\n") == "t.p4:2:3: error: unterminated comment"


def test_unterminated_if_error() -> None:
    assert (
        pp_error("#ifdef X\n#if 1\n#endif\n")
        == "t.p4:1:1: error: unterminated conditional directive (missing #endif)"
    )


def test_else_without_if_error() -> None:
    assert pp_error("a\n#else\n") == "t.p4:2:1: error: #else without #if"


def test_elif_after_else_error() -> None:
    assert pp_error("#if 1\n#else\n#elif 1\n#endif\n") == "t.p4:3:1: error: #elif after #else"


def test_error_directive() -> None:
    assert pp_error("#if 1\n#error this target is not supported\n#endif\n") == (
        "t.p4:2:1: error: #error this target is not supported"
    )


def test_error_directive_in_skipped_region_is_ignored() -> None:
    assert texts("#if 0\n#error nope\n#endif\nfine") == ["fine"]


def test_unknown_directive_error() -> None:
    assert (
        pp_error("#frobnicate\n") == "t.p4:1:1: error: unknown preprocessor directive '#frobnicate'"
    )


def test_macro_argument_count_error() -> None:
    assert (
        pp_error("#define F(a, b) a\nx F(1)\n")
        == "t.p4:2:3: error: macro 'F' takes 2 argument(s), 1 given"
    )


def test_unterminated_macro_invocation_error() -> None:
    assert (
        pp_error("#define F(a) a\nF(1, \n")
        == "t.p4:2:1: error: unterminated argument list invoking macro 'F'"
    )


def test_lex_error_in_included_file_points_there(tmp_path: Path) -> None:
    (tmp_path / "bad.p4").write_text("ok\n  $\n")
    main = tmp_path / "main.p4"
    main.write_text('#include "bad.p4"\n')
    with pytest.raises(P4SourceError) as info:
        Preprocessor().run_file(main)
    assert str(info.value) == f"{tmp_path / 'bad.p4'}:2:3: error: unexpected character '$'"


def test_missing_source_file(tmp_path: Path) -> None:
    with pytest.raises(P4SourceError) as info:
        Preprocessor().run_file(tmp_path / "absent.p4")
    assert (
        str(info.value)
        == f"{tmp_path / 'absent.p4'}:1:1: error: cannot read source file: No such file or directory"
    )


def test_other_architectures_are_unsupported() -> None:
    from p4emu.exceptions import P4UnsupportedError

    with pytest.raises(P4UnsupportedError) as info:
        Preprocessor().run_text("#include <core.p4>\n#include <psa.p4>\n", "t.p4")
    assert str(info.value) == (
        "t.p4:2:1: error: unsupported construct: architecture psa.p4 (p4emu implements v1model only)"
    )
