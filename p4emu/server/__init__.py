"""p4emu-switch: a drop-in for BMv2's ``simple_switch_grpc`` (docs/p4emu-switch.md).

- :mod:`p4emu.server.main` — the process (``p4emu-switch``): port drivers, switch, gRPC;
- :mod:`p4emu.server.service` — the P4Runtime v1 gRPC service (arbitration, errors, streams);
- :mod:`p4emu.server.switch_device` — the device behind it (a :class:`p4emu.switch.Switch`);
- :mod:`p4emu.server.ports` — gNMI port status (up/down at run time);
- :mod:`p4emu.server.client` — a small synchronous P4Runtime client for tests and scripts.

Submodules are imported explicitly; this package imports nothing on its own so that
light users (``status``, ``options``) stay cheap.
"""
