"""The vocabulary of the game, defined once: colours, phases, actions, header fields, names.

Every other module (the numba kernel, the bots, the envs, notation, records,
symmetries) takes its constants and name tables from here, so that a new
header field, action kind or end reason is added in one place.  The values
are plain module-level ints and tuples, which numba compiles as constants; the
small ``@njit`` helpers encode and decode actions in numba code and in Python
alike.

Those helpers (:func:`num_actions`, :func:`opponent`, :func:`point_row`,
:func:`landing`, :func:`square_corner`, the ``encode_*`` / ``action_*``
words, ...) are **unchecked kernel helpers**: they are compiled into the
kernel's inner loops and trust their arguments to be ints in range (a colour
WHITE / BLACK, a point of the board, a direction 0..3, a board size
``MIN_N..MAX_N``).  Anything else gives a wrong number, or (an index such as
a direction far out of range) reads outside memory and can crash the
process; they never raise.  Python code that holds values from outside
checks them first (:func:`jiu_env.validate.check_action_value`,
:func:`jiu_env.notation.check_board_size`, :func:`colour_name`), or uses the
checked functions of :mod:`jiu_env.notation` and :mod:`jiu_env.symmetry`.

Actions (``docs/actions.md``): on an N x N board with P = N * N points the
flat action space has ``10 * P + 1`` actions, laid out in blocks of P::

    [0, P)            POINT  place / drop / capture at point p      -> p
    [P, 5P)           STEP   from p in direction d (0 up, 1 right,   -> (1 + d) * P + p
                             2 down, 3 left)
    [5P, 9P)          JUMP   from p over an enemy stone in d         -> (5 + d) * P + p
    [9P, 10P)         LIFT   pick up the stone at p to fly it        -> 9 * P + p
    10P               STOP   end a jump chain

A game state is a 1-D ``np.int64`` array: ``HDR`` header fields (below), the
board (``P`` values, EMPTY / WHITE / BLACK), then a ring of turn-start
position hashes of ``state[H_CAP]`` entries.
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
from numba import njit

from .options import DEFAULT_HISTORY as DEFAULT_HISTORY, RULE_OPTION, RULE_OPTIONS

# ------------------------------------------------------------------ colours
EMPTY, WHITE, BLACK = 0, 1, 2
DRAW = 3  # value of H_WINNER for a drawn game
COLOUR_NAMES = ("empty", "white", "black")
#: Names of the values of ``H_WINNER`` (0: no winner, the game is on or was truncated).
WINNER_NAMES = ("none", "white", "black", "draw")

# ------------------------------------------------------------------- phases
PH_PLACEMENT, PH_BATTLE, PH_OVER = 0, 1, 2
PHASE_NAMES = ("placement", "battle", "over")
SUB_MOVE, SUB_CHAIN, SUB_DROP, SUB_CAPTURE = 0, 1, 2, 3
SUBPHASE_NAMES = ("move", "chain", "drop", "capture")

# -------------------------------------------------------------- end reasons
END_FEW_STONES, END_NO_MOVE, END_REPETITION, END_TURN_LIMIT = 1, 2, 3, 4
#: Names of the values of ``H_END_REASON``; index 0 ("none") while the game is on.
END_REASON_NAMES = ("none", "too_few_stones", "no_move", "repetition", "turn_limit")

# ------------------------------------------------ values of the choice options
# A str option is kept in the header as the index of its value in the option's ``choices``
# (jiu_env/options.py); the kernel compares with these indices.
#: single_jump_ban (docs/rules.md §4).
BAN_NAMES = RULE_OPTION["single_jump_ban"].choices
BAN_NONE, BAN_VS_FLYER, BAN_FLYER, BAN_BOTH = (BAN_NAMES.index(v) for v in ("none", "vs_flyer", "flyer", "both"))
#: flyer_moves: a flying-eligible side keeps its steps and jumps, or may only fly.
FLYER_MOVES_NAMES = RULE_OPTION["flyer_moves"].choices
FLYER_ALL, FLYER_FLY_ONLY = (FLYER_MOVES_NAMES.index(v) for v in ("all", "fly_only"))
#: min_stones_check: too few stones after every decision, or only when a turn is complete.
MIN_CHECK_NAMES = RULE_OPTION["min_stones_check"].choices
MIN_CHECK_DECISION, MIN_CHECK_TURN_END = (MIN_CHECK_NAMES.index(v) for v in ("decision", "turn_end"))
#: formations: stones captured for each full board line (row or column) of the mover's
#: colour through the moved stone's final point (the traditional 枪 "spear").
LINE_CAPTURES = 2

# --------------------------------------------------------------- board sizes
#: The range of ``board_size`` (its row in jiu_env/options.py).
_board_size = RULE_OPTION["board_size"]
assert isinstance(_board_size.hi, int)
MIN_N = _board_size.lo
MAX_N = _board_size.hi
MAX_P = MAX_N * MAX_N

# --------------------------------------------------------------- directions
#: Direction d: 0 up, 1 right, 2 down, 3 left (row, column offsets).
DR = np.array([-1, 0, 1, 0], dtype=np.int64)
DC = np.array([0, 1, 0, -1], dtype=np.int64)
DIRECTION_NAMES = ("up", "right", "down", "left")

# ------------------------------------------------------------- action kinds
#: Action kinds: the block index ``a // P`` of an action, with STOP as kind 10.
A_POINT, A_STEP, A_JUMP, A_LIFT, A_STOP = 0, 1, 5, 9, 10
ACTION_KIND_NAMES = ("POINT", "STEP", "STEP", "STEP", "STEP", "JUMP", "JUMP", "JUMP", "JUMP", "LIFT", "STOP")


@njit(cache=True)
def num_actions(n: int) -> int:
    """Size of the flat action space for an n x n board: 10 * n * n + 1.  Unchecked (see the module doc)."""
    return A_STOP * n * n + 1


@njit(cache=True, inline="always")
def encode_step(p: Point, d: int, p_: int) -> Action:
    """The STEP of the stone at point ``p`` in direction ``d`` on a board of ``p_`` points."""
    return (A_STEP + d) * p_ + p


@njit(cache=True, inline="always")
def encode_jump(p: Point, d: int, p_: int) -> Action:
    """The JUMP of the stone at point ``p`` over an enemy stone in direction ``d``."""
    return (A_JUMP + d) * p_ + p


@njit(cache=True, inline="always")
def encode_lift(p: Point, p_: int) -> Action:
    """The LIFT of the stone at point ``p`` (a flying move's first decision)."""
    return A_LIFT * p_ + p


@njit(cache=True, inline="always")
def stop_action(p_: int) -> Action:
    """The STOP action (end a jump chain) on a board of ``p_`` points."""
    return A_STOP * p_


@njit(cache=True, inline="always")
def action_kind(a: Action, p_: int) -> int:
    """Block of action ``a``: A_POINT, A_STEP + d (1..4), A_JUMP + d (5..8), A_LIFT or A_STOP."""
    return a // p_


@njit(cache=True, inline="always")
def action_point(a: Action, p_: int) -> Point:
    """The point an action names (the moving stone for STEP / JUMP / LIFT; 0 for STOP)."""
    return a % p_


@njit(cache=True, inline="always")
def is_step_kind(kind: int) -> bool:
    """Is ``kind`` (an :func:`action_kind`) one of the four STEP blocks?"""
    return A_STEP <= kind < A_JUMP


@njit(cache=True, inline="always")
def is_jump_kind(kind: int) -> bool:
    """Is ``kind`` (an :func:`action_kind`) one of the four JUMP blocks?"""
    return A_JUMP <= kind < A_LIFT


@njit(cache=True, inline="always")
def step_direction(kind: int) -> int:
    """The direction (0 up .. 3 left) of a STEP action of block ``kind``."""
    return kind - A_STEP


@njit(cache=True, inline="always")
def jump_direction(kind: int) -> int:
    """The direction (0 up .. 3 left) of a JUMP action of block ``kind``."""
    return kind - A_JUMP


@njit(cache=True, inline="always")
def opposite(d: int) -> int:
    """The direction opposite ``d`` (up <-> down, right <-> left)."""
    return (d + 2) % 4


# ------------------------------------------------------- colours and points
# The words the rules are written in.  Each is a one-line @njit helper inlined into the
# numba code that calls it (no call cost in the kernel's loops) and an ordinary function
# for Python callers, so that the arithmetic is written once: ``3 - c``, ``p // n``,
# the bounds test of a landing point and the 2x2 windows were spelled out in a dozen places.

#: A colour: WHITE (1) or BLACK (2); EMPTY (0) on a board point.  Plain ints, so that numba
#: compiles them as such; the aliases say in signatures what an int means.
Colour: TypeAlias = int
#: A point of an N x N board: ``row * N + col``, 0 .. N * N - 1 (row 0 at the top); -1 for "none".
Point: TypeAlias = int
#: A flat action, 0 .. 10 * N * N (see the table at the top of this module).
Action: TypeAlias = int


@njit(cache=True, inline="always")
def opponent(c: Colour) -> Colour:
    """The other colour: BLACK for WHITE and WHITE for BLACK.  Unchecked: ``c`` must be WHITE or BLACK."""
    return WHITE + BLACK - c


@njit(cache=True, inline="always")
def point_row(p: Point, n: int) -> int:
    """Row of point ``p`` on an ``n`` x ``n`` board (0 at the top).  Unchecked (see the module doc)."""
    return p // n


@njit(cache=True, inline="always")
def point_col(p: Point, n: int) -> int:
    """Column of point ``p`` on an ``n`` x ``n`` board (0 at the left).  Unchecked (see the module doc)."""
    return p % n


@njit(cache=True, inline="always")
def point_at(r: int, c: int, n: int) -> Point:
    """The point at row ``r``, column ``c``, or -1 where (r, c) is off the ``n`` x ``n`` board."""
    if r < 0 or r >= n or c < 0 or c >= n:
        return -1
    return r * n + c


@njit(cache=True, inline="always")
def landing(p: Point, d: int, dist: int, n: int) -> Point:
    """Where a stone on ``p`` lands going ``dist`` points in direction ``d``, or -1 off the board.

    ``dist`` 1 is a step (the neighbour in direction d), 2 a jump's landing point
    (the jumped point is ``landing(p, d, 1, n)``).

    Unchecked kernel helper: ``p`` must be a point of the board and ``d`` a
    direction 0..3 (``DR[d]`` is read without a bounds check: a ``d`` far out
    of range reads outside memory), ``dist`` small; else the result is
    meaningless (see the module doc).
    """
    return point_at(p // n + dist * DR[d], p % n + dist * DC[d], n)


@njit(cache=True, inline="always")
def square_corner(p: Point, k: int, n: int) -> Point:
    """Top-left point of the ``k``-th (0..3) 2x2 window of the board that contains ``p``, or -1.

    The windows are the squares that a stone on ``p`` can complete: k = 0 has ``p`` as
    its bottom-right corner, 1 bottom-left, 2 top-right, 3 top-left; a window that
    would leave the board is -1.  The window's points are ``a, a + 1, a + n, a + n + 1``.

    Unchecked kernel helper: ``p`` must be a point of the board and ``k`` in
    0..3; else the result is meaningless (see the module doc).
    """
    r = p // n + k // 2 - 1
    c = p % n + k % 2 - 1
    if r < 0 or c < 0 or r >= n - 1 or c >= n - 1:
        return -1
    return r * n + c


# ------------------------------------------------------------ header fields
# Rules options, written once when a state is created: their slots are declared in the table of
# jiu_env/options.py (RULE_OPTIONS), which says how each is kept.  Slots 0..8, 13 and 36..39.
H_N = RULE_OPTION["board_size"].slot  # board size N
H_FLY = RULE_OPTION["fly_threshold"].slot  # fly_threshold (0 disables flying)
H_BAN = RULE_OPTION["single_jump_ban"].slot  # single_jump_ban (BAN_*)
H_MIN = RULE_OPTION["min_stones"].slot  # min_stones (0 disables)
H_CHAIN_STOP = RULE_OPTION["chain_may_stop"].slot  # chain_may_stop (0/1)
H_REP = RULE_OPTION["repetition_draw"].slot  # repetition_draw (0 disables)
H_MAXT = RULE_OPTION["max_battle_turns"].slot  # max_battle_turns (0 disables)
H_CAP = RULE_OPTION["history_size"].slot  # capacity of the hash history ring (from history_size)
H_FLYER_MOVES = RULE_OPTION["flyer_moves"].slot  # flyer_moves (FLYER_*)
H_MIN_CHECK = RULE_OPTION["min_stones_check"].slot  # min_stones_check (MIN_CHECK_*)
H_SQ_RETURN = RULE_OPTION["square_on_return"].slot  # square_on_return (0/1)
H_FORMATIONS = RULE_OPTION["formations"].slot  # formations (0/1): full-line captures of the traditional rule text
# ban_after_capture (0/1), docs/rules.md §10.6: slot 13 was the unused H_COUNT + EMPTY, so the layout
# (HDR, the board's offset) is unchanged and states made before the option read it as off (0).
# Never write s[H_COUNT + v] for an empty point v.
H_BAN_AFTER = RULE_OPTION["ban_after_capture"].slot
# Game status.
H_P = 1  # number of points P = N * N
H_PHASE = 9  # PH_*
H_SUB = 10  # SUB_* (battle phase only)
H_TO_MOVE = 11  # colour that must decide next
H_PLACED = 12  # placements made so far
H_COUNT = 13  # stone count of colour c is state[H_COUNT + c], c in (WHITE, BLACK); slot 13 (H_COUNT + EMPTY) is H_BAN_AFTER
H_CHAIN = 16  # point of the chaining stone in SUB_CHAIN, else -1
H_CHAIN_LEN = 17  # jumps made by the chaining stone this turn
H_LIFT = 18  # point of the lifted stone in SUB_DROP, else -1
H_PENDING = 19  # square captures still to choose in SUB_CAPTURE
H_ORIGIN = 20  # point of the moving stone before this turn's move, else -1
H_FLY_NOW = 21  # mover is flying-eligible this turn (0/1)
H_BAN_NOW = 22  # single-jump ban applies to the mover this turn (0/1)
H_TURNS = 23  # battle turns completed
H_WINNER = 24  # 0 while undecided, WHITE, BLACK or DRAW
H_TRUNC = 25  # 1 when stopped by max_battle_turns
H_HASH = 26  # Zobrist hash of board + side to move
H_HLEN = 27  # turn-start hashes pushed since the battle began
H_HIRR = 28  # history index of the first turn start after the last capture
H_CAPTURED = 29  # a stone was captured during the current turn (0/1)
H_LAST_ACTION = 30  # last action applied, -1 if none
H_DECISIONS = 31  # actions applied since the game started
H_REP_COUNT = 32  # occurrences of the current turn-start position
H_LAST_FROM = 33  # origin of the last completed move, -1 if none
H_LAST_TO = 34  # final point of the last completed move, -1 if none
H_END_REASON = 35  # END_* once the game is over, else 0

#: The game-status fields (everything in the header but the rules options).
STATUS_FIELDS = (H_P, H_PHASE, H_SUB, H_TO_MOVE, H_PLACED, H_COUNT + WHITE, H_COUNT + BLACK, H_CHAIN, H_CHAIN_LEN,
                 H_LIFT, H_PENDING, H_ORIGIN, H_FLY_NOW, H_BAN_NOW, H_TURNS, H_WINNER, H_TRUNC, H_HASH, H_HLEN, H_HIRR,
                 H_CAPTURED, H_LAST_ACTION, H_DECISIONS, H_REP_COUNT, H_LAST_FROM, H_LAST_TO, H_END_REASON)
_taken = sorted(set(STATUS_FIELDS) & {o.slot for o in RULE_OPTIONS})
if _taken:  # pragma: no cover - a bad row in the table
    raise ValueError(f"rules options in jiu_env/options.py use header slots of the game status: {_taken}")
#: Header length: every slot 0..39 is in use; an option added to the table takes slot 40 and grows it.
HDR = 1 + max(STATUS_FIELDS + tuple(o.slot for o in RULE_OPTIONS))

#: Header fields that hold the rules options of play (written once by ``new_state``): two states
#: are under the same rules of play when these agree.  A learned network or a kept search tree
#: belongs to one rule set, and checks a state against it with these.  Every option but
#: ``history_size``, which sets how much of the game is remembered (H_CAP), not how it is played.
RULE_FIELDS = tuple(o.slot for o in RULE_OPTIONS if o.name != "history_size")

#: Header fields that hold a point (or -1): what a board symmetry must map.
POINT_FIELDS = (H_CHAIN, H_LIFT, H_ORIGIN, H_LAST_FROM, H_LAST_TO)

#: The decision key.  With the board and the side to move (both in the
#: Zobrist hash ``H_HASH``) these fields identify a decision point: which
#: phase, which sub-decision of the turn, and the turn's stone and progress.
#: The search's transposition key, its tree reuse and any scratch copy of a
#: state derive from this one tuple.
TURN_FIELDS = (H_SUB, H_CHAIN, H_LIFT, H_PENDING, H_CHAIN_LEN, H_ORIGIN)
DECISION_FIELDS = (H_PHASE, H_TO_MOVE) + TURN_FIELDS
#: Offsets and odd multipliers that mix the TURN_FIELDS into a hash (one per field).
TURN_FIELD_OFFSETS = (0, 2, 2, 1, 1, 2)
TURN_FIELD_MIX = (0x1F3D5B79A1C3E5F7, 0x2545F4914F6CDD1D, 0x5851F42D4C957F2D, 0x14057B7EF767814F,
                  -0x61C8864680B583EB, 0x27BB2EE687B0B0FD)
PLACEMENT_MIX = 0x6A09E667F3BCC909

# ------------------------------------------------------- observation planes
#: The egocentric observation planes (``docs/observation.md``), in channel order.
PLANE_NAMES = (
    "own", "enemy", "empty", "placement", "move", "chain", "drop", "capture",
    "chaining_stone", "lifted_stone", "pending", "own_flying", "enemy_flying",
    "jump_ban", "is_white", "to_move", "last_from", "last_to", "centre_ends",
    "turn_progress", "repetition",
)
NUM_PLANES = len(PLANE_NAMES)
(PL_OWN, PL_ENEMY, PL_EMPTY, PL_PLACEMENT, PL_MOVE, PL_CHAIN, PL_DROP, PL_CAPTURE, PL_CHAINING_STONE,
 PL_LIFTED_STONE, PL_PENDING, PL_OWN_FLYING, PL_ENEMY_FLYING, PL_JUMP_BAN, PL_IS_WHITE, PL_TO_MOVE,
 PL_LAST_FROM, PL_LAST_TO, PL_CENTRE_ENDS, PL_TURN_PROGRESS, PL_REPETITION) = range(NUM_PLANES)
#: The sub-phase planes start here: plane ``PL_MOVE + SUB_*`` is on in that sub-phase.
assert (PL_MOVE, PL_CHAIN, PL_DROP, PL_CAPTURE) == tuple(PL_MOVE + x for x in range(4))

#: DEFAULT_HISTORY (from jiu_env/options.py): the hash ring size when max_battle_turns is 0 and no
#: history_size is given.


def check_colour(value: object, what: str = "colour") -> int:
    """``value`` as WHITE or BLACK: the one colour check (:class:`~jiu_env.outcome.Outcome`, symmetry, names).

    TypeError for a name (``"white"``: :func:`colour_of` turns it into its
    constant), ValueError for anything else that is not WHITE or BLACK (a
    bool, a float, another int); numpy integers are taken.
    """
    if isinstance(value, str):
        raise TypeError(f"{what} is the colour constant WHITE ({WHITE}) or BLACK ({BLACK}), not the name {value!r}"
                        " (jiu_env.vocab.colour_of turns a name into its constant)")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value not in (WHITE, BLACK):
        raise ValueError(f"{what} must be WHITE ({WHITE}) or BLACK ({BLACK}), not {value!r}")
    return int(value)


def colour_name(c: int) -> str:
    """``"white"`` or ``"black"`` for WHITE / BLACK (ints, numpy integers included), checked by :func:`check_colour`."""
    return COLOUR_NAMES[check_colour(c, "colour")]


def colour_of(name: str) -> int:
    """WHITE / BLACK for ``"white"`` / ``"black"``."""
    try:
        return COLOUR_NAMES.index(name, 1)
    except ValueError:
        raise ValueError(f"not a colour name: {name!r} (expected 'white' or 'black')") from None


# (RULE_OPTION, RULE_OPTIONS: the table's names, imported from jiu_env.options to derive the constants above.)
__all__ = [k for k in list(globals()) if (k.isupper() or k.startswith(("encode_", "action_", "is_", "colour_")))
           and k not in ("RULE_OPTION", "RULE_OPTIONS")] + ["num_actions", "stop_action", "step_direction",
                                                            "jump_direction", "opposite", "opponent", "point_row", "point_col",
                                                            "point_at", "landing", "square_corner", "Colour",
                                                            "Point", "Action"]
