"""The ``nic-emu serve --config FILE.json`` configuration (docs/nic-emu-process.md), checked.

Every problem raises :class:`ServeConfigError` naming the offending key (``ports.0.local``,
``transport.evs_per_connection``...) so the process can exit 2 with one line on stderr.
Sockets are not opened here: ``nic_emu.process`` opens them and reports a port in use
under the same key.

Transport settings start from :data:`PROCESS_TRANSPORT_DEFAULTS` (NicConfig's hardware
defaults slowed down to what a Python process on wall-clock time can keep up with, see
docs/nic-emu.md section 12) and ``transport`` overrides them by name.
"""

from __future__ import annotations

import difflib
import ipaddress
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from nic_emu.config import (
    CcConfig,
    DcqcnConfig,
    NicConfig,
    RoceConfig,
    TransportMode,
    config_as_dict,
)
from nic_emu.core import NicCore
from nic_emu.eventfile import DEFAULT_EVENTS_MAX_BYTES, MIN_EVENTS_MAX_BYTES
from nic_emu.exceptions import ConfigError, ServeConfigError
from topologies import AddressPlan, Topology, load
from topologies.exceptions import TopologyError

CONFIG_KEYS = (
    "nic",
    "topology",
    "ports",
    "control",
    "events",
    "events_max_bytes",
    "seed",
    "transport",
)
REQUIRED_KEYS = ("nic", "topology", "ports", "control", "events")
UDP_PORT_KEYS = ("driver", "local", "peer")
AFPACKET_PORT_KEYS = ("driver", "interface")
OPTIONAL_PORT_KEYS = ("delay_us",)  # one-way link delay added by this sender, default 0
UNIX_PATH_MAX = 107  # sun_path is 108 bytes including the terminating NUL
IFNAMSIZ = 15
# Ethernet 14 + outer IPv6 40 + inner IPv6 40 + UDP 8 + BTH 12 + TSETH 4 + RETH 16
# (docs/wire-format.md section 1): the core always sends a TSETH.
DATA_FRAME_OVERHEAD = 134
ETHERNET_HEADER = 14

# [P] NicConfig's defaults model a hardware NIC: 100 Gb/s ports, 12 us base RTT, 65.5 us
# RTO, 32 us probes. A NIC process on wall-clock time runs behind Python switches that
# forward a few thousand packets per second, with round trips from about a millisecond
# (idle machine) to tens of milliseconds (busy one). So (docs/nic-emu.md section 12):
# NSCC takes a queueing delay above 1 ms as its congestion signal (the switches' socket
# buffers cannot mark ECN, and queueing there delays every acknowledgement, hence loss
# detection), the window starts at 1.5 x (10 Gb/s x 100 us), RTO and probe interval follow
# the measured RTT (RFC 6298) between floors and ceilings, and loss detection needs 3
# later packets (not 16: at a few thousand packets per second 16 take milliseconds).
# Each value can be overridden by name in ``transport``.
PROCESS_TRANSPORT_DEFAULTS: dict[str, Any] = {
    "port_rate_bps": 10_000_000_000,
    "base_rtt_ns": 100_000,
    "adaptive_timers": True,  # RTO and probe interval follow the measured RTT
    "ack_timeout_exp": 17,  # RTO 134 ms: the first RTO and the ceiling
    "rto_min_ns": 50_000_000,  # RTO floor: a stall of a loaded machine is not a loss
    "probe_interval_ns": 100_000_000,  # ceiling of the probe period (= probe timeout)
    "probe_interval_min_ns": 2_000_000,  # its floor; bounds probe traffic
    "ev_skip_ns": 20_000_000,
    "path_quarantine": True,  # hold a path out at its first overdue packet, probe it
    "quarantine_threshold_pkts": 3,
    "quarantine_window_ns": 1_000_000,  # the floor of the quarantine window
    "reorder_threshold_pkts": 3,
    "reorder_window_ns": 1_000_000,  # the floor of RACK's time window
    "sack_delay_ns": 100_000,
    "no_usable_ev_timeout_ns": 5_000_000_000,  # the transfer deadline replaces it per QP
    "peer_timeout_ns": 5_000_000_000,  # a dead peer; > a stall of a loaded machine
    "reverse_refresh_ns": 20_000_000,
    "reverse_plane_stale_ns": 200_000_000,
    # Queueing delay above 1 ms (10 x 100 us) is the congestion signal: the Python
    # switches' socket buffers cannot mark ECN. "No queue" below 50 us.
    "cc": CcConfig(clear_delay_ns=50_000, delay_md=True, target_qdelay_rtts=10),
}


