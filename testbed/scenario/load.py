"""Load and validate scenario files (format: docs/scenarios.md).

``load(NAME_OR_PATH)`` takes a bundled scenario name (the files of the ``scenarios``
package, e.g. ``link-cut``) or a path to a YAML file. Every mistake is reported as a
:class:`ScenarioSpecError` naming the key path and what was expected, e.g.
``timeline[2].at: expected a time like '150us' or '2ms', got 'soon'``. Unknown keys are
rejected; node, link and port names are checked against the scenario's topology.
"""

from __future__ import annotations

import difflib
import os
import random
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

import topologies
from nic_emu import ConfigError, NicConfig
from nic_emu.config import DcqcnConfig, RoceConfig
from testbed.scenario import units
from testbed.scenario.exceptions import ScenarioFileError, ScenarioSpecError
from testbed.scenario.model import (
    DEFAULT_ROCE_QPS,
    EVENT_KINDS,
    GOODPUT_REFERENCES,
    PATTERNS,
    TRAFFIC_REFERENCES,
    TRANSPORTS,
    Assertions,
    FabricSpec,
    GoodputCheck,
    IncastEvent,
    LatencyCheck,
    NegativeControl,
    RoceTransport,
    Scenario,
    Sweep,
    Traffic,
    TrafficGoodputCheck,
)
from topologies import AddressPlan, Topology, TopologyError, yamlfile
from topologies.events import (
    EvDropEvent,
    Event,
    FlapEvent,
    LinkDownEvent,
    LinkRef,
    LinkUpEvent,
    LossEvent,
    PortDownEvent,
    PortRef,
    PortUpEvent,
    SwitchDownEvent,
    SwitchUpEvent,
)
from topologies.yamlfile import show
from vfabric.exceptions import FabricSetupError
from vfabric.pfc import PfcConfig

BUNDLE_PACKAGE = "scenarios"
DEFAULT_DURATION_NS = 20_000_000  # a run stops here even if transfers are still going
DEFAULT_PLOT_BIN_NS = 10_000
DEFAULT_GOODPUT_WINDOW_NS = 50_000
# NicConfig fields a scenario may not set: the transport comes from traffic entries, the
# congestion-control block is not a scalar, and packet tracing is the runner's business.
NIC_FIELDS_NOT_SETTABLE = ("mode", "cc", "roce", "trace_packets")
# The ``roce:`` block: the RoCE baseline's transport (beside compare's RoCE assertions)
ROCE_TRANSPORT_KEYS = ("qps", "ack_timeout_exp", "retry", "dcqcn")
PFC_KEYS = ("priorities", "xoff", "xon", "headroom")

TOP_KEYS = (
    "name",
    "description",
    "paper",
    "scale",
    "notes",
    "topology",
    "seed",
    "duration",
    "fabric",
    "nic",
    "traffic",
    "timeline",
    "assertions",
    "roce",
    "negative_controls",
    "sweep",
    "plot_bin",
    "not_reproduced",
)
ASSERTION_KEYS = (
    "byte_exact",
    "expect_failure_within",
    "completion_max",
    "repath_max",
    "repath_median",
    "retransmit_max",
    "goodput",
    "traffic_goodput",
    "ev_retired_within",
    "revived_within",
    "trims_min",
    "nacks_min",
    "timeouts_max",
    "roce_slower_by",
    "roce_goodput_min",
    "stall_max",
    "completion_vs_ideal",
    "message_latency",
)
SWEEP_KINDS = ("switches", "links", "access_links")


# ------------------------------------------------------------------ entry points


def bundled_names() -> list[str]:
    """The scenarios shipped with the package (``mrc-testbed run NAME`` finds them)."""
    return yamlfile.bundled_names(BUNDLE_PACKAGE)


def load(name_or_path: str | os.PathLike[str]) -> Scenario:
    """A scenario from a YAML file, or a bundled one by name (with or without ``.yaml``).
    An existing file wins over a bundled name."""
    found = yamlfile.locate(name_or_path, BUNDLE_PACKAGE, "scenario", ScenarioFileError)
    base_dir = found.path.parent if found.path is not None else None
    return loads(
        found.text, source=found.source, base_dir=base_dir, default_name=found.default_name
    )


def loads(
    text: str,
    source: str = "<string>",
    *,
    base_dir: Path | None = None,
    default_name: str = "scenario",
) -> Scenario:
    """Parse scenario YAML; ``source`` prefixes every error; a topology path in the file is
    relative to ``base_dir`` (default: the current directory)."""
    data = yamlfile.parse(text, source, file_error=ScenarioFileError, spec_error=ScenarioSpecError)
    return _Reader(source, base_dir or Path.cwd()).scenario(data, default_name)


# ------------------------------------------------------------------ the reader


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


