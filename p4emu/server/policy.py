"""Who may control a p4emu-switch: the optional role and primary-client policy.

By default anyone who can reach the gRPC port may arbitrate for any role, become primary
with the highest election id, and take ports down over gNMI (docs/p4emu-switch.md, "Trust
model"). A policy narrows that:

- ``roles``: the P4Runtime roles a stream may arbitrate for (``""`` is the default role);
  any other role is refused with PERMISSION_DENIED.
- ``controllers``: the certificate common names (mutual TLS) allowed to control the
  switch: to arbitrate (and so become primary), to Write, to set the pipeline, to send
  PacketOut, and to change port state over gNMI. Reads stay open to every client that
  passed TLS.
"""

from __future__ import annotations

from dataclasses import dataclass

from p4emu.server.status import quoted


@dataclass(frozen=True)
class AccessPolicy:
    """Who may control the switch: the roles a stream may arbitrate for and the certificate
    names allowed to control it (None: no restriction)."""

    roles: frozenset[str] | None = None
    controllers: frozenset[str] | None = None

    def role_refusal(self, role: str) -> str | None:
        """Why a stream may not arbitrate for ``role`` (None: it may)."""
        if self.roles is None or role in self.roles:
            return None
        allowed = ", ".join(quoted(r) for r in sorted(self.roles))
        return f"role {quoted(role)} is not allowed on this switch (allowed: {allowed})"

    def controller_refusal(self, identity: str | None, what: str) -> str | None:
        """Why a client with certificate name ``identity`` may not ``what`` (None: it may)."""
        if self.controllers is None or (identity is not None and identity in self.controllers):
            return None
        who = (
            "a client without a verified certificate"
            if identity is None
            else f"client {quoted(identity)}"
        )
        return f"{who} may not {what} (only {', '.join(sorted(self.controllers))} may)"
