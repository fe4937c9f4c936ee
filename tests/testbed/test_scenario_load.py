"""The scenario loader: every class of mistake gets an error naming the key path."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from testbed.scenario.exceptions import ScenarioFileError, ScenarioSpecError
from testbed.scenario.load import bundled_names, load, loads
from testbed.scenario.model import IncastEvent
from topologies import load as topology_load
from topologies.events import (
    EvDropEvent,
    FlapEvent,
    LinkDownEvent,
    LossEvent,
    PortDownEvent,
    SwitchDownEvent,
)
from topologies.exceptions import TopologyFileError, TopologySpecError

BASE: dict[str, Any] = {
    "name": "base",
    "topology": "tiny",
    "duration": "2ms",
    "traffic": [{"name": "main", "src": "nic0", "dst": "nic3", "bytes": "1MiB", "messages": 4}],
    "timeline": [
        {"at": "100us", "link_down": ["p0-t0-0", "p0-t1-0"]},
        {"at": "200us", "link_up": ["p0-t0-0", "p0-t1-0"]},
    ],
    "assertions": {"repath_max": "50us", "goodput": [{"event": 0, "min_fraction": 0.8}]},
    "negative_controls": [
        {"name": "probes-off", "description": "no probes", "nic": {"probe_interval_ns": "10s"}}
    ],
}


def scenario_text(change: Callable[[dict[str, Any]], None] | None = None) -> str:
    data = copy.deepcopy(BASE)
    if change is not None:
        change(data)
    return yaml.safe_dump(data, sort_keys=False)


def error_of(change: Callable[[dict[str, Any]], None]) -> str:
    with pytest.raises(ScenarioSpecError) as info:
        loads(scenario_text(change), source="s.yaml")
    return str(info.value)


def test_the_base_scenario_loads() -> None:
    s = loads(scenario_text(), source="s.yaml")
    assert s.name == "base"
    assert s.duration_ns == 2_000_000
    assert [f.name for f in s.flows()] == ["main:nic0->nic3"]
    assert isinstance(s.timeline[0], LinkDownEvent)
    assert s.assertions.repath_max_ns == 50_000
    assert s.negative_controls[0].nic == {"probe_interval_ns": 10_000_000_000}


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change that sets ``a.b[0].c`` style path in the scenario mapping."""

    def change(data: dict[str, Any]) -> None:
        keys: list[Any] = []
        for part in path.replace("]", "").replace("[", ".").split("."):
            keys.append(int(part) if part.isdigit() else part)
        target: Any = data
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return change


