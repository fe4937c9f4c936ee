"""p4emu.backend.native: the generated module compiled on first load, cached by hash
(docs/virtual-fabric.md, "Compiled hot path")."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import ModuleType

import pytest

from clikit import dataclass_code, hotpath
from p4emu.backend import native, rt
from p4emu.backend.program import SHARED_IMPORTS, SharedCode
from p4emu.frontend import load_program_text
from p4emu.runtime.clock import VirtualClock
from p4emu.runtime.tables import Exact
from p4emu.switch import Switch

ROOT = Path(__file__).resolve().parents[3]
BUILD_MISSING = native.build_missing()
needs_build = pytest.mark.skipif(BUILD_MISSING is not None, reason=str(BUILD_MISSING))

# a whole generated module in miniature: a class with slots, a typed helper, __make__
SOURCE = textwrap.dedent(
    """\
    class H1_h_t:
        __slots__ = ('valid_', 'k',)
        def __init__(self):
            self.valid_ = False
            self.k = 0
    def init_H1_h_t(h: H1_h_t):
        h.valid_ = False
        h.k = 0
    def __make__(NS):
        base = NS['base']
        def block(p0: H1_h_t, ctx):
            p0.k = (p0.k + base) & 255
        return {'block': block, 'new': H1_h_t}
    """
)
PXD = native.declarations({"H1_h_t": [("valid_", None), ("k", None)]})


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(native.CACHE_ENV, str(root))
    monkeypatch.setattr(native, "_loaded", {})
    return root


def listing(cache: Path) -> list[str]:
    """The cache's native entries and leftovers, without the build locks (they stay,
    empty) and the dataclasses' methods a child process keeps in the same cache root
    (:mod:`clikit.dataclass_code`, its own folder)."""
    return sorted(
        p.name
        for p in cache.iterdir()
        if not p.name.startswith(".lock-") and p.name != dataclass_code.SUBDIR
    )


def fake_entry(root: Path, key: str) -> None:
    """An entry that :func:`native.entry_ok` takes as whole (its module is no module)."""
    entry = root / key
    entry.mkdir(parents=True)
    module = native.module_path(entry, key)
    module.write_bytes(b"built")
    (entry / native.RECORD).write_text(native.file_sha256(module) + "\n", encoding="ascii")


@pytest.fixture
def no_real_build(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """native.build writes a fake entry and native.import_entry returns a stand-in:
    the locking and the background builder are tested without a compiler."""
    builds: list[str] = []

    def build(root: Path, key: str, source: str, pxd: str) -> None:
        builds.append(key)
        fake_entry(root, key)

    monkeypatch.setattr(native, "build", build)
    monkeypatch.setattr(native, "import_entry", lambda entry, key: ModuleType(f"m_{key[:8]}"))
    return builds


# ------------------------------------------------------------------ unit: no compiler run


def test_the_cache_root_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(native.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    assert native.cache_root() == Path("/x/cache/mrc-testbed/p4emu")
    monkeypatch.setenv(native.CACHE_ENV, "/y")
    assert native.cache_root() == Path("/y")


def test_the_key_covers_the_text_and_the_declarations() -> None:
    key = native.entry_key(SOURCE, PXD)
    assert key == native.entry_key(SOURCE, PXD)
    assert key != native.entry_key(SOURCE + "\n", PXD)
    assert key != native.entry_key(SOURCE, PXD + "\n")
    assert len(key) == 64


def test_proved_declarations_are_kept_and_read_back(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from p4emu.backend import cfields

    classes = {"H1_h_t": [("valid_", None), ("k", None)]}
    first = native.program_declarations(SOURCE, classes, {})
    [kept] = (cache / native.DECLARATIONS_DIR).iterdir()
    assert kept.suffix == ".pxd" and kept.read_text(encoding="utf-8") == first

    def prove(*args: object) -> object:
        raise cfields.ProofError("proved again")

    monkeypatch.setattr(cfields, "prove_all", prove)
    # the same inputs: read back, not proved again
    assert native.program_declarations(SOURCE, classes, {}) == first
    # another text, or other candidate fields: proved (the patched prover refuses, and a
    # refused proof is not kept)
    for text, candidates in ((SOURCE + "\n", {}), (SOURCE, {"H1_h_t": {"k": (0, 255)}})):
        with pytest.raises(native.NativeBuildError, match="proved again"):
            native.program_declarations(text, classes, candidates)
    assert len(list((cache / native.DECLARATIONS_DIR).iterdir())) == 1
    # whether the runtime runs native is part of the key too
    key = native.declarations_key(SOURCE, classes, {}, native=True)
    assert key != native.declarations_key(SOURCE, classes, {}, native=False)


@pytest.mark.parametrize(
    "damage", [b"cdef class H1_h_t:\n    cdef public object k\n", b"", b"\xff\xfe garbage"]
)
def test_damaged_kept_declarations_are_removed_and_proved_again(cache: Path, damage: bytes) -> None:
    """A kept file whose text no longer matches the digest in its name (edited,
    truncated, not text) is not used: it is removed and the proof runs again."""
    classes = {"H1_h_t": [("valid_", None), ("k", None)]}
    first = native.program_declarations(SOURCE, classes, {})
    [kept] = (cache / native.DECLARATIONS_DIR).iterdir()
    kept.write_bytes(damage)
    assert native.program_declarations(SOURCE, classes, {}) == first
    [again] = (cache / native.DECLARATIONS_DIR).iterdir()
    assert again.name == kept.name and again.read_text(encoding="utf-8") == first


def test_declarations_type_aggregate_fields_with_their_classes() -> None:
    pxd = native.declarations(
        {"H1_a": [("valid_", None), ("x", None)], "S2_s": [("a", "H1_a")], "S3_e": []}
    )
    assert "cdef class H1_a:\n    cdef public object valid_\n    cdef public object x\n" in pxd
    assert "cdef class S2_s:\n    cdef public H1_a a\n" in pxd
    assert "cdef class S3_e:\n    pass\n" in pxd


def test_declarations_cimport_the_runtime_only_when_it_runs_native() -> None:
    """Against a native runtime the generated code reads the packet context, tables and
    table results as C structs (cimported); against the pure one it cannot (a module
    built against the extension types does not import beside plain classes)."""
    classes = {"H1_a": [("valid_", None)]}
    plain = native.declarations(classes)
    typed = native.declarations(classes, runtime=True)
    assert "from p4emu" not in plain  # (it cimports only cython: typed temporaries)
    for module, names in native.RUNTIME_TYPES.items():
        assert f"from {module} cimport {', '.join(names)}\n" in typed
    assert f"sha256 {native.runtime_declarations()}" in typed
    assert native.entry_key(SOURCE, plain) != native.entry_key(SOURCE, typed)
    # what this process loaded: the runtime's extension types only on the compiled path
    assert native.runtime_native() == (hotpath.choice("p4emu.backend.rt")[0] == "compiled")


def test_the_runtime_types_are_declared_and_imported_by_generated_code() -> None:
    """Every cimported name is an extension type of its module's .pxd, and the text of
    every generated module imports it (its annotations name it on the pure path too)."""
    for module, names in native.RUNTIME_TYPES.items():
        pxd = hotpath.source_of(module).with_suffix(".pxd").read_text(encoding="utf-8")
        for name in names:
            assert re.search(rf"^cdef class {name}\b", pxd, re.M), f"{module}.{name}"
            assert re.search(
                rf"^from {re.escape(module)} import .*\b{name}\b", SHARED_IMPORTS, re.M
            ), f"{module}.{name} not imported by generated code"


def test_the_runtime_declarations_hash_follows_their_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in native.RUNTIME_TYPES:
        source = tmp_path.joinpath(*module.split(".")).with_suffix(".py")
        source.parent.mkdir(parents=True, exist_ok=True)
        source.with_suffix(".pxd").write_text(f"cdef class A_{len(module)}:\n    pass\n")
    monkeypatch.setattr(hotpath, "ROOT", tmp_path)
    before = native.runtime_declarations()
    rt_pxd = hotpath.source_of("p4emu.backend.rt").with_suffix(".pxd")
    rt_pxd.write_text(rt_pxd.read_text() + "    cdef public object more\n")
    assert native.runtime_declarations() != before


def test_an_entry_is_whole_only_with_its_matching_record(cache: Path) -> None:
    key = native.entry_key(SOURCE, PXD)
    entry = cache / key
    assert not native.entry_ok(entry, key)  # missing
    entry.mkdir(parents=True)
    module = native.module_path(entry, key)
    module.write_bytes(b"\x7fELF not really")
    assert not native.entry_ok(entry, key)  # no record
    (entry / native.RECORD).write_text("0" * 64 + "\n", encoding="ascii")
    assert not native.entry_ok(entry, key)  # another module's record
    (entry / native.RECORD).write_text(native.file_sha256(module) + "\n", encoding="ascii")
    assert native.entry_ok(entry, key)
    native.discard(entry)
    assert not entry.exists() and list(cache.iterdir()) == []


def test_generated_code_follows_the_hot_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(native.NATIVE_ENV, raising=False)
    monkeypatch.setenv(hotpath.PURE_ENV, "1")
    assert native.wanted() == f"${hotpath.PURE_ENV} is set"
    monkeypatch.delenv(hotpath.PURE_ENV)
    monkeypatch.setenv(hotpath.NATIVE_DIR_ENV, "/nonexistent")  # the runtime not built
    assert native.wanted() == "not built (docs/virtual-fabric.md, Compiled hot path)"
    monkeypatch.setenv(native.NATIVE_ENV, "0")
    assert native.wanted() == f"${native.NATIVE_ENV}=0"
    monkeypatch.setenv(native.NATIVE_ENV, "1")  # compiled even with the runtime pure
    monkeypatch.setattr(native, "build_missing", lambda: "no C compiler (cc)")
    assert native.wanted() == "no C compiler (cc)"
    monkeypatch.setenv(native.NATIVE_ENV, "yes")
    with pytest.raises(native.NativeBuildError, match="must be 0, 1 or unset, not 'yes'"):
        native.wanted()


def test_the_cython_version_is_read_without_importing_cython() -> None:
    # the pure modules import Cython's shadow module (``cython``): forget what is loaded
    code = (
        "import sys\n"
        "from p4emu.backend import native\n"
        "for name in [n for n in sys.modules if n.split('.')[0] in ('Cython', 'cython')]:\n"
        "    del sys.modules[name]\n"
        "found = native.cython_version()\n"
        "print('Cython' in sys.modules)\n"
        "import Cython\n"
        "print(found == Cython.__version__)\n"
    )
    if native.importlib.util.find_spec("Cython") is None:
        pytest.skip("Cython is not installed")
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.split() == ["False", "True"]


def _fake_cython(monkeypatch: pytest.MonkeyPatch, folder: Path, shadow: str | None) -> None:
    (folder / "__init__.py").write_text("", encoding="utf-8")
    if shadow is not None:
        (folder / "Shadow.py").write_text(shadow, encoding="utf-8")
    spec = native.importlib.util.spec_from_file_location("Cython", folder / "__init__.py")
    monkeypatch.setattr(native.importlib.util, "find_spec", lambda name: spec)


def test_the_cython_version_comes_from_its_shadow_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_cython(monkeypatch, tmp_path, '# comment\n__version__ = "9.8.7a1"\nother = 1\n')
    assert native.cython_version() == "9.8.7a1"


def test_a_cython_version_not_in_its_file_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_cython(monkeypatch, tmp_path, None)
    monkeypatch.setitem(sys.modules, "Cython", ModuleType("Cython"))
    sys.modules["Cython"].__version__ = "1.2.3"  # type: ignore[attr-defined]
    assert native.cython_version() == "1.2.3"


def test_no_cython_has_no_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native.importlib.util, "find_spec", lambda name: None)
    assert native.cython_version() is None


def test_no_compiler_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native.sysconfig, "get_config_var", lambda name: "no-such-cc-here")
    assert native.build_missing() == "no C compiler (no-such-cc-here; gcc, apt-packages.txt)"


def test_without_a_build_the_pure_module_runs_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(native.NATIVE_ENV, "1")
    monkeypatch.delenv(hotpath.PURE_ENV, raising=False)  # tests/conftest.py sets it
    monkeypatch.setattr(native, "build_missing", lambda: "no C compiler (cc)")
    monkeypatch.setattr(hotpath, "_generated", {})
    shared = SharedCode(SOURCE, "<no compiler>", PXD)
    assert shared.how == "pure: no C compiler (cc)"
    assert "no C compiler (cc)" in hotpath.generated()["why_pure"]
    assert "generated P4 code pure" in hotpath.summary()


def test_a_failed_build_falls_back_to_the_pure_module(
    monkeypatch: pytest.MonkeyPatch, cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(native.NATIVE_ENV, "1")
    monkeypatch.delenv(hotpath.PURE_ENV, raising=False)  # tests/conftest.py sets it
    monkeypatch.setattr(native, "build_missing", lambda: None)

    def failing(root: Path, key: str, source: str, pxd: str) -> None:
        raise native.NativeBuildError("cc failed (1): boom")

    monkeypatch.setattr(native, "build", failing)
    monkeypatch.setattr(hotpath, "_generated", {})
    with caplog.at_level(logging.WARNING, logger="p4emu.backend"):
        shared = SharedCode(SOURCE, "<failing>", PXD)
    assert shared.how == "pure: cc failed (1): boom"
    assert "native build failed" in caplog.text
    made = shared.make({"base": 1})
    header = made["new"]()
    made["block"](header, None)
    assert header.k == 1


def test_an_unwritable_cache_is_a_build_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(native.CACHE_ENV, str(blocker / "cache"))
    monkeypatch.setattr(native, "_loaded", {})
    with pytest.raises(native.NativeBuildError, match=r"cache .*file/cache"):
        native.load(SOURCE, PXD)


def test_the_build_lock_excludes_another_holder(cache: Path) -> None:
    key = native.entry_key(SOURCE, PXD)
    with native.build_lock(cache, key, wait=False) as held:
        assert held
        # flock locks belong to the open file: a second open conflicts, in this process too
        with native.build_lock(cache, key, wait=False) as again:
            assert not again
    with native.build_lock(cache, key, wait=False) as after:
        assert after  # released with the block


def test_a_waiting_builder_gives_up_after_the_build_timeout(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = native.entry_key(SOURCE, PXD)
    monkeypatch.setattr(native, "BUILD_TIMEOUT_S", 0.3)
    monkeypatch.setattr(native, "LOCK_POLL_S", 0.05)
    waiting = native.build_lock(cache, key, wait=True)
    late = pytest.raises(native.NativeBuildError, match=r"building .* for over 0.3 s")
    with native.build_lock(cache, key, wait=False), late:
        waiting.__enter__()  # raises: the lock stays held past the timeout


def test_a_miss_waits_for_the_process_building_it_and_does_not_build_again(
    cache: Path, no_real_build: list[str]
) -> None:
    key = native.entry_key(SOURCE, PXD)
    holding = threading.Event()

    def other_builder() -> None:  # holds the lock, then leaves a whole entry
        with native.build_lock(cache, key, wait=False) as held:
            assert held
            holding.set()
            time.sleep(0.4)
            fake_entry(cache, key)

    other = threading.Thread(target=other_builder)
    other.start()
    holding.wait(5)
    started = time.monotonic()
    module = native.load(SOURCE, PXD)
    other.join()
    assert time.monotonic() - started >= 0.3  # it waited for the lock
    assert no_real_build == []  # and found the entry built
    assert module.__name__ == f"m_{key[:8]}"


def test_a_miss_with_the_lock_free_builds_once(cache: Path, no_real_build: list[str]) -> None:
    key = native.entry_key(SOURCE, PXD)
    native.load(SOURCE, PXD)
    del native._loaded[key]  # as in a later process: the entry is on disk, not loaded
    native.load(SOURCE, PXD)
    assert no_real_build == [key]


def test_the_check_runs_before_a_build_and_not_on_a_hit(
    cache: Path, no_real_build: list[str]
) -> None:
    key = native.entry_key(SOURCE, PXD)
    checks: list[str] = []
    native.load(SOURCE, PXD, lambda: checks.append("miss"))
    assert checks == ["miss"] and no_real_build == [key]  # checked, then built
    del native._loaded[key]  # a later process: the entry is on disk
    native.load(SOURCE, PXD, lambda: checks.append("hit"))
    assert checks == ["miss"]  # a kept module passed the check when it was built


@pytest.mark.parametrize("check", [None, lambda: None])
def test_a_hit_hashes_the_module_once(
    cache: Path, no_real_build: list[str], monkeypatch: pytest.MonkeyPatch, check: object
) -> None:
    key = native.entry_key(SOURCE, PXD)
    native.load(SOURCE, PXD)
    del native._loaded[key]  # a later process: the entry is on disk
    hashed: list[Path] = []
    real = native.file_sha256

    def counted(path: Path) -> str:
        hashed.append(path)
        return real(path)

    monkeypatch.setattr(native, "file_sha256", counted)
    native.load(SOURCE, PXD, check)  # type: ignore[arg-type]
    assert hashed == [native.module_path(cache / key, key)] and no_real_build == [key]


def test_a_module_that_does_not_load_is_checked_and_built_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whole by its record, yet it does not import: discarded, then (no longer whole) built
    again and loaded."""
    key = native.entry_key(SOURCE, PXD)
    fake_entry(cache, key)
    builds: list[str] = []
    imports: list[str] = []

    def build(root: Path, built: str, source: str, pxd: str) -> None:
        builds.append(built)
        fake_entry(root, built)

    def import_entry(entry: Path, name: str) -> ModuleType:
        imports.append(name)
        if len(imports) == 1:
            raise ImportError("not a module")
        return ModuleType("m")

    monkeypatch.setattr(native, "build", build)
    monkeypatch.setattr(native, "import_entry", import_entry)
    assert native.load(SOURCE, PXD).__name__ == "m"
    assert builds == [key] and imports == [key, key]


