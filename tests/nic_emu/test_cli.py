"""``nic-emu`` command line: argument checks, progress display and the final summary."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from nic_emu import cli
from nic_emu.exceptions import ControlError


def report(**changes: Any) -> dict[str, Any]:
    base = {
        "id": 4,
        "done": True,
        "failed": None,
        "to": "nic3",
        "mode": "mrc",
        "connections": 2,
        "bytes_total": 1000,
        "bytes_acked": 1000,
        "progress": 1.0,
        "elapsed_s": 0.5,
        "goodput_gbps": 0.000016,
        "retransmissions": 3,
        "nacks": 1,
        "per_plane_bytes": {"0": 750, "1": 250},
        "repath_events": [
            {"ev": 1, "plane": 0, "repath_time_us": 10.0},
            {"ev": 2, "plane": 0, "repath_time_us": 30.0},
        ],
        "sha256": "ab" * 32,
    }
    return {**base, **changes}


SEND = ["send", "--to", "nic3", "--via", "x.sock"]


@pytest.mark.parametrize(
    ("text", "value"),
    [("4096", 4096), ("64K", 65536), ("16M", 16 << 20), ("1G", 1 << 30), ("2MiB", 2 << 20)],
)
def test_byte_counts(text: str, value: int) -> None:
    assert cli.build_parser().parse_args([*SEND, "--bytes", text]).bytes == value


@pytest.mark.parametrize(
    ("option", "text", "complaint"),
    [
        ("--bytes", "x", "is not a byte count"),
        ("--bytes", "0", "at least 1"),
        ("--bytes", "3T", "is not a byte count"),
        ("--connections", "0", "0"),
        ("--connections", "two", "expected an integer"),
        ("--seed", "-1", "-1"),
        ("--timeout", "0", "0"),
        ("--deadline", "soon", "expected a number"),
        ("--data", "zeros", "unknown data source 'zeros'"),
        ("--data", "pattern:xyz", "pattern:HEX needs hexadecimal bytes"),
        ("--data", "random:x", "random:SEED needs a non-negative integer seed"),
    ],
)
def test_bad_send_options_exit_2_naming_the_option(
    option: str, text: str, complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*SEND, "--bytes", "10", option, text] if option != "--bytes" else [*SEND, option, text]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and option in err and complaint in err


def test_data_sources_parse_and_a_relative_file_becomes_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parse = cli.build_parser().parse_args
    assert parse([*SEND, "--bytes", "10"]).data == "random"
    assert parse([*SEND, "--bytes", "10", "--data", "pattern:00ff"]).data == "pattern:00ff"
    monkeypatch.chdir(tmp_path)
    got = parse([*SEND, "--bytes", "10", "--data", "file:sub/data.bin"]).data
    assert got == f"file:{tmp_path}/sub/data.bin"


def test_usage_errors_exit_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["send", "--to", "nic3", "--bytes", "10"]) == 2  # clikit.run_main
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--via" in err


def test_summary_names_everything() -> None:
    text = cli.summary(report())
    assert "transfer 4 to nic3 done: 1,000 of 1,000 bytes acknowledged in 0.500 s" in text
    assert "retransmissions: 3, NACKs: 1" in text
    assert "plane 0: 75.0%  plane 1: 25.0%" in text
    assert "repath events: 2 (median 20.0 us, max 30.0 us)" in text
    assert "ab" * 32 in text
    assert "repath events: none" in cli.summary(report(repath_events=[]))
    assert "FAILED" in cli.summary(report(failed="gone"))


class StubClient:
    def __init__(self, reports: list[dict[str, Any]]) -> None:
        self.reports = reports

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        assert op == "transfer" and fields == {"id": 4}
        return self.reports.pop(0)


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_follow_draws_a_bar_on_a_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "POLL_S", 0)
    reports = [report(done=False, progress=0.5, bytes_acked=500), report()]
    out = Tty()
    assert cli.follow(StubClient(reports), 4, 60, out)["done"]  # type: ignore[arg-type]
    text = out.getvalue()
    assert text.startswith("\r[" + "#" * 15 + "." * 15 + "]  50.0%") and text.endswith("\n")
    assert text.count("\r") == 2


def test_follow_prints_plain_lines_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "POLL_S", 0)
    reports = [report(done=False, progress=0.0, bytes_acked=0)] * 3 + [report()]
    out = io.StringIO()
    cli.follow(StubClient(list(reports)), 4, 60, out)  # type: ignore[arg-type]
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("progress 0.0%: 0 of 1,000 bytes")
    assert lines[-1].startswith("progress 100.0%: 1,000 of 1,000 bytes")
    assert "\r" not in out.getvalue()


def test_follow_gives_up_after_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "POLL_S", 0)
    stuck = [report(done=False, progress=0.1, bytes_acked=100)] * 1000
    with pytest.raises(ControlError, match="not done after 0 s"):
        cli.follow(StubClient(stuck), 4, 0, io.StringIO())  # type: ignore[arg-type]


def test_send_to_a_dead_socket_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["send", "--to", "nic3", "--bytes", "10", "--via", str(tmp_path / "x.sock")])
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("nic-emu send: no control socket at") and err.count("\n") == 1
