"""The controller's port classes are the program's (p4src/include/defines.p4)."""

from __future__ import annotations

import re
from pathlib import Path

import controller.p4names as p4names

DEFINES = (Path(__file__).resolve().parents[2] / "p4src" / "include" / "defines.p4").read_text(
    encoding="utf-8"
)


def test_port_classes_match_defines_p4() -> None:
    found = dict(re.findall(r"const\s+bit<\d+>\s+(PORT_CLASS_\w+)\s*=\s*(\d+)\s*;", DEFINES))
    assert {name: int(value) for name, value in found.items()} == {
        "PORT_CLASS_FABRIC": p4names.PORT_CLASS_FABRIC,
        "PORT_CLASS_HOST": p4names.PORT_CLASS_HOST,
        "PORT_CLASS_CPU": p4names.PORT_CLASS_CPU,
    }
