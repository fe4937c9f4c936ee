"""``nic-emu serve`` configuration checks: every bad input names its key (exit 2)."""

from __future__ import annotations

import copy
import json
import socket
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

import pytest

from nic_emu.cli import main
from nic_emu.config import CcConfig, DcqcnConfig, NicConfig, RoceConfig, TransportMode
from nic_emu.exceptions import ConfigError, ServeConfigError
from nic_emu.serve_config import (
    DATA_FRAME_OVERHEAD,
    DILATED_CC_TIME_FIELDS,
    DILATED_DCQCN_RATE_FIELDS,
    DILATED_DCQCN_TIME_FIELDS,
    DILATED_EXPONENT_FIELDS,
    DILATED_RATE_FIELDS,
    DILATED_ROCE_EXPONENT_FIELDS,
    DILATED_TIME_FIELDS,
    PROCESS_TRANSPORT_DEFAULTS,
    AfPacketPortSpec,
    UdpPortSpec,
    check_tdf,
    dilate_transport,
    load_serve_config,
    parse_serve_config,
    transport_config,
    transport_overrides,
)

from .serve_helpers import free_udp_ports, nic_config


@pytest.fixture
def good(tmp_path: Path) -> dict[str, Any]:
    ports = free_udp_ports(4)
    return nic_config(tmp_path, "nic0", {0: (ports[0], ports[1]), 1: (ports[2], ports[3])})


def problem(config: object) -> ServeConfigError:
    with pytest.raises(ServeConfigError) as info:
        parse_serve_config(config)
    assert "\n" not in str(info.value)
    return info.value


def edited(config: dict[str, Any], path: str, value: object) -> dict[str, Any]:
    """A copy with ``path`` (dotted) set to ``value``; ``...`` as value deletes it."""
    out = copy.deepcopy(config)
    *parents, last = path.split(".")
    node = out
    for key in parents:
        node = node[key]
    if value is ...:
        del node[last]
    else:
        node[last] = value
    return out


def test_a_good_config_parses_with_process_defaults_and_overrides(good: dict[str, Any]) -> None:
    config = parse_serve_config(good)
    assert config.nic == "nic0" and config.topology.name == "tiny"
    assert isinstance(config.ports[0], UdpPortSpec) and config.ports[0].local[0] == "127.0.0.1"
    assert config.transport.evs_per_connection == 16
    assert config.transport.ack_timeout_exp == PROCESS_TRANSPORT_DEFAULTS["ack_timeout_exp"]
    assert config.transport.ack_timeout_exp != NicConfig().ack_timeout_exp
    assert config.seed == 1


def test_transport_understands_mode_cc_floats_and_bools(good: dict[str, Any]) -> None:
    config = parse_serve_config(
        edited(
            good,
            "transport",
            {"mode": "roce", "cc": {"gamma": 0.5, "enabled": False}, "trace_packets": True},
        )
    )
    assert config.transport.mode is TransportMode.ROCE
    assert config.transport.cc.gamma == 0.5 and not config.transport.cc.enabled
    # cc overrides start from the process's cc defaults, not the hardware ones
    assert config.transport.cc.clear_delay_ns == PROCESS_TRANSPORT_DEFAULTS["cc"].clear_delay_ns
    assert config.transport.trace_packets


def test_transport_takes_the_roce_baseline_settings(good: dict[str, Any]) -> None:
    config = parse_serve_config(
        edited(
            good,
            "transport",
            {"roce": {"ack_timeout_exp": 12, "retry_count": 3, "dcqcn": {"enabled": False}}},
        )
    )
    roce = config.transport.roce
    assert (roce.ack_timeout_exp, roce.retry_count, roce.dcqcn.enabled) == (12, 3, False)


def test_ports_take_an_optional_delay_us(good: dict[str, Any]) -> None:
    assert parse_serve_config(good).ports[0].delay_us == 0.0  # default: no delay
    config = parse_serve_config(edited(good, "ports.0.delay_us", 2))
    assert config.ports[0].delay_us == 2.0 and config.ports[1].delay_us == 0.0
    afpacket = edited(good, "ports.1", {"driver": "afpacket", "interface": "v0", "delay_us": 5.5})
    assert parse_serve_config(afpacket).ports[1] == AfPacketPortSpec(1, "v0", 5.5)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (-1, "must be a finite number of microseconds >= 0"),
        (float("inf"), "finite"),
        (float("nan"), "finite"),
        ("2", "must be a number of microseconds"),
        (True, "must be a number of microseconds"),
        (None, "must be a number of microseconds"),
    ],
)
def test_a_bad_delay_us_is_named(good: dict[str, Any], value: object, words: str) -> None:
    error = problem(edited(good, "ports.0.delay_us", value))
    assert error.key == "ports.0.delay_us" and words in str(error)


