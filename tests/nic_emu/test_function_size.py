"""No function of nic_emu is longer than 120 lines (issue 28): a longer one mixes
concerns that deserve names of their own."""

from __future__ import annotations

import ast
from pathlib import Path

import nic_emu

MAX_LINES = 120


def test_no_function_in_nic_emu_is_over_120_lines() -> None:
    root = Path(nic_emu.__file__).parent
    long = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({lines})")
    assert not long, long
