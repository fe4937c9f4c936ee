"""clikit.hotpath: which path (native or pure Python) each per-packet module loads, and the
same event log on both (docs/virtual-fabric.md, "Compiled hot path")."""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import re
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
from native_build import build_native

from clikit import hotpath
from p4emu.backend import native as generated_native

ROOT = Path(__file__).resolve().parents[2]
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def fake_build(where: Path, names: tuple[str, ...], *, newer: bool = True) -> None:
    """Empty files where a native build puts its extensions (never loaded here)."""
    stamp = time.time() + (3600 if newer else -10 * 365 * 86400)
    for name in names:
        path = where / (hotpath.extension_stem(name) + SUFFIX)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
        os.utime(path, (stamp, stamp))


@pytest.fixture
def native(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(hotpath.NATIVE_DIR_ENV, str(tmp_path))
    monkeypatch.delenv(hotpath.PURE_ENV, raising=False)
    monkeypatch.setattr(hotpath, "_generated", {})  # no generated module loaded yet
    monkeypatch.setattr(hotpath, "_early", set())  # none imported before the finder
    monkeypatch.setattr(hotpath, "_others", {})  # no verdict on the modules yet
    return tmp_path


def test_every_listed_module_has_a_source() -> None:
    for name in hotpath.COMPILED_MODULES:
        assert hotpath.source_of(name).is_file(), name


def test_not_built_runs_the_source(native: Path) -> None:
    how, where = hotpath.choice("vfabric.eventlist")
    assert how.startswith("pure: not built")
    assert where == hotpath.source_of("vfabric.eventlist")
    assert hotpath.describe()["path"] == "pure"


def test_a_built_module_runs_native(native: Path) -> None:
    fake_build(native, hotpath.COMPILED_MODULES)
    how, where = hotpath.choice("vfabric.eventlist")
    assert how == "compiled"
    assert where == native / "vfabric" / f"eventlist{SUFFIX}"
    spec = hotpath.HotPathFinder().find_spec("vfabric.eventlist", None)
    assert spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)
    info = hotpath.describe()
    assert info == {
        "path": "compiled",
        "compiled_modules": len(hotpath.COMPILED_MODULES),
        "pure_modules": 0,
        "why_pure": [],
        "generated_p4": hotpath.generated(),
    }
    assert hotpath.summary().startswith("compiled")


def test_a_listed_extension_runs_its_init_with_argspecs_once(native: Path) -> None:
    fake_build(native, hotpath.COMPILED_MODULES)
    spec = hotpath.HotPathFinder().find_spec("mrc_wire.codec", None)
    assert spec is not None and type(spec.loader) is hotpath.ExtensionLoader


def test_argspecs_once_computes_each_spec_once_and_hands_out_copies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import dataclasses
    import inspect

    real = inspect.getfullargspec
    asked: list[object] = []

    def counting(func: object) -> inspect.FullArgSpec:
        asked.append(func)
        return real(func)

    def f(a: int, b: str = "", *, c: int = 1) -> None: ...

    monkeypatch.setattr(inspect, "getfullargspec", counting)
    with hotpath.argspecs_once():
        first = inspect.getfullargspec(dataclasses.field)
        first.kwonlyargs.append("mutated by a caller")  # a copy: the next one is whole
        assert inspect.getfullargspec(dataclasses.field) == real(dataclasses.field)
        with hotpath.argspecs_once():  # nested: the outer table
            assert inspect.getfullargspec(f) == real(f)
            assert inspect.getfullargspec(f) == real(f)
        assert inspect.getfullargspec is not counting
        with pytest.raises(TypeError):
            inspect.getfullargspec(3)  # no spec: raised each time
        with pytest.raises(TypeError):
            inspect.getfullargspec(3)
    assert inspect.getfullargspec is counting  # put back
    assert asked == [dataclasses.field, f, 3, 3]


