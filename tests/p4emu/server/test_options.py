from __future__ import annotations

from pathlib import Path

import pytest

from p4emu.server.exceptions import OptionsError
from p4emu.server.options import parse_options


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "prog.p4"
    path.write_text("// empty\n")
    return path


def test_simple_switch_grpc_style_command_line(program: Path, tmp_path: Path) -> None:
    options = parse_options(
        [
            "--device-id", "3", "-i", "1@veth1", "-i", "2@udp:40001/40002",
            "--log-console", "-L", "debug", "--pcap", str(tmp_path), "--thrift-port", "9090",
            str(program), "--", "--grpc-server-addr", "127.0.0.1:50051", "--cpu-port", "510",
            "--priority-queues", "8",
        ]
    )  # fmt: skip
    assert options.device_id == 3
    assert [(i.port, i.interface, i.udp_local) for i in options.interfaces] == [
        (1, "veth1", None),
        (2, None, ("127.0.0.1", 40001)),
    ]
    assert (options.cpu_port, options.priority_queues, options.drop_port) == (510, 8, 511)
    assert options.grpc_address == "127.0.0.1:50051"
    assert options.log_level == "debug" and options.log_console
    assert options.pcap_dir == tmp_path
    assert options.ignored == ("--thrift-port",)
    assert options.program == program


def test_defaults_bind_loopback_only() -> None:
    options = parse_options(["--no-p4"])
    assert options.program is None
    assert options.grpc_address == "127.0.0.1:9559"
    assert (options.queue_depth, options.queue_rate_pps, options.priority_queues) == (64, None, 1)


def test_ipv6_grpc_address(program: Path) -> None:
    options = parse_options([str(program), "--", "--grpc-server-addr", "[::1]:9600"])
    assert (options.grpc_host, options.grpc_port, options.grpc_address) == (
        "::1",
        9600,
        "[::1]:9600",
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--no-p4", "--bogus"], "unrecognized arguments: --bogus"),
        (["--no-p4", "--", "--bogus-target"], "unrecognized arguments: --bogus-target"),
        ([], "a PROGRAM.p4 \\(or --no-p4\\) is required"),
        (["/nonexistent/x.p4"], "program file /nonexistent/x.p4 does not exist"),
        (["prog.json"], "BMv2 JSON"),
        (["--no-p4", "-i", "1"], "expected PORT@IFACE"),
        (["--no-p4", "-i", "1@a", "-i", "1@b"], "port 1 is given twice"),
        (["--no-p4", "--cpu-port", "600"], "outside 0..511"),
        (["--no-p4", "--cpu-port", "5", "-i", "5@veth0"], "port 5 is the CPU port"),
        (["--no-p4", "--queue-depth", "0"], "must be a positive integer"),
        (["--no-p4", "--", "--grpc-server-addr", "nohost"], "expected HOST:PORT"),
        (["--no-p4", "--", "--grpc-server-addr", "example.com:1"], "not an IP address"),
        (["--no-p4", "--", "--grpc-server-addr", "1.2.3.4:99999"], "out of range"),
    ],
)
def test_bad_command_lines_are_specific(argv: list[str], message: str) -> None:
    with pytest.raises(OptionsError, match=message):
        parse_options(argv)


def test_program_and_no_p4_conflict(program: Path) -> None:
    with pytest.raises(OptionsError, match=r"either --no-p4 or a PROGRAM\.p4"):
        parse_options(["--no-p4", str(program)])


def test_link_delays_per_port(program: Path) -> None:
    options = parse_options(
        [
            "-i",
            "1@veth1",
            "-i",
            "2@veth2",
            "--link-delay-us",
            "1=5.5",
            "--link-delay-us",
            "2=0",
            str(program),
        ]
    )
    assert options.link_delays_us == {1: 5.5, 2: 0.0}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1", "expected PORT=MICROSECONDS"),
        ("1=inf", "finite number >= 0"),
        ("x=1", "expected PORT=MICROSECONDS"),
        ("1=-2", "finite number >= 0"),
        ("1=nan", "finite number >= 0"),
        ("3=1", "port 3 has no -i interface"),
    ],
)
def test_bad_link_delays(value: str, message: str) -> None:
    with pytest.raises(OptionsError, match=message):
        parse_options(["--no-p4", "-i", "1@veth1", "--link-delay-us", value])


def test_link_delay_given_twice() -> None:
    with pytest.raises(OptionsError, match="port 1 is given twice"):
        parse_options(
            ["--no-p4", "-i", "1@veth1", "--link-delay-us", "1=1", "--link-delay-us", "1=2"]
        )


def test_port_queue_rates(program: Path) -> None:
    options = parse_options(
        [
            "-i",
            "1@veth1",
            "-i",
            "2@veth2",
            "--queue-rate",
            "1000",
            "--port-queue-rate",
            "2=50000",
            str(program),
        ]
    )
    assert (options.queue_rate_pps, options.port_queue_rates_pps) == (1000.0, {2: 50000.0})
    for bad, message in (
        ("2=0", "finite number > 0"),
        ("9=5", "port 9 has no -i"),
        ("2", "expected PORT=PACKETS_PER_SECOND"),
    ):
        with pytest.raises(OptionsError, match=message):
            parse_options(["-i", "2@veth2", "--port-queue-rate", bad, str(program)])


def test_help_lists_the_target_tls_and_policy_flags(capsys: pytest.CaptureFixture[str]) -> None:
    from p4emu.server.main import main

    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    for flag in (
        "--no-p4",
        "--grpc-server-addr",
        "--grpc-server-ssl",
        "--grpc-server-cert",
        "--grpc-server-key",
        "--grpc-server-cacert",
        "--grpc-server-with-client-auth",
        "--p4rt-roles",
        "--p4rt-controllers",
        "--max-grpc-message-size",
    ):
        assert flag in text, flag
    assert "default 127.0.0.1:9559" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--no-p4", "--cpu-port", "x"], "argument --cpu-port: expected an integer, got 'x'"),
        (["--no-p4", "--device-id", "-1"], "argument --device-id: must be >= 0, got -1"),
        (["--no-p4", "--queue-rate", "0"], "argument --queue-rate: must be positive, got 0"),
        (["--no-p4", "--", "--grpc-server-ssl"], "--grpc-server-ssl needs --grpc-server-cert"),
    ],
)
def test_bad_command_lines_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from p4emu.server.main import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("p4emu-switch: ") and message in err
    assert "Traceback" not in err
