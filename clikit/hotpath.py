"""Which path runs the per-packet code: natively compiled modules or their Python sources.

The modules of the per-packet path (:data:`COMPILED_MODULES`) can be built into native
extension modules (``setup.py``: Cython compiles the ``.py`` sources as they are, with the
system C compiler); the sources stay the reference. The finder installed here (on import:
every package that owns one of these modules imports this module first) decides, per
module, which one Python loads:

- the source, when ``$MRC_TESTBED_PURE`` is set to anything but ``""``/``0`` (the pure
  path forced), when no extension was built, or when the source changed since the
  extension was built (the sha256 of the source in the build record beside the
  extension; the extension would run stale code);
- the extension otherwise, looked for in ``$MRC_TESTBED_NATIVE_DIR`` (a build's
  ``--build-lib``) when set, else beside the source (``pip install``).

A pure layer (:data:`PURE_LAYERS`: ``mrc_wire`` imports no project package, so it cannot
import this module first) has its extensions built under a name Python's own finder does
not look for (``codec.native.cpython-311-x86_64-linux-gnu.so``, :func:`extension_stem`):
imported before this finder is installed, such a module loads from its source, and the
finder then counts it as imported from source, which makes every module load pure
(:func:`imported_early`), so all-or-none holds whatever imports first.

Importing this module also installs :mod:`clikit.dataclass_code` (the dataclasses'
generated methods taken from the cache instead of compiled by every process), as early.

:func:`describe` / :func:`summary` say which path a process runs (the demo, ``run``,
``results.json`` / ``result.json`` and the benchmarks print it). Both paths give the same
event log, byte for byte (``tests/clikit/test_hotpath.py``). docs/virtual-fabric.md,
"Compiled hot path", says what the build (on by default; ``MRC_TESTBED_NATIVE=0`` at
install time skips it) gains and costs.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from clikit import dataclass_code

PURE_ENV = "MRC_TESTBED_PURE"
NATIVE_DIR_ENV = "MRC_TESTBED_NATIVE_DIR"
RECORD_SUFFIX = ".source-sha256"

#: the per-packet modules built natively, the one list (setup.py builds exactly these)
COMPILED_MODULES: tuple[str, ...] = (
    "p4emu.backend.rt",
    "p4emu.runtime.clock",
    "p4emu.runtime.externs",
    "p4emu.runtime.tables",
    "p4emu.runtime.traffic_manager",
    "p4emu.switch",
    "mrc_wire.codec",
    "mrc_wire.frames",
    "nic_emu.congestion",
    "nic_emu.connection.feedback",
    "nic_emu.connection.probes",
    "nic_emu.connection.queue_pair",
    "nic_emu.connection.records",
    "nic_emu.connection.receive",
    "nic_emu.connection.repath",
    "nic_emu.connection.reverse",
    "nic_emu.connection.rtt",
    "nic_emu.connection.timers",
    "nic_emu.connection.transmit",
    "nic_emu.core",
    "nic_emu.ev_set",
    "nic_emu.event_log",
    "nic_emu.mtbytes",
    "nic_emu.nic_host",
    "nic_emu.receiver",
    "nic_emu.sender",
    "nic_emu.streams",
    "vfabric.eventlist",
    "vfabric.nodes",
    "vfabric.wires",
)

#: packages that import no other project package (docs/architecture.md), so not this
#: module either: their extensions carry :data:`HIDDEN_TAG` in their file name
PURE_LAYERS: tuple[str, ...] = ("mrc_wire",)
HIDDEN_TAG = ".native"

ROOT = Path(__file__).resolve().parents[1]

#: listed modules already imported when the finder was installed (:func:`install`)
_early: set[str] = set()


def pure_forced() -> bool:
    return os.environ.get(PURE_ENV, "") not in ("", "0")


#: the results of pure functions of paths and names (no file looked at), as strings: the
#: finder looks at every module once per process, and pathlib's parsing, joining and
#: hashing of ``Path`` objects were most of that look (session 27: strings throughout)
_paths: dict[tuple[str, ...], Any] = {}


def source_of(name: str) -> Path:
    return Path(_source_file(os.fspath(ROOT), name))


def _source_file(root: str, name: str) -> str:
    """``root/pkg/mod.py`` for ``pkg.mod``, as ``ROOT.joinpath(*parts).with_suffix(".py")``
    gives it (no part of a module's name holds a dot: the suffix is appended)."""
    key = ("source", root, name)
    found = _paths.get(key)
    if found is None:
        found = _paths[key] = os.path.join(root, *name.split(".")) + ".py"
    return found  # type: ignore[no-any-return]


def _swap_suffix(path: str, suffix: str) -> str:
    """``os.fspath(Path(path).with_suffix(suffix))`` for a normalised path whose name is
    not empty: pathlib's suffix runs from the name's last dot, unless that dot starts or
    ends the name (tested against pathlib on such names)."""
    key = ("suffix", path, suffix)
    found = _paths.get(key)
    if found is None:
        dot = path.rfind(".")
        has_suffix = path.rfind(os.sep) + 1 < dot < len(path) - 1
        found = _paths[key] = (path[:dot] if has_suffix else path) + suffix
    return found  # type: ignore[no-any-return]


def native_dir() -> Path:
    """Where the extensions are: ``$MRC_TESTBED_NATIVE_DIR``, else beside the sources."""
    value = os.environ.get(NATIVE_DIR_ENV, "")
    return Path(value) if value else ROOT


def extension_stem(name: str) -> str:
    """The path of ``name``'s extension relative to the build, without the suffix:
    ``vfabric/nodes``, or ``mrc_wire/codec.native`` for a module of a pure layer (Python's
    own finder, which looks for ``codec`` + an extension suffix, never loads it)."""
    stem = "/".join(name.split("."))
    return stem + HIDDEN_TAG if name.split(".")[0] in PURE_LAYERS else stem


def extension_of(name: str) -> Path | None:
    """The built extension module of ``name``, if there is one."""
    found = _extension_file(os.fspath(native_dir()), name)
    return None if found is None else Path(found)


def _extension_file(where: str, name: str) -> str | None:
    """:func:`extension_of` in the extensions' folder ``where`` (normalised), a string."""
    key = ("extensions", where, name, *importlib.machinery.EXTENSION_SUFFIXES)
    candidates = _paths.get(key)
    if candidates is None:
        stem = os.path.join(where, *extension_stem(name).split("/"))
        suffixes = importlib.machinery.EXTENSION_SUFFIXES
        candidates = _paths[key] = tuple(stem + suffix for suffix in suffixes)
    for candidate in candidates:
        if _is_file(candidate):
            return candidate  # type: ignore[no-any-return]
    return None


def record_of(extension: Path) -> Path:
    """The build record beside an extension: the sha256 of the source it was built from
    (``setup.py`` writes it; an install copies it with the extension)."""
    return Path(os.fspath(extension) + RECORD_SUFFIX)


#: a ``.pxd``'s cimports (``from pkg.mod cimport T``, ``cimport pkg.mod``) and a pure-mode
#: source's (``from cython.cimports.pkg.mod import T``)
_CIMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?:cython\.cimports\.)?([\w.]+)[ \t]+c?import\b|cimport[ \t]+([\w.]+))",
    re.M,
)


