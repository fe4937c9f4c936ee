"""nic_emu.connection.gobackn: the RoCE baseline's go-back-N sender on its own."""

from __future__ import annotations

from dataclasses import replace

from nic_emu import event_log as ev_kinds
from nic_emu.config import DcqcnConfig, RoceConfig
from nic_emu.connection.gobackn import GoBackN
from nic_emu.connection.records import ConnectionLog
from nic_emu.event_log import EventLog
from nic_emu.sender import BufferPayload, SendState, WriteRequest

MTU = 1024


def _sender(packets: int) -> SendState:
    """A SendState with ``packets`` packets in flight, PSN 100 onwards."""
    send = SendState(100, MTU, 1024)
    size = packets * MTU
    send.post(WriteRequest(1, BufferPayload(memoryview(bytes(size))), size, 0, 7, packets, 0))
    for _ in range(packets):
        pkt = send.next_packet()
        assert pkt is not None
        send.sent(pkt, None, 0)
    return send


def _gbn(roce: RoceConfig) -> tuple[GoBackN, dict[str, int], EventLog]:
    counters = dict.fromkeys(("rto_silent", "losses_timeout", "gobackn_rewinds"), 0)
    log = EventLog()
    gbn = GoBackN(
        roce,
        100_000_000_000,
        0,
        peer_label="nic3 QPN 0x100",
        counters=counters,
        log=ConnectionLog(log, "nic0", 0x200),
    )
    return gbn, counters, log


def test_a_nak_resends_from_the_naked_psn() -> None:
    gbn, counters, log = _gbn(RoceConfig())
    send = _sender(8)
    gbn.on_nak(send, 104, 50)
    assert send.inflight_bytes == 4 * MTU and counters["gobackn_rewinds"] == 1
    (rec,) = log.of_kind(ev_kinds.RETRANSMIT)
    assert (rec.psn, rec.qpn, rec.detail) == (104, 0x200, {"reason": "go_back_n", "packets": 4})


def test_timeouts_rewind_count_retries_and_fail_past_the_retry_count() -> None:
    roce = replace(RoceConfig(), retry_count=2)
    gbn, counters, log = _gbn(roce)
    assert gbn.ack_timeout_ns == roce.ack_timeout_ns and gbn.dcqcn is not None
    send = _sender(4)
    assert gbn.on_timeout(send, 1_000, last_ack_ns=0) is None
    assert send.inflight_bytes == 0  # every packet from snd_una is queued again
    assert gbn.on_timeout(send, 2_000, last_ack_ns=0) is None
    failure = gbn.on_timeout(send, 3_000, last_ack_ns=0)
    assert failure is not None and "nic3 QPN 0x100 after 2 retries" in failure
    assert [r.detail["backoff"] for r in log.of_kind(ev_kinds.RTO)] == [1, 2, 3]
    rewinds = log.of_kind(ev_kinds.RETRANSMIT)
    assert [r.detail for r in rewinds] == [
        {"reason": "go_back_n_timeout", "packets": 4},
        {"reason": "go_back_n_timeout", "packets": 0},
    ]
    assert counters == {"rto_silent": 3, "losses_timeout": 3, "gobackn_rewinds": 2}


def test_progress_since_the_last_timeout_resets_the_retries() -> None:
    gbn, _, _ = _gbn(replace(RoceConfig(), retry_count=1))
    send = _sender(2)
    assert gbn.on_timeout(send, 1_000, last_ack_ns=0) is None
    assert gbn.on_timeout(send, 2_000, last_ack_ns=1_500) is None  # acked in between
    assert gbn.retries == 1


def test_dcqcn_off_means_no_rate() -> None:
    gbn, _, _ = _gbn(replace(RoceConfig(), dcqcn=replace(DcqcnConfig(), enabled=False)))
    assert gbn.dcqcn is None
