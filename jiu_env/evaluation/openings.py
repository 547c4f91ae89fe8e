"""Opening suites for tournaments: read, check and name the positions games start from.

An opening is a list of actions played from the start of a game (a
placement prefix), or from a start position of the battle phase (a record
that starts from a position), before the players decide.  A suite is a list
of openings, read from:

* a text file of one opening per line, in the move notation of
  :mod:`jiu_env.notation` separated by spaces (``d3 e4 c2 f5``); ``#``
  starts a comment, and a comment ``# board_size: N`` says which board the
  suite is for (another board size is then refused);
* a JSON file: one record, or a list whose entries are move lists (``["d3",
  "e4"]`` or a string ``"d3 e4"``), records, or ``{"name", "moves",
  "start"}`` objects;
* JSON lines (a ``games.jsonl`` of ``jiu eval``, or one record per line);
* a jiuchess CSV file (one opening per game line) or a record in competition
  notation, read by :mod:`jiu_env.records`;
* the name of a suite shipped with the package (:data:`SHIPPED`: ``jiu14``,
  ``jiu8``).

The opening of a record is its start and its first ``meta["opening_plies"]``
actions when the record says so (games of a tournament with openings), else
its first ``meta["random_opening"]`` actions when that is above 0, at most the
placement phase (games of a tournament with ``random_opening``), else all its actions; a game that is over
after its opening is refused.

A suite that cannot be read raises :class:`SuiteError` naming the file and the
line or entry; an opening that is illegal under the tournament's rules (or
written for another board size) raises :class:`IllegalOpening` naming the
opening.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import kernel as K

from .. import vocab as V
from ..fileio import FileTooLarge, JSONTooDeep, loads_json, read_text_limited
from ..notation import action_to_str, str_to_action
from ..rules import Rules

#: The suites shipped in ``jiu_env/data/openings/``, by the name ``--openings`` takes.
SHIPPED: dict[str, str] = {"jiu14": "jiu14.txt", "jiu8": "jiu8.txt"}
MAX_OPENINGS: int = 100_000
MAX_SUITE_BYTES: int = 64 << 20
_BOARD_SIZE = re.compile(r"^#\s*board_size\s*[:=]\s*(\S+)\s*$", re.I)
# lines of a competition record: its header, or a numbered entry "12,..."
_COMPETITION_LINE = re.compile(r"^\s*(\[|\d+\s*,)")
_COMPETITION_HEADER = re.compile(r"^\[[^\]\[\"{}]*\]")


class SuiteError(ValueError):
    """An opening suite that cannot be read: the message names the file and the line or entry."""


class IllegalOpening(ValueError):
    """An opening that cannot be played under the tournament's rules: the message names the opening."""


@dataclass(frozen=True)
class Opening:
    """One opening: ``actions`` played from ``start`` (``None``: a new game; else a record's position start)."""

    name: str
    actions: tuple[int, ...]
    start: dict[str, Any] | None = None
    where: str = ""  # where it was read ("FILE line 7"), for messages

    def label(self) -> str:
        return f"opening {self.name}" + (f" ({self.where})" if self.where else "")

    def to_dict(self, board_size: int) -> dict[str, Any]:
        """``{"name", "moves"}`` (moves in notation) and ``start`` for a position start: the form configs,
        ``tournament.json`` and ``games.jsonl`` hold."""
        d: dict[str, Any] = {"name": self.name, "moves": [action_to_str(a, board_size) for a in self.actions]}
        if self.start is not None:
            d["start"] = self.start
        return d

    def state(self, rules: Rules) -> np.ndarray:
        """The kernel state after the opening under ``rules``; :class:`IllegalOpening` names any problem."""
        n = rules.board_size
        if self.start is None:
            s = rules.new_state()
        else:
            from ..state import position_state

            try:
                s = position_state(rules, np.asarray(self.start["board"]), self.start.get("to_move", "black"))
            except ValueError as e:
                raise IllegalOpening(f"{self.label()}: its start position does not fit {n}x{n} "
                                     f"{rules.profile} rules: {e}") from None
        for i, a in enumerate(self.actions):
            if not 0 <= a < rules.num_actions:
                raise IllegalOpening(f"{self.label()}: move {i + 1} (action {a}) is off a {n}x{n} board")
            if not K.is_legal(s, a):
                raise IllegalOpening(f"{self.label()}: move {i + 1} {action_to_str(a, n)!r} is illegal under "
                                     f"{rules.profile} rules on {n}x{n}")
            K.apply_action_unchecked(s, a)
        if s[V.H_PHASE] == V.PH_OVER:
            raise IllegalOpening(f"{self.label()}: the game is over after it ({len(self.actions)} moves): "
                                 "an opening must leave a game to play")
        return s