# Time dilation (docs/testbed.md, "Time dilation"): a NIC process run TDF times slower
# than the hardware it stands for takes NicConfig's settings with every time multiplied
# and every rate divided by the time-dilation factor. Each NicConfig / CcConfig field is
# in exactly one of these classes (tests/nic_emu/test_serve_config.py checks that every
# field is classified, so a new timer cannot be left unscaled).
DILATED_TIME_FIELDS = (
    "ev_skip_ns",
    "probe_interval_ns",
    "no_usable_ev_timeout_ns",
    "peer_timeout_ns",
    "reorder_window_ns",
    "quarantine_window_ns",
    "sack_delay_ns",
    "reverse_refresh_ns",
    "reverse_plane_stale_ns",
    "base_rtt_ns",
    "rto_min_ns",
    "probe_interval_min_ns",
)
DILATED_RATE_FIELDS = ("port_rate_bps",)  # divided, rounded to the bit/s
# RTO = 1.024 us x 2^t (mrc.h): the exponent grows by log2(TDF), so the TDF is a power of 2.
DILATED_EXPONENT_FIELDS = ("ack_timeout_exp",)
DILATED_CC_TIME_FIELDS = ("clear_delay_ns",)
# The RoCE baseline: its ACK timeout is 4.096 us x 2^t (IBTA), so its exponent grows by
# log2(TDF) too; DCQCN's timers are times, its rate steps and floor rates.
DILATED_ROCE_EXPONENT_FIELDS = ("ack_timeout_exp",)
DILATED_DCQCN_TIME_FIELDS = (
    "alpha_timer_ns",
    "rate_timer_ns",
    "rate_reduce_period_ns",
    "cnp_interval_ns",
)
DILATED_DCQCN_RATE_FIELDS = ("rate_ai_bps", "rate_hai_bps", "min_rate_bps")


def check_tdf(tdf: int) -> int:
    """``tdf`` unless it is not a power of two >= 1 (ConfigError says why)."""
    if isinstance(tdf, bool) or not isinstance(tdf, int) or tdf < 1 or tdf & (tdf - 1):
        raise ConfigError(
            f"the time-dilation factor must be a power of two >= 1 (the RTO is 1.024 us x "
            f"2^t, mrc.h, so only a power of two scales it exactly), got {tdf!r}"
        )
    return tdf


def dilate_transport(config: NicConfig, tdf: int) -> NicConfig:
    """``config`` run ``tdf`` times slower: times x tdf, rates / tdf, the RTO exponent +
    log2(tdf); counts, sizes in packets or bytes and ratios unchanged (so windows and
    BDPs in bytes stay the same)."""
    check_tdf(tdf)
    shift = tdf.bit_length() - 1
    values: dict[str, Any] = {name: getattr(config, name) * tdf for name in DILATED_TIME_FIELDS}
    values.update(
        {name: max(1, round(getattr(config, name) / tdf)) for name in DILATED_RATE_FIELDS}
    )
    values.update({name: getattr(config, name) + shift for name in DILATED_EXPONENT_FIELDS})
    values["cc"] = replace(
        config.cc, **{name: getattr(config.cc, name) * tdf for name in DILATED_CC_TIME_FIELDS}
    )
    dcqcn = config.roce.dcqcn
    try:
        values["roce"] = replace(
            config.roce,
            **{name: getattr(config.roce, name) + shift for name in DILATED_ROCE_EXPONENT_FIELDS},
            dcqcn=replace(
                dcqcn,
                **{name: getattr(dcqcn, name) * tdf for name in DILATED_DCQCN_TIME_FIELDS},
                **{
                    name: max(1, round(getattr(dcqcn, name) / tdf))
                    for name in DILATED_DCQCN_RATE_FIELDS
                },
            ),
        )
    except ConfigError as exc:
        raise ConfigError(f"time-dilation factor {tdf}: {exc}") from None
    try:
        return replace(config, **values)
    except ConfigError as exc:
        raise ConfigError(f"time-dilation factor {tdf}: {exc}") from None


def dilated_transport(overrides: object, tdf: int) -> dict[str, Any]:
    """The ``transport`` of a fabric run ``tdf`` times slower (``mrc-testbed up --tdf``):
    NicConfig's own defaults (the virtual fabric's, not the process defaults) with
    ``overrides`` applied, dilated by ``tdf``, every field given."""
    return transport_overrides(dilate_transport(transport_config(overrides, NicConfig()), tdf))