def cimported(source: Path, root: Path | None = None) -> dict[str, Path]:
    """The project's declarations an extension of ``source`` is compiled against besides
    its own ``.pxd``: every module under ``root`` with a ``.pxd`` that its ``.pxd`` (or the
    source, in ``cython.cimports`` form) cimports, and those they cimport in turn, by
    module name. A cimported type's layout is compiled into the importer: one built
    against another version of it fails to import ("size changed")."""
    root_file = os.fspath(ROOT if root is None else root)
    found = _cimported(os.fspath(source), root_file)
    return {name: Path(pxd) for name, pxd in found.items()}


def _cimported(source: str, root: str) -> dict[str, str]:
    """:func:`cimported` on strings."""
    found: dict[str, str] = {}
    own = _swap_suffix(source, ".pxd")
    todo = [own] if _is_file(own) else []
    todo += _declared(source, "cython.cimports.", root)
    seen = {own}
    while todo:
        pxd = todo.pop()
        if pxd != own:
            found[_module_named(pxd, root)] = pxd
        for other in _declared(pxd, "", root):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return dict(sorted(found.items()))


#: (file, its mtime and size, prefix, root) -> what :func:`_declared` found in it outside
#: a look (:func:`describe` asks for every listed module's declarations again)
_declared_cache: dict[tuple[str, int, int, str, str], list[str]] = {}


