"""p4emu's P4Runtime client stack: what a controller or a test uses to talk to a switch.

Layered as finsy's (``p4values`` / ``p4schema`` / ``p4entity`` / ``p4client``), each
module using only those above it in this list:

- :mod:`~p4emu.p4rt_client.exceptions`: :class:`EntityNameError`, ``code_name``;
- :mod:`~p4emu.p4rt_client.schema`: canonical bytestrings (``encode_unsigned``, the
  project's one encoder, which the switch side ``p4emu.p4rt`` uses too), match values, and
  :class:`P4Schema` (a P4Info indexed by name and id);
- :mod:`~p4emu.p4rt_client.entity`: :class:`P4TableEntry`, the one table entry by name
  that encodes and decodes itself;
- :mod:`~p4emu.p4rt_client.messages`: :class:`EntityNames` (entities of every kind by
  name), requests, per-update Write errors.

The transports sit above: ``p4emu.server.client.P4RuntimeClient`` (synchronous) and
``controller.p4rt_client.SwitchClient`` (asyncio). The switch side (``p4emu.p4rt``)
decodes with its own, stricter codec; see docs/p4emu-p4runtime.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clikit.lazy import lazy_names
from p4emu.p4rt_client.entity import P4TableEntry
from p4emu.p4rt_client.exceptions import EntityNameError
from p4emu.p4rt_client.schema import P4Schema

if TYPE_CHECKING:
    from p4emu.p4rt_client.messages import EntityNames

__all__ = ["EntityNameError", "EntityNames", "P4Schema", "P4TableEntry"]

# the messages module (requests, Write errors) on first use: the entity layer above is all
# a controller's codec needs, and a virtual fabric builds no request
__getattr__ = lazy_names(__name__, {"EntityNames": "p4emu.p4rt_client.messages"})
