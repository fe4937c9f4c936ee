"""docker-compose.yml, docker/Dockerfile and the image scripts: consistent with each other and
with the launcher and controller command lines they run (no Docker engine needed here; the
end-to-end run is tests/compose/test_compose_up.py)."""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from controller.cli import build_parser as controller_parser
from testbed.cli import build_parser as launcher_parser

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = ROOT / "docker-compose.yml"
COMPOSE = yaml.safe_load(COMPOSE_FILE.read_text())
SERVICES = COMPOSE["services"]
DOCKERFILE = (ROOT / "docker" / "Dockerfile").read_text()
BASE_SCRIPT = ROOT / "docker" / "base-image.sh"
P4LANG_SCRIPT = ROOT / "docker" / "p4lang-image.sh"


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's ``${VAR:-default}`` and ``$$`` interpolation (what this file uses)."""
    text = re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: env.get(m[1]) or m[2], value)
    assert "${" not in text, f"unsupported interpolation in {value!r}"
    return text.replace("$$", "$")


def command_of(service: str, env: dict[str, str] | None = None) -> list[str]:
    return [interpolate(word, env or {}) for word in SERVICES[service]["command"]]


def shell_steps(service: str, env: dict[str, str]) -> list[str]:
    """The lines of a service's ``sh -c`` script."""
    command = command_of(service, env)
    assert command[:2] == ["sh", "-c"]
    return command[2].strip().splitlines()


def dockerfile_stages() -> list[str]:
    return re.findall(r"^FROM \S+ AS (\S+)$", DOCKERFILE, flags=re.MULTILINE)


def test_services_fabric_controller_and_run_share_one_image_with_an_init() -> None:
    assert set(SERVICES) == {"fabric", "controller", "run"}
    images = {service["image"] for service in SERVICES.values()}
    assert images == {"mrc-testbed/${TARGET:-p4emu}:${MRC_IMAGE_TAG:-latest}"}
    for name, service in SERVICES.items():
        assert service["init"] is True, f"{name} needs an init that reaps detached children"
        assert service["build"]["network"] == "host"
    assert "version" not in COMPOSE  # Compose Spec: read by compose v2 and docker-compose 1.29
    assert SERVICES["controller"]["network_mode"] == "service:fabric"
    assert SERVICES["controller"]["depends_on"]["fabric"]["condition"] == "service_healthy"


def test_fabric_and_run_get_what_mininet_needs_without_privileged() -> None:
    for name in ("fabric", "run"):
        service = SERVICES[name]
        assert "privileged" not in service
        assert {"NET_ADMIN", "NET_RAW", "SYS_ADMIN"} <= set(service["cap_add"])
        assert service["network_mode"] == "none"  # its own namespace: nothing on the host
        assert service["entrypoint"] == ["/opt/mrc-testbed/docker/mininet-entrypoint.sh"]
        assert service["cpu_shares"] > 1024  # a whole fabric in one cgroup (docs/docker.md)
    assert SERVICES["fabric"]["healthcheck"]["test"] == ["CMD", "mrc-testbed", "status"]
    entrypoint = ROOT / "docker" / "mininet-entrypoint.sh"
    script = entrypoint.read_text()
    assert "mount -o remount,rw /proc/sys" in script and script.rstrip().endswith('exec "$@"')
    assert os.access(entrypoint, os.X_OK)
    assert re.search(r"^COPY \. /opt/mrc-testbed$", DOCKERFILE, flags=re.MULTILINE)


@pytest.mark.parametrize(
    ("env", "topology", "target"),
    [({}, "tiny", "p4emu"), ({"TOPO": "small", "TARGET": "bmv2"}, "small", "bmv2")],
)
def test_fabric_runs_the_launcher_in_mininet_mode_and_tears_down_on_sigterm(
    env: dict[str, str], topology: str, target: str
) -> None:
    steps = shell_steps("fabric", env)
    assert steps[0] == "trap 'mrc-testbed down --all; exit 0' TERM INT"
    up = next(step for step in steps if step.startswith("mrc-testbed up"))
    words = shlex.split(up.removesuffix("|| exit 1"))
    args = launcher_parser().parse_args(words[1:])
    assert (args.command, str(args.topology), args.mode, args.target) == (
        "up",
        topology,
        "mininet",
        target,
    )
    assert steps[-1] == "sleep infinity & wait"


@pytest.mark.parametrize("env", [{}, {"TOPO": "small", "TARGET": "bmv2"}])
def test_controller_pushes_then_watches_the_same_topology_and_target(
    env: dict[str, str],
) -> None:
    command = command_of("controller", env)
    assert command[:2] == ["sh", "-c"]
    push, _, watch = command[2].partition("&&")
    watch = watch.strip().removeprefix("exec ")
    parsed = [controller_parser().parse_args(shlex.split(part)[1:]) for part in (push, watch)]
    assert [args.command for args in parsed] == ["push", "watch"]
    for args in parsed:
        assert str(args.topology) == env.get("TOPO", "tiny")
        assert args.target == env.get("TARGET", "p4emu")