class _Reader:
    def __init__(self, source: str, base_dir: Path) -> None:
        self.source = source
        self.base_dir = base_dir
        self.topology: Topology | None = None
        self.plan: AddressPlan | None = None
        self.roce_qps = DEFAULT_ROCE_QPS  # the roce block's, read before the traffic

    def error(self, path: str, reason: str) -> ScenarioSpecError:
        return ScenarioSpecError(self.source, path, reason)

    # -- primitives

    def mapping(
        self,
        value: Any,
        path: str,
        allowed: tuple[str, ...],
        required: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(path or "(top level)", f"must be a mapping, got {show(value)}")
        for key in value:
            if key not in allowed:
                hint = difflib.get_close_matches(str(key), allowed, n=1)
                suggestion = f"did you mean {hint[0]!r}? " if hint else ""
                raise self.error(
                    _join(path, str(key)),
                    f"unknown key; {suggestion}allowed here: {', '.join(allowed)}",
                )
        for key in required:
            if key not in value:
                raise self.error(_join(path, key), "missing (required)")
        return value

    def sequence(self, value: Any, path: str, *, non_empty: bool = True) -> list[Any]:
        if not isinstance(value, list):
            raise self.error(path, f"must be a list, got {show(value)}")
        if non_empty and not value:
            raise self.error(path, "must not be empty")
        return value

    def string(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(path, f"expected a non-empty string, got {show(value)}")
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"expected true or false, got {show(value)}")
        return value

    def integer(self, value: Any, path: str, minimum: int, maximum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(path, f"expected an integer, got {show(value)}")
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"{minimum}..{maximum}" if maximum is not None else f">= {minimum}"
            raise self.error(path, f"expected an integer {bound}, got {value}")
        return value

    def positive_number(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise self.error(path, f"expected a number > 0, got {show(value)}")
        return float(value)

    def choice(self, value: Any, path: str, choices: tuple[str, ...]) -> str:
        if value not in choices:
            raise self.error(path, f"expected one of {', '.join(choices)}, got {show(value)}")
        return str(value)

    def _unit(self, parse: Callable[[Any], Any], value: Any, path: str) -> Any:
        try:
            return parse(value)
        except ValueError as exc:
            raise self.error(path, str(exc)) from None

    def time(self, value: Any, path: str) -> int:
        return self._unit(units.parse_time_ns, value, path)

    def positive_time(self, value: Any, path: str) -> int:
        ns = self.time(value, path)
        if ns <= 0:
            raise self.error(path, f"expected a time > 0, got {show(value)}")
        return ns

    def size(self, value: Any, path: str) -> int:
        return self._unit(units.parse_size, value, path)

    def fraction(self, value: Any, path: str) -> float:
        return self._unit(units.parse_fraction, value, path)

    # -- topology names

    def _topology(self) -> Topology:
        assert self.topology is not None
        return self.topology

    def nic(self, value: Any, path: str) -> str:
        name = self.string(value, path)
        topo = self._topology()
        if not (name.startswith("nic") and topo.has_node(name)):
            raise self.error(
                path,
                f"{name!r} is not a NIC of topology {topo.name} (nic0..nic{topo.nic_count - 1})",
            )
        return name

    def switch(self, value: Any, path: str) -> str:
        name = self.string(value, path)
        topo = self._topology()
        if name.startswith("nic") or not topo.has_node(name):
            raise self.error(
                path,
                f"{name!r} is not a switch of topology {topo.name} "
                f"(names like p0-t0-0, p0-t1-{topo.plane(0).t1_count - 1})",
            )
        return name

    def link(self, value: Any, path: str) -> LinkRef:
        if not (isinstance(value, list) and len(value) == 2):
            raise self.error(path, f"expected a link as [node, node], got {show(value)}")
        a, b = (self.string(v, _join(path, i)) for i, v in enumerate(value))
        try:
            self._topology().link(a, b)
        except TopologyError as exc:
            raise self.error(path, str(exc)) from None
        return LinkRef(a, b)

    def port(self, value: Any, path: str) -> PortRef:
        if isinstance(value, list) and len(value) == 2:
            nic_value, plane_value = value
            nic_path, plane_path = _join(path, 0), _join(path, 1)
        elif isinstance(value, dict):
            self.mapping(value, path, ("nic", "plane"), ("nic", "plane"))
            nic_value, plane_value = value["nic"], value["plane"]
            nic_path, plane_path = _join(path, "nic"), _join(path, "plane")
        else:
            raise self.error(
                path,
                f"expected a NIC port as {{nic: nic0, plane: 1}} or [nic0, 1], got {show(value)}",
            )
        nic = self.nic(nic_value, nic_path)
        plane = self.integer(plane_value, plane_path, 0, self._topology().plane_count - 1)
        return PortRef(nic, plane)

    # -- the scenario

    def scenario(self, data: Any, default_name: str) -> Scenario:
        data = self.mapping(data, "", TOP_KEYS, ("topology", "traffic"))
        name = self.string(data.get("name", default_name), "name")
        self.topology = self.load_topology(data["topology"], data.get("fabric"))
        self.plan = AddressPlan(self.topology)
        seed = self.integer(data.get("seed", 1), "seed", 0)
        duration = self.positive_time(data.get("duration", f"{DEFAULT_DURATION_NS}ns"), "duration")
        fabric = self.fabric(data.get("fabric", {}), "fabric")
        nic = self.nic_overrides(data.get("nic", {}), "nic")
        roce_block: dict[str, Any] = {}
        roce_transport = RoceTransport()
        if "roce" in data:
            roce_block = self.mapping(data["roce"], "roce", ASSERTION_KEYS + ROCE_TRANSPORT_KEYS)
            roce_transport = self.roce_transport(
                {k: v for k, v in roce_block.items() if k in ROCE_TRANSPORT_KEYS}, "roce"
            )
        self.roce_qps = roce_transport.qps
        traffic = self.traffic(data["traffic"], "traffic", seed)
        timeline = self.timeline(data.get("timeline", []), "timeline", duration)
        assertions = self.assertions(data.get("assertions", {}), "assertions", timeline, traffic)
        roce = None
        checks = {k: v for k, v in roce_block.items() if k in ASSERTION_KEYS}
        if checks:
            roce = self.assertions(checks, "roce", timeline, traffic)
        controls = self.negative_controls(data.get("negative_controls", []), "negative_controls")
        sweep = None
        if "sweep" in data:
            sweep = self.sweep(data["sweep"], "sweep", duration)
            if timeline:
                raise self.error("sweep", "a sweep makes its own timeline; remove 'timeline'")
        not_reproduced = self.not_reproduced(
            data.get("not_reproduced", {}), "not_reproduced", assertions, roce
        )
        for i, control in enumerate(controls):
            for j, target in enumerate(control.caught_by):
                if target not in _paths(assertions, roce):
                    raise self.error(
                        f"negative_controls[{i}].caught_by[{j}]",
                        f"{target!r} is not an assertion of this scenario",
                    )
                if target == assertions.path("roce_slower_by"):
                    raise self.error(
                        f"negative_controls[{i}].caught_by[{j}]",
                        "a control runs MRC alone: name an assertion of that run",
                    )
        return Scenario(
            name=name,
            description=str(data.get("description", "")),
            paper=str(data.get("paper", "")),
            scale=str(data.get("scale", "")),
            notes=str(data.get("notes", "")),
            source=self.source,
            topology_ref=data["topology"] if isinstance(data["topology"], str) else "inline",
            topology=self.topology,
            seed=seed,
            duration_ns=duration,
            fabric=fabric,
            nic=nic,
            traffic=traffic,
            timeline=timeline,
            assertions=assertions,
            negative_controls=controls,
            roce=roce,
            roce_transport=roce_transport,
            sweep=sweep,
            plot_bin_ns=self.positive_time(
                data.get("plot_bin", f"{DEFAULT_PLOT_BIN_NS}ns"), "plot_bin"
            ),
            not_reproduced=not_reproduced,
        )

    def not_reproduced(
        self, value: Any, path: str, assertions: Assertions, roce: Assertions | None
    ) -> dict[str, str]:
        data = self.mapping(value, path, tuple(_paths(assertions, roce)))
        out = {}
        for key, note in data.items():
            where = _join(path, str(key))
            out[str(key)] = self.string(note, where)  # what was measured, and why
        return out

    def load_topology(self, value: Any, fabric: Any) -> Topology:
        """A bundled name, a path (relative to the scenario file) or an inline mapping in
        the topology file format (docs/topology-format.md)."""
        try:
            if isinstance(value, dict):
                topology = topologies.from_mapping(
                    value, source=f"{self.source}: topology", default_name="inline"
                )
            else:
                ref = self.string(value, "topology")
                candidate = Path(ref)
                if not candidate.is_absolute() and (self.base_dir / candidate).is_file():
                    ref = str(self.base_dir / candidate)
                topology = topologies.load(ref)
        except TopologyError as exc:
            raise self.error("topology", str(exc)) from None
        rate = fabric.get("rate_gbps") if isinstance(fabric, dict) else None
        if rate is None:
            return topology
        rate = self.positive_number(rate, "fabric.rate_gbps")
        mapping = topologies.to_mapping(topology)
        mapping.setdefault("link_defaults", {})["rate_gbps"] = rate
        for override in mapping.get("links", []):
            override.pop("rate_gbps", None)
        return topologies.from_mapping(mapping, source=f"{topology.name} at {rate:g} Gb/s")

    def fabric(self, value: Any, path: str) -> FabricSpec:
        data = self.mapping(value, path, ("trimming", "ecn", "rate_gbps", "pfc"))
        return FabricSpec(
            pfc=self.pfc(data.get("pfc", True), _join(path, "pfc")),
            trimming=self.boolean(data.get("trimming", True), _join(path, "trimming")),
            ecn=self.boolean(data.get("ecn", True), _join(path, "ecn")),
            rate_gbps=(
                self.positive_number(data["rate_gbps"], _join(path, "rate_gbps"))
                if "rate_gbps" in data
                else None
            ),
        )

    def pfc(self, value: Any, path: str) -> PfcConfig | None:
        """``true`` (the defaults), ``false`` (no PFC) or the settings."""
        if isinstance(value, bool):
            return PfcConfig() if value else None
        data = self.mapping(value, path, PFC_KEYS)
        kwargs: dict[str, Any] = {}
        if "priorities" in data:
            where = _join(path, "priorities")
            kwargs["priorities"] = tuple(
                self.integer(p, _join(where, i), 0, 7)
                for i, p in enumerate(self.sequence(data["priorities"], where))
            )
        for key in ("xoff", "xon", "headroom"):
            if key in data:
                kwargs[key] = self.size(data[key], _join(path, key))
        try:
            return PfcConfig(**kwargs)
        except FabricSetupError as exc:
            raise self.error(path, str(exc)) from None

    def roce_transport(self, data: dict[str, Any], path: str) -> RoceTransport:
        """The ``roce:`` block's transport keys (qps, ack_timeout_exp, retry, dcqcn)."""
        qps = self.integer(data.get("qps", DEFAULT_ROCE_QPS), _join(path, "qps"), 1, 4096)
        kwargs: dict[str, Any] = {}
        if "ack_timeout_exp" in data:
            kwargs["ack_timeout_exp"] = self.integer(
                data["ack_timeout_exp"], _join(path, "ack_timeout_exp"), 1, 31
            )
        if "retry" in data:
            kwargs["retry_count"] = self.integer(data["retry"], _join(path, "retry"), 0, 7)
        try:
            if "dcqcn" in data:
                kwargs["dcqcn"] = self.dcqcn(data["dcqcn"], _join(path, "dcqcn"))
            return RoceTransport(qps=qps, config=RoceConfig(**kwargs))
        except ConfigError as exc:
            raise self.error(path, str(exc)) from None

    def dcqcn(self, value: Any, path: str) -> DcqcnConfig:
        """DcqcnConfig fields (times as '55us', rates in bits/s, sizes as '10MiB')."""
        if isinstance(value, bool):
            return DcqcnConfig(enabled=value)
        names = tuple(f.name for f in fields(DcqcnConfig))
        data = self.mapping(value, path, names)
        defaults = DcqcnConfig()
        out: dict[str, Any] = {}
        for key, raw in data.items():
            where = _join(path, key)
            default = getattr(defaults, key)
            if key.endswith("_ns"):
                out[key] = (
                    self.time(raw, where) if isinstance(raw, str) else self.integer(raw, where, 0)
                )
            elif key == "byte_counter":
                out[key] = self.size(raw, where)
            elif isinstance(default, bool):
                out[key] = self.boolean(raw, where)
            elif isinstance(default, int):
                out[key] = self.integer(raw, where, 0)
            else:
                out[key] = self.positive_number(raw, where)
        try:
            return DcqcnConfig(**out)
        except ConfigError as exc:
            raise self.error(path, str(exc)) from None

    def nic_overrides(self, value: Any, path: str) -> dict[str, Any]:
        settable = tuple(f.name for f in fields(NicConfig) if f.name not in NIC_FIELDS_NOT_SETTABLE)
        data = self.mapping(value, path, settable)
        out: dict[str, Any] = {}
        defaults = NicConfig()
        for key, raw in data.items():
            where = _join(path, key)
            default = getattr(defaults, key)
            if key.endswith("_ns") and isinstance(raw, str):
                out[key] = self.time(raw, where)
            elif isinstance(default, bool):
                out[key] = self.boolean(raw, where)
            elif isinstance(default, int):
                out[key] = self.integer(raw, where, 0)
            else:
                out[key] = self.positive_number(raw, where)
        try:
            NicConfig(**out)
        except ConfigError as exc:
            raise self.error(path, str(exc)) from None
        return out

    # -- traffic

    def traffic(self, value: Any, path: str, seed: int) -> tuple[Traffic, ...]:
        entries = self.sequence(value, path)
        out: list[Traffic] = []
        names: set[str] = set()
        for index, raw in enumerate(entries):
            where = _join(path, index)
            entry = self.traffic_entry(raw, where, index, seed)
            if entry.name in names:
                raise self.error(
                    _join(where, "name"), f"another traffic entry is named {entry.name!r}"
                )
            names.add(entry.name)
            out.append(entry)
        return tuple(out)

    def traffic_entry(self, raw: Any, path: str, index: int, seed: int) -> Traffic:
        data = self.mapping(
            raw,
            path,
            (
                "name",
                "pairs",
                "src",
                "dst",
                "pattern",
                "nics",
                "senders",
                "seed",
                "bytes",
                "messages",
                "connections",
                "transport",
                "start",
            ),
            ("bytes",),
        )
        forms = [k for k in ("pairs", "src", "pattern") if k in data]
        if len(forms) != 1:
            raise self.error(
                path,
                "give exactly one of 'pairs', 'src'/'dst' or 'pattern' "
                f"(found {', '.join(forms) if forms else 'none'})",
            )
        form = forms[0]
        if form == "pairs":
            pattern = "pairs"
            pairs = self.pairs(data["pairs"], _join(path, "pairs"))
        elif form == "src":
            if "dst" not in data:
                raise self.error(_join(path, "dst"), "missing (required with 'src')")
            pattern = "pairs"
            pairs = self.pairs([[data["src"], data["dst"]]], path, single=True)
        else:
            pattern = self.choice(data["pattern"], _join(path, "pattern"), PATTERNS[1:])
            pairs = self.pattern_pairs(pattern, data, path, seed)
        for key, needs in (("nics", "a pattern"), ("seed", "permutation"), ("senders", "incast")):
            if key in data and (form != "pattern" or (needs != "a pattern" and pattern != needs)):
                raise self.error(_join(path, key), f"only used with pattern {needs}")
        nbytes = self.size(data["bytes"], _join(path, "bytes"))
        transport = self.choice(data.get("transport", "mrc"), _join(path, "transport"), TRANSPORTS)
        # a RoCE entry spreads over the roce block's QPs unless it says how many
        default_connections = self.roce_qps if transport == "roce" else 1
        return Traffic(
            name=self.string(data.get("name", f"traffic{index}"), _join(path, "name")),
            pattern=pattern,
            pairs=pairs,
            nbytes=nbytes,
            messages=self.messages(data, path, nbytes),
            transport=transport,
            connections=self.integer(
                data.get("connections", default_connections), _join(path, "connections"), 1
            ),
            start_ns=self.time(data.get("start", 0), _join(path, "start")),
        )

    def messages(self, data: dict[str, Any], path: str, nbytes: int) -> int:
        """How many messages the bytes are split into: 1..bytes."""
        count = self.integer(data.get("messages", 1), _join(path, "messages"), 1)
        if count > nbytes:
            raise self.error(
                _join(path, "messages"), f"{count} messages cannot split {nbytes} byte(s)"
            )
        return count

    def pairs(self, value: Any, path: str, *, single: bool = False) -> tuple[tuple[str, str], ...]:
        out = []
        for i, pair in enumerate(self.sequence(value, path)):
            where = path if single else _join(path, i)
            if not (isinstance(pair, list) and len(pair) == 2):
                raise self.error(where, f"expected a pair [src, dst], got {show(pair)}")
            src_path = _join(path, "src") if single else _join(where, 0)
            dst_path = _join(path, "dst") if single else _join(where, 1)
            src, dst = self.nic(pair[0], src_path), self.nic(pair[1], dst_path)
            if src == dst:
                raise self.error(dst_path, f"a transfer needs two different NICs, got {src} twice")
            out.append((src, dst))
        return tuple(out)

    def pattern_pairs(
        self, pattern: str, data: dict[str, Any], path: str, seed: int
    ) -> tuple[tuple[str, str], ...]:
        topo = self._topology()
        if "nics" in data:
            nics_path = _join(path, "nics")
            nics = [
                self.nic(v, _join(nics_path, i))
                for i, v in enumerate(self.sequence(data["nics"], nics_path))
            ]
            if len(set(nics)) != len(nics):
                raise self.error(nics_path, "lists a NIC twice")
        else:
            nics = [nic.name for nic in topo.nics]
        if len(nics) < 2:
            raise self.error(path, f"pattern {pattern} needs at least 2 NICs, got {len(nics)}")
        if pattern == "all_to_all":
            return tuple((a, b) for a in nics for b in nics if a != b)
        if pattern == "permutation":
            rng = random.Random(self.integer(data.get("seed", seed), _join(path, "seed"), 0))
            # a derangement: nobody sends to itself
            while True:
                targets = nics[:]
                rng.shuffle(targets)
                if all(a != b for a, b in zip(nics, targets)):
                    return tuple(zip(nics, targets))
        # incast: the first NIC of ``nics`` receives, ``senders`` of the others send
        dst, others = nics[0], nics[1:]
        count = self.integer(
            data.get("senders", len(others)), _join(path, "senders"), 1, len(others)
        )
        return tuple((src, dst) for src in others[:count])

    # -- timeline

    def timeline(self, value: Any, path: str, duration: int) -> tuple[Event, ...]:
        events: list[Event] = []
        for index, raw in enumerate(self.sequence(value, path, non_empty=False)):
            where = _join(path, index)
            event = self.event(raw, where)
            if event.at_ns >= duration:
                raise self.error(
                    _join(where, "at"),
                    f"{units.format_time_ns(event.at_ns)} is not before the end of the run "
                    f"(duration {units.format_time_ns(duration)})",
                )
            if events and event.at_ns < events[-1].at_ns:
                raise self.error(
                    _join(where, "at"),
                    f"{units.format_time_ns(event.at_ns)} is before {path}[{index - 1}].at "
                    f"({units.format_time_ns(events[-1].at_ns)}); list events in time order",
                )
            events.append(event)
        return tuple(events)

    def event(self, raw: Any, path: str) -> Event:
        data = self.mapping(raw, path, ("at", *EVENT_KINDS), ("at",))
        kinds = [k for k in data if k != "at"]
        if len(kinds) != 1:
            raise self.error(
                path,
                f"an event has 'at' and exactly one of {', '.join(EVENT_KINDS)} "
                f"(found {', '.join(kinds) if kinds else 'none'})",
            )
        kind = kinds[0]
        at = self.time(data["at"], _join(path, "at"))
        value, where = data[kind], _join(path, kind)
        if kind in ("link_down", "link_up"):
            cls = LinkDownEvent if kind == "link_down" else LinkUpEvent
            return cls(at_ns=at, link=self.link(value, where))
        if kind in ("switch_down", "switch_up"):
            cls_s = SwitchDownEvent if kind == "switch_down" else SwitchUpEvent
            return cls_s(at_ns=at, switch=self.switch(value, where))
        if kind in ("port_down", "port_up"):
            cls_p = PortDownEvent if kind == "port_down" else PortUpEvent
            return cls_p(at_ns=at, port=self.port(value, where))
        if kind == "flap":
            return self.flap(value, where, at)
        if kind == "loss":
            return self.loss(value, where, at)
        if kind == "ev_drop":
            return self.ev_drop(value, where, at)
        return self.incast(value, where, at)

    def until(self, data: dict[str, Any], path: str, at: int) -> int | None:
        if "until" not in data:
            return None
        until = self.time(data["until"], _join(path, "until"))
        if until <= at:
            raise self.error(
                _join(path, "until"),
                f"{units.format_time_ns(until)} is not after the event's start "
                f"({units.format_time_ns(at)})",
            )
        return until

    def flap(self, value: Any, path: str, at: int) -> FlapEvent:
        data = self.mapping(
            value, path, ("link", "port", "period", "down", "until"), ("period", "until")
        )
        targets = [k for k in ("link", "port") if k in data]
        if len(targets) != 1:
            raise self.error(path, "give exactly one of 'link' or 'port' to flap")
        target: LinkRef | PortRef = (
            self.link(data["link"], _join(path, "link"))
            if "link" in data
            else self.port(data["port"], _join(path, "port"))
        )
        period = self.positive_time(data["period"], _join(path, "period"))
        down = self.positive_time(data.get("down", f"{period // 2}ns"), _join(path, "down"))
        if down >= period:
            raise self.error(
                _join(path, "down"),
                f"must be shorter than the period ({units.format_time_ns(period)}), "
                f"got {units.format_time_ns(down)}",
            )
        until = self.until(data, path, at)
        assert until is not None
        return FlapEvent(at_ns=at, of=target, period_ns=period, down_ns=down, until_ns=until)

    def loss(self, value: Any, path: str, at: int) -> LossEvent:
        data = self.mapping(value, path, ("rate", "link", "links", "until"), ("rate",))
        if "link" in data and "links" in data:
            raise self.error(path, "give 'link' or 'links', not both")
        if "link" in data:
            links: tuple[LinkRef, ...] = (self.link(data["link"], _join(path, "link")),)
        elif "links" in data:
            where = _join(path, "links")
            links = tuple(
                self.link(v, _join(where, i))
                for i, v in enumerate(self.sequence(data["links"], where))
            )
        else:
            links = ()  # every link
        rate = self.fraction(data["rate"], _join(path, "rate"))
        if rate == 0.0:
            raise self.error(_join(path, "rate"), "a loss rate of 0 does nothing; remove the event")
        return LossEvent(at_ns=at, links=links, rate=rate, until_ns=self.until(data, path, at))

    def ev_drop(self, value: Any, path: str, at: int) -> EvDropEvent:
        data = self.mapping(
            value,
            path,
            ("nic", "fraction", "plane", "t1", "salt", "until"),
            ("nic", "fraction", "plane", "t1"),
        )
        nic = self.nic(data["nic"], _join(path, "nic"))
        topo = self._topology()
        plane = self.integer(data["plane"], _join(path, "plane"), 0, topo.plane_count - 1)
        t1 = self.integer(data["t1"], _join(path, "t1"), 0, topo.plane(plane).t1_count - 1)
        salt = self.integer(data.get("salt", 0), _join(path, "salt"), 0)
        assert self.plan is not None
        try:
            ev = self.plan.make_ev(plane, t1, salt)
        except TopologyError as exc:
            raise self.error(_join(path, "salt"), str(exc)) from None
        fraction = self.fraction(data["fraction"], _join(path, "fraction"))
        if fraction == 0.0:
            raise self.error(_join(path, "fraction"), "dropping 0 of an EV does nothing")
        return EvDropEvent(
            at_ns=at,
            nic=nic,
            ev=ev,
            plane=plane,
            t1=t1,
            fraction=fraction,
            until_ns=self.until(data, path, at),
        )

    def incast(self, value: Any, path: str, at: int) -> IncastEvent:
        data = self.mapping(
            value,
            path,
            ("senders", "dst", "bytes", "messages", "transport"),
            ("senders", "dst", "bytes"),
        )
        dst = self.nic(data["dst"], _join(path, "dst"))
        where = _join(path, "senders")
        senders = tuple(
            self.nic(v, _join(where, i))
            for i, v in enumerate(self.sequence(data["senders"], where))
        )
        if dst in senders:
            raise self.error(where, f"{dst} is the incast's destination and cannot send to itself")
        if len(set(senders)) != len(senders):
            raise self.error(where, "lists a NIC twice")
        nbytes = self.size(data["bytes"], _join(path, "bytes"))
        return IncastEvent(
            at_ns=at,
            senders=senders,
            dst=dst,
            nbytes=nbytes,
            messages=self.messages(data, path, nbytes),
            transport=self.choice(
                data.get("transport", "mrc"), _join(path, "transport"), TRANSPORTS
            ),
        )

    # -- assertions and controls

    def assertions(
        self,
        value: Any,
        path: str,
        timeline: tuple[Event, ...],
        traffic: tuple[Traffic, ...],
    ) -> Assertions:
        data = self.mapping(value, path, ASSERTION_KEYS)
        traffic_names = tuple(t.name for t in traffic)

        def opt(key: str, parse: Callable[[Any, str], Any]) -> Any:
            return parse(data[key], _join(path, key)) if key in data else None

        def count(v: Any, p: str) -> int:
            return self.integer(v, p, 0)

        if "ev_retired_within" in data and not any(isinstance(e, EvDropEvent) for e in timeline):
            raise self.error(_join(path, "ev_retired_within"), "needs an ev_drop in the timeline")
        if "revived_within" in data and not any(
            isinstance(e, LinkUpEvent | PortUpEvent | SwitchUpEvent) for e in timeline
        ):
            raise self.error(
                _join(path, "revived_within"),
                "needs a link_up, port_up or switch_up in the timeline",
            )
        goodput: list[GoodputCheck] = []
        if "goodput" in data:
            where = _join(path, "goodput")
            for i, raw in enumerate(self.sequence(data["goodput"], where)):
                goodput.append(self.goodput_check(raw, _join(where, i), timeline))
        traffic_goodput = []
        if "traffic_goodput" in data:
            where = _join(path, "traffic_goodput")
            for i, raw in enumerate(self.sequence(data["traffic_goodput"], where)):
                p = _join(where, i)
                entry = self.mapping(
                    raw, p, ("traffic", "min_fraction", "max_fraction", "of"), ("traffic",)
                )
                low, high = self.bounds(entry, p)
                traffic_goodput.append(
                    TrafficGoodputCheck(
                        self.choice(entry["traffic"], _join(p, "traffic"), traffic_names),
                        low,
                        high,
                        self.choice(
                            entry.get("of", "baseline"), _join(p, "of"), TRAFFIC_REFERENCES
                        ),
                    )
                )
        latency = []
        if "message_latency" in data:
            where = _join(path, "message_latency")
            for i, raw in enumerate(self.sequence(data["message_latency"], where)):
                p = _join(where, i)
                entry = self.mapping(raw, p, ("traffic", "max"), ("traffic", "max"))
                latency.append(
                    LatencyCheck(
                        self.choice(entry["traffic"], _join(p, "traffic"), traffic_names),
                        self.positive_time(entry["max"], _join(p, "max")),
                    )
                )
        slower = opt("roce_slower_by", lambda v, p: self.positive_number(v, p))
        if slower is not None and path != "assertions":
            raise self.error(_join(path, "roce_slower_by"), "belongs under 'assertions'")
        near = opt("roce_goodput_min", self.fraction)
        if near is not None and path != "assertions":
            raise self.error(_join(path, "roce_goodput_min"), "belongs under 'assertions'")
        return Assertions(
            byte_exact=self.boolean(data.get("byte_exact", True), _join(path, "byte_exact")),
            expect_failure_within_ns=opt("expect_failure_within", self.positive_time),
            completion_max_ns=opt("completion_max", self.positive_time),
            repath_max_ns=opt("repath_max", self.positive_time),
            repath_median_ns=opt("repath_median", self.positive_time),
            retransmit_max_fraction=opt("retransmit_max", self.fraction),
            goodput=tuple(goodput),
            traffic_goodput=tuple(traffic_goodput),
            ev_retired_within_ns=opt("ev_retired_within", self.positive_time),
            revived_within_ns=opt("revived_within", self.positive_time),
            trims_min=opt("trims_min", count),
            nacks_min=opt("nacks_min", count),
            timeouts_max=opt("timeouts_max", count),
            roce_slower_by=slower,
            roce_goodput_min=near,
            stall_max_ns=opt("stall_max", self.positive_time),
            message_latency=tuple(latency),
            ideal_factor_max=opt("completion_vs_ideal", self.ideal_factor),
            section=path,
        )

    def ideal_factor(self, value: Any, path: str) -> float:
        factor = self.positive_number(value, path)
        if factor < 1:
            raise self.error(path, f"is {factor:g}: nothing completes faster than the ideal")
        return factor

    def bounds(self, entry: dict[str, Any], path: str) -> tuple[float | None, float | None]:
        low = (
            self.fraction(entry["min_fraction"], _join(path, "min_fraction"))
            if "min_fraction" in entry
            else None
        )
        high = (
            self.fraction(entry["max_fraction"], _join(path, "max_fraction"))
            if "max_fraction" in entry
            else None
        )
        if low is None and high is None:
            raise self.error(path, "give min_fraction, max_fraction or both")
        if low is not None and high is not None and low > high:
            raise self.error(_join(path, "max_fraction"), f"is below min_fraction ({low:g})")
        return low, high

    def goodput_check(self, raw: Any, path: str, timeline: tuple[Event, ...]) -> GoodputCheck:
        entry = self.mapping(
            raw,
            path,
            ("event", "of", "min_fraction", "max_fraction", "window", "settle"),
            ("event",),
        )
        if not timeline:
            raise self.error(
                _join(path, "event"), "the timeline is empty: no event to measure after"
            )
        event = self.integer(entry["event"], _join(path, "event"), 0, len(timeline) - 1)
        of = self.choice(entry.get("of", "before"), _join(path, "of"), GOODPUT_REFERENCES)
        window = self.positive_time(
            entry.get("window", f"{DEFAULT_GOODPUT_WINDOW_NS}ns"), _join(path, "window")
        )
        if of == "before" and timeline[event].at_ns < window:
            raise self.error(
                _join(path, "of"),
                f"event {event} is at {units.format_time_ns(timeline[event].at_ns)}, too early for "
                f"a 'before' window of {units.format_time_ns(window)}; use of: baseline",
            )
        low, high = self.bounds(entry, path)
        return GoodputCheck(
            event=event,
            of=of,
            min_fraction=low,
            max_fraction=high,
            window_ns=window,
            settle_ns=self.time(entry.get("settle", 0), _join(path, "settle")),
        )

    def negative_controls(self, value: Any, path: str) -> tuple[NegativeControl, ...]:
        out = []
        for i, raw in enumerate(self.sequence(value, path, non_empty=False)):
            where = _join(path, i)
            data = self.mapping(
                raw,
                where,
                ("name", "description", "nic", "fabric", "caught_by"),
                ("name", "description"),
            )
            if "nic" not in data and "fabric" not in data:
                raise self.error(where, "a negative control changes 'nic' or 'fabric' settings")
            fabric = self.mapping(
                data.get("fabric", {}), _join(where, "fabric"), ("trimming", "ecn", "pfc")
            )
            for key, flag in fabric.items():
                self.boolean(flag, _join(_join(where, "fabric"), key))
            out.append(
                NegativeControl(
                    name=self.string(data["name"], _join(where, "name")),
                    description=self.string(data["description"], _join(where, "description")),
                    nic=self.nic_overrides(data.get("nic", {}), _join(where, "nic")),
                    fabric=dict(fabric),
                    caught_by=tuple(
                        self.string(v, _join(_join(where, "caught_by"), j))
                        for j, v in enumerate(
                            self.sequence(data.get("caught_by", []), _join(where, "caught_by"))
                            if "caught_by" in data
                            else []
                        )
                    ),
                )
            )
        return tuple(out)

    def sweep(self, value: Any, path: str, duration: int) -> Sweep:
        data = self.mapping(value, path, ("of", "size", "at"), ("of", "at"))
        where = _join(path, "of")
        kinds = tuple(
            self.choice(v, _join(where, i), SWEEP_KINDS)
            for i, v in enumerate(self.sequence(data["of"], where))
        )
        at = self.time(data["at"], _join(path, "at"))
        if at >= duration:
            raise self.error(_join(path, "at"), "is not before the end of the run")
        return Sweep(
            kinds=kinds, size=self.integer(data.get("size", 2), _join(path, "size"), 1, 2), at_ns=at
        )


def _paths(assertions: Assertions, roce: Assertions | None) -> list[str]:
    return assertions.paths() + (roce.paths() if roce is not None else [])