def _delete(path: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for key in parents:
            target = target[key]
        del target[last]

    return change


CASES = [
    # (change, expected message)
    (
        _set("timeline[1].at", "soon"),
        "s.yaml: timeline[1].at: expected a time like '150us' or '2ms', got 'soon'",
    ),
    (
        _set("timeline[0].at", 100),
        "timeline[0].at: expected a time like '150us' or '2ms', got 100 (a number needs a unit",
    ),
    (_set("bogus", 1), "bogus: unknown key; allowed here: name"),
    (_set("traffic[0].byts", 1), "traffic[0].byts: unknown key; did you mean 'bytes'?"),
    (_delete("topology"), "topology: missing (required)"),
    (_delete("traffic"), "traffic: missing (required)"),
    (_set("topology", "no-such-topo"), "topology: no-such-topo: no such topology file"),
    (
        _set("topology", {"planes": 2, "t0_per_plane": 2, "t1_per_plane": -1, "nics_per_t0": 1}),
        "t1_per_plane",
    ),
    (
        _set("traffic[0].src", "nic9"),
        "traffic[0].src: 'nic9' is not a NIC of topology tiny (nic0..nic3)",
    ),
    (
        _set("traffic[0].dst", "nic0"),
        "traffic[0].dst: a transfer needs two different NICs, got nic0 twice",
    ),
    (_set("traffic[0].bytes", "lots"), "traffic[0].bytes: expected a size like 65536"),
    (_set("traffic[0].messages", 0), "traffic[0].messages: expected an integer >= 1, got 0"),
    (_set("traffic[0].bytes", 2), "traffic[0].messages: 4 messages cannot split 2 byte(s)"),
    (
        _set("traffic[0].transport", "tcp"),
        "traffic[0].transport: expected one of mrc, roce, got 'tcp'",
    ),
    (
        _set("traffic[0].pattern", "all_to_all"),
        "traffic[0]: give exactly one of 'pairs', 'src'/'dst' or 'pattern' (found src, pattern)",
    ),
    (
        _set("traffic[0]", {"pattern": "ring", "bytes": 1}),
        "traffic[0].pattern: expected one of all_to_all, permutation, incast, got 'ring'",
    ),
    (
        _set("traffic[0]", {"pairs": [["nic0"]], "bytes": 1}),
        "traffic[0].pairs[0]: expected a pair [src, dst], got a list",
    ),
    (
        _set("traffic[0]", {"pairs": [["nic0", "nic1"]], "seed": 3, "bytes": 1}),
        "traffic[0].seed: only used with pattern permutation",
    ),
    (_set("traffic", []), "traffic: must not be empty"),
    (
        _set(
            "traffic",
            [
                {"name": "a", "src": "nic0", "dst": "nic1", "bytes": 1},
                {"name": "a", "src": "nic1", "dst": "nic2", "bytes": 1},
            ],
        ),
        "traffic[1].name: another traffic entry is named 'a'",
    ),
    (
        _set("timeline[0]", {"at": "1us"}),
        "timeline[0]: an event has 'at' and exactly one of link_down",
    ),
    (
        _set(
            "timeline[0]",
            {"at": "1us", "link_down": ["p0-t0-0", "p0-t1-0"], "switch_down": "p0-t1-0"},
        ),
        "(found link_down, switch_down)",
    ),
    (
        _set("timeline[0].link_down", ["p0-t0-0", "p0-t1-9"]),
        "timeline[0].link_down: tiny: no switch named 'p0-t1-9'",
    ),
    (
        _set("timeline[0].link_down", ["p0-t0-0", "p1-t1-0"]),
        "timeline[0].link_down: tiny: there is no link p0-t0-0 -- p1-t1-0",
    ),
    (
        _set("timeline[0].link_down", "p0-t0-0"),
        "timeline[0].link_down: expected a link as [node, node], got 'p0-t0-0'",
    ),
    (
        _set("timeline[0]", {"at": "1us", "switch_down": "p9-t0-0"}),
        "timeline[0].switch_down: 'p9-t0-0' is not a switch of topology tiny",
    ),
    (_set("timeline[0]", {"at": "1us", "switch_down": "nic0"}), "is not a switch of topology tiny"),
    (
        _set("timeline[0]", {"at": "1us", "port_down": {"nic": "nic0", "plane": 2}}),
        "timeline[0].port_down.plane: expected an integer 0..1, got 2",
    ),
    (
        _set("timeline[0]", {"at": "1us", "port_down": "nic0"}),
        "timeline[0].port_down: expected a NIC port as {nic: nic0, plane: 1} or [nic0, 1]",
    ),
    (
        _set("timeline[1].at", "50us"),
        "timeline[1].at: 50 us is before timeline[0].at (100 us); list events in time order",
    ),
    (
        _set("timeline[1].at", "3ms"),
        "timeline[1].at: 3 ms is not before the end of the run (duration 2 ms)",
    ),
    (
        _set(
            "timeline[0]",
            {
                "at": "1us",
                "flap": {
                    "link": ["p0-t0-0", "p0-t1-0"],
                    "period": "10us",
                    "down": "10us",
                    "until": "50us",
                },
            },
        ),
        "timeline[0].flap.down: must be shorter than the period (10 us), got 10 us",
    ),
    (
        _set("timeline[0]", {"at": "1us", "flap": {"period": "10us", "until": "50us"}}),
        "timeline[0].flap: give exactly one of 'link' or 'port' to flap",
    ),
    (
        _set(
            "timeline[0]",
            {
                "at": "60us",
                "flap": {"link": ["p0-t0-0", "p0-t1-0"], "period": "10us", "until": "50us"},
            },
        ),
        "timeline[0].flap.until: 50 us is not after the event's start (60 us)",
    ),
    (
        _set("timeline[0]", {"at": "1us", "loss": {"rate": "150%"}}),
        "timeline[0].loss.rate: expected a fraction like 0.2 or '20%' between 0 and 1, got '150%'",
    ),
    (
        _set("timeline[0]", {"at": "1us", "loss": {"rate": 0}}),
        "timeline[0].loss.rate: a loss rate of 0 does nothing",
    ),
    (
        _set(
            "timeline[0]",
            {"at": "1us", "ev_drop": {"nic": "nic0", "plane": 0, "t1": 5, "fraction": 0.2}},
        ),
        "timeline[0].ev_drop.t1: expected an integer 0..1, got 5",
    ),
    (
        _set("timeline[0]", {"at": "1us", "ev_drop": {"plane": 0, "t1": 0, "fraction": 0.2}}),
        "timeline[0].ev_drop.nic: missing (required)",
    ),
    (
        _set(
            "timeline[0]",
            {"at": "1us", "incast": {"senders": ["nic1", "nic3"], "dst": "nic3", "bytes": 1}},
        ),
        "timeline[0].incast.senders: nic3 is the incast's destination",
    ),
    (
        _set("assertions.goodput[0].event", 7),
        "assertions.goodput[0].event: expected an integer 0..1, got 7",
    ),
    (
        _set("assertions.goodput[0]", {"event": 0}),
        "assertions.goodput[0]: give min_fraction, max_fraction or both",
    ),
    (
        _set("assertions.goodput[0]", {"event": 0, "min_fraction": 0.9, "max_fraction": 0.5}),
        "assertions.goodput[0].max_fraction: is below min_fraction (0.9)",
    ),
    (
        _set("assertions.goodput[0]", {"event": 0, "min_fraction": 0.9, "window": "200us"}),
        "too early for a 'before' window of 200 us; use of: baseline",
    ),
    (
        _set("assertions.goodput[0]", {"event": 0, "min_fraction": 0.9, "of": "yesterday"}),
        "assertions.goodput[0].of: expected one of before, baseline, line_rate",
    ),
    (
        _set("assertions.ev_retired_within", "20us"),
        "assertions.ev_retired_within: needs an ev_drop in the timeline",
    ),
    (
        _set("assertions.traffic_goodput", [{"traffic": "other", "min_fraction": 0.5}]),
        "assertions.traffic_goodput[0].traffic: expected one of main, got 'other'",
    ),
    (_set("assertions.repath_max", "-5us"), "assertions.repath_max: expected a time like"),
    (
        _set("assertions.byte_exact", "yes"),
        "assertions.byte_exact: expected true or false, got 'yes'",
    ),
    (_set("roce", {"roce_slower_by": 2}), "roce.roce_slower_by: belongs under 'assertions'"),
    (
        _set("nic", {"evs_per_conection": 16}),
        "nic.evs_per_conection: unknown key; did you mean 'evs_per_connection'?",
    ),
    (_set("nic", {"mode": "roce"}), "nic.mode: unknown key"),
    (_set("nic", {"ack_timeout_exp": 30}), "nic: NicConfig.ack_timeout_exp must be in 0..24"),
    (_set("nic", {"probe_interval_ns": "soon"}), "nic.probe_interval_ns: expected a time like"),
    (
        _set("negative_controls[0]", {"name": "x", "description": "y"}),
        "negative_controls[0]: a negative control changes 'nic' or 'fabric' settings",
    ),
    (
        _set("negative_controls[0].fabric", {"trimming": "off"}),
        "negative_controls[0].fabric.trimming: expected true or false, got 'off'",
    ),
    (
        _set("negative_controls[0].fabric", {"rate_gbps": 1}),
        "negative_controls[0].fabric.rate_gbps: unknown key",
    ),
    (_set("fabric", {"rate_gbps": 0}), "fabric.rate_gbps: expected a number > 0, got 0"),
    (
        _set("sweep", {"of": ["switches"], "at": "1us"}),
        "sweep: a sweep makes its own timeline; remove 'timeline'",
    ),
    (
        _set("sweep", {"of": ["routers"], "at": "1us"}),
        "sweep.of[0]: expected one of switches, links, access_links, got 'routers'",
    ),
    (_set("duration", "forever"), "duration: expected a time like"),
    (_set("seed", -1), "seed: expected an integer >= 0, got -1"),
    (
        _set("not_reproduced", {"assertions.goodput[3]": "why"}),
        "not_reproduced.assertions.goodput[3]: unknown key; did you mean "
        "'assertions.goodput[0]'? allowed here: assertions.byte_exact, assertions.repath_max",
    ),
    (
        _set("not_reproduced", {"assertions.repath_max": "  "}),
        "not_reproduced.assertions.repath_max: expected a non-empty string, got '  '",
    ),
    (
        _set("negative_controls[0].caught_by", ["assertions.stall_max"]),
        "negative_controls[0].caught_by[0]: 'assertions.stall_max' is not an assertion of "
        "this scenario",
    ),
    (
        lambda d: (
            d["assertions"].update(roce_slower_by=2),
            d["negative_controls"][0].update(caught_by=["assertions.roce_slower_by"]),
        ),
        "negative_controls[0].caught_by[0]: a control runs MRC alone: name an assertion of that "
        "run",
    ),
    (
        _set("assertions.completion_vs_ideal", 0.5),
        "assertions.completion_vs_ideal: is 0.5: nothing completes faster than the ideal",
    ),
    (
        _set("assertions.message_latency", [{"traffic": "bulk", "max": "5us"}]),
        "assertions.message_latency[0].traffic: expected one of main, got 'bulk'",
    ),
    (
        _set("assertions.traffic_goodput", [{"traffic": "main", "of": "x", "min_fraction": 1}]),
        "assertions.traffic_goodput[0].of: expected one of baseline, line_rate, got 'x'",
    ),
]


def test_claims_marks_and_controls_load() -> None:
    def change(data: dict[str, Any]) -> None:
        data["assertions"].update(stall_max="10us", completion_vs_ideal=1.25)
        data["not_reproduced"] = {"assertions.goodput[0]": "measured 70 %: why"}
        data["negative_controls"][0]["caught_by"] = ["assertions.repath_max"]

    s = loads(scenario_text(change), source="s.yaml")
    assert s.expected == "not reproduced"
    assert s.not_reproduced == {"assertions.goodput[0]": "measured 70 %: why"}
    assert s.negative_controls[0].caught_by == ("assertions.repath_max",)
    assert s.assertions.paths() == [
        "assertions.byte_exact",
        "assertions.completion_vs_ideal",
        "assertions.repath_max",
        "assertions.stall_max",
        "assertions.goodput[0]",
    ]
    assert loads(scenario_text(), source="s.yaml").expected == "reproduced"


@pytest.mark.parametrize(("change", "message"), CASES)
def test_errors_name_the_key_and_what_was_expected(
    change: Callable[..., None], message: str
) -> None:
    assert message in error_of(change)


def test_not_a_mapping_and_bad_yaml() -> None:
    with pytest.raises(ScenarioSpecError, match=r"\(top level\): must be a mapping, got a list"):
        loads("- 1\n- 2\n", source="s.yaml")
    with pytest.raises(ScenarioFileError, match=r"s\.yaml: not valid YAML"):
        loads("a: [1, 2\n", source="s.yaml")
    with pytest.raises(ScenarioSpecError, match="line 2: duplicate key 'name'"):
        loads("name: a\nname: b\n", source="s.yaml")


def test_unknown_scenario_names_the_bundled_ones() -> None:
    with pytest.raises(ScenarioFileError, match=r"did you mean .t1-down..*bundled: "):
        load("t1-dwn")


def test_every_bundled_scenario_loads() -> None:
    names = bundled_names()
    assert "t1-down" in names
    for name in names:
        assert load(name).name == name


def test_a_path_wins_and_topology_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "topo.yaml").write_text(
        "name: mine\nplanes: 1\nt0_per_plane: 2\nt1_per_plane: 1\nnics_per_t0: 1\n"
    )
    path = tmp_path / "t1-down.yaml"
    path.write_text(
        scenario_text(
            lambda d: d.update(
                topology="topo.yaml",
                timeline=[],
                assertions={},
                traffic=[{"src": "nic0", "dst": "nic1", "bytes": 1}],
            )
        )
    )
    s = load(path)
    assert s.topology.name == "mine"
    assert s.source == str(path)


