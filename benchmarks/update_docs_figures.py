"""Rewrite the speed figures of the docs from kept ``jiu bench`` output, or check that they match it.

    python benchmarks/update_docs_figures.py            # rewrite every marked figure
    python benchmarks/update_docs_figures.py --check    # list the figures that differ; exit 1 if any

A figure that ``jiu bench`` measures is not typed into a page: it is marked,
and this script writes it from the bench's ``results.json`` kept in the
repository, so the page and the measurement cannot drift apart
(``tests/test_docs_figures.py`` fails when a marked figure differs from its
kept output).  A marker is an HTML comment around the figure::

    alpha-beta about <!-- bench row="alpha-beta search" format=sig2 -->370,000<!-- /bench --> nodes/s

Its attributes (``key=value``, values with spaces in double quotes):

``row``     the name of a row of ``results.json`` (``"alpha-beta search"``)
``field``   ``value`` (default), ``per_cpu_s`` or ``ratio`` of that row
``over``    another row's name: the figure is ``row / over`` (both with ``field``),
            a ratio of two figures of the same run
``meta``    instead of ``row``: a field of the run (``date``, ``load_start``,
            ``load_end``, ``command``, ``commit``, ``cpu``, ``cpu_count``, ``python``,
            ``numba``, ``numpy``)
``file``    the kept output, relative to the repository root
            (default :data:`DEFAULT_RESULTS`)
``format``  how the number is written (default ``int``):

            ``int``   rounded, thousands separated: ``371,484``
            ``sig2``  two significant digits, thousands separated: ``370,000`` (``sig3``: ``371,000``)
            ``k``     thousands, three significant digits: ``371k``; ``M``: millions, ``1.57M``
            ``x2``    two decimals and an ``x``: ``0.94x`` (``x1``: ``0.9x``)
            ``f1``, ``f2``  one or two decimals: ``6.4``
            ``pct``   a percentage without decimals: ``94%``
            ``day``   (``meta=date``) the day only: ``2026-11-26``
            ``text``  as stored (meta fields that are text)

Pages scanned: README.md, docs/*.md and benchmarks/*.md.  To refresh the
figures: run ``jiu bench`` with ``--out`` the kept folder (the sections the
docs quote), read what changed, then run this script and commit both.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RESULTS = "benchmarks/results/bench/results.json"
FIELDS = ("value", "per_cpu_s", "ratio")
META = ("date", "load_start", "load_end", "command", "commit", "cpu", "cpu_count", "python", "numba", "numpy")
FORMATS = ("int", "sig2", "sig3", "k", "M", "x1", "x2", "f1", "f2", "pct", "day", "text")
ATTRS = ("row", "field", "over", "meta", "file", "format")

MARKER = re.compile(r"<!--\s*bench\b(?P<attrs>(?:(?!-->).)*?)-->(?P<text>(?:(?!<!--).)*?)<!--\s*/bench\s*-->", re.S)
OPEN = re.compile(r"<!--\s*bench\b")


def pages(root: Path | None = None) -> list[Path]:
    """The Markdown pages whose figures are generated."""
    root = ROOT if root is None else root
    return [root / "README.md", *sorted((root / "docs").glob("*.md")), *sorted((root / "benchmarks").glob("*.md"))]


@dataclass
class Marker:
    """One marked figure: where it is, what it says now and what it should say."""

    path: Path
    line: int
    attrs: dict[str, str]
    text: str
    start: int
    end: int

    def where(self) -> str:
        return f"{_rel(self.path)}:{self.line}"


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def parse_attrs(raw: str, where: str) -> dict[str, str]:
    """``key=value`` pairs of a marker; unknown keys, a missing ``row``/``meta`` or a bad format raise ValueError."""
    try:
        words = shlex.split(raw)
    except ValueError as e:
        raise ValueError(f"{where}: bench marker {raw.strip()!r}: {e}") from None
    attrs: dict[str, str] = {}
    for w in words:
        key, eq, value = w.partition("=")
        if not eq or key not in ATTRS:
            raise ValueError(f"{where}: bench marker attribute {w!r}: expected KEY=VALUE with KEY one of "
                             f"{', '.join(ATTRS)}")
        attrs[key] = value
    if ("row" in attrs) == ("meta" in attrs):
        raise ValueError(f"{where}: a bench marker names exactly one of row=... or meta=..., not {raw.strip()!r}")
    if attrs.get("format", "int") not in FORMATS:
        raise ValueError(f"{where}: unknown format {attrs['format']!r}; choose from {', '.join(FORMATS)}")
    if attrs.get("field", "value") not in FIELDS:
        raise ValueError(f"{where}: unknown field {attrs['field']!r}; choose from {', '.join(FIELDS)}")
    if "meta" in attrs and attrs["meta"] not in META:
        raise ValueError(f"{where}: unknown meta {attrs['meta']!r}; choose from {', '.join(META)}")
    return attrs


def find_markers(path: Path, text: str | None = None) -> list[Marker]:
    """Every bench marker of a page; an opening comment without its ``<!-- /bench -->`` raises ValueError."""
    text = path.read_text() if text is None else text
    out = []
    covered = set()
    for m in MARKER.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        where = f"{_rel(path)}:{line}"
        out.append(Marker(path, line, parse_attrs(m.group("attrs"), where), m.group("text"),
                          m.start("text"), m.end("text")))
        covered.add(m.start())
    for m in OPEN.finditer(text):
        if m.start() not in covered:
            line = text.count("\n", 0, m.start()) + 1
            raise ValueError(f"{_rel(path)}:{line}: bench marker without its closing <!-- /bench --> "
                             "(or with another comment inside)")
    return out


def load_results(file: str, root: Path | None = None, cache: dict[str, Any] | None = None) -> dict[str, Any]:
    """A kept ``results.json`` (read once per run when ``cache`` is given)."""
    root = ROOT if root is None else root
    if cache is not None and file in cache:
        return cache[file]
    path = root / file
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"kept bench output {file} does not exist") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"kept bench output {file} is not JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise ValueError(f"{file} is not the output of jiu bench (no 'rows' list)")
    if cache is not None:
        cache[file] = data
    return data


def _row_number(data: dict[str, Any], name: str, field: str, file: str, where: str) -> float:
    for r in data["rows"]:
        if r.get("name") == name:
            v = r.get(field)
            if v is None:
                raise ValueError(f"{where}: row {name!r} of {file} has no {field}")
            return float(v)
    names = ", ".join(repr(r.get("name")) for r in data["rows"])
    raise ValueError(f"{where}: {file} has no row {name!r} (rows: {names})")


def _meta(data: dict[str, Any], key: str) -> Any:
    if key in ("load_start", "load_end", "date", "command"):
        return data.get(key)
    if key == "commit":
        return (data.get("code") or {}).get("commit")
    return (data.get("machine") or {}).get(key)


def fmt(value: Any, form: str) -> str:
    """Write ``value`` the way the marker's ``format`` says (see the module docstring)."""
    if form == "text":
        return str(value)
    if form == "day":
        return str(value).split()[0]
    v = float(value)
    if form == "int":
        return f"{v:,.0f}"
    if form in ("sig2", "sig3"):
        return f"{float(f'{v:.{form[-1]}g}'):,.0f}" if abs(v) >= 1 else f"{v:.{form[-1]}g}"
    if form == "k":
        return f"{float(f'{v / 1e3:.3g}'):g}k"
    if form == "M":
        return f"{v / 1e6:.2f}M"
    if form in ("x1", "x2"):
        return f"{v:.{form[-1]}f}x"
    if form in ("f1", "f2"):
        return f"{v:.{form[-1]}f}"
    if form == "pct":
        return f"{100 * v:.0f}%"
    raise ValueError(f"unknown format {form!r}; choose from {', '.join(FORMATS)}")


