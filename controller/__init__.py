"""Static uSID route plan of an MRC fabric, pushed and kept over P4Runtime.

MRC fabrics run no BGP and no ECMP: every switch gets static tables once, derived from the
topology (``topologies``). This package plans those tables (``plan``), encodes them by name
through the P4Info (``entities``), pushes and reconciles them on many switches at once
(``push``, ``reconcile``), keeps them in place when switches restart (``watch``) and shows
what a switch holds (``show``). Command line: ``mrc-controller`` (``cli``).
Documentation: docs/controller.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clikit import hotpath  # noqa: F401 - first: the compiled-or-pure finder (docs/virtual-fabric.md)
from clikit.lazy import lazy_names

if TYPE_CHECKING:
    from controller.artifacts import (
        Pipeline,
        bmv2_pipeline,
        p4c_command,
        p4emu_pipeline,
        pipeline_for,
    )
    from controller.endpoints import P4RuntimeTarget, default_endpoints, load_endpoints
    from controller.entities import EntityCodec
    from controller.exceptions import (
        ArbitrationError,
        ArtifactError,
        ControllerError,
        DecodeError,
        EncodeError,
        EndpointError,
        P4InfoMismatchError,
        PipelineError,
        PlanError,
        ReadError,
        SwitchAccessError,
        UnreachableError,
        UpdateFailure,
        WriteError,
    )
    from controller.plan import Entry, LpmPrefix, RoutePlan, SwitchPlan, plan_fabric
    from controller.policy import ClassParams, SwitchPolicy, class_params_for
    from controller.push import ConnectOptions, FabricReport, push, push_fabric
    from controller.reconcile import (
        Change,
        Diff,
        SwitchReport,
        SyncOptions,
        diff_entries,
        sync_switch,
    )
    from controller.watch import FabricWatcher, WatchEvent, WatchOptions, watch_fabric

__all__ = [
    "ArbitrationError",
    "ArtifactError",
    "Change",
    "ClassParams",
    "ConnectOptions",
    "ControllerError",
    "DecodeError",
    "Diff",
    "EncodeError",
    "EndpointError",
    "EntityCodec",
    "Entry",
    "FabricReport",
    "FabricWatcher",
    "LpmPrefix",
    "P4InfoMismatchError",
    "P4RuntimeTarget",
    "Pipeline",
    "PipelineError",
    "PlanError",
    "ReadError",
    "RoutePlan",
    "SwitchAccessError",
    "SwitchPlan",
    "SwitchPolicy",
    "SwitchReport",
    "SyncOptions",
    "UnreachableError",
    "UpdateFailure",
    "WatchEvent",
    "WatchOptions",
    "WriteError",
    "bmv2_pipeline",
    "class_params_for",
    "default_endpoints",
    "diff_entries",
    "load_endpoints",
    "p4c_command",
    "p4emu_pipeline",
    "pipeline_for",
    "plan_fabric",
    "push",
    "push_fabric",
    "sync_switch",
    "watch_fabric",
]

# each name is imported from its module on first use: a virtual fabric, which needs the
# plan, the entity codec and the reconciler's diff, does not import the P4Runtime client,
# the pusher or the watcher (docs/virtual-fabric.md, "Start-up")
_LAZY = {
    "ArbitrationError": "controller.exceptions",
    "ArtifactError": "controller.exceptions",
    "Change": "controller.reconcile",
    "ClassParams": "controller.policy",
    "ConnectOptions": "controller.push",
    "ControllerError": "controller.exceptions",
    "DecodeError": "controller.exceptions",
    "Diff": "controller.reconcile",
    "EncodeError": "controller.exceptions",
    "EndpointError": "controller.exceptions",
    "EntityCodec": "controller.entities",
    "Entry": "controller.plan",
    "FabricReport": "controller.push",
    "FabricWatcher": "controller.watch",
    "LpmPrefix": "controller.plan",
    "P4InfoMismatchError": "controller.exceptions",
    "P4RuntimeTarget": "controller.endpoints",
    "Pipeline": "controller.artifacts",
    "PipelineError": "controller.exceptions",
    "PlanError": "controller.exceptions",
    "ReadError": "controller.exceptions",
    "RoutePlan": "controller.plan",
    "SwitchAccessError": "controller.exceptions",
    "SwitchPlan": "controller.plan",
    "SwitchPolicy": "controller.policy",
    "SwitchReport": "controller.reconcile",
    "SyncOptions": "controller.reconcile",
    "UnreachableError": "controller.exceptions",
    "UpdateFailure": "controller.exceptions",
    "WatchEvent": "controller.watch",
    "WatchOptions": "controller.watch",
    "WriteError": "controller.exceptions",
    "bmv2_pipeline": "controller.artifacts",
    "class_params_for": "controller.policy",
    "default_endpoints": "controller.endpoints",
    "diff_entries": "controller.reconcile",
    "load_endpoints": "controller.endpoints",
    "p4c_command": "controller.artifacts",
    "p4emu_pipeline": "controller.artifacts",
    "pipeline_for": "controller.artifacts",
    "plan_fabric": "controller.plan",
    "push": "controller.push",
    "push_fabric": "controller.push",
    "sync_switch": "controller.reconcile",
    "watch_fabric": "controller.watch",
}


__getattr__ = lazy_names(__name__, _LAZY)
