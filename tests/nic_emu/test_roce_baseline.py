"""The single-path, go-back-N RoCEv2-like baseline on the same wire."""

from __future__ import annotations

from nic_emu.config import TransportMode
from nic_emu.event_log import NACK_RX, NACK_TX, RETRANSMIT, TX
from nic_emu.model_fabric import LinkFault

from .conftest import finish, make_net, start_transfer

ROCE = TransportMode.ROCE


def test_roce_uses_one_path_and_goes_back_n_on_loss() -> None:
    net = make_net()
    net.fabric.set_fault_everywhere(LinkFault(drop_prob=0.01))
    t = start_transfer(net, size=1 << 20, mode=ROCE)
    assert finish(t) and t.delivered
    assert len({r.ev for r in net.log.of_kind(TX)}) == 1
    assert {r.detail["reason"] for r in net.log.of_kind(NACK_RX)} == {"ROD_OOO"}
    rewinds = [r for r in net.log.of_kind(RETRANSMIT) if r.detail["reason"] == "go_back_n"]
    assert rewinds and sum(r.detail["packets"] for r in rewinds) > len(rewinds)
    assert t.receiver.counters["rx_out_of_order"] > 0  # dropped, never placed


def test_mrc_keeps_going_at_one_percent_loss_where_roce_crawls() -> None:
    elapsed = {}
    for mode in (TransportMode.MRC, ROCE):
        net = make_net(seed=3)
        net.fabric.set_fault_everywhere(LinkFault(drop_prob=0.01))
        t = start_transfer(net, size=2 << 20, mode=mode)
        assert finish(t) and t.delivered
        elapsed[mode] = net.now
    assert elapsed[ROCE] > 3 * elapsed[TransportMode.MRC]


def test_roce_stalls_on_a_dead_path_where_mrc_does_not() -> None:
    outcome = {}
    dead_link: tuple[str, str] | None = None
    for mode in (ROCE, TransportMode.MRC):
        net = make_net(seed=2)
        t = start_transfer(net, size=1 << 20, mode=mode, post=False)
        if dead_link is None:
            plane, t1 = t.sender.evs.ring[0].path  # the RoCE QP's one path
            dead_link = (f"p{plane}-t0-0", t1)
        net.fabric.set_link_state(*dead_link, False)
        t.post()
        finish(t, limit_ns=100_000_000)
        outcome[mode] = (t.sender.state.value, t.delivered, net.failures("nic0"))
    state, delivered, failures = outcome[ROCE]
    assert state == "error" and not delivered
    assert [f.reason for f in failures] == ["max_retries"]
    assert outcome[TransportMode.MRC] == ("ready", True, [])


def test_roce_has_no_trim_reaction() -> None:
    net = make_net()
    senders = ["nic0", "nic1", "nic4", "nic6"]
    ts = [
        start_transfer(net, s, "nic2", 512 << 10, seed=i, mode=ROCE) for i, s in enumerate(senders)
    ]
    assert net.run_until_idle([t.sender for t in ts], limit_ns=100_000_000)
    assert all(t.delivered for t in ts)
    ignored = sum(t.receiver.counters["rx_trimmed_ignored"] for t in ts)
    if net.fabric.counters()["channels"]["trims"]:
        assert ignored > 0
    assert not [r for r in net.log.of_kind(NACK_TX) if r.detail["reason"].startswith("TRIM")]