@pytest.mark.parametrize("env", [{}, {"SCENARIO": "t1-down", "TARGET": "bmv2"}])
def test_run_service_runs_a_failover_scenario_into_the_mounted_results_folder(
    env: dict[str, str],
) -> None:
    command = command_of("run", env)
    scenario, target = env.get("SCENARIO", "link-restore"), env.get("TARGET", "p4emu")
    assert command == [
        "mrc-testbed", "run", scenario, "--mode", "mininet", "--target", target, "-o", "/results"
    ]  # fmt: skip
    assert "${MRC_RESULTS:-./results}:/results" in SERVICES["run"]["volumes"]
    args = launcher_parser().parse_args(command[1:])
    assert (args.command, args.mode, args.target, str(args.output)) == (
        "run",
        "mininet",
        target,
        "/results",
    )


@pytest.mark.parametrize(
    ("env", "stage"),
    [
        ({}, "p4emu"),
        ({"TARGET": "bmv2"}, "bmv2"),
        ({"TARGET": "bmv2", "P4LANG_FROM": "-packages"}, "bmv2-packages"),
    ],
)
def test_build_target_is_a_dockerfile_stage(env: dict[str, str], stage: str) -> None:
    target = interpolate(SERVICES["fabric"]["build"]["target"], env)
    assert target == stage
    assert stage in dockerfile_stages()


def test_optional_stages_come_after_p4emu() -> None:
    # Docker's legacy builder runs every stage up to the one asked for: p4emu must not need
    # the p4lang image or p4lang's package repository.
    stages = dockerfile_stages()
    assert stages[0] == "p4emu"
    assert stages.index("p4lang") > stages.index("p4emu")


def test_base_image_defaults_agree() -> None:
    default_base = re.search(r"image=\$\{1:-([^}]+)\}", BASE_SCRIPT.read_text())[1]
    assert f"ARG BASE_IMAGE={default_base}" in DOCKERFILE
    args = SERVICES["fabric"]["build"]["args"]
    assert args["BASE_IMAGE"] == f"${{BASE_IMAGE:-{default_base}}}"
    default_p4lang = re.search(r"image=\$\{2:-([^}]+)\}", P4LANG_SCRIPT.read_text())[1]
    assert f"ARG P4LANG_IMAGE={default_p4lang}" in DOCKERFILE
    assert args["P4LANG_IMAGE"] == f"${{P4LANG_IMAGE:-{default_p4lang}}}"


def test_a_bmv2_build_without_the_p4lang_image_points_to_its_script() -> None:
    """The engine's only words when ``FROM ${P4LANG_IMAGE}`` is missing are "pull access
    denied for REPOSITORY": the default repository's name is the way to the script."""
    default_p4lang = re.search(r"image=\$\{2:-([^}]+)\}", P4LANG_SCRIPT.read_text())[1]
    repository = default_p4lang.partition(":")[0]
    assert repository.endswith("-docker-p4lang-image.sh")
    assert re.fullmatch(
        r"[a-z0-9]+(?:[._-][a-z0-9]+)*/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*", repository
    )


def test_the_stage_before_the_p4lang_image_says_how_to_make_it() -> None:
    """Debian's docker-compose (the legacy builder) runs every stage up to the one asked
    for, so the step just before ``FROM ${P4LANG_IMAGE}`` is printed before it fails
    (checked against a real engine by tests/compose/test_compose_build_hint.py)."""
    lines = [line for line in DOCKERFILE.splitlines() if line and not line.startswith("#")]
    at = lines.index("FROM ${P4LANG_IMAGE} AS p4lang")
    assert lines[at - 2] == "FROM p4emu AS p4lang-hint"
    assert lines[at - 1].startswith("RUN echo ") and "docker/p4lang-image.sh" in lines[at - 1]
    assert P4LANG_SCRIPT.exists()


def _excluded(name: str) -> bool:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line for line in lines if line and not line.startswith(("#", "**/"))]
    return any(fnmatch.fnmatch(name, pattern) for pattern in patterns)


def test_dockerignore_lines_are_top_level_patterns() -> None:
    # tests/compose/conftest.py hashes the build context by this rule.
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        if line and not line.startswith("#"):
            assert "/" not in line or line in ("**/__pycache__", "**/*.pyc"), line


