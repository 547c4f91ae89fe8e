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

A match result (``jiu eval``'s ``results.json`` in a kept tournament
folder) is marked the same way, with ``match`` for ``bench``::

    it scores <!-- match file=baselines/x/results.json player=az figure=score -->76.9%<!-- /match -->

``file``    the tournament's ``results.json``, relative to the repository root
``player``  the player's name in that tournament
``figure``  ``games``  games played (``188``); ``wdl``  wins-draws-losses (``144-1-43``);
            ``score``  one decimal (``76.9%``); ``interval``  the score's 95% interval,
            a normal approximation over the games' scores (``70.9 .. 82.9``);
            ``white`` / ``black``  W-D-L with that colour; ``elo``  signed (``+103``);
            ``elo_ci``  the Elo interval's half-width (``29``)

Pages scanned: README.md, docs/*.md, benchmarks/*.md and the README.md files
under baselines/.  To refresh the figures: run ``jiu bench`` with ``--out``
the kept folder (the sections the docs quote), or resume the tournament,
read what changed, then run this script and commit both.
"""

from __future__ import annotations

import argparse
import json
import math
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
MATCH_ATTRS = ("file", "player", "figure")
MATCH_FIGURES = ("games", "wdl", "score", "interval", "white", "black", "elo", "elo_ci")
KINDS = ("bench", "match")

MARKER = re.compile(r"<!--\s*(?P<kind>bench|match)\b(?P<attrs>(?:(?!-->).)*?)-->(?P<text>(?:(?!<!--).)*?)"
                    r"<!--\s*/(?P=kind)\s*-->", re.S)
OPEN = re.compile(r"<!--\s*(?P<kind>bench|match)\b")


def pages(root: Path | None = None) -> list[Path]:
    """The Markdown pages whose figures are generated."""
    root = ROOT if root is None else root
    return [root / "README.md", *sorted((root / "docs").glob("*.md")), *sorted((root / "benchmarks").glob("*.md")),
            *sorted((root / "baselines").rglob("README.md"))]


@dataclass
class Marker:
    """One marked figure: where it is, what it says now and what it should say."""

    path: Path
    line: int
    attrs: dict[str, str]
    text: str
    start: int
    end: int
    kind: str = "bench"

    def where(self) -> str:
        return f"{_rel(self.path)}:{self.line}"


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def parse_attrs(raw: str, where: str, kind: str = "bench") -> dict[str, str]:
    """``key=value`` pairs of a marker; unknown keys, a missing ``row``/``meta`` or a bad format raise ValueError."""
    try:
        words = shlex.split(raw)
    except ValueError as e:
        raise ValueError(f"{where}: {kind} marker {raw.strip()!r}: {e}") from None
    known = ATTRS if kind == "bench" else MATCH_ATTRS
    attrs: dict[str, str] = {}
    for w in words:
        key, eq, value = w.partition("=")
        if not eq or key not in known:
            raise ValueError(f"{where}: {kind} marker attribute {w!r}: expected KEY=VALUE with KEY one of "
                             f"{', '.join(known)}")
        attrs[key] = value
    if kind == "match":
        missing = [k for k in MATCH_ATTRS if k not in attrs]
        if missing:
            raise ValueError(f"{where}: a match marker names {', '.join(MATCH_ATTRS)}; missing: {', '.join(missing)}")
        if attrs["figure"] not in MATCH_FIGURES:
            raise ValueError(f"{where}: unknown figure {attrs['figure']!r}; choose from {', '.join(MATCH_FIGURES)}")
        return attrs
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
    """Every bench and match marker of a page; an opening comment without its closing one raises ValueError."""
    text = path.read_text() if text is None else text
    out = []
    covered = set()
    for m in MARKER.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        where = f"{_rel(path)}:{line}"
        kind = m.group("kind")
        out.append(Marker(path, line, parse_attrs(m.group("attrs"), where, kind), m.group("text"),
                          m.start("text"), m.end("text"), kind))
        covered.add(m.start())
    for m in OPEN.finditer(text):
        if m.start() not in covered:
            line = text.count("\n", 0, m.start()) + 1
            kind = m.group("kind")
            raise ValueError(f"{_rel(path)}:{line}: {kind} marker without its closing <!-- /{kind} --> "
                             "(or with another comment inside)")
    return out


