"""Checked programs kept on disk, keyed by the sha256 of everything they are made from.

:func:`load_cached` (``p4emu.frontend.load_checked``) gives what
:func:`p4emu.frontend.load_program` gives for a program
loaded without include directories or defines, but keeps the checked program (pickled) in
``$MRC_TESTBED_P4_CACHE/checked/<key>.pickle`` (the generated modules' cache root,
p4emu.backend.native; ``~/.cache/mrc-testbed/p4emu`` when unset), so a process that loads
an unchanged program again skips the preprocessor, parser and type checker, and does not
even import them. ``key`` is the sha256 of the entry format, the Python version, the front
end's own code and its ``core.p4``/``v1model.p4`` (:func:`frontend_digest`), the path as
given and resolved, and every file the program's quoted includes reach, by resolved path
and content (:func:`program_files`). A program whose loading read any other file (an
include named by a macro) is not kept.

Robustness, as the generated modules' cache: an entry is written to a temporary file and
renamed into place in one step (concurrent writers: the last rename wins, each entry
whole); an entry is a line with the sha256 of its pickle, then the pickle: one that does
not match, does not unpickle or is not a checked program is deleted and the program
loaded again; a cache that cannot be written (read-only, not a directory) is skipped and
the program loaded each time. Errors are never kept: a program that does not load raises
exactly what :func:`~p4emu.frontend.load_program` raises.

An entry also keeps what later stages made from the checked program (its *companions*:
:func:`companion`, :func:`keep_companion`), pickled with it in one pickle so that they refer
to the program's own nodes: the control-plane model (p4emu.p4info.extract) and the code
generated from it (p4emu.backend.program), each in a named slot with the digest of the
code that made it; a slot whose digest is not the caller's is a miss, and keeping a value
again replaces the slot and rewrites the entry (same rename). Only a checked program that
came from (or went into) the cache has companions.

A pickle runs code when it is read: the cache folder must be writable only by its owner,
as the generated modules' cache (which holds native code) must be.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import logging
import os
import pickle
import re
import stat
import struct
import sys
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from p4emu.frontend.ast import CheckedProgram
from p4emu.frontend.source import MAX_TOTAL_SOURCE_BYTES

log = logging.getLogger("p4emu.frontend")

CACHE_ENV = "MRC_TESTBED_P4_CACHE"
"""The cache root, shared with the generated modules (p4emu.backend.native)."""
SUBDIR = "checked"
#: bumped whenever what an entry holds changes (old entries are then never looked up)
FORMAT = "p4emu-checked-2"
SUFFIX = ".pickle"
PICKLE_PROTOCOL = 5
MAX_KEYED_FILES = 1024
"""Most files :func:`program_files` follows (the preprocessor's ``MAX_INCLUDES``)."""
MAX_KEYED_BYTES = MAX_TOTAL_SOURCE_BYTES
"""Most bytes of source :func:`program_files` reads (the preprocessor's total limit)."""

_FRONTEND_DIR = Path(__file__).resolve().parent
_P4EMU_DIR = _FRONTEND_DIR.parent
BUILTIN_DIR = _P4EMU_DIR / "include"
# the same folders as strings: the keys are worked out with os.path on str (pathlib's
# parsing, joining and ordering were most of their Python), to the same digests
_FRONTEND_STR = str(_FRONTEND_DIR)
_P4EMU_STR = str(_P4EMU_DIR)
_BUILTIN_STR = str(BUILTIN_DIR)
#: the errors ``Path.is_file`` answers False for (3.11's ``pathlib._IGNORED_ERRNOS``);
#: any other one it raises, and so does :func:`_is_file`
_IGNORED_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)
_QUOTED_INCLUDE = re.compile(rb'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
_digest: str | None = None
_lock = threading.Lock()
#: the entry and companions of each checked program read from or written to the cache
_kept: weakref.WeakKeyDictionary[CheckedProgram, tuple[Path, dict[str, tuple[str, Any]]]] = (
    weakref.WeakKeyDictionary()
)


def p4emu_cache_root() -> Path:
    """p4emu's cache folder (checked programs here, generated modules in
    p4emu.backend.native): ``$MRC_TESTBED_P4_CACHE``, else the XDG cache folder's."""
    value = os.environ.get(CACHE_ENV, "")
    if value:
        return Path(value)
    base = os.environ.get("XDG_CACHE_HOME", "") or str(Path.home() / ".cache")
    return Path(base) / "mrc-testbed" / "p4emu"


def cache_root() -> Path:
    """Where checked programs live: :func:`p4emu_cache_root`'s ``checked`` folder."""
    return p4emu_cache_root() / SUBDIR


def frontend_digest() -> str:
    """The sha256 of what makes a checked program besides its source: the front end's
    modules, ``p4emu/exceptions.py`` (which they import) and the bundled system includes
    (computed once per process)."""
    global _digest
    if _digest is None:
        digest = hashlib.sha256()
        # sorted(_FRONTEND_DIR.rglob("*.py")): every entry whose name matches "*.py"
        below = _names_below(_FRONTEND_STR, lambda name: name.endswith(".py"))
        files = [*sorted(below, key=_path_order), os.path.join(_P4EMU_STR, "exceptions.py")]
        builtin = [os.path.join(_BUILTIN_STR, name) for name in os.listdir(_BUILTIN_STR)]
        files += sorted((path for path in builtin if _is_file(path)), key=_path_order)
        start = len(_P4EMU_STR) + 1  # each is below p4emu's folder: its name relative to it
        for path in files:
            digest.update(path[start:].encode())
            digest.update(b"\0")
            digest.update(_read_bytes(path))
            digest.update(b"\0")
        _digest = digest.hexdigest()
    return _digest


def _path_order(path: str) -> list[str]:
    """The order ``sorted`` gives these paths as ``Path`` objects (absolute and
    normalised: by their parts, not as strings, where ``/`` sorts before ``-``)."""
    return path.split("/")


def _is_file(path: str) -> bool:
    """``Path(path).is_file()``: False for a missing path, a broken or looping symlink;
    any other error raised."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError as exc:
        if exc.errno not in _IGNORED_ERRNOS:
            raise
        return False
    except ValueError:  # a NUL in the name
        return False


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _resolve(path: str) -> str:
    """``str(Path(path).resolve())``: ``os.path.realpath``, then the ``RuntimeError``
    pathlib raises for a symlink loop."""
    resolved = os.path.realpath(path)
    try:
        os.stat(resolved)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RuntimeError(f"Symlink loop from {exc.filename!r}") from None
    return resolved


_code_digests: dict[tuple[tuple[Path, ...], tuple[Path, ...], tuple[str, ...]], str] = {}
CODE_SUFFIXES = (".py", ".pxd", ".pyx")
"""The files of a folder :func:`code_digest` covers."""


def entries_below(folder: Path, keep: Callable[[str], bool]) -> list[Path]:
    """The entries below ``folder`` (files, folders, symlinks) whose name ``keep`` takes,
    unsorted: what ``folder.rglob("*")`` gives of them (into no symlinked folder), by
    ``os.walk``, several times quicker than pathlib's globbing and matching
    (tests/p4emu/frontend/test_cache.py)."""
    return [Path(name) for name in _names_below(os.fspath(folder), keep)]


def _names_below(folder: str, keep: Callable[[str], bool]) -> list[str]:
    """:func:`entries_below` as strings."""
    out = []
    for top, dirs, names in os.walk(folder):
        out.extend(os.path.join(top, name) for name in (*dirs, *names) if keep(name))
    return out


def _is_code_name(name: str) -> bool:
    """Whether ``Path(name).suffix`` is one of :data:`CODE_SUFFIXES`."""
    dot = name.rfind(".")
    return 0 < dot < len(name) - 1 and name[dot:] in CODE_SUFFIXES


def code_files(folder: Path) -> list[Path]:
    """The files below ``folder`` whose suffix is one of :data:`CODE_SUFFIXES`, unsorted:
    ``folder.rglob("*")`` filtered by ``suffix`` and ``is_file()`` (a symlink to a file
    counts), by :func:`entries_below`."""
    return [Path(path) for path in _code_names(os.fspath(folder))]


def _code_names(folder: str) -> list[str]:
    """:func:`code_files` as strings."""
    return [path for path in _names_below(folder, _is_code_name) if _is_file(path)]


def code_digest(
    folders: tuple[Path, ...], files: tuple[Path, ...] = (), parts: tuple[str, ...] = ()
) -> str:
    """The sha256 of the Python version, ``parts``, every ``.py``/``.pxd``/``.pyx`` file
    below ``folders`` and ``files`` (by path relative to p4emu's folder, and content):
    the digest a companion is kept under (see module docs). Once per process and
    arguments; raises ``OSError`` when a file cannot be read."""
    key = (folders, files, parts)
    with _lock:
        found = _code_digests.get(key)
    if found is not None:
        return found
    paths = [os.fspath(path) for path in files]
    for folder in folders:
        paths.extend(sorted(_code_names(os.fspath(folder)), key=_path_order))
    digest = hashlib.sha256()
    for part in (sys.version, *parts):
        digest.update(part.encode(errors="surrogateescape"))
        digest.update(b"\0")
    for path in paths:
        digest.update(os.path.relpath(path, _P4EMU_STR).encode(errors="surrogateescape"))
        digest.update(b"\0")
        digest.update(hashlib.sha256(_read_bytes(path)).digest())
    found = digest.hexdigest()
    with _lock:
        _code_digests[key] = found
    return found


def program_files(path: str | Path) -> dict[Path, bytes] | None:
    """The program's file and every file its quoted includes reach (resolved relative to
    the including file, as the preprocessor looks first), by resolved path; None when the
    program cannot be keyed (a file missing or unreadable: loading reports it; more than
    :data:`MAX_KEYED_FILES` files or :data:`MAX_KEYED_BYTES` bytes)."""
    files = _program_files(path)
    return None if files is None else {Path(name): data for name, data in files.items()}


def _program_files(path: str | Path) -> dict[str, bytes] | None:
    """:func:`program_files` by resolved path as a string."""
    try:
        return _follow_includes(_resolve(os.fspath(path)))
    except (OSError, RuntimeError, ValueError):  # unreadable, a symlink loop, a NUL
        return None


def _follow_includes(main: str) -> dict[str, bytes] | None:
    files: dict[str, bytes] = {}
    pending = [main]
    total = 0
    while pending:
        current = pending.pop()
        if current in files:
            continue
        data = _read_bytes(current)
        total += len(data)
        if len(files) >= MAX_KEYED_FILES or total > MAX_KEYED_BYTES:
            return None
        files[current] = data
        for included in _QUOTED_INCLUDE.findall(data):
            candidate = _resolve(os.path.join(os.path.dirname(current), included.decode()))
            if _is_file(candidate):
                pending.append(candidate)
            # one that does not resolve here resolves in the system includes, or is an error
    return files


def entry_key(path: str | Path) -> str | None:
    """The key of the program at ``path`` as it is now (None: not cacheable)."""
    files = _program_files(path)
    if files is None:
        return None
    try:
        front_end = frontend_digest()
    except OSError:  # p4emu's own files unreadable: nothing to key on, load every time
        return None
    digest = hashlib.sha256()
    parts = [FORMAT, sys.version, front_end, str(path), _resolve(os.fspath(path))]
    for part in parts:
        digest.update(part.encode(errors="surrogateescape"))
        digest.update(b"\0")
    for name in sorted(files, key=_path_order):
        digest.update(name.encode(errors="surrogateescape"))
        digest.update(b"\0")
        digest.update(hashlib.sha256(files[name]).digest())
    return digest.hexdigest()


def read_entry(entry: Path) -> CheckedProgram | None:
    """The checked program of a whole entry; None when there is none (a corrupt one is
    deleted). Its companions are kept for :func:`companion`."""
    try:
        data = entry.read_bytes()
    except OSError:
        return None  # none yet (or unreadable: then it cannot be replaced either)
    record, newline, payload = data.partition(b"\n")
    if newline and record == hashlib.sha256(payload).hexdigest().encode():
        try:
            found = pickle.loads(payload)
        except Exception:  # any unpickling failure means a bad entry
            found = None
        if (
            isinstance(found, tuple)
            and len(found) == 2
            and isinstance(found[0], CheckedProgram)
            and isinstance(found[1], dict)
        ):
            _kept[found[0]] = (entry, found[1])
            return found[0]
    log.warning("checked-program cache: %s is corrupt; the program is loaded again", entry)
    with contextlib.suppress(OSError):  # gone already, or the cache is read-only
        entry.unlink()
    return None


class _Pickler(pickle.Pickler):
    """A pickler that also takes ``struct.Struct`` packers (by their format): the
    generated code's header codecs bind their methods (p4emu.backend.program)."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is struct.Struct:
            return struct.Struct, (obj.format,)
        return NotImplemented


def _dumps(value: Any) -> bytes:
    out = io.BytesIO()
    _Pickler(out, protocol=PICKLE_PROTOCOL).dump(value)
    return out.getvalue()


def write_entry(
    entry: Path, checked: CheckedProgram, companions: dict[str, tuple[str, Any]] | None = None
) -> bool:
    """Keep ``checked`` (with ``companions``) as ``entry`` (atomically); False when it
    cannot be kept (the program or a companion does not pickle, or the cache cannot be
    written)."""
    companions = {} if companions is None else companions
    try:
        payload = _dumps((checked, companions))
    except (RecursionError, pickle.PicklingError, TypeError, AttributeError) as exc:
        log.debug("checked-program cache: %s not kept: %s", entry, exc)
        return False
    record = hashlib.sha256(payload).hexdigest().encode()
    import tempfile  # (here: a process whose entries are all hits never writes one)

    temporary: str | None = None
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".write-", suffix=SUFFIX, dir=entry.parent)
        with os.fdopen(handle, "wb") as out:
            out.write(record + b"\n" + payload)
        os.replace(temporary, entry)
    except OSError as exc:
        log.debug("checked-program cache: %s not writable: %s", entry.parent, exc)
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        return False
    _kept[checked] = (entry, companions)
    return True


