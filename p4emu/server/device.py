"""What the P4Runtime service needs from a device: the contract between the gRPC layer and p4emu.

The service (``service.py``) handles transport concerns: arbitration, election ids, device ids,
streams and error encoding. A :class:`Device` owns the pipeline and its state and speaks in
P4Runtime messages; p4emu's implementation is :class:`p4emu.server.switch_device.SwitchDevice`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from p4emu.exceptions import P4EmuError
from p4emu.proto import p4r


class DeviceError(P4EmuError):
    """A request the device refuses as a whole; ``code`` is a google.rpc code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# Messages a device pushes to the primary controller's stream (PacketIn, DigestList,
# IdleTimeoutNotification wrapped in a StreamMessageResponse).
StreamListener = Callable[[p4r.StreamMessageResponse], None]


class Device(Protocol):
    device_id: int

    def has_pipeline(self) -> bool: ...

    def verify_pipeline(self, config: p4r.ForwardingPipelineConfig) -> object:
        """Checks a pipeline config; returns an opaque prepared pipeline or raises DeviceError."""
        ...

    def commit_pipeline(self, prepared: object, *, reconcile: bool) -> None:
        """Makes ``prepared`` the running pipeline (forwarding state kept if ``reconcile``)."""
        ...

    def pipeline_config(self) -> p4r.ForwardingPipelineConfig | None: ...

    def write(self, updates: Sequence[p4r.Update], atomicity: int) -> list[p4r.Error]:
        """Applies updates; returns one Error per update (canonical_code 0 for success)."""
        ...

    def read(self, entities: Sequence[p4r.Entity]) -> Iterator[p4r.Entity | bytes]:
        """Matching entities, as messages or already serialized (bytes: the server puts
        them into ReadResponses without parsing them); raises DeviceError for a malformed
        read."""
        ...

    def packet_out(self, packet: p4r.PacketOut) -> None:
        """Sends a controller packet; raises DeviceError if malformed."""
        ...

    def digest_ack(self, ack: p4r.DigestListAck) -> None: ...

    def set_stream_listener(self, listener: StreamListener | None) -> None:
        """Where PacketIn / DigestList / idle-timeout messages go (the primary's stream)."""
        ...
