"""One P4Runtime connection to one switch (asyncio, gRPC).

Built on the raw generated stubs (``finsy.proto.p4r_grpc``) rather than ``finsy.Switch``:
the controller needs to decide itself when a pipeline is (re)installed, to read tables back
verbatim for the diff, and to map every failure to the switch and update that caused it
(docs/controller.md, "Why raw stubs"). A thin asyncio transport: requests are built, and
failed Writes decoded, by p4emu's client stack (``p4emu.p4rt_client.messages``, shared with the
synchronous client of ``p4emu-switch``); the switch side (``p4emu.server``) is never used.

Errors are raised as :mod:`controller.exceptions` subclasses of ``SwitchAccessError``
carrying the gRPC status name and the server's message.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import grpc
from finsy.proto import p4r_grpc

from controller.artifacts import Pipeline
from controller.endpoints import P4RuntimeTarget
from controller.exceptions import (
    ArbitrationError,
    PipelineError,
    ReadError,
    SwitchAccessError,
    UnreachableError,
    WriteError,
)
from p4emu.p4rt_client.exceptions import code_name
from p4emu.p4rt_client.messages import (
    FailedUpdate,
    arbitration_request,
    describe_rpc_error,
    failed_updates,
    from_uint128,
    get_pipeline_request,
    per_update_errors,
    read_request,
    set_pipeline_request,
    write_request,
)
from p4emu.proto import p4r, rpc_code

DEFAULT_ELECTION_ID = 1
DEFAULT_CONNECT_TIMEOUT_S = 5.0
DEFAULT_RPC_TIMEOUT_S = 60.0
GRPC_OPTIONS = (
    ("grpc.max_receive_message_length", 256 * 1024 * 1024),
    ("grpc.max_send_message_length", 256 * 1024 * 1024),
    # A failed Write's per-update errors travel in a trailer; gRPC's default 16 KiB metadata
    # limit drops those of a 500-update batch (~35 bytes each) and the details with them.
    ("grpc.max_metadata_size", 64 * 1024 * 1024),
    ("grpc.absolute_max_metadata_size", 64 * 1024 * 1024),
    # Reconnect quickly: watch mode must notice a restarted switch within seconds.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
)
_UNREACHABLE_CODES = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}


class SwitchClient:
    """P4Runtime client of one switch. Use as ``async with SwitchClient(...) as client``
    (connect + become primary) or call :meth:`connect` / :meth:`become_primary` yourself.
    """

    def __init__(
        self,
        name: str,
        endpoint: P4RuntimeTarget,
        *,
        election_id: int = DEFAULT_ELECTION_ID,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
        rpc_timeout: float = DEFAULT_RPC_TIMEOUT_S,
        raise_election_id: bool = True,
    ) -> None:
        self.name = name
        self.endpoint = endpoint
        self.election_id = election_id
        self.connect_timeout = connect_timeout
        self.rpc_timeout = rpc_timeout
        # A switch whose last primary used a higher id has no primary until a client shows
        # an id at least as high (P4Runtime spec 5.x); take that id instead of failing.
        self.raise_election_id = raise_election_id
        self.is_primary = False
        self.stream_lost = asyncio.Event()
        self.stream_problem = ""
        self.primary_changed = asyncio.Event()
        self.stream_errors: list[str] = []
        self._channel: grpc.aio.Channel | None = None
        self._stub: p4r_grpc.P4RuntimeStub | None = None
        self._stream: grpc.aio.StreamStreamCall | None = None
        self._reader: asyncio.Task[None] | None = None
        self._arbitration: asyncio.Future[None] | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def address(self) -> str:
        return self.endpoint.address

    @property
    def device_id(self) -> int:
        return self.endpoint.device_id

    async def __aenter__(self) -> SwitchClient:
        try:
            await self.connect()
            await self.become_primary()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Opens the channel; UnreachableError if the connection is refused or nothing
        answers within the timeout."""
        self._channel = grpc.aio.insecure_channel(self.address, options=list(GRPC_OPTIONS))
        self._stub = p4r_grpc.P4RuntimeStub(self._channel)
        try:
            await asyncio.wait_for(self._wait_ready(self._channel), self.connect_timeout)
        except TimeoutError:
            raise UnreachableError(
                self.name,
                f"no P4Runtime server at {self.address} "
                f"(nothing answered within {self.connect_timeout:g} s)",
                code="UNAVAILABLE",
            ) from None

    async def _wait_ready(self, channel: grpc.aio.Channel) -> None:
        # A refused connection fails at once (nothing listens there); a silent host waits
        # for the timeout.
        state = channel.get_state(try_to_connect=True)
        while state != grpc.ChannelConnectivity.READY:
            if state == grpc.ChannelConnectivity.TRANSIENT_FAILURE:
                raise UnreachableError(
                    self.name,
                    f"no P4Runtime server at {self.address} (connection refused or failed)",
                    code="UNAVAILABLE",
                )
            await channel.wait_for_state_change(state)
            state = channel.get_state(try_to_connect=True)

    async def become_primary(self) -> None:
        """Opens the stream and arbitrates; ArbitrationError unless this client is primary."""
        stub = self._require_stub()
        self._stream = stub.StreamChannel()
        self._arbitration = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(self._read_stream(), name=f"p4rt-stream-{self.name}")
        await self._send_arbitration()
        try:
            await asyncio.wait_for(asyncio.shield(self._arbitration), self.connect_timeout)
        except TimeoutError:
            raise ArbitrationError(
                self.name,
                f"no arbitration answer from {self.address} within {self.connect_timeout:g} s",
            ) from None

    async def close(self) -> None:
        future = self._arbitration
        if future is not None and future.done() and not future.cancelled():
            future.exception()  # retrieved: an answer that came after a timeout is not an error
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
            self._reader = None
        if self._stream is not None:
            self._stream.cancel()
            self._stream = None
        if self._channel is not None:
            with contextlib.suppress(Exception):
                await self._channel.close()
            self._channel = None
        self.is_primary = False

    # ------------------------------------------------------------------ stream

    async def _send_arbitration(self) -> None:
        assert self._stream is not None
        try:
            await self._stream.write(arbitration_request(self.device_id, self.election_id))
        except grpc.RpcError as exc:
            code, message = describe_rpc_error(exc)
            raise UnreachableError(
                self.name, f"stream to {self.address} failed: {message}", code=code
            ) from None

    async def _read_stream(self) -> None:
        assert self._stream is not None
        try:
            while True:
                message = await self._stream.read()
                if message is grpc.aio.EOF:
                    self._lose_stream("the switch closed the stream", None)
                    return
                kind = message.WhichOneof("update")
                if kind == "arbitration":
                    await self._on_arbitration(message.arbitration)
                elif kind == "error":
                    self.stream_errors.append(
                        f"{code_name(message.error.canonical_code)}: {message.error.message}"
                    )
        except asyncio.CancelledError:
            raise
        except grpc.RpcError as exc:
            code, text = describe_rpc_error(exc)
            self._lose_stream(f"stream ended: {code}: {text}", code)
        except Exception as exc:  # never leave the reader dead without saying why
            self._lose_stream(f"stream failed: {exc}", None)

    def _lose_stream(self, problem: str, code: str | None) -> None:
        self.stream_problem = problem
        was_primary = self.is_primary
        self.is_primary = False
        self.stream_lost.set()
        if was_primary:
            self.primary_changed.set()
        if self._arbitration is not None and not self._arbitration.done():
            if code in (
                "INVALID_ARGUMENT",
                "NOT_FOUND",
                "FAILED_PRECONDITION",
                "PERMISSION_DENIED",
            ):
                error: SwitchAccessError = ArbitrationError(self.name, problem, code=code)
            else:
                error = UnreachableError(
                    self.name, f"{self.address}: {problem}", code=code or "UNAVAILABLE"
                )
            self._arbitration.set_exception(error)

    async def _on_arbitration(self, update: p4r.MasterArbitrationUpdate) -> None:
        status = update.status.code
        reported = from_uint128(update.election_id)
        was_primary = self.is_primary
        self.is_primary = status == rpc_code.OK
        if was_primary != self.is_primary:
            self.primary_changed.set()
        future = self._arbitration
        if status == rpc_code.OK:
            if future is not None and not future.done():
                future.set_result(None)
        elif (
            status == rpc_code.NOT_FOUND and self.raise_election_id and reported > self.election_id
        ):
            # No primary, and our id is below the highest one the switch has seen.
            self.election_id = reported
            await self._send_arbitration()
        elif future is not None and not future.done():
            if status == rpc_code.ALREADY_EXISTS:
                message = (
                    f"another controller is primary (election id {reported}, ours "
                    f"{self.election_id}); stop it or use a higher --election-id"
                )
            else:
                message = (
                    f"not primary ({code_name(status)}: {update.status.message or 'no message'};"
                    f" election id {self.election_id}, switch reports {reported})"
                )
            future.set_exception(ArbitrationError(self.name, message, code=code_name(status)))

    # ------------------------------------------------------------------ RPCs

    def _require_stub(self) -> p4r_grpc.P4RuntimeStub:
        if self._stub is None:
            raise SwitchAccessError(self.name, "not connected")
        return self._stub

    def _failure(
        self, exc: grpc.RpcError, what: str, kind: type[SwitchAccessError]
    ) -> SwitchAccessError:
        code, message = describe_rpc_error(exc)
        if isinstance(exc, grpc.aio.AioRpcError) and exc.code() in _UNREACHABLE_CODES:
            return UnreachableError(self.name, f"{what} failed: {code}: {message}", code=code)
        return kind(self.name, f"{what} failed: {code}: {message}", code=code)

    async def get_pipeline(
        self, response_type: str = "COOKIE_ONLY"
    ) -> p4r.ForwardingPipelineConfig | None:
        """The running pipeline config, or None if the switch has none."""
        request = get_pipeline_request(self.device_id, response_type)
        try:
            response = await self._require_stub().GetForwardingPipelineConfig(
                request, timeout=self.rpc_timeout
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:
                return None
            raise self._failure(exc, "GetForwardingPipelineConfig", ReadError) from None
        # simple_switch_grpc and p4emu answer FAILED_PRECONDITION without a pipeline (above).
        config = response.config
        return config

    async def set_pipeline(self, pipeline: Pipeline) -> None:
        request = set_pipeline_request(self.device_id, self.election_id, pipeline.config())
        try:
            await self._require_stub().SetForwardingPipelineConfig(
                request, timeout=self.rpc_timeout
            )
        except grpc.aio.AioRpcError as exc:
            raise self._failure(
                exc, f"SetForwardingPipelineConfig ({pipeline.description})", PipelineError
            ) from None

    async def read(self, entities: Sequence[p4r.Entity]) -> list[p4r.Entity]:
        request = read_request(self.device_id, entities)
        result: list[p4r.Entity] = []
        try:
            async for response in self._require_stub().Read(request, timeout=self.rpc_timeout):
                result.extend(response.entities)
        except grpc.aio.AioRpcError as exc:
            raise self._failure(exc, "Read", ReadError) from None
        return result

    async def write(self, updates: Sequence[p4r.Update]) -> list[FailedUpdate]:
        """Writes one batch (CONTINUE_ON_ERROR); returns the failed updates.

        Raises WriteError if the batch failed as a whole (no per-update details)."""
        if not updates:
            return []
        request = write_request(self.device_id, self.election_id, updates)
        try:
            await self._require_stub().Write(request, timeout=self.rpc_timeout)
        except grpc.aio.AioRpcError as exc:
            errors = per_update_errors(exc)
            if len(errors) == len(updates):
                return failed_updates(errors)
            raise self._failure(exc, "Write", WriteError) from None
        return []
