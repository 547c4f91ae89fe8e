"""jiu_env performance benchmark: one command, one table, absolute figures and ratios.

Run it as ``jiu bench`` (or ``python benchmarks/bench.py`` from a checkout)::

    jiu bench                            # full run (a few minutes)
    jiu bench --quick                    # short run (a fraction of a second per figure)
    jiu bench --only kernel,aec --out /tmp/bench

Sections (``--only``, comma-separated):

``kernel``   random full games in the numba kernel on one core (decisions/s)
``batched``  the batched runner (:mod:`jiu_env.batch`) on 1 thread and on all cores
``aec``      the PettingZoo AEC env through its full API, against a do-nothing AEC
             env with the same wrappers and spaces (the API's floor), PettingZoo
             ``go_v5`` (19x19), ``chess_v6`` and OpenSpiel ``checkers`` (each only
             if installed: ``pip install -e ".[bench]"`` in a checkout of the repository)
``vector``   the single-agent env and the vector env against random / greedy
``search``   alpha-beta nodes/s (the current defaults, and the first release's engine
             as a fixed peer) and MCTS simulations/s on fixed mid-game positions
``compile``  fresh interpreters: import + first ``reset()`` + first ``step()`` of
             the AEC env with a cold numba cache (empty ``NUMBA_CACHE_DIR``) and
             a warm one

Each rate is the best of a few repeats (the machine may be shared).  Results
are printed and written to ``OUT/results.json`` and ``OUT/RESULTS.md``
(``OUT`` defaults to ``runs/bench``: the kept figures under ``benchmarks/results``,
which the docs' figure markers read, are rewritten only when named with ``--out``).  ``main(argv)`` is the command
line; :func:`run_benchmarks` is the function API.

The package has one module per part: ``timing`` (the best-of-repeats rates,
the results table and its targets), one module per section (``kernel``,
``batched``, ``envs`` for ``aec`` and ``vector``, ``search``, ``compile``)
and ``report`` (the machine, the code and the Markdown page).  This module
holds the section registry and the command, and re-exports the names of the
parts, so that ``from jiu_env.benchmark import best_rate`` (and every other
name of the former single module) keeps working.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..fileio import atomic_write_text
from ..validate import check_int
from .batched import bench_batched
from .compile import bench_compile
from .envs import bench_aec, bench_vector, floor_env
from .kernel import bench_kernel, kernel_games, process_ceiling
from .report import _load, code_info, machine_info, to_markdown
from .search import FIRST_RELEASE_AB, bench_search, measure_search, midgame_positions, search_totals
from .timing import TARGETS, Rate, Table, best_rate

__all__ = [
    "SECTIONS", "GAMES_SECTIONS", "DEFAULT_GAMES", "TARGETS", "BENCHES", "run_benchmarks", "prepare_out",
    "add_arguments", "command_line", "run", "main",
    "Rate", "best_rate", "Table",
    "kernel_games", "process_ceiling", "bench_kernel", "bench_batched", "floor_env", "bench_aec", "bench_vector",
    "midgame_positions", "search_totals", "measure_search", "FIRST_RELEASE_AB", "bench_search", "bench_compile",
    "machine_info", "code_info", "to_markdown",
]

#: The sections, in the order they run (``--only`` picks among them).
SECTIONS = ("kernel", "batched", "aec", "vector", "search", "compile")

#: The sections that ``--games`` sets (the others have no games count: giving it for them alone is an error).
GAMES_SECTIONS = ("batched", "vector")

#: ``--games`` when not given.
DEFAULT_GAMES = 64

#: Section name -> the function that measures it into the table, given the run's settings.
BENCHES = {"kernel": bench_kernel, "batched": bench_batched, "aec": bench_aec, "vector": bench_vector,
           "search": bench_search, "compile": bench_compile}


def run_benchmarks(sections: Iterable[str] = SECTIONS, quick: bool = False, games: int = DEFAULT_GAMES,
                   echo: bool = True, note: str = "") -> dict[str, Any]:
    """Run the chosen sections; return the result dict (rows, machine, settings).

    Every argument is checked before the first section runs (a bad ``games``
    would otherwise fail in the batched section, after minutes of others).
    """
    if isinstance(sections, (str, bytes)):  # "kernel" would be read as the sections k, e, r, n, e, l
        raise TypeError(f"sections must be a list of section names ({', '.join(SECTIONS)}), not the str "
                        f"{sections!r}: write [{sections!r}]")
    sections = list(sections)
    games = check_int("games", games, 1)
    for name, flag in (("quick", quick), ("echo", echo)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be True or False, not {type(flag).__name__} {flag!r}")
    cfg = {"quick": quick, "time": 0.3 if quick else 3.0, "repeats": 1 if quick else 3, "games": games,
           "ab_depth": 2 if quick else 3, "mcts_sims": 200 if quick else 2000}
    unknown = sorted(map(str, set(sections) - set(SECTIONS)))
    if unknown:
        raise ValueError(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    t = Table(echo=echo)
    load0 = _load()
    for name in SECTIONS:
        if name in sections:
            if echo:
                print(f"[{name}]", flush=True)
            BENCHES[name](t, cfg)
    load1 = _load()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "run_benchmarks()",
        "machine": machine_info(),
        "code": code_info(),
        "settings": cfg,
        "load_start": None if load0 is None else round(load0, 2),
        "load_end": None if load1 is None else round(load1, 2),
        "note": note,
        "rows": t.rows,
        "skipped": t.notes,
    }


def _sections_arg(text):
    """``--only``: a comma-separated list of known sections (kept as the text given)."""
    names = [x.strip() for x in text.split(",") if x.strip()]
    unknown = [x for x in names if x not in SECTIONS]
    if unknown or not names:
        what = f"unknown section(s) {', '.join(unknown)}" if unknown else "no section given"
        raise argparse.ArgumentTypeError(f"{what}; choose from {', '.join(SECTIONS)}")
    return text


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, not {value}")
    return value


def prepare_out(path: str | os.PathLike[str]) -> Path:
    """Create the output folder and check that files can be written there (before anything is measured)."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise OSError(f"--out {path}: cannot write results there ({e.strerror or e})") from None
    return out


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The benchmark's options on an argparse parser (for ``jiu bench``)."""
    parser.add_argument("--quick", action="store_true", help="short run (a fraction of a second per figure)")
    parser.add_argument("--out", default=str(Path("runs") / "bench"),
                        help="folder for results.json and RESULTS.md (default runs/bench; the kept figures of "
                             "benchmarks/results are rewritten only when named here)")
    parser.add_argument("--only", default=",".join(SECTIONS), type=_sections_arg,
                        help=f"comma-separated sections to run (default all: {','.join(SECTIONS)})")
    parser.add_argument("--games", type=_positive_int, default=None,
                        help=f"games in the batched runner / vector env (default {DEFAULT_GAMES}; only the sections "
                             f"{' and '.join(GAMES_SECTIONS)} use it: with neither in --only it is an error)")
    parser.add_argument("--note", default="", help="a line for the Markdown report (machine load, ...)")
    return parser