#: while :func:`choice` looks at every module (:func:`_one_look`): what :func:`_declared`
#: and :func:`_read` found per file, so a ``.pxd`` that many modules cimport is looked at
#: once per look, not once per importer (None outside a look: every call looks again)
_look: dict[tuple[str, str, str], Any] | None = None


@contextmanager
def _one_look() -> Iterator[None]:
    """One look at every listed module: each file stat-ed, parsed and read once in it."""
    global _look
    outer = _look
    if outer is None:
        _look = {}
    try:
        yield
    finally:
        _look = outer


def _module_named(pxd: str, root: str) -> str:
    """The module whose declarations ``pxd`` (below ``root``) holds: what
    :func:`_pxd_named` made it from, else its path below ``root`` with dots."""
    key = ("module", pxd, root)
    found = _paths.get(key)
    if found is None:
        below = Path(pxd).relative_to(root).with_suffix("")
        found = _paths[key] = ".".join(below.parts)
    return found  # type: ignore[no-any-return]


def _pxd_named(root: str, name: str) -> str:
    """Where the declarations of the module ``name`` are below ``root``:
    ``Path(root).joinpath(*name.split(".")).with_suffix(".pxd")`` (pathlib drops a name's
    empty parts; a name of none is ``root`` itself with the suffix)."""
    key = ("pxd", root, name)
    found = _paths.get(key)
    if found is None:
        parts = [part for part in name.split(".") if part]
        found = _paths[key] = _swap_suffix(os.path.join(root, *parts), ".pxd")
        if parts:
            _paths["module", found, root] = ".".join(parts)
    return found  # type: ignore[no-any-return]