@dataclass
class Suite:
    """A checked suite: where it came from (a shipped name, a file, ``config``) and its openings."""

    source: str
    openings: list[Opening]

    def to_config(self, board_size: int) -> dict[str, Any]:
        """``{"source", "board_size", "openings"}``: the form a tournament's config holds (and reads back)."""
        return {"source": self.source, "board_size": board_size,
                "openings": [o.to_dict(board_size) for o in self.openings]}


def shipped_path(name: str) -> str:
    """The file of a shipped suite (inside the installed package)."""
    from importlib.resources import files

    return str(files("jiu_env").joinpath("data", "openings", SHIPPED[name]))


def load_suite(source: Any, rules: str | Rules | dict[str, Any] = "competitive") -> Suite:
    """Read and check an opening suite for ``rules``.

    ``source``: a shipped suite's name, a file path, a list of openings (each
    a move list, a notation string, a record dict or an opening dict), or the
    ``{"source", "board_size", "openings"}`` dict of :meth:`Suite.to_config` (as a config
    written by a tournament holds it).  Every opening is played through under
    ``rules``: :class:`IllegalOpening` names the first that cannot be.
    """
    r = Rules.make(rules)
    n = r.board_size
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if isinstance(source, str):
        if not source.strip():
            raise SuiteError("an opening suite is a file or the name of a shipped suite "
                             f"({', '.join(SHIPPED)}), not an empty string")
        if source in SHIPPED and not os.path.exists(source):
            name, path = source, shipped_path(source)
        else:
            name, path = os.path.splitext(os.path.basename(source))[0] or source, source
        openings, declared = _read_file(path, name, r)
        label = source
    elif isinstance(source, dict) and "openings" in source:
        label = str(source.get("source") or "config")
        entries, declared = _suite_table(source, label, n)
        openings = _read_entries(entries, "config", "openings", r)
    elif isinstance(source, (list, tuple)):
        label = "config"
        openings, declared = _read_entries(source, "config", "openings", r), None
    else:
        raise SuiteError(f"openings must be a file, the name of a shipped suite ({', '.join(SHIPPED)}) or a list "
                         f"of openings, not {type(source).__name__}")
    if not openings:
        raise SuiteError(f"the opening suite {label} holds no openings")
    if len(openings) > MAX_OPENINGS:
        raise SuiteError(f"the opening suite {label} holds {len(openings):,} openings; at most {MAX_OPENINGS:,}")
    if declared is not None and declared != n:
        raise IllegalOpening(f"{openings[0].label()}: the suite {label} is for {declared}x{declared} boards "
                             f"(its '# board_size' line); this tournament plays {n}x{n}")
    for o in openings:
        o.state(r)
    return Suite(source=label, openings=openings)


# ------------------------------------------------------------------ readers
def _suite_table(table: dict[str, Any], label: str, n: int) -> tuple[Any, int | None]:
    """The openings of a ``{"source", "board_size", "openings"}`` table and its board size, checked (a config's
    value and a JSON file alike): other keys are refused, and so is a board size other than ``n``."""
    extra = sorted(map(str, set(table) - {"source", "board_size", "openings"}))
    if extra:
        raise SuiteError(f"the opening suite {label}: a suite table has 'openings' (and 'source', 'board_size'), "
                         f"not {', '.join(extra)}")
    declared = table.get("board_size")
    if declared is not None and (isinstance(declared, bool) or not isinstance(declared, int)):
        raise SuiteError(f"the opening suite {label}: board_size is an int, not {declared!r}")
    if declared is not None and declared != n:
        raise IllegalOpening(f"the opening suite {label} is for {declared}x{declared} boards; this tournament "
                             f"plays {n}x{n}")
    return table["openings"], declared