def command_line(args: argparse.Namespace) -> str:
    """The ``jiu bench`` command line of ``args``: every flag given (a default left out), shell-quoted."""
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    words = ["jiu", "bench"] + (["--quick"] if args.quick else [])
    if set(sections) != set(SECTIONS):
        words += ["--only", args.only]
    if getattr(args, "games", None) is not None:
        words += ["--games", str(args.games)]
    if str(args.out) != str(Path("runs") / "bench"):
        words += ["--out", str(args.out)]
    if args.note:
        words += ["--note", args.note]
    return " ".join(shlex.quote(w) for w in words)


def run(args: argparse.Namespace, prog: str = "jiu bench") -> int:
    """Run from parsed arguments; write the files; return an exit code.

    ``--games`` given with none of :data:`GAMES_SECTIONS` in ``--only`` is an
    error (exit code 2, ``PROG: error: ...`` on stderr, nothing measured): it
    would be ignored.
    """
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    games = getattr(args, "games", None)
    if games is not None and not set(sections) & set(GAMES_SECTIONS):
        print(f"{prog}: error: --games {games} has no effect on the sections run ({', '.join(sections)}): "
              f"only {' and '.join(GAMES_SECTIONS)} play games (add one to --only, or leave --games out)",
              file=sys.stderr)
        return 2
    out = prepare_out(args.out)  # an unusable folder fails now, not after minutes of measuring
    result = run_benchmarks(sections, quick=args.quick, games=DEFAULT_GAMES if games is None else games,
                            note=args.note)
    result["command"] = command_line(args)
    atomic_write_text(out / "results.json", json.dumps(result, indent=2) + "\n", newline="\n")
    atomic_write_text(out / "RESULTS.md", to_markdown(result), newline="\n")
    print(f"wrote {out / 'results.json'} and {out / 'RESULTS.md'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point: ``jiu bench [--quick] [--out DIR] [--only ...]``."""
    parser = add_arguments(argparse.ArgumentParser(prog="bench", description=__doc__.split("\n\n")[0]))
    args = parser.parse_args(argv)
    try:
        return run(args, prog=parser.prog)
    except OSError as e:
        parser.error(str(e))