def _read_file(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _text_of(data: bytes) -> str:
    """``data`` as ``Path.read_text(encoding="utf-8")`` gives a file of it: decoded, with
    universal newlines (``\r\n`` and a lone ``\r`` read as ``\n``)."""
    text = data.decode("utf-8")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _is_file(path: str) -> bool:
    """``os.path.isfile(path)`` (once per look)."""
    return _once_per_look(path, "\0is_file", os.path.isfile)  # type: ignore[no-any-return]


def _read(path: str) -> bytes:
    """``path``'s bytes (once per look)."""
    return _once_per_look(path, "\0bytes", _read_file)  # type: ignore[no-any-return]


def _once_per_look(path: str, what: str, read: Callable[[str], object]) -> object:
    """``read(path)``, remembered under ``what`` for the rest of the current look (no look:
    read every time)."""
    look = _look
    if look is None:
        return read(path)
    key = (path, what, path)
    found = look.get(key)
    if found is None:
        found = look[key] = read(path)
    return found


def _declared(path: str, prefix: str, root: str) -> list[str]:
    """The ``.pxd`` files under ``root`` of the modules the file ``path`` cimports
    (``prefix``: ``cython.cimports.`` for a pure-mode source's form only). In a look, from
    the bytes the look read (a source's are hashed too: read once)."""
    look = _look
    if look is None:
        return _declared_now(path, prefix, root)
    found = look.get((path, prefix, root))
    if found is None:
        try:
            data = _read(path)
        except FileNotFoundError:
            data = None
        text = "" if data is None else _text_of(data)
        found = look[(path, prefix, root)] = _parse_cimports(text, prefix, root)
    return found  # type: ignore[no-any-return]


def _declared_now(path: str, prefix: str, root: str) -> list[str]:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return []
    key = (path, info.st_mtime_ns, info.st_size, prefix, root)
    if key not in _declared_cache:
        text = _text_of(_read_file(path))
        _declared_cache[key] = _parse_cimports(text, prefix, root)
    return _declared_cache[key]


def _parse_cimports(text: str, prefix: str, root: str) -> list[str]:
    """What ``_CIMPORT.finditer(text)`` finds that cimports (``prefix``: in that form), by
    line: a match lies within one line (its pattern crosses no newline and starts at one
    line's start), so only the lines holding the keyword the match must hold are cut out
    and matched, in order (a large source with no cimport costs one ``find``)."""
    keyword = prefix or "cimport"
    out = []
    at = text.find(keyword)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        if end < 0:
            end = len(text)
        at = text.find(keyword, end)
        match = _CIMPORT.match(text, start, end)
        if match is None:
            continue
        line = match.group(0)
        if prefix and prefix not in line:
            continue
        if not prefix and "cimport" not in line:
            continue
        pxd = _pxd_named(root, match.group(1) or match.group(2))
        if _is_file(pxd):
            out.append(pxd)
    return out


def source_sha256(source: Path, root: Path | None = None) -> str:
    """The sha256 of what an extension is built from: the ``.py`` source and, where there
    is one, the ``.pxd`` beside it (its C types; a changed declaration is a changed build),
    and the project's ``.pxd`` files it cimports (:func:`cimported`: another module's
    changed layout is a changed build too)."""
    return _source_sha256(os.fspath(source), os.fspath(ROOT if root is None else root))


def _source_sha256(source: str, root: str) -> str:
    """:func:`source_sha256` on strings."""
    digest = hashlib.sha256(_read(source))
    declarations = _swap_suffix(source, ".pxd")
    if _is_file(declarations):
        digest.update(b"\0pxd\0" + _read(declarations))
    for name, pxd in _cimported(source, root).items():
        digest.update(b"\0cimport\0" + name.encode() + b"\0" + _read(pxd))
    return digest.hexdigest()


def stale(source: Path, extension: Path) -> bool:
    """Whether ``extension`` was built from another version of ``source``: by its build
    record, or, for a build without one, by modification times (of the source, its
    ``.pxd`` and the declarations it cimports)."""
    return _stale(os.fspath(source), os.fspath(extension), os.fspath(ROOT))


def _stale(source: str, extension: str, root: str) -> bool:
    """:func:`stale` on strings."""
    record = extension + RECORD_SUFFIX
    if _is_file(record):
        recorded = _read_file(record).decode("ascii").strip()
        return recorded != _source_sha256(source, root)
    inputs = [source, *_cimported(source, root).values()]
    declarations = _swap_suffix(source, ".pxd")
    if os.path.isfile(declarations):
        inputs.append(declarations)
    return max(os.stat(path).st_mtime for path in inputs) > os.stat(extension).st_mtime


def own_choice(name: str) -> tuple[str, Path]:
    """``("compiled", extension)`` or ``("pure: REASON", source)`` for ``name`` alone."""
    root = os.fspath(ROOT)
    source = _source_file(root, name)
    if pure_forced():
        return f"pure: ${PURE_ENV} is set", Path(source)
    extension = _extension_file(os.fspath(native_dir()), name)
    if extension is None:
        return "pure: not built (docs/virtual-fabric.md, Compiled hot path)", Path(source)
    if _stale(source, extension, root):
        return "pure: source changed since its native build", Path(source)
    return "compiled", Path(extension)


def imported_early() -> list[str]:
    """The listed modules imported from their source before the finder was installed (a
    pure layer imported first): they stay so in this process, so every module loads pure."""
    return sorted(
        name
        for name in _early
        if not isinstance(
            getattr(getattr(sys.modules.get(name), "__spec__", None), "loader", None),
            importlib.machinery.ExtensionFileLoader,
        )
    )


EARLY_REASON = "imported from its source before clikit.hotpath's finder"

#: ($MRC_TESTBED_PURE, the extensions' folder) -> the first listed module that loads from
#: its source and why ("" when every one can load native): :func:`choice` looks at every
#: module once per process (not once per import), and every later import follows that
#: one verdict, even if a source or a build changes meanwhile
_others: dict[tuple[str, str], str] = {}
#: the same look's :func:`own_choice` of each module (what a later import of it follows,
#: instead of hashing its source and declarations again), set with :data:`_others`
_verdicts: dict[tuple[str, str], dict[str, tuple[str, Path]]] = {}


def choice(name: str) -> tuple[str, Path]:
    """What Python loads for ``name``: its extension only when every listed module can
    load native (:func:`own_choice`), else its source. The typed modules share C types
    (``vfabric.nodes`` calls ``nic_emu.core.NicCore`` as an extension type): one module
    from source beside native others fails to import ("size changed, may indicate binary
    incompatibility"), so the modules load all native or all pure."""
    key = (os.environ.get(PURE_ENV, ""), str(native_dir()))
    if key in _others:  # every module looked at once already: that look is the verdict
        how, where = _verdicts.get(key, {}).get(name) or own_choice(name)
        if how != "compiled":
            return how, where
    else:
        with _one_look():
            how, where = own_choice(name)
            if how != "compiled":
                return how, where
            verdicts = {name: (how, where)}
            for other in COMPILED_MODULES:
                if other not in verdicts:
                    verdicts[other] = own_choice(other)
        _verdicts[key] = verdicts
        _others[key] = next(
            (
                f"{other}: {other_how.removeprefix('pure: ')}"
                for other, (other_how, _) in verdicts.items()
                if other_how != "compiled"
            ),
            "",
        )
    if _others[key]:
        return f"pure: {_others[key]} (all modules load pure together)", source_of(name)
    early = imported_early()
    if early:
        return f"pure: {early[0]}: {EARLY_REASON} (all modules load pure together)", source_of(name)
    return how, where


@contextmanager
def argspecs_once() -> Iterator[None]:
    """For the block: ``inspect.getfullargspec`` computes each callable's spec once and
    then hands out copies (its lists and dicts new each time, as a fresh call's).

    A compiled module whose source declares dataclasses (``mrc_wire.codec``: Cython
    makes them extension types) calls ``dataclasses.field`` for every field at its init,
    and Cython's helper asks ``inspect.getfullargspec(dataclasses.field)`` first, each
    time (which keyword arguments this Python takes): 105 signatures of one function,
    about a fortieth of a virtual-fabric process's start-up in instructions. A spec is a
    function of the callable alone while nothing rebinds it, as nothing does during a
    module's init. Nested blocks (a module whose init imports another) share the outer
    one's table; the function is put back when the outermost block ends (if nothing else
    replaced it meanwhile). A callable that has no spec raises as before, each time."""
    import inspect

    real = inspect.getfullargspec
    if getattr(real, "_argspecs_once", False):
        yield
        return
    found: dict[int, tuple[Any, Any]] = {}

    def getfullargspec(func: Any) -> Any:
        kept = found.get(id(func))
        if kept is None or kept[0] is not func:
            kept = found[id(func)] = (func, real(func))  # the callable kept: no id reused
        spec = kept[1]
        return spec._replace(
            args=list(spec.args),
            kwonlyargs=list(spec.kwonlyargs),
            kwonlydefaults=None if spec.kwonlydefaults is None else dict(spec.kwonlydefaults),
            annotations=dict(spec.annotations),
        )

    getfullargspec._argspecs_once = True  # type: ignore[attr-defined]
    inspect.getfullargspec = getfullargspec
    try:
        yield
    finally:
        if inspect.getfullargspec is getfullargspec:
            inspect.getfullargspec = real


class ExtensionLoader(importlib.machinery.ExtensionFileLoader):
    """Python's loader of an extension module, which runs the module's init under
    :func:`argspecs_once` (the finder's loader of a listed module's extension)."""

    def exec_module(self, module: ModuleType) -> None:
        with argspecs_once():
            super().exec_module(module)


class HotPathFinder:
    """Finds the modules of :data:`COMPILED_MODULES` as :func:`choice` says (a meta path
    finder: ``find_spec`` is all Python asks of one; not an ``importlib.abc.MetaPathFinder``
    subclass, whose import pulls ``importlib.resources`` and ``tempfile`` into every process)."""

    names = frozenset(COMPILED_MODULES)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        how, where = choice(fullname)
        if how == "compiled":
            loader: importlib.machinery.ExtensionFileLoader | importlib.machinery.SourceFileLoader
            loader = ExtensionLoader(fullname, str(where))
        else:
            loader = importlib.machinery.SourceFileLoader(fullname, str(where))
        return importlib.util.spec_from_file_location(fullname, where, loader=loader)


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once per process), noting which listed
    modules were imported before it (:func:`imported_early`)."""
    if not any(isinstance(f, HotPathFinder) for f in sys.meta_path):
        _early.update(name for name in COMPILED_MODULES if name in sys.modules)
        sys.meta_path.insert(0, HotPathFinder())


install()  # on import: the packages of COMPILED_MODULES import this module first
# and, as early, the dataclasses' generated methods from the cache (clikit.dataclass_code)
dataclass_code.install()


#: the generated P4 modules this process loaded: name -> ``compiled`` or ``pure: REASON``
#: (:mod:`p4emu.backend.native` compiles them on first load; p4emu reports here)
_generated: dict[str, str] = {}


def note_generated(name: str, how: str) -> None:
    """Record which path the generated module ``name`` of a P4 program runs."""
    _generated[name] = how


def generated() -> dict[str, Any]:
    """The generated P4 modules loaded so far: how many compiled, how many pure, why."""
    pure = sorted({how.removeprefix("pure: ") for how in _generated.values() if how != "compiled"})
    compiled = sum(how == "compiled" for how in _generated.values())
    return {"compiled": compiled, "pure": len(_generated) - compiled, "why_pure": pure}


def describe() -> dict[str, Any]:
    """Which path this process runs: ``path`` is ``compiled`` (every module native) or
    ``pure`` (every module from source: :func:`choice`); ``why_pure`` gives the reasons
    (one for all, or per module when they differ);
    ``generated_p4`` the P4 programs' generated modules loaded so far (:func:`generated`)."""
    own = {name: own_choice(name)[0] for name in COMPILED_MODULES}
    why = {name: how.removeprefix("pure: ") for name, how in own.items() if how != "compiled"}
    if not why:
        why = {name: EARLY_REASON for name in imported_early()}
    if len(why) == len(COMPILED_MODULES) and len(set(why.values())) == 1:
        reasons = sorted(set(why.values()))  # one reason for all: not built, forced
    else:
        reasons = sorted(f"{name}: {reason}" for name, reason in why.items())
    native = 0 if why else len(COMPILED_MODULES)  # all or none (:func:`choice`)
    return {
        "path": "compiled" if native else "pure",
        "compiled_modules": native,
        "pure_modules": len(COMPILED_MODULES) - native,
        "why_pure": reasons,
        "generated_p4": generated(),
    }


def summary() -> str:
    """One line for a command's output: ``compiled``, or ``pure (REASON)``."""
    info = describe()
    if info["path"] == "compiled":
        text = f"compiled ({info['compiled_modules']} native modules)"
    else:
        text = f"{info['path']} ({'; '.join(info['why_pure'])})"
    gen = info["generated_p4"]
    if gen["compiled"]:
        text += f", generated P4 code compiled ({gen['compiled']} programs)"
    if gen["pure"]:
        text += f", generated P4 code pure ({'; '.join(gen['why_pure'])})"
    return text
