"""docker-compose.yml and its images: valid, and consistent with the controller and launcher
(BMv2 cannot run here, so the files are checked for what they will run)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from controller.artifacts import p4c_command, p4c_outputs
from testbed.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
PROGRAM = Path("p4src/mrc_switch.p4")


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's ${VAR:-default} interpolation."""
    return re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: env.get(m[1], m[2]), text)


def fabric_up_args(env: dict[str, str]) -> list[str]:
    script = interpolate(COMPOSE["services"]["fabric"]["command"][2], env)
    up, _, tail = script.partition("&&")
    assert tail.strip() == "exec sleep infinity"
    words = shlex.split(up)
    assert words[0] == "mrc-testbed"
    return words[1:]


def test_compose_has_the_build_step_and_the_fabric() -> None:
    services = COMPOSE["services"]
    assert set(services) == {"p4c", "fabric"}
    assert services["fabric"]["depends_on"]["p4c"]["condition"] == "service_completed_successfully"
    assert services["fabric"]["privileged"] is True
    assert services["p4c"]["image"] == services["fabric"]["image"]


def test_build_step_is_the_controllers_p4c_command() -> None:
    assert COMPOSE["services"]["p4c"]["command"] == p4c_command(PROGRAM, Path("build"))
    assert (ROOT / PROGRAM).is_file()


@pytest.mark.parametrize("topo", [None, "small"])
def test_fabric_command_is_a_valid_launcher_command_using_the_build_outputs(
    topo: str | None,
) -> None:
    env = {"TOPO": topo} if topo else {}
    args = build_parser().parse_args(fabric_up_args(env))
    json_path, p4info_path = p4c_outputs(PROGRAM, Path("build"))
    assert (args.command, args.mode, args.target) == ("up", "mininet", "bmv2")
    assert Path(args.bmv2_json) == json_path and Path(args.p4info) == p4info_path
    assert str(args.topology) == (topo or "tiny")


def test_dockerfile_builds_on_the_local_base_image() -> None:
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    base_script = (ROOT / "docker" / "base-image.sh").read_text()
    default_base = re.search(r"image=\$\{1:-([^}]+)\}", base_script)[1]
    assert f"ARG BASE_IMAGE={default_base}" in dockerfile
    assert "p4lang-bmv2" in dockerfile and "p4lang-p4c" in dockerfile
    for package in ("mininet", "ethtool", "iproute2"):
        assert package in dockerfile
    assert os.access(ROOT / "docker" / "base-image.sh", os.X_OK)
    subprocess.run(["bash", "-n", str(ROOT / "docker" / "base-image.sh")], check=True)


@pytest.mark.skipif(not shutil.which("docker-compose"), reason="docker-compose is not installed")
def test_docker_compose_accepts_the_file() -> None:
    subprocess.run(
        ["docker-compose", "-f", str(ROOT / "docker-compose.yml"), "config", "-q"], check=True
    )
