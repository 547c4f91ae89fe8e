"""A tournament's output folder: ``games.jsonl``, its lock, and resuming from the games stored there.

With an output folder each finished game is appended as one JSON line to
``games.jsonl`` (with its full :mod:`jiu_env.records` record); running the
same tournament again skips the games already there.  A stored game is reused
only if its players' specs and code versions, rules, seed and opening
setting are those of the current configuration (its fingerprint).  The folder
also holds ``tournament.json`` (the config of the games stored),
``games.stale.jsonl`` (the stored lines that could not be reused) and
``.lock`` (held by the run that writes the folder).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
from typing import IO, Any, Iterator

from ..fileio import JSONTooDeep, atomic_write_text, loads_json
from ..rules import Rules

GAMES_FILE: str = "games.jsonl"
LOCK_FILE: str = ".lock"  # held by the run that writes the directory (lock_out_dir)
CONFIG_FILE: str = "tournament.json"
STALE_FILE: str = "games.stale.jsonl"


def _scan_games(path):
    """``(line number, raw text, parsed line or None, why not)`` for every non-empty line of a ``games.jsonl``.

    ``why`` is ``"cut"`` for a last line cut short by an interrupted run (no
    line end, not valid JSON), else a description of what is wrong with the
    line (not JSON, JSON nested too deeply to read, not an object, no id).
    """
    with open(path, encoding="utf-8", errors="replace") as f:
        raw_lines = f.read().split("\n")
    last = len(raw_lines) - 1  # the text after the last line end ("" when the file ends with one)
    for i, raw in enumerate(raw_lines):
        if not raw.strip():
            continue
        try:
            obj = loads_json(raw, f"{path} line {i + 1}")
        except JSONTooDeep:
            yield i + 1, raw, None, "JSON nested too deeply to read"
            continue
        except json.JSONDecodeError:
            yield i + 1, raw, None, "cut" if i == last else "not valid JSON"
            continue
        if not isinstance(obj, dict):
            yield i + 1, raw, None, f"a JSON {type(obj).__name__}, not an object"
        elif not isinstance(obj.get("id"), str):
            yield i + 1, raw, None, "an object without a game id"
        else:
            yield i + 1, raw, obj, None


def read_games(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The result lines stored in a ``games.jsonl``.

    Lines that are not JSON objects with a game id (a cut-off last line, a
    damaged line) are skipped; :func:`run_tournament` names them.
    """
    if not os.path.exists(path):
        return []
    return [obj for _, _, obj, _ in _scan_games(path) if obj is not None]


# the fields of a result line that the summary reads
_LINE_KEYS = ("pair", "white", "black", "score_white", "battle_turns", "decisions", "time", "moves_by")


def _count(x):
    return type(x) is int and x >= 0


def _seconds(x):
    return type(x) in (int, float) and math.isfinite(x) and x >= 0


def _sides(d, ok):
    return isinstance(d, dict) and all(ok(d.get(side)) for side in ("white", "black"))


def _usable(line, task, any_version=False):
    """Is a stored line a finished game of ``task`` (same fingerprint, every field the summary needs, of the
    kinds it reads)?  A line damaged by hand or by a disk is replayed, not summed into the results.
    ``any_version``: the fingerprint is the task's with the players' code versions the line names."""
    if any_version:
        versions = (line.get("white_version", ""), line.get("black_version", ""))
        if not all(isinstance(v, str) for v in versions):
            return False
        task = dataclasses.replace(task, white_version=versions[0], black_version=versions[1])
    return (line.get("fingerprint") == task.fingerprint() and all(k in line for k in _LINE_KEYS)
            and line["white"] == task.white and line["black"] == task.black
            and line["pair"] == list(task.pair) and type(line["score_white"]) in (int, float)
            and line["score_white"] in (0.0, 0.5, 1.0)
            and _count(line["battle_turns"]) and _count(line["decisions"])
            and _sides(line["time"], _seconds) and _sides(line["moves_by"], _count)
            and type(line.get("truncated", False)) is bool)