def test_event_kinds_and_patterns_resolve() -> None:
    def change(d: dict[str, Any]) -> None:
        d["traffic"] = [
            {"name": "a2a", "pattern": "all_to_all", "bytes": "4KiB"},
            {"name": "perm", "pattern": "permutation", "seed": 7, "bytes": 1},
            {
                "name": "in",
                "pattern": "incast",
                "nics": ["nic3", "nic0", "nic1", "nic2"],
                "senders": 2,
                "bytes": 1,
            },
        ]
        d["timeline"] = [
            {"at": "1us", "switch_down": "p0-t1-0"},
            {"at": "2us", "port_down": ["nic1", 1]},
            {
                "at": "3us",
                "flap": {"port": {"nic": "nic0", "plane": 0}, "period": "10us", "until": "100us"},
            },
            {"at": "4us", "loss": {"rate": "1%"}},
            {"at": "5us", "ev_drop": {"nic": "nic0", "plane": 1, "t1": 1, "fraction": "20%"}},
            {"at": "6us", "incast": {"senders": ["nic0", "nic1"], "dst": "nic2", "bytes": "64KiB"}},
        ]
        d["assertions"] = {"ev_retired_within": "30us"}

    s = loads(scenario_text(change), source="s.yaml")
    assert len(s.traffic[0].pairs) == 12
    assert all(a != b for a, b in s.traffic[1].pairs) and len(s.traffic[1].pairs) == 4
    assert s.traffic[2].pairs == (("nic0", "nic3"), ("nic1", "nic3"))
    kinds = [type(e) for e in s.timeline]
    assert kinds == [SwitchDownEvent, PortDownEvent, FlapEvent, LossEvent, EvDropEvent, IncastEvent]
    flap = s.timeline[2]
    assert isinstance(flap, FlapEvent) and flap.down_ns == 5_000
    loss = s.timeline[3]
    assert isinstance(loss, LossEvent) and loss.links == () and loss.rate == pytest.approx(0.01)
    assert [f.traffic for f in s.flows()][-2:] == ["incast5", "incast5"]
    assert {f.transport for f in s.flows("roce")} == {"roce"}
    assert s.without_timeline().flows()[-1].traffic == "in"


