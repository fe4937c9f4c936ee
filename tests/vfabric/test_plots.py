"""The plotting module's transfer figure (the process demo's): bins and the PNG; the
scenario figure is tested with the results (tests/vfabric/test_results.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vfabric.plots import path_series, plane_series, write_transfer_plot


def test_plane_series_bins_bytes_into_goodput() -> None:
    centres, series = plane_series([[0.0, 0, 125], [0.99, 1, 250]], end_s=1.0, bins=2)
    assert centres == [0.25, 0.75]
    assert series[0] == [pytest.approx(125 * 8 / 0.5 / 1e9), 0.0]
    assert series[1] == [0.0, pytest.approx(250 * 8 / 0.5 / 1e9)]


def test_path_series_bins_bytes_per_plane_and_t1() -> None:
    timeline = [[0.0, 0, "p0-t1-0", 125], [0.99, 0, "p0-t1-1", 250], [0.6, 1, None, 125]]
    centres, series = path_series(timeline, end_s=1.0, bins=2)
    assert centres == [0.25, 0.75]
    assert series[(0, "p0-t1-0")] == [pytest.approx(125 * 8 / 0.5 / 1e9), 0.0]
    assert series[(0, "p0-t1-1")] == [0.0, pytest.approx(250 * 8 / 0.5 / 1e9)]
    assert series[(1, None)] == [0.0, pytest.approx(125 * 8 / 0.5 / 1e9)]


def test_plot_of_paths_is_a_png_with_many_paths_too(tmp_path: Path) -> None:
    few = [[0.1, 0, "p0-t1-0", 4096], [0.2, 0, "p0-t1-1", 4096], [0.2, 1, "p1-t1-0", 4096]]
    many = [[0.1, p, f"p{p}-t1-{i}", 4096] for p in range(4) for i in range(4)]
    for name, paths in (("few", few), ("many", many)):
        path = write_transfer_plot(
            tmp_path / f"{name}.png",
            [[0.1, 0, 4096], [0.2, 1, 4096]],
            0.1,
            0.15,
            0.3,
            "t",
            paths,
            ("p0-t0-0", "p0-t1-0"),
        )
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_is_a_png(tmp_path: Path) -> None:
    path = write_transfer_plot(
        tmp_path / "d" / "demo.png", [[0.1, 0, 4096], [0.2, 1, 4096]], 0.1, 0.15, 0.3, "t"
    )
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