def test_the_env_var_forces_the_pure_path(native: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_build(native, hotpath.COMPILED_MODULES)
    monkeypatch.setenv(hotpath.PURE_ENV, "1")
    how, _ = hotpath.choice("p4emu.switch")
    assert hotpath.PURE_ENV in how
    spec = hotpath.HotPathFinder().find_spec("p4emu.switch", None)
    assert spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader)
    assert hotpath.describe()["path"] == "pure"
    monkeypatch.setenv(hotpath.PURE_ENV, "0")  # "0" does not force it
    assert hotpath.choice("p4emu.switch")[0] == "compiled"


def test_a_source_newer_than_its_build_runs_every_source(native: Path) -> None:
    """One stale module makes every module load from source: the typed extensions share C
    types and refuse to import beside a pure one."""
    first, *others = hotpath.COMPILED_MODULES
    fake_build(native, (first,), newer=False)
    fake_build(native, tuple(others))
    assert hotpath.choice(first)[0] == "pure: source changed since its native build"
    assert hotpath.own_choice(others[0])[0] == "compiled"
    how, where = hotpath.choice(others[0])
    assert how == (
        f"pure: {first}: source changed since its native build (all modules load pure together)"
    )
    assert where == hotpath.source_of(others[0])
    spec = hotpath.HotPathFinder().find_spec(others[0], None)
    assert spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader)
    info = hotpath.describe()
    assert info["path"] == "pure"
    assert info["pure_modules"] == len(hotpath.COMPILED_MODULES)
    assert info["why_pure"] == [f"{first}: source changed since its native build"]
    assert hotpath.summary() == f"pure ({first}: source changed since its native build)"


def test_the_build_record_covers_the_pxd(native: Path, tmp_path: Path) -> None:
    """A changed ``.pxd`` (the C types) is a changed build, like a changed source."""
    source = tmp_path / "mod.py"
    source.write_text("x = 1\n")
    alone = hotpath.source_sha256(source)
    (tmp_path / "mod.pxd").write_text("cdef int x\n")
    declared = hotpath.source_sha256(source)
    assert declared != alone
    (tmp_path / "mod.pxd").write_text("cdef long x\n")
    assert hotpath.source_sha256(source) != declared


def write_package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_build_record_covers_the_declarations_it_cimports(tmp_path: Path) -> None:
    """A module compiled against another's ``.pxd`` (a cimported type's layout, a
    cimported function's signature) is a changed build when that ``.pxd`` changes, through
    any chain of cimports; C libraries and Cython's own declarations are not the
    project's."""
    write_package(tmp_path, {
        "pkg/a.py": "x = 1\n",
        "pkg/a.pxd": "cimport cython\nfrom libc.stdint cimport uint32_t\nfrom pkg.b cimport B\n",
        "pkg/b.py": "",
        "pkg/b.pxd": "from pkg.c cimport C\ncdef class B:\n    cdef C c\n",
        "pkg/c.py": "",
        "pkg/c.pxd": "cimport pkg.b\ncdef class C:\n    cdef int x\n",  # a cycle back to b
        "pkg/d.py": "from cython.cimports.pkg.c import C\n",  # a pure-mode source's cimport
        "pkg/e.py": "from pkg.c import C\n",  # a Python import: no declarations
    })  # fmt: skip
    source = tmp_path / "pkg" / "a.py"
    assert hotpath.cimported(source, tmp_path) == {
        "pkg.b": tmp_path / "pkg" / "b.pxd",
        "pkg.c": tmp_path / "pkg" / "c.pxd",
    }
    assert list(hotpath.cimported(tmp_path / "pkg" / "d.py", tmp_path)) == ["pkg.b", "pkg.c"]
    assert hotpath.cimported(tmp_path / "pkg" / "e.py", tmp_path) == {}
    before = hotpath.source_sha256(source, tmp_path)
    (tmp_path / "pkg" / "c.pxd").write_text("cimport pkg.b\ncdef class C:\n    cdef long x\n")
    assert hotpath.source_sha256(source, tmp_path) != before
    # a module that cimports nothing of the project's keeps the record it always had
    alone = tmp_path / "pkg" / "b.py"
    (tmp_path / "pkg" / "b.pxd").write_text("cdef class B:\n    pass\n")
    plain = hashlib.sha256(b"\0pxd\0cdef class B:\n    pass\n").hexdigest()  # b.py is empty
    assert hotpath.source_sha256(alone, tmp_path) == plain


