"""Drives p4emu-switch with the real p4runtime-shell (run by its own venv's python).

argv: GRPC_ADDR P4INFO_TXT DEVICE_CONFIG H1_LOCAL:H1_SWITCH H2_LOCAL:H2_SWITCH
Hosts are loopback-UDP peers of switch ports 1 and 2. Prints one JSON object of
observations and exits 0, or exits 1 with the failing step on stderr.
"""

import json
import socket
import sys

import p4runtime_sh.shell as sh
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

addr, p4info_path, config_path, h1_spec, h2_spec = sys.argv[1:6]


def host(spec):
    local, switch_side = (int(x) for x in spec.split(":"))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", local))
    sock.connect(("127.0.0.1", switch_side))
    sock.settimeout(5)
    return sock


def _read(entity):
    """Raw read through p4runtime-shell's client (it has no register object)."""
    request = p4runtime_pb2.ReadRequest(device_id=0)
    request.entities.append(entity)
    return [e for response in sh.client.stub.Read(request) for e in response.entities]


def port_params():
    """The `port` argument of every l2_fwd entry, read with p4runtime-shell."""
    return [
        int.from_bytes(e.action["port"].value, "big")
        for e in sh.TableEntry("DemoIngress.l2_fwd").read()
    ]


def eth(dst, payload):
    return dst.to_bytes(6, "big") + (0x020000000001).to_bytes(6, "big") + b"\x88\xb5" + payload


h1, h2 = host(h1_spec), host(h2_spec)
seen = {}
sh.setup(
    device_id=0,
    grpc_addr=addr,
    election_id=(0, 1),
    config=sh.FwdPipeConfig(p4info_path, config_path),
    verbose=False,
)
try:
    te = sh.TableEntry("DemoIngress.l2_fwd")(action="DemoIngress.forward")
    te.match["hdr.ethernet.dst"] = "0x0a"
    te.action["port"] = "2"
    te.insert()
    seen["read_after_insert"] = port_params()
    h1.send(eth(0x0A, b"shell"))
    seen["forwarded"] = h2.recv(2048) == eth(0x0A, b"shell")
    te.action["port"] = "1"
    te.modify()
    seen["read_after_modify"] = port_params()

    counter = sh.CounterEntry("DemoIngress.port_rx")
    counter.index = 1
    seen["counter_packets"] = [c.data.packet_count for c in counter.read()]

    update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
    register = update.entity.register_entry
    # p4runtime-shell has no register object: build the entity from the P4Info ourselves.
    with open(p4info_path) as p4info_file:
        p4info = text_format.Parse(p4info_file.read(), p4info_pb2.P4Info())
    register.register_id = next(
        r.preamble.id for r in p4info.registers if r.preamble.name == "DemoIngress.last_ether_type"
    )
    register.index.index = 2
    register.data.bitstring = b"\x12\x34"
    sh.client.write_update(update)
    query = p4runtime_pb2.Entity()
    query.register_entry.register_id = register.register_id
    query.register_entry.index.index = 2
    seen["register"] = [e.register_entry.data.bitstring.hex() for e in _read(query)]

    group = sh.MulticastGroupEntry(7).add(1, 1).add(2, 1)
    group.insert()
    seen["groups"] = [g.group_id for g in sh.MulticastGroupEntry().read()]
    group.delete()
    seen["groups_after_delete"] = [g.group_id for g in sh.MulticastGroupEntry().read()]

    punt = sh.TableEntry("DemoIngress.l2_fwd")(action="DemoIngress.to_cpu")
    punt.match["hdr.ethernet.dst"] = "0xc0"
    punt.insert()
    sniffer = sh.PacketIn()
    h2.send(eth(0xC0, b"to-controller"))
    packets = list(sniffer.sniff(timeout=5))
    seen["packet_in"] = [
        (p.packet.payload.hex(), [m.value.hex() for m in p.packet.metadata]) for p in packets
    ]

    out = sh.PacketOut(payload=eth(0x0B, b"from-shell"), egress_port="2")
    out.send()
    seen["packet_out_received"] = h2.recv(2048) == eth(0x0B, b"from-shell")

    te.delete()
    punt.delete()
    seen["read_after_delete"] = len(list(sh.TableEntry("DemoIngress.l2_fwd").read()))
except Exception as exc:  # report which step failed, with the server's message
    print(
        f"p4runtime-shell session failed after {sorted(seen)}: {type(exc).__name__}: {exc}",
        file=sys.stderr,
    )
    sys.exit(1)
finally:
    sh.teardown()
print(json.dumps(seen))
