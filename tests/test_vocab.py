"""The vocabulary (jiu_env/vocab.py) and how the rest of the package takes it."""

from __future__ import annotations

import ast
import pathlib

import jiu_env
from jiu_env import kernel as K
from jiu_env import vocab

PACKAGE = pathlib.Path(jiu_env.__file__).parent


def test_kernel_reexports_the_whole_vocabulary_by_name():
    """``kernel.X`` is ``vocab.X`` for every vocabulary word, listed in kernel.py one by one (no star import)."""
    tree = ast.parse((PACKAGE / "kernel.py").read_text(encoding="utf-8"))
    listed = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module == "vocab"
              for alias in node.names}
    assert listed == set(vocab.__all__), (sorted(set(vocab.__all__) - listed), sorted(listed - set(vocab.__all__)))
    for name in vocab.__all__:
        assert getattr(K, name) is getattr(vocab, name), name


def test_no_star_imports_in_the_package():
    """Every name a module uses is visible to readers and type checkers."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []
