"""push / diff / reconcile over real gRPC against in-process P4Runtime servers (conftest)."""

from __future__ import annotations

import asyncio

from finsy.proto import p4r

import topologies
from controller import p4names
from controller.artifacts import Pipeline
from controller.endpoints import P4RuntimeTarget
from controller.entities import EntityCodec
from controller.p4rt_client import SwitchClient
from controller.plan import Entry, RoutePlan, plan_fabric
from controller.push import ConnectOptions, FabricReport, push, push_fabric
from controller.reconcile import SyncOptions, read_owned

FAST = ConnectOptions(connect_timeout=10.0)


def read_back(endpoint: P4RuntimeTarget, name: str, pipeline: Pipeline) -> list[Entry]:
    async def main() -> list[Entry]:
        client = SwitchClient(name, endpoint, connect_timeout=10.0)
        try:
            await client.connect()
            return await read_owned(client, EntityCodec(pipeline.p4info))
        finally:
            await client.close()

    return asyncio.run(main())


def assert_switch_holds_plan(fabric, plan: RoutePlan, pipeline: Pipeline) -> None:
    for sw in plan:
        held = read_back(fabric.endpoints[sw.name], sw.name, pipeline)
        entries = {e for e in held if not e.is_default}
        assert entries == {e for e in sw.entries if not e.is_default}, sw.name
        defaults = {e.table: e for e in held if e.is_default}
        for table in p4names.OWNED_TABLES:
            planned = [e for e in sw.entries if e.is_default and e.table == table]
            want = planned[0] if planned else fabric.declared_default(table)
            assert defaults[table] == want, (sw.name, table)


def test_push_programs_every_switch_and_reads_back_equal(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny)
    report = push(plan, pipeline, fabric.endpoints, connect=FAST, sync=SyncOptions(verify=True))
    assert report.ok, [r.error for r in report.failed]
    for r in report.reports:
        assert r.pipeline == "set" and r.verified is True
        assert r.inserted == len(plan[r.switch].entries) - 1  # the default entry is a MODIFY
        assert r.modified == 1 and r.deleted == 0
        assert r.seconds > 0
    assert report.totals()["pipelines_set"] == len(plan)
    assert_switch_holds_plan(fabric, plan, pipeline)


def test_second_push_changes_nothing(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny)
    assert push(plan, pipeline, fabric.endpoints, connect=FAST).ok
    written = {name: sw.device.updates_written for name, sw in fabric.switches.items()}
    again = push(plan, pipeline, fabric.endpoints, connect=FAST)
    assert again.ok
    assert all(r.pipeline == "same" and r.written == 0 and not r.changes for r in again.reports)
    assert {name: sw.device.updates_written for name, sw in fabric.switches.items()} == written
    assert all(sw.device.pipeline_sets == 1 for sw in fabric.switches.values())


def test_reconcile_writes_only_the_difference(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny)
    assert push(plan, pipeline, fabric.endpoints, connect=FAST).ok
    codec = EntityCodec(pipeline.p4info)
    device = fabric["p0-t1-0"].device
    # Someone removes a route, re-points another and adds a stray one.
    routes = device.entries[codec.tables[p4names.USID_ROUTE].id]
    keys = sorted(routes)
    del routes[keys[0]]
    routes[keys[1]].action.action.params[0].value = b"\x07"
    stray = codec.encode(Entry(p4names.USID_ROUTE, (0x0999,), p4names.FORWARD, (1,))).table_entry
    routes[device._key(stray)] = stray

    diff = push(plan, pipeline, fabric.endpoints, connect=FAST, sync=SyncOptions(dry_run=True))
    changed = {r.switch: r for r in diff.reports if r.changes}
    assert list(changed) == ["p0-t1-0"]
    assert sorted(c.kind for c in changed["p0-t1-0"].changes) == ["DELETE", "INSERT", "MODIFY"]
    assert device.updates_written == len(plan["p0-t1-0"].entries)  # diff wrote nothing

    fixed = push(plan, pipeline, fabric.endpoints, connect=FAST)
    r = {x.switch: x for x in fixed.reports}["p0-t1-0"]
    assert (r.inserted, r.modified, r.deleted, r.pipeline) == (1, 1, 1, "same")
    assert all(x.written == 0 for x in fixed.reports if x.switch != "p0-t1-0")
    assert_switch_holds_plan(fabric, plan, pipeline)


def test_unreachable_switch_is_reported_and_the_others_are_programmed(
    fabric, pipeline, tiny
) -> None:
    fabric["p1-t1-1"].stop()
    report = push(plan_fabric(tiny), pipeline, fabric.endpoints, connect=FAST)
    failed = {r.switch: r for r in report.failed}
    assert list(failed) == ["p1-t1-1"]
    assert failed["p1-t1-1"].error_kind == "unreachable"
    assert "no P4Runtime server at 127.0.0.1:" in failed["p1-t1-1"].error
    assert sum(1 for r in report.reports if r.ok) == len(report.reports) - 1


