"""The dependency rules of docs/architecture.md, checked on the source.

Two levels: which project packages a package may import (the package layers), and the
module-level import graph built from the AST of every module — every ``import`` and
``from ... import`` counts, including imports inside functions and under
``TYPE_CHECKING`` (a cycle held together by a late import is still a cycle), with relative
imports resolved. On that graph: no import cycles inside a package, the controller never
reaches into ``p4emu.server``, other packages (and ``benchmarks/``, ``scripts/``) use only
the public modules of p4emu, nic_emu and the controller, p4emu's subpackages respect
their order, and the fault vocabulary has one home (``topologies.events``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from project_files import PACKAGES, script_files

ROOT = Path(__file__).resolve().parent.parent
PROJECT_PACKAGES = set(PACKAGES)

# package -> project packages it may import (besides itself)
# clikit (the one command-line kit) is the bottom layer: every package may import it.
ALLOWED: dict[str, set[str]] = {
    "clikit": set(),
    "mrc_wire": {"clikit"},
    "topologies": {"clikit"},
    "p4emu": {"clikit"},
    "controller": {"clikit", "topologies", "mrc_wire", "p4emu"},  # p4emu: P4Info/configs
    "nic_emu": {"clikit", "topologies", "mrc_wire"},
    # the virtual-time fabric combines the P4 switches, the controller's plan and the NICs
    "vfabric": {"clikit", "topologies", "mrc_wire", "p4emu", "controller", "nic_emu"},
    "testbed": PROJECT_PACKAGES,
}

# Packages whose module graph has no cycle: all of them (issue 16 cut the last ones).
CYCLE_FREE = (
    "clikit",
    "controller",
    "mrc_wire",
    "nic_emu",
    "p4emu",
    "testbed",
    "topologies",
    "vfabric",
)

# p4emu's public modules (docs/architecture.md, "p4emu's public entry points"): the only
# p4emu modules another package may import.
P4EMU_PUBLIC = {
    "p4emu",
    "p4emu.exceptions",
    "p4emu.frontend",
    "p4emu.p4info",
    "p4emu.proto",
    "p4emu.bundle",
    "p4emu.switch",
    "p4emu.p4rt",
    "p4emu.p4rt_client",
    "p4emu.p4rt_client.exceptions",
    "p4emu.p4rt_client.schema",
    "p4emu.p4rt_client.entity",
    "p4emu.p4rt_client.messages",
    "p4emu.runtime.clock",
    "p4emu.runtime.traffic_manager",
    "p4emu.io",
    "p4emu.server.main",
    "p4emu.server.client",
}

# nic_emu's and controller's public modules (docs/architecture.md, "Public modules of
# nic_emu and controller"): the only modules of theirs another package, a benchmark or a
# script may import.
NIC_EMU_PUBLIC = {
    "nic_emu",
    "nic_emu.exceptions",
    "nic_emu.config",
    "nic_emu.memory",
    "nic_emu.event_log",
    "nic_emu.eventfile",
    "nic_emu.connection",
    "nic_emu.connection.host",
    "nic_emu.core",
    "nic_emu.testing",  # test doubles: for benchmarks, never production (below)
    "nic_emu.serve_config",
    "nic_emu.transfers",
    "nic_emu.datasource",
    "nic_emu.streams",
    "nic_emu.client",
}
CONTROLLER_PUBLIC = {
    "controller",
    "controller.exceptions",
    "controller.p4names",
    "controller.plan",
    "controller.entities",
    "controller.artifacts",
    "controller.endpoints",
    "controller.p4rt_client",
    "controller.push",
    "controller.reconcile",
    "controller.render",
    "controller.show",
}
PUBLIC = {"p4emu": P4EMU_PUBLIC, "nic_emu": NIC_EMU_PUBLIC, "controller": CONTROLLER_PUBLIC}

# Outside the packages: benchmark and script files import the project like any package
# above it (everything), through the same public modules.
# Uses of a non-public module outside its package, each with its reason. Nothing else.
KNOWN_PRIVATE_USES = {
    # measures the gRPC service itself, started in-process
    ("benchmarks.p4rt_under_load", "p4emu.server.service"),
    ("benchmarks.p4rt_under_load", "p4emu.server.switch_device"),
}

# p4emu's subpackages -> the subpackages they may import (docs/architecture.md). Only
# ``switch`` drives the compiler (``backend``); the P4Runtime layer, the STF runner and the
# server see run-time objects (``runtime``). Command-line modules (``p4emu.cli``, every
# ``*.cli``, ``__main__``) and the package root are entry points, above everything.
P4EMU_ORDER: dict[str, set[str]] = {
    "exceptions": set(),
    "limits": {"exceptions"},
    # finsy's message modules without finsy's client stack (p4emu/proto.py)
    "proto": set(),
    "frontend": {"exceptions"},
    "runtime": {"exceptions"},
    "io": {"exceptions"},
    "p4info": {"exceptions", "frontend", "proto"},
    "bundle": {"exceptions", "frontend"},
    "backend": {"exceptions", "frontend", "p4info", "runtime"},
    "switch": {"exceptions", "frontend", "p4info", "runtime", "backend"},
    # the client stack; the switch side shares its schema and canonical encoder
    "p4rt_client": {"exceptions", "proto"},
    "p4rt": {"exceptions", "proto", "p4info", "runtime", "p4rt_client"},
    "stf": {
        "exceptions",
        "proto",
        "frontend",
        "p4info",
        "runtime",
        "switch",
        "p4rt",
        "p4rt_client",
    },
    "server": {
        "exceptions",
        "limits",
        "proto",
        "frontend",
        "p4info",
        "runtime",
        "io",
        "bundle",
        "switch",
        "p4rt_client",
        "p4rt",
    },
}
P4EMU_ENTRY = "entry"
# Where the order does not hold yet. Empty: a new violation fails.
KNOWN_P4EMU_ORDER_VIOLATIONS: set[tuple[str, str]] = set()


# ------------------------------------------------------------------ package level


def imported_top_level_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_imported_top_level_names_sees_both_import_forms(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("import p4emu.frontend\nfrom controller.plan import x\nfrom . import y\n")
    assert imported_top_level_names(source) == {"p4emu", "controller"}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_lower_layers(package: str) -> None:
    forbidden = PROJECT_PACKAGES - ALLOWED[package] - {package}
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = imported_top_level_names(path) & forbidden
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    assert not offenders, "\n".join(offenders)


# ------------------------------------------------------------------- module level


def module_paths(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``package`` under ``root``."""
    found: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _known_prefix(name: str, known: Mapping[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a known module (``a.b.c`` -> ``a.b``)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def module_imports(module: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The known modules ``module`` imports anywhere in its source.

    ``from pkg import name`` depends on ``pkg.name`` when that is a module, else on
    ``pkg``; parent packages that Python initialises on the way are not edges (every
    submodule would otherwise depend on its package's ``__init__``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [_known_prefix(alias.name, known) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            targets = [
                f"{source}.{alias.name}"
                if f"{source}.{alias.name}" in known
                else _known_prefix(source, known)
                for alias in node.names
            ]
        else:
            continue
        found.update(target for target in targets if target is not None)
    found.discard(module)
    return found


def import_graph(root: Path, packages: Iterable[str]) -> dict[str, set[str]]:
    """Module -> the project modules it imports, over ``packages`` under ``root``."""
    known: dict[str, Path] = {}
    for package in packages:
        known.update(module_paths(root, package))
    return {module: module_imports(module, path, known) for module, path in known.items()}


def import_cycles(graph: Mapping[str, set[str]], modules: Iterable[str]) -> list[set[str]]:
    """The strongly connected components of more than one module among ``modules``
    (Tarjan's algorithm, iterative), in a stable order."""
    nodes = set(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, set()) & nodes)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, set()) & nodes))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)
    return sorted(components, key=sorted)