def companion(checked: CheckedProgram, slot: str, digest: str) -> Any:
    """What :func:`keep_companion` kept in ``slot`` of ``checked``'s entry with the same
    ``digest``; None when there is none (another digest, or a program not from the cache)."""
    with _lock:
        found = _kept.get(checked)
    if found is None:
        return None
    kept = found[1].get(slot)
    if not isinstance(kept, tuple) or len(kept) != 2 or kept[0] != digest:
        return None
    return kept[1]


def keep_companion(checked: CheckedProgram, slot: str, digest: str, value: Any) -> bool:
    """Keep ``value`` in ``slot`` of ``checked``'s entry (see module docs), replacing what
    the slot held; False when ``checked`` has no entry or it cannot be rewritten (nothing
    kept then: the entry stays as it was)."""
    with _lock:
        found = _kept.get(checked)
        if found is None:
            return False
        entry, companions = found
        return write_entry(entry, checked, {**companions, slot: (digest, value)})


def keeps(checked: CheckedProgram, path: str | Path) -> bool:
    """Whether every file loading read is keyed: the program's own (:func:`program_files`)
    or a system include."""
    files = program_files(path) or {}
    try:
        read = [Path(name).resolve() for name in checked.source_files]
    except (OSError, RuntimeError, ValueError):
        return False
    return all(name in files or name.parent == BUILTIN_DIR for name in read)


def load_cached(
    path: str | Path, load_program: Callable[[str | Path], CheckedProgram]
) -> CheckedProgram:
    """``load_program(path)`` (:func:`p4emu.frontend.load_program`: no include
    directories, no defines), from the cache when it holds the program as it is now (see
    module docs)."""
    key = entry_key(path)
    if key is None:
        return load_program(path)
    entry = cache_root() / (key + SUFFIX)
    with _lock:
        found = read_entry(entry)
    if found is not None:
        return found
    checked = load_program(path)
    # kept only if nothing changed while it loaded and no file read escaped the key
    if keeps(checked, path) and entry_key(path) == key:
        with _lock:
            write_entry(entry, checked)
    return checked
