"""The checked-program cache (p4emu.frontend.cache): miss, hit, corrupt, unwritable, and
a key that follows the program's files and the front end."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
from frontend_helpers import v1_source

from p4emu.exceptions import P4SourceError
from p4emu.frontend import ast, cache, load_checked, load_program

INCLUDE = "#define WIDTH 8\nconst bit<WIDTH> LIMIT = 7;\n"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache" / cache.SUBDIR


def write_program(directory: Path, include: str = INCLUDE) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "inc.p4").write_text(include, encoding="utf-8")
    main = directory / "main.p4"
    main.write_text(
        v1_source(decls='#include "inc.p4"', ingress="meta.x = LIMIT;"), encoding="utf-8"
    )
    return main


class Loads:
    """``load_program``, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, path: str | Path) -> ast.CheckedProgram:
        self.calls += 1
        return load_program(path)


def shape(checked: ast.CheckedProgram) -> tuple[object, ...]:
    """What a later stage reads of a checked program, in comparable form."""
    return (
        [type(d).__name__ for d in checked.program.declarations],
        sorted(checked.blocks),
        sorted(checked.types),
        checked.constants,
        checked.source_files,
        checked.warnings,
        [type(n).__name__ for n in ast.walk(checked.ingress.decl)],
    )


def test_root_follows_the_environment(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache.cache_root() == root
    monkeypatch.delenv(cache.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", "/x")
    assert cache.cache_root() == Path("/x/mrc-testbed/p4emu/checked")


def test_miss_keeps_the_program_and_a_hit_does_not_load_it(root: Path, tmp_path: Path) -> None:
    main = write_program(tmp_path / "prog")
    loads = Loads()
    first = cache.load_cached(main, loads)
    assert loads.calls == 1
    entries = list(root.iterdir())
    assert [e.name for e in entries] == [f"{cache.entry_key(main)}{cache.SUFFIX}"]
    second = cache.load_cached(main, loads)
    assert loads.calls == 1  # from the entry
    assert second is not first
    assert shape(second) == shape(first) == shape(load_program(main))
    assert second.constants["LIMIT"] == 7


def test_public_load_checked_uses_the_cache(root: Path, tmp_path: Path) -> None:
    main = write_program(tmp_path / "prog")
    assert shape(load_checked(main)) == shape(load_program(main))
    assert len(list(root.glob(f"*{cache.SUFFIX}"))) == 1


def test_a_changed_include_is_another_entry(root: Path, tmp_path: Path) -> None:
    main = write_program(tmp_path / "prog")
    loads = Loads()
    cache.load_cached(main, loads)
    write_program(tmp_path / "prog", INCLUDE.replace("= 7", "= 9"))
    changed = cache.load_cached(main, loads)
    assert loads.calls == 2
    assert changed.constants["LIMIT"] == 9
    assert len(list(root.iterdir())) == 2


def test_the_key_covers_the_front_end(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    main = write_program(tmp_path / "prog")
    key = cache.entry_key(main)
    monkeypatch.setattr(cache, "_digest", "another front end")
    assert cache.entry_key(main) not in (None, key)


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-10],  # cut short
        lambda data: b"0" * 64 + data[64:],  # record does not match
        lambda data: b"no record",
    ],
)
def test_a_corrupt_entry_is_loaded_again_and_replaced(
    root: Path, tmp_path: Path, damage: object
) -> None:
    main = write_program(tmp_path / "prog")
    loads = Loads()
    cache.load_cached(main, loads)
    (entry,) = root.iterdir()
    good = entry.read_bytes()
    entry.write_bytes(damage(good))  # type: ignore[operator]
    again = cache.load_cached(main, loads)
    assert loads.calls == 2
    assert shape(again) == shape(load_program(main))
    assert cache.read_entry(entry) is not None  # whole again
    cache.load_cached(main, loads)
    assert loads.calls == 2


