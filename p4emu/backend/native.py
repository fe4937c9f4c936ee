"""The generated module of a P4 program, compiled to native code on first load and cached.

The code generator's output (:class:`p4emu.backend.program.SharedCode`) is plain Python
and stays the reference: ``exec`` runs it on the pure path. When the process runs the
compiled hot path (:mod:`clikit.hotpath`: the native build of p4emu's per-packet
modules is installed and ``$MRC_TESTBED_PURE`` is not set), the same text is compiled
with Cython and the system C compiler instead, beside a declaration file (``.pxd``) that
makes every generated header, struct, union and stack class an extension type
(``cdef class``) whose aggregate fields are typed with their classes; the block
functions' struct parameters carry their classes as annotations, so a field access in
the compiled blocks is a C struct access. Scalar fields stay Python objects (a P4 value
keeps its Python ``int`` arithmetic): both paths give the same results.

The cache: ``$XDG_CACHE_HOME/mrc-testbed/p4emu/<key>/`` (``~/.cache`` when unset;
:data:`CACHE_ENV` overrides the root), where ``key`` is the sha256 of the text, its
declarations, the cache format, the Python ABI and the Cython version. An entry holds
the extension module and a record of its sha256; it is built in a temporary folder and
renamed into place in one step, so concurrent processes never see half an entry. One
process builds a missing entry at a time: it holds ``<root>/.lock-<key>`` (``flock``) while
it builds; another process that misses the same entry waits for that lock, then finds the
entry whole and loads it. An entry whose record is missing or does not match its module,
or that does not import, is moved away and built again. Where no build can run (no C
compiler, no Python headers, no Cython) or a build fails, the program runs its pure module
and :func:`clikit.hotpath.describe` says why.

A process that must not stop for a build (a switch serving P4Runtime: a build takes tens
of seconds) calls :func:`build_in_background` once: a miss then runs the pure module at
once (saying so) and leaves a detached child (``python -m p4emu.backend.native``) to build
the entry, unless another process holds its lock already; later loads find it built.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import re
import shutil
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from clikit import hotpath
from p4emu.backend import rt, wide
from p4emu.backend.exceptions import BackendError
from p4emu.backend.headercodec import NATIVE_PXD
from p4emu.frontend.cache import CACHE_ENV as CACHE_ENV
from p4emu.frontend.cache import p4emu_cache_root
from p4emu.runtime import externs, tables

# subprocess and tempfile are imported by the functions that build (a cache miss, the
# background builder, declarations written): a process whose module is cached needs neither

NATIVE_ENV = "MRC_TESTBED_P4_NATIVE"
#: bumped whenever what an entry holds changes (old entries are then never looked up)
FORMAT = "p4emu-native-1"
RECORD = "module.sha256"
#: Cython's options: the declarations and annotations give C types; nothing else does.
#: No pickling code for the generated types (a generated object is never pickled: its
#: class is made per program and cannot be named by an unpickler), about an eighth of a
#: module's C and of its compile time.
DIRECTIVES = ("language_level=3", "binding=False", "infer_types=False", "auto_pickle=False")
COMPILE_ARGS = ("-O2", "-g0", "-fPIC", "-shared", "-fwrapv", "-fno-strict-aliasing")
#: a build that takes longer than this has failed (a 2-core machine takes about 30 s)
BUILD_TIMEOUT_S = 600
#: p4emu's runtime types that generated code names (its text imports them; its ``.pxd``
#: cimports them when the runtime runs native): module -> the classes
RUNTIME_TYPES: dict[str, tuple[str, ...]] = {
    "p4emu.backend.rt": ("Blocks", "PacketContext", "StandardMetadata"),
    "p4emu.runtime.tables": ("Table", "TableAction"),
    "p4emu.runtime.externs": ("Counter", "RandomSource"),
}

#: the fields of the runtime types a generated class may derive from
#: (:func:`declarations`' ``bases``): the standard metadata's
RUNTIME_FIELDS: dict[str, frozenset[str]] = {
    "StandardMetadata": frozenset(rt.STANDARD_METADATA_FIELDS),
    "Blocks": frozenset(),
}

#: the methods a class deriving from the runtime's ``Blocks`` overrides, as
#: ``p4emu/backend/rt.pxd`` declares them (an override repeats its base's signature):
#: the generated ``ProgramBlocks`` (:mod:`p4emu.backend.program`)
BLOCKS_METHODS = (
    "    cpdef long long parse_block(self, object data, object hdr, object meta, object sm, "
    "PacketContext ctx) except? -1",
    "    cpdef verify_block(self, object hdr, object meta, PacketContext ctx)",
    "    cpdef ingress_block(self, object hdr, object meta, object sm, PacketContext ctx)",
    "    cpdef egress_block(self, object hdr, object meta, object sm, PacketContext ctx)",
    "    cpdef compute_block(self, object hdr, object meta, PacketContext ctx)",
    "    cpdef deparse_block(self, object hdr, PacketContext ctx)",
    "    cpdef init_packet(self, object hdr, object meta, object sm)",
)

#: how often a process waiting for another's build looks at its lock again
LOCK_POLL_S = 0.2
#: the detached builder's output, beside its entry (kept: it says why a build failed)
BACKGROUND_LOG = ".build-{key}.log"
#: the declarations :func:`program_declarations` proved, by :func:`declarations_key`
DECLARATIONS_DIR = "declarations"
#: what the proof's result depends on besides its inputs: the prover and this module
PROOF_MODULES = ("p4emu.backend.cfields", "p4emu.backend.native")

log = logging.getLogger(__name__)
_loaded: dict[str, ModuleType] = {}
_lock = threading.Lock()
_background = False  # build_in_background(): a miss runs pure and leaves a child to build


class NativeBuildError(BackendError):
    """The native build of a generated module failed (the pure module runs instead)."""


class NativeBuildPending(NativeBuildError):
    """The compiled module is being built in the background (:func:`build_in_background`):
    the pure module runs meanwhile; nothing failed."""


def cache_root() -> Path:
    """Where entries live: p4emu's cache folder (``$MRC_TESTBED_P4_CACHE``, else the XDG
    cache folder's; :func:`p4emu.frontend.cache.p4emu_cache_root`)."""
    return p4emu_cache_root()


