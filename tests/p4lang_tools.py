"""Finding p4lang's own tools (p4c, p4testgen, simple_switch, simple_switch_grpc) for the
tests and scripts that compare p4emu with them.

A tool is taken from ``PATH`` first, then from the directory named by ``MRC_P4LANG_BIN``
(for instance the ``bin/`` of a p4lang build). ``tests/conftest.py`` puts that directory on
``PATH`` for the whole test session, so code under test that runs the tools by name (the
testbed's ``--target bmv2``) finds them too.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ENV_VAR = "MRC_P4LANG_BIN"
"""Environment variable naming a directory that holds p4c / BMv2 binaries."""


def env_bin_dir() -> Path | None:
    """The directory ``MRC_P4LANG_BIN`` names, if it is set and is a directory."""
    value = os.environ.get(ENV_VAR, "")
    if value and Path(value).is_dir():
        return Path(value).resolve()
    return None


def find_tool(name: str) -> str | None:
    """Absolute path of p4lang tool ``name`` (PATH, then ``$MRC_P4LANG_BIN``), or None."""
    found = shutil.which(name)
    if found:
        return found
    directory = env_bin_dir()
    if directory is not None:
        return shutil.which(name, path=str(directory))
    return None


def missing_reason(name: str) -> str:
    """Skip reason for a test that needs tool ``name``."""
    return f"{name} is neither on PATH nor in ${ENV_VAR}"