def render(marker: Marker, root: Path | None = None, cache: dict[str, Any] | None = None) -> str:
    """What the marked figure should say, from its kept output."""
    a = marker.attrs
    file = a.get("file", DEFAULT_RESULTS)
    try:
        data = load_results(file, root, cache)
    except ValueError as e:
        raise ValueError(f"{marker.where()}: {e}") from None
    form = a.get("format", "int" if "row" in a else "text")
    if "meta" in a:
        value = _meta(data, a["meta"])
        if value is None:
            raise ValueError(f"{marker.where()}: {file} has no {a['meta']}")
        return fmt(value, form)
    field = a.get("field", "value")
    value = _row_number(data, a["row"], field, file, marker.where())
    if "over" in a:
        below = _row_number(data, a["over"], field, file, marker.where())
        if below == 0:
            raise ValueError(f"{marker.where()}: row {a['over']!r} of {file} has {field} 0")
        value /= below
    return fmt(value, form)


def differences(root: Path | None = None, files: list[Path] | None = None) -> list[tuple[Marker, str]]:
    """(marker, the figure it should show) for every marked figure that differs from its kept output.

    ``root`` is the repository whose kept outputs the markers name (default: this one), ``files`` the
    pages (default: :func:`pages`).
    """
    cache: dict[str, Any] = {}
    out = []
    for path in files if files is not None else pages(root):
        for m in find_markers(path):
            want = render(m, root, cache)
            if m.text != want:
                out.append((m, want))
    return out


def update(root: Path | None = None, files: list[Path] | None = None) -> list[tuple[Marker, str]]:
    """Rewrite every marked figure from its kept output; returns what was changed."""
    changed = differences(root, files)
    by_path: dict[Path, list[tuple[Marker, str]]] = {}
    for m, want in changed:
        by_path.setdefault(m.path, []).append((m, want))
    for path, items in by_path.items():
        text = path.read_text()
        for m, want in sorted(items, key=lambda x: -x[0].start):  # from the end: offsets stay valid
            text = text[:m.start] + want + text[m.end:]
        path.write_text(text)
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only list the figures that differ; exit 1 if any")
    a = ap.parse_args(argv)
    try:
        changed = differences() if a.check else update()
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    verb = "differs" if a.check else "rewritten"
    for m, want in changed:
        print(f"{m.where()}: {m.attrs.get('row') or m.attrs.get('meta')}: {m.text!r} {verb}, kept output says {want!r}")
    if not changed:
        print("every marked figure matches its kept bench output")
    return 1 if a.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