def test_every_cimported_module_loads_with_its_importer() -> None:
    """A listed module's extension imports the extension types and C functions of the
    modules its ``.pxd`` cimports (``nic_emu``'s cores call ``mrc_wire.codec`` in C): each
    of those is listed too, so the finder's all-or-none covers it (a compiled importer
    beside a pure ``mrc_wire.codec`` fails at import: "size changed")."""
    for name in hotpath.COMPILED_MODULES:
        for other in hotpath.cimported(hotpath.source_of(name)):
            assert other in hotpath.COMPILED_MODULES, f"{name} cimports {other}"
    assert "mrc_wire.codec" in hotpath.cimported(hotpath.source_of("nic_emu.connection.transmit"))
    assert "mrc_wire.codec" in hotpath.cimported(hotpath.source_of("nic_emu.core"))


def test_a_changed_cimported_declaration_makes_its_importers_stale(
    native: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By the build record, and without one by modification times: an extension older
    than a ``.pxd`` it cimports loads from source, and so does every module."""
    write_package(tmp_path / "src", {
        "pkg/a.py": "", "pkg/a.pxd": "from pkg.b cimport B\n",
        "pkg/b.py": "", "pkg/b.pxd": "cdef class B:\n    pass\n",
    })  # fmt: skip
    root = tmp_path / "src"
    monkeypatch.setattr(hotpath, "ROOT", root)
    monkeypatch.setattr(hotpath, "COMPILED_MODULES", ("pkg.a", "pkg.b"))
    fake_build(native, hotpath.COMPILED_MODULES)  # an hour newer than the sources
    assert hotpath.choice("pkg.a")[0] == "compiled"
    later = time.time() + 7200
    os.utime(root / "pkg" / "b.pxd", (later, later))  # b's declarations changed since
    assert hotpath.own_choice("pkg.a")[0] == "pure: source changed since its native build"
    for name in ("pkg.a", "pkg.b"):
        extension = hotpath.extension_of(name)
        assert extension is not None
        hotpath.record_of(extension).write_text(hotpath.source_sha256(hotpath.source_of(name)))
    assert hotpath.own_choice("pkg.a")[0] == "compiled"
    (root / "pkg" / "b.pxd").write_text("cdef class B:\n    cdef int x\n")
    assert hotpath.own_choice("pkg.a")[0] == "pure: source changed since its native build"
    # b rebuilt alone (an incremental build that missed a): b is fresh, a is not, and
    # every module loads from source
    b_extension = hotpath.extension_of("pkg.b")
    assert b_extension is not None
    hotpath.record_of(b_extension).write_text(hotpath.source_sha256(root / "pkg" / "b.py"))
    assert hotpath.own_choice("pkg.b")[0] == "compiled"
    monkeypatch.setattr(hotpath, "_others", {})
    assert hotpath.choice("pkg.b")[0] == (
        "pure: pkg.a: source changed since its native build (all modules load pure together)"
    )


def test_each_module_is_looked_at_once_per_process(
    native: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first import looks at every module (its source's sha256 against its build
    record); a later import of any of them follows that look, hashing nothing again."""
    fake_build(native, hotpath.COMPILED_MODULES)
    looked: list[str] = []
    own_choice = hotpath.own_choice

    def counted(name: str) -> tuple[str, Path]:
        looked.append(name)
        return own_choice(name)

    monkeypatch.setattr(hotpath, "own_choice", counted)
    assert hotpath.choice("vfabric.eventlist")[0] == "compiled"
    assert sorted(looked) == sorted(hotpath.COMPILED_MODULES)
    for name in hotpath.COMPILED_MODULES:
        assert hotpath.choice(name) == ("compiled", hotpath.extension_of(name))
    assert len(looked) == len(hotpath.COMPILED_MODULES)
    monkeypatch.setenv(hotpath.PURE_ENV, "1")  # another key: looked at again
    assert hotpath.PURE_ENV in hotpath.choice("vfabric.eventlist")[0]
    assert looked[-1] == "vfabric.eventlist"


def test_the_verdict_on_every_module_is_taken_once_per_process(native: Path) -> None:
    """Every import after the first follows the first's verdict on the other modules: a
    build that changes meanwhile cannot split a process between both paths."""
    fake_build(native, hotpath.COMPILED_MODULES)
    assert hotpath.choice("vfabric.eventlist")[0] == "compiled"
    first, *others = hotpath.COMPILED_MODULES
    fake_build(native, (first,), newer=False)  # stale from now on
    assert hotpath.choice(others[0])[0] == "compiled"
    assert hotpath.own_choice(first)[0] == "pure: source changed since its native build"


def test_the_build_record_decides_whatever_the_times(native: Path) -> None:
    """An install may give the source a later time than its extension (unpacked after
    it): the record of the source's sha256 decides."""
    name = "vfabric.nodes"
    fake_build(native, (name,), newer=False)
    extension = hotpath.extension_of(name)
    assert extension is not None
    record = hotpath.record_of(extension)
    record.write_text(hotpath.source_sha256(hotpath.source_of(name)) + "\n", encoding="ascii")
    assert hotpath.own_choice(name)[0] == "compiled"
    record.write_text("0" * 64 + "\n", encoding="ascii")  # built from another version
    assert hotpath.own_choice(name)[0] == "pure: source changed since its native build"


def test_the_generated_modules_path_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hotpath, "_generated", {})
    assert hotpath.generated() == {"compiled": 0, "pure": 0, "why_pure": []}
    hotpath.note_generated("<p4emu a.p4>", "compiled")
    hotpath.note_generated("<p4emu b.p4>", "pure: no C compiler (cc)")
    assert hotpath.generated() == {"compiled": 1, "pure": 1, "why_pure": ["no C compiler (cc)"]}
    assert hotpath.describe()["generated_p4"] == hotpath.generated()
    text = hotpath.summary()
    assert "generated P4 code compiled (1 programs)" in text
    assert "generated P4 code pure (no C compiler (cc))" in text


