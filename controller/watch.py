"""Keep a fabric programmed: re-program a switch that restarted or lost its pipeline.

One task per switch holds a P4Runtime stream open as primary. It re-programs the switch
(pipeline + tables, through the same reconcile as ``push``) whenever

- the stream drops (the switch process died or restarted): it reconnects, retrying every
  ``retry_interval`` seconds, and reconciles as soon as the switch answers again;
- the switch's pipeline disappears or changes (checked every ``check_interval`` seconds
  with a cookie-only GetForwardingPipelineConfig);
- optionally, every ``resync_interval`` seconds, to repair entries someone else changed.

A switch that stays down only delays itself; the others keep being watched.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from controller.artifacts import Pipeline
from controller.endpoints import P4RuntimeTarget
from controller.entities import EntityCodec
from controller.exceptions import SwitchAccessError, UnreachableError
from controller.p4rt_client import SwitchClient
from controller.plan import RoutePlan, SwitchPlan
from controller.push import ConnectOptions, make_client
from controller.reconcile import SwitchReport, SyncOptions, pipeline_state, sync_switch

DEFAULT_CHECK_INTERVAL_S = 1.0
DEFAULT_RETRY_INTERVAL_S = 0.5
MAX_BACKOFF_S = 10.0


@dataclass(frozen=True)
class WatchEvent:
    """Something that happened to a switch. ``kind``: ``programmed`` (reconciled, possibly
    with no change), ``failed`` (reconcile reported an error), ``lost`` (stream dropped or
    pipeline gone), ``unreachable`` (a reconnect attempt failed; reported once per outage),
    ``not-primary`` (another controller took over)."""

    time: float
    switch: str
    kind: str
    detail: str
    report: SwitchReport | None = None


EventCallback = Callable[[WatchEvent], None]


@dataclass(frozen=True)
class WatchOptions:
    """How often (in seconds) ``watch`` checks each switch's pipeline, retries an unreachable
    switch and reconciles anyway (0: only after a restart or a lost pipeline)."""

    check_interval: float = DEFAULT_CHECK_INTERVAL_S
    retry_interval: float = DEFAULT_RETRY_INTERVAL_S
    resync_interval: float = 0.0  # 0: only on restart / pipeline loss


class FabricWatcher:
    def __init__(
        self,
        plan: RoutePlan,
        pipeline: Pipeline,
        endpoints: Mapping[str, P4RuntimeTarget],
        *,
        connect: ConnectOptions | None = None,
        sync: SyncOptions | None = None,
        options: WatchOptions | None = None,
        on_event: EventCallback | None = None,
        codec: EntityCodec | None = None,
    ) -> None:
        self.plan = plan
        self.pipeline = pipeline
        self.endpoints = endpoints
        self.connect = connect if connect is not None else ConnectOptions()
        self.sync = sync if sync is not None else SyncOptions()
        self.options = options if options is not None else WatchOptions()
        self.on_event = on_event
        self.codec = codec if codec is not None else EntityCodec(pipeline.p4info)
        self.programmed_count: dict[str, int] = {sw.name: 0 for sw in plan}

    def _emit(
        self, switch: str, kind: str, detail: str, report: SwitchReport | None = None
    ) -> None:
        if self.on_event is not None:
            self.on_event(WatchEvent(time.time(), switch, kind, detail, report))

    async def run(self, stop: asyncio.Event) -> None:
        """Watches every switch until ``stop`` is set."""
        tasks = [
            asyncio.create_task(self._watch(sw, stop), name=f"watch-{sw.name}") for sw in self.plan
        ]
        try:
            await stop.wait()
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _watch(self, sw: SwitchPlan, stop: asyncio.Event) -> None:
        endpoint = self.endpoints.get(sw.name)
        if endpoint is None:
            self._emit(sw.name, "failed", f"no P4Runtime address for {sw.name}")
            return
        reported_down = False
        backoff = self.options.retry_interval
        while not stop.is_set():
            client = make_client(sw.name, endpoint, self.connect)
            wait = backoff
            try:
                await client.connect()
                await client.become_primary()
                reported_down = False
                if await self._program(client, sw):
                    backoff = self.options.retry_interval
                    reason = await self._hold(client, sw, stop)
                    if reason:
                        self._emit(sw.name, "lost", reason)
                        wait = 0.0 if reason.startswith("pipeline") else backoff
                else:
                    # The switch answers but refuses us: retry, more and more slowly.
                    backoff = min(backoff * 2, MAX_BACKOFF_S)
            except SwitchAccessError as exc:
                if exc.kind == "arbitration":
                    self._emit(sw.name, "not-primary", exc.message)
                    backoff = min(backoff * 2, MAX_BACKOFF_S)
                elif not reported_down:
                    self._emit(sw.name, "unreachable", exc.message)
                reported_down = True
            finally:
                await client.close()
            if not stop.is_set() and wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), wait)

    async def _program(self, client: SwitchClient, sw: SwitchPlan) -> bool:
        """Reconciles the switch; True if it now matches the plan."""
        report = await sync_switch(client, self.codec, sw, self.pipeline, self.sync)
        if report.ok:
            self.programmed_count[sw.name] += 1
            detail = (
                "in sync"
                if report.written == 0 and report.pipeline == "same"
                else f"pipeline {report.pipeline}, +{report.inserted} ~{report.modified} "
                f"-{report.deleted} in {report.seconds:.2f} s"
            )
            self._emit(sw.name, "programmed", detail, report)
            return True
        if report.error_kind == "unreachable":
            raise UnreachableError(sw.name, report.error or "unreachable")
        self._emit(sw.name, "failed", f"{report.error_kind}: {report.error}", report)
        return False

    async def _hold(self, client: SwitchClient, sw: SwitchPlan, stop: asyncio.Event) -> str:
        """Waits while the switch stays healthy; returns why it stopped ("" if asked to)."""
        last_resync = time.monotonic()
        while not stop.is_set():
            waits = [
                asyncio.create_task(stop.wait()),
                asyncio.create_task(client.stream_lost.wait()),
                asyncio.create_task(client.primary_changed.wait()),
            ]
            await asyncio.wait(
                waits, timeout=self.options.check_interval, return_when=asyncio.FIRST_COMPLETED
            )
            for task in waits:
                task.cancel()
            if stop.is_set():
                return ""
            if client.stream_lost.is_set():
                return f"stream lost ({client.stream_problem})"
            if client.primary_changed.is_set():
                client.primary_changed.clear()
                if not client.is_primary:
                    return "no longer primary"
            try:
                state = await pipeline_state(client, self.pipeline)
            except SwitchAccessError as exc:  # the switch went away between two checks
                return f"connection lost ({exc.message})"
            if state != "same":
                return f"pipeline {state}; re-programming"
            resync = self.options.resync_interval
            if resync > 0 and time.monotonic() - last_resync >= resync:
                if not await self._program(client, sw):
                    return "resync failed"
                last_resync = time.monotonic()
        return ""


async def watch_fabric(
    plan: RoutePlan,
    pipeline: Pipeline,
    endpoints: Mapping[str, P4RuntimeTarget],
    stop: asyncio.Event,
    **kwargs: object,
) -> FabricWatcher:
    """Runs a :class:`FabricWatcher` until ``stop`` is set; returns it (for its counts)."""
    watcher = FabricWatcher(plan, pipeline, endpoints, **kwargs)  # type: ignore[arg-type]
    await watcher.run(stop)
    return watcher