def test_refused_pipeline_carries_the_switch_message(fabric, pipeline, tiny) -> None:
    fabric["p0-t0-1"].device.refuse_pipeline = "mrc_switch.p4:12:3: error: boom"
    report = push(plan_fabric(tiny), pipeline, fabric.endpoints, connect=FAST)
    (failed,) = report.failed
    assert failed.switch == "p0-t0-1" and failed.error_kind == "pipeline"
    assert failed.error_code == "INVALID_ARGUMENT"
    assert "mrc_switch.p4:12:3: error: boom" in failed.error


def test_bmv2_json_sent_to_p4emu_is_a_pipeline_mismatch(fabric, pipeline, tiny) -> None:
    bmv2 = Pipeline("bmv2", pipeline.p4info, b'{"header_types": [], "pipelines": []}', "BMv2 JSON")
    report = push(plan_fabric(tiny, switches=["p0-t0-0"]), bmv2, fabric.endpoints, connect=FAST)
    (failed,) = report.failed
    assert failed.error_kind == "pipeline"
    assert "p4c's BMv2 JSON, which is not supported by p4emu" in failed.error


def test_pipeline_keep_refuses_to_install(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny, switches=["p0-t0-0"])
    report = push(
        plan, pipeline, fabric.endpoints, connect=FAST, sync=SyncOptions(pipeline_mode="keep")
    )
    (failed,) = report.failed
    assert failed.error_kind == "pipeline"
    assert "its pipeline is missing and --pipeline keep forbids" in failed.error
    assert fabric["p0-t0-0"].device.pipeline_sets == 0


def test_pipeline_force_reinstalls_and_rewrites(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny, switches=["p0-t0-0"])
    assert push(plan, pipeline, fabric.endpoints, connect=FAST).ok
    forced = push(
        plan, pipeline, fabric.endpoints, connect=FAST, sync=SyncOptions(pipeline_mode="force")
    )
    (r,) = forced.reports
    assert r.ok and r.pipeline == "set" and r.inserted == len(plan["p0-t0-0"].entries) - 1
    assert fabric["p0-t0-0"].device.pipeline_sets == 2


def test_other_pipeline_is_replaced_and_same_pipeline_without_cookie_is_kept(
    fabric, pipeline, tiny
) -> None:
    plan = plan_fabric(tiny, switches=["p0-t0-0", "p0-t0-1"])
    device = fabric["p0-t0-0"].device
    other = pipeline.config()
    other.p4_device_config = b"// another program\n"
    other.cookie.cookie = 99
    device.commit_pipeline(device.verify_pipeline(other), reconcile=False)
    ours_without_cookie = pipeline.config()
    ours_without_cookie.ClearField("cookie")
    twin = fabric["p0-t0-1"].device
    twin.commit_pipeline(twin.verify_pipeline(ours_without_cookie), reconcile=False)

    diff = push(plan, pipeline, fabric.endpoints, connect=FAST, sync=SyncOptions(dry_run=True))
    assert {r.switch: r.pipeline for r in diff.reports} == {
        "p0-t0-0": "different",
        "p0-t0-1": "same",
    }
    report = push(plan, pipeline, fabric.endpoints, connect=FAST)
    assert {r.switch: r.pipeline for r in report.reports} == {"p0-t0-0": "set", "p0-t0-1": "same"}
    assert twin.pipeline_sets == 1


def test_partial_write_failure_lists_each_failed_update(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny)
    fabric["p1-t0-0"].device.fail_tables = {p4names.EGRESS_PORT_MAC}
    report = push(plan, pipeline, fabric.endpoints, connect=FAST, sync=SyncOptions(batch_size=5))
    (failed,) = report.failed
    assert failed.switch == "p1-t0-0" and failed.error_kind == "write"
    macs = len(plan["p1-t0-0"].entries_of(p4names.EGRESS_PORT_MAC))
    assert len(failed.failures) == macs
    first = failed.failures[0]
    assert first.update_type == "INSERT" and first.code == "INVALID_ARGUMENT"
    assert first.entity.startswith("egress_port_mac port=1 -> set_port_macs(")
    assert "injected failure for MrcEgress.egress_port_mac" in first.message
    assert failed.inserted == len(plan["p1-t0-0"].entries) - 1 - macs
    assert f"{macs} of {len(plan['p1-t0-0'].entries)} updates failed" in failed.error
    assert len(report.reports) - 1 == sum(1 for r in report.reports if r.ok)


