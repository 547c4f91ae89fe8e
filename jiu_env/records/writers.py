"""Writing the two text notations: :func:`to_competition` and :func:`to_jiuchess`, and the files of them
with every header (:func:`competition_file`, :func:`jiuchess_file`).

The writers sit below :class:`~jiu_env.records.GameRecord`, whose ``save``
writes ``.txt`` / ``.jiu`` files in competition notation and ``.csv`` files
in jiuchess CSV, with the headers ``jiu export`` writes (the rules among them:
the notations do not store the rules otherwise, and a 6x6 game read under the
default 14x14 rules would fail at its first placement); the readers (:mod:`.competition`, :mod:`.jiuchess`, which
describe the notations and re-export their writer) build ``GameRecord``s and
sit above it.  A writer reads a record through :class:`TextRecord`, the
fields and methods of a ``GameRecord`` it uses.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any, Protocol

import numpy as np

from .. import kernel as K

from .. import vocab as V
from ..vocab import opponent
from ..notation import COLS, ROWS, action_to_str
from ..rules import Rules
from .fields import COLOUR_NAMES, norm_start, result_of, result_text
from .replay import RecordLike, inside_turn, turn_entries, walk


class TextRecord(RecordLike, Protocol):
    """What the writers read of a record (a :class:`~jiu_env.records.GameRecord`)."""

    @property
    def start(self) -> dict[str, Any]: ...

    @property
    def players(self) -> dict[str, Any]: ...

    @property
    def result(self) -> dict[str, Any] | None: ...

    @property
    def meta(self) -> dict[str, Any]: ...

    def replay(self) -> np.ndarray: ...


# ------------------------------------------------------------------ headers
#: The columns of the first line of a jiuchess file with headers (the game line's cells, the moves last).
JIUCHESS_COLUMNS: tuple[str, ...] = ("event", "date", "white", "black", "result", "end_reason", "rules", "moves")


def rules_text(rules: Rules) -> str:
    """The profile and the options that differ from it: ``competitive board_size=6``."""
    base = Rules.make(rules.profile, board_size=rules.board_size)
    parts = [rules.profile]
    if rules.board_size != 14:
        parts.append(f"board_size={rules.board_size}")
    mine, theirs = rules.to_dict(), base.to_dict()
    for key, value in mine.items():
        if key not in ("profile", "board_size") and theirs.get(key) != value:
            parts.append(f"{key}={value}")
    return " ".join(parts)


def outcome_headers(record: TextRecord) -> dict[str, str]:
    """The headers the game itself gives: ``result`` (``white wins``, ``unfinished``...), ``end_reason`` and
    ``rules`` (:func:`rules_text`)."""
    res = record.result if record.result is not None else result_of(record.replay())
    return {"result": result_text(res).split(" (")[0],
            "end_reason": str(res.get("end_reason") or "") if res.get("over") else "",
            "rules": rules_text(record.rules)}


def record_headers(record: TextRecord) -> dict[str, str]:
    """Every header of :data:`JIUCHESS_COLUMNS` (the moves aside) from the record alone: its ``meta`` event
    (else the program that saved it, ``meta["source"]``) and date, its players, and :func:`outcome_headers`.
    What :meth:`GameRecord.save <jiu_env.records.GameRecord.save>` writes; ``jiu export`` makes its own
    (a tournament's title, the input file's date, ``NAME=SPEC`` players)."""
    meta = record.meta or {}
    players = record.players or {}
    out = {"event": str(meta.get("event") or meta.get("source") or ""), "date": str(meta.get("date") or "")}
    for side in ("white", "black"):
        out[side] = "" if players.get(side) is None else str(players[side])
    out.update(outcome_headers(record))
    return out


# ------------------------------------------------------------- competition notation
#: Marks a battle entry's path as a fly (``^A4-A5``): written before a fly whose two points are one or
#: two apart in a row or a column, which the plain path would read as a step or a jump.
FLY_MARK: str = "^"


def _pt_text(p, n, colour):
    t = ROWS[p // n] + COLS[p % n]
    return t.lower() if colour == V.WHITE else t.upper()


def near_fly(path: list[int], n: int) -> bool:
    """Is the fly ``path`` (two points) one a plain path reads otherwise: its points one or two apart
    in a row or a column (a step's or a jump's)?"""
    p, q = path
    return sorted((abs(p // n - q // n), abs(p % n - q % n))) in ([0, 1], [0, 2])


def _header_field(text):
    """A header field on one line: every line break (``\r`` too, which a reader with universal newlines
    splits at) becomes a space, and brackets become parentheses."""
    return " ".join(str(text if text is not None else "").replace("[", "(").replace("]", ")").splitlines())


def _whole_turns_from_placement(record: TextRecord, notation: str) -> np.ndarray:
    """The record's final state, once it is known to be writable in a turn notation: a game from the placement
    phase that ends between battle turns (ValueError naming the notation otherwise)."""
    if norm_start(record.start)["from"] != "placement":
        raise ValueError(f"the {notation} notation needs a game that starts with the placement phase")
    final = record.replay()
    left = inside_turn(final)
    if left is not None:
        raise ValueError(f"the {notation} notation writes whole battle turns, but this record ends inside one"
                         f" ({left}); play the turn to its end, or save the game as a JSON record")
    return final


def to_competition(record: TextRecord, event: str | None = None, date: str | None = None) -> str:
    """The record in competition notation (see ``docs/records.md``), with the six header fields of the
    notation (``[JIU][white][black][result][date][event]``; :func:`competition_file` adds the end reason
    and the rules).

    Only games that start with the placement phase can be written, and only
    whole battle turns: a record that ends inside a turn (a fly not landed, a
    jump chain that may go on, square captures still to choose) is refused
    with a ValueError.
    """
    meta = record.meta or {}
    return _competition(record, record.players or {}, date if date is not None else meta.get("date", ""),
                        event if event is not None else meta.get("event", ""), ())


def competition_file(record: TextRecord, headers: dict[str, Any] | None = None) -> str:
    """The record in competition notation with the eight header fields ``jiu export`` writes,
    ``[JIU][white][black][result][date][event][end reason][rules]``, from ``headers`` (the keys of
    :func:`record_headers`, which gives them when None).  The rules field lets a reader refuse the
    record under other rules, naming them, instead of failing at a placement."""
    h = record_headers(record) if headers is None else headers
    return _competition(record, {"white": h["white"] or None, "black": h["black"] or None}, h["date"], h["event"],
                        (h["end_reason"], h["rules"]))


def _competition(record: TextRecord, players: dict[str, Any], date: Any, event: Any, more: tuple[Any, ...]) -> str:
    """The notation with the header ``[JIU][white][black][result][date][event]`` and the fields ``more``."""
    final = _whole_turns_from_placement(record, "competition")
    n = record.rules.board_size
    placements, turns = turn_entries(record)
    res = record.result if record.result is not None else result_of(final)
    if res.get("over"):
        word = {"white": "white wins", "black": "black wins", "draw": "draw"}.get(res.get("winner") or "", "undecided")
    else:
        word = "*"
    head = "".join(f"[{_header_field(x)}]" for x in ("JIU", players.get("white"), players.get("black"), word,
                                                       date, event, *more))
    lines = [head]
    lines.append("0," + ",".join(_pt_text(p, n, c) for p, c in placements) + ";")
    if len(placements) == n * n:
        # entries 1 and 2: the diagonal-end stones taken off when the board is full
        for i, (p, c) in enumerate(placements[:2]):
            lines.append(f"{i + 1},{_pt_text(p, n, c)};")
        for i, t in enumerate(turns):
            c = t["colour"]
            path = "-".join(_pt_text(p, n, c) for p in t["path"])
            if t["fly"] and near_fly(t["path"], n):
                path = FLY_MARK + path  # a fly that the plain path would read as a step or a jump
            caps = "".join("," + _pt_text(p, n, opponent(c)) for p in t["jumped"] + t["victims"])
            lines.append(f"{i + 3},{path}{caps};")
    return "\n".join(lines)


# -------------------------------------------------------------------- jiuchess CSV
LETTERS = "ABCDEFGHIJKLMNOPQRST"
COLOUR_LETTER = {V.WHITE: "W", V.BLACK: "B"}


def point_text(p: int, n: int, colour: int | None = None) -> str:
    """``W(G,7)`` style text of point ``p`` (``O(G,7)`` when ``colour`` is None)."""
    prefix = "O" if colour is None else COLOUR_LETTER[colour]
    return f"{prefix}({LETTERS[p % n]},{p // n + 1})"


def _flies_read_as_steps(record: TextRecord) -> list[tuple[int, int, int, int]]:
    """``(action index of the LIFT, colour, from, to)`` of every fly to a neighbouring point where the
    step between the two points was also legal: the notation would read it back as that step."""
    n = record.rules.board_size
    p_ = n * n
    out = []
    steps: set[int] = set()  # where the lifted stone could have stepped

    def before(i, a, s):
        if s[V.H_PHASE] != V.PH_BATTLE:
            return
        sub = int(s[V.H_SUB])
        if sub == V.SUB_MOVE and V.action_kind(a, p_) == V.A_LIFT:
            p = V.action_point(a, p_)
            steps.clear()
            for d in range(4):
                q = int(V.landing(p, d, 1, n))
                if q >= 0 and K.is_legal(s, V.encode_step(p, d, p_)):
                    steps.add(q)
            out.append((i, int(s[V.H_TO_MOVE]), p, -1))
        elif sub == V.SUB_DROP:
            i0, c, p, _ = out.pop()
            if a in steps:
                out.append((i0, c, p, a))

    for _ in walk(record.initial_state(), record.actions, record.passes, check=False, before=before):
        pass
    return [x for x in out if x[3] >= 0]


def to_jiuchess(record: TextRecord) -> str:
    """The record as one jiuchess CSV line (the notation: :mod:`jiu_env.records.jiuchess`).

    Only games that start with the placement phase can be written, only
    whole battle turns (a record that ends inside a turn is refused), and only
    games without a fly to a neighbouring point where the step was also legal
    (the notation has no mark for a fly: it would read back as that step);
    ``ValueError`` names the first such move.
    """
    _whole_turns_from_placement(record, "jiuchess")
    n = record.rules.board_size
    bad = _flies_read_as_steps(record)
    if bad:
        i, c, p, q = bad[0]
        raise ValueError(
            f"the jiuchess notation cannot write action {i} ({action_to_str(record.actions[i], n)}"
            f" {action_to_str(q, n)}): {COLOUR_NAMES[c]} flies {point_text(p, n, c)} to the neighbouring point"
            f" {point_text(q, n)}, which the notation writes as {point_text(p, n, c)}-{point_text(q, n)} and"
            " reads back as a step (it has no mark for a fly); save the game as a JSON record or in"
            " competition notation, which marks such a fly")
    placements, turns = turn_entries(record)
    out = "Stage[1]:" + ";".join(point_text(p, n, c) for p, c in placements)
    if len(placements) == n * n:
        moves = []
        for t in turns:
            c = t["colour"]
            text = point_text(t["path"][0], n, c) + "".join("-" + point_text(p, n) for p in t["path"][1:])
            if t["jumped"]:
                text += ",TC:" + ",".join(point_text(p, n, opponent(c)) for p in t["jumped"])
            if t["victims"]:
                text += ",FC:" + ",".join(point_text(p, n, opponent(c)) for p in t["victims"])
            moves.append(text)
        out += ";Stage[2]:" + ";".join(moves)
    return out


#: ``Stage[`` with spaces anywhere in it: the jiuchess reader drops every space before it looks for ``Stage[1]:``.
_STAGE = re.compile(r"S\s*t\s*a\s*g\s*e\s*\[")


def clean_cell(value: Any) -> str:
    """A header cell on one line, with every ``Stage[`` (spaces in it too) made ``Stage(``: the reader
    finds the game by ``Stage[1]:`` after dropping every space, and a cell must not look like it."""
    text = " ".join(str(value if value is not None else "").split())  # one line
    return _STAGE.sub(lambda m: m.group(0)[:-1] + "(", text)


def jiuchess_file(record: TextRecord, headers: dict[str, Any] | None = None) -> str:
    """A jiuchess CSV file of the record: the column names of :data:`JIUCHESS_COLUMNS`, then the header
    cells (``headers``, the keys of :func:`record_headers`, which gives them when None) and the game line
    (:func:`to_jiuchess`, which says what it refuses).  Without the final newline."""
    h = record_headers(record) if headers is None else headers
    line = to_jiuchess(record)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(JIUCHESS_COLUMNS)
    w.writerow([clean_cell(h[c]) for c in JIUCHESS_COLUMNS[:-1]] + [line])
    return buf.getvalue().rstrip("\n")