def load_results(file: str, root: Path | None = None, cache: dict[str, Any] | None = None,
                 kind: str = "bench") -> dict[str, Any]:
    """A kept ``results.json`` of ``jiu bench`` or (``kind="match"``) ``jiu eval`` (read once per run with ``cache``)."""
    root = ROOT if root is None else root
    if cache is not None and file in cache:
        return cache[file]
    path = root / file
    what = "bench output" if kind == "bench" else "tournament result"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"kept {what} {file} does not exist") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"kept {what} {file} is not JSON ({e})") from None
    key, cmd = ("rows", "jiu bench") if kind == "bench" else ("players", "jiu eval")
    if not isinstance(data, dict) or not isinstance(data.get(key), (list if kind == "bench" else dict)):
        raise ValueError(f"{file} is not the output of {cmd} (no {key!r} {'list' if kind == 'bench' else 'table'})")
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


def _wdl(record: dict[str, Any]) -> str:
    return f"{record['wins']}-{record['draws']}-{record['losses']}"


def score_interval(wins: int, draws: int, losses: int, z: float = 1.96) -> tuple[float, float, float]:
    """``(score, low, high)``: the mean game score and its interval, ``score +- z * sd / sqrt(n)``.

    ``sd`` is the standard deviation of the games' scores (1, 1/2, 0) over
    the ``n`` games; the normal approximation every match figure of the docs
    uses (``z=1.96``: 95%).
    """
    n = wins + draws + losses
    if n == 0:
        raise ValueError("no games: a score needs at least one")
    p = (wins + 0.5 * draws) / n
    var = (wins + 0.25 * draws) / n - p * p
    h = z * math.sqrt(max(var, 0.0) / n)
    return p, p - h, p + h


def render_match(marker: Marker, root: Path | None = None, cache: dict[str, Any] | None = None) -> str:
    """What a match marker's figure should say, from the tournament's kept ``results.json``."""
    a = marker.attrs
    try:
        data = load_results(a["file"], root, cache, kind="match")
    except ValueError as e:
        raise ValueError(f"{marker.where()}: {e}") from None
    rec = data["players"].get(a["player"])
    if not isinstance(rec, dict):
        raise ValueError(f"{marker.where()}: {a['file']} has no player {a['player']!r} "
                         f"(players: {', '.join(map(repr, data['players']))})")
    figure = a["figure"]
    if figure == "games":
        return f"{rec['games']:,}"
    if figure == "wdl":
        return _wdl(rec)
    if figure in ("white", "black"):
        return _wdl(rec[f"as_{figure}"])
    if figure in ("score", "interval"):
        p, lo, hi = score_interval(rec["wins"], rec["draws"], rec["losses"])
        return f"{100 * p:.1f}%" if figure == "score" else f"{100 * lo:.1f} .. {100 * hi:.1f}"
    rating = ((data.get("elo") or {}).get("ratings") or {}).get(a["player"])
    if rating is None:
        raise ValueError(f"{marker.where()}: {a['file']} has no Elo rating of {a['player']!r}")
    if figure == "elo":
        return f"{rating['elo']:+.0f}"
    return f"{(rating['upper'] - rating['lower']) / 2:.0f}"


def render(marker: Marker, root: Path | None = None, cache: dict[str, Any] | None = None) -> str:
    """What the marked figure should say, from its kept output."""
    if marker.kind == "match":
        return render_match(marker, root, cache)
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
    cache: dict[str, Any] = {}  # keyed by file: a bench output and a tournament result never share one
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
        label = m.attrs.get("row") or m.attrs.get("meta") or f"{m.attrs.get('player')} {m.attrs.get('figure')}"
        print(f"{m.where()}: {label}: {m.text!r} {verb}, kept output says {want!r}")
    if not changed:
        print("every marked figure matches its kept output")
    return 1 if a.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
