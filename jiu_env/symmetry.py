"""The eight symmetries of the square board, acting on everything the game uses.

A symmetry ``g`` (an int in ``0..7``, see :data:`NAMES`) is a rotation or a
reflection of the N x N grid of points.  It acts on

- points (:func:`point_map`, :func:`transform_point`),
- directions (:func:`direction_map`): a step "up" becomes a step "left" under
  a quarter turn, and so on,
- actions of the flat encoding of docs/rules.md §7 (:func:`action_map`,
  :func:`transform_action`): POINT and LIFT map their point, STEP and JUMP map
  their point *and* their direction, STOP is fixed,
- kernel states (:func:`transform_state`): the board, every point-valued
  header field, the last action, and the Zobrist hash (recomputed),
- observation planes (:func:`transform_observation`) and policy vectors over
  the flat action space (:func:`transform_policy`).

Which symmetries commute with the rules depends on the phase.  The battle
rules treat every point alike, so all 8 do.  The placement rules do not: the
first two stones go on the diagonal ends ``(c0, c0)`` and ``(c1, c1)`` of the
centre square and those two stones are removed when the board is full, so
only the symmetries that map that pair onto itself commute with placement
(:func:`placement_symmetries`): identity, transpose, 180° rotation and
anti-transpose on an even board; identity and transpose on an odd board,
where ``(c0, c0)`` is the centre point.  :func:`symmetries_for` returns the
right set for a given state; use it for data augmentation.

Limitation: the repetition history of a kernel state holds only hashes of
earlier positions, which cannot be mapped without the boards.  A transformed
state keeps the occurrence count of its current position (so its observation
is exact) but forgets the other earlier positions, so a later repetition of
one of those is not detected in the transformed game.
"""

import numbers
from functools import lru_cache

import numpy as np

from . import kernel as K

from . import vocab as V
from .notation import check_board_size
from .validate import validate_state
from .vocab import PL_CENTRE_ENDS

NAMES = ("identity", "rot90", "rot180", "rot270", "flip_lr", "flip_ud", "transpose", "anti_transpose")
NUM_SYMMETRIES = 8
IDENTITY = 0

# Each symmetry as an orthogonal integer matrix acting on (row - m, col - m),
# m = (N - 1) / 2 the board centre.  rot90 turns the board a quarter turn
# anticlockwise as printed (row 0 on top): (r, c) -> (N-1-c, r).
_MATS = np.array([
    [[1, 0], [0, 1]],  # identity
    [[0, -1], [1, 0]],  # rot90: (r, c) -> (N-1-c, r)
    [[-1, 0], [0, -1]],  # rot180
    [[0, 1], [-1, 0]],  # rot270: (r, c) -> (c, N-1-r)
    [[1, 0], [0, -1]],  # flip_lr: mirror the columns
    [[-1, 0], [0, 1]],  # flip_ud: mirror the rows
    [[0, 1], [1, 0]],  # transpose: (r, c) -> (c, r)
    [[0, -1], [-1, 0]],  # anti_transpose: (r, c) -> (N-1-c, N-1-r)
], dtype=np.int64)

POINT_FIELDS = V.POINT_FIELDS  # header fields that hold a point (-1 when unset)


def _check(g):
    if isinstance(g, bool) or not isinstance(g, (int, np.integer)) or not 0 <= g < NUM_SYMMETRIES:
        raise ValueError(f"a symmetry is an int in 0..7 ({', '.join(NAMES)}), not {g!r}")
    return int(g)


def inverse(g):
    """The symmetry that undoes ``g``."""
    return _inverse(_check(g))  # checked before the cache: an unchecked key would be remembered


@lru_cache(maxsize=None)
def _inverse(g):
    m = _MATS[g]
    for h in range(NUM_SYMMETRIES):
        if np.array_equal(_MATS[h], m.T):
            return h
    raise AssertionError("the group is closed")  # pragma: no cover


def compose(g, h):
    """The symmetry "first ``h``, then ``g``"."""
    return _compose(_check(g), _check(h))  # checked before the cache, as inverse


