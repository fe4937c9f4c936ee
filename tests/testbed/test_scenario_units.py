from __future__ import annotations

import pytest

from testbed.scenario.units import (
    format_size,
    format_time_ns,
    parse_fraction,
    parse_size,
    parse_time_ns,
)


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("150us", 150_000),
        ("2ms", 2_000_000),
        ("500ns", 500),
        ("1.5us", 1_500),
        ("1s", 10**9),
        ("20 µs", 20_000),
        (0, 0),
        ("0s", 0),
    ],
)
def test_times(text: object, ns: int) -> None:
    assert parse_time_ns(text) == ns


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("soon", "expected a time like '150us' or '2ms', got 'soon'"),
        (150, "a number needs a unit"),
        ("1.5ns", "not a whole number of nanoseconds"),
        ("3 weeks", "got '3 weeks'"),
        (None, "got nothing (null)"),
        (True, "got true"),
    ],
)
def test_bad_times(text: object, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_time_ns(text)


@pytest.mark.parametrize(
    ("text", "nbytes"),
    [
        (65536, 65536),
        ("64KiB", 65536),
        ("4MiB", 4 << 20),
        ("1GiB", 1 << 30),
        ("1MB", 10**6),
        ("100B", 100),
        ("0.5MiB", 1 << 19),
    ],
)
def test_sizes(text: object, nbytes: int) -> None:
    assert parse_size(text) == nbytes


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("64 parsecs", "units: B, KiB"),
        (0, "at least 1 byte"),
        ("0.3B", "whole number of bytes"),
        ([1], "got a list"),
        (-5, "at least 1 byte"),
    ],
)
def test_bad_sizes(text: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_size(text)


def test_fractions() -> None:
    assert parse_fraction("20%") == pytest.approx(0.2)
    assert parse_fraction(0.01) == pytest.approx(0.01)
    assert parse_fraction(1) == 1.0
    for bad in ("lots", "150%", -0.1, "x%", None):
        with pytest.raises(ValueError, match=r"fraction like 0\.2 or '20%'"):
            parse_fraction(bad)


def test_formatting() -> None:
    assert format_time_ns(1_500_000) == "1.5 ms"
    assert format_time_ns(40_000) == "40 us"
    assert format_time_ns(800) == "800 ns"
    assert format_size(4 << 20) == "4 MiB"
    assert format_size(1000) == "1000 B"