def test_rate_override_changes_every_link() -> None:
    s = loads(scenario_text(lambda d: d.update(fabric={"rate_gbps": 25})), source="s.yaml")
    assert {link.rate_gbps for link in s.topology.links()} == {25.0}


def test_topology_and_scenario_files_fail_alike_with_their_own_types(tmp_path: Path) -> None:
    """The one reader behind both formats: same words, each format's own error types."""
    duplicate = tmp_path / "dup.yaml"
    duplicate.write_text("name: a\nname: b\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [\n")
    for reader, file_error, spec_error in (
        (topology_load, TopologyFileError, TopologySpecError),
        (load, ScenarioFileError, ScenarioSpecError),
    ):
        with pytest.raises(spec_error, match=r"dup\.yaml: line 2: duplicate key 'name'"):
            reader(duplicate)
        with pytest.raises(file_error, match=r"broken\.yaml: not valid YAML: .*\(line 2"):
            reader(broken)
        with pytest.raises(file_error, match=r"no such .* file, and no bundled"):
            reader(tmp_path / "absent.yaml")


# ------------------------------------------------------------------ RoCE baseline and PFC

ROCE_CASES = [
    (
        _set("fabric", {"pfc": {"priorities": [9]}}),
        "fabric.pfc.priorities[0]: expected an integer 0..7",
    ),
    (_set("fabric", {"pfc": {"xoff": "10KiB", "xon": "20KiB"}}), "must be below xoff"),
    (
        _set("fabric", {"pfc": {"xof": "10KiB"}}),
        "fabric.pfc.xof: unknown key; did you mean 'xoff'?",
    ),
    (_set("fabric", {"pfc": {"priorities": [0, 0]}}), "fabric.pfc: pfc priorities repeat"),
    (_set("fabric", {"pfc": "on"}), "fabric.pfc: must be a mapping, got 'on'"),
    (_set("roce", {"qps": 0}), "roce.qps: expected an integer 1..4096, got 0"),
    (_set("roce", {"ack_timeout_exp": 0}), "roce.ack_timeout_exp: expected an integer 1..31"),
    (_set("roce", {"retry": 8}), "roce.retry: expected an integer 0..7, got 8"),
    (_set("roce", {"dcqcn": {"g": 2}}), r"roce.dcqcn: DcqcnConfig.g must be in (0, 1]"),
    (_set("roce", {"dcqcn": {"alpha": 1}}), "roce.dcqcn.alpha: unknown key"),
    (_set("roce", {"roce_goodput_min": 0.8}), "roce.roce_goodput_min: belongs under 'assertions'"),
    (_set("nic", {"roce": {"qps": 1}}), "nic.roce: unknown key"),
    (_set("negative_controls[0].fabric", {"pfc": "no"}), "expected true or false"),
]


