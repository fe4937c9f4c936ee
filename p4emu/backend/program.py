"""Compile a checked v1model program into Python functions, once.

:func:`compile_program` returns a :class:`CompiledProgram`: the six v1model blocks as
plain Python functions over generated ``__slots__`` objects, factories for the packet
state, and the :class:`~p4emu.runtime.objects.ProgramObjects` the control plane uses.
All generated code lives in one source string (``CompiledProgram.source``, handy for
debugging). Its module level holds what does not depend on run-time state (the generated
aggregate classes with their copy/init/assign functions, the ``rt`` helpers); its
``__make__(NS)`` binds one set of run-time objects (tables, externs, value sets, hooks,
codecs, scratch headers) as closure variables and defines the block functions over them,
so the per-packet code does no dictionary lookups for them.

The source is compiled and its module level executed once per distinct source text
(:class:`SharedCode`, kept while a compiled program uses it): every compile of the same
checked program with the same options gives the same text, so programs compiled for
several switches share one module and one set of code objects (CPython's per-code-object
specialisation is not multiplied by the number of switches) while each gets its own
``__make__`` call and therefore its own run-time state.

The text is also generated once per (checked program, compile options)
(:class:`ProgramTemplate`, kept while a compiled program uses it): the text names each
run-time object only by where it comes from in a switch's run-time objects (an
:class:`Origin`: this table of that block, that register's cells, the hooks'
``log_msg``, ...), never by the object itself. A further :func:`compile_program` of the
same checked program and options builds that switch's run-time objects, replays the
builder calls code generation made (late action ids, custom CRCs, digests), resolves
every origin against them and calls ``__make__``: no statement walk, no analysis, no
text. :func:`compile_stats` counts both kinds of compile.

A template is also kept on disk, with the checked program it was made from, when that
program came from p4emu's checked-program cache (:func:`p4emu.frontend.load_checked`;
:func:`p4emu.frontend.cache.keep_companion`): its text, the origins and replayed calls
(which refer to the program's nodes, pickled with them), the ids and the native build's
declarations, under a slot named by the options and the digest of the code that makes and
runs a template (:func:`generator_digest`: p4emu's back end, runtime and P4Info modules,
the Python version, whether the runtime runs native). A process whose checked program
holds a template with its options and digest compiles its first switch as a further one
(:meth:`ProgramTemplate.loaded`): no generation at all. A kept template that does not
load or does not instantiate is logged and generated again (and kept again); any other
program (loaded from source, another digest) generates as before.
"""

from __future__ import annotations

import ast as pyast
import io
import logging
import struct
import threading
import tokenize
import weakref
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from types import BuiltinMethodType, CodeType, MethodType
from typing import TYPE_CHECKING, Any

from clikit import hotpath
from p4emu.backend import native, wide
from p4emu.backend.codewriter import CodeWriter, Names, sanitize
from p4emu.backend.compile_helpers import (
    CTX_PARAM,
    compile_error,
    function_return,
    literal,
    unsupported,
)
from p4emu.backend.exceptions import CompileError
from p4emu.backend.headercodec import (
    TO_BYTES,
    HeaderCodec,
    header_codec,
    native_deparse_locals,
    native_deparse_return,
    varbit_helpers,
)
from p4emu.backend.ids import ControlPlaneIds, assign_ids
from p4emu.backend.pytypes import TypeRegistry, field_list_paths, is_aggregate
from p4emu.backend.runtime_objects import RuntimeBuilder, RuntimeObjects, TableRuntime
from p4emu.frontend import ast
from p4emu.frontend import types as t
from p4emu.runtime.clock import Clock, RealClock
from p4emu.runtime.externs import Counter, DigestQueue, LogMsgFormat, RandomSource, Register
from p4emu.runtime.objects import ProgramObjects
from p4emu.runtime.pre import ReplicationEngine
from p4emu.runtime.tables import Table

if TYPE_CHECKING:
    from p4emu.backend import v1model_externs
    from p4emu.backend.body import BodyCompiler, CallEmitters, Hoist
    from p4emu.backend.body.statements import EXIT_STATEMENT
    from p4emu.backend.parsers import ParserGenerator
    from p4emu.backend.scope import Binding, Scope
    from p4emu.backend.tables_codegen import emit_table_apply

log = logging.getLogger("p4emu.backend")


def _import_generator() -> None:
    """Import the code generator's statement, parser, extern and table modules, and bind
    the names :class:`ProgramCompiler` uses: on its first use, not with this module (a
    process whose templates are all kept with their programs never generates; see the
    module docs)."""
    global BodyCompiler, CallEmitters, Hoist, ParserGenerator, Binding, Scope
    global emit_table_apply, v1model_externs, EXIT_STATEMENT
    from p4emu.backend import v1model_externs
    from p4emu.backend.body import BodyCompiler, CallEmitters, Hoist
    from p4emu.backend.body.statements import EXIT_STATEMENT
    from p4emu.backend.parsers import ParserGenerator
    from p4emu.backend.scope import Binding, Scope
    from p4emu.backend.tables_codegen import emit_table_apply


class Hooks:
    """Where generated code sends ``log_msg`` text and trace events (swappable)."""

    def __init__(self) -> None:
        self.log_sink: Callable[[str], None] = lambda text: log.info("log_msg: %s", text)
        self.trace_sink: Callable[[str, Any, Any, Any], None] | None = None

    def log_msg(self, text: str) -> None:
        self.log_sink(text)

    def trace(self, kind: str, name: Any, a: Any, b: Any) -> None:
        if self.trace_sink is not None:
            self.trace_sink(kind, name, a, b)


class SharedCode:
    """One compiled and executed generated module: its ``__make__`` binds a set of
    run-time objects and returns that set's block functions (see module docs).

    ``pxd``: the declarations of the native build (:mod:`p4emu.backend.native`), or a
    function making them (called only when the module is compiled), used when the
    process runs the compiled hot path; ``how`` says which path this module
    runs (``compiled``, or ``pure: REASON``)."""

    def __init__(self, source: str, filename: str, pxd: str | Callable[[], str] = "") -> None:
        self.source = source
        self.filename = filename
        self._code: CodeType | None = None
        why_pure = native.wanted() if pxd else "no declarations"
        if why_pure is None:
            try:
                # the text is compiled to bytecode only when this process may need it (a
                # native build or the pure module): a module in the native cache passed
                # that compile in the process that built it
                module = native.load(source, self._declarations(pxd), self.code)
            except native.NativeBuildPending as exc:
                why_pure = str(exc)
                log.info("%s: %s", filename, exc)
            except native.NativeBuildError as exc:
                why_pure = str(exc)
                log.warning("%s: native build failed, the pure module runs: %s", filename, exc)
            else:
                self.namespace: dict[str, Any] = module.__dict__
                self.how = "compiled"
        if why_pure is not None:
            self.namespace = {}
            exec(self.code(), self.namespace)
            self.how = f"pure: {why_pure}"
        hotpath.note_generated(filename, self.how)
        self.make: Callable[[dict[str, Any]], dict[str, Any]] = self.namespace["__make__"]

    def _declarations(self, pxd: str | Callable[[], str]) -> str:
        """``pxd``'s text; a text too deeply nested for Python's parser (the width proof
        parses it) is the :class:`CompileError` of :meth:`code`."""
        if not callable(pxd):
            return pxd
        try:
            return pxd()
        except (RecursionError, MemoryError):
            self.code()
            raise

    def code(self) -> CodeType:
        """The text's bytecode (compiled once): raises :class:`CompileError` for a text
        CPython's compiler cannot take."""
        if self._code is None:
            try:
                self._code = compile(self.source, self.filename, "exec")
            except (RecursionError, MemoryError):
                # CPython's compiler nests an ``elif`` chain: a select of about 900 cases
                raise CompileError(
                    f"unsupported construct: {self.filename}: the generated Python is nested "
                    "too deeply for CPython's compiler (a select with about 900 cases or "
                    "more; split it into several states)"
                ) from None
        return self._code


