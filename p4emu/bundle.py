"""The ``p4_device_config`` format p4emu accepts in SetForwardingPipelineConfig.

BMv2 expects p4c's JSON there; p4emu compiles P4_16 source itself, so it expects source.
Two forms are accepted (documented in docs/p4emu-switch.md):

1. Plain UTF-8 P4_16 source of a self-contained program (only ``<core.p4>``/``<v1model.p4>``
   and other p4emu-bundled system includes).
2. A *source bundle* for programs split over files: UTF-8 JSON
   ``{"format": "p4emu-source-bundle", "version": 1, "main": "prog.p4",
   "files": {"prog.p4": "...", "include/headers.p4": "..."}}`` — every file that a quoted
   ``#include "..."`` reaches, by path relative to the main file's directory.

p4c's BMv2 JSON is recognised and refused with a clear error.

Limits: the whole p4_device_config is at most :data:`MAX_DEVICE_CONFIG_BYTES`, a bundle has
at most :data:`MAX_BUNDLE_FILES` files, each at most the front end's per-file limit. When the
program loads, includes resolve only inside the bundle and p4emu's own ``core.p4`` /
``v1model.p4`` (the front end's include confinement, p4emu.frontend.preprocessor). Names
are at most :data:`MAX_BUNDLE_NAME_BYTES` per component and :data:`MAX_BUNDLE_PATH_BYTES`
in all; an error quotes at most 64 characters of a name.

A bundle is written for the front end under the process's private workspace
(``$TMPDIR/p4emu-PID-*``, mode 0700), removed when the load ends and, whatever is left,
when the process exits (:func:`remove_workspace`; ``p4emu-switch`` calls it on SIGTERM
and SIGINT before it leaves).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from p4emu.exceptions import P4EmuError
from p4emu.frontend.source import MAX_SOURCE_FILE_BYTES, MAX_TOTAL_SOURCE_BYTES

BUNDLE_FORMAT = "p4emu-source-bundle"
BUNDLE_VERSION = 1
PLAIN_SOURCE_NAME = "program.p4"
MAX_DEVICE_CONFIG_BYTES = 2 * MAX_TOTAL_SOURCE_BYTES
"""Largest p4_device_config (source, or bundle JSON with its escaping) p4emu decodes."""
MAX_BUNDLE_FILES = 1024
"""Most files one source bundle may carry."""
MAX_BUNDLE_NAME_BYTES = 255
"""Longest file or directory name in a bundle (NAME_MAX of Linux file systems)."""
MAX_BUNDLE_PATH_BYTES = 1024
"""Longest path of a bundle file, well under PATH_MAX (4096) with the workspace's prefix."""
_QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


class DeviceConfigError(P4EmuError):
    """A p4_device_config that p4emu cannot use; the message says why."""


@dataclass(frozen=True)
class SourceBundle:
    """A program split over files: the main file's name and every file's text by its path
    relative to the main file's directory."""

    main: str
    files: dict[str, str]

    def to_bytes(self) -> bytes:
        document = {
            "format": BUNDLE_FORMAT,
            "version": BUNDLE_VERSION,
            "main": self.main,
            "files": self.files,
        }
        return json.dumps(document, sort_keys=True).encode()

    def materialize(self, directory: Path) -> Path:
        """Writes the files under ``directory``; returns the main file's path."""
        for name, text in self.files.items():
            target = directory / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        return directory / self.main


def bundle_program(path: str | Path) -> SourceBundle:
    """Collects ``path`` and every file its quoted includes reach (recursively)."""
    main = Path(path).resolve()
    if not main.is_file():
        raise DeviceConfigError(f"P4 program {path} does not exist")
    root = main.parent
    files: dict[str, str] = {}
    pending = [main]
    while pending:
        current = pending.pop()
        try:
            relative = current.relative_to(root).as_posix()
        except ValueError:
            raise DeviceConfigError(
                f"{current} is included from outside the program's directory {root}; a bundle cannot carry it"
            ) from None
        if relative in files:
            continue
        try:
            text = current.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DeviceConfigError(f"cannot read {current}: {exc}") from exc
        files[relative] = text
        for included in _QUOTED_INCLUDE.findall(text):
            candidate = (current.parent / included).resolve()
            if candidate.is_file():
                pending.append(candidate)
            # An include that does not resolve here is reported by the front end on load.
    return SourceBundle(main=main.relative_to(root).as_posix(), files=files)


def device_config_for(path: str | Path) -> bytes:
    """The p4_device_config to send p4emu for the program at ``path``."""
    bundle = bundle_program(path)
    if len(bundle.files) == 1:
        return bundle.files[bundle.main].encode()
    return bundle.to_bytes()


