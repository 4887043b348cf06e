"""The structure holds: no import loop anywhere in campaign/ (imports inside functions
included, where loops used to hide), no module imports a higher layer, and the
vocabulary is the ground floor."""

from __future__ import annotations

import ast
from pathlib import Path

import campaign

PACKAGE = Path(campaign.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: set[str]) -> set[str]:
    """The campaign modules ``path`` imports, at any depth of its code.

    ``from P import name`` depends on P's ``__init__`` only when ``name`` is not a module
    of P: ``from campaign.agents import adapters`` needs the submodule, while
    ``from campaign.agents.adapters import Adapter`` needs what the package's
    ``__init__`` defines, and so loops when that ``__init__`` imports the importer.
    """
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules]
            names = submodules + ([node.module] if len(submodules) < len(node.names) else [])
        else:
            continue
        found |= {n for n in names if n in modules}
    return found


def graph() -> dict[str, set[str]]:
    paths = [p for p in PACKAGE.rglob("*.py") if "benchmark/tasks" not in p.as_posix()]
    modules = {module_name(p) for p in paths}
    # A module's own packages are imported before it (Python runs each ``__init__`` on the
    # way down), but that is no dependency: an edge to one of them is a name taken from it.
    return {module_name(p): imports(p, modules) - {module_name(p)} for p in paths}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_module_of_the_engine_is_part_of_an_import_loop():
    assert cycles(graph()) == []


def test_no_two_packages_import_each_other():
    # Modules can be loop-free while their packages lean on each other (report used
    # power's statistics while power read the report's aggregates): one of the two then
    # cannot be understood, tested or moved without the other.
    edges = graph()
    by_package: dict[str, set[str]] = {}
    for module, targets in edges.items():
        by_package.setdefault(top_level(module), set()).update(top_level(t) for t in targets if top_level(t) != top_level(module))
    assert cycles(by_package) == []


def top_level(module: str) -> str:
    return module.split(".")[1] if "." in module else module


# Bottom to top; a module imports only its own layer and the ones below. A new top-level
# module or package must be placed here on purpose.
LAYERS = (
    {"vocabulary", "canonical", "errors", "bulk", "testhooks", "inputs", "credential_shapes"},
    {"schedule", "experiment", "plan", "digests", "isolation", "containers", "listeners"},
    {"store"},
    {"agents", "benchmark", "config", "profiler", "providers", "spend", "approval", "progress", "supervise", "report", "power", "replay"},
    {"lanes", "view"},
    {"cli", "__main__"},
)


def layer(module: str) -> int:
    return next(i for i, members in enumerate(LAYERS) if top_level(module) in members)


def test_no_module_imports_a_higher_layer():
    edges = graph()
    placed = {m for m in edges if m != "campaign"}
    assert [m for m in placed if not any((m.split(".")[1]) in members for members in LAYERS)] == []
    upward = sorted((m, t) for m in placed for t in edges[m] if t != "campaign" and layer(t) > layer(m))
    assert upward == []


def test_the_vocabulary_is_the_ground_floor():
    edges = graph()
    assert edges["campaign.vocabulary"] == set()
    assert edges["campaign.canonical"] == set()
    # ... and the lanes, the store and the report take their words from it.
    for module in ("campaign.store.models", "campaign.report.schema", "campaign.agents.record", "campaign.schedule"):
        assert "campaign.vocabulary" in edges[module], module


def test_every_stored_digest_takes_its_text_from_canonical():
    edges = graph()
    for module in ("campaign.plan", "campaign.digests", "campaign.profiler.wire", "campaign.store.chain.hashing", "campaign.approval"):
        assert "campaign.canonical" in edges[module], module


def test_a_loop_is_found_where_there_is_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_builtin_agents_word_list_is_the_profiles_on_disk():
    from campaign.agents.profiles import builtin_profile_names
    from campaign.vocabulary import BUILTIN_AGENTS

    assert BUILTIN_AGENTS == builtin_profile_names()


def test_a_name_taken_from_a_package_whose_init_imports_the_taker_is_a_loop(tmp_path):
    # The loop the adapters had: the package's __init__ imports its modules inside a
    # function, and each module takes a name from the package's __init__.
    init = tmp_path / "__init__.py"
    init.write_text("def registry():\n    from pkg import impl\n    return impl.THING\n")
    impl = tmp_path / "impl.py"
    impl.write_text("from pkg import Base\nfrom pkg.util import helper\nimport pkg.util\n")
    modules = {"pkg", "pkg.impl", "pkg.util"}
    edges = {"pkg": imports(init, modules), "pkg.impl": imports(impl, modules)}
    assert edges == {"pkg": {"pkg.impl"}, "pkg.impl": {"pkg", "pkg.util"}}
    assert cycles(edges) == [["pkg", "pkg.impl"]]
