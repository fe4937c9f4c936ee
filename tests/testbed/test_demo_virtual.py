"""``mrc-testbed demo`` in its default, virtual mode (vfabric), through the one driver."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from testbed import cli
from testbed.demo import DemoOptions, run_demo
from testbed.scenario.exceptions import ScenarioRunError

SIZE = 4 << 20
VOLATILE = ("wall_s", "run_wall_s", "out_dir", "plot")


def _numbers(result: object) -> dict:
    data = result.to_json()  # type: ignore[attr-defined]
    return {k: v for k, v in data.items() if k not in VOLATILE}


def _burners(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


@pytest.mark.integration  # starts two CPU-burning processes
def test_demo_gives_the_same_numbers_beside_two_cpu_burners(tmp_path: Path) -> None:
    quiet = run_demo(DemoOptions(size=SIZE, out_dir=tmp_path / "quiet"))
    burners = _burners(2)
    try:
        loaded = run_demo(DemoOptions(size=SIZE, out_dir=tmp_path / "loaded"))
    finally:
        for proc in burners:
            proc.kill()
            proc.wait()
    assert quiet.intact and quiet.bytes_delivered_intact == SIZE
    assert quiet.repath_us and 0 < quiet.cut_ns < quiet.restore_ns
    assert set(quiet.goodput_fraction) == {"before", "during", "after"}
    assert _numbers(quiet) == _numbers(loaded)
    for name in ("demo.png", "events.jsonl", "results.json"):
        assert (tmp_path / "loaded" / name).stat().st_size > 0
    assert (tmp_path / "loaded" / "demo.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_demo_prints_the_summary_and_hash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert cli.main(["demo", "--bytes", "1M", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "delivered intact: 1,048,576 of 1,048,576 bytes" in text
    assert "repath time:" in text and "goodput (fraction of 200 Gb/s line rate)" in text
    digest = json.loads((out / "results.json").read_text())["event_log_sha256"]
    assert f"event-log sha256: {digest}" in text


def test_demo_with_an_unknown_cut_link_names_it(tmp_path: Path) -> None:
    options = DemoOptions(size=1 << 20, cut=("p0-t0-0", "p0-t1-7"), out_dir=tmp_path)
    with pytest.raises(ScenarioRunError, match="p0-t1-7"):
        run_demo(options)


def test_a_failed_demo_still_writes_what_it_has_and_says_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vfabric import VirtualFabric

    real_run = VirtualFabric.run

    def broken_run(self: VirtualFabric, until_ns: int | None = None, **kwargs: object) -> bool:
        real_run(self, 30_000)
        raise RuntimeError("simulated crash")

    monkeypatch.setattr(VirtualFabric, "run", broken_run)
    said: list[str] = []
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_demo(DemoOptions(size=SIZE, out_dir=tmp_path), said.append)
    assert any(str(tmp_path) in line and "failed" in line for line in said)
    assert (tmp_path / "events.jsonl").read_text().count("\n") > 1
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["demo"]["failure"].startswith("RuntimeError")
    assert (tmp_path / "demo.png").read_bytes()[:4] == b"\x89PNG"
    assert results["demo"]["interrupted"] is False


def test_an_interrupted_demo_says_so_in_its_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vfabric import VirtualFabric

    real_run = VirtualFabric.run

    def interrupted_run(self: VirtualFabric, until_ns: int | None = None, **kwargs: object) -> bool:
        real_run(self, 30_000)
        raise KeyboardInterrupt  # Ctrl-C in the middle of the run

    monkeypatch.setattr(VirtualFabric, "run", interrupted_run)
    with pytest.raises(KeyboardInterrupt):
        run_demo(DemoOptions(size=SIZE, out_dir=tmp_path))
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["demo"]["interrupted"] is True
    assert results["demo"]["failure"].startswith("interrupted (Ctrl-C)")
