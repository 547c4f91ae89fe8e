"""Writing the two text notations: :func:`to_competition` and :func:`to_jiuchess`.

The writers sit below :class:`~jiu_env.records.GameRecord`, whose ``save``
writes ``.txt`` / ``.jiu`` files in competition notation and ``.csv`` files
as jiuchess lines; the readers (:mod:`.competition`, :mod:`.jiuchess`, which
describe the notations and re-export their writer) build ``GameRecord``s and
sit above it.  A writer reads a record through :class:`TextRecord`, the
fields and methods of a ``GameRecord`` it uses.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from .. import kernel as K

from .. import vocab as V
from ..vocab import opponent
from ..notation import COLS, ROWS, action_to_str
from .fields import COLOUR_NAMES, norm_start, result_of
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
    """The record in competition notation (see ``docs/records.md``).

    Only games that start with the placement phase can be written, and only
    whole battle turns: a record that ends inside a turn (a fly not landed, a
    jump chain that may go on, square captures still to choose) is refused
    with a ValueError.
    """
    final = _whole_turns_from_placement(record, "competition")
    n = record.rules.board_size
    placements, turns = turn_entries(record)
    res = record.result if record.result is not None else result_of(final)
    if res.get("over"):
        word = {"white": "white wins", "black": "black wins", "draw": "draw"}.get(res.get("winner") or "", "undecided")
    else:
        word = "*"
    meta = record.meta or {}
    players = record.players or {}
    head = "".join(f"[{_header_field(x)}]" for x in (
        "JIU", players.get("white"), players.get("black"), word,
        date if date is not None else meta.get("date", ""),
        event if event is not None else meta.get("event", ""),
    ))
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