@pytest.mark.parametrize(("change", "message"), ROCE_CASES)
def test_roce_and_pfc_mistakes_name_the_key(change: Callable[..., None], message: str) -> None:
    assert message in error_of(change)


def test_the_roce_block_sets_the_transport_and_keeps_its_assertions() -> None:
    def change(data: dict[str, Any]) -> None:
        data["roce"] = {
            "qps": 8,
            "ack_timeout_exp": 12,
            "retry": 3,
            "dcqcn": {"rate_timer_ns": "100us", "byte_counter": "1MiB"},
            "byte_exact": True,
        }
        data["fabric"] = {"pfc": {"priorities": [0], "xoff": "16KiB", "xon": "8KiB"}}

    s = loads(scenario_text(change), source="s.yaml")
    assert s.roce_transport.qps == 8
    cfg = s.roce_transport.config
    assert (cfg.ack_timeout_exp, cfg.retry_count) == (12, 3)
    assert cfg.dcqcn.rate_timer_ns == 100_000 and cfg.dcqcn.byte_counter == 1 << 20
    assert s.roce is not None and s.roce.byte_exact
    assert s.fabric.pfc is not None and (s.fabric.pfc.xoff, s.fabric.pfc.xon) == (16384, 8192)
    # compare's RoCE run takes the block's QP count; PFC only for runs with RoCE traffic
    roce_flows = s.flows("roce")
    assert [f.connections for f in roce_flows] == [8]
    assert [f.connections for f in s.flows()] == [1]  # the MRC entry as written
    assert s.pfc_for(roce_flows) is s.fabric.pfc
    assert s.pfc_for(s.flows("mrc")) is None