# what the module level of every generated program reads (no run-time state): the first
# lines of its text, so that the text is a whole module (the native build compiles it)
SHARED_IMPORTS = (
    # ``cython.compiled``: the native deparser's branches (False on the pure path)
    "import cython\n"
    "from p4emu.backend.rt import ONCE, EXIT, Blocks, ExitSignal, PacketContext, StandardMetadata, "
    "stack_at, stack_last, div_u, mod_u, div_s, mod_s\n"
    "from p4emu.backend.exceptions import P4AssertionError\n"
    "from p4emu.runtime.tables import Table, TableAction\n"
    "from p4emu.runtime.externs import Counter, RandomSource\n"
)

_shared_code: weakref.WeakValueDictionary[tuple[str, str], SharedCode] = (
    weakref.WeakValueDictionary()
)
_shared_lock = threading.Lock()


def shared_code(source: str, filename: str, pxd: str | Callable[[], str] = "") -> SharedCode:
    """The :class:`SharedCode` of ``source``: compiled and executed on first use, then
    reused as long as a compiled program holds it."""
    key = (filename, source)
    with _shared_lock:
        found = _shared_code.get(key)
        if found is None:
            found = _shared_code[key] = SharedCode(source, filename, pxd)
        return found


@dataclass(frozen=True, eq=False)
class Origin:
    """Where a name bound for generated code finds its object among one switch's run-time
    objects (see module docs): ``kind`` picks the root, ``key`` the object of that kind,
    ``steps`` what is then taken from it, in order: ``("attr", name)`` an attribute (a
    bound method), ``("call", name)`` what that method returns, ``("item", i)`` an item.

    Roots: ``table`` and ``profile`` (``key``: the (block instance id, declaration id) of
    :attr:`RuntimeObjects.tables`; the table, its action profile), ``extern`` and
    ``value_set`` (the keys of :attr:`RuntimeObjects.externs` / ``value_sets``),
    ``hash_crc`` (``key``: the call site of a custom CRC the control plane configures,
    :attr:`ProgramObjects.hash_crcs`), ``hooks`` (the program's :class:`Hooks`),
    ``random`` (its :class:`RandomSource`) and ``same``: ``key`` is the object itself,
    one without run-time state (a ``log_msg`` format, a ``struct`` packer's method, a
    fixed hash function), shared by every switch."""

    kind: str
    key: Any = None
    steps: tuple[tuple[str, Any], ...] = ()

    def then(self, step: str, arg: Any) -> Origin:
        return Origin(self.kind, self.key, (*self.steps, (step, arg)))

    def resolve(self, runtime: RuntimeObjects, hooks: Hooks, random: RandomSource) -> Any:
        kind, key = self.kind, self.key
        obj: Any
        if kind == "table":
            obj = runtime.tables[key].table
        elif kind == "profile":
            obj = runtime.tables[key].profile
        elif kind == "extern":
            obj = runtime.externs[key]
        elif kind == "value_set":
            obj = runtime.value_sets[key]
        elif kind == "hash_crc":
            obj = runtime.objects.hash_crcs[key]
        elif kind == "hooks":
            obj = hooks
        elif kind == "random":
            obj = random
        elif kind == "same":
            obj = key
        else:
            raise CompileError(f"internal error: unknown origin {kind!r}")
        for step, arg in self.steps:
            if step == "attr":
                obj = getattr(obj, arg)
            elif step == "call":
                obj = getattr(obj, arg)()
            else:
                obj = obj[arg]
        return obj


@dataclass
class CompileStats:
    """How many :func:`compile_program` calls of this process generated a program's
    text, and how many took it from a :class:`ProgramTemplate` (see module docs)."""

    generated: int = 0
    reused: int = 0
    #: first switches of a template kept with the checked program (see module docs)
    loaded: int = 0


_stats = CompileStats()


def compile_stats() -> CompileStats:
    """A copy of this process's :class:`CompileStats` so far."""
    return CompileStats(_stats.generated, _stats.reused, _stats.loaded)


@dataclass(eq=False)
class ProgramTemplate:
    """The switch-independent result of generating one checked program's code with one
    set of options (see module docs): its shared module, the origin of every name its
    ``__make__`` binds, and the run-time builder calls code generation made, which every
    further switch's builder replays (so its :class:`ProgramObjects` are the same)."""

    checked: ast.CheckedProgram
    options: tuple[int, bool, bool]  # drop_port, no_match_error, trace
    source: str
    shared: SharedCode
    origins: dict[str, Origin]
    replay: tuple[tuple[str, tuple[Any, ...]], ...]
    copiers: tuple[tuple[int, str], ...]
    has_verify_checksum: bool
    has_compute_checksum: bool
    error_codes: dict[str, int]
    #: the program's control-plane ids as :func:`assign_ids` gives them (no late ids):
    #: each further switch takes :meth:`ControlPlaneIds.fresh` of them
    ids: ControlPlaneIds
    #: what the native build's declarations are made from (the generated classes, their
    #: scalar fields, their bases: :func:`native.program_declarations`)
    declarations: tuple[dict[str, Any], dict[str, Any], dict[str, str]] = ({}, {}, {})

    def kept(self) -> dict[str, Any] | None:
        """This template as the checked program's cache entry keeps it (see module docs):
        plain data and the program's own nodes; None when an origin's key is none of the
        program's tables, externs or value sets (such a template is not kept)."""
        nodes: dict[int, Any] = {}
        checked = self.checked
        for instance in (*checked.tables, *checked.extern_instances, *checked.value_sets):
            for node in (instance.block, instance.decl):
                if node is not None:
                    nodes[id(node)] = node
        origins: dict[str, tuple[str, Any, tuple[tuple[str, Any], ...]]] = {}
        for name, origin in self.origins.items():
            key = origin.key
            if origin.kind in _NODE_KEYED:
                if not isinstance(key, tuple) or any(
                    part is not None and part not in nodes for part in key
                ):
                    return None
                key = tuple(None if part is None else nodes[part] for part in key)
            origins[name] = (origin.kind, key, origin.steps)
        return {
            "options": self.options,
            "source": self.source,
            "filename": self.shared.filename,
            "declarations": self.declarations,
            "origins": origins,
            "replay": self.replay,
            "copiers": self.copiers,
            "checksums": (self.has_verify_checksum, self.has_compute_checksum),
            "error_codes": self.error_codes,
            "ids": _ids_kept(self.ids),
        }

    @classmethod
    def loaded(cls, checked: ast.CheckedProgram, kept: Any) -> ProgramTemplate:
        """The template :meth:`kept` made, for ``checked`` (the program it was kept with).
        Raises ``TypeError``/``ValueError``/``KeyError`` for anything else."""
        if not isinstance(kept, dict):
            raise TypeError(f"a kept template is a dict, not {type(kept).__name__}")
        source, filename = kept["source"], kept["filename"]
        classes, scalars, bases = kept["declarations"]
        ids, origins = _ids_loaded(kept["ids"]), kept["origins"]
        has_verify, has_compute = kept["checksums"]
        drop_port, no_match_error, trace = kept["options"]
        if not (
            isinstance(source, str)
            and isinstance(filename, str)
            and isinstance(ids, ControlPlaneIds)
            and isinstance(origins, dict)
            and all(isinstance(x, dict) for x in (classes, scalars, bases, kept["error_codes"]))
            and all(isinstance(x, tuple) for x in (kept["replay"], kept["copiers"]))
        ):
            raise TypeError("a kept template's parts are not of their types")
        made: dict[str, Origin] = {}
        for name, (kind, key, steps) in origins.items():
            if kind in _NODE_KEYED:
                key = tuple(None if part is None else id(part) for part in key)
            made[name] = Origin(kind, key, tuple(steps))
        shared = shared_code(
            source,
            filename,
            lambda: native.program_declarations(source, classes, scalars, bases),
        )
        return cls(
            checked=checked,
            options=(int(drop_port), bool(no_match_error), bool(trace)),
            source=source,
            shared=shared,
            origins=made,
            replay=kept["replay"],
            copiers=kept["copiers"],
            has_verify_checksum=bool(has_verify),
            has_compute_checksum=bool(has_compute),
            error_codes=dict(kept["error_codes"]),
            ids=ids,
            declarations=(classes, scalars, bases),
        )

    def instantiate(
        self,
        *,
        clock: Clock,
        pre: ReplicationEngine,
        digest_queue: DigestQueue,
        random: RandomSource,
    ) -> CompiledProgram:
        """One more switch's program: its own run-time objects, the shared code."""
        ids = self.ids.fresh()
        builder = RuntimeBuilder(self.checked, ids, clock, pre, digest_queue)
        runtime = builder.build()
        for method, args in self.replay:
            getattr(builder, method)(*args)
        hooks = Hooks()
        return self.finish(self.namespace(runtime, hooks, random), runtime, hooks, random, ids)

    def namespace(
        self, runtime: RuntimeObjects, hooks: Hooks, random: RandomSource
    ) -> dict[str, Any]:
        """What ``__make__`` binds for the switch owning ``runtime``, ``hooks``, ``random``."""
        return {
            name: origin.resolve(runtime, hooks, random) for name, origin in self.origins.items()
        }

    def finish(
        self,
        ns: dict[str, Any],
        runtime: RuntimeObjects,
        hooks: Hooks,
        random: RandomSource,
        ids: ControlPlaneIds,
    ) -> CompiledProgram:
        made = self.shared.make(ns)
        copiers = {index: made["copiers"][name] for index, name in self.copiers}
        return CompiledProgram(
            checked=self.checked,
            objects=runtime.objects,
            source=self.source,
            hooks=hooks,
            parse=made["parse_block"],
            verify_checksum=made["verify_block"],
            ingress=made["ingress_block"],
            egress=made["egress_block"],
            compute_checksum=made["compute_block"],
            deparse=made["deparse_block"],
            new_headers=made["new_headers"],
            new_metadata=made["new_metadata"],
            new_standard_metadata=made["new_standard_metadata"],
            copy_headers=made["copy_headers"],
            copy_metadata=made["copy_metadata"],
            copy_standard_metadata=made["copy_standard_metadata"],
            init_headers=made["init_headers"],
            init_metadata=made["init_metadata"],
            init_standard_metadata=made["init_standard_metadata"],
            init_packet=made["init_packet"],
            blocks=made["blocks"],
            has_verify_checksum=self.has_verify_checksum,
            has_compute_checksum=self.has_compute_checksum,
            error_codes=dict(self.error_codes),
            random=random,
            ids=ids,
            field_list_copiers=copiers,
            drop_port=self.options[0],
            shared=self.shared,
            template=self,
        )