def _load_stored(games_path, by_id, log, tidy=True, any_version=False):
    """The reusable stored games by id, and how many stored lines were not reused.

    Lines of games of this schedule that cannot be reused (another
    fingerprint, a repeated id) and unreadable lines are moved from
    ``games.jsonl`` to ``games.stale.jsonl``, so that ``games.jsonl`` holds one
    line per game id.  Lines of games outside this schedule stay.
    ``tidy=False`` reads only: nothing is moved or rewritten, so that a run
    still appending to the file (whose last line may be half written) is not
    disturbed.  ``any_version``: a game played by other code versions of its players counts (:func:`_usable`).
    """
    done, keep, move, stale = {}, [], [], 0
    for lineno, raw, obj, why in _scan_games(games_path):
        if obj is None:
            if why != "cut":
                moved = f" (moved to {STALE_FILE})" if tidy else ""
                log(f"{games_path} line {lineno} is {why}: skipped{moved}")
            move.append(raw)
            continue
        t = by_id.get(obj["id"])
        if t is None:
            stale += 1
            keep.append(raw)
        elif t.id not in done and _usable(obj, t, any_version):
            done[t.id] = obj
            keep.append(raw)
        else:
            stale += 1
            move.append(raw)
    if move and tidy:
        folder = os.path.dirname(games_path)
        with open(os.path.join(folder, STALE_FILE), "a", encoding="utf-8") as f:
            f.write("".join(r + "\n" for r in move))
        _write_atomic(games_path, "".join(r + "\n" for r in keep))
    return done, stale


# Replace a file by a text in one step (a kill leaves the old or the new file, never half of one):
# the package's one helper for it, under the name this module has always used.
_write_atomic = atomic_write_text


class TournamentMismatch(ValueError):
    """The output folder holds the games of a tournament with other game settings."""


# the settings that decide every game: stored games of other values are never reused
_GAME_SETTINGS = ("seed", "rules", "random_opening", "openings", "tc")


def _check_same_tournament(out_dir, config, log):
    """Raise :class:`TournamentMismatch` if ``out_dir`` holds games of another seed, rules, opening setting
    (random placements or opening suite) or time control."""
    path = os.path.join(out_dir, CONFIG_FILE)
    games = os.path.join(out_dir, GAMES_FILE)
    if not (os.path.isfile(path) and os.path.isfile(games) and os.path.getsize(games) > 0):
        return
    try:
        with open(path, encoding="utf-8") as f:
            old = json.load(f)
        if not isinstance(old, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        log(f"{path} cannot be read ({e}); the stored games are checked one by one")
        return
    new = config.to_dict()
    diffs = []
    for key in _GAME_SETTINGS:
        was, now = old.get(key), new.get(key)  # openings and tc are left out of configs without them
        if key == "openings":
            if _suite_key(was) != _suite_key(now):
                diffs.append(f"another opening suite, {_suite_text(was)} (this one: {_suite_text(now)})")
            continue
        if key == "rules":
            try:  # options added since the file was written take their defaults
                was = Rules.make(was).to_dict()
            except (TypeError, ValueError):
                pass
            if not isinstance(was, dict):
                diffs.append(f"rules {was!r}")
                continue
            diffs += [f"rules option {k} {was.get(k)!r} (this one: {now.get(k)!r})"
                      for k in sorted(set(was) | set(now)) if was.get(k) != now.get(k)]
        elif was != now:
            diffs.append(f"{key} {was!r} (this one: {now!r})")
    if diffs:
        raise TournamentMismatch(
            f"{out_dir} holds a tournament with {', '.join(diffs)}; use a new --out folder, "
            f"or --fresh (resume=False) to discard its games")


def _suite_key(suite):
    """What decides the games of an opening suite (config form): the openings' moves and starts, in order."""
    if not isinstance(suite, dict) or not isinstance(suite.get("openings"), list):
        return suite
    return [[o.get("moves"), o.get("start")] if isinstance(o, dict) else o for o in suite["openings"]]


def _suite_text(suite):
    if suite is None:
        return "no opening suite"
    if isinstance(suite, dict) and isinstance(suite.get("openings"), list):
        return f"{suite.get('source')} ({len(suite['openings'])} openings)"
    return repr(suite)


def _open_games_file(games_path: str) -> IO[str]:
    """``games.jsonl`` opened to append result lines; a line cut short by an interrupted run is ended first, so
    that it stays on its own line (and is skipped when read)."""
    cut = False
    if os.path.exists(games_path) and os.path.getsize(games_path) > 0:
        with open(games_path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            cut = f.read(1) != b"\n"
    fout = open(games_path, "a", encoding="utf-8")
    if cut:
        fout.write("\n")
    return fout


class OutDirInUse(RuntimeError):
    """Another run holds the lock of a tournament's output directory."""


@contextlib.contextmanager
def lock_out_dir(out_dir: str) -> Iterator[None]:
    """Hold an exclusive lock on ``out_dir/.lock`` (POSIX ``flock``; released when the run ends or dies).

    Where ``fcntl`` does not exist (Windows) the directory is not locked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(os.path.join(out_dir, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            raise OutDirInUse(f"{out_dir} is in use by another jiu eval run (pid {holder}); wait for it to end or "
                              "use another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the file releases the lock


__all__ = [
    "GAMES_FILE", "LOCK_FILE", "CONFIG_FILE", "STALE_FILE", "read_games", "TournamentMismatch", "OutDirInUse",
    "lock_out_dir",
]
