"""Priority flow control in the virtual fabric (vfabric.pfc, docs/virtual-fabric.md)."""

from __future__ import annotations

from typing import Any

import pytest

from mrc_wire.constants import ETH_LEN, Dscp
from mrc_wire.queues import DATA_PRIORITY, DEFAULT_CONTROL_PRIORITY
from topologies import Role
from vfabric import VirtualFabric
from vfabric.exceptions import FabricSetupError
from vfabric.pfc import PfcConfig, default_headroom, frame_priority

SENDERS = ("nic0", "nic1", "nic4", "nic5", "nic6", "nic7")  # 6-to-1 into nic2 (small)


def _incast(pfc: PfcConfig | None, transport: str = "roce") -> dict[str, Any]:
    fabric = VirtualFabric("small", seed=1, pfc=pfc)
    transfers = [fabric.transfer(s, "nic2", 512 << 10, transport=transport) for s in SENDERS]
    finished = fabric.run(until_ns=1_000_000_000)  # RoCE's ACK timeout is 67 ms
    links = fabric.link_counters()
    return {
        "fabric": fabric,
        "finished": finished,
        "intact": all(t.intact for t in transfers),
        "losses": sum(
            r["trims"] + r["queue_limit_drops"] + r["tail_drops"] + sum(r["drops"].values())
            for r in links.values()
        ),
        "results": fabric.results(),
    }


@pytest.fixture(scope="module")
def lossless() -> dict[str, Any]:
    return _incast(PfcConfig())


def test_incast_is_lossless_in_the_lossless_class(lossless: dict[str, Any]) -> None:
    assert lossless["finished"] and lossless["intact"]
    assert lossless["losses"] == 0
    pfc = lossless["results"]["pfc"]
    assert pfc["headroom_drops"] == 0
    assert pfc["pauses_sent"] > 0 and pfc["pauses_received"] == pfc["pauses_sent"]
    assert pfc["paused_ns"] > 0


def test_pause_and_resume_at_the_thresholds(lossless: dict[str, Any]) -> None:
    fabric: VirtualFabric = lossless["fabric"]
    cfg = PfcConfig()
    seen = 0
    for pfc in fabric._pfc_switches.values():
        state: dict[tuple[int, int], bool] = {}
        for _, port, priority, pause, held in pfc.history:
            assert priority == DATA_PRIORITY
            key = (port, priority)
            assert state.get(key, False) != pause  # alternate: pause, resume, pause...
            state[key] = pause
            if pause:
                assert cfg.xoff <= held <= cfg.xoff + pfc.headroom[port]
            else:
                assert held <= cfg.xon
            seen += 1
        assert not any(state.values())  # everything resumed once the incast drained
    assert seen


def test_pauses_spread_across_hops(lossless: dict[str, Any]) -> None:
    """The receiver's T0 pauses the T1s, which pause the senders' T0s, which pause the
    senders' NICs: congestion spreads back hop by hop."""
    fabric: VirtualFabric = lossless["fabric"]
    roles = {sw.name: sw.role for sw in fabric.topology.switches}
    by_role: dict[Role, int] = {}
    for name, pfc in fabric._pfc_switches.items():
        sent = sum(1 for h in pfc.history if h[3])
        by_role[roles[name]] = by_role.get(roles[name], 0) + sent
    assert by_role.get(Role.T1, 0) > 0  # a T1 paused a T0 upstream of it
    rows = lossless["results"]["pfc"]["per_link"]
    paused_nics = {n.split("->")[0] for n, r in rows.items() if r["pauses_received"]}
    assert paused_nics & set(SENDERS)  # ... down to the senders' NICs
    assert any(n.split("->")[0] in roles and roles[n.split("->")[0]] is Role.T0 for n in rows)


def test_without_pfc_the_same_incast_loses_packets() -> None:
    """Negative control: the same incast with PFC off loses packets in that class."""
    lossy = _incast(None)
    assert lossy["losses"] > 0
    # go-back-N recovers them, at the price of the ACK timeout for a lost tail
    assert lossy["intact"]
    assert "pfc" not in lossy["results"]


def test_pfc_off_leaves_mrc_runs_unchanged() -> None:
    """A fabric without PFC installs nothing: no hooks on the switches."""
    fabric = VirtualFabric("tiny", seed=0)
    assert all(n.switch.admission_callback is None for n in fabric.switches.values())
    assert all(n.pfc is None for n in fabric.nics.values())


def test_default_headroom_is_a_round_trip_plus_two_frames() -> None:
    # 1 us each way at 100 Gb/s: 25,000 bytes on the wire, two 4230-byte frames, the pause
    assert default_headroom(100e9, 1000, 4230) == 25_000 + 2 * 4230 + 64


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"priorities": ()}, "non-empty list"),
        ({"priorities": (8,)}, "outside 0..7"),
        ({"priorities": (0, 0)}, "repeat"),
        ({"xoff": 0, "xon": 0}, "xoff must be > 0"),
        ({"xon": 30_000}, "must be below xoff"),
        ({"headroom": -1}, "headroom must be bytes > 0"),
        ({"xoff": "big"}, "xoff must be bytes"),
    ],
)
def test_bad_pfc_settings_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(FabricSetupError, match=message):
        PfcConfig(**kwargs)


def test_pfc_must_be_a_pfc_config() -> None:
    with pytest.raises(FabricSetupError, match="PfcConfig"):
        VirtualFabric("tiny", pfc={"priorities": [0]})  # type: ignore[arg-type]


def test_a_nic_gives_frames_the_queue_the_p4_program_would() -> None:
    def frame(dscp: int) -> bytes:
        tc = dscp << 2
        head = bytes(ETH_LEN) + bytes([0x60 | tc >> 4, (tc & 0x0F) << 4])
        return head + bytes(60)

    assert frame_priority(frame(int(Dscp.TRIMMABLE))) == DATA_PRIORITY
    assert frame_priority(frame(int(Dscp.NO_TRIM))) == DATA_PRIORITY
    for dscp in (Dscp.CONTROL, Dscp.TRIMMED, Dscp.TRIMMED_LASTHOP):
        assert frame_priority(frame(int(dscp))) == DEFAULT_CONTROL_PRIORITY
