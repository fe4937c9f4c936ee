"""watch: restarted switches, lost pipelines and late switches get (re)programmed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from controller.plan import plan_fabric
from controller.push import ConnectOptions
from controller.watch import FabricWatcher, WatchEvent, WatchOptions

FAST = ConnectOptions(connect_timeout=10.0)
QUICK = WatchOptions(check_interval=0.1, retry_interval=0.05)
PATIENCE_S = 20.0  # upper bound for a condition to come true; not a timing assertion


async def until(condition: Callable[[], bool], what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE_S
    while not condition():
        assert loop.time() < deadline, f"gave up waiting for: {what}"
        await asyncio.sleep(0.02)


def test_watch_programs_then_reprograms_a_restarted_switch(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny)
    events: list[WatchEvent] = []
    expected = len([e for e in plan["p0-t1-1"].entries if not e.is_default])

    async def main() -> None:
        stop = asyncio.Event()
        watcher = FabricWatcher(
            plan, pipeline, fabric.endpoints, connect=FAST, options=QUICK, on_event=events.append
        )
        task = asyncio.create_task(watcher.run(stop))
        await until(lambda: all(watcher.programmed_count.values()), "every switch programmed")
        assert all(sw.device.entry_count() > 0 for sw in fabric.switches.values())

        await asyncio.to_thread(fabric["p0-t1-1"].restart)
        await until(lambda: watcher.programmed_count["p0-t1-1"] >= 2, "p0-t1-1 re-programmed")
        device = fabric["p0-t1-1"].device
        assert device.pipeline_sets == 1 and device.entry_count() == expected
        stop.set()
        await task
        assert all(n == 1 for name, n in watcher.programmed_count.items() if name != "p0-t1-1")

    asyncio.run(main())
    kinds = [(e.switch, e.kind) for e in events if e.switch == "p0-t1-1"]
    assert kinds[0] == ("p0-t1-1", "programmed")
    assert ("p0-t1-1", "lost") in kinds
    assert kinds[-1] == ("p0-t1-1", "programmed")
    last = [e for e in events if e.switch == "p0-t1-1"][-1]
    assert last.report is not None and last.report.pipeline == "set"


def test_watch_notices_a_replaced_pipeline(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny, switches=["p1-t0-0"])
    events: list[WatchEvent] = []

    async def main() -> None:
        stop = asyncio.Event()
        watcher = FabricWatcher(
            plan, pipeline, fabric.endpoints, connect=FAST, options=QUICK, on_event=events.append
        )
        task = asyncio.create_task(watcher.run(stop))
        await until(lambda: watcher.programmed_count["p1-t0-0"] == 1, "programmed once")
        device = fabric["p1-t0-0"].device
        other = pipeline.config()
        other.p4_device_config = b"// someone else's program\n"
        other.cookie.cookie = 7
        with fabric["p1-t0-0"].locked():
            device.commit_pipeline(device.verify_pipeline(other), reconcile=False)
        await until(lambda: watcher.programmed_count["p1-t0-0"] == 2, "re-programmed")
        assert device.config.cookie.cookie == pipeline.cookie
        assert device.entry_count() == len(plan["p1-t0-0"].entries) - 1
        stop.set()
        await task

    asyncio.run(main())
    assert any(e.kind == "lost" and "pipeline different" in e.detail for e in events)


def test_watch_waits_for_a_switch_that_starts_late(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny, switches=["p0-t0-0", "p0-t0-1"])
    fabric["p0-t0-1"].stop()
    events: list[WatchEvent] = []

    async def main() -> None:
        stop = asyncio.Event()
        watcher = FabricWatcher(
            plan, pipeline, fabric.endpoints, connect=FAST, options=QUICK, on_event=events.append
        )
        task = asyncio.create_task(watcher.run(stop))
        await until(lambda: any(e.kind == "unreachable" for e in events), "unreachable event")
        assert watcher.programmed_count["p0-t0-1"] == 0
        await asyncio.to_thread(fabric["p0-t0-1"].start)
        await until(lambda: watcher.programmed_count["p0-t0-1"] == 1, "late switch programmed")
        stop.set()
        await task

    asyncio.run(main())
    unreachable = [e for e in events if e.kind == "unreachable"]
    assert {e.switch for e in unreachable} == {"p0-t0-1"}
    assert len(unreachable) == 1  # reported once per outage, not once per retry


def test_watch_reports_a_switch_without_address(pipeline, tiny) -> None:
    plan = plan_fabric(tiny, switches=["p0-t0-0"])
    events: list[WatchEvent] = []

    async def main() -> None:
        stop = asyncio.Event()
        watcher = FabricWatcher(plan, pipeline, {}, on_event=events.append)
        task = asyncio.create_task(watcher.run(stop))
        await until(lambda: bool(events), "an event")
        stop.set()
        await task

    asyncio.run(main())
    assert events[0].kind == "failed" and "no P4Runtime address for p0-t0-0" in events[0].detail


def test_watch_resync_repairs_drift(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny, switches=["p0-t1-0"])
    options = WatchOptions(check_interval=0.05, retry_interval=0.05, resync_interval=0.1)

    async def main() -> None:
        stop = asyncio.Event()
        watcher = FabricWatcher(plan, pipeline, fabric.endpoints, connect=FAST, options=options)
        task = asyncio.create_task(watcher.run(stop))
        await until(lambda: watcher.programmed_count["p0-t1-0"] >= 1, "programmed")
        device = fabric["p0-t1-0"].device
        full = device.entry_count()
        with fabric["p0-t1-0"].locked():
            for table in device.entries.values():
                table.clear()
        await until(lambda: device.entry_count() == full, "drift repaired")
        stop.set()
        await task

    asyncio.run(main())
