"""The P4Runtime v1 gRPC service of p4emu-switch.

Transport concerns live here: device ids, arbitration and primary checks, stream plumbing and
error encoding. Everything about the pipeline and its entities is the :class:`Device`'s.
All device calls are serialised by one lock, so a Write is atomic with respect to Reads;
a pipeline compile runs outside it (only its commit takes it).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import grpc
from finsy.proto import gnmi, gnmi_grpc, p4r_grpc

from p4emu.limits import CompileLimitError, CompileLimits, run_bounded
from p4emu.proto import p4r, rpc_code
from p4emu.server.arbitration import Arbiter, ArbitrationError, ElectionId
from p4emu.server.device import Device, DeviceError
from p4emu.server.policy import AccessPolicy
from p4emu.server.status import bounded, quoted, set_batch_error, set_error
from p4emu.server.transport import (
    DEFAULT_MAX_MESSAGE_BYTES,
    TlsConfig,
    Undecodable,
    add_service,
    peer_identity,
    server_options,
)

P4RUNTIME_API_VERSION = "1.4.0"
READ_BATCH = 1000
MAX_STREAMS = 64
"""Most StreamChannels open at once. A sync gRPC handler holds a worker thread for as long
as its stream lives, so the server's pool has MAX_STREAMS workers for streams on top of
:data:`UNARY_WORKERS`: idle streams can never take the workers of other RPCs."""
MAX_STREAMS_PER_PEER = 16
"""Most StreamChannels of one client (its certificate's name under mutual TLS, else its
address): a controller needs one per role."""
UNARY_WORKERS = 16
"""Workers left for the unary and server-streaming RPCs (Write, Read, pipeline, gNMI)."""
log = logging.getLogger("p4emu.server")


def _election_id(message: p4r.Uint128 | None, present: bool) -> ElectionId | None:
    if message is None or not present:
        return None
    return (message.high, message.low)


@dataclass(frozen=True)
class _EndStream:
    """The end of a stream with an error: the google.rpc code and the message its gRPC
    call ends with."""

    code: int
    message: str


class _Stream:
    """One StreamChannel: an outbox the gRPC generator drains."""

    def __init__(self, peer: str, identity: str | None = None) -> None:
        self.peer = peer
        self.identity = identity
        # A client is its certificate's name under mutual TLS, else its address without
        # the port ("ipv4:127.0.0.1:41234" -> "ipv4:127.0.0.1"): one per-peer stream count.
        self.peer_key = f"cn:{identity}" if identity is not None else peer.rpartition(":")[0]
        self.outbox: queue.Queue[p4r.StreamMessageResponse | _EndStream | None] = queue.Queue()

    def send(self, message: p4r.StreamMessageResponse) -> None:
        self.outbox.put(message)

    def end(self, code: int = rpc_code.OK, message: str = "") -> None:
        self.outbox.put(_EndStream(code, message) if code else None)

    def __repr__(self) -> str:
        return f"<stream {self.peer}>"


class P4RuntimeService(p4r_grpc.P4RuntimeServicer):
    def __init__(
        self,
        device: Device,
        policy: AccessPolicy | None = None,
        compile_limits: CompileLimits | None = None,
    ) -> None:
        self.device = device
        self.policy = policy or AccessPolicy()
        self.arbiter = Arbiter(device.device_id)
        self.lock = threading.RLock()
        self.compile_limits = compile_limits or CompileLimits()
        self._compile_slot = threading.Lock()
        self._saved_pipeline: object | None = None
        self._primary_stream: _Stream | None = None
        self._streams: set[_Stream] = set()

    # --- helpers -------------------------------------------------------------------------
    def _check_device(self, device_id: int, context: grpc.ServicerContext) -> bool:
        if device_id != self.device.device_id:
            set_error(
                context,
                rpc_code.NOT_FOUND,
                f"device id {device_id} does not exist (this is device {self.device.device_id})",
            )
            return False
        return True

    def _check_primary(
        self, role: str, election: ElectionId | None, context: grpc.ServicerContext, what: str
    ) -> bool:
        refusal = self.policy.controller_refusal(peer_identity(context), what)
        if refusal is not None:
            set_error(context, rpc_code.PERMISSION_DENIED, refusal)
            return False
        if self.arbiter.is_primary(election, role):
            return True
        primary = self.arbiter.primary_election_id(role)
        who = (
            "no primary client"
            if primary is None
            else f"the primary's election id is {(primary[0] << 64) | primary[1]}"
        )
        given = (
            "no election id"
            if election is None
            else f"election id {(election[0] << 64) | election[1]}"
        )
        set_error(
            context,
            rpc_code.PERMISSION_DENIED,
            f"only the primary client of role {quoted(role)} may write ({who}; request has {given})",
        )
        return False

    def _check_pipeline(self, context: grpc.ServicerContext) -> bool:
        if not self.device.has_pipeline():
            set_error(
                context,
                rpc_code.FAILED_PRECONDITION,
                "no forwarding pipeline is set; call SetForwardingPipelineConfig first",
            )
            return False
        return True

    # --- unary RPCs ----------------------------------------------------------------------
    def Capabilities(
        self, request: p4r.CapabilitiesRequest, context: grpc.ServicerContext
    ) -> p4r.CapabilitiesResponse:
        return p4r.CapabilitiesResponse(p4runtime_api_version=P4RUNTIME_API_VERSION)

    def Write(self, request: p4r.WriteRequest, context: grpc.ServicerContext) -> p4r.WriteResponse:
        election = _election_id(request.election_id, request.HasField("election_id"))
        with self.lock:
            if not (
                self._check_device(request.device_id, context)
                and self._check_primary(request.role, election, context, "write")
                and self._check_pipeline(context)
            ):
                return p4r.WriteResponse()
            if request.atomicity not in p4r.WriteRequest.Atomicity.values():
                set_error(
                    context, rpc_code.INVALID_ARGUMENT, f"unknown atomicity {request.atomicity}"
                )
                return p4r.WriteResponse()
            try:
                errors = self.device.write(list(request.updates), request.atomicity)
            except DeviceError as exc:
                set_error(context, exc.code, exc.message)
                return p4r.WriteResponse()
        set_batch_error(context, errors)
        return p4r.WriteResponse()

    def Read(
        self, request: p4r.ReadRequest, context: grpc.ServicerContext
    ) -> Iterator[p4r.ReadResponse]:
        with self.lock:
            if not (
                self._check_device(request.device_id, context) and self._check_pipeline(context)
            ):
                return
            try:
                entities = list(self.device.read(list(request.entities)))
            except DeviceError as exc:
                set_error(context, exc.code, exc.message)
                return
        for start in range(0, len(entities), READ_BATCH):
            yield read_response(entities[start : start + READ_BATCH])  # type: ignore[misc]
        if not entities:
            yield p4r.ReadResponse()

    def SetForwardingPipelineConfig(
        self, request: p4r.SetForwardingPipelineConfigRequest, context: grpc.ServicerContext
    ) -> p4r.SetForwardingPipelineConfigResponse:
        """The compile runs off the service lock (Reads and Writes of the running pipeline
        go on meanwhile), one at a time, within :mod:`p4emu.limits`' bounds, and stops when
        the call is cancelled; only the commit takes the lock."""
        action = request.action
        actions = p4r.SetForwardingPipelineConfigRequest.Action
        election = _election_id(request.election_id, request.HasField("election_id"))
        response = p4r.SetForwardingPipelineConfigResponse()
        what = "set the forwarding pipeline"
        with self.lock:
            if not (
                self._check_device(request.device_id, context)
                and self._check_primary(request.role, election, context, what)
            ):
                return response
        if action not in (
            actions.VERIFY,
            actions.VERIFY_AND_SAVE,
            actions.VERIFY_AND_COMMIT,
            actions.RECONCILE_AND_COMMIT,
            actions.COMMIT,
        ):
            set_error(
                context,
                rpc_code.INVALID_ARGUMENT,
                f"unsupported SetForwardingPipelineConfig action {action}",
            )
            return response
        try:
            prepared = None
            if action != actions.COMMIT:
                prepared = self._compile(request.config, context)
                if prepared is None:
                    return response
            with self.lock:
                if action != actions.VERIFY and not self._check_primary(
                    request.role, election, context, what
                ):
                    return response  # the client lost its primary role while compiling
                if action == actions.VERIFY_AND_SAVE:
                    self._saved_pipeline = prepared
                elif action in (actions.VERIFY_AND_COMMIT, actions.RECONCILE_AND_COMMIT):
                    self.device.commit_pipeline(
                        prepared, reconcile=action == actions.RECONCILE_AND_COMMIT
                    )
                    self._saved_pipeline = None
                elif action == actions.COMMIT:
                    if self._saved_pipeline is None:
                        set_error(
                            context,
                            rpc_code.FAILED_PRECONDITION,
                            "COMMIT without a saved pipeline (use VERIFY_AND_SAVE first)",
                        )
                        return response
                    self.device.commit_pipeline(self._saved_pipeline, reconcile=False)
                    self._saved_pipeline = None
        except DeviceError as exc:
            set_error(context, exc.code, exc.message)
        return response

    def _compile(
        self, config: p4r.ForwardingPipelineConfig, context: grpc.ServicerContext
    ) -> object | None:
        """The device's prepared pipeline for ``config``, or None with the call's error set
        (RESOURCE_EXHAUSTED: another compile is running, or a bound was crossed)."""
        if not self._compile_slot.acquire(blocking=False):
            set_error(
                context,
                rpc_code.RESOURCE_EXHAUSTED,
                "another SetForwardingPipelineConfig is compiling; this switch compiles one "
                "pipeline at a time (retry when it is done)",
            )
            return None
        try:
            cancelled = threading.Event()
            context.add_callback(cancelled.set)
            try:
                return run_bounded(
                    lambda: self.device.verify_pipeline(config), self.compile_limits, cancelled
                )
            except CompileLimitError as exc:
                code = (
                    rpc_code.CANCELLED if exc.limit == "cancelled" else rpc_code.RESOURCE_EXHAUSTED
                )
                set_error(context, code, f"the P4 program does not load: {exc.message}")
                return None
        finally:
            self._compile_slot.release()

    def GetForwardingPipelineConfig(
        self, request: p4r.GetForwardingPipelineConfigRequest, context: grpc.ServicerContext
    ) -> p4r.GetForwardingPipelineConfigResponse:
        types = p4r.GetForwardingPipelineConfigRequest.ResponseType
        response = p4r.GetForwardingPipelineConfigResponse()
        with self.lock:
            if not (
                self._check_device(request.device_id, context) and self._check_pipeline(context)
            ):
                return response
            config = self.device.pipeline_config()
        if config is None:
            set_error(context, rpc_code.FAILED_PRECONDITION, "no forwarding pipeline is set")
            return response
        kind = request.response_type
        if kind not in types.values():
            set_error(context, rpc_code.INVALID_ARGUMENT, f"unknown response_type {kind}")
            return response
        if config.HasField("cookie"):
            response.config.cookie.CopyFrom(config.cookie)
        if kind in (types.ALL, types.P4INFO_AND_COOKIE):
            response.config.p4info.CopyFrom(config.p4info)
        if kind in (types.ALL, types.DEVICE_CONFIG_AND_COOKIE):
            response.config.p4_device_config = config.p4_device_config
        return response

    # --- stream --------------------------------------------------------------------------
    def StreamChannel(
        self, request_iterator: Iterator[p4r.StreamMessageRequest], context: grpc.ServicerContext
    ) -> Iterator[p4r.StreamMessageResponse]:
        stream = _Stream(context.peer(), peer_identity(context))
        with self.lock:
            refusal = self._stream_refusal(stream)
            if refusal is None:
                self._streams.add(stream)
        if refusal is not None:
            set_error(context, rpc_code.RESOURCE_EXHAUSTED, refusal)
            return
        reader = threading.Thread(
            target=self._read_stream,
            args=(stream, request_iterator),
            name=f"p4rt-stream-{stream.peer}",
            daemon=True,
        )
        reader.start()
        context.add_callback(lambda: stream.end())
        try:
            while True:
                item = stream.outbox.get()
                if item is None:
                    return
                if isinstance(item, _EndStream):
                    set_error(context, item.code, item.message)
                    return
                yield item
        finally:
            self._close_stream(stream)

    def _stream_refusal(self, stream: _Stream) -> str | None:
        """Why a new StreamChannel is refused (None: it is not); under the lock."""
        if len(self._streams) >= MAX_STREAMS:
            return (
                f"too many StreamChannels: this switch serves at most {MAX_STREAMS} at once "
                "(the limit MAX_STREAMS)"
            )
        key = stream.peer_key
        same = sum(1 for other in self._streams if other.peer_key == key)
        if same >= MAX_STREAMS_PER_PEER:
            return (
                f"too many StreamChannels from this client: at most {MAX_STREAMS_PER_PEER} "
                "per peer (the limit MAX_STREAMS_PER_PEER)"
            )
        return None

    def _read_stream(self, stream: _Stream, requests: Iterator[p4r.StreamMessageRequest]) -> None:
        try:
            for request in requests:
                if isinstance(request, Undecodable):
                    stream.send(self._stream_error(rpc_code.INVALID_ARGUMENT, request.message))
                    continue
                kind = request.WhichOneof("update")
                if kind == "arbitration":
                    if not self._arbitrate(stream, request.arbitration):
                        return
                elif kind == "packet":
                    self._packet_out(stream, request.packet)
                elif kind == "digest_ack":
                    self._digest_ack(stream, request.digest_ack)
                else:
                    stream.send(
                        self._stream_error(
                            rpc_code.UNIMPLEMENTED, f"stream message {kind!r} is not supported"
                        )
                    )
        except grpc.RpcError:
            log.debug("stream %s: client went away", stream.peer)
        finally:
            stream.end()

    def _arbitrate(self, stream: _Stream, update: p4r.MasterArbitrationUpdate) -> bool:
        election = (update.election_id.high, update.election_id.low)
        refusal = self.policy.role_refusal(update.role.name) or self.policy.controller_refusal(
            stream.identity, "arbitrate"
        )
        if refusal is not None:
            stream.end(rpc_code.PERMISSION_DENIED, refusal)
            return False
        with self.lock:
            try:
                notifications = self.arbiter.update(
                    stream, update.device_id, update.role.name, election
                )
            except ArbitrationError as exc:
                stream.end(exc.code, exc.message)
                return False
            self._deliver(notifications)
        return True

    def _deliver(self, notifications) -> None:
        for note in notifications:
            message = p4r.StreamMessageResponse()
            arbitration = message.arbitration
            arbitration.device_id = self.device.device_id
            arbitration.role.name = note.role
            if note.election_id is not None:
                arbitration.election_id.high, arbitration.election_id.low = note.election_id
            arbitration.status.code = note.code
            note.client.send(message)
        primary = None
        for stream in self._streams:
            role = self.arbiter.role_of(stream)
            if role == "" and self.arbiter.is_primary(self._election_of(stream), ""):
                primary = stream
        if primary is not self._primary_stream:
            self._primary_stream = primary
            self.device.set_stream_listener(primary.send if primary is not None else None)

    def _election_of(self, stream: _Stream) -> ElectionId | None:
        return self.arbiter.election_id_of(stream)

    def _packet_out(self, stream: _Stream, packet: p4r.PacketOut) -> None:
        with self.lock:
            if stream is not self._primary_stream:
                stream.send(
                    self._stream_error(
                        rpc_code.PERMISSION_DENIED,
                        "only the primary client may send PacketOut",
                        packet_out=packet,
                    )
                )
                return
            if not self.device.has_pipeline():
                stream.send(
                    self._stream_error(
                        rpc_code.FAILED_PRECONDITION,
                        "no forwarding pipeline is set",
                        packet_out=packet,
                    )
                )
                return
            try:
                self.device.packet_out(packet)
            except DeviceError as exc:
                stream.send(self._stream_error(exc.code, exc.message, packet_out=packet))

    def _digest_ack(self, stream: _Stream, ack: p4r.DigestListAck) -> None:
        with self.lock:
            if stream is not self._primary_stream:
                stream.send(
                    self._stream_error(
                        rpc_code.PERMISSION_DENIED,
                        "only the primary client may ack digests",
                        digest_ack=ack,
                    )
                )
                return
            try:
                self.device.digest_ack(ack)
            except DeviceError as exc:
                stream.send(self._stream_error(exc.code, exc.message, digest_ack=ack))

    @staticmethod
    def _stream_error(
        code: int,
        message: str,
        *,
        packet_out: p4r.PacketOut | None = None,
        digest_ack: p4r.DigestListAck | None = None,
    ) -> p4r.StreamMessageResponse:
        response = p4r.StreamMessageResponse()
        response.error.canonical_code = code
        response.error.message = bounded(message)
        if packet_out is not None:
            response.error.packet_out.packet_out.CopyFrom(packet_out)
        if digest_ack is not None:
            response.error.digest_list_ack.digest_list_ack.CopyFrom(digest_ack)
        return response

    def _close_stream(self, stream: _Stream) -> None:
        with self.lock:
            self._streams.discard(stream)
            self._deliver(self.arbiter.disconnect(stream))


def read_response(entities: Sequence[p4r.Entity | bytes]) -> bytes:
    """A serialized ``ReadResponse`` of ``entities``, given as messages or serialized: each
    is field 1 (``entities``, length-delimited), so serialized ones are framed as they are,
    without a parse and a copy (the Read handler's serializer passes bytes through)."""
    parts = []
    for entity in entities:
        data = entity if isinstance(entity, bytes) else entity.SerializeToString()
        parts.append(_ENTITIES_TAG + _varint(len(data)))
        parts.append(data)
    return b"".join(parts)


_ENTITIES_TAG = bytes([1 << 3 | 2])  # ReadResponse.entities: field 1, wire type 2


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def start_grpc_server(
    service: P4RuntimeService,
    address: str,
    *,
    gnmi_service: gnmi_grpc.gNMIServicer | None = None,
    max_workers: int = UNARY_WORKERS,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    tls: TlsConfig | None = None,
) -> tuple[grpc.Server, int]:
    """Starts a gRPC server for ``service`` (and gNMI port control) on ``address``.

    ``address`` is ``HOST:PORT``; port 0 picks any free port. Without ``tls`` the port is
    plaintext (as ``simple_switch_grpc`` without ``--grpc-server-ssl``).

    Returns the server and the bound port; raises DeviceError if the address cannot be bound.
    """
    from concurrent.futures import ThreadPoolExecutor

    server = grpc.server(
        ThreadPoolExecutor(max_workers=max_workers + MAX_STREAMS, thread_name_prefix="p4rt"),
        options=server_options(max_message_bytes),
    )
    add_service(
        server,
        p4r_grpc.add_P4RuntimeServicer_to_server,
        service,
        {
            "Write": p4r.WriteResponse,
            "SetForwardingPipelineConfig": p4r.SetForwardingPipelineConfigResponse,
            "GetForwardingPipelineConfig": p4r.GetForwardingPipelineConfigResponse,
            "Capabilities": p4r.CapabilitiesResponse,
        },
    )
    if gnmi_service is not None:
        add_service(
            server,
            gnmi_grpc.add_gNMIServicer_to_server,
            gnmi_service,
            {
                "Capabilities": gnmi.CapabilityResponse,
                "Get": gnmi.GetResponse,
                "Set": gnmi.SetResponse,
            },
        )
    try:
        if tls is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, tls.server_credentials())
    except RuntimeError as exc:
        raise DeviceError(rpc_code.UNAVAILABLE, f"cannot listen on {address}: {exc}") from exc
    if port == 0:
        raise DeviceError(rpc_code.UNAVAILABLE, f"cannot listen on {address} (address in use?)")
    server.start()
    return server, port
