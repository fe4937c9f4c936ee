"""Static uSID route plan of an MRC fabric, pushed and kept over P4Runtime.

MRC fabrics run no BGP and no ECMP: every switch gets static tables once, derived from the
topology (``topologies``). This package plans those tables (``plan``), encodes them by name
through the P4Info (``entities``), pushes and reconciles them on many switches at once
(``push``, ``reconcile``), keeps them in place when switches restart (``watch``) and shows
what a switch holds (``show``). Command line: ``mrc-controller`` (``cli``).
Documentation: docs/controller.md.
"""

from __future__ import annotations

from clikit import hotpath  # noqa: F401 - first: the compiled-or-pure finder (docs/virtual-fabric.md)
from controller.artifacts import Pipeline, bmv2_pipeline, p4c_command, p4emu_pipeline, pipeline_for
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
from controller.reconcile import Change, Diff, SwitchReport, SyncOptions, diff_entries, sync_switch
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
