"""The address plan, with its paths remembered.

Every NIC builds each connection's EV set from ``AddressPlan.path_for_ev`` (hundreds of
EVs per connection, each a call to :meth:`AddressPlan.path`). A fabric has few distinct
paths (NIC pairs x planes x T1s), so the fabric's one plan remembers them: same answers,
computed once.
"""

from __future__ import annotations

from topologies import AddressPlan, Path
from topologies.model import NicRef


class RememberingAddressPlan(AddressPlan):
    """:class:`topologies.AddressPlan` whose :meth:`path` results are kept (they are
    immutable and depend only on the arguments)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._paths: dict[tuple[object, object, int, int | None], Path] = {}

    def path(self, src_nic: NicRef, dst_nic: NicRef, plane: int, t1_index: int | None) -> Path:
        key = (src_nic, dst_nic, plane, t1_index)
        found = self._paths.get(key)
        if found is None:
            found = self._paths[key] = super().path(src_nic, dst_nic, plane, t1_index)
        return found
