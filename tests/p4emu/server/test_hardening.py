"""P4Runtime hardening: value widths, message size, undecodable requests, TLS, mutual TLS and
the role / controller policy (docs/p4emu-switch.md, "Trust model")."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from finsy.proto import p4r, p4r_grpc, rpc_code

from p4emu.server.client import (
    ClientError,
    ClientTls,
    P4RuntimeClient,
    PortClient,
    WriteError,
    open_channel,
)
from p4emu.server.exceptions import OptionsError, ServerError
from p4emu.server.options import parse_options
from p4emu.server.policy import AccessPolicy
from p4emu.server.ports import GnmiPortService, PortStatus
from p4emu.server.service import P4RuntimeService, start_grpc_server
from p4emu.server.switch_device import DeviceSettings, SwitchDevice
from p4emu.server.transport import DEFAULT_MAX_MESSAGE_BYTES, TlsConfig

PROGRAM = Path(__file__).parent / "programs" / "p4rt_demo.p4"
TABLE = "DemoIngress.l2_fwd"


class Ports:
    def __init__(self) -> None:
        self.up = {1: True, 2: True}

    def port_statuses(self) -> list[PortStatus]:
        return [PortStatus(p, str(p), up, {}) for p, up in sorted(self.up.items())]

    def set_port_up(self, port: int, up: bool) -> None:
        self.up[port] = up


def start(
    *, tls: TlsConfig | None = None, policy: AccessPolicy | None = None, max_bytes: int = 0
) -> tuple[grpc.Server, str, Ports]:
    ports = Ports()
    server, port = start_grpc_server(
        P4RuntimeService(SwitchDevice(DeviceSettings(cpu_port=510)), policy),
        "127.0.0.1:0",
        gnmi_service=GnmiPortService(ports, policy),
        tls=tls,
        max_message_bytes=max_bytes or DEFAULT_MAX_MESSAGE_BYTES,
    )
    return server, f"127.0.0.1:{port}", ports


@pytest.fixture(scope="module")
def plain() -> Iterator[tuple[P4RuntimeClient, str]]:
    server, address, _ = start(max_bytes=64 * 1024)
    client = P4RuntimeClient(address)
    try:
        client.connect()
        client.set_pipeline_from_program(PROGRAM)
        yield client, address
    finally:
        client.close()
        server.stop(None)


# --------------------------------------------------------------------------- canonical errors


def test_a_4_kib_action_parameter_is_invalid_argument_naming_the_parameter(plain) -> None:
    client, _ = plain
    entity = client.table_entry(TABLE, {"hdr.ethernet.dst": 7}, "DemoIngress.forward", {"port": 1})
    entity.table_entry.action.action.params[0].value = b"\x5a" * 4096
    with pytest.raises(WriteError) as caught:
        client.insert(entity)
    (error,) = caught.value.errors
    assert error.canonical_code == rpc_code.INVALID_ARGUMENT
    assert "parameter port" in error.message and "(4096 bytes)" in error.message
    assert "does not fit in 9 bits" in error.message and len(error.message) < 300


def test_a_4_kib_match_value_is_refused_before_conversion(plain) -> None:
    client, _ = plain
    entity = client.table_entry(TABLE, {"hdr.ethernet.dst": 7}, "DemoIngress.forward", {"port": 1})
    entity.table_entry.match[0].exact.value = b"\x00" * 4090 + b"\x01" * 6  # fits: leading zeros
    client.insert(entity)
    entity.table_entry.match[0].exact.value = b"\x01" * 4096
    with pytest.raises(WriteError) as caught:
        client.insert(entity)
    assert caught.value.errors[0].canonical_code == rpc_code.INVALID_ARGUMENT
    assert "hdr.ethernet.dst" in caught.value.errors[0].message


@pytest.mark.parametrize(
    "method",
    [
        "/p4.v1.P4Runtime/Write",
        "/p4.v1.P4Runtime/SetForwardingPipelineConfig",
        "/p4.v1.P4Runtime/GetForwardingPipelineConfig",
        "/p4.v1.P4Runtime/Capabilities",
        "/p4.v1.P4Runtime/Read",
        "/gnmi.gNMI/Set",
    ],
)
def test_undecodable_request_bytes_are_invalid_argument(plain, method: str) -> None:
    _, address = plain
    garbage = b"\x0a\xff\xff\xff\xff\x0f"  # a length-delimited field longer than the message
    with grpc.insecure_channel(address) as channel:
        if method.endswith("/Read"):
            call = channel.unary_stream(method)
            with pytest.raises(grpc.RpcError) as caught:
                list(call(garbage, timeout=10))
        else:
            with pytest.raises(grpc.RpcError) as caught:
                channel.unary_unary(method)(garbage, timeout=10)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "is not a valid" in caught.value.details()


def test_an_undecodable_stream_message_gets_a_stream_error_and_the_stream_lives(plain) -> None:
    client, address = plain
    with grpc.insecure_channel(address) as channel:
        stream = channel.stream_stream(
            "/p4.v1.P4Runtime/StreamChannel",
            response_deserializer=p4r.StreamMessageResponse.FromString,
        )
        arbitration = p4r.StreamMessageRequest()
        arbitration.arbitration.election_id.low = 0  # lower than the primary's: a backup
        responses = stream(
            iter([b"\x0a\xff\xff\xff\xff\x0f", arbitration.SerializeToString()]), timeout=10
        )
        first, second = next(responses), next(responses)
        responses.cancel()
    assert first.error.canonical_code == rpc_code.INVALID_ARGUMENT
    assert "StreamMessageRequest" in first.error.message
    assert second.WhichOneof("update") == "arbitration"
    assert client.read(client.table_entry(TABLE, {})) is not None


def test_a_request_above_the_message_limit_is_resource_exhausted(plain) -> None:
    client, _ = plain
    updates = [
        (
            p4r.Update.INSERT,
            client.table_entry(
                TABLE, {"hdr.ethernet.dst": 0x1000 + i}, "DemoIngress.forward", {"port": 1}
            ),
        )
        for i in range(3000)  # about 90 kB, the server here accepts 64 KiB
    ]
    with pytest.raises(WriteError, match="RESOURCE_EXHAUSTED"):
        client.write(updates)


# --------------------------------------------------------------------------- TLS


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, a server certificate for 127.0.0.1 and two client certificates (ctl, intruder)."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed for the TLS tests (apt-packages.txt lists it)")
    d = tmp_path_factory.mktemp("pki")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
             "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem"), "-subj", "/CN=test-ca")  # fmt: skip
    for name, extra in (
        ("server", ["-addext", "subjectAltName=IP:127.0.0.1"]),
        ("ctl", []),
        ("intruder", []),
    ):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(d / f"{name}.key"),
                 "-out", str(d / f"{name}.csr"), "-subj", f"/CN={name}", *extra)  # fmt: skip
        ext = d / f"{name}.ext"
        ext.write_text("subjectAltName=IP:127.0.0.1\n" if name == "server" else "")
        _openssl("x509", "-req", "-in", str(d / f"{name}.csr"), "-CA", str(d / "ca.pem"),
                 "-CAkey", str(d / "ca.key"), "-CAcreateserial", "-days", "2",
                 "-out", str(d / f"{name}.pem"), "-extfile", str(ext))  # fmt: skip
    return d


def _client_tls(pki: Path, name: str | None) -> ClientTls:
    if name is None:
        return ClientTls(cacert=pki / "ca.pem")
    return ClientTls(cacert=pki / "ca.pem", cert=pki / f"{name}.pem", key=pki / f"{name}.key")


def test_tls_server_serves_tls_clients_and_refuses_plaintext(pki: Path) -> None:
    server, address, _ = start(tls=TlsConfig(cert=pki / "server.pem", key=pki / "server.key"))
    try:
        with P4RuntimeClient(address, tls=_client_tls(pki, None)) as client:
            assert client.is_primary
            client.set_pipeline_from_program(PROGRAM)
        with pytest.raises(ClientError, match="no P4Runtime server answers"):
            P4RuntimeClient(address).connect(timeout=1.5)
    finally:
        server.stop(None)


def test_mutual_tls_refuses_clients_without_a_certificate(pki: Path) -> None:
    tls = TlsConfig(
        cert=pki / "server.pem",
        key=pki / "server.key",
        cacert=pki / "ca.pem",
        with_client_auth=True,
    )
    server, address, _ = start(tls=tls)
    try:
        with P4RuntimeClient(address, tls=_client_tls(pki, "ctl")) as client:
            assert client.is_primary
        with pytest.raises(ClientError):
            P4RuntimeClient(address, tls=_client_tls(pki, None)).connect(timeout=1.5)
    finally:
        server.stop(None)


def test_controller_policy_limits_arbitration_writes_and_port_changes(pki: Path) -> None:
    tls = TlsConfig(
        cert=pki / "server.pem",
        key=pki / "server.key",
        cacert=pki / "ca.pem",
        with_client_auth=True,
    )
    policy = AccessPolicy(controllers=frozenset({"ctl"}))
    server, address, ports = start(tls=tls, policy=policy)
    try:
        with P4RuntimeClient(address, tls=_client_tls(pki, "ctl"), election_id=5) as ctl:
            ctl.set_pipeline_from_program(PROGRAM)
            entry = ctl.table_entry(
                TABLE, {"hdr.ethernet.dst": 9}, "DemoIngress.forward", {"port": 2}
            )
            ctl.insert(entry)
            with pytest.raises(ClientError, match="client 'intruder' may not arbitrate"):
                P4RuntimeClient(address, tls=_client_tls(pki, "intruder"), election_id=9).connect()
            # The primary's election id is no secret: a Write carrying it from another
            # identity is still refused.
            request = p4r.WriteRequest(device_id=0)
            request.election_id.low = 5
            request.updates.add(type=p4r.Update.DELETE, entity=entry)

            with open_channel(address, _client_tls(pki, "intruder")) as channel:
                with pytest.raises(grpc.RpcError) as caught:
                    p4r_grpc.P4RuntimeStub(channel).Write(request, timeout=10)
                assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
                assert "may not write" in caught.value.details()
            assert len(ctl.read(ctl.table_entry(TABLE, {}))) == 1
            # Reads stay open to any authenticated client.
            with PortClient(address, tls=_client_tls(pki, "intruder")) as intruder_ports:
                assert intruder_ports.ports() == {"1": True, "2": True}
                with pytest.raises(ClientError, match="may not change port state"):
                    intruder_ports.set_port(1, False)
            with PortClient(address, tls=_client_tls(pki, "ctl")) as ctl_ports:
                ctl_ports.set_port(1, False)
            assert ports.up == {1: False, 2: True}
    finally:
        server.stop(None)


def test_role_policy_refuses_other_roles() -> None:
    server, address, _ = start(policy=AccessPolicy(roles=frozenset({"", "ctl"})))
    try:
        with P4RuntimeClient(address, role="ctl") as client:
            assert client.is_primary
        with pytest.raises(ClientError, match="role 'other' is not allowed"):
            P4RuntimeClient(address, role="other").connect()
    finally:
        server.stop(None)


# --------------------------------------------------------------------------- command line


def test_tls_and_policy_options_follow_bmv2_names(tmp_path: Path) -> None:
    for name in ("c.pem", "k.pem", "ca.pem"):
        (tmp_path / name).write_text("-----BEGIN X-----\n")
    options = parse_options(
        ["--no-p4", "--", "--grpc-server-ssl",
         "--grpc-server-cert", str(tmp_path / "c.pem"), "--grpc-server-key", str(tmp_path / "k.pem"),
         "--grpc-server-cacert", str(tmp_path / "ca.pem"), "--grpc-server-with-client-auth",
         "--p4rt-controllers", "ctl,ops", "--p4rt-roles", ",ctl", "--max-grpc-message-size", "1024"]
    )  # fmt: skip
    assert options.tls == TlsConfig(
        tmp_path / "c.pem", tmp_path / "k.pem", tmp_path / "ca.pem", with_client_auth=True
    )
    assert options.policy == AccessPolicy(
        roles=frozenset({"", "ctl"}), controllers=frozenset({"ctl", "ops"})
    )
    assert options.max_message_bytes == 1024
    default = parse_options(["--no-p4"])
    assert default.tls is None and default.policy == AccessPolicy()
    assert default.max_message_bytes == 256 * 1024 * 1024


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--grpc-server-cert", "x.pem"], "--grpc-server-cert needs --grpc-server-ssl"),
        (["--grpc-server-ssl"], "--grpc-server-ssl needs --grpc-server-cert"),
        (
            ["--grpc-server-ssl", "--grpc-server-cert", "/nonexistent/c.pem",
             "--grpc-server-key", "/nonexistent/k.pem"],
            "--grpc-server-cert /nonexistent/c.pem: no such file",
        ),
        (
            ["--grpc-server-ssl", "--grpc-server-cert", "c", "--grpc-server-key", "k",
             "--grpc-server-with-client-auth"],
            "needs --grpc-server-cacert",
        ),
        (["--p4rt-controllers", "ctl"], "--p4rt-controllers names client certificates"),
        (["--max-grpc-message-size", "0"], "must be a positive integer"),
    ],
)  # fmt: skip
def test_bad_tls_and_policy_options_are_one_line_errors(args: list[str], message: str) -> None:
    with pytest.raises(OptionsError, match=message.replace("(", r"\(")):
        parse_options(["--no-p4", "--", *args])


def test_unreadable_or_non_pem_tls_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "cert.pem").write_text("not a certificate\n")
    with pytest.raises(ServerError, match=r"--grpc-server-key .*key.pem: No such file"):
        TlsConfig(cert=tmp_path / "cert.pem", key=tmp_path / "key.pem").server_credentials()
    (tmp_path / "key.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    with pytest.raises(ServerError, match=r"--grpc-server-cert .*cert.pem: not a PEM file"):
        TlsConfig(cert=tmp_path / "cert.pem", key=tmp_path / "key.pem").server_credentials()
