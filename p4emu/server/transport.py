"""The gRPC transport of p4emu-switch: message limits, TLS, peer identity, undecodable requests.

- **Message size.** Requests and responses are limited to ``max_message_bytes`` (default
  256 MiB, what PI's server behind ``simple_switch_grpc`` accepts); a larger request is
  refused by gRPC with RESOURCE_EXHAUSTED before any handler sees it.
- **Undecodable requests.** gRPC's generated handlers answer INTERNAL ("Exception
  deserializing request!") to bytes that are not the request message. p4emu decodes
  requests itself: a unary request that does not decode is INVALID_ARGUMENT naming the
  message type and the decoder's complaint; a stream message that does not decode reaches
  the servicer as an :class:`Undecodable` (P4Runtime's StreamChannel answers it with a
  StreamError and keeps the stream).
- **TLS.** :class:`TlsConfig` holds BMv2's ``--grpc-server-ssl`` family of options
  (server certificate and key, CA to verify clients, client authentication required).
- **Unexpected errors.** An exception a handler did not expect is logged with its
  traceback and answered INTERNAL naming only its type: never gRPC's UNKNOWN with a text
  that could name a host path or echo the request.
- **Identity.** :func:`peer_identity` is the common name of a client's verified
  certificate (mutual TLS), or None.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from p4emu.proto import rpc_code
from p4emu.server.exceptions import ServerError
from p4emu.server.status import set_error

log = logging.getLogger("p4emu.server")

# PI's server (simple_switch_grpc) sets a 256 MB receive limit; p4emu uses the same default.
DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Undecodable:
    """A request whose bytes are not a valid ``message_type`` protobuf."""

    message_type: str
    reason: str
    size: int

    @property
    def message(self) -> str:
        return f"request is not a valid {self.message_type} ({self.size} bytes): {self.reason}"


@dataclass(frozen=True)
class TlsConfig:
    """``--grpc-server-ssl`` and friends, as ``simple_switch_grpc`` names them."""

    cert: Path
    key: Path
    cacert: Path | None = None
    with_client_auth: bool = False

    def server_credentials(self) -> grpc.ServerCredentials:
        """Loads the PEM files; raises ServerError naming an unreadable file."""
        key, cert = _read_pem(self.key, "key"), _read_pem(self.cert, "cert")
        ca = _read_pem(self.cacert, "cacert") if self.cacert is not None else None
        return grpc.ssl_server_credentials(
            [(key, cert)], root_certificates=ca, require_client_auth=self.with_client_auth
        )


def _read_pem(path: Path, flag: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ServerError(f"--grpc-server-{flag} {path}: {exc.strerror}") from None
    if b"-----BEGIN " not in data:
        raise ServerError(f"--grpc-server-{flag} {path}: not a PEM file")
    return data


def peer_identity(context: grpc.ServicerContext) -> str | None:
    """The common name of the client's verified certificate, or None (no mutual TLS)."""
    names = context.auth_context().get("x509_common_name")
    return names[0].decode("utf-8", "replace") if names else None


def server_options(max_message_bytes: int) -> list[tuple[str, int]]:
    return [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.so_reuseport", 0),
    ]


def _decoder(parse: Callable[[bytes], Any], type_name: str) -> Callable[[bytes], Any]:
    def decode(data: bytes) -> Any:
        try:
            return parse(data)
        except (DecodeError, RuntimeError, ValueError) as exc:
            return Undecodable(type_name, str(exc) or type(exc).__name__, len(data))

    return decode


def _internal_error(context: grpc.ServicerContext, method: str, exc: BaseException) -> None:
    """An exception no handler expected: logged whole, answered INTERNAL with its type only
    (its text may name host paths or echo the request)."""
    log.error("%s: unexpected %s", method, type(exc).__name__, exc_info=exc)
    set_error(
        context,
        rpc_code.INTERNAL,
        f"internal error in {method} ({type(exc).__name__}); the switch's log has the details",
    )


