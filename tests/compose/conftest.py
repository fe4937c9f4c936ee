"""Fixtures of the docker compose end-to-end tests: a Docker engine (started for the session
if none runs, stopped again afterwards) and images built only when their inputs changed."""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import capabilities
import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
BASE_IMAGE = "mrc-testbed/debian:12"
BASE_LABEL = "org.mrc-testbed.base-script"
ENGINE_START_TIMEOUT_S = 60
BUILD_TIMEOUT_S = 1800


def missing_tools() -> str | None:
    if os.geteuid() != 0:
        return "docker compose tests run as root (Mininet in a container, dockerd)"
    for tool, package in (
        ("docker", "docker.io"),
        ("dockerd", "docker.io"),
        ("docker-compose", "docker-compose"),
        ("mmdebstrap", "mmdebstrap"),
    ):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Debian package {package}, apt-packages.txt)"
    return None


def docker(*args: str, timeout: float = 120, check: bool = True) -> str:
    result = subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and result.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def _engine_answers() -> bool:
    return (
        subprocess.run(["docker", "info"], capture_output=True, timeout=30, check=False).returncode
        == 0
    )


@pytest.fixture(scope="session")
def engine() -> Iterator[None]:
    """A Docker engine: the running one, else ``dockerd`` started here and stopped after.
    Skipped, with the reason, where an engine cannot work (an unprivileged container: no
    network namespaces, so no container and no image import)."""
    if _engine_answers():
        yield
        return
    cannot = capabilities.netns_missing()
    if cannot is not None:
        pytest.skip(f"a Docker engine cannot run containers here: {cannot}")
    with tempfile.TemporaryDirectory(prefix="mrc-dockerd-") as scratch:
        log_path = Path(scratch) / "dockerd.log"
        with log_path.open("wb") as log:
            # No bridge and no iptables rules: the fabric has its own network namespace and
            # builds use the host's network, so the engine changes nothing in the host's network.
            daemon = subprocess.Popen(
                ["nice", "-n", "10", "dockerd", "--bridge=none", "--iptables=false"],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            deadline = time.monotonic() + ENGINE_START_TIMEOUT_S
            while not _engine_answers():
                if daemon.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        f"dockerd did not come up (exit {daemon.poll()}): "
                        + log_path.read_text(errors="replace")[-2000:]
                    )
                time.sleep(0.5)
            yield
        finally:
            daemon.terminate()
            try:
                daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def context_excludes() -> list[str]:
    """The top-level patterns of .dockerignore (its ``**/`` lines cover compiled Python)."""
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [line for line in lines if line and not line.startswith(("#", "**/"))]


def context_files() -> list[Path]:
    """The files of docker/Dockerfile's build context, as .dockerignore selects them."""
    excludes = context_excludes()
    files = []
    for entry in sorted(ROOT.iterdir()):
        if any(fnmatch.fnmatch(entry.name, pattern) for pattern in excludes):
            continue
        candidates = sorted(entry.rglob("*")) if entry.is_dir() else [entry]
        files.extend(
            path
            for path in candidates
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
        )
    return [*files, ROOT / ".dockerignore"]


def inputs_tag(*extra: str) -> str:
    """A tag that changes whenever an input of the image changes."""
    digest = hashlib.sha256()
    for path in context_files():
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    for item in extra:
        digest.update(item.encode() + b"\0")
    return "in-" + digest.hexdigest()[:16]


def image_id(name: str) -> str | None:
    result = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Id}}", name],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout.strip() if result.returncode == 0 else None


def remove_older_tags(repository: str, keep: str) -> None:
    """Drops this test's earlier input tags of ``repository`` (never ``latest`` or others)."""
    for tag in docker("image", "ls", repository, "--format", "{{.Tag}}").split():
        if tag.startswith("in-") and tag != keep:
            docker("image", "rm", f"{repository}:{tag}", check=False)


@pytest.fixture(scope="session")
def base_image(engine: None) -> str:
    """mrc-testbed/debian:12, rebuilt when docker/base-image.sh changed."""
    script = ROOT / "docker" / "base-image.sh"
    label = docker(
        "image",
        "inspect",
        "--format",
        f'{{{{index .Config.Labels "{BASE_LABEL}"}}}}',
        BASE_IMAGE,
        check=False,
    ).strip()
    if label != _sha256(script):
        result = subprocess.run(
            ["nice", str(script), BASE_IMAGE],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
        assert result.returncode == 0, f"docker/base-image.sh failed: {result.stderr[-3000:]}"
    image = image_id(BASE_IMAGE)
    assert image is not None
    return image


def find_p4lang_bin() -> Path | None:
    """The bin/ directory of p4lang builds: $MRC_P4LANG_BIN, else simple_switch_grpc's."""
    configured = os.environ.get("MRC_P4LANG_BIN")
    if configured:
        return Path(configured)
    found = shutil.which("simple_switch_grpc")
    return Path(found).resolve().parent if found else None


def p4lang_image(bin_dir: Path) -> str:
    """The builds imported as an image (docker/p4lang-image.sh), re-imported when they change."""
    root = bin_dir.resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
        elif path.is_symlink():
            digest.update(str(path.relative_to(root)).encode() + b"->" + os.readlink(path).encode())
    name = f"mrc-testbed/p4lang:in-{digest.hexdigest()[:16]}"
    if image_id(name) is None:
        result = subprocess.run(
            [str(ROOT / "docker" / "p4lang-image.sh"), str(bin_dir), name],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert result.returncode == 0, f"docker/p4lang-image.sh failed: {result.stderr}"
        remove_older_tags("mrc-testbed/p4lang", name.partition(":")[2])
    return name


@dataclass
class Project:
    """One docker compose project (a unique name) over this checkout's docker-compose.yml."""

    name: str
    env: dict[str, str]

    def compose(
        self, *args: str, timeout: float = 600, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            ["docker-compose", "-f", str(ROOT / "docker-compose.yml"), "-p", self.name, *args],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"docker-compose {' '.join(args)} failed ({result.returncode}):\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result

    def build(self, target: str) -> None:
        """Builds the image unless one with these inputs exists (tag = hash of the inputs)."""
        repository = f"mrc-testbed/{target}"
        tag = self.env["MRC_IMAGE_TAG"]
        if image_id(f"{repository}:{tag}") is None:
            self.compose("build", "--force-rm", "fabric", timeout=BUILD_TIMEOUT_S)
            remove_older_tags(repository, tag)


def image_env(target: str, base_image: str, *extra: str) -> dict[str, str]:
    """The compose variables that select ``target``'s image, tagged by its inputs."""
    return {
        "TARGET": target,
        "BASE_IMAGE": BASE_IMAGE,
        "MRC_IMAGE_TAG": inputs_tag(target, base_image, *extra),
    }


@pytest.fixture(scope="session")
def p4emu_image(base_image: str) -> str:
    """mrc-testbed/p4emu:<input tag>, built unless it exists."""
    env = image_env("p4emu", base_image)
    Project(f"mrc-build-{os.getpid()}", env).build("p4emu")
    return f"mrc-testbed/p4emu:{env['MRC_IMAGE_TAG']}"
