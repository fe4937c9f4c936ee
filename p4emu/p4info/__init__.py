"""P4Info generation with p4c-compatible names, ids, aliases and layout.

Typical use::

    from p4emu.p4info import extract_model, build_p4info, p4info_for_program, write_p4info

    model = extract_model(checked_program)      # CheckedProgram -> ControlPlaneModel
    info = build_p4info(model)                  # -> p4.config.v1.P4Info
    info = p4info_for_program(checked_program)  # both steps at once
    write_p4info(info, "prog.p4info.txtpb")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clikit.lazy import lazy_names

if TYPE_CHECKING:
    from p4emu.p4info.builder import build_p4info, build_symbol_table
    from p4emu.p4info.exceptions import ExtractError, P4InfoError
    from p4emu.p4info.extract import extract_model
    from p4emu.p4info.ids import ResourceType, SymbolTable, hashed_id
    from p4emu.p4info.kept import p4info_for_program
    from p4emu.p4info.model import ControlPlaneModel
    from p4emu.p4info.text import (
        P4INFO_SUFFIX,
        p4info_from_text,
        p4info_to_text,
        read_p4info,
        write_p4info,
    )

__all__ = [
    "P4INFO_SUFFIX",
    "ControlPlaneModel",
    "ExtractError",
    "P4InfoError",
    "ResourceType",
    "SymbolTable",
    "build_p4info",
    "build_symbol_table",
    "extract_model",
    "hashed_id",
    "p4info_for_program",
    "p4info_from_text",
    "p4info_to_text",
    "read_p4info",
    "write_p4info",
]

# each name is imported on first use: a process whose P4Info is kept with its checked
# program (p4emu.p4info.kept) imports neither the extractor nor the builder
_LAZY = {
    "P4INFO_SUFFIX": "p4emu.p4info.text",
    "ControlPlaneModel": "p4emu.p4info.model",
    "ExtractError": "p4emu.p4info.exceptions",
    "P4InfoError": "p4emu.p4info.exceptions",
    "ResourceType": "p4emu.p4info.ids",
    "SymbolTable": "p4emu.p4info.ids",
    "build_p4info": "p4emu.p4info.builder",
    "build_symbol_table": "p4emu.p4info.builder",
    "extract_model": "p4emu.p4info.extract",
    "hashed_id": "p4emu.p4info.ids",
    "p4info_for_program": "p4emu.p4info.kept",
    "p4info_from_text": "p4emu.p4info.text",
    "p4info_to_text": "p4emu.p4info.text",
    "read_p4info": "p4emu.p4info.text",
    "write_p4info": "p4emu.p4info.text",
}

__getattr__ = lazy_names(__name__, _LAZY)