def transport_overrides(config: NicConfig) -> dict[str, Any]:
    """Every setting of ``config`` as a ``transport`` object (JSON values): given to
    ``nic-emu serve``, it reproduces ``config`` exactly, whatever the process defaults.
    The same object as ``nic_emu.config.config_as_dict`` (one home for NicConfig as JSON)."""
    return config_as_dict(config)


@dataclass(frozen=True, slots=True)
class UdpPortSpec:
    """A NIC port on a UDP socket: its plane, the local and peer (host, port) addresses and
    the delay in us before a transmitted frame goes on the socket."""

    plane: int
    local: tuple[str, int]
    peer: tuple[str, int]
    delay_us: float = 0.0  # frames go on the socket this long after they are transmitted


@dataclass(frozen=True, slots=True)
class AfPacketPortSpec:
    """A NIC port on a Linux interface (AF_PACKET): its plane, the interface name and the
    delay in us before a transmitted frame goes out."""

    plane: int
    interface: str
    delay_us: float = 0.0


PortSpec = UdpPortSpec | AfPacketPortSpec


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """A checked ``serve`` configuration: the NIC's name, the topology and address plan, its
    ports by plane, the control socket and event log paths, the seed, the transport settings
    and the size in bytes past which the event log rotates."""

    nic: str
    topology: Topology
    plan: AddressPlan
    ports: dict[int, PortSpec]
    control: Path
    events: Path
    seed: int
    transport: NicConfig
    events_max_bytes: int = DEFAULT_EVENTS_MAX_BYTES  # the event log rotates past this

    @property
    def max_data_frame(self) -> int:
        """Bytes of the largest data frame this NIC sends (for interface MTU checks)."""
        return DATA_FRAME_OVERHEAD + self.transport.mtu_payload


