"""Units of scenario files: times (``150us``), sizes (``64MiB``) and fractions (``20%``).

Each parser returns the value in the unit the fabric counts in (integer nanoseconds,
integer bytes, a float in [0, 1]) or raises :class:`ValueError` whose message says what
was expected; the scenario loader adds the key path.
"""

from __future__ import annotations

import re
from typing import Any

from topologies.yamlfile import show  # the YAML way of showing a value, one home

TIME_UNITS_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
SIZE_UNITS = {
    "B": 1,
    "KiB": 1 << 10,
    "MiB": 1 << 20,
    "GiB": 1 << 30,
    "KB": 1000,
    "MB": 1000**2,
    "GB": 1000**3,
}
TIME_EXAMPLE = "a time like '150us' or '2ms'"
SIZE_EXAMPLE = "a size like 65536, '64KiB' or '4MiB'"
FRACTION_EXAMPLE = "a fraction like 0.2 or '20%'"

_NUMBER_UNIT = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-zµ]+)\s*$")


def parse_time_ns(value: Any) -> int:
    """``'150us'``, ``'2ms'``, ``'500ns'``, ``'1.5us'``, ``'0s'`` or the integer 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value == 0:
        return 0
    if isinstance(value, str):
        match = _NUMBER_UNIT.match(value)
        if match and match.group(2) in TIME_UNITS_NS:
            ns = float(match.group(1)) * TIME_UNITS_NS[match.group(2)]
            if ns != int(ns):
                raise ValueError(f"{value!r} is not a whole number of nanoseconds")
            return int(ns)
    hint = " (a number needs a unit: ns, us, ms or s)" if _is_number(value) else ""
    raise ValueError(f"expected {TIME_EXAMPLE}, got {show(value)}{hint}")


def parse_size(value: Any) -> int:
    """A byte count: an integer, or a number with B, KiB, MiB, GiB, KB, MB or GB."""
    if isinstance(value, int) and not isinstance(value, bool):
        nbytes = value
    elif isinstance(value, str) and (match := _NUMBER_UNIT.match(value)) is not None:
        unit = match.group(2)
        if unit not in SIZE_UNITS:
            raise ValueError(
                f"expected {SIZE_EXAMPLE}, got {value!r} (units: {', '.join(SIZE_UNITS)})"
            )
        exact = float(match.group(1)) * SIZE_UNITS[unit]
        if exact != int(exact):
            raise ValueError(f"{value!r} is not a whole number of bytes")
        nbytes = int(exact)
    else:
        raise ValueError(f"expected {SIZE_EXAMPLE}, got {show(value)}")
    if nbytes < 1:
        raise ValueError(f"expected at least 1 byte, got {show(value)}")
    return nbytes


def parse_fraction(value: Any) -> float:
    """A number in [0, 1] or a percentage string ``'20%'``."""
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            fraction = float(value.strip()[:-1]) / 100
        except ValueError:
            raise ValueError(f"expected {FRACTION_EXAMPLE}, got {value!r}") from None
    elif _is_number(value):
        fraction = float(value)
    else:
        raise ValueError(f"expected {FRACTION_EXAMPLE}, got {show(value)}")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"expected {FRACTION_EXAMPLE} between 0 and 1, got {show(value)}")
    return fraction


def format_time_ns(ns: int | float) -> str:
    """A time the way a person reads it: ``1.5 ms``, ``40 us``, ``800 ns``."""
    if abs(ns) >= 1_000_000:
        return f"{ns / 1_000_000:g} ms"
    if abs(ns) >= 1_000:
        return f"{ns / 1_000:g} us"
    return f"{ns:g} ns"


def format_size(nbytes: int) -> str:
    for unit in ("GiB", "MiB", "KiB"):
        if nbytes >= SIZE_UNITS[unit] and nbytes % SIZE_UNITS[unit] == 0:
            return f"{nbytes // SIZE_UNITS[unit]} {unit}"
    return f"{nbytes} B"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