_templates: weakref.WeakValueDictionary[tuple[int, int, bool, bool], ProgramTemplate] = (
    weakref.WeakValueDictionary()
)
_templates_lock = threading.Lock()


@dataclass
class CompiledProgram:
    """A program ready to process packets (see module docs).

    Block functions (``ctx`` is a :class:`p4emu.backend.rt.PacketContext`):

    - ``parse(data, hdr, meta, sm, ctx) -> payload_offset`` (sets ``sm.parser_error``
      to the error code, 0 when none)
    - ``verify_checksum(hdr, meta, ctx)`` (sets ``ctx.checksum_error``)
    - ``ingress(hdr, meta, sm, ctx)`` / ``egress(hdr, meta, sm, ctx)``
    - ``compute_checksum(hdr, meta, ctx)``
    - ``deparse(hdr, ctx) -> bytes`` (the packet: the emitted headers, in order, then
      ``ctx.payload``)
    """

    checked: ast.CheckedProgram
    objects: ProgramObjects
    source: str
    hooks: Hooks
    parse: Callable[..., int]
    verify_checksum: Callable[..., None]
    ingress: Callable[..., None]
    egress: Callable[..., None]
    compute_checksum: Callable[..., None]
    deparse: Callable[..., bytes]
    new_headers: Callable[[], Any]
    new_metadata: Callable[[], Any]
    new_standard_metadata: Callable[[], Any]
    copy_headers: Callable[[Any], Any]
    copy_metadata: Callable[[Any], Any]
    copy_standard_metadata: Callable[[Any], Any]
    # back to the state of a new object (all zero, headers invalid), in place
    init_headers: Callable[[Any], None]
    init_metadata: Callable[[Any], None]
    init_standard_metadata: Callable[[Any], None]
    # the three above in one call: init_packet(hdr, meta, sm)
    init_packet: Callable[[Any, Any, Any], None]
    # False when the block does nothing (its call can be left out)
    has_verify_checksum: bool
    has_compute_checksum: bool
    error_codes: dict[str, int]
    random: RandomSource
    ids: ControlPlaneIds
    field_list_copiers: dict[int, Callable[[Any, Any], None]] = field(default_factory=dict)
    drop_port: int = 511
    # the module the block functions were made from, shared by every compile of the
    # same program (see module docs)
    shared: SharedCode | None = None
    # the generated code this program was made from, shared by every compile of the same
    # checked program with the same options (see module docs)
    template: ProgramTemplate | None = None
    #: the block functions above are this object's methods (a p4emu.backend.rt.Blocks
    #: on the compiled path: the switch calls them through C)
    blocks: Any = None

    def error_name(self, code: int) -> str:
        for name, value in self.error_codes.items():
            if value == code:
                return name
        return str(code)


def compile_program(
    program: ast.CheckedProgram,
    *,
    clock: Clock | None = None,
    pre: ReplicationEngine | None = None,
    digest_queue: DigestQueue | None = None,
    random: RandomSource | None = None,
    drop_port: int = 511,
    no_match_error: bool = False,
    trace: bool = False,
) -> CompiledProgram:
    """Compile ``program`` (see :class:`CompiledProgram`).

    ``no_match_error``: a ``select`` with no matching case sets ``error.NoMatch`` (P4
    spec) instead of ending the parse without error (BMv2). ``trace``: generate calls to
    ``hooks.trace`` (parser states, extracted headers, table lookups) for debugging.
    """
    clock = clock or RealClock()
    pre = pre or ReplicationEngine()
    digest_queue = digest_queue or DigestQueue(clock)
    random = random or RandomSource(0)
    key = (id(program), drop_port, no_match_error, trace)
    with _templates_lock:
        template = _templates.get(key)
    if template is not None and template.checked is program:
        compiled = template.instantiate(
            clock=clock, pre=pre, digest_queue=digest_queue, random=random
        )
        _stats.reused += 1
        return compiled
    options = (drop_port, no_match_error, trace)
    template = _kept_template(program, options)
    if template is not None:
        try:
            compiled = template.instantiate(
                clock=clock, pre=pre, digest_queue=digest_queue, random=random
            )
        except Exception as exc:  # a kept template that does not fit: generate it again
            log.warning(
                "the kept template of %s does not instantiate (%r): generated again",
                template.shared.filename,
                exc,
            )
        else:
            with _templates_lock:
                _templates[key] = template
            _stats.loaded += 1
            return compiled
    compiler = ProgramCompiler(
        program,
        clock=clock,
        pre=pre,
        digest_queue=digest_queue,
        random=random,
        drop_port=drop_port,
        no_match_error=no_match_error,
        trace=trace,
    )
    compiled = compiler.compile()
    assert compiled.template is not None
    with _templates_lock:
        _templates[key] = compiled.template
    _stats.generated += 1
    _keep_template(compiled.template)
    return compiled