def load_serve_config(path: str | os.PathLike[str]) -> ServeConfig:
    """Read and check a configuration file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ServeConfigError("config", f"cannot read the file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ServeConfigError("config", "the file is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ServeConfigError(
            "config", f"the file is not JSON: {exc.msg} at line {exc.lineno}"
        ) from None
    return parse_serve_config(data)


def parse_serve_config(data: object) -> ServeConfig:
    """Check a configuration already parsed from JSON."""
    if not isinstance(data, dict):
        raise ServeConfigError("config", f"must be a JSON object, got {_kind(data)}")
    for key in data:
        if key not in CONFIG_KEYS:
            raise ServeConfigError(key, f"unknown key{_suggest(key, CONFIG_KEYS)}")
    for key in REQUIRED_KEYS:
        if key not in data:
            raise ServeConfigError(key, "missing field")
    topology_ref = _string(data, "topology")
    try:
        topology = load(topology_ref)
    except TopologyError as exc:
        raise ServeConfigError("topology", str(exc)) from None
    except OSError as exc:
        raise ServeConfigError("topology", f"cannot read {topology_ref}: {exc.strerror}") from None
    nic_ref = _string(data, "nic")
    try:
        nic = topology.nic(nic_ref).name
    except TopologyError:
        raise ServeConfigError(
            "nic",
            f"{nic_ref!r} is not a NIC of topology {topology.name} "
            f"(nic0..nic{topology.nic_count - 1})",
        ) from None
    ports = _ports(data["ports"], topology)
    control = _path(data, "control", socket=True)
    events = _path(data, "events", socket=False)
    if control == events:
        raise ServeConfigError("events", "must not be the control socket's path")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ServeConfigError("seed", f"must be a non-negative integer, got {seed!r}")
    transport = transport_config(data.get("transport", {}))
    plan = AddressPlan(topology)
    try:
        NicCore(nic, plan, transport)  # the core's own checks against the topology
    except ConfigError as exc:
        raise ServeConfigError(_blame(str(exc), data.get("transport", {})), str(exc)) from None
    max_bytes = data.get("events_max_bytes", DEFAULT_EVENTS_MAX_BYTES)
    if (
        isinstance(max_bytes, bool)
        or not isinstance(max_bytes, int)
        or max_bytes < MIN_EVENTS_MAX_BYTES
    ):
        raise ServeConfigError(
            "events_max_bytes",
            f"must be an integer of at least {MIN_EVENTS_MAX_BYTES} bytes, got {max_bytes!r}",
        )
    return ServeConfig(nic, topology, plan, ports, control, events, seed, transport, max_bytes)


# ---------------------------------------------------------------------- transport


def transport_config(overrides: object, base: NicConfig | None = None) -> NicConfig:
    """``base`` (default :data:`PROCESS_TRANSPORT_DEFAULTS`) with ``overrides`` (NicConfig
    field names; ``cc`` an object of CcConfig field names; ``mode`` ``"mrc"`` or
    ``"roce"``) applied."""
    if not isinstance(overrides, dict):
        raise ServeConfigError("transport", f"must be a JSON object, got {_kind(overrides)}")
    start = replace(NicConfig(), **PROCESS_TRANSPORT_DEFAULTS) if base is None else base
    values = _settings(
        overrides,
        "transport",
        "transport",
        NicConfig(),  # each value has the type of the field's own default
        readers={
            "cc": lambda raw, _key: _cc_config(raw, start.cc),
            "roce": lambda raw, _key: _roce_config(raw, start.roce),
            "mode": _mode,
        },
    )
    try:
        return replace(start, **values)  # checked as a whole: values may depend on each other
    except ConfigError as exc:
        for name, value in values.items():
            try:
                replace(start, **{name: value})  # blame a bad value on its own key
            except ConfigError as own:
                raise ServeConfigError(f"transport.{name}", str(own)) from None
        raise ServeConfigError(_blame(str(exc), overrides), str(exc)) from None


def _settings(
    raw: object,
    key: str,
    what: str,
    defaults: Any,
    *,
    readers: Mapping[str, Callable[[object, str], Any]] | None = None,
    check: Callable[[str, Any, str], None] | None = None,
) -> dict[str, Any]:
    """The one reader of a settings object (``transport``, ``transport.cc``,
    ``transport.roce``, ``transport.roce.dcqcn``): a JSON object of the field names of
    ``defaults`` (a dataclass), each value of the type of its default in ``defaults``, or
    read by ``readers[name](value, key)`` (objects, enums); ``check(name, value, key)``
    vets each value as it is read. Unknown names are refused with the closest known one."""
    if not isinstance(raw, dict):
        raise ServeConfigError(key, f"must be a JSON object, got {_kind(raw)}")
    known = [f.name for f in fields(defaults)]
    values: dict[str, Any] = {}
    for name, value in raw.items():
        where = f"{key}.{name}"
        if name not in known:
            raise ServeConfigError(where, f"unknown {what} setting{_suggest(name, known)}")
        read = readers.get(name) if readers is not None else None
        if read is not None:
            values[name] = read(value, where)
        else:
            values[name] = _typed(where, value, getattr(defaults, name))
        if check is not None:
            check(name, values[name], where)
    return values


def _mode(raw: object, key: str) -> TransportMode:
    modes = [m.value for m in TransportMode]
    if raw not in modes:
        raise ServeConfigError(key, f"must be one of {modes}, got {raw!r}")
    return TransportMode(raw)


def _roce_config(raw: object, base: RoceConfig) -> RoceConfig:
    """``transport.roce``: RoceConfig field names, ``dcqcn`` an object of DcqcnConfig's."""

    def dcqcn(value: object, key: str) -> DcqcnConfig:
        settings = _settings(value, key, "DCQCN", base.dcqcn)
        try:
            return replace(base.dcqcn, **settings)
        except ConfigError as exc:
            raise ServeConfigError(key, str(exc)) from None

    values = _settings(raw, "transport.roce", "RoCE", base, readers={"dcqcn": dcqcn})
    try:
        return replace(base, **values)
    except ConfigError as exc:
        raise ServeConfigError("transport.roce", str(exc)) from None


def _cc_config(raw: object, base: CcConfig) -> CcConfig:
    def alone(name: str, value: Any, key: str) -> None:
        try:
            replace(base, **{name: value})
        except ConfigError as exc:
            raise ServeConfigError(key, str(exc)) from None

    values = _settings(raw, "transport.cc", "congestion-control", CcConfig(), check=alone)
    return replace(base, **values)


def _typed(key: str, raw: object, default: object) -> object:
    """``raw`` checked against the type of the setting's default."""
    if isinstance(default, bool):
        if not isinstance(raw, bool):
            raise ServeConfigError(key, f"must be true or false, got {raw!r}")
    elif isinstance(default, int):
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise ServeConfigError(key, f"must be an integer, got {raw!r}")
    elif isinstance(default, float):
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise ServeConfigError(key, f"must be a number, got {raw!r}")
        return float(raw)
    return raw


