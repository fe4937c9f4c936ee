"""P4Runtime client arbitration (P4Runtime spec §5 "Client Arbitration"), as a pure state machine.

Each StreamChannel that sent a MasterArbitrationUpdate is a *client* with a (role, election id).
Per role, the client with the highest election id is the primary; only it may Write. When the
primary of a role changes, every client of that role is told (status OK to the primary,
ALREADY_EXISTS to backups, NOT_FOUND to all when the role has no primary any more).
The server glue feeds it connects/disconnects and sends the notifications it returns.
"""

from __future__ import annotations

from dataclasses import dataclass

from p4emu.proto import rpc_code
from p4emu.server.status import quoted

ElectionId = tuple[int, int]  # (high, low): compared as a 128-bit number


@dataclass(frozen=True)
class Notification:
    """An arbitration response to send to one client's stream."""

    client: object
    role: str
    election_id: ElectionId | None  # the primary's id, or the highest one seen if none
    code: int  # google.rpc.Code


class ArbitrationError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class _Role:
    """One role's arbitration state: every client's election id, the primary (None: none)
    and the highest election id seen (None: none yet)."""

    clients: dict[object, ElectionId]
    primary: object | None = None
    highest_seen: ElectionId | None = None


class Arbiter:
    def __init__(self, device_id: int) -> None:
        self.device_id = device_id
        self._roles: dict[str, _Role] = {}
        self._client_role: dict[object, str] = {}

    # --- queries -------------------------------------------------------------------------
    def is_primary(self, client_election_id: ElectionId | None, role: str = "") -> bool:
        """True if a request carrying this election id comes from the role's primary."""
        state = self._roles.get(role)
        if state is None or state.primary is None or client_election_id is None:
            return False
        return state.clients[state.primary] == client_election_id

    def primary_election_id(self, role: str = "") -> ElectionId | None:
        state = self._roles.get(role)
        if state is None or state.primary is None:
            return None
        return state.clients[state.primary]

    def role_of(self, client: object) -> str | None:
        return self._client_role.get(client)

    def election_id_of(self, client: object) -> ElectionId | None:
        role = self._client_role.get(client)
        return None if role is None else self._roles[role].clients[client]

    # --- events --------------------------------------------------------------------------
    def update(
        self, client: object, device_id: int, role: str, election_id: ElectionId
    ) -> list[Notification]:
        """A MasterArbitrationUpdate arrived on ``client``'s stream."""
        if device_id != self.device_id:
            raise ArbitrationError(
                rpc_code.NOT_FOUND,
                f"device id {device_id} does not exist (this is device {self.device_id})",
            )
        previous_role = self._client_role.get(client)
        if previous_role is not None and previous_role != role:
            raise ArbitrationError(
                rpc_code.FAILED_PRECONDITION,
                f"a stream cannot change its role (was {quoted(previous_role)}, now {quoted(role)})",
            )
        state = self._roles.setdefault(role, _Role(clients={}))
        for other, other_id in state.clients.items():
            if other is not client and other_id == election_id:
                raise ArbitrationError(
                    rpc_code.INVALID_ARGUMENT,
                    f"election id {_format(election_id)} is already used by another client of role {quoted(role)}",
                )
        state.clients[client] = election_id
        self._client_role[client] = role
        if state.highest_seen is None or election_id > state.highest_seen:
            state.highest_seen = election_id
        return self._elect(role, always_notify=client)

    def disconnect(self, client: object) -> list[Notification]:
        role = self._client_role.pop(client, None)
        if role is None:
            return []
        state = self._roles[role]
        del state.clients[client]
        return self._elect(role, always_notify=None)

    # --- internals -----------------------------------------------------------------------
    def _elect(self, role: str, always_notify: object | None) -> list[Notification]:
        state = self._roles[role]
        new_primary = max(state.clients, key=state.clients.__getitem__, default=None)
        # A new primary needs an id >= every id seen so far (spec: a client that reconnects
        # with a lower id than a departed primary does not become primary).
        if (
            new_primary is not None
            and state.highest_seen is not None
            and state.clients[new_primary] < state.highest_seen
        ):
            new_primary = None
        changed = new_primary is not state.primary
        state.primary = new_primary
        targets = list(state.clients) if changed else ([always_notify] if always_notify else [])
        reported = state.clients[new_primary] if new_primary is not None else state.highest_seen
        notifications = []
        for client in targets:
            if new_primary is None:
                code = rpc_code.NOT_FOUND
            elif client is new_primary:
                code = rpc_code.OK
            else:
                code = rpc_code.ALREADY_EXISTS
            notifications.append(Notification(client, role, reported, code))
        return notifications


def _format(election_id: ElectionId) -> str:
    high, low = election_id
    return str((high << 64) | low)