def parse_device_config(data: bytes) -> SourceBundle:
    """Decodes a p4_device_config into a bundle; raises DeviceConfigError."""
    if len(data) > MAX_DEVICE_CONFIG_BYTES:
        raise DeviceConfigError(
            f"p4_device_config is {len(data)} bytes, over the limit of {MAX_DEVICE_CONFIG_BYTES}"
        )
    if not data.strip():
        raise DeviceConfigError(
            "p4_device_config is empty: p4emu needs the P4_16 source of the program"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DeviceConfigError(
            f"p4_device_config is not UTF-8 text (byte {exc.start}): p4emu needs P4_16 source"
        ) from None
    if text.lstrip()[:1] in ("{", "["):
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DeviceConfigError(
                f"p4_device_config looks like JSON but does not parse: {exc}"
            ) from None
        except RecursionError:
            raise DeviceConfigError(
                "p4_device_config looks like JSON but nests too deeply to parse"
            ) from None
        if not isinstance(document, dict):
            raise DeviceConfigError("p4_device_config JSON must be an object")
        if document.get("format") != BUNDLE_FORMAT:
            if "pipelines" in document or "header_types" in document:
                raise DeviceConfigError(
                    "p4_device_config is p4c's BMv2 JSON, which is not supported by p4emu: "
                    "send the P4_16 source or a p4emu source bundle (see docs/p4emu-switch.md)"
                )
            raise DeviceConfigError(f"p4_device_config JSON is not a {BUNDLE_FORMAT!r} document")
        return _bundle_from_document(document)
    _check_size(PLAIN_SOURCE_NAME, text)
    return SourceBundle(main=PLAIN_SOURCE_NAME, files={PLAIN_SOURCE_NAME: text})


def _check_size(name: str, text: str) -> None:
    size = len(text.encode("utf-8"))
    if size > MAX_SOURCE_FILE_BYTES:
        raise DeviceConfigError(
            f"source file {name[:64]!r} is {size} bytes, over the per-file limit of {MAX_SOURCE_FILE_BYTES}"
        )


def _bundle_from_document(document: dict[str, object]) -> SourceBundle:
    if document.get("version") != BUNDLE_VERSION:
        raise DeviceConfigError(
            f"source bundle version {repr(document.get('version'))[:32]} is not supported (expected {BUNDLE_VERSION})"
        )
    main, files = document.get("main"), document.get("files")
    if not isinstance(files, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in files.items()
    ):
        raise DeviceConfigError("source bundle 'files' must map relative paths to source text")
    if not isinstance(main, str) or main not in files:
        shown = repr(main[:64]) if isinstance(main, str) else type(main).__name__
        raise DeviceConfigError(f"source bundle 'main' ({shown}) must name one of its files")
    if len(files) > MAX_BUNDLE_FILES:
        raise DeviceConfigError(
            f"source bundle has {len(files)} files, over the limit of {MAX_BUNDLE_FILES}"
        )
    total = 0
    for name, text in files.items():
        pure = PurePosixPath(name)
        if (
            not name
            or pure.is_absolute()
            or pure.as_posix() != name
            or any(part in (".", "..") for part in pure.parts)
            or "\x00" in name
        ):
            raise DeviceConfigError(
                f"source bundle path {name[:64]!r} must be a plain relative path inside the bundle "
                "(no leading '/', no '.' or '..' components)"
            )
        if len(name.encode()) > MAX_BUNDLE_PATH_BYTES or any(
            len(part.encode()) > MAX_BUNDLE_NAME_BYTES for part in pure.parts
        ):
            raise DeviceConfigError(
                f"source bundle path {name[:64]!r}... is too long: at most "
                f"{MAX_BUNDLE_NAME_BYTES} bytes per name and {MAX_BUNDLE_PATH_BYTES} in all "
                "(the limits MAX_BUNDLE_NAME_BYTES, MAX_BUNDLE_PATH_BYTES)"
            )
        for parent in pure.parents:
            if parent.as_posix() in files:
                raise DeviceConfigError(
                    f"source bundle path {name[:64]!r} is below {parent.as_posix()[:64]!r}, which is a file"
                )
        _check_size(name, text)
        total += len(text.encode("utf-8"))
    if total > MAX_TOTAL_SOURCE_BYTES:
        raise DeviceConfigError(
            f"source bundle holds {total} bytes of source, over the limit of {MAX_TOTAL_SOURCE_BYTES}"
        )
    return SourceBundle(main=main, files=dict(files))


class _Workspace:
    """The process's private directory for materialized bundles (mode 0700, created on first
    use, removed at exit): one ``rmtree`` removes every bundle a stopping process still has,
    whichever way it stops (``remove_workspace`` from a signal path, ``atexit`` otherwise)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._path: Path | None = None

    def path(self) -> Path:
        with self._lock:
            if self._path is None or not self._path.is_dir():
                self._path = Path(tempfile.mkdtemp(prefix=f"p4emu-{os.getpid()}-"))
                atexit.register(self.remove)
            return self._path

    def remove(self) -> None:
        with self._lock:
            path, self._path = self._path, None
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)


_WORKSPACE = _Workspace()


def remove_workspace() -> None:
    """Removes every bundle this process materialized (before ``os._exit``)."""
    _WORKSPACE.remove()


class MaterializedBundle:
    """A bundle written to a temporary directory (inside the process's private workspace)
    for the front end; removed on close. Raises DeviceConfigError when the files cannot be
    written, naming the bundle's path only."""

    def __init__(self, bundle: SourceBundle) -> None:
        self._directory = tempfile.TemporaryDirectory(prefix="p4emu-bundle-", dir=_WORKSPACE.path())
        try:
            self.main = bundle.materialize(Path(self._directory.name))
        except OSError as exc:
            self.close()
            name = Path(exc.filename).name if exc.filename else "?"
            raise DeviceConfigError(
                f"source bundle file {name[:64]!r} cannot be written: {exc.strerror}"
            ) from None

    def close(self) -> None:
        self._directory.cleanup()

    def __enter__(self) -> MaterializedBundle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