#: the line of ``Cython/Shadow.py`` that gives Cython's version (``Cython.__version__``
#: is imported from it)
_CYTHON_VERSION_LINE = re.compile(r"""^__version__ = ["']([^"'\n]+)["']$""", re.MULTILINE)


def cython_version() -> str | None:
    """The installed Cython's version (None: no Cython), as ``Cython.__version__`` gives
    it, read from ``Cython/Shadow.py`` beside the package's ``__init__`` (importing
    Cython costs 3-7 ms of every start-up, where the version is only part of a cache
    key); imported when that file does not give it."""
    try:
        spec = importlib.util.find_spec("Cython")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.origin is not None:
        try:
            text = (Path(spec.origin).parent / "Shadow.py").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        found = _CYTHON_VERSION_LINE.search(text)
        if found is not None:
            return found.group(1)
    try:
        import Cython
    except ImportError:
        return None
    return str(Cython.__version__)


def build_missing() -> str | None:
    """Why no native build can run here (None: it can)."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return f"no C compiler ({cc}; gcc, apt-packages.txt)"
    include = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not include.is_file():
        return f"no Python headers ({include}; python3-dev, apt-packages.txt)"
    if cython_version() is None:
        return "Cython is not installed (pyproject.toml build requirement)"
    return None


def wanted() -> str | None:
    """Why generated modules run pure in this process (None: they are compiled).
    ``$MRC_TESTBED_PURE`` forces pure; ``$MRC_TESTBED_P4_NATIVE`` ``1`` compiles them
    and ``0`` does not, whatever else runs; unset, they follow the hot path of p4emu's
    runtime (:mod:`clikit.hotpath`: compiled when ``p4emu.backend.rt`` is)."""
    if hotpath.pure_forced():
        return f"${hotpath.PURE_ENV} is set"
    value = os.environ.get(NATIVE_ENV, "")
    if value == "0":
        return f"${NATIVE_ENV}=0"
    if value not in ("", "1"):
        raise NativeBuildError(f"${NATIVE_ENV} must be 0, 1 or unset, not {value!r}")
    if value == "":
        how, _ = hotpath.choice("p4emu.backend.rt")
        if how != "compiled":
            return how.removeprefix("pure: ")
    return build_missing()


def runtime_native() -> bool:
    """Whether this process runs p4emu's runtime native (:mod:`clikit.hotpath`): only
    then can a generated module cimport its extension types (a module built against them
    does not import beside the pure classes)."""
    return all(
        isinstance(
            getattr(module.__spec__, "loader", None), importlib.machinery.ExtensionFileLoader
        )
        for module in (rt, tables, externs)
    )


def runtime_declarations() -> str:
    """The sha256 of the ``.pxd`` files of :data:`RUNTIME_TYPES`: the C layout a
    generated module that cimports them is built against (part of its cache key)."""
    digest = hashlib.sha256()
    for name in RUNTIME_TYPES:
        digest.update(hotpath.source_of(name).with_suffix(".pxd").read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def entry_key(source: str, pxd: str) -> str:
    digest = hashlib.sha256()
    for part in (
        FORMAT,
        sys.implementation.cache_tag or "",
        importlib.machinery.EXTENSION_SUFFIXES[0],
        cython_version() or "",
        source,
        pxd,
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def module_name(key: str) -> str:
    return f"p4emu_generated_{key[:32]}"


def module_path(entry: Path, key: str) -> Path:
    return entry / (module_name(key) + importlib.machinery.EXTENSION_SUFFIXES[0])


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def entry_ok(entry: Path, key: str) -> bool:
    """An entry is whole: its module exists and matches its record."""
    module, record = module_path(entry, key), entry / RECORD
    try:
        return record.read_text(encoding="ascii").strip() == file_sha256(module)
    except (OSError, UnicodeDecodeError):
        return False


def discard(entry: Path) -> None:
    """Move a bad entry out of the way (atomically), then delete it."""
    trash = entry.with_name(f".trash-{entry.name}-{os.getpid()}-{threading.get_ident()}")
    try:
        entry.rename(trash)
    except OSError:
        return  # gone already (another process discarded or replaced it)
    shutil.rmtree(trash, ignore_errors=True)


def run_step(argv: list[str], what: str, cwd: Path) -> None:
    import subprocess

    try:
        done = subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NativeBuildError(f"{what}: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise NativeBuildError(f"{what} failed ({done.returncode}): {' / '.join(tail)}")


def build(root: Path, key: str, source: str, pxd: str) -> None:
    """Build the entry ``key`` under ``root`` (see module docs): a temporary folder,
    renamed into place; if another process got there first, its entry stays."""
    import tempfile

    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
    try:
        name = module_name(key)
        (work / f"{name}.py").write_text(source, encoding="utf-8")
        (work / f"{name}.pxd").write_text(pxd, encoding="utf-8")
        # -I: the project's packages, for the runtime's .pxd files (declarations())
        cython = [sys.executable, "-m", "cython", "-3", "-I", str(hotpath.ROOT)]
        for directive in DIRECTIVES:
            cython += ["-X", directive]
        run_step([*cython, f"{name}.py", "-o", f"{name}.c"], "cython", work)
        cc = (sysconfig.get_config_var("CC") or "cc").split()
        include = sysconfig.get_paths()["include"]
        built = module_path(work, key)
        run_step([*cc, *COMPILE_ARGS, f"-I{include}", f"{name}.c", "-o", built.name], "cc", work)
        entry = work / "entry"
        entry.mkdir()
        built.rename(module_path(entry, key))
        (entry / RECORD).write_text(file_sha256(module_path(entry, key)) + "\n", "ascii")
        try:
            entry.rename(root / key)
        except OSError:
            if not entry_ok(root / key, key):  # not a concurrent writer's whole entry
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def import_entry(entry: Path, key: str) -> ModuleType:
    name = module_name(key)
    path = module_path(entry, key)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lock_path(root: Path, key: str) -> Path:
    return root / f".lock-{key}"


@contextmanager
def build_lock(root: Path, key: str, *, wait: bool) -> Iterator[bool]:
    """Hold entry ``key``'s build lock for the block; yields whether this process holds it
    (``wait=False``: False at once when another process holds it; ``wait=True``: waits for
    it, at most :data:`BUILD_TIMEOUT_S`, then raises :class:`NativeBuildError`)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path(root, key), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise NativeBuildError(f"cache {root}: {exc}") from None
    try:
        deadline = time.monotonic() + BUILD_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait:
                    yield False
                    return
                if time.monotonic() > deadline:
                    raise NativeBuildError(
                        f"another process has been building {key[:12]} in {root} for over "
                        f"{BUILD_TIMEOUT_S} s ({lock_path(root, key).name})"
                    ) from None
                time.sleep(LOCK_POLL_S)
        yield True  # the lock goes with the descriptor (a killed holder releases it)
    finally:
        os.close(fd)