def test_pfc_defaults_on_for_roce_and_can_be_turned_off() -> None:
    s = loads(scenario_text(), source="s.yaml")
    assert s.fabric.pfc is not None and s.fabric.pfc.priorities == (0,)
    assert s.roce_transport.qps == 16 and s.roce_transport.config.ack_timeout_exp == 14
    off = loads(scenario_text(_set("fabric", {"pfc": False})), source="s.yaml")
    assert off.fabric.pfc is None and off.pfc_for(off.flows("roce")) is None


def test_a_roce_entry_takes_the_qps_unless_it_sets_connections() -> None:
    def change(connections: int | None) -> Callable[[dict[str, Any]], None]:
        def apply(data: dict[str, Any]) -> None:
            data["traffic"][0]["transport"] = "roce"
            if connections is not None:
                data["traffic"][0]["connections"] = connections
            data["roce"] = {"qps": 4}
            data["timeline"].append(
                {
                    "at": "300us",
                    "incast": {
                        "senders": ["nic1"],
                        "dst": "nic2",
                        "bytes": "64KiB",
                        "transport": "roce",
                    },
                }
            )

        return apply

    s = loads(scenario_text(change(None)), source="s.yaml")
    assert [f.connections for f in s.flows()] == [4, 4]  # the entry and the RoCE incast
    s = loads(scenario_text(change(2)), source="s.yaml")
    assert [f.connections for f in s.flows()] == [2, 4]
    assert [f.connections for f in s.flows("roce")] == [4, 4]  # compare: the block's
