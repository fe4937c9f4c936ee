"""P4Runtime messages a client sends and what it makes of the answers.

The top layer of p4emu's client stack (``p4emu.p4rt_client``: values and schema in
:mod:`~p4emu.p4rt_client.schema`, the self-encoding table entry in
:mod:`~p4emu.p4rt_client.entity`, below; the clients above: the synchronous
:class:`p4emu.server.client.P4RuntimeClient` and the controller's asyncio
``SwitchClient``, both thin transports over this module):

- **entities by name** (:class:`EntityNames`): table entries (through
  :class:`~p4emu.p4rt_client.entity.P4TableEntry`), actions, counters, registers,
  multicast groups, packet-out metadata — never by numeric id::

      names = EntityNames(p4info)
      names.table_entry("Ingress.fwd", {"hdr.eth.dst": 0x0A}, "Ingress.forward", {"port": 2})

  and back: :meth:`EntityNames.decode_table_entry`, :meth:`EntityNames.packet_in`;
- **requests**: arbitration, Write, Read, Set/GetForwardingPipelineConfig, with the
  election id as P4Runtime's ``Uint128``;
- **answers**: :func:`per_update_errors` (the ``p4.v1.Error`` of each update of a failed
  Write, from the ``grpc-status-details-bin`` trailer; P4Runtime spec "Error Reporting"),
  :func:`failed_updates`, :func:`describe_rpc_error`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from p4emu.p4rt_client.entity import P4TableEntry, decode_action_call, encode_action
from p4emu.p4rt_client.exceptions import EntityNameError, code_name
from p4emu.p4rt_client.schema import KeyFieldValue, P4Schema, decode_value, encode_value
from p4emu.proto import p4i, p4r, rpc_code, rpc_status

#: The trailer of a failed Write that holds one ``p4.v1.Error`` per update.
STATUS_DETAILS_KEY = "grpc-status-details-bin"

_UINT64 = (1 << 64) - 1


# --------------------------------------------------------------------------- entities


class EntityNames:
    """Builds entities by name from one P4Info (and decodes what a switch sends back).

    Table entries are :class:`~p4emu.p4rt_client.entity.P4TableEntry` values (the one
    table-entry builder); the other kinds are built here."""

    def __init__(self, p4info: p4i.P4Info | P4Schema) -> None:
        self.schema = p4info if isinstance(p4info, P4Schema) else P4Schema(p4info)
        self.p4info = self.schema.p4info

    def find(self, section: str, name: str) -> Any:
        return self.schema.find(section, name)

    def table_entry(
        self,
        table: str,
        match: Mapping[str, KeyFieldValue],
        action: str | None = None,
        params: Mapping[str, int] | None = None,
        *,
        priority: int = 0,
        default: bool = False,
    ) -> p4r.Entity:
        """``P4TableEntry(...).encode(schema)``, for callers that hold an EntityNames."""
        entry = P4TableEntry(table, match, action, params or {}, priority, default)
        return entry.encode(self.schema)

    def action(self, name: str, params: Mapping[str, int]) -> p4r.Action:
        message = p4r.Action()
        encode_action(self.schema, message, name, params)
        return message

    def counter_entry(self, name: str, index: int | None = None) -> p4r.Entity:
        entity = p4r.Entity()
        entity.counter_entry.counter_id = self.schema.counter(name).id
        if index is not None:
            entity.counter_entry.index.index = index
        return entity

    def register_entry(
        self, name: str, index: int | None = None, value: int | None = None
    ) -> p4r.Entity:
        info = self.schema.find("registers", name)
        entity = p4r.Entity()
        entity.register_entry.register_id = info.preamble.id
        if index is not None:
            entity.register_entry.index.index = index
        if value is not None:
            entity.register_entry.data.bitstring = encode_value(
                value, info.type_spec.bitstring.bit.bitwidth, f"register {name}"
            )
        return entity

    @staticmethod
    def multicast_group(group_id: int, replicas: Iterable[tuple[int, int]] = ()) -> p4r.Entity:
        entity = p4r.Entity()
        group = entity.packet_replication_engine_entry.multicast_group_entry
        group.multicast_group_id = group_id
        for port, instance in replicas:
            group.replicas.add(egress_port=port, instance=instance)
        return entity

    def packet_out(self, payload: bytes, metadata: Mapping[str, int]) -> p4r.StreamMessageRequest:
        """A PacketOut stream message with ``metadata`` by name (``packet_out`` header)."""
        request = p4r.StreamMessageRequest()
        request.packet.payload = payload
        if metadata:
            fields = self.schema.packet_metadata("packet_out")
            for name, value in metadata.items():
                field = fields.get(name)
                if field is None:
                    raise EntityNameError(
                        f"packet_out has no metadata {name!r} (has {sorted(fields)})"
                    )
                request.packet.metadata.add(
                    metadata_id=field.id,
                    value=encode_value(value, field.bitwidth, f"packet_out {name}"),
                )
        return request

    def packet_in(self, packet: p4r.PacketIn) -> tuple[bytes, dict[str, int]]:
        """``(payload, {metadata name: value})`` of a PacketIn (unknown ids by number)."""
        names = (
            {f.id: f.name for f in self.schema.packet_metadata("packet_in").values()}
            if packet.metadata
            else {}
        )
        return bytes(packet.payload), {
            names.get(m.metadata_id, str(m.metadata_id)): decode_value(m.value)
            for m in packet.metadata
        }

    def decode_table_entry(self, entity: p4r.Entity) -> P4TableEntry:
        """``P4TableEntry.decode(entity, schema)``."""
        return P4TableEntry.decode(entity, self.schema)

    def decode_action(self, message: p4r.Action) -> tuple[str, dict[str, int]]:
        """``(action name, {parameter: value})`` of an ``Action``."""
        return decode_action_call(
            self.schema, message.action_id, [(p.param_id, p.value) for p in message.params]
        )


# --------------------------------------------------------------------------- requests


def uint128(value: int) -> p4r.Uint128:
    return p4r.Uint128(high=value >> 64, low=value & _UINT64)


def from_uint128(message: p4r.Uint128) -> int:
    return message.high << 64 | message.low


def _set_election_id(message: Any, election_id: int) -> None:
    message.election_id.high = election_id >> 64
    message.election_id.low = election_id & _UINT64


def arbitration_request(
    device_id: int, election_id: int, role: str = ""
) -> p4r.StreamMessageRequest:
    request = p4r.StreamMessageRequest()
    arbitration = request.arbitration
    arbitration.device_id = device_id
    if role:
        arbitration.role.name = role
    _set_election_id(arbitration, election_id)
    return request


def write_request(
    device_id: int,
    election_id: int,
    updates: Iterable[p4r.Update],
    *,
    atomicity: int = p4r.WriteRequest.CONTINUE_ON_ERROR,
    role: str = "",
) -> p4r.WriteRequest:
    request = p4r.WriteRequest(device_id=device_id, role=role, atomicity=atomicity)
    _set_election_id(request, election_id)
    request.updates.extend(updates)
    return request


def read_request(device_id: int, entities: Iterable[p4r.Entity], role: str = "") -> p4r.ReadRequest:
    request = p4r.ReadRequest(device_id=device_id, role=role)
    request.entities.extend(entities)
    return request


def set_pipeline_request(
    device_id: int,
    election_id: int,
    config: p4r.ForwardingPipelineConfig,
    *,
    action: int = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
    role: str = "",
) -> p4r.SetForwardingPipelineConfigRequest:
    request = p4r.SetForwardingPipelineConfigRequest(device_id=device_id, role=role, action=action)
    _set_election_id(request, election_id)
    request.config.CopyFrom(config)
    return request


def pipeline_config(
    p4info: p4i.P4Info, device_config: bytes, cookie: int = 0
) -> p4r.ForwardingPipelineConfig:
    config = p4r.ForwardingPipelineConfig(p4_device_config=device_config)
    config.p4info.CopyFrom(p4info)
    config.cookie.cookie = cookie
    return config


def get_pipeline_request(
    device_id: int, response_type: str = "P4INFO_AND_COOKIE"
) -> p4r.GetForwardingPipelineConfigRequest:
    return p4r.GetForwardingPipelineConfigRequest(
        device_id=device_id,
        response_type=p4r.GetForwardingPipelineConfigRequest.ResponseType.Value(response_type),
    )


# --------------------------------------------------------------------------- answers


def per_update_errors(error: Any) -> list[p4r.Error]:
    """The ``p4.v1.Error`` of each update of a failed Write, in order (empty if the call
    carries none). ``error`` is a ``grpc.RpcError`` (sync or asyncio)."""
    trailer = getattr(error, "trailing_metadata", None)
    for key, value in (trailer() if trailer is not None else None) or ():
        if key == STATUS_DETAILS_KEY:
            errors = []
            for detail in rpc_status.Status.FromString(value).details:
                item = p4r.Error()
                if detail.Unpack(item):
                    errors.append(item)
            return errors
    return []


@dataclass(frozen=True, slots=True)
class FailedUpdate:
    """A failed update of a Write batch: its index in the batch and the switch's answer."""

    index: int
    code: str
    message: str


def failed_updates(errors: Sequence[p4r.Error]) -> list[FailedUpdate]:
    """The updates whose error is not OK."""
    return [
        FailedUpdate(index, code_name(error.canonical_code), error.message)
        for index, error in enumerate(errors)
        if error.canonical_code != rpc_code.OK
    ]


def describe_rpc_error(error: Any) -> tuple[str, str]:
    """``(status name, message)`` of a failed call (``UNKNOWN`` without a code)."""
    code = error.code() if hasattr(error, "code") else None
    details = error.details() if hasattr(error, "details") else None
    name = getattr(code, "name", None) or "UNKNOWN"
    return name, details or str(error)


__all__ = [
    "STATUS_DETAILS_KEY",
    "EntityNames",
    "FailedUpdate",
    "arbitration_request",
    "describe_rpc_error",
    "failed_updates",
    "from_uint128",
    "get_pipeline_request",
    "per_update_errors",
    "pipeline_config",
    "read_request",
    "set_pipeline_request",
    "uint128",
    "write_request",
]
