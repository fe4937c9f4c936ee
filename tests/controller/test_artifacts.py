"""Pipeline artefacts: p4emu source + generated P4Info, p4c's BMv2 JSON + P4Info."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from google.protobuf import json_format

from controller.artifacts import (
    DEFAULT_PROGRAM,
    Pipeline,
    bmv2_pipeline,
    load_p4info,
    p4c_command,
    p4c_outputs,
    p4emu_pipeline,
    pipeline_cookie,
    pipeline_for,
)
from controller.exceptions import ArtifactError


def test_p4c_command_line() -> None:
    command = p4c_command(Path("p4src/mrc_switch.p4"), Path("out"), "/opt/p4c")
    assert command == [
        "/opt/p4c",
        "--target",
        "bmv2",
        "--arch",
        "v1model",
        "--p4runtime-files",
        "out/mrc_switch.p4info.txtpb",
        "-o",
        "out",
        "p4src/mrc_switch.p4",
    ]
    assert p4c_outputs(Path("p4src/mrc_switch.p4"), Path("out")) == (
        Path("out/mrc_switch.json"),
        Path("out/mrc_switch.p4info.txtpb"),
    )


def test_bmv2_without_p4c_or_files_says_what_to_do() -> None:
    with pytest.raises(ArtifactError) as caught:
        bmv2_pipeline(which=lambda name: None)
    assert "p4c is not on PATH" in str(caught.value)
    assert "--bmv2-json FILE --p4info FILE" in str(caught.value)


def test_bmv2_needs_both_files(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="--bmv2-json is given but --p4info is not"):
        bmv2_pipeline(bmv2_json=tmp_path / "x.json")
    with pytest.raises(ArtifactError, match="--p4info is given but --bmv2-json is not"):
        bmv2_pipeline(p4info=tmp_path / "x.p4info.txtpb")


def test_bmv2_from_given_files(tmp_path: Path, p4info_file: Path) -> None:
    bmv2_json = tmp_path / "mrc_switch.json"
    bmv2_json.write_text('{"header_types": [], "pipelines": []}')
    pipeline = bmv2_pipeline(bmv2_json=bmv2_json, p4info=p4info_file, which=lambda n: None)
    assert pipeline.target == "bmv2"
    assert pipeline.device_config == bmv2_json.read_bytes()
    assert pipeline.config().p4_device_config == bmv2_json.read_bytes()
    assert pipeline.config().cookie.cookie == pipeline.cookie
    with pytest.raises(ArtifactError, match="cannot read BMv2 JSON"):
        bmv2_pipeline(bmv2_json=tmp_path / "none.json", p4info=p4info_file)


def test_bmv2_runs_p4c_when_on_path(tmp_path: Path, p4info_file: Path) -> None:
    calls: list[list[str]] = []

    def fake_p4c(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        out = Path(command[command.index("-o") + 1])
        (out / "mrc_switch.json").write_text('{"pipelines": []}')
        Path(command[command.index("--p4runtime-files") + 1]).write_text(p4info_file.read_text())
        return subprocess.CompletedProcess(command, 0, "", "")

    pipeline = bmv2_pipeline(
        out_dir=tmp_path / "build", which=lambda name: "/usr/bin/p4c", run=fake_p4c
    )
    assert calls == [p4c_command(DEFAULT_PROGRAM, tmp_path / "build", "/usr/bin/p4c")]
    assert pipeline.device_config == b'{"pipelines": []}'
    assert pipeline.p4info.tables


def test_p4c_failure_shows_its_errors(tmp_path: Path) -> None:
    def failing(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(command, 1, "", "mrc_switch.p4(3): error: boom\n")

    with pytest.raises(ArtifactError, match=r"p4c failed \(exit 1\).*\n.*error: boom"):
        bmv2_pipeline(out_dir=tmp_path, which=lambda name: "p4c", run=failing)

    def silent(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(command, 0, "", "")

    with pytest.raises(ArtifactError, match=r"p4c did not write .*mrc_switch.json"):
        bmv2_pipeline(out_dir=tmp_path, which=lambda name: "p4c", run=silent)

    def missing(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        raise FileNotFoundError(2, "No such file", command[0])

    with pytest.raises(ArtifactError, match="cannot run p4c"):
        bmv2_pipeline(out_dir=tmp_path, which=lambda name: "p4c", run=missing)


def test_p4emu_pipeline_is_the_source_bundle(pipeline: Pipeline) -> None:
    from p4emu.bundle import parse_device_config

    bundle = parse_device_config(pipeline.device_config)
    assert bundle.main == "mrc_switch.p4"
    assert "include/ingress.p4" in bundle.files
    names = {t.preamble.name for t in pipeline.p4info.tables}
    assert "MrcIngress.usid_route" in names
    assert pipeline.cookie == pipeline_cookie(pipeline.p4info, pipeline.device_config)
    assert pipeline.cookie != pipeline_cookie(pipeline.p4info, pipeline.device_config + b" ")


def test_p4emu_pipeline_with_given_p4info(p4info_file: Path, pipeline: Pipeline) -> None:
    given = p4emu_pipeline(p4info=p4info_file)
    assert given.p4info == pipeline.p4info
    assert given.cookie == pipeline.cookie


def test_p4emu_pipeline_of_a_loaded_program(pipeline: Pipeline) -> None:
    from p4emu.frontend import load_program

    checked = load_program(DEFAULT_PROGRAM)
    given = p4emu_pipeline(checked=checked)
    assert given.p4info == pipeline.p4info
    assert given.device_config == pipeline.device_config
    assert given.cookie == pipeline.cookie


def test_bad_program_is_reported_with_its_location(tmp_path: Path) -> None:
    program = tmp_path / "bad.p4"
    program.write_text("control X( {\n")
    with pytest.raises(
        ArtifactError, match=r"cannot generate the P4Info of .*bad.p4:\n.*bad.p4:\d+"
    ):
        p4emu_pipeline(program)
    with pytest.raises(ArtifactError, match=r"P4 program .*none.p4 does not exist"):
        p4emu_pipeline(tmp_path / "none.p4")


def test_load_p4info_formats(tmp_path: Path, p4info_file: Path, pipeline: Pipeline) -> None:
    assert load_p4info(p4info_file) == pipeline.p4info
    as_json = tmp_path / "x.json"
    as_json.write_text(json_format.MessageToJson(pipeline.p4info))
    assert load_p4info(as_json) == pipeline.p4info
    as_bin = tmp_path / "x.bin"
    as_bin.write_bytes(pipeline.p4info.SerializeToString())
    assert load_p4info(as_bin) == pipeline.p4info
    bad = tmp_path / "bad.txtpb"
    bad.write_text("tables { nope: 1 }")
    with pytest.raises(ArtifactError, match=r"bad.txtpb: not a valid P4Info"):
        load_p4info(bad)
    empty = tmp_path / "empty.txtpb"
    empty.write_text("")
    with pytest.raises(ArtifactError, match="has no tables and no actions"):
        load_p4info(empty)
    with pytest.raises(ArtifactError, match="cannot read P4Info"):
        load_p4info(tmp_path / "none.txtpb")
    bad_json = tmp_path / "bad.json"
    bad_json.write_text(json.dumps({"tables": 3}))
    with pytest.raises(ArtifactError, match="not a valid P4Info"):
        load_p4info(bad_json)


def test_pipeline_for_checks_target_options(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="unknown target 'tofino'"):
        pipeline_for("tofino")
    with pytest.raises(ArtifactError, match="--bmv2-json is for --target bmv2"):
        pipeline_for("p4emu", bmv2_json=tmp_path / "x.json")
