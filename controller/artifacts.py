"""What ``SetForwardingPipelineConfig`` sends each target: P4Info + device config.

- **p4emu** (``p4emu-switch``): the P4_16 source itself (``p4emu.bundle.device_config_for``)
  and the P4Info p4emu generates for it (the same names and ids as p4c's, docs/p4info.md).
- **bmv2** (``simple_switch_grpc``): p4c's BMv2 JSON and p4c's P4Info, produced by
  ``p4c --target bmv2 --arch v1model --p4runtime-files X.p4info.txtpb -o OUT PROGRAM`` when
  ``p4c`` is on PATH, or read from the files the compose build step wrote
  (``--bmv2-json``, ``--p4info``).

The pipeline cookie is a hash of both, so a switch already running exactly this pipeline is
recognised and left alone (a second ``push`` changes nothing).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from controller.exceptions import ArtifactError
from p4emu.proto import p4i, p4r

if TYPE_CHECKING:
    import subprocess

    from p4emu import CheckedProgram

# shutil, subprocess and tempfile are imported by bmv2_pipeline, the one that runs p4c: a
# virtual fabric takes p4emu's pipeline and needs none of them

TARGETS = ("p4emu", "bmv2")
PROGRAM_NAME = "mrc_switch.p4"
# The program of this repository: <repo>/p4src/mrc_switch.p4 next to the controller package.
DEFAULT_PROGRAM = Path(__file__).resolve().parent.parent / "p4src" / PROGRAM_NAME
P4C_TIMEOUT_S = 600

Runner = Callable[..., "subprocess.CompletedProcess[str]"]


@dataclass(frozen=True)
class Pipeline:
    """One target's forwarding pipeline config."""

    target: str
    p4info: p4i.P4Info
    device_config: bytes
    description: str  # where it came from, for reports

    @property
    def cookie(self) -> int:
        return pipeline_cookie(self.p4info, self.device_config)

    def config(self) -> p4r.ForwardingPipelineConfig:
        config = p4r.ForwardingPipelineConfig(p4_device_config=self.device_config)
        config.p4info.CopyFrom(self.p4info)
        config.cookie.cookie = self.cookie
        return config


def pipeline_cookie(p4info: p4i.P4Info, device_config: bytes) -> int:
    """64-bit hash of the P4Info (deterministic serialization) and the device config."""
    digest = hashlib.sha256()
    digest.update(p4info.SerializeToString(deterministic=True))
    digest.update(b"\0")
    digest.update(device_config)
    return int.from_bytes(digest.digest()[:8], "big")


def program_path(program: str | Path | None) -> Path:
    path = Path(program) if program is not None else DEFAULT_PROGRAM
    if not path.is_file():
        raise ArtifactError(
            f"P4 program {path} does not exist"
            + ("" if program is not None else " (pass --program PATH)")
        )
    return path


def load_p4info(path: str | Path) -> p4i.P4Info:
    """A P4Info file in text (``.txtpb``/``.txt``), JSON (``.json``) or binary form."""
    from google.protobuf import json_format, text_format  # only here: a virtual run reads none

    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read P4Info: {exc.strerror}") from None
    info = p4i.P4Info()
    try:
        if path.suffix == ".json":
            json_format.Parse(data.decode("utf-8"), info)
        elif path.suffix in (".bin", ".pb"):
            info.ParseFromString(data)
        else:
            text_format.Parse(data.decode("utf-8"), info)
    except (text_format.ParseError, json_format.ParseError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"{path}: not a valid P4Info: {exc}") from None
    except Exception as exc:  # protobuf's DecodeError for a binary file that is not one
        raise ArtifactError(f"{path}: not a valid P4Info: {exc}") from None
    if not info.tables and not info.actions:
        raise ArtifactError(f"{path}: the P4Info has no tables and no actions")
    return info


def p4emu_p4info(program: Path, checked: CheckedProgram | None = None) -> p4i.P4Info:
    """The P4Info p4emu generates for ``program`` (same as ``python -m p4emu.p4info``);
    ``checked``: the program already loaded (it is not read again)."""
    from p4emu import P4EmuError, load_program
    from p4emu.p4info import p4info_for_program

    try:
        return p4info_for_program(checked if checked is not None else load_program(program))
    except P4EmuError as exc:
        raise ArtifactError(f"cannot generate the P4Info of {program}:\n{exc}") from None