def test_a_failed_check_builds_nothing(cache: Path, no_real_build: list[str]) -> None:
    def refuse() -> None:
        raise ValueError("not this text")

    with pytest.raises(ValueError, match="not this text"):
        native.load(SOURCE, PXD, refuse)
    assert no_real_build == [] and native._loaded == {}


@pytest.fixture
def background(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """build_in_background() for the test; Popen records the child's command line."""
    started: list[list[str]] = []

    class FakeChild:
        def __init__(self, argv: list[str], **_kwargs: object) -> None:
            started.append(argv)

        def wait(self) -> int:
            return 0

    monkeypatch.setattr(native, "_background", False)
    native.build_in_background()
    monkeypatch.setattr(subprocess, "Popen", FakeChild)  # imported where used
    return started


def test_in_the_background_a_miss_runs_pure_and_leaves_a_child_to_build(
    cache: Path, background: list[list[str]], no_real_build: list[str]
) -> None:
    key = native.entry_key(SOURCE, PXD)
    with pytest.raises(native.NativeBuildPending, match="built in the background") as info:
        native.load(SOURCE, PXD)
    assert native.BACKGROUND_LOG.format(key=key) in str(info.value)
    assert no_real_build == []  # this process built nothing
    [argv] = background
    assert argv[1:5] == ["-m", "p4emu.backend.native", str(cache), key]
    request = Path(argv[5])
    assert (request / "source.py").read_text(encoding="utf-8") == SOURCE
    # the child's side: it builds the entry and removes the request
    assert native.background_main(argv[3:]) == 0
    assert no_real_build == [key] and not request.exists()
    assert native.load(SOURCE, PXD).__name__ == f"m_{key[:8]}"  # later loads find it


def test_in_the_background_a_build_in_progress_is_not_started_twice(
    cache: Path, background: list[list[str]], no_real_build: list[str]
) -> None:
    key = native.entry_key(SOURCE, PXD)
    building = pytest.raises(native.NativeBuildPending, match="by another process")
    with native.build_lock(cache, key, wait=False), building:
        native.load(SOURCE, PXD)
    assert background == [] and no_real_build == []


def test_the_background_builder_checks_its_request(
    cache: Path, tmp_path: Path, no_real_build: list[str]
) -> None:
    key = native.entry_key(SOURCE, PXD)
    request = tmp_path / "request"
    request.mkdir()
    (request / "source.py").write_text(SOURCE + "# edited\n", encoding="utf-8")
    (request / "declarations.pxd").write_text(PXD, encoding="utf-8")
    assert native.background_main([str(cache), key, str(request)]) == 2  # not its key
    assert no_real_build == [] and not request.exists()
    request.mkdir()
    (request / "source.py").write_text(SOURCE, encoding="utf-8")
    (request / "declarations.pxd").write_text(PXD, encoding="utf-8")
    with native.build_lock(cache, key, wait=False):  # another builder holds it
        assert native.background_main([str(cache), key, str(request)]) == 0
    assert no_real_build == []


def test_a_pending_build_is_said_and_the_program_runs_pure(
    monkeypatch: pytest.MonkeyPatch,
    cache: Path,
    background: list[list[str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv(native.NATIVE_ENV, "1")
    monkeypatch.delenv(hotpath.PURE_ENV, raising=False)  # tests/conftest.py sets it
    monkeypatch.setattr(native, "build_missing", lambda: None)
    monkeypatch.setattr(hotpath, "_generated", {})
    with caplog.at_level(logging.INFO, logger="p4emu.backend"):
        shared = SharedCode(SOURCE, "<pending>", PXD)
    assert shared.how.startswith("pure: first use: its compiled module is being built")
    assert "being built in the background" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # nothing failed
    assert len(background) == 1
    made = shared.make({"base": 1})
    header = made["new"]()
    made["block"](header, None)
    assert header.k == 1


def test_in_the_background_a_failed_check_starts_no_child(
    cache: Path, background: list[list[str]], no_real_build: list[str]
) -> None:
    def refuse() -> None:
        raise ValueError("not this text")

    with pytest.raises(ValueError, match="not this text"):
        native.load(SOURCE, PXD, refuse)
    assert background == [] and no_real_build == []


# ------------------------------------------------------------------ integration: builds

# a child process loading SOURCE: prints the block's result and how many builds it ran
CHILD = (
    "from p4emu.backend import native\n"
    "builds = []\n"
    "real = native.build\n"
    "native.build = lambda *a: (builds.append(1), real(*a))[1]\n"
    f"m = native.load({SOURCE!r}, {PXD!r})\n"
    "made = m.__make__({'base': 7}); h = made['new'](); h.k = 250; made['block'](h, None)\n"
    "print(h.k, len(builds), m.__file__)\n"
)


def child() -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD], cwd=ROOT, env=dict(os.environ),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def load_in_child() -> tuple[int, int, str]:
    """(the block's result, builds run, the module's file) of a fresh process."""
    proc = child()
    out, err = proc.communicate(timeout=native.BUILD_TIMEOUT_S)
    assert proc.returncode == 0, err[-2000:]
    k, builds, path = out.split()
    return int(k), int(builds), path


@pytest.mark.integration
@needs_build
def test_a_miss_builds_then_a_hit_loads_without_building(cache: Path) -> None:
    key = native.entry_key(SOURCE, PXD)
    assert load_in_child()[:2] == ((250 + 7) & 255, 1)  # a miss: built
    assert native.entry_ok(cache / key, key)
    assert listing(cache) == [key]  # no temporary folder left
    k, builds, path = load_in_child()  # a hit: loaded from the cache
    assert (k, builds) == (1, 0)
    assert Path(path) == native.module_path(cache / key, key)


@pytest.mark.integration
@needs_build
def test_a_corrupt_entry_is_detected_and_rebuilt(cache: Path) -> None:
    key = native.entry_key(SOURCE, PXD)
    load_in_child()
    entry = cache / key
    module = native.module_path(entry, key)
    module.write_bytes(module.read_bytes()[:100])  # truncated: the record no longer matches
    assert load_in_child()[:2] == (1, 1)
    assert native.entry_ok(entry, key)
    # a module matching its record that does not load (written by something else)
    module.write_bytes(b"garbage")
    (entry / native.RECORD).write_text(native.file_sha256(module) + "\n", encoding="ascii")
    assert load_in_child()[:2] == (1, 1)
    assert native.entry_ok(entry, key) and module.stat().st_size > 1000
    assert listing(cache) == [key]  # the bad entries are gone


@pytest.mark.integration
@needs_build
def test_concurrent_writers_leave_one_whole_entry(cache: Path) -> None:
    writers = [child() for _ in range(3)]
    for writer in writers:
        out, err = writer.communicate(timeout=native.BUILD_TIMEOUT_S)
        assert writer.returncode == 0, err[-2000:]
        assert out.split()[0] == "1"
    key = native.entry_key(SOURCE, PXD)
    assert listing(cache) == [key]
    assert native.entry_ok(cache / key, key)


@pytest.mark.integration
@needs_build
def test_a_background_build_is_loaded_by_the_next_process(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = native.entry_key(SOURCE, PXD)
    monkeypatch.setattr(native, "_background", False)
    native.build_in_background()
    with pytest.raises(native.NativeBuildPending):
        native.load(SOURCE, PXD)  # returns at once: this process runs pure
    deadline = time.monotonic() + native.BUILD_TIMEOUT_S
    while not native.entry_ok(cache / key, key):
        assert time.monotonic() < deadline, (
            cache / native.BACKGROUND_LOG.format(key=key)
        ).read_text()
        time.sleep(0.5)
    assert load_in_child()[:2] == (1, 0)  # the next process loads it, building nothing
    log = (cache / native.BACKGROUND_LOG.format(key=key)).read_text(encoding="utf-8")
    assert f"built {cache / key}" in log


PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> kind; bit<8> k; bit<8> v; bit<8> seen; }
struct headers_t { h_t h; }
struct meta_t { bit<8> unused; }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control Ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<8>>(4) last;
    action set(bit<9> port, bit<8> v) { sm.egress_spec = port; hdr.h.v = v + hdr.h.k; }
    action drop() { mark_to_drop(sm); }
    table t { key = { hdr.h.k: exact; } actions = { set; drop; } default_action = drop(); }
    apply { last.read(hdr.h.seen, 0); last.write(0, hdr.h.k); t.apply(); }
}
control Eg(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
"""


def _forward(native_env: str) -> tuple[str, list[tuple[int, bytes]]]:
    os.environ[native.NATIVE_ENV] = native_env
    try:
        switch = Switch(load_program_text(PROGRAM, f"native-{native_env}.p4"), clock=VirtualClock())
    finally:
        del os.environ[native.NATIVE_ENV]
    set_id = switch.objects.actions["Ing.set"].id
    switch.objects.tables["Ing.t"].insert([Exact(5)], set_id, [3, 250])
    for k in (5, 6, 5):
        switch.inject(1, bytes([0, k, 0, 0]) + b"payload")
    assert switch.program.shared is not None
    return switch.program.shared.how, switch.collect()


@pytest.mark.integration
@needs_build
def test_a_compiled_program_forwards_as_its_pure_module(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(hotpath.PURE_ENV, raising=False)  # tests/conftest.py sets it
    how, compiled = _forward("1")
    assert how == "compiled"
    how, pure = _forward("0")
    assert how == f"pure: ${native.NATIVE_ENV}=0"
    assert compiled == pure
    assert compiled == [
        (3, bytes([0, 5, 255, 0]) + b"payload"),
        (3, bytes([0, 5, 255, 6]) + b"payload"),  # seen: the dropped k=6
    ]


# a generated standard metadata deriving from the runtime's, and a block reading it
DERIVED = textwrap.dedent(
    """\
    from p4emu.backend.rt import StandardMetadata
    class S1_sm_t(StandardMetadata):
        __slots__ = ('site',)
    def f(s: S1_sm_t):
        return EXPR
    """
)
DERIVED_CLASSES = {"S1_sm_t": [(name, None) for name in (*rt.STANDARD_METADATA_FIELDS, "site")]}
DERIVED_CANDIDATES = {
    "S1_sm_t": {
        **{name: (0, 1 << 9) for name in rt.STANDARD_METADATA_FIELDS if name != "parser_error"},
        "site": (0, 1 << 12),
    }
}


def test_a_derived_class_declares_only_its_own_fields(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The standard metadata derives from rt.StandardMetadata: its .pxd names that base
    and declares only the fields beyond it; without the native runtime (no extension
    type to derive from) it cannot be built."""
    source = DERIVED.replace("EXPR", "s.egress_spec + s.site")
    bases = {"S1_sm_t": "StandardMetadata"}
    with pytest.raises(native.NativeBuildError, match="needs the native runtime"):
        native.declarations(DERIVED_CLASSES, runtime=False, bases=bases)
    monkeypatch.setattr(native, "runtime_native", lambda: True)
    pxd = native.program_declarations(source, DERIVED_CLASSES, DERIVED_CANDIDATES, bases)
    assert "cdef class S1_sm_t(StandardMetadata):\n    cdef public long long site\n" in pxd
    assert "egress_spec" not in pxd
    # the bases are part of the kept declarations' key
    plain = native.declarations_key(source, DERIVED_CLASSES, DERIVED_CANDIDATES, True)
    assert plain != native.declarations_key(
        source, DERIVED_CLASSES, DERIVED_CANDIDATES, True, bases
    )


def test_a_derived_class_whose_inherited_fields_are_not_proven_is_not_built(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The base holds its fields in C whatever the text does: an operation that may
    leave 64 bits on one (the proof would keep it a Python object, which the base cannot)
    refuses the native build, and the pure module runs."""
    monkeypatch.setattr(native, "runtime_native", lambda: True)
    source = DERIVED.replace("EXPR", "s.ingress_global_timestamp << 60")
    candidates = {"S1_sm_t": {**DERIVED_CANDIDATES["S1_sm_t"]}}
    candidates["S1_sm_t"]["ingress_global_timestamp"] = (0, 1 << 48)
    with pytest.raises(native.NativeBuildError, match="ingress_global_timestamp are not proven"):
        native.program_declarations(
            source, DERIVED_CLASSES, candidates, {"S1_sm_t": "StandardMetadata"}
        )