def cycle_path(graph: Mapping[str, set[str]], component: set[str]) -> list[str]:
    """One concrete cycle through the first module of ``component`` (shortest, BFS)."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph.get(node, set()) & component):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    raise ValueError(f"{sorted(component)} is not a cycle")


def describe_cycles(graph: Mapping[str, set[str]], components: list[set[str]]) -> str:
    return "\n".join(" -> ".join(cycle_path(graph, c)) for c in components)


def package_modules(graph: Mapping[str, set[str]], package: str) -> set[str]:
    return {m for m in graph if m == package or m.startswith(package + ".")}


def script_paths(root: Path) -> dict[str, Path]:
    """``folder.name`` -> file, for every Python file of :data:`project_files.SCRIPT_FOLDERS` (``*.py``,
    or an executable script whose first line names python)."""
    found: dict[str, Path] = {}
    for path in script_files(root):
        parts = path.relative_to(root).with_suffix("").parts
        found[".".join(parts).replace("-", "_")] = path
    return found


def script_graph(root: Path, known: Iterable[str]) -> dict[str, set[str]]:
    """Script -> the project modules it imports (``known``: every module of the packages)."""
    modules = dict.fromkeys(known, root)
    return {name: module_imports(name, path, modules) for name, path in script_paths(root).items()}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(ROOT, sorted(PROJECT_PACKAGES))


@pytest.fixture(scope="module")
def scripts(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    return script_graph(ROOT, graph)


def _write_package(root: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_import_graph_resolves_every_import_form(tmp_path: Path) -> None:
    _write_package(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.a import thing\n",
            "pkg/a.py": "import os\nimport pkg.b as bee\nthing = 1\n",
            "pkg/b.py": "from . import c\nfrom .sub import d\n",
            "pkg/c.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from pkg.sub.d import X\n"
                "def late():\n    from .a import thing\n"
            ),
            "pkg/sub/__init__.py": "from .. import a\nfrom . import d\n",
            "pkg/sub/d.py": "from ..c import late\nfrom pkg import thing\nX = 1\n",
        },
    )
    graph = import_graph(tmp_path, ["pkg"])
    assert graph == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.b"},
        "pkg.b": {"pkg.c", "pkg.sub.d"},
        "pkg.c": {"pkg.sub.d", "pkg.a"},
        "pkg.sub": {"pkg.a", "pkg.sub.d"},
        "pkg.sub.d": {"pkg.c", "pkg"},
    }


def test_cycle_finder_on_a_synthetic_package(tmp_path: Path) -> None:
    _write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": "def f():\n    from pkg.c import x\n",
            "pkg/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n",
            "pkg/d.py": "import pkg.a\nfrom pkg import e\n",
            "pkg/e.py": "x = 1\n",
        },
    )
    graph = import_graph(tmp_path, ["pkg"])
    components = import_cycles(graph, graph)
    assert components == [{"pkg.a", "pkg.b", "pkg.c"}]
    assert describe_cycles(graph, components) == "pkg.a -> pkg.b -> pkg.c -> pkg.a"
    (tmp_path / "pkg" / "c.py").write_text("x = 1\n", encoding="utf-8")
    assert import_cycles(import_graph(tmp_path, ["pkg"]), graph) == []


def test_cycle_finder_separates_two_cycles_and_a_two_module_loop() -> None:
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}}
    assert import_cycles(graph, graph) == [{"a", "b"}, {"c", "d", "e"}]
    assert import_cycles(graph, {"a", "c", "d", "e", "f"}) == [{"c", "d", "e"}]
    assert cycle_path(graph, {"c", "d", "e"}) == ["c", "d", "e", "c"]


@pytest.mark.parametrize("package", CYCLE_FREE)
def test_no_import_cycles(graph: dict[str, set[str]], package: str) -> None:
    components = import_cycles(graph, package_modules(graph, package))
    assert not components, "import cycles:\n" + describe_cycles(graph, components)


def test_every_package_is_checked_for_cycles() -> None:
    assert set(CYCLE_FREE) == PROJECT_PACKAGES


def facade_imports(graph: Mapping[str, set[str]]) -> list[str]:
    """Modules that import their own top-level package (its ``__init__``, which re-exports
    the package's modules: a module importing names from it depends on every module the
    facade imports, a hidden cycle)."""
    return sorted(
        f"{module} imports {module.split('.')[0]}"
        for module, targets in graph.items()
        if "." in module and module.split(".")[0] in targets
    )


def test_facade_imports_on_a_synthetic_package() -> None:
    graph = {"pkg": {"pkg.a"}, "pkg.a": set(), "pkg.b": {"pkg"}, "other.c": {"pkg"}}
    assert facade_imports(graph) == ["pkg.b imports pkg"]


def test_no_module_imports_its_own_package_facade(graph: dict[str, set[str]]) -> None:
    offenders = facade_imports(graph)
    assert not offenders, "\n".join(offenders)


def test_controller_never_imports_p4emu_server(graph: dict[str, set[str]]) -> None:
    offenders = sorted(
        f"{module} imports {target}"
        for module in package_modules(graph, "controller")
        for target in graph[module]
        if target == "p4emu.server" or target.startswith("p4emu.server.")
    )
    assert not offenders, "\n".join(offenders)


def private_uses(
    graph: Mapping[str, set[str]], package: str, public: set[str]
) -> set[tuple[str, str]]:
    """Edges from outside ``package`` to one of its modules that is not in ``public``."""
    return {
        (module, target)
        for module, targets in graph.items()
        if module.split(".")[0] != package
        for target in targets
        if target.split(".")[0] == package and target not in public
    }


def test_private_uses_on_a_synthetic_graph() -> None:
    graph = {"a.x": {"b", "b.api", "b.inner"}, "b.inner": {"b.deep"}, "scripts.s": {"b.deep"}}
    assert private_uses(graph, "b", {"b", "b.api"}) == {
        ("a.x", "b.inner"),
        ("scripts.s", "b.deep"),
    }


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_other_packages_use_only_public_modules(
    graph: dict[str, set[str]], scripts: dict[str, set[str]], package: str
) -> None:
    private = private_uses({**graph, **scripts}, package, PUBLIC[package])
    new = private - KNOWN_PRIVATE_USES
    assert not new, "\n".join(f"{m} imports {t} (not public)" for m, t in sorted(new))


def test_known_private_uses_are_still_there(
    graph: dict[str, set[str]], scripts: dict[str, set[str]]
) -> None:
    """An exception that no longer holds is removed from KNOWN_PRIVATE_USES."""
    found = set().union(*(private_uses(scripts, p, PUBLIC[p]) for p in PUBLIC))
    assert found >= KNOWN_PRIVATE_USES


def test_benchmarks_and_scripts_are_read(scripts: dict[str, set[str]]) -> None:
    assert "benchmarks.p4emu_pps" in scripts and "scripts.p4fuzz_diff" in scripts
    assert "scripts.test" not in scripts  # a shell script
    assert "p4emu.switch" in scripts["benchmarks.p4emu_pps"]


# nic_emu's test doubles (docs/nic-emu.md, "Test doubles"): tests and benchmarks drive the
# NIC cores with them; no module of a package uses them, nic_emu's own included.
TEST_DOUBLES = "nic_emu.testing"


def _is_double(module: str) -> bool:
    return module == TEST_DOUBLES or module.startswith(TEST_DOUBLES + ".")


def doubles_users(graph: Mapping[str, set[str]]) -> set[str]:
    """The modules outside :data:`TEST_DOUBLES` that import one of its modules."""
    return {
        module
        for module, targets in graph.items()
        if not _is_double(module) and any(_is_double(t) for t in targets)
    }


def test_doubles_users_on_a_synthetic_graph() -> None:
    graph = {
        "nic_emu.core": set(),
        "nic_emu.testing": {"nic_emu.testing.sim"},
        "nic_emu.testing.sim": {"nic_emu.core"},
        "vfabric.nodes": {"nic_emu.testing.sim", "nic_emu.core"},
        "nic_emu.testingx": {"nic_emu.testing"},
    }
    assert doubles_users(graph) == {"vfabric.nodes", "nic_emu.testingx"}


def test_no_package_uses_the_test_doubles(
    graph: dict[str, set[str]], scripts: dict[str, set[str]]
) -> None:
    assert "nic_emu.testing.model_fabric" in graph  # the rule is not vacuous
    assert not doubles_users(graph)
    assert doubles_users(scripts) == {"benchmarks.nic_emu_throughput"}


# The one fault vocabulary (docs/architecture.md, "One fault vocabulary"): the fault
# events live in one pure module below every fabric; the fabrics apply them (each is a
# FaultSink of it) and have none of their own. A class that says how an event reaches a
# fabric (a method ``apply_to``) is defined there only, and every module that applies
# faults imports it.
FAULT_VOCABULARY = "topologies.events"
FAULT_APPLIERS = (
    "vfabric.faults",  # the virtual fabric
    "vfabric.fabric",
    "testbed.fabric",  # the process fabric
    "testbed.scenario.fabric",  # the one fabric interface
    "testbed.scenario.virtual",
    "testbed.scenario.process",
)


def event_definers(root: Path, packages: Iterable[str]) -> set[str]:
    """The modules that define a class with an ``apply_to`` method (an event kind)."""
    found = set()
    for package in packages:
        for module, path in module_paths(root, package).items():
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and any(
                    isinstance(item, ast.FunctionDef) and item.name == "apply_to"
                    for item in node.body
                ):
                    found.add(module)
    return found


def test_event_definers_on_a_synthetic_package(tmp_path: Path) -> None:
    _write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/events.py": "class Down:\n    def apply_to(self, sink, i):\n        pass\n",
            "pkg/fabric.py": "class Sink:\n    def link_state(self, i, e):\n        pass\n",
            "pkg/other.py": "def apply_to():\n    pass\n",
        },
    )
    assert event_definers(tmp_path, ["pkg"]) == {"pkg.events"}


def test_the_fault_vocabulary_has_one_home(graph: dict[str, set[str]]) -> None:
    assert event_definers(ROOT, sorted(PROJECT_PACKAGES)) == {FAULT_VOCABULARY}
    assert graph[FAULT_VOCABULARY] <= package_modules(graph, "topologies")  # pure
    missing = [m for m in FAULT_APPLIERS if FAULT_VOCABULARY not in graph[m]]
    assert not missing, f"apply faults without the vocabulary: {missing}"


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_public_modules_exist(graph: dict[str, set[str]], package: str) -> None:
    assert set(graph) >= PUBLIC[package]


def p4emu_layer(module: str) -> str:
    """The subpackage of a p4emu module in :data:`P4EMU_ORDER`, or ``entry``."""
    parts = module.split(".")
    if len(parts) == 1 or parts[-1] in ("cli", "__main__"):
        return P4EMU_ENTRY
    return parts[1]


def order_violations(
    graph: Mapping[str, set[str]], order: Mapping[str, set[str]]
) -> set[tuple[str, str]]:
    """Edges between p4emu modules from one subpackage to one it may not import."""
    found = set()
    for module, targets in graph.items():
        for target in targets:
            if target.split(".")[0] != "p4emu":
                continue
            source, dest = p4emu_layer(module), p4emu_layer(target)
            if source != dest and source != P4EMU_ENTRY and dest not in order[source]:
                found.add((module, target))
    return found


def test_order_checker_finds_an_upward_import() -> None:
    graph = {
        "p4emu.frontend.parser": {"p4emu.exceptions"},
        "p4emu.runtime.tables": {"p4emu.backend.objects"},
        "p4emu.cli": {"p4emu.server.main"},
        "p4emu.server.main": {"clikit"},
        "p4emu.p4info.cli": {"p4emu.cli"},
    }
    assert p4emu_layer("p4emu") == p4emu_layer("p4emu.stf.cli") == P4EMU_ENTRY
    assert order_violations(graph, P4EMU_ORDER) == {
        ("p4emu.runtime.tables", "p4emu.backend.objects")
    }


def test_p4emu_order_names_every_subpackage(graph: dict[str, set[str]]) -> None:
    layers = {p4emu_layer(m) for m in package_modules(graph, "p4emu")} - {P4EMU_ENTRY}
    assert layers == set(P4EMU_ORDER)
    assert all(allowed <= set(P4EMU_ORDER) for allowed in P4EMU_ORDER.values())


def test_p4emu_subpackage_order(graph: dict[str, set[str]]) -> None:
    p4emu = {m: graph[m] for m in package_modules(graph, "p4emu")}
    new = order_violations(p4emu, P4EMU_ORDER) - KNOWN_P4EMU_ORDER_VIOLATIONS
    assert not new, "\n".join(
        f"{m} ({p4emu_layer(m)}) imports {t} ({p4emu_layer(t)})" for m, t in sorted(new)
    )
