"""p4emu.backend.rt: the packet context and v1model's standard metadata (the runtime's
types the switch and generated code read as C structs on the compiled path)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from p4emu.backend.rt import STANDARD_METADATA_FIELDS, PacketContext, StandardMetadata

ROOT = Path(__file__).resolve().parents[3]


def slots_of(value: object) -> dict[str, object]:
    names = PacketContext.__slots__ if hasattr(PacketContext, "__slots__") else ()
    names = names or tuple(
        n for n in dir(value) if not n.startswith("_") and not callable(getattr(value, n))
    )
    return {name: getattr(value, name) for name in names}


def test_the_standard_metadata_fields_are_v1models() -> None:
    """The fields, in order, of p4emu's v1model.p4 standard_metadata_t."""
    text = (ROOT / "p4emu" / "include" / "v1model.p4").read_text(encoding="utf-8")
    body = text[text.index("struct standard_metadata_t {") :]
    body = body[: body.index("\n}")]
    body = re.sub(r"#if.*?#else.*?#endif", "", body, flags=re.S)  # one copy of the ports
    names = re.findall(r"(\w+);", body)
    assert ["ingress_port", "egress_spec", "egress_port", *names] == list(STANDARD_METADATA_FIELDS)


def test_a_new_standard_metadata_is_all_zero_and_has_only_v1models_fields() -> None:
    sm = StandardMetadata()
    assert {name: getattr(sm, name) for name in STANDARD_METADATA_FIELDS} == dict.fromkeys(
        STANDARD_METADATA_FIELDS, 0
    )
    sm.egress_spec = 511
    sm.ingress_global_timestamp = (1 << 48) - 1
    sm.parser_error = 3
    assert (sm.egress_spec, sm.ingress_global_timestamp, sm.parser_error) == (511, (1 << 48) - 1, 3)
    with pytest.raises(AttributeError):
        sm.site = 1  # type: ignore[attr-defined]


def test_a_renewed_context_is_a_new_ones_but_for_its_objects() -> None:
    """The switch reuses a transmitted packet's context: renew() sets every field as a
    new context has it (no request or length of the packet before leaks), keeping the
    header, metadata and standard-metadata objects (the switch resets those)."""
    hdr, meta, sm = object(), object(), StandardMetadata()
    used = PacketContext(1500, b"old payload", hdr, meta, sm)
    used.length_reg = 1540
    used.checksum_error = 1
    used.clone_session = 5
    used.clone_copier = used.resubmit = used.recirculate = print
    used.digest = (1, (2, 3))
    used.truncate = 64
    used.renew(200)
    fresh = PacketContext(200, b"", hdr, meta, sm)
    assert slots_of(used) == slots_of(fresh)
    assert used.hdr is hdr and used.meta is meta and used.sm is sm


def test_the_payload_is_the_packets_tail_shared_not_copied() -> None:
    """The switch hands the parsed frame and the payload's offset (set_payload): a
    ``bytes`` frame is kept as is (the deparser copies its tail once), any other buffer's
    tail is copied at once (its owner may change it later); ``payload`` reads the tail."""
    frame = b"headers|payload"
    ctx = PacketContext(len(frame))
    ctx.set_payload(frame, 8)
    assert ctx.packet is frame and ctx.payload_at == 8
    assert ctx.payload == b"payload"
    ctx.set_payload(frame, len(frame))
    assert ctx.payload == b""
    ctx.set_payload(frame, 0)
    assert ctx.payload is frame  # all of it: no copy
    buffer = bytearray(frame)
    ctx.set_payload(buffer, 8)
    buffer[8:] = b"CHANGED"
    assert ctx.payload == b"payload" and type(ctx.packet) is bytes and ctx.payload_at == 0
    ctx.payload = memoryview(b"given")  # a payload set whole: held as bytes, from 0
    assert (ctx.packet, ctx.payload_at, ctx.payload) == (b"given", 0, b"given")
    assert PacketContext(3, bytearray(b"abc")).payload == b"abc"
    ctx.renew(10)
    assert (ctx.packet, ctx.payload_at) == (b"", 0)