def test_the_build_context_holds_what_the_image_needs() -> None:
    for source in re.findall(r"^COPY (?!--from)(\S+) ", DOCKERFILE, flags=re.MULTILINE):
        assert source == "." or not _excluded(source.split("/")[0]), source
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = [
        entry.name
        for entry in ROOT.iterdir()
        if entry.is_dir() and any(fnmatch.fnmatch(entry.name, pattern) for pattern in include)
    ]
    assert {"controller", "nic_emu", "p4emu", "testbed", "topologies"} <= set(packages)
    for name in [*packages, "p4src", "pyproject.toml", "README.md", "docker"]:
        assert not _excluded(name), f".dockerignore leaves {name} out of the image"
    for name in ("tests", "docs", ".git", ".venv", "benchmarks", "docker-compose.yml"):
        assert _excluded(name), f"editing {name} would rebuild the image"


def test_image_packages_provide_the_tools_mininet_mode_checks_for() -> None:
    packages = [
        line
        for line in (ROOT / "docker" / "image-packages.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    for package in ("mininet", "iproute2", "ethtool", "python3-venv", "mount"):
        assert package in packages


def _script_env(tmp_path: Path, tools: dict[str, str]) -> dict[str, str]:
    """A PATH with only bash's basics and the given fake tools (name -> shell body)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "realpath", "id", "mktemp", "rm", "sha256sum", "cut", "tar"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    for name, body in tools.items():
        path = bin_dir / name
        path.write_text(f"#!{shutil.which('bash')}\n{body}\n")
        path.chmod(0o755)
    return {"PATH": str(bin_dir), "HOME": str(tmp_path)}


def _run(script: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [shutil.which("bash") or "bash", str(script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_base_image_script_says_the_docker_cli_is_missing(tmp_path: Path) -> None:
    result = _run(BASE_SCRIPT, _script_env(tmp_path, {"mmdebstrap": "exit 0"}))
    assert result.returncode == 2
    assert "'docker' not found" in result.stderr and "docs/docker.md" in result.stderr
    assert "Broken pipe" not in result.stderr


def test_base_image_script_says_mmdebstrap_is_missing(tmp_path: Path) -> None:
    result = _run(BASE_SCRIPT, _script_env(tmp_path, {"docker": "exit 0"}))
    assert result.returncode == 2
    assert (
        "'mmdebstrap' not found" in result.stderr and "apt-get install mmdebstrap" in result.stderr
    )


def test_base_image_script_says_the_engine_is_not_running(tmp_path: Path) -> None:
    env = _script_env(tmp_path, {"docker": "exit 1", "mmdebstrap": "exit 0"})
    result = _run(BASE_SCRIPT, env)
    assert result.returncode == 2
    assert "does not answer" in result.stderr and "start it first" in result.stderr


def test_base_image_script_imports_nothing_when_mmdebstrap_fails(tmp_path: Path) -> None:
    log = tmp_path / "docker.log"
    docker = f'echo "$@" >> {log}'
    env = _script_env(tmp_path, {"docker": docker, "mmdebstrap": "echo no mirror >&2; exit 1"})
    result = _run(BASE_SCRIPT, env)
    if os.geteuid() != 0:
        assert result.returncode == 2 and "run as root" in result.stderr
        return
    assert result.returncode != 0 and "no mirror" in result.stderr
    assert "import" not in log.read_text()


def test_p4lang_script_names_what_is_missing(tmp_path: Path) -> None:
    builds = tmp_path / "p4lang"
    (builds / "bin").mkdir(parents=True)
    (builds / "bin" / "simple_switch_grpc").write_text("")
    result = _run(P4LANG_SCRIPT, _script_env(tmp_path, {}), str(builds / "bin"))
    assert result.returncode == 2
    assert f"{builds}/bin/p4c is missing" in result.stderr


def test_p4lang_script_without_builds_says_how_to_give_them(tmp_path: Path) -> None:
    result = _run(P4LANG_SCRIPT, _script_env(tmp_path, {}))
    assert result.returncode == 2
    assert "MRC_P4LANG_BIN" in result.stderr


@pytest.mark.skipif(not shutil.which("docker-compose"), reason="docker-compose is not installed")
@pytest.mark.parametrize("env", [{}, {"TARGET": "bmv2", "TOPO": "small"}])
def test_docker_compose_accepts_the_file(env: dict[str, str]) -> None:
    result = subprocess.run(
        [
            "docker-compose",
            "-f",
            str(COMPOSE_FILE),
            "--profile",
            "controller",
            "--profile",
            "scenario",
            "config",
        ],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    resolved = yaml.safe_load(result.stdout)["services"]
    assert set(resolved) == {"fabric", "controller", "run"}
    assert resolved["fabric"]["build"]["target"] == env.get("TARGET", "p4emu")
