"""p4emu-switch under the issue-29 probes: how fast Capabilities and Read answer while
``--streams`` idle StreamChannels are asked for (one peer: loopback), and while a pipeline
compiles; how long the 10^7-token macro bomb and the 2^18 include bomb take to be refused.

Prints one JSON line: per probe the median and the worst latency (ms) of ``--samples``
calls, the streams accepted and refused, and the refusals' seconds. Targets (issue 29):
Capabilities and Read within 100 ms with 1,000 idle streams open; nothing waits on a push.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
from finsy.proto import p4r_grpc

from p4emu.proto import p4r

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p4emu.bundle import SourceBundle, device_config_for  # noqa: E402
from p4emu.frontend import load_program  # noqa: E402
from p4emu.p4info import p4info_for_program  # noqa: E402
from p4emu.p4rt_client.messages import pipeline_config, set_pipeline_request  # noqa: E402
from p4emu.server.client import P4RuntimeClient  # noqa: E402
from p4emu.server.service import P4RuntimeService, start_grpc_server  # noqa: E402
from p4emu.server.switch_device import DeviceSettings, SwitchDevice  # noqa: E402

PROGRAM = ROOT / "p4src" / "mrc_switch.p4"
MACRO_BOMB = (
    "".join(
        f"#define {name} {' '.join([below] * 10)}\n"
        for name, below in zip("ABCDEFG", ["x", *"ABCDEF"], strict=True)
    )
    + "G\n"
)


def latencies(call: Callable[[], object], samples: int) -> dict[str, float]:
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return {"median_ms": round(statistics.median(times), 2), "max_ms": round(max(times), 2)}


def _idle(stop: threading.Event) -> Iterator[p4r.StreamMessageRequest]:
    stop.wait()
    yield from ()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args()

    service = P4RuntimeService(SwitchDevice(DeviceSettings()))
    server, port = start_grpc_server(service, "127.0.0.1:0")
    address = f"127.0.0.1:{port}"
    client = P4RuntimeClient(address).connect()
    client.set_pipeline_from_program(PROGRAM)
    p4info = p4info_for_program(load_program(PROGRAM))
    channel = grpc.insecure_channel(address)
    stub = p4r_grpc.P4RuntimeStub(channel)
    read = p4r.ReadRequest(device_id=0)
    read.entities.add().table_entry.SetInParent()

    def capabilities() -> object:
        return stub.Capabilities(p4r.CapabilitiesRequest(), timeout=60)

    def do_read() -> object:
        return list(stub.Read(read, timeout=60))

    out: dict[str, object] = {"streams_asked": args.streams}
    out["idle_baseline"] = {
        "capabilities": latencies(capabilities, args.samples),
        "read": latencies(do_read, args.samples),
    }

    # Reads while a pipeline compiles (the same program again, VERIFY_AND_COMMIT).
    push = stub.SetForwardingPipelineConfig.future(_push_request(p4info), timeout=600)
    during = latencies(do_read, args.samples)
    out["read_during_push"] = {**during, "push_still_running_after": not push.done()}
    push.result()

    stop = threading.Event()
    calls = [stub.StreamChannel(_idle(stop)) for _ in range(args.streams)]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        refused = sum(1 for call in calls if call.done())
        if len(service._streams) + refused >= args.streams:
            break
        time.sleep(0.1)
    out["streams_open"] = len(service._streams)
    out["streams_refused"] = sum(1 for call in calls if call.done())
    out["with_idle_streams"] = {
        "capabilities": latencies(capabilities, args.samples),
        "read": latencies(do_read, args.samples),
    }
    stop.set()
    for call in calls:
        call.cancel()

    bombs = {
        "macro_bomb": MACRO_BOMB.encode(),
        "include_bomb": SourceBundle(
            main="f0.p4",
            files={
                **{f"f{i}.p4": f'#include "f{i + 1}.p4"\n' * 2 for i in range(18)},
                "f18.p4": "// leaf\n",
            },
        ).to_bytes(),
    }
    for name, config in bombs.items():
        started = time.perf_counter()
        try:
            stub.SetForwardingPipelineConfig(_push_request(p4info, config), timeout=600)
            code = "OK"
        except grpc.RpcError as exc:
            code = exc.code().name
        out[name] = {"code": code, "seconds": round(time.perf_counter() - started, 2)}
    client.close()
    channel.close()
    server.stop(None)
    print(json.dumps(out))


def _push_request(p4info: object, config: bytes | None = None) -> object:
    data = config if config is not None else device_config_for(PROGRAM)
    return set_pipeline_request(0, 1, pipeline_config(p4info, data))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
