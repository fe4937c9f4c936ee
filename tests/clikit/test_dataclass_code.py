"""clikit.dataclass_code: the dataclasses' generated methods kept between processes
(docs/virtual-fabric.md, "Start-up, round 3")."""

from __future__ import annotations

import dataclasses
import json
import marshal
import os
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clikit import dataclass_code, hotpath

ROOT = Path(__file__).resolve().parents[2]

CLASSES = """
import dataclasses
from typing import ClassVar

@dataclasses.dataclass(frozen=True, order=True)
class Point:
    x: int
    y: int = 2
    tags: list = dataclasses.field(default_factory=list, compare=False)
    LIMIT: ClassVar[int] = 9

@dataclasses.dataclass(slots=True, kw_only=True)
class Named:
    name: str
    size: "int" = 0
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh cache file and table; the process's own restored afterwards."""
    monkeypatch.setenv(dataclass_code.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(dataclass_code, "_codes", None)
    monkeypatch.setattr(dataclass_code, "_used", set())
    monkeypatch.setattr(dataclass_code, "_new", {})
    monkeypatch.setattr(dataclass_code, "_stats", {"hits": 0, "compiled": 0})
    yield dataclass_code.cache_file()


def define(future: bool = False) -> dict[str, Any]:
    """The classes of :data:`CLASSES` defined by running their text (a module's body)."""
    text = ("from __future__ import annotations\n" if future else "") + CLASSES
    module = types.ModuleType("defined_here")
    sys.modules[module.__name__] = module  # dataclasses reads a string annotation's module
    try:
        exec(compile(text, "defined_here.py", "exec", dont_inherit=True), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module.__dict__


def methods(cls: type) -> dict[str, Any]:
    """What the generated methods are: their code, annotations, defaults, names."""
    out = {}
    for name in ("__init__", "__repr__", "__eq__", "__lt__", "__hash__", "__setattr__"):
        fn = cls.__dict__.get(name)
        if fn is None or not hasattr(fn, "__code__"):
            continue
        code = fn.__code__
        out[name] = (
            code.co_code,
            code.co_consts,
            code.co_names,
            code.co_varnames,
            code.co_filename,
            code.co_flags,
            repr(fn.__annotations__),
            fn.__defaults__,
            repr(fn.__kwdefaults__),
            fn.__qualname__,
        )
    return out


def test_the_process_runs_with_it_installed() -> None:
    """clikit.hotpath, which every package with a compiled module imports first, installs it."""
    assert hotpath.dataclass_code is dataclass_code
    assert dataclass_code.installed()
    assert dataclasses.__dict__["exec"] is dataclass_code.cached_exec


@pytest.mark.parametrize("future", [False, True])
def test_classes_from_kept_code_are_the_classes_python_makes(cache: Path, future: bool) -> None:
    dataclass_code.uninstall()
    try:
        plain = define(future)
    finally:
        dataclass_code.install()
    compiled = define(future)  # compiled now, kept in the table
    assert dataclass_code.stats()["hits"] == 0
    assert dataclass_code.stats()["compiled"] >= 8
    assert dataclass_code.flush()
    assert cache.is_file()
    dataclass_code._codes = None  # as a new process: read from the file
    dataclass_code._new.clear()
    kept = define(future)
    assert dataclass_code.stats()["hits"] == dataclass_code.stats()["compiled"]
    assert not dataclass_code.flush()  # nothing new to write
    for name in ("Point", "Named"):
        assert methods(kept[name]) == methods(plain[name]) == methods(compiled[name])
    point = kept["Point"](1)
    assert point == kept["Point"](1, 2, ["x"]) and point < kept["Point"](2)
    assert repr(point) == "Point(x=1, y=2, tags=[])"
    assert hash(point) == hash(plain["Point"](1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="positional"):
        kept["Named"]("n")
    assert kept["Named"](name="n", size=4).size == 4
    # the field's type (its text under the future import), never the generated name
    # ("_type_x") a text compiled with this module's own future flag would give
    assert kept["Point"].__init__.__annotations__["x"] == ("int" if future else int)


def test_the_frame_s_namespaces_are_exec_s_defaults(cache: Path) -> None:
    def run() -> Any:
        local = 5  # noqa: F841 - read by the executed text
        dataclass_code.cached_exec("seen = local + offset")
        return sys._getframe(0).f_locals

    globals()["offset"] = 2
    try:
        assert run()["seen"] == 7
    finally:
        del globals()["offset"]
    namespace: dict[str, Any] = {}
    dataclass_code.cached_exec("x = 1", {}, namespace)
    dataclass_code.cached_exec(compile("y = 2", "<t>", "exec"), {}, namespace)
    assert namespace == {"x": 1, "y": 2}


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not marshal at all",
        marshal.dumps(["a list"]),
        marshal.dumps({bytes(32): "not bytes"}),
        marshal.dumps({"a text": marshal.dumps(compile("x = 1", "<string>", "exec"))}),
        marshal.dumps({bytes(31): marshal.dumps(compile("x = 1", "<string>", "exec"))}),
    ],
    ids=["empty", "garbage", "list", "not-bytes", "not-a-digest", "short-digest"],
)
def test_a_damaged_file_is_ignored_and_replaced(cache: Path, content: bytes) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_bytes(content)
    define()
    assert dataclass_code.stats()["hits"] == 0
    assert dataclass_code.flush()
    table = marshal.loads(cache.read_bytes())
    assert isinstance(table, dict) and len(table) == dataclass_code.stats()["compiled"]
    assert all(type(key) is bytes and len(key) == 32 for key in table)


@pytest.mark.parametrize(
    "blob", [b"", b"garbage", marshal.dumps("a string")], ids=["empty", "garbage", "not-code"]
)
def test_an_entry_that_is_no_code_is_compiled_again(cache: Path, blob: bytes) -> None:
    text = "value = 6 * 7"
    cache.parent.mkdir(parents=True)
    cache.write_bytes(marshal.dumps({dataclass_code.text_key(text): blob}))
    namespace: dict[str, Any] = {}
    dataclass_code.cached_exec(text, {}, namespace)
    assert namespace == {"value": 42}
    assert dataclass_code.stats() == {"hits": 0, "compiled": 1}
    assert dataclass_code.flush()
    kept = marshal.loads(marshal.loads(cache.read_bytes())[dataclass_code.text_key(text)])
    assert kept.co_code == compile(text, "<string>", "exec").co_code


def test_an_unwritable_cache_is_skipped(cache: Path, tmp_path: Path) -> None:
    blocker = tmp_path / dataclass_code.SUBDIR
    blocker.write_text("a file where the folder would be")
    define()
    assert not dataclass_code.flush()
    assert blocker.read_text() == "a file where the folder would be"


def test_past_the_limit_only_this_process_s_texts_are_kept(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache.parent.mkdir(parents=True)
    old = {
        dataclass_code.text_key(f"x = {i}"): marshal.dumps(compile(f"x = {i}", "<string>", "exec"))
        for i in range(5)
    }
    cache.write_bytes(marshal.dumps(old))
    monkeypatch.setattr(dataclass_code, "MAX_ENTRIES", 6)
    define()
    assert dataclass_code.flush()
    table = marshal.loads(cache.read_bytes())
    assert set(table) == dataclass_code._used and not set(table) & set(old)


def test_a_new_process_compiles_none_of_its_dataclasses(tmp_path: Path) -> None:
    """The second of two fresh interpreters importing the virtual fabric compiles no
    dataclass method: every one comes from the file the first wrote when it exited."""
    script = textwrap.dedent(
        """
        import json
        import vfabric.fabric
        from clikit import dataclass_code
        print(json.dumps(dataclass_code.stats()))
        """
    )
    env = {**os.environ, dataclass_code.CACHE_ENV: str(tmp_path)}
    runs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["compiled"] > 100  # (hits too: some classes share a method's text)
    assert second == {"hits": first["hits"] + first["compiled"], "compiled": 0}


# the names a string annotation may use for ClassVar, InitVar and KW_ONLY
ALIASES = """
import dataclasses
import dataclasses as dc
import typing
import typing as t
from dataclasses import KW_ONLY, InitVar
from dataclasses import InitVar as IV
from typing import ClassVar
from typing import ClassVar as CV
Expr = int
"""
ANNOTATIONS = (
    "int",
    "list[Expr] | None",
    "ClassVar",
    "ClassVar[int]",
    " ClassVar [int]",
    "CV[int]",
    "typing.ClassVar[int]",
    "t.ClassVar[int]",
    "t . ClassVar",
    "dc.ClassVar",
    "nomodule.ClassVar[int]",
    "InitVar[int]",
    "IV[str]",
    "dataclasses.InitVar[int]",
    "dc.InitVar",
    "KW_ONLY",
    "dc.KW_ONLY",
    "Expr",
    "",
    " ",
    "[int]",
    "1x",
    "\u00e9t\u00e9.ClassVar",
)


def test_fast_is_type_answers_as_python_s_own() -> None:
    if dataclass_code._REAL_IS_TYPE is None:
        pytest.skip("replaced on Python 3.11 only")
    import typing

    assert dataclasses._is_type is dataclass_code.fast_is_type  # installed with the rest
    module = types.ModuleType("aliases_here")
    exec(ALIASES, module.__dict__)
    sys.modules[module.__name__] = module
    try:
        cls = type("C", (), {"__module__": module.__name__})
        asks = [
            (typing, typing.ClassVar, dataclasses._is_classvar),
            (dataclasses, dataclasses.InitVar, dataclasses._is_initvar),
            (dataclasses, dataclasses.KW_ONLY, dataclasses._is_kw_only),
        ]
        answers = []
        for _ in range(2):  # the second time, from the remembered parse
            for annotation in ANNOTATIONS:
                for a_module, a_type, predicate in asks:
                    args = (annotation, cls, a_module, a_type, predicate)
                    fast = dataclass_code.fast_is_type(*args)
                    assert fast is dataclass_code._REAL_IS_TYPE(*args), args
                    answers.append(fast)
        assert answers.count(True) == 2 * 13  # each alias above is found once
        module.__dict__["CV"] = None  # a name rebound later: looked up at each call
        assert not dataclass_code.fast_is_type(
            "CV[int]", cls, typing, typing.ClassVar, dataclasses._is_classvar
        )
        orphan = type("D", (), {"__module__": "not_a_module_anywhere"})
        for check in (dataclass_code.fast_is_type, dataclass_code._REAL_IS_TYPE):
            with pytest.raises(AttributeError):  # as Python: no module, no namespace
                check("int", orphan, typing, typing.ClassVar, dataclasses._is_classvar)
    finally:
        del sys.modules[module.__name__]


def test_fields_found_through_fast_is_type_are_python_s() -> None:
    if dataclass_code._REAL_IS_TYPE is None:
        pytest.skip("replaced on Python 3.11 only")
    # under the future import every annotation below is its text
    text = ALIASES + textwrap.dedent(
        """
        @dataclasses.dataclass
        class K:
            a: int
            b: CV[int] = 1
            c: IV[int] = 2
            _: KW_ONLY
            d: t.ClassVar = 3
            e: list[Expr] = dataclasses.field(default_factory=list)
        """
    )

    def define_k() -> type:
        module = types.ModuleType("fields_here")
        sys.modules[module.__name__] = module
        try:
            exec(
                compile("from __future__ import annotations\n" + text, "f.py", "exec"),
                module.__dict__,
            )
        finally:
            del sys.modules[module.__name__]
        return module.__dict__["K"]  # type: ignore[no-any-return]

    fast = define_k()
    dataclass_code.uninstall()
    try:
        assert dataclasses._is_type is dataclass_code._REAL_IS_TYPE
        plain = define_k()
    finally:
        dataclass_code.install()
    assert dataclasses._is_type is dataclass_code.fast_is_type

    def shape(cls: type) -> list[tuple[str, object, bool]]:
        return [
            (f.name, f._field_type, f.kw_only)  # type: ignore[attr-defined]
            for f in cls.__dataclass_fields__.values()  # type: ignore[attr-defined]
        ]

    assert shape(fast) == shape(plain)
    assert [f.name for f in dataclasses.fields(fast)] == ["a", "e"]
