"""mrc-controller: commands, output and exit codes (never a traceback)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cli import EXIT_DIFFERENCES, EXIT_OK, EXIT_SWITCH_FAILED, EXIT_USAGE, main


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def endpoints_file(fabric, tmp_path: Path) -> Path:
    path = tmp_path / "endpoints.yaml"
    path.write_text("".join(f"{n}: {e.address}\n" for n, e in fabric.endpoints.items()))
    return path


def test_plan_text() -> None:
    code, out, err = run("plan", "tiny")
    assert code == EXIT_OK and err == ""
    assert out.startswith(
        "# tiny: 8 switches, 128 entries (120 table entries + 8 default actions); "
        "uSID block fcbb:bb00::/32"
    )
    assert "p1-t1-0  T1 plane 1  uSID 0x1800  fcbb:bb00:1800::" in out
    assert "usid_route usid=0x0800 -> forward(port=3)  # p0-t1-0; port 3 -> p0-t1-0:1" in out
    assert "my_usid dst_prefix=fcbb:bb00:0400 -> usid_un()" in out
    assert "ipv6_route dst_addr=ff02::/16 -> to_cpu()" in out


def test_plan_json(tmp_path: Path) -> None:
    code, out, _ = run("plan", "tiny", "--json", "--link-down", "p0-t0-0,p0-t1-0")
    assert code == EXIT_OK
    document = json.loads(out)
    assert document["entry_count"] == 130 and document["switch_count"] == 8
    assert document["down_links"] == [["p0-t0-0", "p0-t1-0"]]
    first = document["switches"][0]
    assert first["name"] == "p0-t0-0" and first["usid"] == 0x0400
    assert first["entries"][0] == {
        "table": "MrcIngress.switch_config",
        "match": {},
        "action": "MrcIngress.set_switch_config",
        "params": {
            "plane_id": 0,
            "control_priority": 7,
            "punt_end_of_carrier": 1,
            "punt_no_route": 0,
            "punt_hop_limit": 0,
            "punt_non_ipv6": 0,
        },
        "default": True,
    }
    lpm = next(e for e in first["entries"] if e["table"] == "MrcIngress.ipv6_route")
    assert lpm["match"]["dst_addr"] == {"value": 0xFF02 << 112, "prefix_len": 16}
    target = tmp_path / "plan.json"
    assert run("plan", "tiny", "--json", "-o", str(target))[0] == EXIT_OK
    assert json.loads(target.read_text())["entry_count"] == 128


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plan", "nope"], "nope"),
        (["plan", "tiny", "--switch", "p7-t0-0"], "p7-t0-0"),
        (["plan", "tiny", "--link-down", "p0-t0-0"], "expected two node names"),
        (["plan", "tiny", "--control-priority", "9"], "control priority 9"),
        (["plan", "tiny", "--cpu-prefix", "ff02::1/16"], "--cpu-prefix"),
        (["plan", "tiny", "--queue-packets", "2"], "queue depth 2"),
        (["plan", "tiny", "--bogus"], "unrecognized arguments: --bogus"),
        (["plan"], "the following arguments are required: TOPO"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["push", "tiny", "--batch-size", "0"], "must be a positive integer"),
        (["show", "p0-t0-0"], "needs -t TOPO or --endpoints FILE"),
        (["show", "p9-t0-0", "-t", "tiny"], "no switch 'p9-t0-0'"),
        (["plan", "tiny", "-o", "/nonexistent/dir/x"], "cannot write"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(argv: list[str], message: str) -> None:
    code, _, err = run(*argv)
    assert code == EXIT_USAGE
    assert message in err and "Traceback" not in err
    assert err.startswith("mrc-controller: ")


def test_bmv2_without_p4c_or_files(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    code, _, err = run("push", "tiny", "--target", "bmv2")
    assert code == EXIT_USAGE
    assert "p4c is not on PATH" in err and "--bmv2-json FILE --p4info FILE" in err


def test_push_diff_show_cycle(fabric, endpoints_file: Path) -> None:
    ep = ["--endpoints", str(endpoints_file), "--timeout", "10"]
    code, out, _ = run("diff", "tiny", *ep)
    assert code == EXIT_DIFFERENCES
    assert "p0-t0-0: 19 changes (+18 ~1 -0) (no pipeline: push would install it)" in out
    assert "8 of 8 switches differ from the plan, 0 could not be read" in out

    code, out, err = run("push", "tiny", *ep, "--verify")
    assert code == EXIT_OK, out + err
    assert "[1/8]" in err and "read-back verified" in err
    assert "pushed 8 switches in" in out
    # The same 128 as plan counts; a fresh switch takes the 8 default actions as modifies.
    assert (
        "8 ok, 0 failed; 128 entries planned (as in 'plan'), written +120 inserted "
        "~8 modified -0 deleted, 8 pipelines set"
    ) in out

    code, out, err = run("push", "tiny", *ep, "--json")
    assert code == EXIT_OK
    document = json.loads(out)
    assert document["inserted"] == 0 and document["pipelines_set"] == 0
    assert {s["pipeline"] for s in document["switches"]} == {"same"}

    code, out, _ = run("diff", "tiny", *ep)
    assert code == EXIT_OK and "p1-t1-1: in sync" in out

    address = fabric.endpoints["p0-t0-0"].address
    code, out, _ = run("show", address, "--counters")
    assert code == EXIT_OK
    assert f"{address} at {address}: pipeline cookie 0x" in out
    assert "  usid_route: 4 entries" in out
    assert "    usid_route usid=0xe001 -> forward(port=2)" in out
    assert "    switch_config (default) -> set_switch_config(plane_id=0" in out
    assert "forwarded[3]: 1 packets, 100 bytes" in out

    code, out, _ = run("show", "p0-t1-0", "--endpoints", str(endpoints_file))
    assert code == EXIT_OK and out.startswith("p0-t1-0 at 127.0.0.1:")


def test_failures_exit_3_with_details(fabric, endpoints_file: Path) -> None:
    fabric["p1-t1-0"].stop()
    fabric["p0-t1-1"].device.fail_tables = {"MrcIngress.usid_route"}
    code, out, err = run("push", "tiny", "--endpoints", str(endpoints_file), "--timeout", "10")
    assert code == EXIT_SWITCH_FAILED
    assert "p1-t1-0      FAILED  unreachable: no P4Runtime server at 127.0.0.1:" in out
    assert "p0-t1-1      FAILED  write: 2 of 13 updates failed (11 applied)" in out
    assert "    INSERT usid_route usid=0x0400 -> forward(port=1): INVALID_ARGUMENT:" in out
    assert "6 ok, 2 failed" in out

    code, out, _ = run("diff", "tiny", "--endpoints", str(endpoints_file), "--timeout", "10")
    assert code == EXIT_SWITCH_FAILED
    assert "p1-t1-0: cannot diff: unreachable:" in out

    address = fabric.endpoints["p1-t1-0"].address
    code, _, err = run("show", address, "--timeout", "10")
    assert code == EXIT_SWITCH_FAILED and "no P4Runtime server at" in err


def test_show_without_pipeline(fabric) -> None:
    code, _, err = run("show", fabric.endpoints["p0-t0-0"].address)
    assert code == EXIT_SWITCH_FAILED and "has no pipeline (nothing programmed yet)" in err


def test_watch_for_a_while(fabric, endpoints_file: Path) -> None:
    code, out, _ = run(
        "watch", "tiny", "--endpoints", str(endpoints_file), "--duration", "6", "--interval", "0.2"
    )
    assert code == EXIT_OK
    assert "watching 8 switches of tiny" in out
    assert "p0-t0-0      programmed" in out
    assert "stopped; " in out
    assert all(sw.device.pipeline_sets == 1 for sw in fabric.switches.values())


def test_module_entry_point() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "controller", "plan", "tiny", "--switch", "p0-t1-0"],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 0, result.stderr
    assert "p0-t1-0  T1 plane 0" in result.stdout


def test_progress_lines_for_big_pushes() -> None:
    from controller.cli import Progress
    from controller.reconcile import SwitchReport

    stream = io.StringIO()
    progress = Progress(stream, 100, quiet=False, verb="pushed")
    for done in range(1, 101):
        report = SwitchReport(f"s{done}", "h:1", inserted=3)
        if done == 50:
            report.status, report.error_kind, report.error = "failed", "unreachable", "gone"
        progress(report, done, 100)
    lines = stream.getvalue().splitlines()
    assert any("FAILED  unreachable: gone" in line for line in lines)
    assert lines[-1].startswith("pushed 100/100 switches, 1 failed, 300 updates")
    assert not any(line.startswith("[  1/100]") for line in lines)  # no per-switch lines

    small = io.StringIO()
    progress = Progress(small, 2, quiet=False, verb="pushed")
    progress(SwitchReport("a", "h:1", pipeline="same"), 1, 2)
    assert small.getvalue() == "[1/2] a            ok      unchanged in 0.00 s\n"
    quiet = io.StringIO()
    Progress(quiet, 2, quiet=True, verb="pushed")(SwitchReport("a", "h:1"), 1, 2)
    assert quiet.getvalue() == ""
