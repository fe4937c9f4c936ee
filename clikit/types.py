"""argparse ``type=`` checkers shared by every console script.

Each raises :class:`argparse.ArgumentTypeError` naming the value it got and what it
expected, so argparse prints one line (``prog: error: argument --x: ...``) and exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

MIN_PORT = 1024  # never ask for a privileged port
MAX_PORT = 65535
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def byte_size(text: str) -> int:
    """``4096``, ``64K``, ``16M``, ``1G``, ``16MiB``, ``1.5M`` (powers of 1024), at least 1."""
    match = _SIZE.match(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r} is not a byte count (e.g. 4096, 64K, 16M, 1G)")
    value = int(float(match[1]) * _SIZE_UNITS[match[2].lower()])
    if value < 1:
        raise argparse.ArgumentTypeError(f"a byte count must be at least 1, got {text!r}")
    return value


def _number(text: str, kind: type[int] | type[float]) -> Any:
    try:
        return int(text, 0) if kind is int else float(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None


def positive_int(text: str) -> int:
    value = _number(text, int)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return int(value)


def non_negative_int(text: str) -> int:
    value = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return int(value)


def positive_float(text: str) -> float:
    value = _number(text, float)
    if not value > 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return float(value)


def non_negative_float(text: str) -> float:
    value = _number(text, float)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return float(value)


def port_number(text: str) -> int:
    """A TCP/UDP port an unprivileged process may bind: 1024..65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not MIN_PORT <= value <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"port {value} is outside {MIN_PORT}..{MAX_PORT}")
    return value


def command_line(text: str) -> list[str]:
    """A command and its arguments, split the way a shell would (``shlex``)."""
    try:
        parts = shlex.split(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"cannot split {text!r}: {exc}") from None
    if not parts:
        raise argparse.ArgumentTypeError("an empty command")
    return parts


def json_object(text: str) -> dict[str, Any]:
    """A JSON object (``{"key": value, ...}``)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object {{...}}, got {text!r}")
    return value


def input_file(text: str) -> Path:
    """A file the command will read: it exists, is a regular file and is readable, checked
    when the command line is parsed, so a command refuses it (exit 2) before it starts
    anything."""
    path = Path(text)
    shown = text if len(text) <= 200 else f"{text[:200]}..."
    try:
        is_file = path.is_file()
    except OSError as exc:  # a name too long, a loop of links
        raise argparse.ArgumentTypeError(f"{shown}: {exc.strerror}") from None
    if not is_file:
        what = "is not a regular file" if path.exists() else "no such file"
        raise argparse.ArgumentTypeError(f"{shown}: {what}")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"{shown}: not readable")
    return path
