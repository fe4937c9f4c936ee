"""A small synchronous P4Runtime client, built on the current generated protos (finsy.proto).

For tests, scripts and STF-style checks against any P4Runtime target (p4emu-switch or
simple_switch_grpc). A thin transport: requests, entities (by *name* from the P4Info,
never by numeric id) and error decoding come from :mod:`p4emu.p4rt_client.messages`, shared with
the controller's asyncio client::

    with P4RuntimeClient("127.0.0.1:9559") as client:
        client.set_pipeline_from_program("prog.p4")
        client.insert(client.table_entry("Ingress.fwd", {"hdr.eth.dst": 0x0A}, "Ingress.forward", {"port": 2}))
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
from finsy.proto import gnmi, gnmi_grpc, p4r_grpc

from p4emu.exceptions import P4EmuError
from p4emu.p4rt_client.exceptions import EntityNameError
from p4emu.p4rt_client.messages import (
    EntityNames,
    arbitration_request,
    describe_rpc_error,
    get_pipeline_request,
    per_update_errors,
    pipeline_config,
    read_request,
    set_pipeline_request,
    write_request,
)
from p4emu.p4rt_client.schema import KeyFieldValue
from p4emu.proto import p4i, p4r, rpc_code
from p4emu.server.ports import interface_path


class ClientError(P4EmuError):
    """The client could not do what was asked (unknown name, no primary, dead peer...)."""


class WriteError(ClientError):
    """A Write failed; ``errors`` has one ``p4.v1.Error`` per update of the batch."""

    def __init__(self, message: str, errors: list[p4r.Error]) -> None:
        super().__init__(message)
        self.errors = errors


@dataclass(frozen=True)
class ClientTls:
    """TLS towards a switch started with ``--grpc-server-ssl``.

    ``cacert`` verifies the server (None: the system's roots); ``cert`` and ``key`` are the
    client's own certificate for mutual TLS; ``server_name`` overrides the name checked in
    the server's certificate (when connecting by IP address to a certificate for a name).
    """

    cacert: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    server_name: str | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        def read(path: Path | None, what: str) -> bytes | None:
            if path is None:
                return None
            try:
                return Path(path).read_bytes()
            except OSError as exc:
                raise ClientError(f"TLS {what} {path}: {exc.strerror}") from None

        return grpc.ssl_channel_credentials(
            root_certificates=read(self.cacert, "CA certificate"),
            private_key=read(self.key, "key"),
            certificate_chain=read(self.cert, "certificate"),
        )


# A failed large batch carries one p4.v1.Error per update in a trailer.
_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 256 * 1024 * 1024),
    ("grpc.max_metadata_size", 16 * 1024 * 1024),
]


def open_channel(address: str, tls: ClientTls | None = None) -> grpc.Channel:
    """A gRPC channel to a switch: plaintext, or TLS as ``tls`` says."""
    if tls is None:
        return grpc.insecure_channel(address, options=_CHANNEL_OPTIONS)
    options = list(_CHANNEL_OPTIONS)
    if tls.server_name is not None:
        options.append(("grpc.ssl_target_name_override", tls.server_name))
    return grpc.secure_channel(address, tls.credentials(), options=options)


def _failed(what: str, exc: grpc.RpcError) -> str:
    code, message = describe_rpc_error(exc)
    return f"{what} failed: {code}: {message}"


class P4RuntimeClient:
    def __init__(
        self,
        address: str,
        *,
        device_id: int = 0,
        election_id: int = 1,
        role: str = "",
        tls: ClientTls | None = None,
    ) -> None:
        self.address = address
        self.tls = tls
        self.device_id = device_id
        self.election_id = election_id
        self.role = role
        self.p4info: p4i.P4Info | None = None
        self._channel: grpc.Channel | None = None
        self._stub: p4r_grpc.P4RuntimeStub | None = None
        self._requests: queue.Queue[p4r.StreamMessageRequest | None] = queue.Queue()
        self._arbitration: queue.Queue[p4r.MasterArbitrationUpdate] = queue.Queue()
        self.packet_ins: queue.Queue[p4r.PacketIn] = queue.Queue()
        self.digests: queue.Queue[p4r.DigestList] = queue.Queue()
        self.idle_timeouts: queue.Queue[p4r.IdleTimeoutNotification] = queue.Queue()
        self.stream_errors: queue.Queue[p4r.StreamError] = queue.Queue()
        self._stream: grpc.Future | None = None
        self._names_cache: EntityNames | None = None

    # --- connection ----------------------------------------------------------------------
    def connect(self, timeout: float = 10.0) -> P4RuntimeClient:
        self._channel = open_channel(self.address, self.tls)
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            self.close()
            raise ClientError(
                f"no P4Runtime server answers at {self.address} (waited {timeout:g} s)"
            ) from None
        self._stub = p4r_grpc.P4RuntimeStub(self._channel)
        self._stream = self._stub.StreamChannel(iter(self._requests.get, None))
        threading.Thread(target=self._pump, name=f"p4rt-client-{self.address}", daemon=True).start()
        self._requests.put(arbitration_request(self.device_id, self.election_id, self.role))
        try:
            reply = self._arbitration.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise ClientError(f"{self.address}: no arbitration reply") from None
        if reply.status.code not in (rpc_code.OK, rpc_code.ALREADY_EXISTS):
            self.close()
            raise ClientError(
                f"{self.address}: arbitration failed: {reply.status.message or reply.status.code}"
            )
        self.is_primary = reply.status.code == rpc_code.OK
        return self

    def arbitration_updates(self) -> list[p4r.MasterArbitrationUpdate]:
        """Arbitration messages received since the last call (or since the connect reply):
        a change of primary in this client's role, for instance."""
        updates = []
        while True:
            try:
                updates.append(self._arbitration.get_nowait())
            except queue.Empty:
                return updates

    def _pump(self) -> None:
        assert self._stream is not None
        try:
            for message in self._stream:
                kind = message.WhichOneof("update")
                if kind == "arbitration":
                    self._arbitration.put(message.arbitration)
                elif kind == "packet":
                    self.packet_ins.put(message.packet)
                elif kind == "digest":
                    self.digests.put(message.digest)
                elif kind == "idle_timeout_notification":
                    self.idle_timeouts.put(message.idle_timeout_notification)
                elif kind == "error":
                    self.stream_errors.put(message.error)
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.CANCELLED:
                failure = p4r.MasterArbitrationUpdate()
                failure.status.code = exc.code().value[0]
                failure.status.message = exc.details() or ""
                self._arbitration.put(failure)

    def close(self) -> None:
        self._requests.put(None)
        if self._stream is not None:
            self._stream.cancel()
            self._stream = None
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def __enter__(self) -> P4RuntimeClient:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def stub(self) -> p4r_grpc.P4RuntimeStub:
        if self._stub is None:
            raise ClientError("not connected")
        return self._stub

    # --- pipeline ------------------------------------------------------------------------
    def set_pipeline(
        self,
        p4info: p4i.P4Info,
        device_config: bytes,
        *,
        action: int = p4r.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
        cookie: int = 0,
    ) -> None:
        request = set_pipeline_request(
            self.device_id,
            self.election_id,
            pipeline_config(p4info, device_config, cookie),
            action=action,
            role=self.role,
        )
        try:
            self.stub.SetForwardingPipelineConfig(request)
        except grpc.RpcError as exc:
            raise ClientError(_failed("SetForwardingPipelineConfig", exc)) from None
        self.p4info = p4info

    def set_pipeline_from_program(self, program: str | Path, **kwargs: object) -> None:
        """Compiles ``program`` with p4emu (P4Info + source bundle) and sets it."""
        from p4emu.bundle import device_config_for
        from p4emu.frontend import load_program
        from p4emu.p4info import p4info_for_program

        self.set_pipeline(
            p4info_for_program(load_program(program)), device_config_for(program), **kwargs
        )  # type: ignore[arg-type]

    def fetch_p4info(self) -> p4i.P4Info:
        request = get_pipeline_request(self.device_id, "P4INFO_AND_COOKIE")
        try:
            self.p4info = self.stub.GetForwardingPipelineConfig(request).config.p4info
        except grpc.RpcError as exc:
            raise ClientError(_failed("GetForwardingPipelineConfig", exc)) from None
        return self.p4info

    # --- names -> entities (p4emu.p4rt_client) --------------------------------------------------
    @contextlib.contextmanager
    def _naming(self) -> Iterator[EntityNames]:
        """The entity builder for the current P4Info; its errors become ClientErrors."""
        if self.p4info is None:
            raise ClientError("no P4Info yet: set or fetch the pipeline first")
        if self._names_cache is None or self._names_cache.p4info is not self.p4info:
            self._names_cache = EntityNames(self.p4info)
        try:
            yield self._names_cache
        except EntityNameError as exc:
            raise ClientError(str(exc)) from None

    def find(self, section: str, name: str):
        """The P4Info object of ``section`` (e.g. ``"tables"``) named ``name`` or its alias."""
        with self._naming() as names:
            return names.find(section, name)

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
        with self._naming() as names:
            return names.table_entry(
                table, match, action, params, priority=priority, default=default
            )

    def action(self, name: str, params: Mapping[str, int]) -> p4r.Action:
        with self._naming() as names:
            return names.action(name, params)

    def counter_entry(self, name: str, index: int | None = None) -> p4r.Entity:
        with self._naming() as names:
            return names.counter_entry(name, index)

    def register_entry(
        self, name: str, index: int | None = None, value: int | None = None
    ) -> p4r.Entity:
        with self._naming() as names:
            return names.register_entry(name, index, value)

    multicast_group = staticmethod(EntityNames.multicast_group)

    # --- write / read --------------------------------------------------------------------
    def write(
        self,
        updates: Sequence[tuple[int, p4r.Entity]],
        *,
        atomicity: int = p4r.WriteRequest.CONTINUE_ON_ERROR,
    ) -> None:
        request = write_request(
            self.device_id, self.election_id, (), atomicity=atomicity, role=self.role
        )
        for kind, entity in updates:  # built in place: one copy of each entity
            request.updates.add(type=kind, entity=entity)
        try:
            self.stub.Write(request)
        except grpc.RpcError as exc:
            raise WriteError(_failed("Write", exc), per_update_errors(exc)) from None

    def insert(self, *entities: p4r.Entity) -> None:
        self.write([(p4r.Update.INSERT, e) for e in entities])

    def modify(self, *entities: p4r.Entity) -> None:
        self.write([(p4r.Update.MODIFY, e) for e in entities])

    def delete(self, *entities: p4r.Entity) -> None:
        self.write([(p4r.Update.DELETE, e) for e in entities])

    def read(self, *entities: p4r.Entity) -> list[p4r.Entity]:
        request = read_request(self.device_id, entities, self.role)
        try:
            return [entity for response in self.stub.Read(request) for entity in response.entities]
        except grpc.RpcError as exc:
            raise ClientError(_failed("Read", exc)) from None

    # --- packet I/O ----------------------------------------------------------------------
    def packet_out(self, payload: bytes, **metadata: int) -> None:
        with self._naming() as names:
            self._requests.put(names.packet_out(payload, metadata))

    def packet_in(self, timeout: float = 5.0) -> tuple[bytes, dict[str, int]]:
        """The next PacketIn as ``(payload, {metadata name: value})``."""
        try:
            packet = self.packet_ins.get(timeout=timeout)
        except queue.Empty:
            raise ClientError(f"no PacketIn within {timeout:g} s") from None
        with self._naming() as names:
            return names.packet_in(packet)


class PortClient:
    """Port state of a switch over its management channel (gNMI, docs/p4emu-switch.md).

    Independent of P4Runtime arbitration: it works while another client is primary::

        with PortClient("127.0.0.1:9559") as ports:
            ports.set_port("veth3", False)      # or the port number, 3
            ports.ports()                        # {"veth3": False, ...}
    """

    def __init__(self, address: str, *, tls: ClientTls | None = None, timeout: float = 10.0):
        self.address = address
        self.timeout = timeout
        self._channel = open_channel(address, tls)
        self._stub = gnmi_grpc.gNMIStub(self._channel)

    def set_ports(self, changes: Mapping[str | int, bool]) -> None:
        """Sets every named port up (True) or down (False) in one gNMI Set (all or none)."""
        request = gnmi.SetRequest()
        for name, up in changes.items():
            update = request.update.add()
            update.path.CopyFrom(interface_path(str(name), "config", "enabled"))
            update.val.bool_val = bool(up)
        try:
            self._stub.Set(request, timeout=self.timeout)
        except grpc.RpcError as exc:
            raise ClientError(_failed(f"{self.address}: gNMI Set", exc)) from None

    def set_port(self, name: str | int, up: bool) -> None:
        self.set_ports({name: up})

    def _get(self, name: str | int, *leaf: str) -> list[gnmi.Update]:
        request = gnmi.GetRequest()
        request.path.append(interface_path(str(name), *leaf))
        try:
            response = self._stub.Get(request, timeout=self.timeout)
        except grpc.RpcError as exc:
            raise ClientError(_failed(f"{self.address}: gNMI Get", exc)) from None
        return [update for n in response.notification for update in n.update]

    def ports(self, name: str | int = "*") -> dict[str, bool]:
        """``{port name: up}`` for every port (or the one named)."""
        return {
            u.path.elem[1].key["name"]: u.val.string_val == "UP"
            for u in self._get(name, "state", "oper-status")
        }

    def counters(self, name: str | int = "*") -> dict[str, dict[str, int]]:
        """``{port name: {counter: value}}`` (``in-pkts``, ``out-pkts``)."""
        out: dict[str, dict[str, int]] = {}
        for u in self._get(name, "state", "counters"):
            out.setdefault(u.path.elem[1].key["name"], {})[u.path.elem[-1].name] = u.val.uint_val
        return out

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> PortClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