_NODE_KEYED = frozenset({"table", "profile", "extern", "value_set"})
"""The origins keyed by (block instance, declaration) ids (kept as the nodes themselves)."""
TEMPLATE_FORMAT = "p4emu-template-3"
"""Bumped whenever what a kept template holds changes."""
_GENERATOR_PACKAGES = ("backend", "runtime", "p4info")


def generator_digest() -> str:
    """The sha256 of what makes and runs a template besides the checked program (see
    module docs): p4emu's ``backend``, ``runtime`` and ``p4info`` sources (``.py``,
    ``.pxd``, ``.pyx``) and ``proto.py``, the Python version, whether the runtime runs
    native (the generated classes derive from its types then). Once per process."""
    from p4emu.frontend import cache

    root = Path(__file__).resolve().parent.parent
    return cache.code_digest(
        tuple(root / package for package in _GENERATOR_PACKAGES),
        (root / "proto.py",),
        (TEMPLATE_FORMAT, f"runtime_native={native.runtime_native()}"),
    )


def _ids_kept(ids: ControlPlaneIds) -> tuple[Any, ...]:
    """``ids`` as a kept template holds them: the P4Info as its bytes (its message class
    is p4emu.proto's, which pickle cannot name)."""
    info = None if ids.p4info is None else ids.p4info.SerializeToString(deterministic=True)
    return (
        ids.symbols,
        info,
        ids.p4info_error,
        ids.action_params,
        ids.match_fields,
        ids.controller_fields,
    )


def _ids_loaded(kept: Any) -> ControlPlaneIds:
    """The ids :func:`_ids_kept` made (``TypeError``/``ValueError`` for anything else)."""
    from p4emu.p4info.ids import SymbolTable
    from p4emu.p4info.kept import p4info_from_bytes

    symbols, info, error, action_params, match_fields, controller_fields = kept
    if not isinstance(symbols, SymbolTable) or not all(
        isinstance(x, dict) for x in (action_params, match_fields, controller_fields)
    ):
        raise TypeError("kept ids are not of their types")
    p4info = None if info is None else p4info_from_bytes(info)
    return ControlPlaneIds(symbols, p4info, error, action_params, match_fields, controller_fields)


def _template_slot(options: tuple[int, bool, bool]) -> str:
    # the runtime's kind is in the slot's name too (not only in its digest): processes of
    # both kinds using one cache each find their own template instead of replacing it
    drop_port, no_match_error, trace = options
    return (
        f"template runtime_native={native.runtime_native()} drop_port={drop_port} "
        f"no_match_error={no_match_error} trace={trace}"
    )


def _kept_template(
    program: ast.CheckedProgram, options: tuple[int, bool, bool]
) -> ProgramTemplate | None:
    """The template kept with ``program`` for ``options`` (see module docs), or None."""
    from p4emu.frontend import cache

    try:
        kept = cache.companion(program, _template_slot(options), generator_digest())
    except OSError:  # p4emu's own files unreadable: nothing kept is trusted
        return None
    if kept is None:
        return None
    try:
        template = ProgramTemplate.loaded(program, kept)
        if template.options != options:
            raise ValueError(f"options {template.options} kept for {options}")
    except Exception as exc:  # whatever a damaged template raises: generate it again
        log.warning(
            "a kept template of %s is damaged (%r): generated again", program.source_files[:1], exc
        )
        return None
    return template


def _keep_template(template: ProgramTemplate) -> None:
    """Keep ``template`` with its checked program, when that came from the cache."""
    from p4emu.frontend import cache

    kept = template.kept()
    if kept is None:
        log.debug(
            "a template of %s is not kept: an origin is no node of the program",
            template.shared.filename,
        )
        return
    try:
        digest = generator_digest()
    except OSError:
        return
    cache.keep_companion(template.checked, _template_slot(template.options), digest, kept)


