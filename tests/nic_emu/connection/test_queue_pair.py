"""nic_emu.connection.queue_pair: a Connection is its parts composed. Its entry points
are the parts' own methods, each part reaches it only through QpStatus, and what it does
itself (posting, release, failure) reaches every part that holds the state involved."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import nic_emu
from nic_emu.connection import Connection
from nic_emu.connection.common import QpState, QpStatus
from nic_emu.connection.events import ConnectionFailed
from nic_emu.core import NicCore

from .kit import CFG, PEER, PEER_QPN, PLAN


def _connection() -> tuple[NicCore, Connection]:
    core = NicCore("nic0", PLAN, CFG)
    return core, core.create_connection(PEER, peer_qpn=PEER_QPN)


def _parts(conn: Connection) -> dict[str, object]:
    return {
        "tx": conn.tx,
        "feedback": conn.feedback,
        "losses": conn.losses,
        "tail": conn.tail,
        "deadlines": conn.deadlines,
        "repath": conn.repath,
    }


def _fields(part: object) -> dict[str, object]:
    """A part's attributes and their values: its ``__dict__`` on the pure path, and on
    the compiled path (an extension type without one) every field its ``.pxd`` declares
    readable, which are all of them."""
    if hasattr(part, "__dict__"):
        return dict(vars(part))
    kind = type(part)
    names = [
        name
        for name, member in inspect.getmembers(kind)
        if inspect.isgetsetdescriptor(member) or inspect.ismemberdescriptor(member)
    ]
    assert names, f"{kind.__qualname__} shows no fields"
    return {name: getattr(part, name) for name in names}


def test_the_entry_points_are_the_parts_own_methods() -> None:
    _, conn = _connection()
    bound = {
        "send_one": conn.tx.send_one,
        "window_blocked": conn.tx.window_blocked,
        "on_sack": conn.feedback.on_sack,
        "on_nack": conn.feedback.on_nack,
        "on_timer": conn.deadlines.on_timer,
        "timer_deadline": conn.deadlines.timer_deadline,
        "next_deadline": conn.deadlines.next_deadline,
        "path_report": conn.deadlines.path_report,
        "on_probe_answer": conn.repath.on_probe_answer,
        "shared_path_failure": conn.repath.shared_path_failure,
        "plane_down": conn.repath.plane_down,
        "plane_up": conn.repath.plane_up,
        "on_data": conn.rx.on_data,
        "on_reliability_probe": conn.rx.on_reliability_probe,
    }
    for name, method in bound.items():
        assert getattr(conn, name) == method, name  # no call in between


def test_no_mixin_is_left_in_nic_emu() -> None:
    assert Connection.__bases__ == (object,)
    mixins = []
    for path in sorted(Path(nic_emu.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and "Mixin" in node.name:
                mixins.append(f"{path.name}: {node.name}")
    assert mixins == []


def test_each_part_reaches_the_queue_pair_only_as_its_qp_status() -> None:
    _, conn = _connection()
    members = {n for n in vars(QpStatus) if not n.startswith("_")} | set(QpStatus.__annotations__)
    assert members == {"state", "fail"}
    for name, part in _parts(conn).items():
        holders = [attr for attr, value in _fields(part).items() if value is conn]
        assert holders == ["qp"], name


def test_release_reaches_every_part_that_holds_the_ev_set_or_the_send_state() -> None:
    core, conn = _connection()
    region_data = bytes(4 * CFG.mtu_payload)
    conn.post_write(region_data, 0x1000, 7, 0)
    core.frames_to_send(0)
    old_send, old_evs = conn.send, conn.evs
    conn.release()
    assert conn.send is not old_send and conn.evs is not old_evs
    assert not list(conn.evs.entries()) and conn.send.idle()
    for name, part in _parts(conn).items():
        assert part.evs is conn.evs and part.send is conn.send, name  # type: ignore[attr-defined]
        assert all(v is not old_send and v is not old_evs for v in _fields(part).values()), name
    assert conn.probes.evs is conn.evs
    assert all(t.payload == b"" for t in conn.tx.frames.templates)


def test_failure_stops_every_part_once_and_names_the_pending_writes() -> None:
    core, conn = _connection()
    wr = conn.post_write(bytes(CFG.mtu_payload), 0x1000, 7, 0)
    core.frames_to_send(0)
    conn.tx.pace_at = 99
    conn.fail("test", "a reason", 50)
    conn.fail("again", "ignored", 60)
    (event,) = [e for e in core.events() if isinstance(e, ConnectionFailed)]
    assert (event.reason, event.pending_wr_ids, event.t_ns) == ("test", (wr,), 50)
    assert conn.state is QpState.ERROR and not conn.rx.ready
    assert conn.tx.pace_at is None and conn.probes.next_ns is None
    assert conn.timer_deadline() is None and conn.window_blocked()


def test_posting_to_an_idle_queue_pair_starts_the_peers_silence_there() -> None:
    _, conn = _connection()
    conn.post_write(bytes(10), 0x1000, 7, 500)
    conn.post_write(bytes(10), 0x2000, 7, 900)  # not idle: the silence runs on
    assert conn.deadlines.quiet_since == 500
    conn.no_ev_timeout_ns = 1234
    assert conn.deadlines.no_ev_timeout_ns == 1234 == conn.no_ev_timeout_ns
