"""Every ```python block of the docs and the README runs as written."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _blocks():
    for f in FILES:
        if not f.exists():
            continue
        for i, m in enumerate(BLOCK.finditer(f.read_text(encoding="utf-8"))):
            yield pytest.param(m.group(1), id=f"{f.name}-{i}")


@pytest.mark.parametrize("code", list(_blocks()))
def test_doc_block_runs(code):
    exec(compile(code, "<doc>", "exec"), {"__name__": "__doc_example__"})