class ProgramCompiler:
    """Holds everything shared while generating the code of one program."""

    def __init__(
        self,
        program: ast.CheckedProgram,
        *,
        clock: Clock,
        pre: ReplicationEngine,
        digest_queue: DigestQueue,
        random: RandomSource,
        drop_port: int,
        no_match_error: bool,
        trace: bool,
    ) -> None:
        _import_generator()
        self.program = program
        self.clock = clock
        self.random = random
        self.drop_port = drop_port
        self.no_match_error = no_match_error
        self.trace = trace
        self.names = Names()
        # the standard metadata derives from the runtime's StandardMetadata when that is
        # an extension type (a compiled generated class can derive from no other)
        self.native_runtime = native.runtime_native()
        self.types = TypeRegistry(standard_base=self.native_runtime)
        self.global_scope = Scope()
        # the code generators above body/, handed down to every BodyCompiler
        self.emitters = CallEmitters(
            table_apply=emit_table_apply,
            extern_statement=v1model_externs.extern_statement,
            extern_method_value=v1model_externs.extern_method_value,
            extern_function_value=v1model_externs.extern_function_value,
        )
        self.hooks = Hooks()
        self.ns: dict[str, Any] = {}
        # where each name of ``ns`` comes from in any switch's run-time objects
        self.origins: dict[str, Origin] = {}
        self._bound: dict[int, str] = {}
        self._index: dict[int, Origin] | None = None
        # the run-time builder's calls made while generating (replayed by other switches)
        self._replay: list[tuple[str, tuple[Any, ...]]] = []
        self.ids = assign_ids(program)
        self._pristine_ids = self.ids.fresh()  # before generation assigns late ids
        self._rb = RuntimeBuilder(program, self.ids, clock, pre, digest_queue)
        self.runtime = self._rb.build()
        self.error_codes = {
            name: member.code for name, member in program.error_type.members.items()
        }
        self._top_level_actions = {
            id(d) for d in program.program.declarations if isinstance(d, ast.ActionDecl)
        }
        self._functions: dict[int, tuple[str, list[str]]] = {}
        self._function_lines: list[str] = []
        self._codecs: dict[int, tuple[HeaderCodec, str, str]] = {}
        self._varbits: dict[int, tuple[list[str], int, int]] = {}
        self._scratch: dict[int, str] = {}
        self._copiers: dict[Any, str] = {}
        self._log_formats: dict[str, str] = {}
        self._table_names: dict[int, TableRuntime] = {}
        self.extra_lines: list[str] = []
        #: the module-level constants of wide fields' halves (p4emu.backend.wide)
        self.wide_constants: set[str] = set()
        self._metadata_type: t.StructType | None = None
        self._hash_count = 0

    # ------------------------------------------------------------------ binding

    def bind(self, obj: Any, hint: str, origin: Origin | None = None) -> str:
        """A closure name for a runtime object used by generated code. ``origin``: where
        every switch finds it (:class:`Origin`); by default it is looked up among the
        run-time objects (a table, extern or value set, a method of one, a table's exact
        dictionary, a register's or counter's cells)."""
        found = self._bound.get(id(obj))
        if found is not None:
            return found
        if origin is None:
            origin = self._origin_of(obj, hint)
        name = self.names.fresh("G_" + sanitize(hint)[:40])
        self._bound[id(obj)] = name
        self.ns[name] = obj
        self.origins[name] = origin
        return name

    def bind_shared(self, obj: Any, hint: str) -> str:
        """:meth:`bind` for an object without run-time state that every switch shares
        (its origin is the object itself: a builtin such as ``int.from_bytes``)."""
        return self.bind(obj, hint, Origin("same", obj))

    def _origin_of(self, obj: Any, hint: str) -> Origin:
        index = self._runtime_index()
        found = index.get(id(obj))
        if found is not None:
            return found
        owner = getattr(obj, "__self__", None)
        if isinstance(obj, (MethodType, BuiltinMethodType)) and owner is not None:
            base = index.get(id(owner))
            if base is not None:
                return base.then("attr", obj.__name__)
        raise CompileError(
            f"internal error: generated code binds {hint} ({type(obj).__name__}), "
            "which is none of the switch's run-time objects"
        )

    def _runtime_index(self) -> dict[int, Origin]:
        """The run-time objects generated code may bind, by identity (see :meth:`bind`)."""
        if self._index is not None:
            return self._index
        index: dict[int, Origin] = {}
        runtime = self.runtime
        for key, found in runtime.tables.items():
            origin = Origin("table", key)
            index[id(found.table)] = origin
            entries = found.table.packet_dict()
            if entries is not None:
                index[id(entries)] = origin.then("call", "packet_dict")
        for key, found in runtime.tables.items():
            if found.profile is not None:
                index.setdefault(id(found.profile), Origin("profile", key))
        for extern_key, obj in runtime.externs.items():
            origin = Origin("extern", extern_key)
            index.setdefault(id(obj), origin)
            if isinstance(obj, Register):
                index[id(obj.cells())] = origin.then("call", "cells")
            elif isinstance(obj, Counter) and not self.native_runtime:
                # (a native runtime's counters are counted by Counter.count_at, their
                # cells in C: asking for the lists would move them to Python ints)
                for item, cells in enumerate(obj.cells()):
                    index[id(cells)] = origin.then("call", "cells").then("item", item)
        for vs_key, value_set in runtime.value_sets.items():
            index[id(value_set)] = Origin("value_set", vs_key)
        self._index = index
        return index

    # ------------------------------------------------------------------ lookups

    def error_code(self, name: str) -> int:
        return self.error_codes[name]

    def table_runtime(self, block: ast.BlockInstance, decl: ast.TableDecl) -> TableRuntime:
        runtime = self.runtime.tables.get((id(block), id(decl)))
        if runtime is None:
            raise CompileError(f"table {decl.name} of {block.name} has no runtime object")
        if not runtime.table_name:
            runtime.table_name = self.bind(runtime.table, "T_" + runtime.name)
            runtime.apply_name = self.bind(runtime.table.apply, "Tapply_" + runtime.name)
            if runtime.profile is not None:
                runtime.profile_name = self.bind(runtime.profile, "AP_" + runtime.profile.name)
        return runtime

    def action_id(self, decl: ast.ActionDecl, block: ast.BlockInstance | None) -> int:
        if id(decl) in self._top_level_actions:
            block = None
        self._replay.append(("action_id", (decl, block)))
        return self._builder().action_id(decl, block)

    def _builder(self) -> RuntimeBuilder:
        return self._rb

    def block_scope_of(self, action: ast.ActionDecl, scope: Scope) -> Scope:
        if id(action) in self._top_level_actions:
            return self.global_scope
        current: Scope | None = scope
        while current is not None:
            if current._block is not None:
                return current
            current = current.parent
        return self.global_scope

    def child_block(
        self, block: ast.BlockInstance | None, target: ast.BlockApply
    ) -> ast.BlockInstance:
        if block is None:
            raise CompileError(f"{target.block.name}.apply() outside a block")
        if target.ctor_param is not None:
            child = block.children.get(target.ctor_param.name)
            if child is not None:
                return child
            raise CompileError(f"no instance passed for {target.ctor_param.name} in {block.name}")
        if target.instance is not None:
            child = block.children.get(target.instance.name)
            if child is not None:
                return child
        for child in block.children.values():
            if child.decl is target.block and (
                target.instance is None or child.instantiation is target.instance
            ):
                return child
        raise CompileError(f"no instance of {target.block.name} inside {block.name}")

    @staticmethod
    def apply_args(call: ast.Call, child: ast.BlockInstance) -> list[ast.BoundArg]:
        """``call.bound_args`` against the parameters of the block actually applied: for a
        constructor parameter they were bound to its type's parameters (same positions)."""
        target = call.target
        if not isinstance(target, ast.BlockApply) or target.ctor_param is None:
            return call.bound_args
        by_position = {id(p): i for i, p in enumerate(target.block.params)}
        params = child.decl.params
        return [
            ast.BoundArg(params[by_position[id(b.param)]], b.expr, b.param_type)
            for b in call.bound_args
        ]

    def bind_constructor_params(self, scope: Scope, instance: ast.BlockInstance) -> None:
        decl = instance.decl
        for param in decl.ctor_params:
            kind = param.type.base if isinstance(param.type, t.SpecializedType) else param.type
            if isinstance(kind, (t.ControlType, t.ParserType)):
                continue  # an instance passed in (Step s, Step<bit<8>> s): instance.children
            if param.name in instance.constructor_args:
                value = instance.constructor_args[param.name]
                scope.bind(param, Binding("const", literal(value, param.type), param.type))

    def extern_object(self, block: ast.BlockInstance | None, decl: Any, node: ast.Node) -> Any:
        key = (id(block) if block is not None else None, id(decl))
        obj = self.runtime.externs.get(key)
        if obj is None:
            obj = self.runtime.externs.get((None, id(decl)))
        if obj is None:
            raise compile_error(node, f"extern instance {getattr(decl, 'name', '?')} not found")
        return obj

    def extern_runtime(self, block: ast.BlockInstance | None, decl: Any, node: ast.Node) -> str:
        obj = self.extern_object(block, decl, node)
        return self.bind(obj, "X_" + getattr(obj, "name", "extern"))

    def value_set_runtime(
        self, block: ast.BlockInstance | None, decl: ast.ValueSetDecl, node: ast.Node
    ) -> str:
        obj = self.runtime.value_sets.get((id(block), id(decl)))
        if obj is None:
            raise compile_error(node, f"value set {decl.name} not found")
        return self.bind(obj, "VS_" + obj.name)

    def hash_function(self, algo_name: str, call: ast.Node) -> str:
        self._hash_count += 1
        site = f"{call.loc.file}:{call.loc.line}:{self._hash_count}"
        fn = self._builder().hash_function(algo_name, site)
        self._replay.append(("hash_function", (algo_name, site)))
        # a custom CRC is the control plane's to configure, per switch; the others are
        # plain functions
        custom = self.runtime.objects.hash_crcs.get(site) is fn
        origin = Origin("hash_crc", site) if custom else Origin("same", fn)
        return self.bind(fn, "H_" + algo_name, origin)

    def digest_id(self, type_: t.Type, call: ast.Node) -> int:
        self._replay.append(("digest", (type_,)))
        return self._builder().digest(type_)

    def log_format(self, fmt: str) -> str:
        found = self._log_formats.get(fmt)
        if found is None:
            text = LogMsgFormat(fmt)  # read-only once made: one for every switch
            found = self._log_formats[fmt] = self.bind(text, "FMT", Origin("same", text))
        return found

    def scratch_header(self, type_: t.Type) -> str:
        found = self._scratch.get(id(type_))
        if found is None:
            cls = self.types.cls(type_)
            name = self.names.fresh("SCRATCH")
            self.extra_lines.append(f"{name} = {cls}()")
            self._scratch[id(type_)] = name
            found = name
        return found

    def header_codec(self, type_: t.HeaderType) -> tuple[HeaderCodec, str]:
        found = self._codecs.get(id(type_))
        if found is None:
            codec = header_codec(type_)
            packer = struct.Struct(codec.struct_format)
            # a struct.Struct holds no state: one packer for every switch
            unpack_from, pack_into = packer.unpack_from, packer.pack
            unpack = self.bind(unpack_from, "unpack_" + type_.name, Origin("same", unpack_from))
            pack = self.bind(pack_into, "pack_" + type_.name, Origin("same", pack_into))
            found = self._codecs[id(type_)] = (codec, unpack, pack)
        return found[0], found[1]

    def header_emit(self, type_: t.HeaderType, code: str) -> str:
        if type_.has_varbit:
            self.varbit_helpers(type_)
            return f"emit_vl_{self.types.cls(type_)}({code})"
        codec, _ = self.header_codec(type_)
        pack = self._codecs[id(type_)][2]
        to_bytes = self.bind_shared(TO_BYTES, "to_bytes") if codec.wide else "int.to_bytes"
        return codec.emit_expr(code, pack, to_bytes)

    def varbit_helpers(self, type_: t.HeaderType) -> tuple[list[str], int, int]:
        found = self._varbits.get(id(type_))
        if found is None:
            cls = self.types.cls(type_)
            found = self._varbits[id(type_)] = varbit_helpers(type_, cls)
            self.extra_lines.extend(found[0])
        return found

    def function(self, fn: ast.FunctionDecl) -> tuple[str, list[str]]:
        found = self._functions.get(id(fn))
        if found is not None:
            return found
        name = self.names.fresh("fn_" + fn.name)
        self._functions[id(fn)] = (name, [])
        self._compile_function(fn, name)
        return self._functions[id(fn)]

    def field_list_copier(self, index: int, call: ast.Call) -> str:
        """Copier of the user-metadata fields annotated ``@field_list(index)`` (clone,
        resubmit, recirculate). One that is or holds a header is refused: p4c 1.2.4.8
        writes it into the field list as ``<null>``, and BMv2 1.15 cannot load that."""
        key = ("index", index)
        found = self._copiers.get(key)
        if found is not None:
            return found
        meta_type = self._metadata_type
        lines = []
        fn_name = self.names.fresh(f"copy_fields_{index}")
        lines.append(f"def {fn_name}(src, dst):")
        count = 0
        if meta_type is not None:
            for path, type_ in field_list_paths(meta_type, index):
                if _holds_header(type_):
                    raise compile_error(
                        call,
                        f"field list {index} holds '{path}' ({type_.describe()}), a header or "
                        "a struct holding one: p4c 1.2.4.8 writes it as '<null>', which BMv2 1.15 "
                        "cannot load (annotate only bit fields of the metadata)",
                    )
                lines.append("    " + self.types.assign(f"dst.{path}", f"src.{path}", type_))
                count += 1
        if not count:
            lines.append("    pass")
        lines.append("")
        self.extra_lines.extend(lines)
        self._copiers[key] = fn_name
        self._pending_copiers.append((index, fn_name))
        return fn_name

    # ------------------------------------------------------------------ functions

    def _compile_function(self, fn: ast.FunctionDecl, name: str) -> None:
        w = CodeWriter()
        scope = self.global_scope.child()
        params = [CTX_PARAM]
        outs: list[str] = []
        for param in fn.params:
            local = self.names.fresh(param.name)
            params.append(local)
            scope.bind(param, Binding("var", local, param.type))
            if param.direction in ("out", "inout") and not is_aggregate(param.type):  # type: ignore[arg-type]
                outs.append(local)
        self._functions[id(fn)] = (name, outs)
        returns_value = not isinstance(fn.return_type.resolved, t.VoidType)
        w.line(f"def {name}({', '.join(params)}):")
        w.level += 1
        bc = BodyCompiler(self, w, scope, where="function")
        bc.returns.append(("function", outs, returns_value))
        bc.stmts(fn.body.statements)
        w.line(function_return("None" if returns_value else None, outs, returns_value))
        w.level -= 1
        w.line("")
        self._function_lines.extend(w.lines)

    # ------------------------------------------------------------------ blocks

    def annotated(self, name: str, type_: t.Type) -> str:
        """A block parameter, annotated with its generated class when it is a struct:
        nothing to Python, a C type to the native build (:mod:`p4emu.backend.native`)."""
        if isinstance(type_, t.StructType):
            return f"{name}: {self.types.cls(type_)}"
        return name

    def _control_function(self, instance: ast.BlockInstance, fn_name: str) -> list[str]:
        decl = instance.decl
        if not isinstance(decl, ast.ControlDecl):
            raise CompileError(f"{instance.name} is not a control")
        w = CodeWriter()
        scope = Scope(self.global_scope, instance)
        self.bind_constructor_params(scope, instance)
        params = []
        struct_params: set[str] = set()
        deparser = False
        for position, param in enumerate(decl.params):
            ptype = param.type
            if isinstance(ptype, t.ExternType) and ptype.name == "packet_out":
                scope.bind(param, Binding("packet_out", ""))
                deparser = True
                continue
            local = f"p{position}"
            scope.bind(param, Binding("var", local, ptype))
            params.append(self.annotated(local, ptype))
            if isinstance(ptype, t.StructType):
                struct_params.add(local)
        w.line(f"def {fn_name}({', '.join(params)}, {CTX_PARAM}):")
        w.level += 1
        bc = BodyCompiler(self, w, scope, where="deparser" if deparser else "control")
        bc.hoist = Hoist(frozenset(struct_params))
        if deparser:
            with w.block("if not cython.compiled:"):  # the native path: NATIVE_BUF
                w.line("out = []")
                w.line("OUT_APPEND = out.append")
            bc.deparse_bytes = 0
        body_writer = w
        with body_writer.block("try:"):
            bc.declare_locals(decl.locals)
            bc.run_unit(scope, decl.body, [])
        with body_writer.block("except ExitSignal:"):
            w.line("pass")
        if deparser:
            # the native path's locals (C: nothing to Python), then the finished packet
            w.lines[1:1] = ["    " + line for line in native_deparse_locals(bc.deparse_bytes)]
            for line in native_deparse_return():
                w.line(line)
        w.level -= 1
        w.line("")
        return bc.hoist.finish(w.lines, 1, "    ")

    def compile(self) -> CompiledProgram:
        program = self.program
        self._pending_copiers: list[tuple[int, str]] = []
        ingress_decl = program.ingress.decl
        self._meta_param = ingress_decl.params[1] if len(ingress_decl.params) > 1 else None
        meta_type = self._meta_param.type if self._meta_param is not None else None
        self._metadata_type = meta_type if isinstance(meta_type, t.StructType) else None

        parser_decl = program.parser.decl
        header_type = parser_decl.params[1].type
        sm_type = parser_decl.params[3].type if len(parser_decl.params) > 3 else None
        if not isinstance(header_type, t.StructType) or not isinstance(sm_type, t.StructType):
            raise CompileError("the parser does not have the v1model signature")

        blocks: list[list[str]] = []
        blocks.append(ParserGenerator(self, program.parser, "parse_block").generate())
        verify = self._control_function(program.verify_checksum, "verify_block")
        blocks.append(verify)
        blocks.append(self._control_function(program.ingress, "ingress_block"))
        blocks.append(self._control_function(program.egress, "egress_block"))
        compute = self._control_function(program.compute_checksum, "compute_block")
        blocks.append(compute)
        blocks.append(self._control_function(program.deparser, "deparse_block"))

        hdr_cls = self.types.cls(header_type)
        meta_cls = self.types.cls(meta_type) if self._metadata_type is not None else None
        sm_cls = self.types.cls(sm_type)

        # parameters annotated with their classes (the native build's C types)
        # (a method of ProgramBlocks: its parameters the runtime's names, aliased)
        packet = [("s0", hdr_cls, "hdr"), ("s1", meta_cls, "meta"), ("s2", sm_cls, "sm")]
        init_packet = ["def init_packet(self, hdr, meta, sm):"]
        for var, cls, param in packet:
            bound = _bind_typed(var, cls, param) if cls else [f"{var} = {param}"]
            init_packet.extend("    " + line for line in bound)
        set_first = self._set_before_read()
        if set_first:
            init_packet.append(f"    # ingress sets these first: {', '.join(sorted(set_first))}")
        for var, type_, skip in (
            ("s0", header_type, frozenset[str]()),
            ("s1", self._metadata_type, set_first),
            ("s2", sm_type, frozenset[str]()),
        ):
            if type_ is not None:
                lines = self.types.struct_init_lines(var, type_, skip)
                init_packet.extend("    " + line for line in lines)
        source = self._assemble(blocks, hdr_cls, meta_cls, sm_cls, init_packet)
        main_file = program.source_files[0] if program.source_files else "program"
        classes, scalars, bases = self.types.classes, self.types.scalars, self.types.bases
        if self.native_runtime:  # ProgramBlocks an extension type deriving from Blocks
            classes = {**classes, BLOCKS_CLASS: self._blocks_fields}
            bases = {**bases, BLOCKS_CLASS: "Blocks"}
        shared = shared_code(
            source,
            f"<p4emu {main_file}>",
            lambda: native.program_declarations(source, classes, scalars, bases),
        )
        template = ProgramTemplate(
            checked=program,
            options=(self.drop_port, self.no_match_error, self.trace),
            source=source,
            shared=shared,
            origins=dict(self.origins),
            replay=tuple(self._replay),
            copiers=tuple(self._pending_copiers),
            has_verify_checksum=not _does_nothing(verify),
            has_compute_checksum=not _does_nothing(compute),
            error_codes=dict(self.error_codes),
            ids=self._pristine_ids,
            declarations=(classes, scalars, bases),
        )
        # this switch takes its objects through the origins too: each must give back the
        # object generation bound, or another switch would get something else
        ns = template.namespace(self.runtime, self.hooks, self.random)
        for name, value in ns.items():
            if not _same_object(value, self.ns[name]):
                raise CompileError(f"internal error: {name} has a wrong origin")
        return template.finish(ns, self.runtime, self.hooks, self.random, self.ids)

    def _set_before_read(self) -> frozenset[str]:
        """Fields of the user metadata that nothing reads before ingress sets them: the
        constant assignments opening the ingress ``apply`` body, of fields the parser and
        the verify-checksum block never mention. ``init_packet`` need not reset those.
        Anything the analysis does not see through (calls of functions or sub-blocks in
        the parser or verify-checksum, the metadata used there as a whole, a computed
        control-level variable initializer in ingress, tables in verify-checksum) leaves
        the set empty."""
        meta_type = self._metadata_type
        meta_param = self._meta_param
        if meta_type is None or meta_param is None:
            return frozenset()
        ingress = self.program.ingress.decl
        assert isinstance(ingress, ast.ControlDecl)
        for local in ingress.locals:
            init = local.init if isinstance(local, ast.VariableDecl) else None
            if init is not None and init.const_value is None:
                return frozenset()
        found: set[str] = set()
        for stmt in ingress.body.statements:
            if isinstance(stmt, ast.DeclStmt):
                init = getattr(stmt.decl, "init", None)
                if init is None or init.const_value is not None:
                    continue
                break
            if not isinstance(stmt, ast.AssignStmt):
                break
            lhs = stmt.lhs
            if not (
                isinstance(lhs, ast.Member)
                and lhs.kind == ast.MEMBER_FIELD
                and isinstance(lhs.expr, ast.PathExpr)
                and lhs.expr.decl is meta_param
                and stmt.leaves is None
                and stmt.rhs.const_value is not None
                and lhs.type is not None
                and not is_aggregate(lhs.type)
            ):
                break
            found.add(lhs.member)
        if not found:
            return frozenset()
        verify = self.program.verify_checksum.decl
        if any(isinstance(d, ast.TableDecl) for d in getattr(verify, "locals", ())):
            return frozenset()
        paths = members = 0
        for decl in (self.program.parser.decl, verify):
            for node in ast.walk(decl):
                if isinstance(node, ast.Call) and isinstance(
                    node.target, (ast.FunctionCall, ast.BlockApply)
                ):
                    return frozenset()
                if isinstance(node, ast.PathExpr) and node.type is meta_type:
                    paths += 1
                elif (
                    isinstance(node, ast.Member)
                    and isinstance(node.expr, ast.PathExpr)
                    and node.expr.type is meta_type
                ):
                    members += 1
                    found.discard(node.member)
        if paths != members:  # the metadata used as a whole
            return frozenset()
        return frozenset(found)

    def _assemble(
        self,
        blocks: list[list[str]],
        hdr_cls: str,
        meta_cls: str | None,
        sm_cls: str,
        init_packet: list[str],
    ) -> str:
        for name, owner, origin, attr in (
            ("LOG_MSG", self.hooks, Origin("hooks"), "log_msg"),
            ("TRACE", self.hooks, Origin("hooks"), "trace"),
            ("RANDOM", self.random, Origin("random"), "uniform"),
        ):
            self.ns[name] = getattr(owner, attr)
            self.origins[name] = origin.then("attr", attr)
        # the random source itself: compiled, a draw of up to 63 bits is its C call
        # (v1model_externs._random; annotated ``RandomSource``, _closure_type)
        self.ns["RANDOM_SOURCE"] = self.random
        self.origins["RANDOM_SOURCE"] = Origin("random")
        # module level: the aggregate classes and their functions, shared by every
        # __make__ call (one class per type keeps attribute caches valid across switches)
        out = SHARED_IMPORTS.splitlines()
        # the constants of wide fields' halves (p4emu.backend.wide: C in the native build)
        out.extend(wide.constant_lines(self.wide_constants))
        out.extend(self.types.lines)
        if meta_cls is None:
            out.append("class _NoMeta:")
            out.append("    __slots__ = ()")
            out.append("def copy__NoMeta(s):")
            out.append("    return s")
            out.append("def init__NoMeta(s):")
            out.append("    pass")
            meta_cls = "_NoMeta"
        # the closure names of __make__ (one switch's run-time objects, its scratch
        # objects and helper functions) with their annotations: what a block reads of
        # them it takes from its ProgramBlocks object (see _block_method)
        closure = {name: _closure_type(value) for name, value in self.ns.items()}
        for name in _bound_names([*self.extra_lines, *self._function_lines]):
            closure.setdefault(name, "")
        # no exit anywhere in the program's code: no block catches ExitSignal (compiled,
        # a try statement saves and restores the exception state on every call)
        code = (*blocks, self.extra_lines, self._function_lines)
        if not any(EXIT_STATEMENT in line for lines in code for line in lines):
            blocks = [_without_exit_catch(lines) for lines in blocks]
        methods = [_block_method(lines, closure) for lines in blocks]
        fields = list(dict.fromkeys(name for _, used in methods for name in used))
        self._blocks_fields: list[tuple[str, str | None]] = [
            (name, closure[name].removeprefix(": ") or None) for name in fields
        ]
        out.append(f"class {BLOCKS_CLASS}(Blocks):")
        out.extend("    " + line if line else "" for line in init_packet)
        for lines, _ in methods:
            out.extend("    " + line if line else "" for line in lines)
        out.append("def __make__(NS):")
        body: list[str] = []
        for name, value in self.ns.items():
            body.append(f"{name}{_closure_type(value)} = NS[{name!r}]")
        body.extend(self.extra_lines)
        body.extend(self._function_lines)
        body.append(f"B = {BLOCKS_CLASS}()")
        body.extend(f"B.{name} = {name}" for name in fields)
        copiers = ", ".join(f"{name!r}: {name}" for _, name in self._pending_copiers)
        body.append(
            "return {"
            "'blocks': B, 'init_packet': B.init_packet, "
            "'parse_block': B.parse_block, 'verify_block': B.verify_block, "
            "'ingress_block': B.ingress_block, 'egress_block': B.egress_block, "
            "'compute_block': B.compute_block, 'deparse_block': B.deparse_block, "
            f"'new_headers': {hdr_cls}, 'new_metadata': {meta_cls}, "
            f"'new_standard_metadata': {sm_cls}, "
            f"'copy_headers': copy_{hdr_cls}, 'copy_metadata': copy_{meta_cls}, "
            f"'copy_standard_metadata': copy_{sm_cls}, "
            f"'init_headers': init_{hdr_cls}, 'init_metadata': init_{meta_cls}, "
            f"'init_standard_metadata': init_{sm_cls}, "
            f"'copiers': {{{copiers}}}}}"
        )
        out.extend("    " + line if line else "" for line in body)
        # literals past 32 bits in bitwise operations and comparisons named (C compiled)
        return wide.name_literals("\n".join(out), len(SHARED_IMPORTS.splitlines())) + "\n"


