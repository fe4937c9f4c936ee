"""Readable expected-vs-received packet dumps for STF failures.

Bytes are shown 16 per row, expected on the left (``*`` for don't-care nibbles),
received on the right; a marker row under each row flags the received bytes that
differ (``^^``), are missing (``--``) or are extra while an exact length (``$``) was
required (``++``).
"""

from __future__ import annotations

from collections.abc import Sequence

ROW = 16


def hexdump(data: bytes, indent: str = "    ") -> list[str]:
    """Plain hex dump, 16 bytes per row with offsets."""
    if not data:
        return [f"{indent}(empty)"]
    return [
        f"{indent}{offset:04x}  {' '.join(f'{b:02x}' for b in data[offset : offset + ROW])}"
        for offset in range(0, len(data), ROW)
    ]


def _expected_bytes(pattern: str) -> list[str]:
    """The expected pattern as 2-character cells (``*`` kept); an odd nibble is padded."""
    padded = pattern if len(pattern) % 2 == 0 else pattern + "?"
    return [padded[i : i + 2].lower() for i in range(0, len(padded), 2)]


def _cell_differs(want: str, got: int | None) -> bool:
    if got is None:
        return True
    have = f"{got:02x}"
    return any(w not in ("*", "?") and w != h for w, h in zip(want, have))


def packet_diff(pattern: str, exact: bool, received: bytes, indent: str = "    ") -> list[str]:
    """Side-by-side rows of an expected pattern and a received packet."""
    expected = _expected_bytes(pattern)
    length = max(len(expected), len(received))
    width = ROW * 3 - 1
    lines = [f"{indent}offset  {'expected':<{width}}   received"]
    for offset in range(0, max(length, 1), ROW):
        left_cells: list[str] = []
        right_cells: list[str] = []
        marks: list[str] = []
        for i in range(offset, min(offset + ROW, length)):
            want = expected[i] if i < len(expected) else None
            got = received[i] if i < len(received) else None
            left_cells.append(want if want is not None else "  ")
            right_cells.append(f"{got:02x}" if got is not None else "..")
            if want is None:
                marks.append("++" if exact else "  ")
            elif got is None:
                marks.append("--")
            else:
                marks.append("^^" if _cell_differs(want, got) else "  ")
        left = " ".join(left_cells)
        right = " ".join(right_cells)
        lines.append(f"{indent}{offset:04x}    {left:<{width}}   {right}")
        if any(m.strip() for m in marks):
            lines.append(f"{indent}        {'':<{width}}   {' '.join(marks).rstrip()}")
    return lines


def first_difference(pattern: str, exact: bool, received: bytes) -> str | None:
    """Why ``received`` does not match (byte offset of the first difference), or None."""
    expected = _expected_bytes(pattern)
    for i, want in enumerate(expected):
        got = received[i] if i < len(received) else None
        if got is None:
            return (
                f"received packet is too short: {len(received)} bytes, expected "
                f"at least {len(expected)}"
            )
        if _cell_differs(want, got):
            return f"first difference at byte {i} (0x{i:x}): expected {want}, received {got:02x}"
    if exact and len(received) != len(expected):
        return f"received {len(received)} bytes, expected exactly {len(expected)} ($)"
    return None


def summarize(items: Sequence[str], limit: int = 8) -> list[str]:
    if len(items) <= limit:
        return list(items)
    return [*items[:limit], f"... and {len(items) - limit} more"]
