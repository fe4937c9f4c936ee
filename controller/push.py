"""Program (or diff) many switches concurrently.

Every switch gets its own task: connect, become primary (election id), make sure it runs our
pipeline, then reconcile its tables (``controller.reconcile``). A switch that fails is
reported with the P4Runtime error and never stops the others; the caller turns the
:class:`FabricReport` into an exit code.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from controller.artifacts import Pipeline
from controller.endpoints import P4RuntimeTarget
from controller.entities import EntityCodec
from controller.exceptions import ControllerError, EndpointError, SwitchAccessError
from controller.p4rt_client import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_ELECTION_ID,
    DEFAULT_RPC_TIMEOUT_S,
    SwitchClient,
)
from controller.plan import RoutePlan, SwitchPlan
from controller.reconcile import SwitchReport, SyncOptions, sync_switch

DEFAULT_CONCURRENCY = 64


@dataclass(frozen=True)
class ConnectOptions:
    """How to reach and control each switch: election id (1..2^128-1), connect and RPC
    timeouts in seconds and how many switches are programmed at once."""

    election_id: int = DEFAULT_ELECTION_ID
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S
    rpc_timeout: float = DEFAULT_RPC_TIMEOUT_S
    concurrency: int = DEFAULT_CONCURRENCY

    def __post_init__(self) -> None:
        if not 0 < self.election_id < 1 << 128:
            raise ControllerError(f"election id must be in 1..2^128-1, got {self.election_id}")
        if self.concurrency < 1:
            raise ControllerError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.connect_timeout <= 0 or self.rpc_timeout <= 0:
            raise ControllerError("timeouts must be positive")


@dataclass
class FabricReport:
    """What a push or diff did: one report per switch and the wall time in seconds."""

    reports: list[SwitchReport] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(report.ok for report in self.reports)

    @property
    def failed(self) -> list[SwitchReport]:
        return [report for report in self.reports if not report.ok]

    @property
    def changed(self) -> list[SwitchReport]:
        return [r for r in self.reports if r.changes or r.pipeline in ("missing", "different")]

    def totals(self) -> dict[str, int]:
        return {
            "switches": len(self.reports),
            "failed": len(self.failed),
            "planned": sum(r.planned for r in self.reports),
            "inserted": sum(r.inserted for r in self.reports),
            "modified": sum(r.modified for r in self.reports),
            "deleted": sum(r.deleted for r in self.reports),
            "pipelines_set": sum(1 for r in self.reports if r.pipeline == "set"),
        }


ReportCallback = Callable[[SwitchReport, int, int], None]


def make_client(name: str, endpoint: P4RuntimeTarget, options: ConnectOptions) -> SwitchClient:
    return SwitchClient(
        name,
        endpoint,
        election_id=options.election_id,
        connect_timeout=options.connect_timeout,
        rpc_timeout=options.rpc_timeout,
    )


async def sync_one(
    plan: SwitchPlan,
    endpoint: P4RuntimeTarget | None,
    codec: EntityCodec,
    pipeline: Pipeline,
    connect: ConnectOptions,
    sync: SyncOptions,
) -> SwitchReport:
    """Connects to one switch, reconciles it and disconnects; never raises a ControllerError."""
    started = time.perf_counter()
    if endpoint is None:
        report = SwitchReport(plan.name, "?", planned=len(plan.entries))
        return report.fail(EndpointError(f"no P4Runtime address for {plan.name}"))
    client = make_client(plan.name, endpoint, connect)
    try:
        await client.connect()
        if not sync.dry_run:
            await client.become_primary()
        report = await sync_switch(client, codec, plan, pipeline, sync)
    except SwitchAccessError as exc:
        report = SwitchReport(plan.name, endpoint.address, planned=len(plan.entries)).fail(exc)
    finally:
        await client.close()
    report.seconds = time.perf_counter() - started
    return report


async def push_fabric(
    plan: RoutePlan,
    pipeline: Pipeline,
    endpoints: Mapping[str, P4RuntimeTarget],
    *,
    connect: ConnectOptions | None = None,
    sync: SyncOptions | None = None,
    codec: EntityCodec | None = None,
    on_report: ReportCallback | None = None,
) -> FabricReport:
    """Reconciles every switch of ``plan`` concurrently (``sync.dry_run``: diff only)."""
    connect = connect if connect is not None else ConnectOptions()
    sync = sync if sync is not None else SyncOptions()
    codec = codec if codec is not None else EntityCodec(pipeline.p4info)
    started = time.perf_counter()
    limit = asyncio.Semaphore(connect.concurrency)
    total = len(plan)
    done = 0
    result = FabricReport()

    async def one(sw: SwitchPlan) -> SwitchReport:
        nonlocal done
        async with limit:
            report = await sync_one(sw, endpoints.get(sw.name), codec, pipeline, connect, sync)
        done += 1
        if on_report is not None:
            on_report(report, done, total)
        return report

    result.reports = list(await asyncio.gather(*(one(sw) for sw in plan)))
    result.seconds = time.perf_counter() - started
    return result


def push(
    plan: RoutePlan,
    pipeline: Pipeline,
    endpoints: Mapping[str, P4RuntimeTarget],
    **kwargs: object,
) -> FabricReport:
    """Synchronous :func:`push_fabric` (runs its own event loop)."""
    return asyncio.run(push_fabric(plan, pipeline, endpoints, **kwargs))  # type: ignore[arg-type]
