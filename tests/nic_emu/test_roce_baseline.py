"""The RoCE baseline on the same wire: one path per QP, go-back-N as RoCE NICs run it
(a NAK per gap, InfiniBand's ACK timeout and retry count), DCQCN instead of NSCC."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from nic_emu.config import (
    ROCE_ACK_TIMEOUT_UNIT_NS,
    DcqcnConfig,
    NicConfig,
    RoceConfig,
    TransportMode,
)
from nic_emu.event_log import CONN_FAILED, NACK_RX, NACK_TX, RETRANSMIT, RTO, TX
from nic_emu.exceptions import ConfigError
from nic_emu.testing.model_fabric import LinkFault

from .conftest import finish, make_net, start_transfer

ROCE = TransportMode.ROCE
SECOND = 1_000_000_000


def test_roce_uses_one_path_and_goes_back_n_on_loss() -> None:
    net = make_net()
    net.fabric.set_fault_everywhere(LinkFault(drop_prob=0.01))
    t = start_transfer(net, size=1 << 20, mode=ROCE)
    assert finish(t, limit_ns=10 * SECOND) and t.delivered
    assert len({r.ev for r in net.log.of_kind(TX)}) == 1
    assert {r.detail["reason"] for r in net.log.of_kind(NACK_RX)} == {"ROD_OOO"}
    rewinds = [r for r in net.log.of_kind(RETRANSMIT) if r.detail["reason"] == "go_back_n"]
    assert rewinds and sum(r.detail["packets"] for r in rewinds) > len(rewinds)
    assert t.receiver.counters["rx_out_of_order"] > 0  # dropped, never placed


def test_a_nak_rewinds_to_the_naked_psn() -> None:
    """Every go-back-N rewind starts at the PSN the receiver NAKed (the one it expects)."""
    net = make_net(seed=4)
    net.fabric.set_fault_everywhere(LinkFault(drop_prob=0.005))
    t = start_transfer(net, size=1 << 20, mode=ROCE)
    assert finish(t, limit_ns=10 * SECOND) and t.delivered
    naked = [r.psn for r in net.log.of_kind(NACK_RX)]
    rewound = [r.psn for r in net.log.of_kind(RETRANSMIT) if r.detail["reason"] == "go_back_n"]
    assert naked and set(rewound) <= set(naked)
    sent = [r.psn for r in net.log.of_kind(NACK_TX)]
    assert len(sent) == len(set(sent))  # one NAK per gap, never repeated


def test_the_ack_timeout_is_4096_ns_times_two_to_the_t() -> None:
    """A tail loss (the last packet's ACK never comes) waits out the ACK timeout, fixed
    (no backoff), then resends from the oldest unacknowledged PSN."""
    roce = RoceConfig(ack_timeout_exp=10, dcqcn=DcqcnConfig(enabled=False))
    net = make_net(roce=roce)
    t = start_transfer(net, size=64 << 10, mode=ROCE, post=False)
    plane, t1 = t.sender.evs.ring[0].path
    link = (f"p{plane}-t0-0", t1)
    t.post()
    net.run(net.now + 2_000)  # the first packets are on their way
    net.fabric.set_link_state(*link, False)
    net.run(net.now + 20_000_000)
    rtos = [r.t_ns for r in net.log.of_kind(RTO)]
    timeout = ROCE_ACK_TIMEOUT_UNIT_NS << 10
    assert len(rtos) >= 3
    gaps = {b - a for a, b in itertools.pairwise(rtos)}
    assert all(timeout <= g <= timeout + 20_000 for g in gaps)  # + the resent packets' time
    net.fabric.set_link_state(*link, True)
    assert finish(t, limit_ns=SECOND) and t.delivered
    kinds = {r.detail["reason"] for r in net.log.of_kind(RETRANSMIT)}
    assert "go_back_n_timeout" in kinds


def test_roce_fails_after_its_retry_count_where_mrc_repaths() -> None:
    outcome = {}
    dead_link: tuple[str, str] | None = None
    for mode in (ROCE, TransportMode.MRC):
        net = make_net(seed=2, roce=RoceConfig(ack_timeout_exp=10, retry_count=3))
        t = start_transfer(net, size=1 << 20, mode=mode, post=False)
        if dead_link is None:
            plane, t1 = t.sender.evs.ring[0].path  # the RoCE QP's one path
            dead_link = (f"p{plane}-t0-0", t1)
        net.fabric.set_link_state(*dead_link, False)
        t.post()
        finish(t, limit_ns=SECOND)
        outcome[mode] = (t.sender.state.value, t.delivered, net.failures("nic0"))
        if mode is ROCE:
            (failed,) = net.log.of_kind(CONN_FAILED)
            # the first send and its three retries time out; the 4th timeout fails the QP
            assert len(net.log.of_kind(RTO)) == 4
            assert failed.t_ns >= 4 * (ROCE_ACK_TIMEOUT_UNIT_NS << 10)
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
    assert net.run_until_idle([t.sender for t in ts], limit_ns=10 * SECOND)
    assert all(t.delivered for t in ts)
    ignored = sum(t.receiver.counters["rx_trimmed_ignored"] for t in ts)
    if net.fabric.counters()["channels"]["trims"]:
        assert ignored > 0
    assert not [r for r in net.log.of_kind(NACK_TX) if r.detail["reason"].startswith("TRIM")]


def test_roce_qps_take_the_ports_in_turn() -> None:
    net = make_net()
    planes = [net.connect("nic0", "nic2", mode=ROCE)[0].evs.ring[0].plane for _ in range(8)]
    assert sorted(planes) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_the_default_ack_timeout_is_milliseconds() -> None:
    assert RoceConfig().ack_timeout_ns == 4096 << 14 == 67_108_864  # t = 14: 67.1 ms


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ack_timeout_exp": 0}, "ack_timeout_exp must be an integer in 1..31"),
        ({"ack_timeout_exp": 32}, "ack_timeout_exp must be an integer in 1..31"),
        ({"retry_count": 8}, "retry_count must be an integer in 0..7"),
        ({"retry_count": True}, "retry_count must be an integer"),
        ({"dcqcn": {"g": 0.1}}, r"RoceConfig\.dcqcn must be a DcqcnConfig"),
    ],
)
def test_bad_roce_settings_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        RoceConfig(**kwargs)  # type: ignore[arg-type]


def test_nic_config_takes_only_a_roce_config() -> None:
    with pytest.raises(ConfigError, match=r"NicConfig\.roce must be a RoceConfig"):
        replace(NicConfig(), roce={"qps": 16})  # type: ignore[arg-type]