@lru_cache(maxsize=None)
def _compose(g, h):
    m = _MATS[g] @ _MATS[h]
    for k in range(NUM_SYMMETRIES):
        if np.array_equal(_MATS[k], m):
            return k
    raise AssertionError("the group is closed")  # pragma: no cover


@lru_cache(maxsize=None)
def _tables(n):
    """Read-only (points, actions, directions) maps of all 8 symmetries for board size n."""
    if not V.MIN_N <= n <= V.MAX_N:
        raise ValueError(f"board size {n} is out of range {V.MIN_N}..{V.MAX_N}")
    p_ = n * n
    idx = np.arange(p_)
    # doubled coordinates keep the centre integral on even boards
    rc = np.stack([2 * (idx // n) - (n - 1), 2 * (idx % n) - (n - 1)])
    dirs = np.stack([V.DR, V.DC])
    points = np.empty((NUM_SYMMETRIES, p_), np.int64)
    dmap = np.empty((NUM_SYMMETRIES, 4), np.int64)
    na = V.num_actions(n)
    actions = np.empty((NUM_SYMMETRIES, na), np.int64)
    for g in range(NUM_SYMMETRIES):
        r2, c2 = _MATS[g] @ rc
        points[g] = ((r2 + n - 1) // 2) * n + (c2 + n - 1) // 2
        v = _MATS[g] @ dirs
        for d in range(4):
            dmap[g, d] = int(np.flatnonzero((V.DR == v[0, d]) & (V.DC == v[1, d]))[0])
        a = actions[g]
        a[:p_] = points[g]  # POINT
        for d in range(4):
            for kind in (V.A_STEP, V.A_JUMP):
                a[(kind + d) * p_:(kind + d + 1) * p_] = (kind + dmap[g, d]) * p_ + points[g]
        a[V.A_LIFT * p_:V.A_STOP * p_] = V.A_LIFT * p_ + points[g]
        a[V.stop_action(p_)] = V.stop_action(p_)
    inv_points = np.empty_like(points)
    inv_actions = np.empty_like(actions)
    for g in range(NUM_SYMMETRIES):
        inv_points[g, points[g]] = idx
        inv_actions[g, actions[g]] = np.arange(na)
    for arr in (points, dmap, actions, inv_points, inv_actions):
        arr.setflags(write=False)
    return points, dmap, actions, inv_points, inv_actions


# Every function that takes a board size ``n`` checks it with jiu_env.notation.check_board_size: an int
# (numpy integers too) in MIN_N..MAX_N; TypeError for a bool, a float or a str, ValueError out of range.

def point_map(g, n):
    """Array ``m`` (length N*N, read-only) with ``m[p]`` = image of point ``p`` under ``g``."""
    return _tables(check_board_size(n, "n"))[0][_check(g)]


def direction_map(g, n=8):
    """Array ``m`` (length 4, read-only) with ``m[d]`` = image of direction ``d`` under ``g``.

    The map is the same on every board; ``n`` is checked as everywhere here
    (a board size in ``MIN_N..MAX_N``), so ``direction_map(g, 3)`` raises.
    """
    return _tables(check_board_size(n, "n"))[1][_check(g)]


def action_map(g, n):
    """Array ``m`` (length 10*N*N+1, read-only) with ``m[a]`` = image of action ``a`` under ``g``."""
    return _tables(check_board_size(n, "n"))[2][_check(g)]


def transform_point(p, g, n):
    """Image of point ``p`` under symmetry ``g`` on an n x n board."""
    m = point_map(g, n)
    return int(m[_index(p, m.size, "point")])


def transform_action(a, g, n):
    """Image of action ``a`` (flat encoding) under symmetry ``g`` on an n x n board."""
    m = action_map(g, n)
    return int(m[_index(a, m.size, "action")])


def _index(i, size, what):
    """``i`` as an int in ``0..size-1`` (no negative indexing from the end)."""
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, numbers.Integral):
        raise TypeError(f"a {what} is an int, not {type(i).__name__} ({i!r})")
    if not 0 <= i < size:
        raise ValueError(f"{what} {i} is out of range 0..{size - 1}")
    return int(i)


def placement_symmetries(n):
    """The symmetries that map the centre square's diagonal ends onto themselves (commute with placement)."""
    return _placement_symmetries(check_board_size(n, "n"))  # checked before the cache, as inverse


@lru_cache(maxsize=None)
def _placement_symmetries(n):
    a, b = K.diagonal_ends(n)
    ends = {a, b}
    pts = _tables(n)[0]
    return tuple(g for g in range(NUM_SYMMETRIES) if {int(pts[g, a]), int(pts[g, b])} == ends)


ALL_SYMMETRIES = tuple(range(NUM_SYMMETRIES))


def symmetries_for(state):
    """The symmetries that commute with the rules from ``state`` on.

    All 8 once the battle phase has started (or the game is over); only
    :func:`placement_symmetries` during the placement phase.
    """
    validate_state(state)
    if state[V.H_PHASE] == V.PH_PLACEMENT:
        return _placement_symmetries(int(state[V.H_N]))
    return ALL_SYMMETRIES


def board_hash(board, to_move):
    """The kernel's Zobrist hash of a flat board with ``to_move`` to decide.

    ``board``: the ``N * N`` point values of an N x N board (``MIN_N..MAX_N``)
    in a flat sequence, each EMPTY (0), WHITE (1) or BLACK (2): integers, or
    whole-number floats (as :func:`jiu_env.state.position_state` takes them).
    ``to_move``: WHITE or BLACK (an int, numpy integers included).  TypeError /
    ValueError name what is wrong.
    """
    to_move = V.check_colour(to_move, "to_move")
    try:
        arr = np.asarray(board)
    except Exception as e:  # ragged lists and the like
        raise ValueError(f"board is not an array: {e}") from None
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"board values must be integers 0 (empty), 1 (white), 2 (black); got dtype {arr.dtype}")
    n = int(round(arr.size ** 0.5))
    if arr.ndim != 1 or n * n != arr.size or not V.MIN_N <= n <= V.MAX_N:
        raise ValueError(f"board must be a flat array of N * N values, N in {V.MIN_N}..{V.MAX_N}, "
                         f"not shape {arr.shape}")
    if np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
        raise ValueError("board values must be whole numbers 0, 1 or 2")
    bad = (arr < V.EMPTY) | (arr > V.BLACK)
    if np.any(bad):
        raise ValueError(f"board values must be 0 (empty), 1 (white) or 2 (black), not {arr[bad][0].item()!r}")
    return _board_hash(arr.astype(np.int64), to_move)


def _board_hash(board, to_move):
    """:func:`board_hash` of a checked board (an int64 array) and colour: what :func:`transform_state` uses."""
    board = np.asarray(board, np.int64)
    h = np.bitwise_xor.reduce(K.ZOBRIST[board, np.arange(board.size)]) if board.size else 0
    if to_move == V.BLACK:
        h ^= K.ZOBRIST_SIDE
    return int(h)


def transform_state(state, g):
    """A new kernel state: ``state`` seen through symmetry ``g``.

    The board, the point-valued header fields (chaining stone, lifted stone,
    origin of the move, last move's from/to points) and the last action are
    mapped; the Zobrist hash is recomputed.  The repetition history keeps the
    occurrences of the current turn-start position (mapped) and forgets older
    positions, whose boards are not stored (see the module doc).  ``state`` is
    not modified.
    """
    g = _check(g)
    validate_state(state)
    n = int(state[V.H_N])
    p_ = n * n
    pts, _, acts, _, _ = _tables(n)
    out = state.copy()
    board = state[V.HDR:V.HDR + p_]
    nb = np.empty(p_, np.int64)
    nb[pts[g]] = board
    out[V.HDR:V.HDR + p_] = nb
    for f in POINT_FIELDS:
        v = state[f]
        if v >= 0:
            out[f] = pts[g, v]
    la = state[V.H_LAST_ACTION]
    if la >= 0:
        out[V.H_LAST_ACTION] = acts[g, la]
    out[V.H_HASH] = _board_hash(nb, state[V.H_TO_MOVE])  # a validated state: no checks needed
    _map_history(state, out)
    return out


def _map_history(state, out):
    """Rewrite the repetition window of ``out`` (see :func:`transform_state`)."""
    idx = int(state[V.H_HLEN])
    if state[V.H_PHASE] == V.PH_PLACEMENT or idx == 0:
        return
    cap = int(state[V.H_CAP])
    base = V.HDR + int(state[V.H_P])
    lo = max(int(state[V.H_HIRR]), idx - cap)
    sub = state[V.H_SUB]
    if state[V.H_PHASE] == V.PH_BATTLE and sub in (V.SUB_MOVE, V.SUB_DROP):
        # In these sub-phases nothing has changed since the turn started, so the
        # current hash is the turn-start position that the window counts.
        old = state[V.H_HASH]
        slots = (np.arange(lo, idx) % cap) + base
        k = int(np.count_nonzero(state[slots] == old))
        new_slots = (np.arange(idx - k, idx) % cap) + base
        out[new_slots] = out[V.H_HASH]
        out[V.H_HIRR] = idx - k
    else:
        # Chain and capture sub-phases capture before the turn ends, which
        # clears the window anyway; a finished game never looks at it.
        out[V.H_HIRR] = idx


def _inverse_map(kind, g, n, name="n"):
    return _tables(check_board_size(n, name))[3 if kind == "points" else 4][_check(g)]


def transform_observation(obs, g, channels_last=True):
    """Observation planes of :mod:`jiu_env.observation` mapped by symmetry ``g``.

    ``obs`` has shape ``(..., N, N, C)`` (or ``(..., C, N, N)`` with
    ``channels_last=False``); any leading batch dimensions are kept.  Every
    plane moves with the board except ``centre_ends`` (plane 18 when
    ``C == NUM_PLANES``), which marks fixed points of the board and is left in
    place, so that ``transform_observation(observation of s, g)`` equals the
    observation of ``transform_state(s, g)``.
    """
    from .observation import NUM_PLANES

    obs = np.asarray(obs)
    if obs.ndim < 3:
        raise ValueError(f"observation planes have shape (..., N, N, C) or (..., C, N, N), not {obs.shape}")
    if channels_last:
        n, n2, c = obs.shape[-3:]
    else:
        c, n, n2 = obs.shape[-3:]
    if n != n2:
        raise ValueError(f"observation planes must be square, got shape {obs.shape}")
    inv = _inverse_map("points", g, n, "the board size of the planes")
    lead = obs.shape[:-3]
    if channels_last:
        flat = obs.reshape(*lead, n * n, c)
        out = flat[..., inv, :].reshape(obs.shape)
        if c == NUM_PLANES:
            out[..., PL_CENTRE_ENDS] = obs[..., PL_CENTRE_ENDS]
    else:
        flat = obs.reshape(*lead, c, n * n)
        out = flat[..., inv].reshape(obs.shape)
        if c == NUM_PLANES:
            out[..., PL_CENTRE_ENDS, :, :] = obs[..., PL_CENTRE_ENDS, :, :]
    return out


def transform_policy(policy, g, n):
    """A vector over the flat action space (shape ``(..., 10*N*N+1)``) mapped by ``g``.

    ``out[transform_action(a, g, n)] == policy[a]`` for every action ``a``:
    probabilities, visit counts, logits and legal masks all map this way.
    """
    policy = np.asarray(policy)
    inv = _inverse_map("actions", g, n)
    if policy.shape[-1] != inv.size:
        raise ValueError(f"a policy for a {n}x{n} board has {inv.size} entries, got shape {policy.shape}")
    return policy[..., inv]


__all__ = [
    "NAMES", "NUM_SYMMETRIES", "IDENTITY", "ALL_SYMMETRIES", "POINT_FIELDS", "inverse", "compose",
    "point_map", "direction_map", "action_map", "transform_point", "transform_action",
    "placement_symmetries", "symmetries_for", "board_hash", "transform_state",
    "transform_observation", "transform_policy",
]
