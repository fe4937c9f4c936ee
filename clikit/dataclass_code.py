"""The methods :mod:`dataclasses` generates, compiled once and kept between processes.

Every ``@dataclass`` makes its ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__setattr__``/``__delattr__``, ``__hash__``...) by writing their Python text and
``exec``-ing it: Python compiles that text each time a process defines the class. A
virtual-fabric process defines about 270 dataclasses before its run (the P4 front end's
AST and types, the topologies, the runtime's objects...), and compiling their methods was
about a third of its start-up's CPU (docs/virtual-fabric.md, "Start-up, round 3").

:func:`install` (run by :mod:`clikit.hotpath`, which every package with a compiled module
imports first) gives :mod:`dataclasses` an ``exec`` of its own: the very text it wrote is
looked up (by its sha256) in a table of marshalled code objects read from the cache file,
and compiled (exactly as ``exec`` compiles a string: file name ``<string>``, no
``__future__`` flag inherited) only when it is not there; the code object is then executed
with the globals and locals :mod:`dataclasses` gave. The key is the whole text's digest,
so a hit is the code that text compiles to: same functions, same classes, nothing else
changes. Each entry is unmarshalled when it is used: the table itself is held as bytes. Texts compiled by this
process are added to the file when it exits (:func:`flush`, also called by a process that
leaves with ``os._exit``).

On Python 3.11 :func:`install` also gives :mod:`dataclasses` :func:`fast_is_type`, its own
``_is_type`` with each annotation string's parse remembered (the same steps otherwise, the
same answers): with string annotations every field asks it three times.

The file: ``dataclasses/<cache tag>-<bytecode magic>.marshal`` under the project's cache
root (``$MRC_TESTBED_P4_CACHE``, else ``$XDG_CACHE_HOME/mrc-testbed/p4emu``, as p4emu's
checked programs and generated modules), a :mod:`marshal` of ``{sha256 of the text:
marshal of its code}``. One that is missing, unreadable, or not such a table is ignored
(an entry that does not unmarshal to code is compiled again and replaced) (and replaced by the next write); a
cache folder that cannot be written is skipped. Writes go to a temporary file renamed into
place (concurrent writers: the last rename wins, each file whole). At most
:data:`MAX_ENTRIES` entries are kept: past that, a write keeps only those this process
used. As for the other entries of that folder (pickles, native modules), whoever can
write it can run code in the project's processes: it must be writable only by its owner.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import hashlib
import importlib.util
import marshal
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any

CACHE_ENV = "MRC_TESTBED_P4_CACHE"
"""The project's cache root (p4emu.frontend.cache.p4emu_cache_root names the same)."""
SUBDIR = "dataclasses"
MAX_ENTRIES = 2048
"""Most entries the file keeps: a virtual-fabric process uses about 820 (0.7 MB of file,
held in memory as it is), a test run more."""
KEY_BYTES = 32

_lock = threading.Lock()
_codes: dict[bytes, bytes] | None = None  # read from the file on first use
_used: set[bytes] = set()  # keys looked up by this process
_new: dict[bytes, bytes] = {}  # entries this process compiled
_stats = {"hits": 0, "compiled": 0}


def cache_file() -> Path:
    """This interpreter's file (see module docs)."""
    value = os.environ.get(CACHE_ENV, "")
    if value:
        root = Path(value)
    else:
        base = os.environ.get("XDG_CACHE_HOME", "") or str(Path.home() / ".cache")
        root = Path(base) / "mrc-testbed" / "p4emu"
    tag = sys.implementation.cache_tag or sys.implementation.name
    return root / SUBDIR / f"{tag}-{importlib.util.MAGIC_NUMBER.hex()}.marshal"


def _read() -> dict[bytes, bytes]:
    try:
        data = cache_file().read_bytes()
        table = marshal.loads(data)
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(table, dict) or not all(
        type(key) is bytes and len(key) == KEY_BYTES and type(blob) is bytes
        for key, blob in table.items()
    ):
        return {}
    return table


