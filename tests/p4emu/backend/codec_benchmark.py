"""The generated parser and deparser of the MRC switch program alone, per packet.

Loads ``p4src/mrc_switch.p4`` (the generated module runs compiled or pure as this process
does: ``$MRC_TESTBED_PURE``), then times the parse block on the data packets of
:mod:`benchmarks.p4emu_pps` (Ethernet / IPv6 uSID carrier / IPv6 / UDP / BTH / RETH / 1 KB
payload) with the headers reset before each parse (timed alone too), and the deparse block
giving the finished packet (headers and payload: what the switch sends; a deparser that
returns its list of headers, as before the native deparser, is joined with the payload
here, as the switch did). Prints one JSON line (nanoseconds per packet, CPU time).

Usage: ``python tests/p4emu/backend/codec_benchmark.py [--packets N] [--repeat R]`` (a script,
not a test: it measures the generated code p4emu's backend makes, below the public
modules that ``benchmarks/`` may use)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from p4emu_pps import build_packets  # noqa: E402

from p4emu.backend.rt import PacketContext  # noqa: E402
from p4emu.frontend import load_program  # noqa: E402
from p4emu.runtime.clock import VirtualClock  # noqa: E402
from p4emu.switch import Switch  # noqa: E402


def _best(run: object, repeat: int) -> float:
    """The least CPU seconds of ``repeat`` calls of ``run`` (the least disturbed)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    switch = Switch(load_program(ROOT / "p4src" / "mrc_switch.p4"), clock=VirtualClock())
    program = switch.program
    packets = build_packets(256)
    hdr, meta, sm = program.new_headers(), program.new_metadata(), program.new_standard_metadata()
    init, parse, deparse = program.init_headers, program.parse, program.deparse
    ctx = PacketContext(len(packets[0]))
    sm.ingress_port = 1
    count = args.packets
    frames = [packets[i & 255] for i in range(count)]

    def run_init() -> None:
        for _frame in frames:
            init(hdr)

    def run_parse() -> None:
        for frame in frames:
            init(hdr)
            parse(frame, hdr, meta, sm, ctx)

    init(hdr)
    offset = parse(packets[0], hdr, meta, sm, ctx)
    assert sm.parser_error == 0, sm.parser_error
    ctx.payload = packets[0][offset:]
    out = deparse(hdr, ctx)
    joins = isinstance(out, list)  # the deparser's contract before the native deparser
    frame = b"".join([*out, ctx.payload]) if joins else out
    assert frame == packets[0], "the deparser does not give the packet back"

    def run_deparse() -> None:
        if joins:
            for _frame in frames:
                parts = deparse(hdr, ctx)
                parts.append(ctx.payload)
                b"".join(parts)
        else:
            for _frame in frames:
                deparse(hdr, ctx)

    init_s = _best(run_init, args.repeat)
    parse_s = _best(run_parse, args.repeat)
    deparse_s = _best(run_deparse, args.repeat)
    shared = program.shared
    print(
        json.dumps(
            {
                "generated_module": shared.how if shared is not None else "?",
                "packets": count,
                "repeat": args.repeat,
                "init_headers_ns": round(init_s / count * 1e9),
                "parse_ns": round((parse_s - init_s) / count * 1e9),
                "deparse_ns": round(deparse_s / count * 1e9),
                "header_bytes": offset,
                "packet_bytes": len(packets[0]),
                "python": sys.version.split()[0],
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