def _guard_unary(
    behavior: Callable[..., Any], empty: Callable[[], Any], method: str
) -> Callable[..., Any]:
    def handle(request: Any, context: grpc.ServicerContext) -> Any:
        if isinstance(request, Undecodable):
            set_error(context, rpc_code.INVALID_ARGUMENT, request.message)
            return empty()
        try:
            return behavior(request, context)
        except Exception as exc:
            _internal_error(context, method, exc)
            return empty()

    return handle


def _guarded_iterator(
    responses: Callable[[], Iterator[Any]], context: grpc.ServicerContext, method: str
) -> Iterator[Any]:
    try:
        yield from responses()
    except Exception as exc:
        _internal_error(context, method, exc)


def _guard_unary_stream(
    behavior: Callable[..., Iterator[Any]], method: str
) -> Callable[..., Iterator[Any]]:
    def handle(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        if isinstance(request, Undecodable):
            set_error(context, rpc_code.INVALID_ARGUMENT, request.message)
            return iter(())
        return _guarded_iterator(lambda: behavior(request, context), context, method)

    return handle


def _guard_stream_stream(
    behavior: Callable[..., Iterator[Any]], method: str
) -> Callable[..., Iterator[Any]]:
    def handle(requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        return _guarded_iterator(lambda: behavior(requests, context), context, method)

    return handle


def _guard_stream_unary(behavior: Callable[..., Any], method: str) -> Callable[..., Any]:
    def handle(requests: Iterator[Any], context: grpc.ServicerContext) -> Any:
        try:
            return behavior(requests, context)
        except Exception as exc:
            _internal_error(context, method, exc)
            return None

    return handle


class _Recorder:
    """Stands in for a grpc.Server to capture what a generated ``add_*_to_server`` registers."""

    def __init__(self) -> None:
        self.service = ""
        self.handlers: dict[str, grpc.RpcMethodHandler] = {}

    def add_generic_rpc_handlers(self, handlers: object) -> None:
        return None  # the registered handlers below carry the same methods

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler]
    ) -> None:
        self.service, self.handlers = service, dict(handlers)


def _pass_bytes(serialize: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """A response serializer that sends a response a handler serialized itself as it is
    (``service.read_response``: ReadResponses framed from cached entity encodings)."""

    def run(message: Any) -> bytes:
        return message if isinstance(message, bytes) else serialize(message)

    return run


def add_service(
    server: grpc.Server,
    add_to_server: Callable[[Any, Any], None],
    servicer: Any,
    response_types: dict[str, Callable[[], Any]],
) -> None:
    """Registers ``servicer`` like the generated ``add_to_server``, decoding requests itself.

    ``response_types`` gives, per unary-response method, the (empty) response to return with
    an INVALID_ARGUMENT status when the request does not decode.
    """
    recorder = _Recorder()
    add_to_server(servicer, recorder)
    handlers: dict[str, grpc.RpcMethodHandler] = {}
    for name, handler in recorder.handlers.items():
        parse = handler.request_deserializer
        type_name = getattr(getattr(parse, "__self__", None), "DESCRIPTOR", None)
        decode = _decoder(parse, type_name.full_name if type_name is not None else name)
        if not handler.request_streaming and not handler.response_streaming:
            empty = response_types[name]
            handlers[name] = grpc.unary_unary_rpc_method_handler(
                _guard_unary(handler.unary_unary, empty, name),
                request_deserializer=decode,
                response_serializer=_pass_bytes(handler.response_serializer),
            )
        elif not handler.request_streaming:
            handlers[name] = grpc.unary_stream_rpc_method_handler(
                _guard_unary_stream(handler.unary_stream, name),
                request_deserializer=decode,
                response_serializer=_pass_bytes(handler.response_serializer),
            )
        elif handler.response_streaming:
            handlers[name] = grpc.stream_stream_rpc_method_handler(
                _guard_stream_stream(handler.stream_stream, name),
                request_deserializer=decode,
                response_serializer=_pass_bytes(handler.response_serializer),
            )
        else:
            handlers[name] = grpc.stream_unary_rpc_method_handler(
                _guard_stream_unary(handler.stream_unary, name),
                request_deserializer=decode,
                response_serializer=_pass_bytes(handler.response_serializer),
            )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(recorder.service, handlers),)
    )
    server.add_registered_method_handlers(recorder.service, handlers)
