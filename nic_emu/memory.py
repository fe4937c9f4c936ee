"""Registered memory regions: what RDMA WRITE packets are placed into.

A region has a base virtual address, a length, an R_Key and a ``bytearray`` that holds
its bytes. Packets name memory by (VA, R_Key, length); placement checks all three.
"""

from __future__ import annotations

from dataclasses import dataclass

from nic_emu.exceptions import MemoryAccessError

VA_BASE = 0x7F00_0000_0000  # first region's virtual address (looks like user-space memory)
VA_ALIGN = 1 << 21  # regions start on 2 MiB boundaries, with a gap between them


@dataclass(slots=True, eq=False)
class MemoryRegion:
    """One registered region: its R_Key, base virtual address and the bytes it holds."""

    rkey: int
    va: int
    buffer: bytearray

    @property
    def length(self) -> int:
        return len(self.buffer)

    def read(self, va: int, length: int) -> bytes:
        """The bytes at [va, va+length) of this region."""
        offset = va - self.va
        if offset < 0 or length < 0 or offset + length > len(self.buffer):
            raise MemoryAccessError(
                f"read of {length} bytes at VA {va:#x} is outside region R_Key {self.rkey:#x} "
                f"[{self.va:#x}, {self.va + len(self.buffer):#x})"
            )
        return bytes(self.buffer[offset : offset + length])


class MemoryTable:
    """The regions registered on one NIC, by R_Key."""

    def __init__(self, first_rkey: int = 0x100) -> None:
        self.regions: dict[int, MemoryRegion] = {}
        self._next_rkey = first_rkey
        self._next_va = VA_BASE

    def register(self, length: int) -> MemoryRegion:
        rkey, va = self.reserve(length)
        region = MemoryRegion(rkey, va, bytearray(length))
        self.regions[rkey] = region
        return region

    def reserve(self, length: int) -> tuple[int, int]:
        """(R_Key, VA) of ``length`` bytes of address space, as :meth:`register` gives a
        region, with no buffer and no region: for WRITEs that a streamed sink checks
        (:class:`nic_emu.streams.StreamReceiver`) instead of placing them."""
        if isinstance(length, bool) or not isinstance(length, int) or length <= 0:
            raise MemoryAccessError(f"a memory region needs a positive length, got {length!r}")
        rkey, va = self._next_rkey, self._next_va
        self._next_rkey += 1
        self._next_va += (length + 2 * VA_ALIGN - 1) // VA_ALIGN * VA_ALIGN
        return rkey, va

    def deregister(self, rkey: int) -> None:
        if self.regions.pop(rkey, None) is None:
            raise MemoryAccessError(f"no memory region with R_Key {rkey:#x}")

    def lookup(self, rkey: int, va: int, length: int) -> MemoryRegion | None:
        """The region that holds [va, va+length) under ``rkey``, or None."""
        region = self.regions.get(rkey)
        if region is None:
            return None
        offset = va - region.va
        if offset < 0 or offset + length > len(region.buffer):
            return None
        return region
