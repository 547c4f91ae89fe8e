"""The CSV notation of the jiuchess human-game data set: export and strict/lenient import.

One game per line::

    Stage[1]:W(G,7);B(H,8);W(A,1);...;Stage[2]:B(F,5)-O(F,6);W(H,5)-O(H,7),TC:B(H,6);...

* ``Stage[1]:`` lists the placements, ``W(L,r)`` for White (who places
  first) and ``B(L,r)`` for Black, separated by ``;``.  ``L`` is the column
  letter (``A`` is column 0 of this library), ``r`` the row number counted
  from 1 (row 1 is row ``a``, row 0, of this library).  So ``W(G,7)`` is White
  on ``g6`` and ``B(H,8)`` Black on ``h7``: the two diagonal ends of the centre
  square, the first two placements of every game.
* ``Stage[2]:`` lists the battle moves, separated by ``;``.  A move is the
  mover's stone ``B(L,r)`` / ``W(L,r)`` followed by every landing point
  ``-O(L,r)``; then ``,TC:`` and the stones removed by the jumps, then
  ``,FC:`` and the stones removed by the squares the move forms, each written
  in the victim's colour.  The diagonal-end stones are taken off without an
  entry, and Black moves first.
* A fly is written as a two-point move, as a step is: the notation has no mark
  for a fly, and it is kept as the jiuchess data set writes it (its own
  readers must still read it).  A move of two points that are neighbours in a
  row or a column reads back as a step when the step is legal, so
  :func:`to_jiuchess` refuses a game with a fly to a neighbouring point where
  the step was also legal (``ValueError`` naming the move).  A fly of two
  points in line over an enemy stone reads back as a fly: its ``TC:`` list is
  empty, a jump's is not.

Entry 0 of an import is ``Stage[1]`` (``item`` is the placement number,
counted from 1); entry ``k >= 1`` is the ``k``-th move of ``Stage[2]``.
"""

from __future__ import annotations

import csv
import functools
import re
from typing import Any

import numpy as np

from .. import vocab as V
from ..vocab import opponent
from ..state import position_state
from ..rules import Rules
from . import formats
from .errors import ChooseGame, Reader, RecordError, check_strict, game_number, record_text
from .fields import result_of
from .game_record import GameRecord
from .textimport import Move, check_header_rules, parse_placements, play_battle, play_placements, rebuild_position
from .writers import COLOUR_LETTER as COLOUR_LETTER, LETTERS as LETTERS, point_text as point_text
from .writers import JIUCHESS_COLUMNS, jiuchess_file
from .writers import to_jiuchess as to_jiuchess  # the writer sits below GameRecord (the readers build one)

_PT = r"[WB]\([A-Za-z],[0-9]+\)"
_PLACE = re.compile(r"([WB])\(([A-Za-z]),([0-9]+)\)")
_MOVE = re.compile(rf"(?P<path>{_PT}(?:-O\([A-Za-z],[0-9]+\))+)"
                   rf"(?:,TC:(?P<tc>{_PT}(?:,{_PT})*))?(?:,FC:(?P<fc>{_PT}(?:,{_PT})*))?")
_COORD = re.compile(r"([WBO])\(([A-Za-z]),([0-9]+)\)")
# row numbers are ASCII digits: int() would also read other scripts' digits ("\u0662" as 2)


def _coord(letter, row, n):
    """Point index of column letter / 1-based row; ValueError names the problem."""
    c = LETTERS.find(letter.upper())
    r = int(row)
    if c < 0 or c >= n:
        raise ValueError(f"column {letter!r} is not one of A..{LETTERS[n - 1]}")
    if not 1 <= r <= n:
        off = " (some records write it for a stone taken off the board)" if r == n + 1 else ""
        raise ValueError(f"row {r} is not one of 1..{n}{off}")
    return (r - 1) * n + c


# ------------------------------------------------------------------- import
def game_lines(text: str) -> list[str]:
    """The lines of ``text`` that hold a jiuchess game (contain ``Stage[1]:``, spaces aside, as the reader
    splits them)."""
    return [ln for ln in text.lstrip("\ufeff").splitlines() if "Stage[1]:" in "".join(ln.split())]


def header_cells(text: str, line: str) -> dict[str, str] | None:
    """The header cells of the game line ``line`` (column name -> cell, :data:`JIUCHESS_COLUMNS`) in a
    file whose first line is those column names (one ``jiu export`` or ``GameRecord.save`` wrote), else
    None (a file of the data set: its cells before ``Stage[1]:`` mean something else)."""
    first = next((ln for ln in text.lstrip("\ufeff").splitlines() if ln.strip()), "")
    if first.strip() != ",".join(JIUCHESS_COLUMNS):
        return None
    cells = next(csv.reader([line]), [])
    if len(cells) != len(JIUCHESS_COLUMNS):
        return None
    return dict(zip(JIUCHESS_COLUMNS, cells))


