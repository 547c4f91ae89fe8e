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


OPTIONAL = ("ray", "tianshou")  # blocks about these frameworks are skipped where they are not installed


@pytest.mark.parametrize("code", list(_blocks()))
def test_doc_block_runs(code):
    try:
        exec(compile(code, "<doc>", "exec"), {"__name__": "__doc_example__"})
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] not in OPTIONAL:
            raise
        pytest.skip(f"needs the optional package {e.name}")