def text_key(text: str) -> bytes:
    """A text's key in the table: the sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode()).digest()


def code_for(text: str) -> CodeType:
    """The code object ``exec(text)`` would run: from the table, else compiled now (and
    an entry that does not unmarshal to a code object is replaced)."""
    global _codes
    key = text_key(text)
    with _lock:
        if _codes is None:
            _codes = _read()
        _used.add(key)
        blob = _codes.get(key)
        if blob is not None:
            try:
                code = marshal.loads(blob)
            except (ValueError, EOFError, TypeError):
                code = None
            if type(code) is CodeType:
                _stats["hits"] += 1
                return code
        code = compile(text, "<string>", "exec", dont_inherit=True)
        _codes[key] = _new[key] = marshal.dumps(code)
        _stats["compiled"] += 1
        return code


def cached_exec(source: Any, globals: dict[str, Any] | None = None, locals: Any = None, /) -> None:
    """``exec`` for :mod:`dataclasses`: a string's code comes from :func:`code_for`; the
    globals and locals default, as ``exec``'s, to those of the frame calling it."""
    if globals is None:
        frame = sys._getframe(1)
        globals = frame.f_globals
        if locals is None:
            locals = frame.f_locals
    if type(source) is str:
        source = code_for(source)
    builtins.exec(source, globals, locals)


def flush() -> bool:
    """Add the texts this process compiled to the file (see module docs); True if written."""
    with _lock:
        if not _new:
            return False
        table = _read()
        table.update(_new)
        if len(table) > MAX_ENTRIES:
            table = {key: blob for key, blob in table.items() if key in _used}
        import tempfile  # (here: a process that compiled nothing new never needs it)

        path = cache_file()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        except OSError:
            return False
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(marshal.dumps(table))
            os.replace(temporary, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            return False
        _new.clear()
        return True


#: :func:`fast_is_type`'s parse of each annotation string: (module name or None, name),
#: or () where the pattern does not match; at most :data:`MAX_ANNOTATIONS` kept
_annotation_parts: dict[str, tuple[str | None, str] | tuple[()]] = {}
MAX_ANNOTATIONS = 8192
#: Python's own ``dataclasses._is_type``, which :func:`install` replaces on the version
#: whose code :func:`fast_is_type` repeats (None elsewhere: nothing replaced)
_REAL_IS_TYPE = dataclasses.__dict__.get("_is_type") if sys.version_info[:2] == (3, 11) else None


def fast_is_type(
    annotation: str,
    cls: type,
    a_module: Any,
    a_type: Any,
    is_type_predicate: Callable[[Any, Any], bool],
) -> bool:
    """``dataclasses._is_type`` of Python 3.11 (whether the string annotation
    ``annotation`` names ``a_type`` of ``a_module``: a ``ClassVar``, ``InitVar`` or
    ``KW_ONLY`` written as a string, as ``from __future__ import annotations`` makes every
    annotation), the same steps and answers, with the pattern's match of each annotation
    string remembered: :mod:`dataclasses` asks three times per field (about 3,000 times
    in a virtual-fabric process, 10 k instructions each, mostly the pattern and its
    groups). What the answer depends on besides the string (the class's module, its
    names) is looked up at each call, as Python does."""
    parts = _annotation_parts.get(annotation)
    if parts is None:
        match = dataclasses._MODULE_IDENTIFIER_RE.match(annotation)  # type: ignore[attr-defined]
        parts = (match.group(1), match.group(2)) if match else ()
        if len(_annotation_parts) < MAX_ANNOTATIONS:
            _annotation_parts[annotation] = parts
    if not parts:
        return False
    module_name, name = parts
    ns = None
    if not module_name:
        ns = sys.modules.get(cls.__module__).__dict__  # type: ignore[union-attr]
    else:
        module = sys.modules.get(cls.__module__)
        if module and module.__dict__.get(module_name) is a_module:
            ns = sys.modules.get(a_type.__module__).__dict__  # type: ignore[union-attr]
    return bool(ns and is_type_predicate(ns.get(name), a_module))


def stats() -> dict[str, int]:
    """How many of this process's dataclass methods came from the file, how many compiled."""
    return dict(_stats)


def installed() -> bool:
    return dataclasses.__dict__.get("exec") is cached_exec


def install() -> None:
    """Give :mod:`dataclasses` :func:`cached_exec` (once per process), and write what this
    process compiled when it exits."""
    if not installed():
        import atexit

        dataclasses.exec = cached_exec  # type: ignore[attr-defined]
        if _REAL_IS_TYPE is not None and dataclasses.__dict__.get("_is_type") is _REAL_IS_TYPE:
            dataclasses._is_type = fast_is_type  # type: ignore[attr-defined]
        atexit.register(flush)


def uninstall() -> None:
    """Give :mod:`dataclasses` back the builtin ``exec`` and its own ``_is_type`` (tests)."""
    if installed():
        del dataclasses.exec  # type: ignore[attr-defined]
        if dataclasses.__dict__.get("_is_type") is fast_is_type:
            dataclasses._is_type = _REAL_IS_TYPE  # type: ignore[attr-defined]