def load_entry(
    root: Path, key: str, source: str, pxd: str, *, whole: bool | None = None
) -> ModuleType:
    """The module of entry ``key``, built first unless the cache holds it whole (by this
    process, or by another one whose build this one waits for). ``whole``: what
    :func:`entry_ok` just said of the entry, if the caller asked (None: asked here; the
    check reads and hashes the whole module, about 0.8 MB for ``mrc_switch.p4``)."""
    entry = root / key
    if not (entry_ok(entry, key) if whole is None else whole):
        with build_lock(root, key, wait=True):
            if not entry_ok(entry, key):  # not built while this process waited
                if entry.exists():
                    discard(entry)  # corrupt, or half deleted by hand: built again
                log.info(
                    "compiling a P4 program's generated module for the compiled hot path "
                    "(once per program and machine; cached in %s)",
                    root,
                )
                try:
                    build(root, key, source, pxd)
                except OSError as exc:
                    raise NativeBuildError(f"cache {root}: {exc}") from None
    return import_entry(entry, key)


def build_in_background(on: bool = True) -> None:
    """From now on, a process-wide choice: a cache miss runs the pure module at once and
    leaves the build to a detached child (see the module docs)."""
    global _background
    _background = on


def start_background_build(root: Path, key: str, source: str, pxd: str) -> str:
    """Leave a detached child building entry ``key``; what this process should say."""
    with build_lock(root, key, wait=False) as free:
        if not free:
            return "its compiled module is being built by another process; this one runs pure"
    import subprocess
    import tempfile

    work = Path(tempfile.mkdtemp(prefix=".request-", dir=root))
    (work / "source.py").write_text(source, encoding="utf-8")
    (work / "declarations.pxd").write_text(pxd, encoding="utf-8")
    log_path = root / BACKGROUND_LOG.format(key=key)
    with log_path.open("wb") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "p4emu.backend.native", str(root), key, str(work)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives this process (a switch stopped meanwhile)
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
    threading.Thread(target=child.wait, name="p4emu-native-reaper", daemon=True).start()
    return (
        f"first use: its compiled module is being built in the background (log {log_path}); "
        "this process runs pure"
    )


