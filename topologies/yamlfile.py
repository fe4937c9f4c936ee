"""Strict YAML input, the one home for every YAML file format of the project (topology
files here, scenario files in ``testbed.scenario``): finding a file or a bundled document
by name, reading it, safe loading with duplicate keys refused (PyYAML silently keeps the
last), syntax errors with their line and column, and the way a value is shown in an error.

Each format keeps its own error types: the functions take them as arguments, so a
topology file fails with :class:`~topologies.exceptions.TopologyFileError` and a scenario
file with ``ScenarioFileError``, with the same words.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

# A file that cannot be found, read or parsed: ``file_error(message)``.
FileError = Callable[[str], Exception]
# A well-formed document with a bad key: ``spec_error(source, key_path, reason)``.
SpecError = Callable[[str, str, str], Exception]


@dataclass(frozen=True)
class YamlText:
    """A YAML document to parse, and how error messages name it."""

    text: str
    source: str  # the path as the user gave it, or ``NAME.yaml`` for a bundled one
    path: Path | None  # the file, None for a bundled document
    default_name: str  # the file's stem or the bundled name


def bundled_names(package: str) -> list[str]:
    """Names of the ``.yaml`` files shipped inside ``package``."""
    from importlib import resources  # (here: a run that names no bundled file never needs it)

    return sorted(
        entry.name.removesuffix(".yaml")
        for entry in resources.files(package).iterdir()
        if entry.name.endswith(".yaml")
    )


def locate(
    name_or_path: str | os.PathLike[str], package: str, kind: str, file_error: FileError
) -> YamlText:
    """The document at a file path, or the bundled one of ``package`` by name (with or
    without ``.yaml``); an existing file wins over a bundled name. ``kind`` ("topology",
    "scenario") names what was looked for in the error."""
    path = Path(name_or_path)
    if path.is_file():
        return YamlText(
            read_text(path, str(name_or_path), file_error), str(name_or_path), path, path.stem
        )
    stem = str(name_or_path).removesuffix(".yaml")
    names = bundled_names(package)
    if stem in names:
        from importlib import resources

        text = resources.files(package).joinpath(f"{stem}.yaml").read_text(encoding="utf-8")
        return YamlText(text, f"{stem}.yaml", None, stem)
    import difflib  # (here: only a name that is not found needs it)

    hint = difflib.get_close_matches(stem, names, n=1)
    raise file_error(
        f"{name_or_path}: no such {kind} file, and no bundled {kind} of that name"
        + (f"; did you mean {hint[0]!r}?" if hint else "")
        + f" (bundled: {', '.join(names)})"
    )


def read_text(path: Path, shown: str, file_error: FileError) -> str:
    """The UTF-8 text of ``path``; errors name it as ``shown``."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise file_error(f"{shown}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise file_error(f"{shown}: not UTF-8 text ({exc.reason})") from None


def parse(text: str, source: str, *, file_error: FileError, spec_error: SpecError) -> Any:
    """Safe-load one YAML document; a duplicate mapping key is a ``spec_error`` naming its
    line, a syntax error a ``file_error`` with its line and column."""
    import yaml  # here: a run that reads no YAML does not import PyYAML (start-up)

    loader, duplicate_key_error = _strict_loader()
    try:
        return yaml.load(text, Loader=loader)
    except duplicate_key_error as exc:
        raise spec_error(source, f"line {exc.line}", f"duplicate key {exc.key!r}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise file_error(f"{source}: not valid YAML: {problem}{where}") from None


MAX_SHOWN_CHARS = 64
"""Most characters of a value an error message quotes."""


def show(value: Any) -> str:
    """A value the way the user wrote it in YAML (for error messages)."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)  # a whole file read as one string must not be echoed back
    if len(text) > MAX_SHOWN_CHARS:
        return f"{text[:MAX_SHOWN_CHARS]}... ({len(text)} characters)"
    return text


@functools.cache
def _strict_loader() -> tuple[type[yaml.SafeLoader], type[_DuplicateKey]]:
    """The loader :func:`parse` uses (a SafeLoader that refuses duplicate mapping keys:
    PyYAML silently keeps the last) and the error it raises for one; made on first use."""
    import yaml

    class DuplicateKeyError(yaml.YAMLError, _DuplicateKey):
        def __init__(self, key: object, line: int) -> None:
            super().__init__(f"duplicate key {key!r}")
            self.key = key
            self.line = line

    class StrictLoader(yaml.SafeLoader):
        pass

    def construct_mapping(loader: StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        loader.flatten_mapping(node)
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # unhashable key: let the base constructor report it
                break
            if duplicate:
                raise DuplicateKeyError(key, key_node.start_mark.line + 1)
            seen.add(key)
        return loader.construct_mapping(node, deep=True)

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return StrictLoader, DuplicateKeyError


class _DuplicateKey(Exception):
    """What :func:`parse` reads from a duplicate-key error: the key and its line."""

    key: object
    line: int