#: the class of a generated module's blocks (derives from p4emu.backend.rt.Blocks)
BLOCKS_CLASS = "ProgramBlocks"
#: each block's parameters after ``self`` and before ``ctx``, as rt.Blocks names them
BLOCK_PARAMS = {
    "parse_block": ("data", "hdr", "meta", "sm"),
    "verify_block": ("hdr", "meta"),
    "ingress_block": ("hdr", "meta", "sm"),
    "egress_block": ("hdr", "meta", "sm"),
    "compute_block": ("hdr", "meta"),
    "deparse_block": ("hdr",),
}


def _bound_names(lines: list[str]) -> list[str]:
    """The names the statements ``lines`` bind at their own level (assigned, defined)."""
    names: list[str] = []
    for stmt in pyast.parse("\n".join(lines)).body:
        if isinstance(stmt, (pyast.FunctionDef, pyast.ClassDef)):
            names.append(stmt.name)
        elif isinstance(stmt, pyast.AnnAssign) and isinstance(stmt.target, pyast.Name):
            names.append(stmt.target.id)
        elif isinstance(stmt, pyast.Assign):
            for target in stmt.targets:
                for node in pyast.walk(target):
                    if isinstance(node, pyast.Name):
                        names.append(node.id)
    return names


def _block_method(lines: list[str], closure: dict[str, str]) -> tuple[list[str], list[str]]:
    """The block function ``lines`` (its ``def`` on the first line) as a method of
    :data:`BLOCKS_CLASS`, and the closure names it reads (in the order of ``closure``):
    its parameters are named as :class:`p4emu.backend.rt.Blocks` names them (a ``cpdef``
    override repeats its base's signature), each bound to the block's own name with its
    annotation (its class: the compiled code's C struct); every read of a name of
    ``closure`` is ``self.<name>`` (compiled: the object's C field, read where the
    block reads it: no local bound per call). The rest of the block is unchanged."""
    fn = pyast.parse("\n".join(lines)).body[0]
    if not isinstance(fn, pyast.FunctionDef) or fn.name not in BLOCK_PARAMS:
        raise CompileError(f"internal error: {lines[0]!r} is no block function")
    names = BLOCK_PARAMS[fn.name]
    *own, ctx = fn.args.args
    if len(own) != len(names) or ctx.arg != "ctx":
        raise CompileError(f"{fn.name}: the block does not have the v1model signature")
    head = [f"def {fn.name}(self, {', '.join(names)}, {CTX_PARAM}):"]
    for arg, name in zip(own, names, strict=True):
        if arg.arg == name:
            continue
        if isinstance(arg.annotation, pyast.Name):
            head.extend("    " + line for line in _bind_typed(arg.arg, arg.annotation.id, name))
        else:
            note = f": {pyast.unparse(arg.annotation)}" if arg.annotation is not None else ""
            head.append(f"    {arg.arg}{note} = {name}")
    stored = {
        node.id
        for node in pyast.walk(fn)
        if isinstance(node, pyast.Name) and not isinstance(node.ctx, pyast.Load)
    }
    if stored & closure.keys():  # (the generator never does: a local hides the name)
        raise CompileError(f"internal error: {fn.name} assigns {sorted(stored & closure.keys())}")
    body, read = _names_as_attributes(lines[1:], closure.keys())
    method = [*head, *body]
    left = {
        node.id
        for node in pyast.walk(pyast.parse("\n".join(method)))
        if isinstance(node, pyast.Name) and node.id in closure
    }
    if left:  # a read the tokens did not show (none the generator writes)
        raise CompileError(f"internal error: {fn.name} still reads {sorted(left)}")
    return method, [name for name in closure if name in read]