def _read_file(path: str, name: str, rules: Rules) -> tuple[list[Opening], int | None]:
    try:
        text = read_text_limited(path, MAX_SUITE_BYTES, "opening suite").lstrip("\ufeff")
    except FileTooLarge as e:
        raise SuiteError(str(e)) from None
    except UnicodeDecodeError as e:
        raise SuiteError(f"{path} is not UTF-8 text ({e})") from None
    except OSError as e:
        raise SuiteError(f"opening suite {path}: {e.strerror or e}") from None
    stripped = text.lstrip()
    if path.lower().endswith(".jsonl") or (stripped.startswith("{") and "\n{" in stripped.rstrip()):
        return _read_jsonl(text, path, name, rules), None
    if stripped.startswith(("{", "[")):
        try:
            data = loads_json(text, path)
        except (json.JSONDecodeError, JSONTooDeep) as e:
            if _COMPETITION_HEADER.match(stripped):  # "[JIU][...]": the header of a competition record
                return _read_competition(text, path, name, rules), None
            raise SuiteError(f"{path} is not valid JSON: {e}") from None
        if isinstance(data, dict) and "openings" in data and "format" not in data:
            table, declared = _suite_table(data, path, rules.board_size)
            entries = table if isinstance(table, list) else [table]
            return _read_entries(entries, path, name, rules, one=not isinstance(table, list)), declared
        entries = data if isinstance(data, list) else [data]
        return _read_entries(entries, path, name, rules, one=not isinstance(data, list)), None
    from ..records.jiuchess import game_lines

    lines = text.splitlines()
    body = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if game_lines(text):
        return _read_jiuchess(text, path, name, rules), None
    if body and any(_COMPETITION_LINE.match(ln) for ln in body):
        return _read_competition(text, path, name, rules), None
    return _read_notation(lines, path, name, rules)


def _read_notation(lines: list[str], path: str, name: str, rules: Rules) -> tuple[list[Opening], int | None]:
    n = rules.board_size
    declared = None
    out: list[Opening] = []
    for i, raw in enumerate(lines, start=1):
        text = raw.strip()
        if text.startswith("#"):
            m = _BOARD_SIZE.match(text)
            if m:
                try:
                    declared = int(m.group(1))
                except ValueError:
                    raise SuiteError(f"{path} line {i}: board_size {m.group(1)!r} is not an integer") from None
            continue
        text = text.split("#", 1)[0].strip()
        if not text:
            continue
        size = declared or n
        acts = []
        for tok in text.split():
            try:
                acts.append(str_to_action(tok, size))
            except ValueError as e:
                if declared is None or declared == n:
                    raise SuiteError(f"{path} line {i}: {e}") from None
                raise IllegalOpening(f"opening {name}#{len(out) + 1} ({path} line {i}): the suite is for "
                                     f"{declared}x{declared} boards; this tournament plays {n}x{n}") from None
        out.append(Opening(f"{name}#{len(out) + 1}", tuple(acts), None, f"{path} line {i}"))
    return out, declared


def _read_jsonl(text: str, path: str, name: str, rules: Rules) -> list[Opening]:
    out: list[Opening] = []
    for i, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path} line {i}"
        try:
            d = loads_json(raw, where)
        except (json.JSONDecodeError, JSONTooDeep) as e:
            raise SuiteError(f"{where} is not valid JSON: {e}") from None
        out.append(_entry(d, where, f"{name}#{len(out) + 1}", rules))
    return out


def _read_entries(entries: Any, path: str, name: str, rules: Rules, one: bool = False) -> list[Opening]:
    if not isinstance(entries, (list, tuple)):
        raise SuiteError(f"{path}: the openings are a list, not {type(entries).__name__}")
    out = []
    for i, d in enumerate(entries, start=1):
        where = path if one else f"{path} entry {i}"
        out.append(_entry(d, where, f"{name}#{i}", rules))
    return out


def _read_jiuchess(text: str, path: str, name: str, rules: Rules) -> list[Opening]:
    from ..records import RecordError, from_jiuchess
    from ..records.jiuchess import game_lines

    out = []
    for i in range(len(game_lines(text))):
        where = f"{path} game line {i + 1}"
        try:
            rec = from_jiuchess(text, rules=rules, strict=True, game=i)
        except RecordError as e:
            raise SuiteError(f"{where}: {e}") from None
        out.append(_from_record(rec, where, f"{name}#{i + 1}", rules))
    return out


def _read_competition(text: str, path: str, name: str, rules: Rules) -> list[Opening]:
    from ..records import RecordError, from_competition

    try:
        rec = from_competition(text, rules=rules, strict=True)
    except RecordError as e:
        raise SuiteError(f"{path} (competition notation): {e}") from None
    return [_from_record(rec, path, f"{name}#1", rules)]