def p4emu_pipeline(
    program: str | Path | None = None,
    p4info: str | Path | None = None,
    *,
    checked: CheckedProgram | None = None,
) -> Pipeline:
    """p4emu's pipeline: the program's source (bundled with its includes) and its P4Info.
    ``checked``: ``program`` already loaded by the caller, for its P4Info."""
    from p4emu import P4EmuError
    from p4emu.bundle import device_config_for

    path = program_path(program)
    info = load_p4info(p4info) if p4info is not None else p4emu_p4info(path, checked)
    try:
        device_config = device_config_for(path)
    except (OSError, P4EmuError) as exc:
        raise ArtifactError(f"cannot bundle {path}: {exc}") from None
    return Pipeline("p4emu", info, device_config, f"p4emu source of {path}")


def p4c_command(
    program: Path, out_dir: Path, p4c: str = "p4c", p4info_name: str | None = None
) -> list[str]:
    """``p4c --target bmv2 --arch v1model --p4runtime-files X.p4info.txtpb -o OUT PROGRAM``."""
    p4info_path = out_dir / (p4info_name or f"{program.stem}.p4info.txtpb")
    return [
        p4c,
        "--target",
        "bmv2",
        "--arch",
        "v1model",
        "--p4runtime-files",
        str(p4info_path),
        "-o",
        str(out_dir),
        str(program),
    ]


def p4c_outputs(program: Path, out_dir: Path) -> tuple[Path, Path]:
    """Where :func:`p4c_command` makes p4c write the BMv2 JSON and the P4Info."""
    return out_dir / f"{program.stem}.json", out_dir / f"{program.stem}.p4info.txtpb"


def bmv2_pipeline(
    program: str | Path | None = None,
    *,
    bmv2_json: str | Path | None = None,
    p4info: str | Path | None = None,
    p4c: str | None = None,
    out_dir: str | Path | None = None,
    which: Callable[[str], str | None] | None = None,
    run: Runner | None = None,
) -> Pipeline:
    """BMv2's pipeline: given files, or p4c's output when p4c is on PATH (``which``,
    ``run``: ``shutil.which`` and ``subprocess.run`` unless given)."""
    import shutil
    import subprocess
    import tempfile

    if which is None:
        which = shutil.which
    if run is None:
        run = subprocess.run
    if (bmv2_json is None) != (p4info is None):
        given, missing = ("--bmv2-json", "--p4info") if bmv2_json else ("--p4info", "--bmv2-json")
        raise ArtifactError(
            f"--target bmv2: {given} is given but {missing} is not; p4c's BMv2 JSON and "
            "its P4Info come from the same compilation, give both"
        )
    if bmv2_json is not None and p4info is not None:
        json_path = Path(bmv2_json)
        try:
            device_config = json_path.read_bytes()
        except OSError as exc:
            raise ArtifactError(f"{json_path}: cannot read BMv2 JSON: {exc.strerror}") from None
        return Pipeline("bmv2", load_p4info(p4info), device_config, f"BMv2 JSON {json_path}")

    compiler = p4c or which("p4c")
    if compiler is None:
        raise ArtifactError(
            "--target bmv2 needs p4c's BMv2 JSON and P4Info: p4c is not on PATH, so pass "
            "--bmv2-json FILE --p4info FILE (the compose build step writes both)"
        )
    path = program_path(program)
    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="mrc-p4c-"))
    out.mkdir(parents=True, exist_ok=True)
    command = p4c_command(path, out, compiler)
    try:
        result = run(command, capture_output=True, text=True, timeout=P4C_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ArtifactError(f"cannot run {' '.join(command)}: {exc}") from None
    if result.returncode != 0:
        raise ArtifactError(
            f"p4c failed (exit {result.returncode}): {' '.join(command)}\n"
            + _tail(result.stderr or result.stdout)
        )
    json_path, p4info_path = p4c_outputs(path, out)
    if not json_path.is_file():
        raise ArtifactError(f"p4c did not write {json_path}")
    return Pipeline(
        "bmv2", load_p4info(p4info_path), json_path.read_bytes(), f"p4c output in {out}"
    )


def pipeline_for(
    target: str,
    program: str | Path | None = None,
    *,
    p4info: str | Path | None = None,
    bmv2_json: str | Path | None = None,
    out_dir: str | Path | None = None,
) -> Pipeline:
    if target == "p4emu":
        if bmv2_json is not None:
            raise ArtifactError(
                "--bmv2-json is for --target bmv2; p4emu-switch takes the P4 source"
            )
        return p4emu_pipeline(program, p4info)
    if target == "bmv2":
        return bmv2_pipeline(program, bmv2_json=bmv2_json, p4info=p4info, out_dir=out_dir)
    raise ArtifactError(f"unknown target {target!r} (known: {', '.join(TARGETS)})")


def _tail(text: str, lines: int = 20) -> str:
    kept: Sequence[str] = text.strip().splitlines()[-lines:]
    return "\n".join(kept)