def _bind_typed(var: str, cls: str, param: str) -> list[str]:
    """The lines binding the block parameter ``param`` to ``var`` of the generated class
    ``cls``. Compiled, an object of exactly that class (what the switch passes: the
    objects the module made) is taken by an unchecked cast, an inline comparison of its
    type; any other object goes through Cython's type test, as a plain typed assignment
    would (its TypeError unchanged). Python runs the plain assignment."""
    return [
        f"{var}: {cls}",
        f"if cython.compiled and type({param}) is {cls}:",
        f"    {var} = cython.cast({cls}, {param})",
        "else:",
        f"    {var} = {param}",
    ]


def _names_as_attributes(lines: list[str], names: Collection[str]) -> tuple[list[str], set[str]]:
    """``lines`` with every name of ``names`` (a name token, not an attribute's) read as
    ``self.<name>``, and the names found."""
    edits: dict[int, list[tuple[int, int]]] = {}
    found: set[str] = set()
    previous = ""
    text = "\n".join(lines) + "\n"
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.NAME and token.string in names and previous != ".":
            row, col = token.start
            edits.setdefault(row - 1, []).append((col, col + len(token.string)))
            found.add(token.string)
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            previous = token.string
    out = list(lines)
    for row, spans in edits.items():
        line = out[row]
        for start, end in reversed(spans):
            line = f"{line[:start]}self.{line[start:end]}{line[end:]}"
        out[row] = line
    return out, found


