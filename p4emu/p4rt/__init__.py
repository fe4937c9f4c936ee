"""The P4Runtime entity layer of p4emu: Write/Read semantics over a loaded program.

Typical use (the gRPC server and the STF runner do the same)::

    state = P4RuntimeState(program_objects, lock=switch.pipeline_lock)
    errors = state.write(request.updates, request.atomicity)   # one p4.v1.Error each
    entities = list(state.read(entity))                         # wildcards allowed

See ``docs/p4emu-p4runtime.md`` for the semantics and the choices made where the
P4Runtime specification and BMv2 (PI) differ.
"""

from __future__ import annotations

from p4emu.p4rt.exceptions import P4RuntimeError
from p4emu.p4rt.state import (
    CONTINUE_ON_ERROR,
    DATAPLANE_ATOMIC,
    ROLLBACK_ON_ERROR,
    P4RuntimeState,
    errors_to_status,
)

__all__ = [
    "CONTINUE_ON_ERROR",
    "DATAPLANE_ATOMIC",
    "ROLLBACK_ON_ERROR",
    "P4RuntimeError",
    "P4RuntimeState",
    "errors_to_status",
]
