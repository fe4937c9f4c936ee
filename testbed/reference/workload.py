"""One description of a fabric and its traffic, for both htsim and the virtual fabric.

A :class:`Workload` names a two-tier fat tree by its host count (htsim's ``-nodes N
-tiers 2``: N = K²/2 hosts, K T0 switches with K/2 hosts and K/2 uplinks each, K/2 T1
switches), the link rate and latency, where queues start trimming, and the traffic:
``permutation``, ``all_to_all`` or ``incast`` (``fan_in`` senders, optionally a
``victim`` flow beside it). :meth:`Workload.flows` draws the flows from the seed, once,
so both simulators get the same permutation, the same incast senders and the same
victim. Everything both sides need (:class:`FabricShape`) is derived here, in one place:
docs/reference-htsim.md ("One description, both inputs") lists it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from mrc_wire.codec import header_length
from mrc_wire.constants import BASE_HEADERS_LEN, BTH_LEN, SACK_LEN
from mrc_wire.queues import MAX_QDEPTH_VALUE, QueueDepthError, queue_thresholds
from nic_emu.config import NicConfig
from testbed.reference.exceptions import WorkloadError
from topologies import yamlfile

TRAFFIC_KINDS = ("permutation", "all_to_all", "incast")
FAT_TREE_DIAMETER_HOPS = 4  # host -> T0 -> T1 -> T0 -> host, htsim's "diameter"
MIB = 1 << 20
MIN_END_US = 10_000  # both runs stop here at the earliest ...
END_SLACK = 50  # ... or at this many times the busiest host's line-rate time

# The bytes a full data packet and an acknowledgement put on the wire in the virtual
# fabric: our NIC's MTU payload behind its headers (outer IPv6, inner IPv6, UDP, BTH with
# its timestamp, RETH; no SRH on a two-tier path), and a SACK frame. htsim is given the
# same packet size (``-mtu``), so a queue of N packets holds the same bytes on both sides.
DATA_FRAME_BYTES = NicConfig().mtu_payload + header_length(timestamp=True)
ACK_FRAME_BYTES = BASE_HEADERS_LEN + BTH_LEN + SACK_LEN


@dataclass(frozen=True)
class Flow:
    """One flow: ``id`` is htsim's connection id (1-based, the .cm line order);
    ``start_us``: when it starts, in whole µs (htsim's .cm takes whole µs)."""

    id: int
    src: int
    dst: int
    size: int
    role: str  # "flow" (permutation, all-to-all), "incast" or "victim"
    start_us: int = 0


@dataclass(frozen=True)
class FabricShape:
    """The numbers both simulators are given, derived once from a :class:`Workload`."""

    hosts: int
    k: int  # T0 switches; K/2 hosts and K/2 uplinks per T0; K/2 T1 switches
    rate_gbps: float
    delay_us: float
    data_frame_bytes: int
    trim_packets: int  # a data packet arriving at this depth is trimmed (htsim: -q)
    queue_packets: int  # our egress queue depth whose trim threshold is trim_packets
    ecn_low_packets: int  # ECN marking starts above ... (htsim: -ecn LOW HIGH)
    ecn_high_packets: int  # ... and marks every packet above this
    base_rtt_ns: int  # our NICs' configured base RTT (htsim computes the same for NSCC)

    @property
    def hosts_per_t0(self) -> int:
        return self.k // 2

    def t0_of(self, host: int) -> int:
        """The T0 switch host ``host`` hangs off (htsim's HOST_POD_SWITCH, our NIC map)."""
        return host // self.hosts_per_t0


def fat_tree_k(hosts: int) -> int | None:
    """K of a two-tier fat tree of ``hosts`` = K²/2 hosts (K even), or None."""
    k = math.isqrt(2 * hosts)
    return k if k >= 2 and k % 2 == 0 and k * k // 2 == hosts else None


def base_rtt_ns(rate_gbps: float, delay_us: float) -> float:
    """The fat tree's unloaded RTT as htsim computes it for NSCC and its default queue
    (``calculate_rtt`` in main_uec.cpp): propagation across the diameter both ways, and
    one data packet's and one ack's serialisation per hop."""
    hop_ns = delay_us * 1000
    serialise_ns = (DATA_FRAME_BYTES + ACK_FRAME_BYTES) * 8 / rate_gbps
    return FAT_TREE_DIAMETER_HOPS * (2 * hop_ns + serialise_ns)


def bdp_packets(rate_gbps: float, delay_us: float) -> int:
    """One bandwidth-delay product in data packets, rounded up, as htsim sizes its
    default queue (``calculate_bdp_pkt``)."""
    return math.ceil(base_rtt_ns(rate_gbps, delay_us) * rate_gbps / 8 / DATA_FRAME_BYTES)


def queue_for_trim(trim_packets: int) -> int:
    """The smallest egress queue depth of ours whose trim threshold is ``trim_packets``
    (``mrc_wire.queues``: trimming starts at 3/4 of the queue)."""
    for depth in range(trim_packets, MAX_QDEPTH_VALUE + 1):
        try:
            trim = queue_thresholds(depth).trim_qdepth
        except QueueDepthError:
            continue
        if trim >= trim_packets:
            return depth
    raise ValueError(f"no queue depth trims at {trim_packets} packets")


def end_us(shape: FabricShape, flows: Sequence[Flow]) -> int:
    """Where both runs stop (htsim's ``-end``, the virtual fabric's ``until_ns``):
    generous beside the busiest host's line-rate time, after the latest start."""
    load: dict[tuple[str, int], int] = {}
    for f in flows:
        load[("tx", f.src)] = load.get(("tx", f.src), 0) + f.size
        load[("rx", f.dst)] = load.get(("rx", f.dst), 0) + f.size
    ideal_us = max(load.values(), default=0) * 8 / (shape.rate_gbps * 1000)
    latest_start = max((f.start_us for f in flows), default=0)
    return max(MIN_END_US, latest_start + round(END_SLACK * ideal_us))


@dataclass(frozen=True)
class Workload:
    """A fabric and its traffic; see the module docstring. Sizes are bytes."""

    name: str
    hosts: int
    traffic: str
    size_bytes: int
    seed: int = 1
    fan_in: int | None = None  # incast only: senders into one receiver
    victim: bool = False  # incast only: a flow beside the incast
    victim_bytes: int | None = None  # default: twice size_bytes
    victim_start_us: int = 0  # the victim starts this long after the incast (whole µs)
    rate_gbps: float = 100.0
    delay_us: float = 1.0
    trim_packets: int | None = None  # default: one BDP (htsim's default queue)
    base_rtt_ns: int | None = None  # our NICs' base RTT; default: the fabric's, as htsim's
    source: str = "workload"  # how errors name the description

    def __post_init__(self) -> None:
        self.validate()

    # ------------------------------------------------------------------ checking

    def _bad(self, key: str, reason: str) -> WorkloadError:
        return WorkloadError(f"{self.source} {self.name!r}", key, reason)

    def validate(self) -> None:
        for key in ("hosts", "size_bytes", "seed"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int):
                raise self._bad(key, f"must be an integer, got {yamlfile.show(value)}")
        if fat_tree_k(self.hosts) is None:
            sizes = ", ".join(str(k * k // 2) for k in range(4, 18, 2))
            raise self._bad(
                "hosts",
                f"{self.hosts} is not a two-tier fat tree's host count K²/2 with K even "
                f"({sizes}, ...)",
            )
        if self.traffic not in TRAFFIC_KINDS:
            raise self._bad(
                "traffic", f"unknown kind {self.traffic!r} (known: {', '.join(TRAFFIC_KINDS)})"
            )
        if self.size_bytes < 1:
            raise self._bad("size_bytes", f"must be at least 1, got {self.size_bytes}")
        for key in ("rate_gbps", "delay_us"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise self._bad(key, f"must be a positive number, got {yamlfile.show(value)}")
        if self.trim_packets is not None and (
            isinstance(self.trim_packets, bool)
            or not isinstance(self.trim_packets, int)
            or not 3 <= self.trim_packets <= queue_thresholds(MAX_QDEPTH_VALUE).trim_qdepth
        ):
            raise self._bad(
                "trim_packets", f"must be an integer of at least 3, got {self.trim_packets!r}"
            )
        if self.base_rtt_ns is not None and (
            isinstance(self.base_rtt_ns, bool)
            or not isinstance(self.base_rtt_ns, int)
            or self.base_rtt_ns < 1
        ):
            raise self._bad("base_rtt_ns", f"must be a positive integer, got {self.base_rtt_ns!r}")
        if self.traffic == "incast":
            self._validate_incast()
        else:
            for key in ("fan_in", "victim_bytes"):
                if getattr(self, key) is not None:
                    raise self._bad(key, f"only an incast has one, not a {self.traffic}")
            if self.victim_start_us:
                raise self._bad(
                    "victim_start_us", f"only an incast has a victim, not a {self.traffic}"
                )
            if self.victim:
                raise self._bad("victim", f"only an incast has a victim, not a {self.traffic}")

    def _validate_incast(self) -> None:
        fan_in = self.fan_in
        if isinstance(fan_in, bool) or not isinstance(fan_in, int) or fan_in < 1:
            raise self._bad("fan_in", f"an incast needs fan_in >= 1, got {fan_in!r}")
        hosts_per_t0 = (fat_tree_k(self.hosts) or 0) // 2
        spare = 3 if self.victim else 1  # the receiver, and the victim's two ends
        if fan_in > self.hosts - spare:
            raise self._bad(
                "fan_in",
                f"{fan_in} senders do not fit in {self.hosts} hosts beside the receiver"
                + (" and the victim's two ends" if self.victim else ""),
            )
        if self.victim and hosts_per_t0 < 2:
            raise self._bad("victim", "the victim's receiver needs a second host on a T0")
        if self.victim_bytes is not None and (
            isinstance(self.victim_bytes, bool)
            or not isinstance(self.victim_bytes, int)
            or self.victim_bytes < 1
        ):
            raise self._bad(
                "victim_bytes", f"must be a positive integer, got {self.victim_bytes!r}"
            )
        if self.victim_bytes is not None and not self.victim:
            raise self._bad("victim_bytes", "set without victim: true")
        start = self.victim_start_us
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise self._bad(
                "victim_start_us", f"must be a whole number of µs, at least 0, got {start!r}"
            )
        if start and not self.victim:
            raise self._bad("victim_start_us", "set without victim: true")

    # ------------------------------------------------------------------ derived

    @property
    def shape(self) -> FabricShape:
        k = fat_tree_k(self.hosts)
        assert k is not None  # validated
        trim = (
            self.trim_packets
            if self.trim_packets is not None
            else bdp_packets(self.rate_gbps, self.delay_us)
        )
        queue = queue_for_trim(trim)
        thresholds = queue_thresholds(queue)
        return FabricShape(
            hosts=self.hosts,
            k=k,
            rate_gbps=float(self.rate_gbps),
            delay_us=float(self.delay_us),
            data_frame_bytes=DATA_FRAME_BYTES,
            trim_packets=thresholds.trim_qdepth,
            queue_packets=queue,
            ecn_low_packets=thresholds.ecn_min_qdepth,
            ecn_high_packets=thresholds.ecn_max_qdepth,
            base_rtt_ns=self.base_rtt_ns
            if self.base_rtt_ns is not None
            else round(base_rtt_ns(self.rate_gbps, self.delay_us)),
        )

    @property
    def victim_size(self) -> int:
        return self.victim_bytes if self.victim_bytes is not None else 2 * self.size_bytes

    def _rng(self) -> random.Random:
        return random.Random(f"htsim-diff:{self.traffic}:{self.hosts}:{self.seed}")

    def flows(self) -> list[Flow]:
        """The flows, in htsim connection-id order; all start at 0 but an incast's victim,
        which starts at ``victim_start_us``."""
        if self.traffic == "permutation":
            pairs = [(s, d, "flow") for s, d in enumerate(self._derangement())]
        elif self.traffic == "all_to_all":
            pairs = [(s, d, "flow") for s in range(self.hosts) for d in range(self.hosts) if s != d]
        else:
            pairs = self._incast_pairs()
        return [
            Flow(i + 1, s, d, self.victim_size, role, self.victim_start_us)
            if role == "victim"
            else Flow(i + 1, s, d, self.size_bytes, role)
            for i, (s, d, role) in enumerate(pairs)
        ]

    def _derangement(self) -> list[int]:
        rng = self._rng()
        hosts = list(range(self.hosts))
        while True:
            rng.shuffle(hosts)
            if all(d != s for s, d in enumerate(hosts)):
                return hosts

    def _incast_pairs(self) -> list[tuple[int, int, str]]:
        """Receiver drawn from the seed; senders off the receiver's T0 first (so the incast
        crosses the T1s); the victim runs from a host off that T0 to a neighbour of the
        receiver, sharing the T1 -> T0 links but not the receiver's own downlink."""
        assert self.fan_in is not None
        shape = self.shape
        rng = self._rng()
        receiver = rng.randrange(self.hosts)
        t0 = shape.t0_of(receiver)
        neighbours = [h for h in range(self.hosts) if shape.t0_of(h) == t0 and h != receiver]
        far = [h for h in range(self.hosts) if shape.t0_of(h) != t0]
        rng.shuffle(neighbours)
        rng.shuffle(far)
        victim_pair: tuple[int, int] | None = None
        if self.victim:
            victim_dst = neighbours.pop()
            victim_src = far.pop() if far else neighbours.pop()
            victim_pair = (victim_src, victim_dst)
        senders = (far + neighbours)[: self.fan_in]
        pairs = [(s, receiver, "incast") for s in sorted(senders)]
        if victim_pair is not None:
            pairs.append((*victim_pair, "victim"))
        return pairs


def check_flows(hosts: int, flows: Sequence[Flow], source: str = "flows") -> None:
    """Flows both simulators can take: hosts in range, no flow to itself, one flow per
    (source, destination) pair (htsim names a flow by its pair), distinct ids from 1."""
    seen: set[tuple[int, int]] = set()
    ids: set[int] = set()
    for index, f in enumerate(flows):
        key = f"flows[{index}]"
        for end in ("src", "dst"):
            host = getattr(f, end)
            if not 0 <= host < hosts:
                raise WorkloadError(
                    source, f"{key}.{end}", f"host {host} is not in the fabric's 0..{hosts - 1}"
                )
        if f.src == f.dst:
            raise WorkloadError(source, key, f"flow from host {f.src} to itself")
        if (f.src, f.dst) in seen:
            raise WorkloadError(source, key, f"a second flow {f.src}->{f.dst}")
        seen.add((f.src, f.dst))
        if f.id < 1 or f.id in ids:
            raise WorkloadError(source, f"{key}.id", f"{f.id} is not a new id of at least 1")
        ids.add(f.id)
        if f.size < 1:
            raise WorkloadError(source, f"{key}.size", f"must be at least 1, got {f.size}")
        if isinstance(f.start_us, bool) or not isinstance(f.start_us, int) or f.start_us < 0:
            raise WorkloadError(
                source, f"{key}.start_us", f"must be a whole number of µs, got {f.start_us!r}"
            )


def victim_only(workload: Workload) -> list[Flow]:
    """The victim flow of ``workload`` alone (same ids as in :meth:`Workload.flows`)."""
    return [f for f in workload.flows() if f.role == "victim"]


# ---------------------------------------------------------------------- descriptions

_SIZE_UNITS = {"GiB": 1 << 30, "MiB": 1 << 20, "KiB": 1 << 10, "B": 1}  # largest first


def parse_size(text: str | int, source: str = "size") -> int:
    """``4MiB``, ``512KiB``, ``4096`` or ``4096B`` -> bytes."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    value = str(text).strip()
    for unit, factor in _SIZE_UNITS.items():
        if value.endswith(unit) and value[: -len(unit)].strip().isdigit():
            return int(value[: -len(unit)]) * factor
    if value.isdigit():
        return int(value)
    raise WorkloadError(source, "", f"{text!r} is not a size like 4MiB, 512KiB or 4096")


_FIELDS = {f.name for f in fields(Workload)} - {"source"}


def from_mapping(doc: Any, source: str) -> Workload:
    """A workload from its YAML form::

    name: perm-32          # optional
    hosts: 32
    traffic: permutation   # permutation | all_to_all | incast
    size: 4MiB             # or size_bytes: 4194304
    seed: 1
    fan_in: 7              # incast
    victim: true           # incast
    victim_size: 4MiB      # incast with a victim
    victim_start_us: 30    # incast with a victim: it starts 30 µs after the incast
    rate_gbps: 100
    delay_us: 1
    trim_packets: 28       # default: one BDP
    """
    if not isinstance(doc, Mapping):
        raise WorkloadError(source, "", f"expected a mapping, got {yamlfile.show(doc)}")
    values = dict(doc)
    for short, full in (("size", "size_bytes"), ("victim_size", "victim_bytes")):
        if short in values:
            if full in values:
                raise WorkloadError(source, short, f"give {short} or {full}, not both")
            values[full] = parse_size(values.pop(short), f"{source}: {short}")
    unknown = sorted(set(values) - _FIELDS)
    if unknown:
        raise WorkloadError(
            source, str(unknown[0]), f"unknown key (known: {', '.join(sorted(_FIELDS))})"
        )
    for key in ("hosts", "traffic", "size_bytes"):
        if key not in values:
            raise WorkloadError(source, key, "missing")
    values.setdefault("name", default_name(values))
    try:
        return Workload(**values, source=source)
    except TypeError as exc:
        raise WorkloadError(source, "", str(exc)) from None


def default_name(values: Mapping[str, Any]) -> str:
    traffic = values.get("traffic")
    size = values.get("size_bytes")
    size_text = f"{size}B"
    if isinstance(size, int):
        for unit, factor in _SIZE_UNITS.items():
            if factor > 1 and size % factor == 0:
                size_text = f"{size // factor}{unit}"
                break
    parts = [str(traffic), str(values.get("hosts"))]
    if traffic == "incast":
        parts.append(f"{values.get('fan_in')}to1")
        if values.get("victim"):
            start = values.get("victim_start_us")
            parts.append(f"victim{start}us" if start else "victim")
    parts += [size_text, f"s{values.get('seed', 1)}"]
    if values.get("base_rtt_ns") is not None:
        parts.append(f"rtt{values['base_rtt_ns']}")
    return "-".join(parts)


def load(path: str | Path) -> list[Workload]:
    """Workloads from a YAML file: one mapping, or a list of them."""
    shown = str(path)

    def file_error(message: str) -> Exception:
        return WorkloadError(shown, "", message)

    def spec_error(source: str, key: str, reason: str) -> Exception:
        return WorkloadError(source, key, reason)

    text = yamlfile.read_text(Path(path), shown, file_error)
    doc = yamlfile.parse(text, shown, file_error=file_error, spec_error=spec_error)
    docs = doc if isinstance(doc, list) else [doc]
    return [from_mapping(d, f"{shown}[{i}]") for i, d in enumerate(docs)]
