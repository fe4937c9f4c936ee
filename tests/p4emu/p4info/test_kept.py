"""The P4Info kept with its checked program (p4emu.p4info.kept): the same P4Info as
extracting it, read back by a later load without the extractor, made again when the kept
bytes are damaged or made by other code, never kept for a program not from the cache."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from p4emu.frontend import cache, load_checked, load_program
from p4emu.p4info import extract, kept, p4info_for_program

PROGRAM = Path(__file__).resolve().parents[3] / "p4src" / "mrc_switch.p4"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def no_extraction(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(program: object) -> None:
        raise AssertionError("extracted although the P4Info was kept")

    monkeypatch.setattr(extract, "p4info_for_program", refused)


def test_the_kept_p4info_is_the_extracted_one(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = p4info_for_program(load_checked(PROGRAM))
    assert made == extract.p4info_for_program(load_program(PROGRAM))
    no_extraction(monkeypatch)
    again = p4info_for_program(load_checked(PROGRAM))  # a new object, read from the entry
    assert again == made and again is not made


def test_damaged_bytes_are_made_again_and_kept_again(
    root: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    made = p4info_for_program(load_checked(PROGRAM))
    checked = load_checked(PROGRAM)
    assert cache.keep_companion(checked, kept.SLOT, kept.p4info_digest(), b"\xff\xff\xff")
    assert p4info_for_program(load_checked(PROGRAM)) == made
    assert "made again" in caplog.text
    checked = load_checked(PROGRAM)
    assert cache.keep_companion(checked, kept.SLOT, kept.p4info_digest(), "not bytes")
    assert p4info_for_program(load_checked(PROGRAM)) == made
    no_extraction(monkeypatch)
    assert p4info_for_program(load_checked(PROGRAM)) == made


def test_bytes_of_other_code_are_not_used(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p4info_for_program(load_checked(PROGRAM))
    monkeypatch.setattr(kept, "p4info_digest", lambda: "other code")
    calls = []
    original = extract.p4info_for_program
    monkeypatch.setattr(extract, "p4info_for_program", lambda p: calls.append(p) or original(p))
    p4info_for_program(load_checked(PROGRAM))
    assert len(calls) == 1


def test_a_program_not_from_the_cache_is_extracted_each_time(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    original = extract.p4info_for_program
    monkeypatch.setattr(extract, "p4info_for_program", lambda p: calls.append(p) or original(p))
    p4info_for_program(load_program(PROGRAM))
    p4info_for_program(load_program(PROGRAM))
    assert len(calls) == 2 and not root.exists()


def test_a_kept_p4info_imports_no_extractor(root: Path) -> None:
    code = """
        import sys
        from p4emu.frontend import load_checked
        from p4emu.p4info import p4info_for_program
        info = p4info_for_program(load_checked(sys.argv[1]))
        assert info.tables, "no tables"
        print(sorted(m for m in sys.modules if m.startswith("p4emu.p4info.")))
    """
    env = {**os.environ, cache.CACHE_ENV: str(root)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), str(PROGRAM)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for _ in range(2)
    ]
    assert "p4emu.p4info.extract'" in runs[0]  # the first process extracts and keeps it
    for name in ("extract", "builder", "model"):
        assert f"'p4emu.p4info.{name}'" not in runs[1]