def from_jiuchess(text: str, rules: str | Rules | dict[str, Any] = "competitive", strict: bool = True,
                  game: int | str | None = None) -> GameRecord:
    """A :class:`GameRecord` from a jiuchess CSV line (or a file of them: ``game`` = 0-based line number).

    Strict and lenient as :func:`~jiu_env.records.from_competition`: strict
    raises :class:`RecordError` at the first irregularity, naming the entry
    (0 is ``Stage[1]``, ``k`` the ``k``-th move of ``Stage[2]``); lenient
    notes it in ``record.issues`` and goes on: an irregular placement list
    rebuilds the battle position, a move by the side not to move hands the
    turn over, square victims left out leave the capture pending, and the
    replay stops only at a move that cannot be played at all.
    """
    text = record_text(text)
    check_strict(strict)
    rules = Rules.make(rules)
    n = rules.board_size
    rd = Reader(rules, strict)
    fmt = lambda p, c: point_text(p, n, c)  # noqa: E731
    lines = game_lines(text)
    if not lines:
        raise RecordError("not a jiuchess record: no 'Stage[1]:' found")
    if game is None:
        if len(lines) != 1:
            raise ChooseGame(f"the text holds {len(lines)} games; choose one with game=<line number>", len(lines))
        game = 0
    number = game_number(game)
    if number is None or number >= len(lines):  # game_number refuses -1: not "the last game"
        raise RecordError(f"no game {game!r}: the text holds {len(lines)} games (0..{len(lines) - 1})")
    row = header_cells(text, lines[number])
    players: dict[str, Any] = {"white": None, "black": None}
    meta = {"source_format": "jiuchess"}
    if row is not None:  # the headers of a file written with them: the rules first (they name the board)
        check_header_rules(row["rules"], rules)
        players = {side: row[side] or None for side in ("white", "black")}
        meta.update({key: row[key] for key in ("event", "date") if row[key]})
    line = "".join(lines[number].split())
    head, body = line.split("Stage[1]:", 1)
    head = head.strip('",;')
    body = body.strip('"')
    if head:
        meta["head"] = head
    if "Stage[2]:" in body:
        s1, s2 = body.split("Stage[2]:", 1)
    else:
        s1, s2 = body, None

    # ---- Stage[1]: placements
    plist = parse_placements(rd, [t for t in s1.split(";") if t], functools.partial(_parse_place, n=n))
    state, actions, regular = play_placements(rd, plist, fmt)
    moves = [t for t in (s2 or "").split(";") if t]
    if regular and len(actions) < n * n and moves:
        rd.problem(f"Stage[1] has {len(actions)} stones but the {n}x{n} board needs {n * n} before the battle", 0)
        regular = False
    start = {"from": "placement"}
    if not regular:
        first = None
        if moves and moves[0][:1] in ("W", "B"):
            first = V.WHITE if moves[0][0] == "W" else V.BLACK
        start = rebuild_position(rd, plist, None, first, 1, fmt)
        state = position_state(rules, np.asarray(start["board"]), start["to_move"])
        actions = []

    # ---- Stage[2]: battle moves
    passes: list[int] = []
    items = [(k, functools.partial(_parse_move, rd, tok, k)) for k, tok in enumerate(moves, start=1)]
    play_battle(rd, state, items, actions, passes, fmt)
    rec = GameRecord(rules=rules, actions=actions, start=start, players=players, meta=meta, passes=passes)
    rec.result = result_of(rec.replay())
    rec.issues = rd.issues
    return rec


def _parse_place(tok, n):
    """``(point, colour)`` of a placement token like ``W(G,7)``; ValueError otherwise."""
    m = _PLACE.fullmatch(tok)
    if not m:
        raise ValueError(f"{tok!r} is not a placement like W(G,7) or B(H,8)")
    colour = V.WHITE if m.group(1) == "W" else V.BLACK
    return _coord(m.group(2), m.group(3), n), colour


def _parse_move(rd, tok, k):
    n = rd.n
    m = _MOVE.fullmatch(tok)
    if not m:
        raise RecordError(f"{tok!r} is not a move like B(F,5)-O(F,6)[,TC:W(..),..][,FC:W(..),..]", entry=k)
    path = []
    colour = None
    for pre, letter, row in _COORD.findall(m.group("path")):
        try:
            p = _coord(letter, row, n)
        except ValueError as e:
            raise RecordError(f"path {m.group('path')!r}: {e}", entry=k) from None
        if colour is None:
            colour = V.WHITE if pre == "W" else V.BLACK
        path.append(p)
    lists = []
    for key in ("tc", "fc"):
        pts = []
        for pre, letter, row in _COORD.findall(m.group(key) or ""):
            try:
                p = _coord(letter, row, n)
            except ValueError as e:
                rd.problem(f"{key.upper()} stone {pre}({letter},{row}): {e}; ignored", k)
                continue
            if pre != COLOUR_LETTER[opponent(colour)]:
                rd.problem(f"{key.upper()} stone {pre}({letter},{row}) should be written as"
                           f" {point_text(p, n, opponent(colour))}", k)
            pts.append(p)
        lists.append(pts)
    tc, fc = lists
    return Move(colour, path, tc + fc, m.group("path"), jumped_listed=len(tc))


formats.register(formats.RecordFormat(
    "jiuchess", priority=20, detect=lambda text, path: bool(game_lines(text)),
    games=lambda text: len(game_lines(text)),
    read=lambda text, game, rules, strict, path: from_jiuchess(text, rules=rules, strict=strict, game=game),
    write=jiuchess_file, extension=".csv", save_suffixes=(".csv",), multi_game=True, lenient=True))