def _entry(d: Any, where: str, default_name: str, rules: Rules) -> Opening:
    """One opening from a JSON value: a notation string, a move list, a record, a games.jsonl line or an
    ``{"name", "moves", "start"}`` object."""
    n = rules.board_size
    if isinstance(d, str):
        return Opening(default_name, _moves(d.split(), where, n), None, where)
    if isinstance(d, list):
        return Opening(default_name, _moves(d, where, n), None, where)
    if not isinstance(d, dict):
        raise SuiteError(f"{where}: an opening is a move list, a notation string, a record or "
                         f"{{\"name\", \"moves\", \"start\"}}, not {type(d).__name__}")
    if isinstance(d.get("opening"), dict) and "record" in d:  # a games.jsonl line of a tournament with openings
        return _entry(d["opening"], where, default_name, rules)
    if "record" in d and isinstance(d["record"], dict):  # a games.jsonl line
        d = d["record"]
    if "format" in d:
        from ..records import GameRecord, RecordError

        try:
            rec = GameRecord.from_dict(d, check=False)
        except RecordError as e:
            raise SuiteError(f"{where}: {e}") from None
        return _from_record(rec, where, default_name, rules)
    extra = sorted(set(d) - {"name", "moves", "start", "index"})  # index: a games.jsonl line's opening
    if extra or "moves" not in d:
        raise SuiteError(f"{where}: an opening object has 'moves' (and optionally 'name', 'start'), "
                         f"not {', '.join(sorted(d)) or 'nothing'}")
    nm = d.get("name", default_name)
    if not isinstance(nm, str) or not nm.strip():
        raise SuiteError(f"{where}: an opening's name is a non-empty string, not {nm!r}")
    moves = d["moves"]
    if isinstance(moves, str):
        moves = moves.split()
    start = d.get("start")
    if start is not None:
        from ..records import RecordError
        from ..records.game_record import norm_start

        try:
            start = norm_start(start)
        except RecordError as e:
            raise SuiteError(f"{where}: {e}") from None
        if start["from"] == "placement":
            start = None
        elif len(start["board"]) != n:
            size = len(start["board"])
            raise IllegalOpening(f"opening {nm} ({where}) starts from a {size}x{size} position; this tournament "
                                 f"plays {n}x{n}")
    return Opening(nm, _moves(moves, where, n), start, where)


def _moves(items: Any, where: str, n: int) -> tuple[int, ...]:
    if not isinstance(items, (list, tuple)):
        raise SuiteError(f"{where}: 'moves' is a list of moves, not {type(items).__name__}")
    out = []
    for k, m in enumerate(items, start=1):
        if isinstance(m, str):
            try:
                out.append(str_to_action(m, n))
            except ValueError as e:
                raise SuiteError(f"{where}: move {k}: {e}") from None
        elif isinstance(m, (int, np.integer)) and not isinstance(m, bool):
            out.append(int(m))
        else:
            raise SuiteError(f"{where}: move {k} is a notation string or an action number, not {m!r}")
    return tuple(out)


def _from_record(rec: Any, where: str, default_name: str, rules: Rules) -> Opening:
    """The opening of a record: its start and its first ``opening_plies`` / ``random_opening`` actions
    (as its meta says), else all its actions."""
    from ..records.game_record import norm_start

    n = rules.board_size
    if rec.rules.board_size != n:
        m = rec.rules.board_size
        raise IllegalOpening(f"opening {default_name} ({where}) is a {m}x{m} record; this tournament plays {n}x{n}")
    if rec.passes:
        raise SuiteError(f"{where}: an irregular record (turns handed over without a move) is no opening")
    meta = rec.meta if isinstance(rec.meta, dict) else {}
    k = len(rec.actions)
    for key in ("opening_plies", "random_opening"):
        v = meta.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            k = min(v, k)
            if key == "random_opening":  # random placements: a K above the placement phase's length drew them all
                s = rec.initial_state()
                placed = 0
                while placed < k and s[V.H_PHASE] == V.PH_PLACEMENT:
                    K.apply_action(s, int(rec.actions[placed]))
                    placed += 1
                k = placed
            break
    start = norm_start(rec.start)
    named = meta.get("opening")
    name = named if isinstance(named, str) and named else default_name
    return Opening(name, tuple(int(a) for a in rec.actions[:k]), None if start["from"] == "placement" else start,
                   where)


__all__ = ["Opening", "Suite", "SuiteError", "IllegalOpening", "SHIPPED", "load_suite", "shipped_path"]
