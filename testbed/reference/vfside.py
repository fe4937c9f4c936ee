"""The virtual fabric's side of the differential: the same fat tree as htsim's (one plane,
K T0s of K/2 NICs and K/2 uplinks, K/2 T1s; NIC ``i`` is htsim's host ``i``), the same
flows, run in a child process so its wall time and peak RSS are one run's, as htsim's.

The child is ``python -c CHILD_PRELUDE REQUEST.json RESULT.json`` (the same as ``python -m
testbed.reference.vfside REQUEST.json RESULT.json``, with the cyclic collector off from the
first import until the fabric is built: :func:`start_without_collector`).
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from clikit import dataclass_code
from nic_emu.config import NicConfig
from testbed.reference.exceptions import RunFailedError
from testbed.reference.results import FlowResult, SideRun, run_child
from testbed.reference.workload import FabricShape, Flow, check_flows, end_us
from topologies import Topology, two_tier

if TYPE_CHECKING:
    from vfabric import VirtualFabric
    from vfabric.transfers import Transfer

REQUEST_NAME = "request.json"
RESULT_NAME = "result.json"
STDOUT_NAME = "vfabric.stdout"
STDERR_NAME = "vfabric.stderr"
REPO_ROOT = Path(__file__).resolve().parents[2]
#: the child's program (``python -c``; its arguments: the request and result paths): the
#: collector is off before anything of the project is imported, then as :func:`main`
CHILD_PRELUDE = (
    "import gc, sys; gc.disable(); from testbed.reference import vfside; "
    "vfside.start_without_collector(); vfside.leave(vfside.main(sys.argv[1:]))"
)
#: whether :func:`build` turns the collector back on (:func:`start_without_collector`)
_collector_off_until_built = [False]


def start_without_collector() -> None:
    """For a child's start-up (the two children of the reference runs: this module's and
    ``benchmarks/htsim_compare.py``'s, whose first lines turn it off before their
    imports): the cyclic collector off until :func:`build` has built the fabric and
    scheduled its flows, then, what the start-up left alive moved unscanned to the oldest
    generation (:func:`vfabric.fabric.age_survivors`) and the collector back on, so the
    run has the collector it has in any process. The imports and the build make
    long-lived objects and no garbage cycles worth a scan: with the collector on, their
    70-odd young and middle collections were about a tenth of the imports' CPU."""
    gc.disable()
    _collector_off_until_built[0] = True


def nic_name(host: int) -> str:
    return f"nic{host}"


def topology(shape: FabricShape) -> Topology:
    """One plane of htsim's two-tier fat tree, with the shape's rate, latency and queue."""
    half = shape.k // 2
    return two_tier(
        1,
        shape.k,
        half,
        half,
        name=f"htsim-fat-tree-{shape.hosts}",
        rate_gbps=shape.rate_gbps,
        delay_us=shape.delay_us,
        queue_packets=shape.queue_packets,
    )


def nic_config(shape: FabricShape) -> NicConfig:
    """The NICs' defaults, with the fabric's port rate and base RTT (the CC window, its
    target delay and adjust period scale with it, as NSCC's do in htsim)."""
    return NicConfig(port_rate_bps=round(shape.rate_gbps * 1e9), base_rtt_ns=shape.base_rtt_ns)


def build(
    shape: FabricShape, flows: Sequence[Flow], seed: int
) -> tuple[VirtualFabric, dict[int, Transfer]]:
    """The virtual fabric of ``shape`` with ``flows`` scheduled, nothing run: the fabric
    and its transfers by flow id (what :func:`simulate` runs, and the two-process
    benchmarks and tests split)."""
    from vfabric import VirtualFabric  # the child's import: the parent never builds one

    fabric = VirtualFabric(topology(shape), seed=seed, nic_config=nic_config(shape))
    transfers = {
        f.id: fabric.transfer(nic_name(f.src), nic_name(f.dst), f.size, start_ns=f.start_us * 1000)
        for f in flows
    }
    if _collector_off_until_built[0]:
        from vfabric.fabric import age_survivors

        _collector_off_until_built[0] = False
        age_survivors()
        gc.enable()
    return fabric, transfers