def _closure_type(value: Any) -> str:
    """The annotation of a run-time object bound for the block functions: its class when
    the native build can use it (a dictionary's ``get`` and a list's items as C API
    calls, a table's fields as a C struct), else none. Python ignores annotations of
    local variables."""
    kind = type(value)
    if kind is dict or kind is list:
        return f": {kind.__name__}"
    if kind is Table:
        return ": Table"
    if kind is Counter:
        return ": Counter"
    if kind is RandomSource:
        return ": RandomSource"
    return ""


def _same_object(a: Any, b: Any) -> bool:
    """``a`` is ``b``, or both are the same method of the same object (each attribute
    access makes a new bound method)."""
    if a is b:
        return True
    if isinstance(a, (MethodType, BuiltinMethodType)) and type(a) is type(b):
        return a.__self__ is b.__self__ and a.__name__ == b.__name__
    return False


def _without_exit_catch(lines: list[str]) -> list[str]:
    """The control function ``lines`` (:meth:`ProgramCompiler._control_function`) without
    its ``try`` / ``except ExitSignal: pass`` around the body (the body one level up);
    another block (the parser's catches nothing) as it is."""
    if "    except ExitSignal:" not in lines:
        return lines
    end = lines.index("    except ExitSignal:")
    try:
        start = lines.index("    try:", 0, end)
    except ValueError:
        raise CompileError(f"internal error: {lines[0]!r} catches outside a try") from None
    if lines[end + 1].strip() != "pass":
        raise CompileError(f"internal error: {lines[0]!r} does more on ExitSignal")
    body = [line.removeprefix("    ") for line in lines[start + 1 : end]]
    return [*lines[:start], *body, *lines[end + 2 :]]


def _does_nothing(lines: list[str]) -> bool:
    """True for a generated control function whose ``try`` body is only ``pass``."""
    body = [line.strip() for line in lines if line.strip()]
    return body[1:] == ["try:", "pass", "except ExitSignal:", "pass"]


def _holds_header(type_: t.Type) -> bool:
    """True for a header, header stack or union, or a struct holding one."""
    if isinstance(type_, (t.HeaderType, t.HeaderStackType, t.HeaderUnionType)):
        return True
    if isinstance(type_, t.StructType):
        return any(_holds_header(info.type) for info in type_.fields)
    return False


__all__ = [
    "CompileStats",
    "CompiledProgram",
    "Hooks",
    "Origin",
    "ProgramTemplate",
    "compile_program",
    "compile_stats",
    "unsupported",
]
