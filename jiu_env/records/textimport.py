"""Import machinery shared by the text formats (competition notation, jiuchess CSV).

A text record is a placement list and a list of battle entries, each entry a
mover's colour, the path of the moving stone and the captured stones.  This
module turns them into kernel actions, strictly (the first irregularity raises
:class:`RecordError`) or leniently (irregularities are noted and the replay
goes on as far as the record allows).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import kernel as K

from .. import vocab as V
from ..vocab import opponent
from ..state import explain_illegal, position_state
from ..notation import COLS, ROWS, action_to_str
from ..options import rules_flags_for
from ..rules import Rules
from .errors import Irregularity, Reader, RecordError, RulesMismatch
from .fields import COLOUR_NAMES, result_of, result_text


PointText = Callable[[int, int], str]  # (point, colour) -> the point as the format writes it


def over_text(state: np.ndarray) -> str:
    """How a finished game ended, in record words, for the import errors that meet a game already over."""
    return result_text(result_of(state))


def check_header_rules(text: str, rules: Rules, entry: int = 0) -> None:
    """The rules field ``jiu export`` and ``GameRecord.save`` write (``competitive board_size=6``, the
    profile and the options that differ from it): a record written under other rules than the reader's
    is refused with :class:`RulesMismatch`, naming what differs (read under the wrong board size, its
    first placement would be reported as the error).  A field that does not read as rules (another
    program's header) is left alone."""
    from ..specs import parse_value

    words = text.split()
    if not words:
        return
    try:
        opts = {}
        for w in words[1:]:
            key, eq, val = w.partition("=")
            if not eq:
                return
            opts[key] = parse_value(val)
        named = Rules.make(words[0], **opts)
    except (TypeError, ValueError):
        return
    differ = [f"{k}={v!r} (read under {getattr(rules, k)!r})" for k, v in named.to_dict().items()
              if k != "profile" and getattr(rules, k) != v]
    if differ:
        declared = " ".join(words)
        raise RulesMismatch(f"the header says the game was played under [{text}]: {'; '.join(differ)}; read it "
                            f"under those rules (rules=...; on the command line: {rules_flags_for(declared)})",
                            declared=declared, differ=differ, entry=entry)


# --------------------------------------------------------------- placements
def parse_placements(rd: Reader, tokens: Sequence[str], parse: Callable[[str], tuple[int, int]]
                     ) -> list[tuple[int, int] | None]:
    """The placement list of entry 0: ``parse(token)`` for each token (items numbered from 1).

    A token that ``parse`` refuses with a ValueError raises :class:`RecordError`
    in strict mode; in lenient mode it is noted and kept as ``None`` (a gap
    that :func:`play_placements` skips).
    """
    plist: list[tuple[int, int] | None] = []
    for i, tok in enumerate(tokens, start=1):
        try:
            plist.append(parse(tok))
        except ValueError as e:
            if rd.strict:
                raise RecordError(str(e), entry=0, item=i) from None
            rd.note(f"{e}; skipped", 0, i)
            plist.append(None)
    return plist


def play_placements(rd: Reader, plist: Sequence[tuple[int, int] | None], fmt: PointText
                    ) -> tuple[np.ndarray, list[int], bool]:
    """Play the placement list ``plist`` (items ``(point, colour)`` or ``None`` for a bad token).

    Returns ``(state, actions, regular)``; ``regular`` is False once the list
    stops being a legal placement sequence (lenient mode only).
    """
    rules = rd.rules
    state = rules.new_state()
    actions = []
    regular = True
    prev = None
    for i, pc in enumerate(plist, start=1):
        if pc is None:
            regular = False
            continue
        p, c = pc
        if not regular:
            # the kernel replay has stopped: only flag what the rebuilt position cannot show
            if c == prev:
                rd.note(f"{fmt(p, c)}: {COLOUR_NAMES[c]} places twice in a row", 0, i)
            prev = c
            continue
        prev = c
        if state[V.H_PHASE] != V.PH_PLACEMENT:
            rd.problem(f"{fmt(p, c)}: the board is already full", 0, i)
            regular = False
        elif c != state[V.H_TO_MOVE]:
            who, want = COLOUR_NAMES[c], COLOUR_NAMES[int(state[V.H_TO_MOVE])]
            rd.problem(f"{fmt(p, c)} is a {who} stone but {want} is to place (same colour twice in a row)", 0, i)
            regular = False
        elif not K.is_legal(state, p):
            rd.problem(f"{fmt(p, c)}: {explain_illegal(state, p)}", 0, i)
            regular = False
        else:
            K.apply_action(state, p)
            actions.append(p)
    return state, actions, regular


def rebuild_position(rd: Reader, plist: Sequence[tuple[int, int] | None], removed: Sequence[int] | None,
                     first_colour: int | None, first_entry: int, fmt: PointText) -> dict[str, Any]:
    """Lenient import: the battle position built directly from the placement list.

    ``removed``: the points taken off before the battle (``None``: the diagonal
    ends, as the rules say); ``first_colour``: the colour of the first battle
    entry (or None), ``first_entry`` its index.
    """
    n = rd.n
    board = np.zeros(n * n, np.int64)
    for i, pc in enumerate(plist, start=1):
        if pc is None:
            continue
        p, c = pc
        if board[p] != 0:
            rd.note(f"{fmt(p, c)}: point placed twice; the later stone is kept", 0, i)
        board[p] = c
    empties = int(np.sum(board == 0))
    if empties:
        rd.note(f"{empties} points were never placed; they start empty", 0)
    for p in (K.diagonal_ends(n) if removed is None else removed):
        board[p] = 0
    to_move = "black"
    if first_colour == V.WHITE:
        to_move = "white"
        rd.note("the battle opens with a White move; White moves first", first_entry)
    rd.note("the battle position is rebuilt from the placement list", 0)
    try:
        position_state(rd.rules, board.reshape(n, n), to_move)
    except ValueError as e:
        raise RecordError(f"cannot rebuild a battle position from the placements: {e}", entry=0) from None
    return {"from": "position", "board": board.reshape(n, n).tolist(), "to_move": to_move}


# ------------------------------------------------------------------ battle
class Move:
    """One parsed battle entry: mover's colour, path points, captured points."""

    def __init__(self, colour: int, path: list[int], caps: list[int], text: str,
                 jumped_listed: int | None = None, fly: bool = False) -> None:
        self.colour = colour
        self.path = path
        self.caps = caps
        self.text = text  # the path as written, for messages
        self.jumped_listed = jumped_listed  # formats that list jump captures apart: how many
        self.fly = fly  # the entry is marked as a fly: no step or jump reading is tried


def play_battle(rd: Reader, state: np.ndarray, items: Sequence[tuple[int, Callable[[], Move]]], actions: list[int],
                passes: list[int], fmt: PointText) -> bool:
    """Play the battle entries on ``state`` (in place), extending ``actions`` and ``passes``.

    ``items`` is a list of ``(entry_no, parse)``; ``parse()`` returns a
    :class:`Move` or raises RecordError.  Strict: the first problem raises.
    Lenient: an out-of-turn entry hands the turn over, omitted square victims
    leave the capture pending, and an entry that cannot be played at all ends
    the replay there.  Returns False when the replay stopped before the end.
    """
    for k, (entry_no, parse) in enumerate(items):
        if state[V.H_PHASE] == V.PH_OVER:
            rd.problem(f"the game is already over ({over_text(state)}); {len(items) - k} entries are left", entry_no)
            return False
        try:
            mv = parse()
            npass, acts, notes = realise(rd, state, mv, entry_no, fmt)
        except RecordError as e:
            if rd.strict:
                raise
            rd.note(f"{e.reason}; the replay stops here ({len(items) - k} entries not played)", entry_no)
            return False
        for _ in range(npass):
            passes.append(len(actions))
            K.pass_turn(state)
        for a in acts:
            K.apply_action(state, a)
        actions.extend(acts)
        rd.issues.extend(notes)
    return True


def realise(rd: Reader, state: np.ndarray, mv: Move, entry_no: int, fmt: PointText
            ) -> tuple[int, list[int], list[Irregularity]]:
    """``(passes, actions, notes)`` that play the entry ``mv`` from ``state`` (not modified)."""
    notes = []
    s = state
    npass = 0
    if not rd.strict and int(s[V.H_SUB]) == V.SUB_CAPTURE:
        # the previous entry left square captures pending: its turn ends without them
        s = s.copy()
        K.pass_turn(s)
        npass += 1
        if s[V.H_PHASE] == V.PH_OVER:
            raise RecordError(f"the game ended ({over_text(s)}) when the turn with pending captures ended",
                              entry=entry_no)
    mover = int(s[V.H_TO_MOVE])
    if mv.colour != mover:
        first = fmt(mv.path[0], mv.colour)
        msg = f"path {mv.text!r}: {first} is a {COLOUR_NAMES[mv.colour]} point but {COLOUR_NAMES[mover]} is to move"
        if rd.strict or int(s[V.H_SUB]) != V.SUB_MOVE:
            raise RecordError(msg, entry=entry_no)
        t = s.copy()
        K.pass_turn(t)
        if t[V.H_PHASE] == V.PH_OVER:
            raise RecordError(f"{msg} (handing the turn over ends the game: {over_text(t)})", entry=entry_no)
        try:
            acts, more = _realise_move(rd, t, mv, entry_no, fmt)
        except RecordError as e:
            raise RecordError(f"{msg}; handed the turn, {e.reason}", entry=entry_no) from None
        notes.append(Irregularity(entry_no, f"{COLOUR_NAMES[mv.colour]} moves out of turn ({COLOUR_NAMES[mover]} was"
                                            f" to move); the turn is handed to {COLOUR_NAMES[mv.colour]}"))
        return npass + 1, acts, notes + more
    acts, more = _realise_move(rd, s, mv, entry_no, fmt)
    return npass, acts, notes + more


def _realise_move(rd, state, mv, entry_no, fmt):
    """Kernel actions of one entry by the side to move; the first reading that fits wins."""
    n = rd.n
    p_ = n * n
    mover = int(state[V.H_TO_MOVE])
    path = mv.path
    if len(path) < 2:
        raise RecordError(f"path {mv.text!r}: a move needs at least two points", entry=entry_no)
    if len(path) == 2 and path[0] == path[1]:
        raise RecordError(f"path {mv.text!r}: a stone cannot move to its own point", entry=entry_no)
    if state[V.HDR + path[0]] != mover:
        what = "an empty point" if state[V.HDR + path[0]] == V.EMPTY else f"a {COLOUR_NAMES[opponent(mover)]} stone"
        raise RecordError(f"path {mv.text!r}: {fmt(path[0], mover)} is {what}, not a {COLOUR_NAMES[mover]} stone",
                          entry=entry_no)
    # candidate ways to make the move: step, jump chain, fly (in that order); a marked fly is only a fly
    cands = []
    if mv.fly:
        if len(path) != 2:
            raise RecordError(f"path {mv.text!r}: a fly has two points, the stone's point and where it lands",
                              entry=entry_no)
        cands.append([V.encode_lift(path[0], p_), path[1]])
    elif len(path) == 2:
        a, b = path
        d = dir_between(a, b, n, 1)
        if d >= 0:
            cands.append([V.encode_step(a, d, p_)])
        d = dir_between(a, b, n, 2)
        if d >= 0:
            cands.append([V.encode_jump(a, d, p_)])
        cands.append([V.encode_lift(a, p_), b])
    else:
        seq = []
        for a, b in zip(path, path[1:]):
            d = dir_between(a, b, n, 2)
            if d < 0:
                raise RecordError(f"path {mv.text!r}: {fmt(a, mover)} to {fmt(b, mover)} is not a jump"
                                  " (a path of three or more points is a jump chain)", entry=entry_no)
            seq.append(V.encode_jump(a, d, p_))
        cands.append(seq)
    # (exact, short_ok): a reading that fits the entry exactly wins over one that needs tolerance,
    # whatever the candidate order (lenient imports only tolerate)
    tries = [(True, False)] if rd.strict else [(True, False), (False, False), (False, True)]
    errors = []
    for exact, short_ok in tries:
        for seq in cands:
            try:
                return _try_candidate(rd, state, seq, mv, entry_no, fmt, short_ok, exact)
            except RecordError as e:
                if exact == rd.strict and not short_ok:
                    errors.append(e)
    # report the failure of the first reading whose path could be played (else of the first reading)
    raise max(errors, key=lambda e: getattr(e, "depth", 0))


def dir_between(a: int, b: int, n: int, dist: int) -> int:
    """The direction (0..3) that leads from point ``a`` to ``b`` in ``dist`` steps, or -1."""
    dr = b // n - a // n
    dc = b % n - a % n
    for d in range(4):
        if dr == dist * int(V.DR[d]) and dc == dist * int(V.DC[d]):
            return d
    return -1


def _why_illegal(s, a, n):
    """A short reason why action ``a`` cannot be played in ``s`` (for import errors)."""
    if s[V.H_PHASE] == V.PH_BATTLE and s[V.H_SUB] == V.SUB_DROP and a < n * n:
        pt = ROWS[a // n] + COLS[a % n]
        what = "the flying stone's own point" if a == s[V.H_LIFT] else "occupied"
        return f"the fly cannot land on {pt}: it is {what}"
    return f"{action_to_str(a, n)} is illegal: {explain_illegal(s, a)}"


def _try_candidate(rd, state, seq, mv, entry_no, fmt, short_ok, exact=None):
    """The actions of one reading ``seq`` of the entry, with the capture list; RecordError if it does not fit.

    ``exact`` (default: ``rd.strict``): the capture lists must fit exactly; otherwise small capture-list
    problems are noted (lenient imports).  ``short_ok``: square victims may be left out.
    """
    exact = rd.strict if exact is None else exact
    n = rd.n
    p_ = n * n
    s = state.copy()
    mover = int(s[V.H_TO_MOVE])
    acts = []
    notes = []

    def fail(msg, depth):
        e = RecordError(msg, entry=entry_no)
        e.depth = depth
        raise e

    for a in seq:
        if s[V.H_PHASE] == V.PH_OVER:
            fail(f"the game ended ({over_text(s)}) before the path was complete", 0)
        if not K.is_legal(s, a):
            fail(_why_illegal(s, a, n), 0)
        K.apply_action(s, a)
        acts.append(a)
    jumped = []
    for a in seq:
        if V.is_jump_kind(V.action_kind(a, p_)):
            p, d = V.action_point(a, p_), V.jump_direction(V.action_kind(a, p_))
            jumped.append(int(V.landing(p, d, 1, n)))
    if s[V.H_PHASE] != V.PH_OVER and s[V.H_SUB] == V.SUB_CHAIN and int(s[V.H_TO_MOVE]) == mover:
        stop = V.stop_action(p_)
        if not K.is_legal(s, stop):
            fail("the jump chain may not stop here: " + explain_illegal(s, stop), 1)
        K.apply_action(s, stop)
        acts.append(stop)
    caps = list(mv.caps)
    if mv.jumped_listed is not None:
        # the format lists the jump captures apart from the square captures
        listed, rest = caps[:mv.jumped_listed], caps[mv.jumped_listed:]
        if listed != jumped:
            want = ",".join(fmt(p, opponent(mover)) for p in jumped) or "nothing"
            if exact:
                fail(f"the jump captures listed are not the stones jumped ({want})", 1)
            notes.append(Irregularity(entry_no, f"the jump captures listed are not the stones jumped ({want});"
                                                " the jumps are played"))
    else:
        rest = caps
        if jumped:
            if rest[:len(jumped)] == jumped:
                rest = rest[len(jumped):]
            elif exact:
                want = ",".join(fmt(p, opponent(mover)) for p in jumped)
                fail(f"the captured list must start with the jumped stones {want}", 1)
            else:
                rest = [p for p in rest if p not in jumped]
                notes.append(Irregularity(entry_no, "the jumped stones are not listed first among the captures"))
    for j, v in enumerate(rest):
        if s[V.H_PHASE] == V.PH_OVER:
            fail(f"the game ended ({over_text(s)}) but {len(rest) - j} more captures are listed", 1)
        if int(s[V.H_TO_MOVE]) != mover or s[V.H_SUB] != V.SUB_CAPTURE:
            fail(f"{len(rest) - j} captures listed but the move makes {j} square capture(s)", 1)
        if not K.is_legal(s, v):
            fail(f"capture {fmt(v, opponent(mover))}: there is no {COLOUR_NAMES[opponent(mover)]} stone on that point", 1)
        K.apply_action(s, v)
        acts.append(v)
    if s[V.H_PHASE] != V.PH_OVER and int(s[V.H_TO_MOVE]) == mover:
        pend = int(s[V.H_PENDING])
        if not short_ok:
            fail(f"the move forms squares and {pend} more capture(s) are due", 1)
        notes.append(Irregularity(entry_no, f"the move forms squares and {pend} more capture(s) are due but the record"
                                            " names no more victims; the captures stay pending and the turn ends"
                                            " with the next entry"))
    return acts, notes