def test_an_entry_that_is_not_a_checked_program_is_refused(root: Path, tmp_path: Path) -> None:
    main = write_program(tmp_path / "prog")
    entry = root / f"{cache.entry_key(main)}{cache.SUFFIX}"
    root.mkdir(parents=True)
    payload = pickle.dumps({"not": "a program"})
    import hashlib

    entry.write_bytes(hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    loads = Loads()
    cache.load_cached(main, loads)
    assert loads.calls == 1
    assert isinstance(cache.read_entry(entry), ast.CheckedProgram)


def test_an_unwritable_cache_falls_back_to_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder", encoding="utf-8")
    monkeypatch.setenv(cache.CACHE_ENV, str(blocker))
    main = write_program(tmp_path / "prog")
    loads = Loads()
    first = cache.load_cached(main, loads)
    second = cache.load_cached(main, loads)
    assert loads.calls == 2
    assert shape(first) == shape(second) == shape(load_program(main))
    assert blocker.read_text(encoding="utf-8") == "a file, not a folder"
    assert not list(tmp_path.glob("blocker*/**/.write-*"))


def test_errors_are_raised_as_by_load_program_and_not_kept(root: Path, tmp_path: Path) -> None:
    main = write_program(tmp_path / "prog")
    main.write_text(v1_source(ingress="meta.x = NOPE;"), encoding="utf-8")
    with pytest.raises(P4SourceError) as direct:
        load_program(main)
    with pytest.raises(P4SourceError) as cached:
        load_checked(main)
    assert str(cached.value) == str(direct.value)
    assert not root.exists() or not list(root.iterdir())


def test_a_missing_program_raises_as_load_program(root: Path, tmp_path: Path) -> None:
    with pytest.raises(P4SourceError) as direct:
        load_program(tmp_path / "gone.p4")
    with pytest.raises(P4SourceError) as cached:
        load_checked(tmp_path / "gone.p4")
    assert str(cached.value) == str(direct.value)


@pytest.mark.parametrize("broken", ["include is a folder", "program is a folder"])
def test_a_broken_program_raises_as_load_program(root: Path, tmp_path: Path, broken: str) -> None:
    main = write_program(tmp_path / "prog")
    target = main.parent / "inc.p4" if broken == "include is a folder" else main
    target.unlink()
    target.mkdir()
    if target == main:
        assert cache.program_files(main) is None  # nothing to key: loaded as it is
    with pytest.raises(P4SourceError) as direct:
        load_program(main)
    with pytest.raises(P4SourceError) as cached:
        load_checked(main)
    assert str(cached.value) == str(direct.value)
    assert not root.exists()


def test_a_file_read_outside_the_key_is_not_kept(root: Path, tmp_path: Path) -> None:
    main = write_program(tmp_path / "prog")
    stray = tmp_path / "elsewhere.p4"
    stray.write_text("// read by a loader the key does not follow\n", encoding="utf-8")

    def reads_more(path: str | Path) -> ast.CheckedProgram:
        checked = load_program(path)
        checked.source_files.append(str(stray))
        return checked

    checked = cache.load_cached(main, reads_more)
    assert str(stray) in checked.source_files
    assert not cache.keeps(checked, main)
    assert cache.keeps(load_program(main), main)
    assert not root.exists() or not list(root.iterdir())


def test_companions_are_kept_with_the_entry(root: Path, tmp_path: Path) -> None:
    main = write_program(tmp_path / "prog")
    first = cache.load_cached(main, Loads())
    assert cache.companion(first, "slot", "d1") is None
    # the value refers to the program's own nodes: read back, it refers to the new copy's
    value = {"ingress": first.ingress, "n": 1}
    assert cache.keep_companion(first, "slot", "d1", value)
    assert cache.companion(first, "slot", "d1") == value
    assert cache.keep_companion(first, "other", "d1", b"bytes")
    loads = Loads()
    again = cache.load_cached(main, loads)
    assert loads.calls == 0 and again is not first
    found = cache.companion(again, "slot", "d1")
    assert found["n"] == 1 and found["ingress"] is again.ingress
    assert cache.companion(again, "other", "d1") == b"bytes"
    assert cache.companion(again, "slot", "d2") is None  # kept by other code: a miss
    # keeping a slot again replaces it (one value per slot, whatever its digest)
    assert cache.keep_companion(again, "slot", "d2", "new")
    third = cache.load_cached(main, loads)
    assert cache.companion(third, "slot", "d1") is None
    assert cache.companion(third, "slot", "d2") == "new"
    assert cache.companion(third, "other", "d1") == b"bytes"
    assert len(list(root.glob(f"*{cache.SUFFIX}"))) == 1


def test_a_program_not_from_the_cache_has_no_companions(root: Path, tmp_path: Path) -> None:
    main = write_program(tmp_path / "prog")
    checked = load_program(main)
    assert not cache.keep_companion(checked, "slot", "d", 1)
    assert cache.companion(checked, "slot", "d") is None
    assert not root.exists()


def test_a_companion_that_does_not_pickle_leaves_the_entry(root: Path, tmp_path: Path) -> None:
    main = write_program(tmp_path / "prog")
    checked = cache.load_cached(main, Loads())
    assert cache.keep_companion(checked, "slot", "d", 1)
    assert not cache.keep_companion(checked, "slot", "d", lambda: None)
    assert cache.companion(checked, "slot", "d") == 1
    assert cache.companion(cache.load_cached(main, Loads()), "slot", "d") == 1


def test_struct_packers_are_kept(root: Path, tmp_path: Path) -> None:
    import struct

    main = write_program(tmp_path / "prog")
    checked = cache.load_cached(main, Loads())
    packer = struct.Struct(">HB")
    assert cache.keep_companion(checked, "slot", "d", packer.unpack_from)
    unpack = cache.companion(cache.load_cached(main, Loads()), "slot", "d")
    assert unpack(b"\x01\x02\x03") == (258, 3)


def test_code_digest_follows_files_and_parts(tmp_path: Path) -> None:
    folder = tmp_path / "code"
    folder.mkdir()
    (folder / "a.py").write_text("x = 1\n", encoding="utf-8")
    (folder / "notes.txt").write_text("not code\n", encoding="utf-8")
    first = cache.code_digest((folder,))
    assert cache.code_digest((folder,), parts=("other",)) != first
    (folder / "notes.txt").write_text("still not code\n", encoding="utf-8")
    cache._code_digests.clear()
    assert cache.code_digest((folder,)) == first
    (folder / "a.pxd").write_text("cdef int x\n", encoding="utf-8")
    cache._code_digests.clear()
    assert cache.code_digest((folder,)) != first


def test_code_files_are_what_rglob_finds(tmp_path: Path) -> None:
    """:func:`cache.code_files` lists what ``rglob("*")`` filtered by suffix and
    ``is_file()`` does (the digest's files, so a kept template's key, unchanged): dot
    files, a name that is only a suffix, a folder named like code, symlinks to a file, to
    a folder (not followed) and to nothing, on the real p4emu folders too."""
    folder = tmp_path / "code"
    (folder / "sub" / "deeper").mkdir(parents=True)
    (folder / "dir.py").mkdir()
    (folder / "dir.py" / "inner.pyx").write_text("", encoding="utf-8")
    for name in ("a.py", ".hidden.pxd", ".py", "b.pyc", "c.txt", "sub/d.pxd", "sub/deeper/e.py"):
        (folder / name).write_text("", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.py").write_text("", encoding="utf-8")
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    (folder / "link.py").symlink_to(folder / "a.py")
    (folder / "broken.py").symlink_to(tmp_path / "missing.py")

    def by_rglob(root: Path) -> list[Path]:
        return sorted(p for p in root.rglob("*") if p.suffix in cache.CODE_SUFFIXES and p.is_file())

    found = sorted(cache.code_files(folder))
    assert found == by_rglob(folder)
    assert [p.relative_to(folder).as_posix() for p in found] == [
        ".hidden.pxd", "a.py", "dir.py/inner.pyx", "link.py", "sub/d.pxd", "sub/deeper/e.py"
    ]  # fmt: skip
    p4emu_dir = Path(cache.__file__).resolve().parent.parent
    for package in ("backend", "runtime", "p4info", "frontend"):
        assert sorted(cache.code_files(p4emu_dir / package)) == by_rglob(p4emu_dir / package)
    # the front end's digest lists entries as rglob("*.py") does (a folder named so too)
    for root in (folder, p4emu_dir / "frontend"):
        below = cache.entries_below(root, lambda name: name.endswith(".py"))
        assert sorted(below) == sorted(root.rglob("*.py"))
    assert folder / "dir.py" in cache.entries_below(folder, lambda name: name.endswith(".py"))


def _pathlib_program_files(path: Path) -> dict[Path, bytes]:
    """The program's files as the key took them with pathlib (sessions 12-27)."""
    files: dict[Path, bytes] = {}
    pending = [path.resolve()]
    while pending:
        current = pending.pop()
        if current in files:
            continue
        files[current] = current.read_bytes()
        for included in cache._QUOTED_INCLUDE.findall(files[current]):
            candidate = (current.parent / included.decode()).resolve()
            if candidate.is_file():
                pending.append(candidate)
    return files


def _pathlib_entry_key(path: Path, front_end: str) -> str:
    import hashlib
    import sys

    files = _pathlib_program_files(path)
    digest = hashlib.sha256()
    for part in [cache.FORMAT, sys.version, front_end, str(path), str(path.resolve())]:
        digest.update(part.encode(errors="surrogateescape"))
        digest.update(b"\0")
    for name in sorted(files):
        digest.update(str(name).encode(errors="surrogateescape"))
        digest.update(b"\0")
        digest.update(hashlib.sha256(files[name]).digest())
    return digest.hexdigest()


def _pathlib_frontend_digest() -> str:
    import hashlib

    p4emu_dir = Path(cache.__file__).resolve().parent.parent
    files = [*sorted((p4emu_dir / "frontend").rglob("*.py")), p4emu_dir / "exceptions.py"]
    files += sorted(path for path in (p4emu_dir / "include").iterdir() if path.is_file())
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(p4emu_dir).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def _pathlib_code_digest(folders: tuple[Path, ...], files: tuple[Path, ...] = ()) -> str:
    import hashlib
    import os
    import sys

    p4emu_dir = Path(cache.__file__).resolve().parent.parent
    paths = list(files)
    for folder in folders:
        paths.extend(
            sorted(p for p in folder.rglob("*") if p.suffix in cache.CODE_SUFFIXES and p.is_file())
        )
    digest = hashlib.sha256()
    digest.update(sys.version.encode(errors="surrogateescape") + b"\0")
    for path in paths:
        digest.update(os.path.relpath(path, p4emu_dir).encode(errors="surrogateescape"))
        digest.update(b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def test_the_keys_are_those_pathlib_gave(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The keys are worked out on strings (os.path), to the digests pathlib gave: the same
    files in the same order (by path parts: ``a/b`` before ``a-b``, where a string sorts
    ``-`` first), names relative to p4emu's folder, includes resolved through ``..``,
    ``.`` and symlinks; so no entry of anyone's cache is orphaned."""
    from controller.artifacts import DEFAULT_PROGRAM

    monkeypatch.setattr(cache, "_digest", None)
    front_end = cache.frontend_digest()
    assert front_end == _pathlib_frontend_digest()
    prog = tmp_path / "prog"
    (prog / "a").mkdir(parents=True)
    (prog / "a" / "b.p4").write_text('#include "../a-b.p4"\n', encoding="utf-8")
    (prog / "a-b.p4").write_text("const bit<8> X = 1;\n", encoding="utf-8")
    (prog / "linked.p4").symlink_to(prog / "a" / "b.p4")
    (prog / "loop.p4").symlink_to(prog / "loop.p4")
    main = prog / "main.p4"
    main.write_text(
        '#include "a/b.p4"\n#include "./a/../linked.p4"\n#include "missing.p4"\n'
        '#include "loop.p4"\n',
        encoding="utf-8",
    )
    assert cache.program_files(main) is None  # a symlink loop: not keyed, as pathlib had it
    main.write_text(main.read_text(encoding="utf-8").replace('#include "loop.p4"\n', ""))
    for path in (DEFAULT_PROGRAM, main, Path(os.path.relpath(main))):
        assert cache.program_files(path) == _pathlib_program_files(path)
        assert cache.entry_key(path) == _pathlib_entry_key(path, front_end)
    assert [p.name for p in sorted(_pathlib_program_files(main))] == ["b.p4", "a-b.p4", "main.p4"]
    code = tmp_path / "code"
    (code / "a").mkdir(parents=True)
    for name in ("a/b.py", "a-b.py", "a.pxd", ".c.pyx"):
        (code / name).write_text(name, encoding="utf-8")
    p4emu_dir = Path(cache.__file__).resolve().parent.parent
    for folders, files in (
        ((code,), ()),
        (tuple(p4emu_dir / name for name in ("backend", "runtime", "p4info")), ()),
        ((p4emu_dir / "p4info",), (p4emu_dir / "proto.py",)),
    ):
        cache._code_digests.clear()
        assert cache.code_digest(folders, files) == _pathlib_code_digest(folders, files)
