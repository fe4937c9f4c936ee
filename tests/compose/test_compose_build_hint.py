"""``TARGET=bmv2 docker-compose build`` without the p4lang image (root, Docker engine): the
build fails, and its output names the script that makes that image (issue 29). Checked
against a real engine because the engine's own words name neither: without a registry,
Debian's docker-compose 1.29 (the legacy builder) prints only the registry's DNS error."""

from __future__ import annotations

import os

import pytest

from .conftest import Project, image_env, missing_tools

pytestmark = [
    pytest.mark.integration,
    pytest.mark.compose,
    pytest.mark.skipif(missing_tools() is not None, reason=str(missing_tools())),
]

HINT = "if it fails, make it with docker/p4lang-image.sh (docs/docker.md)"


def test_a_bmv2_build_without_the_p4lang_image_names_its_script(
    base_image: str, p4emu_image: str
) -> None:
    absent = f"mrc-testbed/p4lang-absent-{os.getpid()}:none"  # never imported by anyone
    env = {**image_env("bmv2", base_image, absent), "P4LANG_IMAGE": absent}
    project = Project(f"mrc-hint-{os.getpid()}", env)
    result = project.compose("build", "--force-rm", "fabric", check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    # The hint comes right before the step that fails, whatever the engine then says.
    _, found, after = output.partition(HINT)
    assert found, output[-3000:]
    assert "FROM ${P4LANG_IMAGE} AS p4lang" in after
    assert "Successfully built" not in after