def _blame(message: str, overrides: object) -> str:
    """The ``transport.<name>`` key a cross-field error message is about, if one."""
    if isinstance(overrides, dict):
        named = [name for name in overrides if re.search(rf"\b{re.escape(name)}\b", message)]
        if len(named) == 1:
            return f"transport.{named[0]}"
    return "transport"


# ---------------------------------------------------------------------- ports


def _ports(raw: object, topology: Topology) -> dict[int, PortSpec]:
    if not isinstance(raw, dict):
        raise ServeConfigError("ports", f"must be a JSON object, got {_kind(raw)}")
    if not raw:
        raise ServeConfigError("ports", "needs at least one plane's port")
    planes = topology.plane_count
    out: dict[int, PortSpec] = {}
    for plane_text, spec in raw.items():
        key = f"ports.{plane_text}"
        if not re.fullmatch(r"\d{1,4}", plane_text):
            raise ServeConfigError(key, "a port's key is its plane number")
        plane = int(plane_text)
        if plane >= planes:
            raise ServeConfigError(
                key,
                f"plane {plane} is out of range: topology {topology.name} has planes "
                f"0..{planes - 1}",
            )
        if plane in out:
            raise ServeConfigError(key, f"plane {plane} is given twice")
        out[plane] = _port(key, plane, spec)
    return out


def _port(key: str, plane: int, spec: object) -> PortSpec:
    if not isinstance(spec, dict):
        raise ServeConfigError(key, f"must be a JSON object, got {_kind(spec)}")
    if "driver" not in spec:
        raise ServeConfigError(f"{key}.driver", "missing field")
    driver = spec["driver"]
    if driver == "udp":
        allowed: tuple[str, ...] = UDP_PORT_KEYS
    elif driver == "afpacket":
        allowed = AFPACKET_PORT_KEYS
    else:
        raise ServeConfigError(
            f"{key}.driver", f"unknown driver {driver!r} (known: 'udp', 'afpacket')"
        )
    for name in spec:
        if name not in allowed and name not in OPTIONAL_PORT_KEYS:
            known = (*allowed, *OPTIONAL_PORT_KEYS)
            raise ServeConfigError(
                f"{key}.{name}", f"unknown key for a {driver} port{_suggest(name, known)}"
            )
    for name in allowed:
        if name not in spec:
            raise ServeConfigError(f"{key}.{name}", "missing field")
    delay_us = _delay_us(f"{key}.delay_us", spec.get("delay_us", 0.0))
    if driver == "udp":
        return UdpPortSpec(
            plane,
            _address(f"{key}.local", spec["local"]),
            _address(f"{key}.peer", spec["peer"]),
            delay_us,
        )
    interface = spec["interface"]
    if not isinstance(interface, str) or not re.fullmatch(rf"[^\s/:]{{1,{IFNAMSIZ}}}", interface):
        raise ServeConfigError(
            f"{key}.interface", f"{interface!r} is not a Linux interface name (1-15 characters)"
        )
    return AfPacketPortSpec(plane, interface, delay_us)


def _delay_us(key: str, raw: object) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise ServeConfigError(key, f"must be a number of microseconds >= 0, got {raw!r}")
    if not math.isfinite(raw) or raw < 0:
        raise ServeConfigError(key, f"must be a finite number of microseconds >= 0, got {raw!r}")
    return float(raw)


def _address(key: str, raw: object) -> tuple[str, int]:
    if not isinstance(raw, str):
        raise ServeConfigError(key, f"must be a string HOST:PORT, got {raw!r}")
    host, colon, port_text = raw.rpartition(":")
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        raise ServeConfigError(key, f"{raw!r} is not IPV4-ADDRESS:PORT") from None
    if not colon or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ServeConfigError(key, f"{raw!r} does not end in a UDP port 1..65535")
    return host, int(port_text)


# ---------------------------------------------------------------------- helpers


def _string(data: Mapping[str, object], key: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not value:
        raise ServeConfigError(key, f"must be a non-empty string, got {value!r}")
    return value


def _path(data: Mapping[str, object], key: str, *, socket: bool) -> Path:
    path = Path(_string(data, key))
    if socket and len(os.fsencode(path)) > UNIX_PATH_MAX:
        raise ServeConfigError(
            key, f"{path} is longer than {UNIX_PATH_MAX} bytes, the Unix socket path limit"
        )
    if not path.parent.is_dir():
        raise ServeConfigError(key, f"directory {path.parent} does not exist")
    if path.is_dir():
        raise ServeConfigError(key, f"{path} is a directory")
    return path


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string"}
    return names.get(type(value), repr(value))


def _suggest(name: str, known: Mapping[str, object] | tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
