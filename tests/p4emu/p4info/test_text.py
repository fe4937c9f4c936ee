"""Text format round trips and file errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from finsy.proto import p4i

from p4emu.p4info import P4INFO_SUFFIX, p4info_from_text, p4info_to_text, read_p4info, write_p4info
from p4emu.p4info.exceptions import P4InfoTextError

DATA = Path(__file__).parent / "data"


def test_round_trip_through_a_file(tmp_path: Path) -> None:
    original = read_p4info(DATA / "basic_routing-bmv2.p4info.txtpb")
    target = tmp_path / f"prog{P4INFO_SUFFIX}"
    write_p4info(original, target)
    assert read_p4info(target) == original
    assert target.read_text() == (DATA / "basic_routing-bmv2.p4info.txtpb").read_text()


def test_text_starts_with_p4c_header_and_escapes_bytes_in_octal() -> None:
    info = p4i.P4Info()
    call = info.tables.add().initial_default_action
    call.arguments.add(param_id=1, value=b"\x00\x00\x00\n")
    text = p4info_to_text(info)
    assert text.startswith("# proto-file: p4/config/v1/p4info.proto\n")
    assert 'value: "\\000\\000\\000\\n"' in text


def test_malformed_text_is_a_clear_error() -> None:
    with pytest.raises(P4InfoTextError, match=r"x.txtpb: not a valid P4Info text: .*tablez"):
        p4info_from_text("tablez { }", "x.txtpb")


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(P4InfoTextError, match="cannot read P4Info"):
        read_p4info(tmp_path / "absent.p4info.txtpb")


def test_unwritable_destination_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(P4InfoTextError, match="cannot write P4Info"):
        write_p4info(p4i.P4Info(), tmp_path / "no-such-dir" / "x.p4info.txtpb")


def test_non_utf8_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.p4info.txtpb"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(P4InfoTextError, match="not UTF-8"):
        read_p4info(path)
