"""Small scenarios shared by the vfabric tests (small transfers keep them fast)."""

from __future__ import annotations

from topologies.events import LinkRef
from vfabric import VirtualFabric

CUT = ("p0-t0-0", "p0-t1-0")
SIZE = 2 << 20  # 2 MiB: ~90 us of line-rate time on tiny's 2 x 100 Gb/s


def cut_run(seed: int = 0, size: int = SIZE, **kwargs: object) -> VirtualFabric:
    """nic0 -> nic3 with the T0-T1 link CUT down at 20 us and back at 60 us."""
    fabric = VirtualFabric("tiny", seed=seed, **kwargs)  # type: ignore[arg-type]
    fabric.transfer("nic0", "nic3", size)
    fabric.schedule(LinkRef(*CUT).change(20_000, up=False))
    fabric.schedule(LinkRef(*CUT).change(60_000, up=True))
    assert fabric.run(until_ns=50_000_000)
    return fabric