def background_main(argv: list[str]) -> int:
    """The detached builder: ``python -m p4emu.backend.native ROOT KEY REQUEST_DIR``."""
    root, key, work = Path(argv[0]), argv[1], Path(argv[2])
    try:
        source = (work / "source.py").read_text(encoding="utf-8")
        pxd = (work / "declarations.pxd").read_text(encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if entry_key(source, pxd) != key:
        print(f"p4emu.backend.native: the request does not hash to {key}", file=sys.stderr)
        return 2
    with build_lock(root, key, wait=False) as free:
        if not free:
            print("another process is building it", file=sys.stderr)
            return 0
        entry = root / key
        if not entry_ok(entry, key):
            if entry.exists():
                discard(entry)
            try:
                build(root, key, source, pxd)
            except (NativeBuildError, OSError) as exc:
                print(f"p4emu.backend.native: build failed: {exc}", file=sys.stderr)
                return 1
    print(f"built {root / key}")
    return 0


def load(source: str, pxd: str, check: Callable[[], object] | None = None) -> ModuleType:
    """The compiled module of ``source`` (built, or taken from the cache): raises
    :class:`NativeBuildError` when it cannot be built or loaded (or, after
    :func:`build_in_background`, when it is not built yet). ``check`` is called before
    ``source`` is compiled in this process or handed to a background build (not when the
    cache holds its module: a module is kept only after its text passed ``check``), and
    whatever it raises is raised."""
    key = entry_key(source, pxd)
    with _lock:
        found = _loaded.get(key)
        if found is None:
            root = cache_root()
            whole = entry_ok(root / key, key)  # once: it hashes the module's whole file
            if check is not None and not whole:
                check()
            if _background and not whole:
                raise NativeBuildPending(start_background_build(root, key, source, pxd))
            try:
                found = load_entry(root, key, source, pxd, whole=whole)
            except ImportError:
                discard(root / key)  # whole by its record, yet it does not load: again
                try:
                    found = load_entry(root, key, source, pxd)
                except ImportError as exc:
                    raise NativeBuildError(f"the built module does not load: {exc}") from None
            _loaded[key] = found
        return found


def declarations(
    classes: dict[str, list[tuple[str, str | None]]],
    runtime: bool = False,
    c_fields: Mapping[str, Mapping[str, str]] | None = None,
    bases: Mapping[str, str] | None = None,
    constants: Iterable[str] = (),
    signed_constants: Iterable[str] = (),
    c_locals: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """The ``.pxd`` of a generated module: each class an extension type; a field holding
    an aggregate typed with its class (or ``list``: a stack's items), a header's
    validity ``bint`` (only ever ``True`` or ``False``: read back as the same ``bool``),
    a scalar field of ``c_fields`` (class -> field -> C type: the ones
    :func:`p4emu.backend.cfields.prove` proved) its C type, others ``object``. With ``runtime`` (p4emu's runtime runs native:
    :func:`runtime_native`) it cimports the runtime's types of :data:`RUNTIME_TYPES`, so
    the annotated packet context, tables and table results are C structs to the
    generated code too, and it records their declarations' sha256 (a changed layout is
    another cache entry). ``bases``: class -> the runtime type of :data:`RUNTIME_TYPES`
    it derives from (the standard metadata: ``StandardMetadata``; the blocks: ``Blocks``,
    whose methods it then declares, :data:`BLOCKS_METHODS`), whose fields it does
    not declare again; only with ``runtime``. ``constants``: the module-level constants
    of wide fields' halves the text defines (:func:`p4emu.backend.wide.constants_in`),
    each a C ``unsigned long long``; ``signed_constants``: its named literals
    (:func:`p4emu.backend.wide.name_literals`), each a C ``long long``. ``c_locals``:
    block method -> its P4 locals the proof held in C (:func:`p4emu.backend.cfields.prove_all`)
    -> their C type, declared by ``@cython.locals`` on the method."""
    lines = ["# generated by p4emu.backend.native: the generated classes as extension types"]
    # the parser's temporaries annotated ``cython.longlong`` (p4emu.backend.headercodec)
    lines.append("cimport cython")
    # the native deparser's bytes, memcpy and wide-value conversions
    lines.extend(NATIVE_PXD.rstrip("\n").split("\n"))
    if runtime:
        lines.append(f"# p4emu's runtime declarations, sha256 {runtime_declarations()}")
        for name, types in RUNTIME_TYPES.items():
            lines.append(f"from {name} cimport {', '.join(types)}")
    for constant in constants:
        lines.append(f"cdef unsigned long long {constant}")
    for constant in signed_constants:
        lines.append(f"cdef long long {constant}")
    for name, fields in classes.items():
        base = (bases or {}).get(name)
        if base is not None:
            if not runtime:
                raise NativeBuildError(f"{name} derives from {base}: needs the native runtime")
            inherited = RUNTIME_FIELDS[base]
            fields = [(attr, cls) for attr, cls in fields if attr not in inherited]
        lines.append(f"cdef class {name}({base}):" if base else f"cdef class {name}:")
        if not fields and base != "Blocks":
            lines.append("    pass")
        typed = (c_fields or {}).get(name, {})
        for attr, cls in fields:
            lines.append(f"    cdef public {cls or typed.get(attr, 'object')} {attr}")
        if base == "Blocks":
            lines.extend(_blocks_methods(c_locals or {}))
    return "\n".join(lines) + "\n"


def _blocks_methods(c_locals: Mapping[str, Mapping[str, str]]) -> list[str]:
    """:data:`BLOCKS_METHODS`, each method's C-typed locals declared before it."""
    lines = []
    for line in BLOCKS_METHODS:
        method = re.search(r"(\w+)\(self", line)
        typed = c_locals.get(method.group(1), {}) if method else {}
        if typed:
            listed = ", ".join(f'{name}="{ctype}"' for name, ctype in sorted(typed.items()))
            lines.append(f"    @cython.locals({listed})")
        lines.append(line)
    return lines


def runtime_c_fields() -> dict[str, frozenset[str]]:
    """The C integer attributes of p4emu's runtime types (:data:`RUNTIME_TYPES`, read
    from their ``.pxd`` files): what generated code reads from them in C."""
    from p4emu.backend import cfields

    return cfields.runtime_c_fields(
        hotpath.source_of(name).with_suffix(".pxd") for name in RUNTIME_TYPES
    )


def program_declarations(
    source: str,
    classes: dict[str, list[tuple[str, str | None]]],
    candidates: Mapping[str, Mapping[str, tuple[int, int]]],
    bases: Mapping[str, str] | None = None,
) -> str:
    """The ``.pxd`` of the generated module ``source``: :func:`declarations`, the
    runtime's types cimported when it runs native, and the scalar fields
    :func:`p4emu.backend.cfields.prove` proves safe as C integers in that text.

    The proof walks the whole text (tens of milliseconds, and the prover's import), the
    same in every process: its result is kept in the cache folder
    (``<root>/declarations/<key>-<sha256 of the text kept>.pxd``, :func:`declarations_key`,
    written whole in one rename) and read back by later processes, after checking it
    against its own digest (a damaged file is removed and proved again). A proof that
    fails is not kept."""
    native = runtime_native()
    key = declarations_key(source, classes, candidates, native, bases)
    folder = cache_root() / DECLARATIONS_DIR
    kept = read_kept_declarations(folder, key)
    if kept is not None:
        return kept
    from p4emu.backend import cfields

    try:
        proven, proven_locals = cfields.prove_all(source, classes, candidates, runtime_c_fields())
    except cfields.ProofError as exc:  # the pure module runs, and says why
        raise NativeBuildError(f"width proof: {exc}") from None
    for name, base in (bases or {}).items():
        # the base holds its integer fields in C whatever the text does with them: each
        # must be proven, or this text's C arithmetic on one could differ from Python's
        unproven = sorted(set(candidates.get(name, {})) - set(proven.get(name, {})))
        inherited = [attr for attr in unproven if attr in RUNTIME_FIELDS[base]]
        if inherited:
            raise NativeBuildError(
                f"width proof: {name} derives from {base}, but its fields "
                f"{', '.join(inherited)} are not proven within 64 bits"
            )
    pxd = declarations(
        classes,
        native,
        proven,
        bases,
        wide.constants_in(source),
        wide.signed_constants_in(source),
        proven_locals,
    )
    path = folder / f"{key}-{hashlib.sha256(pxd.encode('utf-8')).hexdigest()}.pxd"
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".pxd", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(pxd)
        os.replace(temporary, path)
    except OSError as exc:  # not kept: the next process proves it again
        log.debug("declarations of %s not kept: %s", key, exc)
    return pxd


def read_kept_declarations(folder: Path, key: str) -> str | None:
    """The declarations kept for ``key`` (:func:`program_declarations`), or None: none
    kept, or only ones whose text no longer matches the digest in their name (removed)."""
    for path in sorted(folder.glob(f"{key}-*.pxd")):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() == path.stem.partition("-")[2]:
            return data.decode("utf-8", errors="replace")  # the bytes written: UTF-8
        log.debug("kept declarations %s are damaged: removed", path.name)
        try:
            path.unlink()
        except OSError:
            continue
    return None


def declarations_key(
    source: str,
    classes: Mapping[str, list[tuple[str, str | None]]],
    candidates: Mapping[str, Mapping[str, tuple[int, int]]],
    native: bool,
    bases: Mapping[str, str] | None = None,
) -> str:
    """The sha256 of everything :func:`program_declarations` reads: the text, its classes
    and candidate fields, whether the runtime runs native, the Python (its ``ast``), the
    runtime's ``.pxd`` files, and the source of the prover and of this module
    (:data:`PROOF_MODULES`)."""
    digest = hashlib.sha256()
    parts = [FORMAT, sys.implementation.cache_tag or "", source, str(native)]
    parts.extend((repr(sorted(classes.items())), repr(sorted(candidates.items()))))
    parts.append(repr(sorted((bases or {}).items())))
    parts.extend(
        hotpath.source_of(name).with_suffix(".pxd").read_text(encoding="utf-8")
        for name in RUNTIME_TYPES
    )
    parts.extend(hotpath.source_of(name).read_text(encoding="utf-8") for name in PROOF_MODULES)
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


if __name__ == "__main__":
    sys.exit(background_main(sys.argv[1:]))
