"""The P4Info of a checked program, kept with it in p4emu's checked-program cache.

:func:`p4info_for_program` gives what :func:`p4emu.p4info.extract.p4info_for_program`
gives (``extract_model`` then ``build_p4info``). When the program came from the
checked-program cache (:func:`p4emu.frontend.load_checked`), the P4Info's bytes are kept
in its entry (:func:`p4emu.frontend.cache.keep_companion`, slot :data:`SLOT`) under the
digest of the code that makes it (:func:`p4info_digest`: this package's modules,
``p4emu/proto.py``, the Python version), and a later process reads them back instead of
extracting the model again: without importing the extractor or the builder. Bytes that
do not parse as a P4Info are logged and the P4Info is made again (and kept again).
"""

from __future__ import annotations

import logging
from pathlib import Path

from google.protobuf.message import DecodeError

from p4emu.frontend import ast, cache
from p4emu.proto import p4i

log = logging.getLogger("p4emu.p4info")

SLOT = "p4info"
"""The companion slot of the kept P4Info (its serialized bytes)."""
_PACKAGE = Path(__file__).resolve().parent


def p4info_digest() -> str:
    """The sha256 of the code that makes a P4Info from a checked program (see module docs)."""
    return cache.code_digest((_PACKAGE,), (_PACKAGE.parent / "proto.py",))


def p4info_from_bytes(data: object) -> p4i.P4Info:
    """The P4Info serialized as ``data``; ``ValueError`` when it is not one."""
    if not isinstance(data, bytes):
        raise ValueError(f"a kept P4Info is bytes, not {type(data).__name__}")
    try:
        return p4i.P4Info.FromString(data)
    except DecodeError as exc:
        raise ValueError(f"a kept P4Info does not parse: {exc}") from None


def p4info_for_program(program: ast.CheckedProgram) -> p4i.P4Info:
    """The P4Info p4c generates for ``program`` (see module docs)."""
    try:
        digest: str | None = p4info_digest()
    except OSError:  # p4emu's own files unreadable: nothing kept is trusted
        digest = None
    if digest is not None:
        kept = cache.companion(program, SLOT, digest)
        if kept is not None:
            try:
                return p4info_from_bytes(kept)
            except ValueError as exc:
                log.warning("a kept P4Info is damaged (%s): made again", exc)
    from p4emu.p4info.extract import p4info_for_program as extract

    info = extract(program)
    if digest is not None:
        cache.keep_companion(program, SLOT, digest, info.SerializeToString(deterministic=True))
    return info
