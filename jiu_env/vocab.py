"""The vocabulary of the game, defined once: colours, phases, actions, header fields, names.

Every other module (the numba kernel, the bots, the envs, notation, records,
symmetries) takes its constants and name tables from here, so that a new
header field, action kind or end reason is added in one place.  The values
are plain module-level ints and tuples, which numba compiles as constants; the
small ``@njit`` helpers encode and decode actions in numba code and in Python
alike.

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

import numpy as np
from numba import njit

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

# ----------------------------------------------------- single-jump ban modes
BAN_NONE, BAN_VS_FLYER, BAN_FLYER, BAN_BOTH = 0, 1, 2, 3
BAN_NAMES = ("none", "vs_flyer", "flyer", "both")

# ------------------------------------------- options of other engines (docs/rules.md §9)
#: flyer_moves: a flying-eligible side keeps its steps and jumps, or may only fly.
FLYER_ALL, FLYER_FLY_ONLY = 0, 1
FLYER_MOVES_NAMES = ("all", "fly_only")
#: min_stones_check: too few stones after every decision, or only when a turn is complete.
MIN_CHECK_DECISION, MIN_CHECK_TURN_END = 0, 1
MIN_CHECK_NAMES = ("decision", "turn_end")
#: formations: stones captured for each full board line (row or column) of the mover's
#: colour through the moved stone's final point (the traditional 枪 "spear").
LINE_CAPTURES = 2

# --------------------------------------------------------------- board sizes
MIN_N = 4
MAX_N = 20
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
def num_actions(n):
    """Size of the flat action space for an n x n board: 10 * n * n + 1."""
    return A_STOP * n * n + 1


@njit(cache=True, inline="always")
def encode_step(p, d, p_):
    """The STEP of the stone at point ``p`` in direction ``d`` on a board of ``p_`` points."""
    return (A_STEP + d) * p_ + p


@njit(cache=True, inline="always")
def encode_jump(p, d, p_):
    """The JUMP of the stone at point ``p`` over an enemy stone in direction ``d``."""
    return (A_JUMP + d) * p_ + p


@njit(cache=True, inline="always")
def encode_lift(p, p_):
    """The LIFT of the stone at point ``p`` (a flying move's first decision)."""
    return A_LIFT * p_ + p


@njit(cache=True, inline="always")
def stop_action(p_):
    """The STOP action (end a jump chain) on a board of ``p_`` points."""
    return A_STOP * p_


@njit(cache=True, inline="always")
def action_kind(a, p_):
    """Block of action ``a``: A_POINT, A_STEP + d (1..4), A_JUMP + d (5..8), A_LIFT or A_STOP."""
    return a // p_


@njit(cache=True, inline="always")
def action_point(a, p_):
    """The point an action names (the moving stone for STEP / JUMP / LIFT; 0 for STOP)."""
    return a % p_


@njit(cache=True, inline="always")
def is_step_kind(kind):
    return A_STEP <= kind < A_JUMP


@njit(cache=True, inline="always")
def is_jump_kind(kind):
    return A_JUMP <= kind < A_LIFT


# ------------------------------------------------------------ header fields
# Rules options, written once when a state is created.
H_N = 0  # board size N
H_P = 1  # number of points P = N * N
H_FLY = 2  # fly_threshold (0 disables flying)
H_BAN = 3  # single_jump_ban (BAN_*)
H_MIN = 4  # min_stones (0 disables)
H_CHAIN_STOP = 5  # chain_may_stop (0/1)
H_REP = 6  # repetition_draw (0 disables)
H_MAXT = 7  # max_battle_turns (0 disables)
H_CAP = 8  # capacity of the hash history ring
# Game status.
H_PHASE = 9  # PH_*
H_SUB = 10  # SUB_* (battle phase only)
H_TO_MOVE = 11  # colour that must decide next
H_PLACED = 12  # placements made so far
H_COUNT = 13  # stone count of colour c is state[H_COUNT + c], c in (WHITE, BLACK); slot 13 (H_COUNT + EMPTY) is H_BAN_AFTER
# ban_after_capture (0/1), a rules option (docs/rules.md §10.6): slot 13 was the unused H_COUNT + EMPTY, so the
# layout (HDR, the board's offset) is unchanged and states made before the option read it as off (0).
# Never write s[H_COUNT + v] for an empty point v.
H_BAN_AFTER = 13
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
# Rules options of docs/rules.md §8-§9, written once when a state is created (0 = the default rule).
H_FLYER_MOVES = 36  # flyer_moves (FLYER_*)
H_MIN_CHECK = 37  # min_stones_check (MIN_CHECK_*)
H_SQ_RETURN = 38  # square_on_return (0/1)
H_FORMATIONS = 39  # formations (0/1): full-line captures of the traditional rule text
HDR = 40  # header length (every slot is in use; a new field grows HDR)

#: Header fields that hold the rules options (written once by ``new_state``): two states are
#: under the same rules of play when these agree.  A learned network or a kept search tree
#: belongs to one rule set, and checks a state against it with these.
RULE_FIELDS = (H_N, H_FLY, H_BAN, H_MIN, H_CHAIN_STOP, H_REP, H_MAXT, H_FLYER_MOVES, H_MIN_CHECK, H_SQ_RETURN,
               H_FORMATIONS, H_BAN_AFTER)

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

DEFAULT_HISTORY = 2048  # hash ring size when max_battle_turns is 0 and no history_size is given


def colour_name(c: int) -> str:
    """``"white"`` or ``"black"`` for WHITE / BLACK."""
    if c not in (WHITE, BLACK):
        raise ValueError(f"not a colour: {c!r} (expected {WHITE} white or {BLACK} black)")
    return COLOUR_NAMES[c]


def colour_of(name: str) -> int:
    """WHITE / BLACK for ``"white"`` / ``"black"``."""
    try:
        return COLOUR_NAMES.index(name, 1)
    except ValueError:
        raise ValueError(f"not a colour name: {name!r} (expected 'white' or 'black')") from None


__all__ = [k for k in list(globals()) if k.isupper() or k.startswith(("encode_", "action_", "is_", "colour_"))] + [
    "num_actions", "stop_action"]
