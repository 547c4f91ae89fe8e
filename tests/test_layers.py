"""The import layers of docs/architecture.md, and no import cycles in the package.

The contract (the layer of every module of ``jiu_env``, the known exceptions
with their reasons) is written once, in ``[tool.importlinter]`` of
pyproject.toml; this test runs it with import-linter (``lint-imports`` runs
the same contract from the command line).  Import cycles are found on the
same graph (grimp's: imports inside functions and under TYPE_CHECKING count,
so an import moved into a function does not hide a cycle).  Cycles still open
are listed in KNOWN_CYCLES; the test fails on a new cycle, and on a known one
that is gone but still listed (remove it from KNOWN_CYCLES then).
"""

from __future__ import annotations

from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp")
pytest.importorskip("importlinter.api")  # configures import-linter (its file readers), as its CLI does
from importlinter.application import use_cases  # noqa: E402

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"

#: The import cycles (strongly connected components of the module graph) that are still open: none.
KNOWN_CYCLES: set[frozenset[str]] = set()


def _cycles(graph) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on_stack.add(v)
            if i < len(edges[v]):
                work.append((v, i + 1))
                w = edges[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.add(frozenset(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return found


def test_layers(capsys):
    """Every module sits in its layer and imports only the layers below it (known exceptions aside)."""
    ok = use_cases.lint_imports(config_filename=str(PYPROJECT), cache_dir=None, no_logo=True)
    out = capsys.readouterr().out
    assert ok, "the layer contract of pyproject.toml [tool.importlinter] is broken:\n" + out


def test_no_new_import_cycles():
    graph = grimp.build_graph("jiu_env", cache_dir=None)
    found = _cycles(graph)
    new = found - KNOWN_CYCLES
    gone = KNOWN_CYCLES - found
    assert not new, "new import cycle(s): " + "; ".join(" <-> ".join(sorted(c)) for c in new)
    assert not gone, ("known import cycle(s) cut (or changed): remove them from KNOWN_CYCLES: "
                      + "; ".join(" <-> ".join(sorted(c)) for c in gone))


def test_cycle_finder():
    """The cycle finder on a small graph: two cycles, a self-contained chain, a tail into a cycle."""

    class G:
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": {"g"}, "g": set()}
        modules = set(edges)

        def find_modules_directly_imported_by(self, m):
            return self.edges[m]

    assert _cycles(G()) == {frozenset("abc"), frozenset("de")}


#: Test files that are about a concern across the package rather than one module (docs/architecture.md, Tests).
TOPICS = {"core", "docs", "examples", "hostile", "install", "ladder", "layers", "pickling", "random", "ray",
          "scripts", "shaping", "tianshou", "typing"}


def test_test_files_are_named_after_what_they_test():
    """Each tests/test_X.py names a module or sub-package of jiu_env (X, or X's first words: test_envs_aec.py is
    envs/aec.py, test_bots_search.py the search bots), or one of the cross-cutting TOPICS."""
    package = Path(__file__).resolve().parents[1] / "jiu_env"
    names = set()
    for path in package.rglob("*.py"):
        rel = path.relative_to(package).with_suffix("")
        parts = [p.lstrip("_") for p in rel.parts if p != "__init__"]
        for i in range(len(parts)):  # envs/aec -> "envs", "envs_aec", "aec"
            names.add("_".join(parts[i:]))
            names.add("_".join(parts[:i + 1]))
    stray = []
    for test in sorted(Path(__file__).parent.glob("test_*.py")):
        words = test.stem[len("test_"):].split("_")
        prefixes = {"_".join(words[:k]) for k in range(1, len(words) + 1)}
        if not (prefixes & names or words[0] in TOPICS):
            stray.append(test.name)
    assert not stray, f"name these after the module they test, or add their topic to TOPICS: {stray}"