def test_a_pure_layer_is_built_under_a_name_only_the_finder_loads(tmp_path: Path) -> None:
    """Python's own finder, given a pure layer's source and its extension side by side,
    takes the source: a module imported before the finder never loads native."""
    assert hotpath.extension_stem("mrc_wire.codec") == "mrc_wire/codec.native"
    assert hotpath.extension_stem("nic_emu.streams") == "nic_emu/streams"
    package = tmp_path / "mrc_wire"
    package.mkdir()
    (package / "codec.py").write_text("x = 1\n")
    fake_build(tmp_path, ("mrc_wire.codec",))
    assert (tmp_path / f"mrc_wire/codec.native{SUFFIX}").is_file()
    finder = importlib.machinery.FileFinder(
        str(package),
        (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
        (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES),
    )
    spec = finder.find_spec("mrc_wire.codec")
    assert spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader)


def early_module(name: str, loader: type[importlib.abc.Loader]) -> types.ModuleType:
    """A stand-in for ``name`` as imported before the finder, by ``loader``."""
    module = types.ModuleType(name)
    module.__spec__ = importlib.util.spec_from_loader(name, loader(name, "x"))  # type: ignore[call-arg]
    return module


def test_a_module_imported_before_the_finder_makes_every_module_pure(
    native: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pure layer imported first (no finder yet) runs its source for the whole process:
    every other module then loads pure too (all or none), and the reason names it."""
    fake_build(native, hotpath.COMPILED_MODULES)
    early = "mrc_wire.codec"
    monkeypatch.setattr(hotpath, "_early", {early})
    monkeypatch.setitem(
        sys.modules, early, early_module(early, importlib.machinery.SourceFileLoader)
    )
    assert hotpath.own_choice("vfabric.eventlist")[0] == "compiled"
    reason = f"{early}: imported from its source before clikit.hotpath's finder"
    assert hotpath.choice("vfabric.eventlist")[0] == (
        f"pure: {reason} (all modules load pure together)"
    )
    spec = hotpath.HotPathFinder().find_spec("mrc_wire.frames", None)
    assert spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader)
    assert hotpath.describe()["why_pure"] == [reason]
    assert hotpath.summary() == f"pure ({reason})"
    # the same module loaded native (by the finder, in a process that installed it first)
    monkeypatch.setitem(
        sys.modules, early, early_module(early, importlib.machinery.ExtensionFileLoader)
    )
    assert hotpath.choice("vfabric.eventlist")[0] == "compiled"
    assert hotpath.describe()["path"] == "compiled"


def imported_early_after(statement: str) -> str:
    """``hotpath.imported_early()`` in a fresh process after ``statement``."""
    done = subprocess.run(
        [sys.executable, "-c", f"{statement}\nfrom clikit import hotpath\nprint(hotpath.imported_early())"],
        cwd=ROOT, env={k: v for k, v in os.environ.items() if k != hotpath.PURE_ENV},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def test_the_finder_notes_what_was_imported_before_it() -> None:
    assert imported_early_after("import mrc_wire.frames") == "['mrc_wire.codec', 'mrc_wire.frames']"


@pytest.mark.parametrize("package", ["controller", "nic_emu", "testbed", "vfabric"])
def test_every_importer_of_a_pure_layer_installs_the_finder_first(package: str) -> None:
    """The packages that import ``mrc_wire`` import ``clikit.hotpath`` before it (their
    ``__init__``'s first import), so its modules load as the finder says."""
    assert imported_early_after(f"import {package}") == "[]"


def test_other_modules_are_left_to_python() -> None:
    assert hotpath.HotPathFinder().find_spec("vfabric.fabric", None) is None
    assert hotpath.HotPathFinder().find_spec("json", None) is None


def test_the_finder_is_installed_once() -> None:
    import p4emu  # noqa: F401 - its package imports clikit.hotpath first

    hotpath.install()
    assert sum(isinstance(f, hotpath.HotPathFinder) for f in sys.meta_path) == 1


# ------------------------------------------------------------ both paths, one event log

SHA = re.compile(r"event-log sha256: ([0-9a-f]{64})")
#: the light bundled scenarios (first seed) compared on both paths; the loaded ones and
#: the collectives take minutes each and are not (docs/virtual-fabric.md)
SCENARIOS = ("ev-drop", "incast-trimming", "t1-down", "link-cuts")


def run_both(argv: list[str], tmp: Path, lib: Path, name: str) -> dict[str, str]:
    """``argv`` once on each path; the output of each."""
    out = {}
    for path in ("pure", "compiled"):
        env = {k: v for k, v in os.environ.items() if k != hotpath.PURE_ENV}
        env["MRC_TESTBED_RUN_DIR"] = str(tmp / "runs")
        env[generated_native.CACHE_ENV] = str(tmp / "p4cache")  # the generated code built here too
        if path == "pure":
            env[hotpath.PURE_ENV] = "1"
        else:
            env[hotpath.NATIVE_DIR_ENV] = str(lib)
        done = subprocess.run(
            [a.replace("{out}", str(tmp / f"{name}-{path}")) for a in argv],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, f"{name} on the {path} path: {done.stderr[-2000:]}"
        out[path] = done.stdout
    return out


@pytest.mark.integration
@pytest.mark.timeout(3600)
def test_native_and_pure_paths_give_the_same_event_logs(tmp_path: Path) -> None:
    """The native build of every module, then the demo, two scenarios and the virtual
    fabric benchmark's tiny run on each path: the same event-log sha256 each time."""
    lib = build_native(tmp_path)
    # A typed object's cpdef method read without a call compiles to a wrapper of its C
    # function that takes ``self`` (not a bound method): none may be handed out.
    generated = ROOT / "build" / "cython"
    wrappers = [
        name
        for name in hotpath.COMPILED_MODULES
        if "__Pyx_CFunc_" in generated.joinpath(*name.split(".")).with_suffix(".c").read_text()
    ]
    assert not wrappers, f"uncalled cpdef methods read as C functions in {wrappers}"
    # the compiled side: MRC_TESTBED_PURE (tests/conftest.py sets it) unset
    env = {k: v for k, v in os.environ.items() if k != hotpath.PURE_ENV}
    env[hotpath.NATIVE_DIR_ENV] = str(lib)
    check = subprocess.run(
        [sys.executable, "-c", "from clikit import hotpath; print(hotpath.summary())"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert check.stdout.startswith("compiled"), check.stdout
    # the unit tests of the modules whose native build runs code of its own
    # (``cython.compiled`` branches: the event list's C heap, MT19937 in C, the wire
    # codec's in-place decoder and one-allocation encoders), on it; the finder first
    # (``-p clikit.hotpath``), as every entry point installs it before mrc_wire loads;
    # those of the NIC's parts that call the codec in C (cimported across packages:
    # the cores' templates and decoded messages as mrc_wire.codec's C types), and of
    # those that take their NIC as the NicHost base type (its doubles derive from it); the
    # streamed payload's and the EV layout's (bytes pieces sliced in C, entries made
    # without the constructor's call); and
    # those of the wires, the clock, the traffic manager and the packet context (C
    # serialisation times, clock reads through a C base, C queue masks, the payload held
    # by offset)
    native_env = {**env, hotpath.PURE_ENV: "0"}
    where = subprocess.run(
        [sys.executable, "-c",
         "import clikit.hotpath, vfabric.eventlist as e, nic_emu.mtbytes as m, "
         "nic_emu.connection.transmit as t, mrc_wire.codec as c; "
         "print(e.__file__, m.__file__, t.__file__, c.__file__)"],
        cwd=ROOT, env=native_env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert all(path.endswith(".so") for path in where.stdout.split()), where.stdout
    native_tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "clikit.hotpath",
         "tests/vfabric/test_eventlist.py", "tests/nic_emu/test_mtbytes.py",
         "tests/mrc_wire/test_wire_codec.py", "tests/nic_emu/connection/test_receive.py",
         "tests/nic_emu/connection/test_transmit.py", "tests/nic_emu/connection/test_feedback.py",
         "tests/nic_emu/connection/test_probes.py", "tests/nic_emu/test_core_robustness.py",
         "tests/nic_emu/test_reliability_state.py", "tests/nic_emu/test_nic_host.py",
         "tests/nic_emu/connection/test_timers.py", "tests/nic_emu/test_ev_set.py",
         "tests/nic_emu/test_streams.py", "tests/nic_emu/connection/test_ev_layout.py",
         "tests/vfabric/test_wires.py", "tests/p4emu/runtime/test_clock.py",
         "tests/p4emu/runtime/test_traffic_manager.py", "tests/p4emu/backend/test_rt.py"],
        cwd=ROOT, env={**native_env, generated_native.NATIVE_ENV: "0"},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert native_tests.returncode == 0, native_tests.stdout[-3000:]
    cli = [sys.executable, "-m", "testbed"]
    runs = {
        "demo": run_both([*cli, "demo", "-o", "{out}"], tmp_path, lib, "demo"),
        **{s: run_both([*cli, "run", s, "-o", "{out}"], tmp_path, lib, s) for s in SCENARIOS},
    }
    for name, outputs in runs.items():
        assert "hot path: pure" in outputs["pure"], name
        assert "hot path: compiled" in outputs["compiled"], name
        assert "generated P4 code compiled" in outputs["compiled"], name
        hashes = {path: SHA.findall(text) for path, text in outputs.items()}
        assert hashes["pure"], f"{name}: no event-log sha256 printed"
        assert hashes["pure"] == hashes["compiled"], name
    bench = run_both(
        [sys.executable, "benchmarks/virtual_fabric.py", "--skip", "demo", "a2a",
         "--no-replay", "--pipeline-packets", "200"],
        tmp_path, lib, "bench",
    )  # fmt: skip
    import json

    reports = {path: json.loads(text) for path, text in bench.items()}
    assert reports["pure"]["hot_path"]["path"] == "pure"
    assert reports["compiled"]["hot_path"]["path"] == "compiled"
    assert (
        reports["pure"]["tiny_64MiB"]["event_log_sha256"]
        == reports["compiled"]["tiny_64MiB"]["event_log_sha256"]
    )


def test_cimports_are_parsed_as_the_pattern_finds_them_in_the_whole_text() -> None:
    """``_parse_cimports`` reads by line what ``_CIMPORT.finditer`` finds in the whole
    text (a match lies within one line), on tricky lines and on every project file."""
    root = hotpath.ROOT

    def whole(text: str, prefix: str) -> list[str]:
        out = []
        for match in hotpath._CIMPORT.finditer(text):
            line = match.group(0)
            if (prefix and prefix not in line) or (not prefix and "cimport" not in line):
                continue
            pxd = root.joinpath(*(match.group(1) or match.group(2)).split(".")).with_suffix(".pxd")
            if pxd.is_file():
                out.append(str(pxd))
        return out

    tricky = (
        "from mrc_wire.codec cimport X\n  cimport nic_emu.core\r\nx = 1 # cimport vfabric.nodes\n"
        "\tfrom cython.cimports.vfabric.wires import Wire\nfrom vfabric.nodes import y\n"
        "s = 'a\rfrom nic_emu.core cimport Z'\n"
    )
    texts = [tricky, "", "cimport", "from cython.cimports.", tricky.replace("\n", "\r")]
    project = [p for p in root.glob("[mnpv]*/**/*.p[yx]*") if p.suffix in (".py", ".pxd", ".pyx")]
    assert len(project) > 100
    texts += [p.read_text(encoding="utf-8") for p in sorted(project)]
    for text in texts:
        for prefix in ("", "cython.cimports."):
            assert hotpath._parse_cimports(text, prefix, str(root)) == whole(text, prefix)
    assert len(hotpath._parse_cimports(tricky, "", str(root))) == 3


def test_one_look_reads_each_declaration_once_and_decides_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In :func:`hotpath.choice`'s look at every module a ``.pxd`` is parsed and read once
    (not once per importer); the records' digests and the closures are those computed
    outside a look, which forgets everything when it ends."""
    names = hotpath.COMPILED_MODULES
    outside = {n: hotpath.source_sha256(hotpath.source_of(n)) for n in names}
    closures = {n: hotpath.cimported(hotpath.source_of(n)) for n in names}
    reads: list[str] = []
    real_read_file = hotpath._read_file

    def counted(path: str) -> bytes:
        reads.append(path)
        return real_read_file(path)

    monkeypatch.setattr(hotpath, "_read_file", counted)
    with hotpath._one_look():
        inside = {n: hotpath.source_sha256(hotpath.source_of(n)) for n in names}
        assert {n: hotpath.cimported(hotpath.source_of(n)) for n in names} == closures
    assert inside == outside
    assert reads and len(reads) == len(set(reads))  # sources and declarations: once each
    assert {r for r in reads if r.endswith(".pxd")} >= {
        str(p) for c in closures.values() for p in c.values()
    }
    assert hotpath._look is None
    reads.clear()
    hotpath.source_sha256(hotpath.source_of("nic_emu.core"))
    hotpath.source_sha256(hotpath.source_of("nic_emu.core"))
    assert reads.count(str(hotpath.source_of("nic_emu.core").with_suffix(".pxd"))) == 2


def test_the_remembered_paths_are_pathlib_s_and_follow_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finder remembers what it derives from names and paths alone (``_paths``): the
    same paths pathlib gives, and a moved ``ROOT`` or extensions' folder is another key."""
    name = "nic_emu.connection.transmit"
    assert hotpath.source_of(name) == hotpath.ROOT / "nic_emu" / "connection" / "transmit.py"
    pxd = hotpath._pxd_named(str(hotpath.ROOT), "mrc_wire.codec")
    assert pxd == str(hotpath.ROOT / "mrc_wire" / "codec.pxd")
    assert hotpath._module_named(pxd, str(hotpath.ROOT)) == "mrc_wire.codec"
    extension = hotpath.extension_of("vfabric.nodes")
    if extension is not None:
        assert hotpath.record_of(extension).name == extension.name + hotpath.RECORD_SUFFIX
    monkeypatch.setattr(hotpath, "ROOT", tmp_path)
    assert hotpath.source_of(name) == tmp_path / "nic_emu" / "connection" / "transmit.py"
    monkeypatch.setenv(hotpath.NATIVE_DIR_ENV, str(tmp_path / "build"))
    assert hotpath.extension_of("vfabric.nodes") is None
    stem = tmp_path / "build" / "vfabric" / "nodes"
    stem.parent.mkdir(parents=True)
    built = stem.with_name("nodes" + SUFFIX)
    built.write_bytes(b"")
    assert hotpath.extension_of("vfabric.nodes") == built  # a file is looked for each time


def test_the_finder_s_strings_are_the_paths_pathlib_gives(tmp_path: Path) -> None:
    """The finder's look works on strings (pathlib's objects were most of its cost): each
    string is what the ``Path`` operation it replaces gives, on tricky names too."""
    for name in ("b.py", ".py", "..py", "b.", "b", "b.tar.py", "b.c.d", ".b.py", "b..py"):
        for folder in ("/a", "/a.b", "/x.y/z"):
            path = f"{folder}/{name}"
            expected = Path(path).with_suffix(".pxd")
            assert hotpath._swap_suffix(path, ".pxd") == str(expected), path
    root = str(hotpath.ROOT)
    for name in ("mrc_wire.codec", "a..b", "a.b.", ".a", "a", "nic_emu.connection.transmit"):
        expected = Path(root).joinpath(*name.split(".")).with_suffix(".pxd")
        assert hotpath._pxd_named(root, name) == str(expected), name
    for name in hotpath.COMPILED_MODULES:
        source = hotpath.ROOT.joinpath(*name.split(".")).with_suffix(".py")
        assert hotpath._source_file(root, name) == str(source)
        extension = hotpath.extension_of(name)
        if extension is not None:
            assert hotpath.record_of(extension) == extension.with_name(
                extension.name + hotpath.RECORD_SUFFIX
            )
    text = tmp_path / "newlines.pxd"
    text.write_bytes(b"from a cimport b\r\nx\ry\n\r\rz\r")
    assert hotpath._text_of(text.read_bytes()) == text.read_text(encoding="utf-8")
    with pytest.raises(UnicodeDecodeError):  # as read_text: a file that is not UTF-8
        hotpath._text_of(b"\xff cimport")


def test_a_look_parses_the_bytes_it_read_as_a_file_s_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a look a file's cimports come from the bytes read for its digest, with the
    newlines ``read_text`` gives (a lone ``\\r`` ends a line); outside a look, from the file
    read again: the same declarations either way."""
    write_package(tmp_path, {"pkg/b.py": "", "pkg/b.pxd": "", "pkg/c.py": "", "pkg/c.pxd": ""})
    (tmp_path / "pkg" / "a.pxd").write_bytes(b"x = 1\rfrom pkg.b cimport B\r\ncimport pkg.c")
    (tmp_path / "pkg" / "a.py").write_bytes(b"")
    source = tmp_path / "pkg" / "a.py"
    outside = hotpath.cimported(source, tmp_path)
    assert list(outside) == ["pkg.b", "pkg.c"]
    with hotpath._one_look():
        assert hotpath.cimported(source, tmp_path) == outside
        digest = hotpath.source_sha256(source, tmp_path)
    assert hotpath.source_sha256(source, tmp_path) == digest