def test_a_misspelt_delay_is_an_unknown_key_with_a_suggestion(good: dict[str, Any]) -> None:
    error = problem(edited(good, "ports.0.delay", 2))
    assert error.key == "ports.0.delay" and "did you mean 'delay_us'" in str(error)


def test_cli_names_a_bad_delay_us(
    good: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = run_serve(tmp_path, edited(good, "ports.1.delay_us", -0.5), capsys)
    assert "ports.1.delay_us" in err


def test_afpacket_port_spec(good: dict[str, Any]) -> None:
    config = parse_serve_config(edited(good, "ports.1", {"driver": "afpacket", "interface": "v1"}))
    assert config.ports[1] == AfPacketPortSpec(1, "v1")
    assert config.max_data_frame == DATA_FRAME_OVERHEAD + 4096


@pytest.mark.parametrize("key", ["nic", "topology", "ports", "control", "events"])
def test_missing_field_is_named(good: dict[str, Any], key: str) -> None:
    error = problem(edited(good, key, ...))
    assert error.key == key and "missing field" in str(error)


def test_unknown_key_is_named_with_a_suggestion(good: dict[str, Any]) -> None:
    error = problem(edited(good, "tranport", {}))
    assert error.key == "tranport" and "did you mean 'transport'" in str(error)


def test_not_an_object() -> None:
    assert problem([1, 2]).key == "config"


def test_nic_not_in_topology(good: dict[str, Any]) -> None:
    error = problem(edited(good, "nic", "nic9"))
    assert error.key == "nic" and "nic9" in str(error) and "tiny" in str(error)
    assert problem(edited(good, "nic", "p0-t0-0")).key == "nic"


def test_unknown_topology(good: dict[str, Any]) -> None:
    assert problem(edited(good, "topology", "/nonexistent/x.yaml")).key == "topology"


@pytest.mark.parametrize(
    ("path", "value", "key", "words"),
    [
        (
            "ports.2",
            {"driver": "udp", "local": "127.0.0.1:1", "peer": "127.0.0.1:2"},
            "ports.2",
            "out of range",
        ),
        ("ports.x", {"driver": "udp"}, "ports.x", "plane number"),
        ("ports.0.driver", "tap", "ports.0.driver", "unknown driver"),
        ("ports.0.driver", ..., "ports.0.driver", "missing field"),
        ("ports.0.peer", ..., "ports.0.peer", "missing field"),
        ("ports.0.speed", 10, "ports.0.speed", "unknown key"),
        ("ports.0.local", "localhost:80", "ports.0.local", "IPV4-ADDRESS:PORT"),
        ("ports.0.local", "127.0.0.1:70000", "ports.0.local", "UDP port"),
        ("ports.0.peer", 4000, "ports.0.peer", "HOST:PORT"),
        ("ports", {}, "ports", "at least one"),
        ("ports", [1], "ports", "object"),
        (
            "ports.0",
            {"driver": "afpacket", "interface": "has space"},
            "ports.0.interface",
            "interface name",
        ),
    ],
)
def test_bad_ports(good: dict[str, Any], path: str, value: object, key: str, words: str) -> None:
    error = problem(edited(good, path, value))
    assert error.key == key and words in str(error)


@pytest.mark.parametrize(
    ("transport", "key", "words"),
    [
        ({"evs_per_conection": 8}, "transport.evs_per_conection", "did you mean"),
        ({"evs_per_connection": 0}, "transport.evs_per_connection", "> 0"),
        ({"evs_per_connection": "many"}, "transport.evs_per_connection", "integer"),
        ({"evs_per_connection": True}, "transport.evs_per_connection", "integer"),
        ({"evs_per_connection": 1}, "transport.evs_per_connection", "planes"),
        ({"mode": "tcp"}, "transport.mode", "mrc"),
        ({"cc": {"gama": 0.5}}, "transport.cc.gama", "unknown"),
        ({"cc": {"gamma": 2.0}}, "transport.cc.gamma", "(0, 1)"),
        ({"cc": 3}, "transport.cc", "object"),
        ({"trace_packets": 1}, "transport.trace_packets", "true or false"),
        ({"base_rtt_ns": 10**9}, "transport.base_rtt_ns", "probe_interval_ns"),
        ({"roce": 3}, "transport.roce", "object"),
        ({"roce": {"retry": 3}}, "transport.roce.retry", "did you mean"),
        ({"roce": {"retry_count": 9}}, "transport.roce", "0..7"),
        ({"roce": {"dcqcn": {"gg": 1}}}, "transport.roce.dcqcn.gg", "unknown DCQCN"),
        ({"roce": {"dcqcn": {"g": 2.0}}}, "transport.roce.dcqcn", "(0, 1]"),
    ],
)
def test_bad_transport_override(
    good: dict[str, Any], transport: dict[str, Any], key: str, words: str
) -> None:
    error = problem(edited(good, "transport", transport))
    assert error.key == key and words in str(error)


def test_bad_seed_control_and_events(good: dict[str, Any], tmp_path: Path) -> None:
    assert problem(edited(good, "seed", -1)).key == "seed"
    assert problem(edited(good, "seed", "1")).key == "seed"
    assert problem(edited(good, "control", str(tmp_path / ("x" * 120)))).key == "control"
    assert problem(edited(good, "control", "/nonexistent/dir/n.sock")).key == "control"
    assert problem(edited(good, "events", "/nonexistent/dir/e.jsonl")).key == "events"
    assert problem(edited(good, "events", good["control"])).key == "events"
    assert problem(edited(good, "control", "")).key == "control"


def test_load_reports_unreadable_and_non_json_files(tmp_path: Path) -> None:
    with pytest.raises(ServeConfigError, match="cannot read"):
        load_serve_config(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", encoding="utf-8")
    with pytest.raises(ServeConfigError, match="not JSON"):
        load_serve_config(bad)


def run_serve(tmp_path: Path, config: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "nic.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    assert main(["serve", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("nic-emu: config ")
    return err


def test_cli_exits_2_with_one_line_naming_the_key(
    good: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = run_serve(tmp_path, edited(good, "transport", {"evs_per_connection": -3}), capsys)
    assert "transport.evs_per_connection" in err


def test_cli_reports_a_udp_port_in_use(
    good: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    taken.bind(("127.0.0.1", 0))
    try:
        port = taken.getsockname()[1]
        config = edited(good, "ports.1.local", f"127.0.0.1:{port}")
        err = run_serve(tmp_path, config, capsys)
    finally:
        taken.close()
    assert "ports.1.local" in err and "in use" in err
    # nothing is left behind: the plane-0 port was closed again, no socket file
    assert not Path(good["control"]).exists()
    host, _, plane0_port = good["ports"]["0"]["local"].partition(":")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rebind:
        rebind.bind((host, int(plane0_port)))


def test_cli_refuses_a_live_control_socket(
    good: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    live.bind(good["control"])
    live.listen(1)
    try:
        err = run_serve(tmp_path, good, capsys)
    finally:
        live.close()
    assert "control" in err and "in use" in err


def test_cli_refuses_a_control_path_that_is_not_a_socket(
    good: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path(good["control"]).write_text("not a socket", encoding="utf-8")
    err = run_serve(tmp_path, good, capsys)
    assert "control" in err and "not a socket" in err


def test_cli_reports_an_interface_that_does_not_exist(
    good: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = edited(good, "ports.1", {"driver": "afpacket", "interface": "nonexist0"})
    err = run_serve(tmp_path, config, capsys)
    assert "ports.1.interface" in err


# ---------------------------------------------------------------------- time dilation

SCALED = (*DILATED_TIME_FIELDS, *DILATED_RATE_FIELDS, *DILATED_EXPONENT_FIELDS)


def test_every_time_and_rate_setting_is_dilated() -> None:
    """A new timer or rate in NicConfig or CcConfig fails here until it is classified."""
    names = [f.name for f in dataclass_fields(NicConfig)]
    assert {n for n in names if n.endswith("_ns")} == set(DILATED_TIME_FIELDS)
    assert {n for n in names if n.endswith(("_bps", "_gbps"))} == set(DILATED_RATE_FIELDS)
    cc_names = [f.name for f in dataclass_fields(CcConfig)]
    assert {n for n in cc_names if n.endswith("_ns")} == set(DILATED_CC_TIME_FIELDS)
    dcqcn_names = [f.name for f in dataclass_fields(DcqcnConfig)]
    assert {n for n in dcqcn_names if n.endswith("_ns")} == set(DILATED_DCQCN_TIME_FIELDS)
    assert {n for n in dcqcn_names if n.endswith("_bps")} == set(DILATED_DCQCN_RATE_FIELDS)
    roce_names = [f.name for f in dataclass_fields(RoceConfig)]
    assert {n for n in roce_names if n.endswith(("_ns", "_exp"))} == set(
        DILATED_ROCE_EXPONENT_FIELDS
    )


@pytest.mark.parametrize("tdf", [1, 2, 1024, 65536])
def test_dilation_scales_each_setting_by_the_factor(tdf: int) -> None:
    base = NicConfig(evs_per_connection=64, probe_interval_ns=48_000)
    slow = dilate_transport(base, tdf)
    for name in DILATED_TIME_FIELDS:
        assert getattr(slow, name) == getattr(base, name) * tdf, name
    assert slow.port_rate_bps == round(base.port_rate_bps / tdf)
    assert slow.rto_base_ns == base.rto_base_ns * tdf  # 1.024 us x 2^t, t + log2(tdf)
    assert slow.cc.clear_delay_ns == base.cc.clear_delay_ns * tdf
    for f in dataclass_fields(NicConfig):
        if f.name not in SCALED and f.name not in ("cc", "roce"):
            assert getattr(slow, f.name) == getattr(base, f.name), f.name  # counts, ratios
    for f in dataclass_fields(CcConfig):
        if f.name not in DILATED_CC_TIME_FIELDS:
            assert getattr(slow.cc, f.name) == getattr(base.cc, f.name), f.name
    assert slow.roce.ack_timeout_ns == base.roce.ack_timeout_ns * tdf  # 4.096 us x 2^t
    assert slow.roce.retry_count == base.roce.retry_count
    for f in dataclass_fields(DcqcnConfig):
        before, after = getattr(base.roce.dcqcn, f.name), getattr(slow.roce.dcqcn, f.name)
        if f.name in DILATED_DCQCN_TIME_FIELDS:
            assert after == before * tdf, f.name
        elif f.name in DILATED_DCQCN_RATE_FIELDS:
            assert after == max(1, round(before / tdf)), f.name
        else:
            assert after == before, f.name  # gains, counts, byte counter
    # the window (rate x base RTT) is the same number of bytes
    assert slow.port_rate_bps * slow.base_rtt_ns == pytest.approx(
        base.port_rate_bps * base.base_rtt_ns, rel=1e-6
    )


@pytest.mark.parametrize("tdf", [0, 3, 1000, -2, True, 2.0])
def test_a_dilation_factor_must_be_a_power_of_two(tdf: object) -> None:
    with pytest.raises(ConfigError, match="power of two"):
        check_tdf(tdf)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="power of two"):
        dilate_transport(NicConfig(), tdf)  # type: ignore[arg-type]


def test_a_factor_that_pushes_the_rto_exponent_past_mrc_h_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"time-dilation factor 1048576: .*ack_timeout_exp"):
        dilate_transport(NicConfig(), 1 << 20)  # 6 + 20 > 24


def test_a_dilated_configuration_reaches_the_process_whole() -> None:
    """Given as ``transport``, every setting overrides the process defaults, even those
    that only fit together (probe interval vs base RTT)."""
    slow = dilate_transport(NicConfig(evs_per_connection=16), 65536)
    overrides = transport_overrides(slow)
    assert json.loads(json.dumps(overrides)) == overrides
    assert transport_config(overrides) == slow


def test_a_single_bad_override_is_still_blamed_on_its_key() -> None:
    with pytest.raises(ServeConfigError, match=r"transport\.probe_interval_ns"):
        transport_config({"probe_interval_ns": 0})
    with pytest.raises(ServeConfigError, match=r"transport\.cc\.target_qdelay_rtts.*number"):
        transport_config({"cc": {"target_qdelay_rtts": "x"}})
    assert transport_config({"cc": {"target_qdelay_rtts": 0.75}}).cc.target_qdelay_rtts == 0.75
