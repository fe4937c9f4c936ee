"""The native build of the per-packet modules (pyproject.toml holds everything else).

``pip install .`` and ``pip install -e .`` (or ``python setup.py build_ext --build-lib
DIR``) compile the modules of ``clikit.hotpath.COMPILED_MODULES`` with Cython (a build
requirement) and the system C compiler into extension modules, one compiler per core.
Where that cannot work (no C compiler, no Python headers) the build says so and goes on:
the install then runs the pure-Python path, which is also the reference. The ``.pxd``
files beside the per-packet modules give their C types. ``MRC_TESTBED_NATIVE=0`` at
install time builds nothing (the pure path only). docs/virtual-fabric.md, "Compiled hot
path", says what the build gains and costs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from clikit.hotpath import (  # noqa: E402
    COMPILED_MODULES,
    RECORD_SUFFIX,
    extension_stem,
    record_of,
    source_sha256,
)

NATIVE_ENV = "MRC_TESTBED_NATIVE"
# C types come from the .pxd files beside the sources only: annotations are not C types (a
# ``float`` annotation would make an int argument a C double and change results).
DIRECTIVES = {"language_level": 3, "annotation_typing": False, "binding": True}
# -g0: no debug info (it triples the compile time of Cython's large C files)
COMPILE_ARGS = ["-O2", "-g0"]
# module -> sha256 of its .py and .pxd and of the .pxd files it cimports, taken before
# Cython reads them: a source edited during the build then reads as changed since it
# (clikit.hotpath.stale)
RECORDS: dict[str, str] = {}
# where Cython writes the C of each module (beside it, the record of what it was made from)
GENERATED = Path("build") / "cython"


def extensions() -> list[Extension]:
    value = os.environ.get(NATIVE_ENV, "")
    if value == "0":
        print(f"mrc-testbed: ${NATIVE_ENV}=0: pure-Python path only", file=sys.stderr)
        return []
    if value not in ("", "1"):
        raise SystemExit(f"mrc-testbed: ${NATIVE_ENV} must be 0, 1 or unset, not {value!r}")
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("mrc-testbed: Cython not available: pure-Python path only", file=sys.stderr)
        return []
    for name in COMPILED_MODULES:  # the build records, of the sources as Cython reads them
        RECORDS[name] = source_sha256(HERE.joinpath(*name.split(".")).with_suffix(".py"))
        _forget_stale_c(name)
    modules = [
        Extension(
            name,
            [str(Path(*name.split(".")).with_suffix(".py"))],
            extra_compile_args=COMPILE_ARGS,
        )
        for name in COMPILED_MODULES
    ]
    built = cythonize(
        modules,
        compiler_directives=DIRECTIVES,
        build_dir=str(GENERATED),
        quiet=True,
        nthreads=os.cpu_count() or 1,
    )
    for name in COMPILED_MODULES:
        generated = _generated_c(name)
        if generated.is_file():
            _c_record(generated).write_text(RECORDS[name] + "\n", encoding="ascii")
    return built


def _generated_c(name: str) -> Path:
    return GENERATED.joinpath(*name.split(".")).with_suffix(".c")


def _c_record(generated: Path) -> Path:
    return generated.with_name(generated.name + RECORD_SUFFIX)


def _forget_stale_c(name: str) -> None:
    """Remove ``name``'s generated C when what it was made from changed (its record
    differs: clikit.hotpath.source_sha256 covers the .pxd files it cimports), so Cython
    writes it again and the compiler rebuilds the extension. Cython's own check missed a
    cimported .pxd that changed (vfabric.nodes after nic_emu/connection/queue_pair.pxd,
    cimported through nic_emu/core.pxd), and an extension built against another layout of
    a cimported type fails to import ("size changed")."""
    generated = _generated_c(name)
    record = _c_record(generated)
    if generated.is_file() and (
        not record.is_file() or record.read_text(encoding="ascii").strip() != RECORDS[name]
    ):
        generated.unlink()


def _tagged(fullname: str, path: str) -> str:
    """``path`` (a file name that ends in ``fullname``'s last part and the platform's
    extension suffix) with ``fullname``'s stem (``clikit.hotpath.extension_stem``)."""
    if fullname not in COMPILED_MODULES:
        return path
    head, tail = os.path.split(path)
    last = fullname.rsplit(".", 1)[-1]
    stem = extension_stem(fullname).rsplit("/", 1)[-1]
    if tail.startswith(stem + ".") or not tail.startswith(last + "."):
        return path  # already so named (or not this module's file)
    return os.path.join(head, stem + tail[len(last) :])


class OptionalBuildExt(build_ext):
    """Builds what it can; a module that does not compile stays pure (and says why)."""

    def initialize_options(self) -> None:
        super().initialize_options()
        self.parallel = os.cpu_count() or 1  # one gcc per core (`-j N` overrides)

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler at all: the whole build step fails
            print(f"mrc-testbed: native build skipped ({exc}): pure-Python path", file=sys.stderr)

    # Where each extension goes: ``clikit.hotpath.extension_stem`` plus the platform's
    # suffix (a pure layer's modules under a name that only the finder loads). setuptools
    # asks by the dotted name (the in-place copy), distutils by the path in the build.
    def get_ext_filename(self, fullname: str) -> str:
        return _tagged(fullname, super().get_ext_filename(fullname))

    def get_ext_fullpath(self, ext_name: str) -> str:
        return _tagged(self.get_ext_fullname(ext_name), super().get_ext_fullpath(ext_name))

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
            # the build record: which source this extension was built from
            built = Path(self.get_ext_fullpath(ext.name))
            record_of(built).write_text(RECORDS[ext.name] + "\n", encoding="ascii")
        except Exception as exc:
            print(
                f"mrc-testbed: {ext.name} not built ({exc}): its pure source runs", file=sys.stderr
            )


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
