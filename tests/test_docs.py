"""The repository documents itself: no reference leaves it, every link resolves, every
``sources §N.M`` citation names an entry of docs/sources.md, and every shell example either
runs here as written or is marked illustrative (conventions: docs/contributing.md)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import capabilities
import pytest

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"

# This file holds the patterns and bad examples of every check: it is not scanned itself.
SELF = "tests/test_docs.py"
# Absolute paths of somebody's machine (home and work folders) never belong in the project.
_MACHINE_ROOTS = ("work", "home", "root", "Users", "mnt", "scratch")
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:" + "|".join(_MACHINE_ROOTS) + r")/[\w.-]")
# The folder beside a clone that development machines and CI share (p4lang builds, notes).
SHARED_FOLDER = re.compile(r"(?<![\w-])" + "shared" + r"/(?:p4lang|docs|reference|schemas|hooks)\b")
# A relative path that climbs out of the file's folder.
CLIMBING_PATH = re.compile(r"(?<![\w.])(?:\.\./)+[\w.-][\w./-]*")
# The one documented way CI finds the p4lang builds beside the clone, and its documentation
# (docs/contributing.md, "External tools").
ALLOWED_OUTSIDE = {(".ci/run", "shared/p4lang/bin"), ("docs/contributing.md", "shared/p4lang/bin")}

MD_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
MD_MENTION = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.md)(?![\w/])")
SOURCES_CITATION = re.compile(
    r"\bsources(?:\.md)?\]?\(?(?:sources\.md\))?\s*"
    r"(§\d+(?:\.\d+)?(?:\s*(?:[-\u2013,]|and)\s*§\d+(?:\.\d+)?)*)"
)
SOURCES_ENTRY = re.compile(r"^- \*\*§(\d+)\.(\d+)\*\*", re.MULTILINE)
SOURCES_SECTION = re.compile(r"^## (\d+)\. ", re.MULTILINE)

SHELL_LANGS = {"sh", "bash", "shell", "console"}
# Info-string words after the language (docs/contributing.md, "Shell examples").
EXAMPLE_KINDS = {"illustrative", "integration", "quickstart"}
FENCE = re.compile(r"^(```+|~~~+)\s*([^\n`]*)$")


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    return [name for name in out.decode().split("\0") if name and (ROOT / name).is_file()]


def text_files() -> Iterator[tuple[str, str]]:
    """(path, text) of every tracked text file but this one."""
    for name in tracked_files():
        if name == SELF:
            continue
        data = (ROOT / name).read_bytes()
        if b"\0" in data:
            continue
        try:
            yield name, data.decode("utf-8")
        except UnicodeDecodeError:
            continue


def markdown_files() -> list[str]:
    return [name for name in tracked_files() if name.endswith(".md")]


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def outside_references(name: str, text: str) -> list[str]:
    """Every reference in ``text`` (the file ``name``) to a path outside the repository."""
    problems = []
    for pattern in (MACHINE_PATH, SHARED_FOLDER):
        for match in pattern.finditer(text):
            line_text = text.splitlines()[line_of(text, match.start()) - 1]
            if any(name == f and allowed in line_text for f, allowed in ALLOWED_OUTSIDE):
                continue
            problems.append(f"{name}:{line_of(text, match.start())}: {match.group(0)!r}")
    if name.startswith("tests/"):
        return problems  # tests feed paths that climb out to the code they test, as data
    folder = (ROOT / name).parent
    for match in CLIMBING_PATH.finditer(text):
        target = (folder / match.group(0)).resolve()
        if not target.is_relative_to(ROOT):
            problems.append(
                f"{name}:{line_of(text, match.start())}: {match.group(0)!r} leaves the repository"
            )
    return problems


def external_repositories() -> set[str]:
    """``owner/name`` of the public repositories listed in docs/sources.md's Documents
    table: a file of theirs is mentioned as ``owner/name/path``."""
    text = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    table = text.split("## Documents", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"(?<![\w./-])([a-z0-9][\w-]*/[\w.-]+)", table))


def written_names() -> set[str]:
    """Markdown files the code itself writes (a whole string literal in a tracked .py
    file, such as ``"report.md"``): a doc may name them without their being tracked."""
    found: set[str] = set()
    for name, text in text_files():
        if name.endswith(".py"):
            found.update(re.findall(r"[\"']([\w.-]+\.md)[\"']", text))
    return found


def resolves(name: str, target: str, basenames: set[str], external: set[str]) -> bool:
    """A path mentioned in ``name`` exists: next to it, from the root, (a bare file name)
    as some tracked file's name, or in an external repository sources.md lists."""
    if (ROOT / name).parent.joinpath(target).exists() or (ROOT / target).exists():
        return True
    if "/" not in target:
        return target in basenames
    return "/".join(target.split("/")[:2]) in external


