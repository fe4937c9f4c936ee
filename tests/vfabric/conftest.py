"""Small scenarios shared by the vfabric tests (small transfers keep them fast)."""

from __future__ import annotations

from vfabric import VirtualFabric
from vfabric.faults import LinkDown, LinkUp

CUT = ("p0-t0-0", "p0-t1-0")
SIZE = 2 << 20  # 2 MiB: ~90 us of line-rate time on tiny's 2 x 100 Gb/s


def cut_run(seed: int = 0, size: int = SIZE, **kwargs: object) -> VirtualFabric:
    """nic0 -> nic3 with the T0-T1 link CUT down at 20 us and back at 60 us."""
    fabric = VirtualFabric("tiny", seed=seed, **kwargs)  # type: ignore[arg-type]
    fabric.transfer("nic0", "nic3", size)
    fabric.schedule(LinkDown(20_000, *CUT))
    fabric.schedule(LinkUp(60_000, *CUT))
    assert fabric.run(until_ns=50_000_000)
    return fabric
