"""Fixtures of the generated code's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4emu.backend import native
from p4emu.backend import program as program_module


@pytest.fixture
def fresh_native(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated modules compile into a cache of the test's own, from a clean slate
    (nothing loaded or shared yet; MRC_TESTBED_PURE, set by tests/conftest.py, unset)."""
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(native, "_loaded", {})
    monkeypatch.delenv("MRC_TESTBED_PURE", raising=False)
    monkeypatch.setattr(program_module, "_shared_code", program_module._shared_code.copy())