def simulate(shape: FabricShape, flows: Sequence[Flow], seed: int) -> dict[str, Any]:
    """Run the flows in this process; per flow results and the run's own figures."""
    fabric, transfers = build(shape, flows, seed)
    started = time.perf_counter()
    finished = fabric.run(until_ns=end_us(shape, flows) * 1000)
    run_wall = time.perf_counter() - started
    out: dict[str, Any] = {
        "finished": finished,
        "run_wall_s": run_wall,
        "virtual_ns": fabric.now,
        "switch_traversals": fabric.traversals(),
        "event_log_sha256": fabric.event_log_sha256,
        "flows": {},
        "failures": {},
    }
    for fid, t in transfers.items():
        result = fabric.transfer_result(t, sha256=False)  # the digest is never read here
        if not t.intact:
            out["failures"][fid] = result["failure"] or "did not finish"
            continue
        out["flows"][fid] = FlowResult(
            id=fid,
            fct_us=result["duration_ns"] / 1000,
            retransmitted_packets=result["retransmitted_packets"],
            retransmitted_bytes=result["retransmitted_bytes"],
            trims=result["trimmed_received"],
            nacks=result["nacks_received"],
        ).as_dict()
    return out


def run(
    shape: FabricShape,
    flows: Sequence[Flow],
    seed: int,
    directory: Path,
    *,
    timeout_s: float = 3600.0,
    keep: bool = False,
) -> SideRun:
    """Run the flows in a child process in ``directory`` (removed on success unless
    ``keep``; kept, and named in the error, on failure)."""
    check_flows(shape.hosts, flows)
    directory.mkdir(parents=True, exist_ok=True)
    request = directory / REQUEST_NAME
    result = directory / RESULT_NAME
    write_request(request, shape, flows, seed)
    env = child_env()
    argv = [sys.executable, "-c", CHILD_PRELUDE, str(request), str(result)]
    child = run_child(
        argv,
        cwd=directory,
        stdout=directory / STDOUT_NAME,
        stderr=directory / STDERR_NAME,
        timeout_s=timeout_s,
        env=env,
    )
    if child.timed_out:
        raise RunFailedError(f"the virtual fabric did not finish within {timeout_s:g} s", directory)
    if child.returncode != 0:
        raise RunFailedError(f"the virtual fabric exited with status {child.returncode}", directory)
    try:
        data = json.loads(result.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunFailedError(
            f"the virtual fabric's {RESULT_NAME} is unreadable: {exc}", directory
        ) from None
    if data["failures"]:
        fid, why = next(iter(data["failures"].items()))
        raise RunFailedError(
            f"virtual fabric: {len(data['failures'])} flow(s) not delivered intact, "
            f"first: flow {fid}: {why}",
            directory,
        )
    per_flow = {int(k): FlowResult(**v) for k, v in data["flows"].items()}
    extra = {k: v for k, v in data.items() if k not in ("flows", "failures")}
    run_wall = data["run_wall_s"]
    extra["traversals_per_s"] = round(data["switch_traversals"] / run_wall) if run_wall else None
    if not keep:
        import shutil  # (here: the child, which imports this module, removes nothing)

        shutil.rmtree(directory, ignore_errors=True)
    return SideRun("vfabric", per_flow, child.wall_s, child.peak_rss_mib, extra)


def child_env() -> dict[str, str]:
    """This process's environment with the repository first on ``PYTHONPATH``: what a
    child that imports the project runs with."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def write_request(path: Path, shape: FabricShape, flows: Sequence[Flow], seed: int) -> None:
    """The request a child reads (:func:`serve`): the fabric's shape, the flows, the seed."""
    path.write_text(
        json.dumps({"shape": asdict(shape), "flows": [asdict(f) for f in flows], "seed": seed}),
        encoding="utf-8",
    )


def serve(
    request_path: str,
    result_path: str,
    run: Callable[[FabricShape, Sequence[Flow], int], dict[str, Any]],
) -> int:
    """A child's work: the request of :func:`write_request` in, ``run``'s figures out."""
    request = json.loads(Path(request_path).read_text(encoding="utf-8"))
    shape = FabricShape(**request["shape"])
    flows = [Flow(**f) for f in request["flows"]]
    out = run(shape, flows, request["seed"])
    Path(result_path).write_text(json.dumps(out), encoding="utf-8")
    return 0


def main(argv: Sequence[str]) -> int:
    request_path, result_path = argv
    return serve(request_path, result_path, simulate)


def leave(code: int) -> NoReturn:
    """End a child with ``code`` once its result file is written (and closed): stdout and
    stderr flushed, then out without the interpreter's teardown, which would free the
    whole fabric object by object (about 0.1 s of the 1 MiB permutation's child;
    docs/virtual-fabric.md, "Start-up"). Only for a child's ``__main__``: the caller
    holds nothing that still needs closing. What the child compiled of its dataclasses'
    methods is kept first (:func:`clikit.dataclass_code.flush`: no teardown, no atexit)."""
    dataclass_code.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    start_without_collector()
    leave(main(sys.argv[1:]))
