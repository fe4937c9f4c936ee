"""testbed.portctl's pure parts (the channels themselves are exercised by the local, Mininet
and BMv2 integration tests)."""

from __future__ import annotations

import pytest

from testbed.exceptions import PortControlError
from testbed.portctl import gnmi_set_ports, parse_show_ports

SHOW_PORTS = """\
Obtaining JSON from switch...
Done
Control utility for runtime P4 table manipulation
RuntimeCmd:   port #        iface name        status   extra info
==================================================
    1          p0-t0-0-eth1         UP
    3          p0-t0-0-eth3        DOWN
RuntimeCmd:
"""


def test_show_ports_lists_attached_ports_and_their_status() -> None:
    assert parse_show_ports(SHOW_PORTS) == {1: True, 3: False}
    assert parse_show_ports("RuntimeCmd: \n") == {}


def test_gnmi_errors_name_the_switch_address() -> None:
    with pytest.raises(PortControlError, match=r"127.0.0.1:1: gNMI Set failed: UNAVAILABLE"):
        gnmi_set_ports("127.0.0.1:1", [1], False, timeout=2.0)