def without_code(text: str) -> str:
    """Markdown with fenced blocks and inline code blanked (same line numbers)."""
    text = re.sub(r"(?ms)^(```|~~~).*?^\1[^\n]*$", lambda m: "\n" * m.group(0).count("\n"), text)
    return re.sub(r"`[^`\n]*`", "``", text)


def broken_links(name: str, text: str, basenames: set[str], external: set[str]) -> list[str]:
    problems = []
    if name.endswith(".md"):
        prose = without_code(text)
        for match in MD_LINK.finditer(prose):
            target = match.group(1).split("#", 1)[0]
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # an anchor in the same file, or a URL
            if not resolves(name, target, set(), set()):
                problems.append(f"{name}:{line_of(prose, match.start())}: link to {target}")
    for match in MD_MENTION.finditer(text):
        target = match.group(1)
        if not resolves(name, target, basenames, external):
            problems.append(f"{name}:{line_of(text, match.start())}: mentions {target}")
    return problems


def source_entries() -> tuple[set[str], set[str]]:
    """(entries "N.M", sections "N") of docs/sources.md."""
    text = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    entries = {f"{a}.{b}" for a, b in SOURCES_ENTRY.findall(text)}
    return entries, set(SOURCES_SECTION.findall(text))


def bad_citations(name: str, text: str, entries: set[str], sections: set[str]) -> list[str]:
    problems = []
    for match in SOURCES_CITATION.finditer(text):
        for number in re.findall(r"§(\d+(?:\.\d+)?)", match.group(1)):
            if number not in (entries if "." in number else sections):
                where = f"{name}:{line_of(text, match.start())}"
                problems.append(f"{where}: sources §{number} is not in docs/sources.md")
    return problems


@dataclass(frozen=True)
class Block:
    file: str
    line: int
    lang: str
    kinds: frozenset[str]
    body: str

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"


def fenced_blocks(name: str, text: str) -> list[Block]:
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, info = opening.group(1), opening.group(2).split()
        end = i + 1
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        lang = info[0] if info else ""
        kinds = frozenset(info[1:])
        blocks.append(Block(name, i + 1, lang, kinds, "\n".join(lines[i + 1 : end]) + "\n"))
        i = end + 1
    return blocks


