"""Every P4 name the controller uses, in one place.

Names are the fully qualified control-plane names of ``p4src/mrc_switch.p4`` as they appear
in its P4Info (``<control type>.<object>``, docs/p4info.md). Ids are never written here: the
controller looks every name up in the P4Info it pushes (``controller.entities``), and
:data:`REQUIRED_TABLES` lets it refuse, with one clear message, a P4Info that lacks one.
"""

from __future__ import annotations

from typing import NamedTuple

INGRESS = "MrcIngress"
EGRESS = "MrcEgress"


def _ingress(name: str) -> str:
    return f"{INGRESS}.{name}"


def _egress(name: str) -> str:
    return f"{EGRESS}.{name}"


# ---- switch_config: one default action, no entries ------------------------------------
SWITCH_CONFIG = _ingress("switch_config")
SET_SWITCH_CONFIG = _ingress("set_switch_config")
PLANE_ID = "plane_id"
CONTROL_PRIORITY = "control_priority"
PUNT_END_OF_CARRIER = "punt_end_of_carrier"
PUNT_NO_ROUTE = "punt_no_route"
PUNT_HOP_LIMIT = "punt_hop_limit"
PUNT_NON_IPV6 = "punt_non_ipv6"

# ---- SRv6 endpoint tables --------------------------------------------------------------
MY_USID = _ingress("my_usid")
MY_USID_KEY = "dst_prefix"  # outer DA[127:80] = block + active uSID (48 bits)
USID_UN = _ingress("usid_un")

MY_SID = _ingress("my_sid")
MY_SID_KEY = "dst_addr"
SRV6_END = _ingress("srv6_end")

# ---- routing ---------------------------------------------------------------------------
USID_ROUTE = _ingress("usid_route")
USID_ROUTE_KEY = "usid"  # the active uSID after the shift
IPV6_ROUTE = _ingress("ipv6_route")
IPV6_ROUTE_KEY = "dst_addr"
FORWARD = _ingress("forward")
FORWARD_PORT = "port"
TO_CPU = _ingress("to_cpu")

# ---- ports -----------------------------------------------------------------------------
INGRESS_PORT_STATUS = _ingress("ingress_port_status")
SET_INGRESS_PORT_STATUS = _ingress("set_ingress_port_status")
EGRESS_PORT_CONFIG = _ingress("egress_port_config")
SET_EGRESS_PORT_CONFIG = _ingress("set_egress_port_config")
PORT_KEY = "port"
PORT_CLASS = "port_class"
PORT_UP = "up"

EGRESS_PORT_MAC = _egress("egress_port_mac")
SET_PORT_MACS = _egress("set_port_macs")
SRC_MAC = "src_mac"
DST_MAC = "dst_mac"

PORT_CLASS_PARAMS = _ingress("port_class_params")
PORT_CLASS_KEY = "port_class"
SET_CLASS_PARAMS = _ingress("set_class_params")
ECN_ENABLE = "ecn_enable"
ECN_MIN_QDEPTH = "ecn_min_qdepth"
ECN_MAX_QDEPTH = "ecn_max_qdepth"
ECN_MAX_PROB = "ecn_max_prob"
TRIM_ENABLE = "trim_enable"
TRIM_QDEPTH = "trim_qdepth"
QUEUE_LIMIT = "queue_limit"

# Port classes (p4src/include/defines.p4, PORT_CLASS_*).
PORT_CLASS_FABRIC = 0  # switch-to-switch: ECN on, trimmed packets get TRIMMED
PORT_CLASS_HOST = 1  # last hop to a NIC: ECN off, trimmed packets get TRIMMED_LASTHOP
PORT_CLASS_CPU = 2  # controller: no ECN, no trimming
PORT_CLASS_NAMES = {PORT_CLASS_FABRIC: "fabric", PORT_CLASS_HOST: "host", PORT_CLASS_CPU: "cpu"}

NO_ACTION = "NoAction"


class TableShape(NamedTuple):
    """What the controller relies on in a table: its match fields (name, kind) and the
    parameters of the actions it writes."""

    match: tuple[tuple[str, str], ...]
    actions: dict[str, tuple[str, ...]]


# Tables the controller owns: it reads them back and removes whatever the plan lacks.
REQUIRED_TABLES: dict[str, TableShape] = {
    SWITCH_CONFIG: TableShape(
        (),
        {
            SET_SWITCH_CONFIG: (
                PLANE_ID,
                CONTROL_PRIORITY,
                PUNT_END_OF_CARRIER,
                PUNT_NO_ROUTE,
                PUNT_HOP_LIMIT,
                PUNT_NON_IPV6,
            )
        },
    ),
    MY_USID: TableShape(((MY_USID_KEY, "EXACT"),), {USID_UN: ()}),
    MY_SID: TableShape(((MY_SID_KEY, "EXACT"),), {SRV6_END: ()}),
    USID_ROUTE: TableShape(((USID_ROUTE_KEY, "EXACT"),), {FORWARD: (FORWARD_PORT,), TO_CPU: ()}),
    IPV6_ROUTE: TableShape(((IPV6_ROUTE_KEY, "LPM"),), {FORWARD: (FORWARD_PORT,), TO_CPU: ()}),
    INGRESS_PORT_STATUS: TableShape(((PORT_KEY, "EXACT"),), {SET_INGRESS_PORT_STATUS: (PORT_UP,)}),
    EGRESS_PORT_CONFIG: TableShape(
        ((PORT_KEY, "EXACT"),), {SET_EGRESS_PORT_CONFIG: (PORT_CLASS, PORT_UP)}
    ),
    EGRESS_PORT_MAC: TableShape(((PORT_KEY, "EXACT"),), {SET_PORT_MACS: (SRC_MAC, DST_MAC)}),
    PORT_CLASS_PARAMS: TableShape(
        ((PORT_CLASS_KEY, "EXACT"),),
        {
            SET_CLASS_PARAMS: (
                ECN_ENABLE,
                ECN_MIN_QDEPTH,
                ECN_MAX_QDEPTH,
                ECN_MAX_PROB,
                TRIM_ENABLE,
                TRIM_QDEPTH,
                QUEUE_LIMIT,
            )
        },
    ),
}

OWNED_TABLES: tuple[str, ...] = tuple(REQUIRED_TABLES)

# Fields holding a port number (port_t = bit<9> in v1model), as (table or action, field).
PORT_FIELDS: tuple[tuple[str, str], ...] = (
    (FORWARD, FORWARD_PORT),
    (INGRESS_PORT_STATUS, PORT_KEY),
    (EGRESS_PORT_CONFIG, PORT_KEY),
    (EGRESS_PORT_MAC, PORT_KEY),
)
