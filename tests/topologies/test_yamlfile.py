"""topologies.yamlfile: the one strict YAML reader, raising each caller's own errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from topologies import yamlfile


class FileProblem(Exception):
    """A stand-in for a format's file error."""


class SpecProblem(Exception):
    """A stand-in for a format's spec error (source, key path, reason)."""

    def __init__(self, source: str, key_path: str, reason: str) -> None:
        super().__init__(f"{source}: {key_path}: {reason}")


def parse(text: str) -> object:
    return yamlfile.parse(text, "x.yaml", file_error=FileProblem, spec_error=SpecProblem)


def test_parse_is_safe_and_refuses_duplicate_keys_with_their_line() -> None:
    assert parse("a: 1\nb: [1, 2]\n") == {"a": 1, "b": [1, 2]}
    with pytest.raises(SpecProblem, match=r"^x\.yaml: line 3: duplicate key 'a'$"):
        parse("a: 1\nb: 2\na: 3\n")
    with pytest.raises(SpecProblem, match="line 3: duplicate key 'k'"):
        parse("outer:\n  k: 1\n  k: 2\n")  # nested mappings too
    with pytest.raises(FileProblem, match="not valid YAML"):
        parse("x: !!python/object:os.system ls\n")  # no arbitrary objects


def test_syntax_errors_name_line_and_column() -> None:
    with pytest.raises(FileProblem, match=r"^x\.yaml: not valid YAML: .*\(line 2, column \d+\)$"):
        parse("a: [1, 2\nb: 3\n")


def test_read_text_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"name: \xff\n")
    with pytest.raises(FileProblem, match=r"^shown\.yaml: not UTF-8 text"):
        yamlfile.read_text(bad, "shown.yaml", FileProblem)
    with pytest.raises(FileProblem, match=r"^gone\.yaml: cannot read: No such file"):
        yamlfile.read_text(tmp_path / "gone.yaml", "gone.yaml", FileProblem)


def test_locate_prefers_a_file_then_a_bundled_name(tmp_path: Path, monkeypatch) -> None:
    found = yamlfile.locate("tiny", "topologies", "topology", FileProblem)
    assert (found.source, found.path, found.default_name) == ("tiny.yaml", None, "tiny")
    assert yamlfile.locate("tiny.yaml", "topologies", "topology", FileProblem).text == found.text
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny").write_text("mine: 1\n")
    local = yamlfile.locate("tiny", "topologies", "topology", FileProblem)
    assert (local.text, local.path, local.default_name) == ("mine: 1\n", Path("tiny"), "tiny")


def test_locate_names_what_is_bundled_and_a_close_match() -> None:
    with pytest.raises(FileProblem) as info:
        yamlfile.locate("tiyn", "topologies", "topology", FileProblem)
    assert str(info.value) == (
        "tiyn: no such topology file, and no bundled topology of that name; did you mean "
        "'tiny'? (bundled: paper-8plane, small, tiny)"
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "nothing (null)"), (True, "true"), ({}, "a mapping"), ([1], "a list"), ("x", "'x'")],
)
def test_show_writes_values_as_yaml_does(value: object, shown: str) -> None:
    assert yamlfile.show(value) == shown
