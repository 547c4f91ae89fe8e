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


# ------------------------------------------------------------------ the words of the rules
def test_colour_and_direction_words():
    assert vocab.opponent(vocab.WHITE) == vocab.BLACK and vocab.opponent(vocab.BLACK) == vocab.WHITE
    assert [vocab.opposite(d) for d in range(4)] == [2, 3, 0, 1]
    for d in range(4):  # opposite directions undo each other
        assert vocab.DR[d] + vocab.DR[vocab.opposite(d)] == 0 and vocab.DC[d] + vocab.DC[vocab.opposite(d)] == 0


def test_action_words_invert_the_encoders():
    n = 6
    p_ = n * n
    for p in range(p_):
        for d in range(4):
            step = vocab.encode_step(p, d, p_)
            jump = vocab.encode_jump(p, d, p_)
            assert vocab.is_step_kind(vocab.action_kind(step, p_)) and not vocab.is_jump_kind(vocab.action_kind(step, p_))
            assert vocab.is_jump_kind(vocab.action_kind(jump, p_)) and not vocab.is_step_kind(vocab.action_kind(jump, p_))
            assert vocab.step_direction(vocab.action_kind(step, p_)) == d == vocab.jump_direction(vocab.action_kind(jump, p_))
            assert vocab.action_point(step, p_) == p == vocab.action_point(jump, p_)


def test_point_words_against_brute_force():
    for n in (vocab.MIN_N, 5, 8):
        for p in range(n * n):
            r, c = vocab.point_row(p, n), vocab.point_col(p, n)
            assert (r, c) == divmod(p, n) and vocab.point_at(r, c, n) == p
            for d in range(4):
                for dist in (1, 2):
                    rr, cc = r + dist * int(vocab.DR[d]), c + dist * int(vocab.DC[d])
                    want = rr * n + cc if 0 <= rr < n and 0 <= cc < n else -1
                    assert vocab.landing(p, d, dist, n) == want == vocab.point_at(rr, cc, n), (n, p, d, dist)
            # the 2x2 windows containing p: every top-left corner a with p in {a, a+1, a+n, a+n+1}
            want = {a for a in range((n - 1) * n) if a % n < n - 1 and p in (a, a + 1, a + n, a + n + 1)}
            got = [vocab.square_corner(p, k, n) for k in range(4)]
            assert {a for a in got if a >= 0} == want and len([a for a in got if a >= 0]) == len(want), (n, p, got)


def test_colour_arithmetic_is_written_once():
    """The other colour is ``opponent(c)`` everywhere; ``3 - c`` is spelled out only in the vocabulary."""
    import re

    pattern = re.compile(r"\b3 - (?:self\.)?[a-z_]\w*\b|\b3 - s\[")
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "vocab.py":
            continue
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line.split("#")[0]):
                offenders.append(f"{path.relative_to(PACKAGE)}:{no}: {line.strip()}")
    assert offenders == []


def test_one_spelling_of_each_word_inside_the_package():
    """Package modules take the vocabulary from ``vocab``: ``kernel.X`` stays a public alias for users, but
    no module of the package reads a vocabulary word through the kernel (``K.H_N``, ``from .kernel import HDR``)."""
    words = set(vocab.__all__)
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in ("kernel.py", "vocab.py"):
            continue
        src = path.read_text(encoding="utf-8")
        tree = ast.parse(src)
        aliases = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   and node.module is None for a in node.names if a.name == "kernel"}
        aliases |= {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for a in node.names if a.name == "jiu_env.kernel" and a.asname}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                    and node.attr in words:
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value.id}.{node.attr}")
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("kernel"):
                offenders += [f"{path.relative_to(PACKAGE)}:{node.lineno}: from kernel import {a.name}"
                              for a in node.names if a.name in words]
    assert offenders == []
