"""Read and write P4Info in protobuf text format (``.p4info.txtpb``).

The writer produces what current p4c writes for ``--p4runtime-files x.p4info.txtpb``: the
two ``# proto-file`` / ``# proto-message`` comment lines, a blank line, then the message in
text format (fields in field-number order, map entries sorted by key, bytes with octal
escapes).
"""

from __future__ import annotations

from pathlib import Path

from google.protobuf import text_format

from p4emu.p4info.exceptions import P4InfoTextError
from p4emu.proto import p4i

P4INFO_SUFFIX = ".p4info.txtpb"
HEADER = "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"


def p4info_to_text(info: p4i.P4Info) -> str:
    return HEADER + text_format.MessageToString(info)


def p4info_from_text(text: str, source: str = "<text>") -> p4i.P4Info:
    info = p4i.P4Info()
    try:
        text_format.Parse(text, info)
    except text_format.ParseError as error:
        raise P4InfoTextError(f"{source}: not a valid P4Info text: {error}") from error
    return info


def write_p4info(info: p4i.P4Info, path: str | Path) -> None:
    path = Path(path)
    try:
        path.write_text(p4info_to_text(info), encoding="utf-8")
    except OSError as error:
        raise P4InfoTextError(f"{path}: cannot write P4Info: {error.strerror}") from error


def read_p4info(path: str | Path) -> p4i.P4Info:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise P4InfoTextError(f"{path}: cannot read P4Info: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise P4InfoTextError(f"{path}: P4Info text is not UTF-8: {error.reason}") from error
    return p4info_from_text(text, str(path))