def console_scripts() -> set[str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[project.scripts]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([\w-]+)\s*=", section, re.MULTILINE))


COMMAND_WORDS = {"sudo", "docker", "docker-compose", "python", "python3", "pip", "git"}
COMMAND_WORDS |= {"apt-get", "p4c", "simple_switch_grpc", "scripts/test", "scripts/demo"}


def looks_like_shell(body: str, commands: set[str]) -> bool:
    for line in body.splitlines():
        words = line.removeprefix("$ ").split()
        if words and (words[0] in commands or words[0].startswith((".venv/", "scripts/"))):
            return True
    return False


def example_problems(block: Block, commands: set[str]) -> list[str]:
    if block.lang in SHELL_LANGS:
        unknown = block.kinds - EXAMPLE_KINDS
        if unknown:
            return [f"{block.id}: unknown example kind {sorted(unknown)} (docs/contributing.md)"]
        return []
    if not block.lang and looks_like_shell(block.body, commands):
        return [
            f"{block.id}: commands in a block without an info string: use `sh` (runs in "
            "tests/test_docs.py), `sh illustrative`, or `text` for a synopsis"
        ]
    return []


def all_blocks() -> list[Block]:
    return [
        block
        for name in markdown_files()
        for block in fenced_blocks(name, (ROOT / name).read_text(encoding="utf-8"))
    ]


def runnable() -> list[object]:
    """Shell examples that run as written: `sh` (unit) and `sh integration`."""
    params: list[object] = []
    for block in all_blocks():
        if block.lang not in SHELL_LANGS or {"illustrative", "quickstart"} & block.kinds:
            continue
        marks = [pytest.mark.integration] if "integration" in block.kinds else []
        params.append(pytest.param(block, marks=marks, id=block.id))
    return params


# --- the checks on the repository ---------------------------------------------------------


def test_no_reference_leaves_the_repository() -> None:
    problems = [p for name, text in text_files() for p in outside_references(name, text)]
    assert not problems, "references outside the repository:\n" + "\n".join(problems)


def test_every_link_and_doc_mention_resolves() -> None:
    names = tracked_files()
    basenames = {Path(n).name for n in names} | written_names()
    external = external_repositories()
    problems = [
        p for name, text in text_files() for p in broken_links(name, text, basenames, external)
    ]
    assert not problems, "links that do not resolve:\n" + "\n".join(problems)


def test_every_sources_citation_names_an_entry() -> None:
    entries, sections = source_entries()
    problems = [
        p for name, text in text_files() for p in bad_citations(name, text, entries, sections)
    ]
    assert not problems, "\n".join(problems)


def test_sources_entries_are_numbered_in_order() -> None:
    text = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    expected: list[tuple[int, int]] = []
    for section_text in re.split(r"^## (?=\d+\. )", text, flags=re.MULTILINE)[1:]:
        section = int(section_text.split(".", 1)[0])
        count = len(SOURCES_ENTRY.findall(section_text))
        expected += [(section, k) for k in range(1, count + 1)]
    found = [(int(a), int(b)) for a, b in SOURCES_ENTRY.findall(text)]
    assert found == expected
    assert found, "docs/sources.md has no entries"


def test_shell_examples_are_marked() -> None:
    commands = console_scripts() | COMMAND_WORDS
    problems = [p for block in all_blocks() for p in example_problems(block, commands)]
    assert not problems, "\n".join(problems)


def test_ci_scripts_find_tools_through_path_or_documented_variables() -> None:
    docs = "".join(
        (ROOT / n).read_text(encoding="utf-8") for n in markdown_files() if n.startswith("docs/")
    )
    problems = []
    for name in tracked_files():
        if not name.startswith((".ci/", "scripts/")):
            continue
        text = (ROOT / name).read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            code = line.split("#", 1)[0] if not line.startswith("#!") else ""
            for path in re.findall(r"(?<![\w.$})-])/(?:usr|opt|bin|sbin|srv|var)/[\w./-]+", code):
                problems.append(f"{name}:{number}: absolute tool path {path}")
        for variable in set(re.findall(r"\bMRC_[A-Z0-9_]+\b", text)):
            if variable not in docs:
                problems.append(f"{name}: {variable} is not documented in docs/")
    assert not problems, "\n".join(problems)


# --- the checkers catch what they must ------------------------------------------------------


def test_checkers_flag_outside_paths_and_broken_links() -> None:
    machine = "/" + "home/someone/notes.md"
    sibling = ".." + "/shared/docs/x.md"
    climbing = "../" * 9 + "etc/hosts"
    text = f"see {machine} and {sibling} and {climbing}\n"
    problems = outside_references("docs/x.md", text)
    assert len(problems) == 3, problems
    md = ".md"
    assert outside_references("docs/x.md", f"see ../README{md} and ../p4src/x.p4\n") == []
    assert outside_references("tests/p4emu/test_x.py", climbing) == []
    text = f"[a](nowhere{md}) and docs/missing{md}\n"
    broken = broken_links("docs/x.md", text, set(), set())
    assert [p.split(": ", 1)[1] for p in broken] == [
        "link to nowhere.md",
        "mentions nowhere.md",
        "mentions docs/missing.md",
    ]
    url = f"https://github.com/p4lang/behavioral-model/blob/main/docs/simple_switch{md}"
    text = f"[BMv2]({url}) docs/sources{md} `[x](y=1)` o/r/docs/a{md}\n"
    assert broken_links("docs/x.md", text, set(), {"o/r"}) == []


def test_checkers_flag_unknown_citations_and_unmarked_commands() -> None:
    cite = "sources"
    text = f"# {cite} §1.1, §99.1 and {cite} §98\n"
    problems = bad_citations("x.py", text, {"1.1"}, {"1"})
    assert [p.split(": ", 1)[1] for p in problems] == [
        "sources §99.1 is not in docs/sources.md",
        "sources §98 is not in docs/sources.md",
    ]
    blocks = fenced_blocks(
        "d.md", "```\nmrc-testbed up tiny\n```\n```sh wrong\nls\n```\n```text\nmrc-testbed x\n```\n"
    )
    found = [p for b in blocks for p in example_problems(b, {"mrc-testbed"})]
    assert len(found) == 2 and "without an info string" in found[0] and "wrong" in found[1]


# --- the examples themselves ---------------------------------------------------------------


def example_env(run_dir: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["MRC_TESTBED_RUN_DIR"] = run_dir
    return env


def private_network() -> list[str]:
    """A command prefix that runs in a new network namespace with only loopback, up, so
    examples can use the default ports while other runs hold them (root, or an
    unprivileged user namespace); empty where unshare is missing."""
    if capabilities.user_netns_missing() is not None:  # probed: a container may refuse it
        return []
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    return ["unshare", *user, "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]


def run_bash(
    script: str, cwd: Path | str, env: dict[str, str], timeout: float, isolated: bool = False
) -> subprocess.CompletedProcess[str]:
    """``script`` run by bash with errors, unset variables and failed pipes fatal;
    ``isolated``: in a private network namespace."""
    return subprocess.run(
        [*(private_network() if isolated else []), "bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_example(block: Block, timeout: float, isolated: bool) -> None:
    """Run ``block`` from a scratch folder that links every top-level entry of the
    repository, so paths in examples work and files they write stay out of the checkout."""
    with tempfile.TemporaryDirectory(prefix="mrd-", dir="/tmp") as run_dir:
        scratch = Path(run_dir) / "w"
        scratch.mkdir()
        for entry in ROOT.iterdir():
            if entry.name != ".git":
                (scratch / entry.name).symlink_to(entry)
        result = run_bash(block.body, scratch, example_env(run_dir), timeout, isolated)
        if result.returncode != 0 and shutil.which("mrc-testbed", path=str(VENV_BIN)):
            subprocess.run(
                [str(VENV_BIN / "mrc-testbed"), "down", "--all"],
                cwd=scratch,
                env=example_env(run_dir),
                capture_output=True,
                check=False,
            )
    assert result.returncode == 0, f"{block.id} failed:\n{result.stdout}\n{result.stderr}"


@pytest.mark.parametrize("block", runnable())
def test_shell_example_runs(block: Block) -> None:
    integration = "integration" in block.kinds
    run_example(block, timeout=900 if integration else 120, isolated=integration)


# --- the README's first lines ---------------------------------------------------------------


def quickstart() -> list[str]:
    """The commands of the README's first block (`sh quickstart`), comments removed."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = fenced_blocks("README.md", text)[0]
    assert block.lang == "sh" and block.kinds == {"quickstart"}, block
    return [line.split("#", 1)[0].strip() for line in block.body.splitlines() if line.strip()]


def test_readme_starts_with_clone_then_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    before = text.split("```", 1)[0].split()
    assert before == ["#", "mrc-testbed"], "the quick start must come right after the title"
    clone, demo, test = quickstart()
    assert clone.startswith("git clone <repository-url> ") and "&& cd " in clone
    assert demo.split()[0] == "scripts/demo" and test.split()[0] == "scripts/test"
    assert "sudo" not in " ".join((clone, demo, test))


def fake_tools(folder: Path, tools: dict[str, str]) -> str:
    """A PATH holding only these tools (name -> sh script body)."""
    folder.mkdir()
    for name, body in tools.items():
        (folder / name).write_text(f"#!/bin/sh\n{body}\n")
        (folder / name).chmod(0o755)
    return str(folder)


def run_demo_script(tmp_path: Path, uid: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    """scripts/demo in an empty checkout, on a system without python3."""
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "demo", checkout / "scripts" / "demo")
    log = tmp_path / "apt-get.log"
    path = fake_tools(
        tmp_path / "bin", {"id": f"echo {uid}", "apt-get": f'echo "$*" >> {log}; exit 0'}
    )
    result = subprocess.run(
        [shutil.which("bash") or "bash", str(checkout / "scripts" / "demo")],
        env={"PATH": path},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return result, log


def test_demo_script_as_a_user_names_the_package(tmp_path: Path) -> None:
    result, log = run_demo_script(tmp_path, uid=1000)
    assert result.returncode == 1
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and "python3-venv" in result.stderr
    assert not log.exists()  # a user cannot install: nothing was tried


def test_demo_script_as_root_installs_python3_venv(tmp_path: Path) -> None:
    result, log = run_demo_script(tmp_path, uid=0)
    assert log.read_text().splitlines() == ["update -qq", "install -y -qq python3-venv"]
    # The fake apt-get installed nothing, so the script still names the package and stops.
    assert result.returncode == 1 and "python3-venv" in result.stderr.splitlines()[-1]


@pytest.mark.integration
def test_readme_first_lines_run_in_a_fresh_clone() -> None:
    clone, demo, test = quickstart()
    with tempfile.TemporaryDirectory(prefix="mrq-", dir="/tmp") as work:
        env = example_env(os.path.join(work, "runs"))
        env["PATH"] = env["PATH"].split(os.pathsep, 1)[1]  # not this checkout's venv
        script = clone.replace("<repository-url>", str(ROOT)) + "\n" + demo
        result = run_bash(script, work, env, timeout=1800)
        checkout = Path(work) / "mrc-testbed"
        assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
        # The demo leaves its summary under the run root (docs/testbed.md).
        assert list(Path(env["MRC_TESTBED_RUN_DIR"]).rglob("results.json"))
        # The test command as written; PYTEST_ADDOPTS narrows it to one quick file, since
        # the whole suite is what is running this test.
        env["PYTEST_ADDOPTS"] = "tests/test_layering.py"
        result = run_bash(test, checkout, env, timeout=1800)
        assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
        assert " passed" in result.stdout


# --- .ci/run and MRC_P4LANG_BIN ------------------------------------------------------------


def run_ci(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """.ci/run in a copy of the repository whose scripts/test prints what it was given."""
    clone = tmp_path / "clone"
    (clone / ".ci").mkdir(parents=True, exist_ok=True)
    (clone / "scripts").mkdir(exist_ok=True)
    shutil.copy(ROOT / ".ci" / "run", clone / ".ci" / "run")
    (clone / "scripts" / "test").write_text(
        '#!/bin/sh\necho "bin=${MRC_P4LANG_BIN:-unset}"\necho "path=$PATH"\necho "args=$*"\n'
    )
    (clone / "scripts" / "test").chmod(0o755)
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return subprocess.run(
        [str(clone / ".ci" / "run"), "-m", "bmv2"],
        env=base | env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_ci_run_without_p4lang_builds_leaves_path_alone(tmp_path: Path) -> None:
    result = run_ci(tmp_path, {})
    assert result.returncode == 0, result.stderr
    assert "bin=unset" in result.stdout and "args=-m bmv2" in result.stdout


def test_ci_run_finds_the_sibling_p4lang_builds(tmp_path: Path) -> None:
    sibling = tmp_path / "shared" / "p4lang" / "bin"
    sibling.mkdir(parents=True)
    result = run_ci(tmp_path, {})
    assert result.returncode == 0, result.stderr
    assert f"bin={sibling}\n" in result.stdout
    assert f"path={sibling}{os.pathsep}" in result.stdout


def test_ci_run_prefers_mrc_p4lang_bin_and_checks_it(tmp_path: Path) -> None:
    (tmp_path / "shared" / "p4lang" / "bin").mkdir(parents=True)
    mine = tmp_path / "mine"
    mine.mkdir()
    result = run_ci(tmp_path, {"MRC_P4LANG_BIN": str(mine)})
    assert f"bin={mine}\n" in result.stdout and f"path={mine}{os.pathsep}" in result.stdout
    result = run_ci(tmp_path, {"MRC_P4LANG_BIN": str(tmp_path / "missing")})
    assert result.returncode == 2 and "is not a directory" in result.stderr
    assert result.stdout == ""


# --- the README's first lines on a minimal Debian 12 system (a container) ------------------

DEBIAN_IMAGE = "mrc-testbed/debian:12"  # built by docker/base-image.sh (docs/docker.md)


def debian_image() -> str:
    """The minimal Debian 12 image, built if missing; skips where there is no Docker."""
    if not shutil.which("docker"):
        pytest.skip("docker is not installed")
    if subprocess.run(["docker", "info"], capture_output=True, check=False).returncode != 0:
        pytest.skip("the Docker engine is not running")
    found = subprocess.run(["docker", "image", "inspect", DEBIAN_IMAGE], capture_output=True)
    if found.returncode != 0:
        subprocess.run([str(ROOT / "docker" / "base-image.sh"), DEBIAN_IMAGE], check=True)
    return DEBIAN_IMAGE


def in_debian(
    checkout: Path, command: str, user: str, timeout: float
) -> subprocess.CompletedProcess[str]:
    """``command`` in a copy of ``checkout`` inside a fresh minimal Debian 12 container
    (host network: the bridge may have no DNS; apt and PyPI must be reachable)."""
    script = f"cp -r /src ~/mrc-testbed && cd ~/mrc-testbed && {command}"
    return subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "host",
            "--user",
            user,
            "-e",
            "HOME=/tmp",
            "-v",
            f"{checkout}:/src:ro",
            debian_image(),
            "bash",
            "-c",
            script,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.compose
def test_readme_first_command_on_minimal_debian() -> None:
    clone, demo, _ = quickstart()
    with tempfile.TemporaryDirectory(prefix="mrk-") as work:
        # The clone needs git, which the README names as the one prerequisite.
        cloned = run_bash(clone.replace("<repository-url>", str(ROOT)), work, dict(os.environ), 300)
        assert cloned.returncode == 0, cloned.stderr
        checkout = Path(work) / "mrc-testbed"
        as_user = in_debian(checkout, demo, "1000:1000", timeout=300)
        assert as_user.returncode == 1 and as_user.stdout == ""
        assert as_user.stderr.count("\n") == 1 and "python3-venv" in as_user.stderr
        as_root = in_debian(checkout, demo, "0:0", timeout=1800)
        assert as_root.returncode == 0, f"{as_root.stdout}\n{as_root.stderr}"