def test_another_primary_is_an_arbitration_error(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny, switches=["p0-t1-0"])

    async def main() -> FabricReport:
        holder = SwitchClient("holder", fabric.endpoints["p0-t1-0"], election_id=100)
        await holder.connect()
        await holder.become_primary()
        try:
            return await push_fabric(plan, pipeline, fabric.endpoints, connect=FAST)
        finally:
            await holder.close()

    (failed,) = asyncio.run(main()).failed
    assert failed.error_kind == "arbitration"
    assert "another controller is primary (election id 100, ours 1)" in failed.error


def test_lower_election_id_after_a_departed_primary_takes_the_highest_seen(
    fabric, pipeline, tiny
) -> None:
    plan = plan_fabric(tiny, switches=["p0-t1-0"])
    high = ConnectOptions(election_id=50, connect_timeout=10.0)
    assert push(plan, pipeline, fabric.endpoints, connect=high).ok
    assert push(plan, pipeline, fabric.endpoints, connect=FAST).ok  # id 1 < 50 seen before


def test_wrong_device_id(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny, switches=["p0-t1-0"])
    endpoints = {"p0-t1-0": P4RuntimeTarget(fabric.endpoints["p0-t1-0"].address, device_id=4)}
    (failed,) = push(plan, pipeline, endpoints, connect=FAST).failed
    assert failed.error_kind == "arbitration" and failed.error_code == "NOT_FOUND"
    assert "device id 4 does not exist" in failed.error


def test_missing_endpoint(pipeline, tiny) -> None:
    (failed,) = push(plan_fabric(tiny, switches=["p0-t1-0"]), pipeline, {}).failed
    assert "no P4Runtime address for p0-t1-0" in failed.error


def test_link_down_and_back_up(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny)
    assert push(plan, pipeline, fabric.endpoints, connect=FAST).ok
    down = plan_fabric(tiny, down_links=["p1-t0-1,p1-t1-0"])
    report = {r.switch: r for r in push(down, pipeline, fabric.endpoints, connect=FAST).reports}
    for name in ("p1-t0-1", "p1-t1-0"):
        assert (report[name].inserted, report[name].modified, report[name].deleted) == (1, 1, 0)
    assert sum(r.written for r in report.values()) == 4
    assert_switch_holds_plan(fabric, down, pipeline)
    back = {r.switch: r for r in push(plan, pipeline, fabric.endpoints, connect=FAST).reports}
    for name in ("p1-t0-1", "p1-t1-0"):
        assert (back[name].inserted, back[name].modified, back[name].deleted) == (0, 1, 1)
    assert_switch_holds_plan(fabric, plan, pipeline)


def test_small_batches_and_low_concurrency(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny)
    calls: list[tuple[str, int, int]] = []
    report = push(
        plan,
        pipeline,
        fabric.endpoints,
        connect=ConnectOptions(connect_timeout=10.0, concurrency=1),
        sync=SyncOptions(batch_size=1),
        on_report=lambda r, done, total: calls.append((r.switch, done, total)),
    )
    assert report.ok
    assert [done for _, done, _ in calls] == list(range(1, len(plan) + 1))
    assert_switch_holds_plan(fabric, plan, pipeline)


def test_diff_needs_no_arbitration_and_reports_a_missing_pipeline(fabric, pipeline, tiny) -> None:
    plan = plan_fabric(tiny, switches=["p0-t0-0"])

    async def main() -> FabricReport:
        holder = SwitchClient("holder", fabric.endpoints["p0-t0-0"], election_id=100)
        await holder.connect()
        await holder.become_primary()
        try:
            return await push_fabric(
                plan, pipeline, fabric.endpoints, connect=FAST, sync=SyncOptions(dry_run=True)
            )
        finally:
            await holder.close()

    (r,) = asyncio.run(main()).reports
    assert r.ok and r.pipeline == "missing"
    assert len(r.changes) == len(plan["p0-t0-0"].entries)


def test_read_of_default_entries_uses_is_default_action(pipeline) -> None:
    codec = EntityCodec(pipeline.p4info)
    entities = codec.read_request_entities([p4names.SWITCH_CONFIG])
    assert entities[1].table_entry.is_default_action
    assert isinstance(entities[0], p4r.Entity)


def test_hundreds_of_failed_updates_in_one_batch_are_all_reported(pipeline, fabric_factory) -> None:
    # 400 NICs under one T0: a 500-update batch whose ~400 errors overflow gRPC's default
    # 16 KiB trailer limit unless the client raises it.
    topo = topologies.two_tier(1, 2, 2, 400)
    fabric = fabric_factory(topo)
    fabric["p0-t0-0"].device.fail_tables = {p4names.EGRESS_PORT_MAC}
    plan = plan_fabric(topo, switches=["p0-t0-0"])
    (failed,) = push(plan, pipeline, fabric.endpoints, connect=FAST).failed
    assert failed.error_kind == "write"
    assert len(failed.failures) == len(plan["p0-t0-0"].entries_of(p4names.EGRESS_PORT_MAC))
