"""testbed.portctl's pure parts (the channels themselves are exercised by the local, Mininet
and BMv2 integration tests)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testbed.exceptions import PortControlError
from testbed.portctl import Bmv2Session, gnmi_set_ports, parse_show_ports

SHOW_PORTS = """\
Obtaining JSON from switch...
Done
Control utility for runtime P4 table manipulation
RuntimeCmd:   port #        iface name        status   extra info
==================================================
    1          p0-t0-0-eth1         UP
    3          p0-t0-0-eth3        DOWN
RuntimeCmd:
"""


def test_show_ports_lists_attached_ports_and_their_status() -> None:
    assert parse_show_ports(SHOW_PORTS) == {1: True, 3: False}
    assert parse_show_ports("RuntimeCmd: \n") == {}


def test_gnmi_errors_name_the_switch_address() -> None:
    with pytest.raises(PortControlError, match=r"127.0.0.1:1: gNMI Set failed: UNAVAILABLE"):
        gnmi_set_ports("127.0.0.1:1", [1], False, timeout=2.0)


FAKE_CLI = """\
import os, sys, time
time.sleep(float(os.environ.get("FAKE_CLI_START_S", "0")))
print("Obtaining JSON from switch...")
print("Done")
while True:
    try:
        line = input("RuntimeCmd: ")
    except EOFError:
        break
    if line.startswith("port_remove 9"):
        print("Invalid device manager operation (ERROR)")
    elif line == "show_ports":
        print("  port #   iface name   status  extra info")
        print("    1        s-eth1         UP")
    elif line == "exit":
        sys.exit(0)
    elif line == "hang":
        import time
        time.sleep(30)
    else:
        print("ok " + line)
"""


def _fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "simple_switch_CLI"
    script.write_text("#\n" + FAKE_CLI)
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")


def test_a_kept_cli_answers_each_command_and_names_a_failing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_cli(tmp_path, monkeypatch)
    session = Bmv2Session(9090)
    try:
        assert session.run("port_add x 1\nshow_ports\n").splitlines()[0::2] == [
            "ok port_add x 1",
            "    1        s-eth1         UP",
        ]
        session.set_ports({3: "s-eth3", 1: "s-eth1"}, up=False)  # no error: nothing raised
        with pytest.raises(PortControlError, match=r"--thrift-port 9090: port_remove 9: Invalid"):
            session.run("port_remove 9\nshow_ports\n")  # every line runs, then the error
        session.set_ports({9: "s-eth9"}, up=False)  # refused, but 9 is not attached: done
        with pytest.raises(PortControlError, match="port_remove 9: Invalid"):
            # refused, and port 1 is still attached (the fake's show_ports): an error
            session.set_ports({9: "s-eth9", 1: "s-eth1"}, up=False)
        with pytest.raises(PortControlError, match="--thrift-port 9090 exited"):
            session.run("exit")
    finally:
        session.close()


def test_a_kept_cli_that_stops_answering_is_reported_in_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_cli(tmp_path, monkeypatch)
    session = Bmv2Session(9091, timeout=1.0)
    try:
        with pytest.raises(PortControlError, match="--thrift-port 9091 did not answer within 1 s"):
            session.run("hang")
    finally:
        session.close()
    assert session.proc.poll() is not None  # closed: nothing left running


def test_a_kept_cli_may_take_longer_to_start_than_a_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_cli(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_CLI_START_S", "1.5")
    session = Bmv2Session(9092, timeout=1.0)  # starts in 1.5 s: within the start timeout
    try:
        assert session.run("port_add x 1\n").startswith("ok port_add x 1")
        with pytest.raises(PortControlError, match="9092 did not answer within 1 s"):
            session.run("hang")
    finally:
        session.close()
    with pytest.raises(PortControlError, match=r"9093 did not answer within 0\.5 s"):
        Bmv2Session(9093, start_timeout=0.5)


def test_a_kept_cli_works_in_a_process_holding_over_1024_descriptors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """scripts/verdicts-doc runs many Mininet fabrics in one process: its descriptors may be
    numbered above select()'s 1024 (it stopped there at port-flap: "filedescriptor out of
    range in select()")."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the hard limit of open files here is {hard}: cannot hold 1,100")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    _fake_cli(tmp_path, monkeypatch)
    try:
        session = Bmv2Session(9094)
        try:
            assert session.proc.stdout is not None and session.proc.stdout.fileno() > 1024
            assert session.run("port_add x 1\n").startswith("ok port_add x 1")
        finally:
            session.close()
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
