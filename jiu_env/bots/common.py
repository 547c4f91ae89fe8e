"""numba helpers shared by the scripted bots (greedy, pattern): random numbers and the turn walker.

Random numbers
    :func:`rng_state` / :func:`rand_below` are a 64-bit LCG (high bits) with
    a one-slot state, made afresh for every decision from a seed: the greedy
    and pattern bots draw that seed from their ``self.rng`` (NumPy
    ``default_rng``), the AlphaZero placement judge from the position hash.
    The other components keep their own generators (numba's global
    ``np.random`` in MCTS and the kernel's random play, SplitMix64 streams in
    :mod:`jiu_env.vector`, NumPy generators in the Python shells; the full list
    is in :mod:`jiu_env.bots.search_tree`): they are not merged into one
    because every seeded game would change, and the behaviour fingerprint
    (``benchmarks/fingerprint.py``) holds them fixed.

Turn walker
    :func:`walk_start` / :func:`walk_next` enumerate every way to finish the
    current turn (the move, every chain continuation or STOP, every fly drop)
    on history-free copies (:func:`scratch_state`); :func:`block_tally` counts
    the stones of a 2x2 block.  Both one-turn bots score the finished turns
    their own way.
"""

import numpy as np
from numba import njit

from .. import vocab as V
from ..vocab import HDR, H_COUNT, H_N, H_P, H_PHASE, H_SUB, H_TO_MOVE, PH_BATTLE, SUB_CAPTURE, opponent
from ..kernel import apply_action, legal_actions

W_WIN = 1_000_000  # score of a won game (minus: lost) in the one-turn bots


# ------------------------------------------------------------ random numbers
@njit(cache=True)
def rng_state(seed):
    """A one-slot generator state for :func:`rand_below` from any integer seed."""
    r = np.empty(1, np.int64)
    r[0] = seed * 2862933555777941757 + 3037000493
    return r


@njit(cache=True)
def rand_below(rng, m):
    """A pseudo-random integer in [0, m) (64-bit LCG, high bits); advances ``rng``."""
    x = rng[0] * 6364136223846793005 + 1442695040888963407
    rng[0] = x
    return ((x >> 33) & 0x7FFFFFFF) % m


# -------------------------------------------------------------- turn walker
@njit(cache=True)
def scratch_state(s):
    """A copy of ``s`` without the position history (one-slot ring, repetition off)."""
    p_ = s[H_P]
    t = np.zeros(HDR + p_ + 1, np.int64)
    t[:HDR + p_] = s[:HDR + p_]
    t[V.H_CAP] = 1
    t[V.H_HLEN] = 0
    t[V.H_HIRR] = 0
    t[V.H_REP] = 0
    return t


@njit(cache=True)
def walk_start(s):
    """Set up the enumeration of every way to finish the current turn of ``s``.

    Returns ``(states, stack_a, stack_d, path, buf, meta)``; pass them to
    :func:`walk_next`.  ``s`` is not modified (the walk runs on copies).
    """
    p_ = s[H_P]
    length = HDR + p_ + 1
    c = s[H_TO_MOVE]
    # a turn's move part is at most one action per jumped stone plus a STOP, or LIFT + drop
    maxd = s[H_COUNT + opponent(c)] + 4
    states = np.empty((maxd, length), np.int64)
    states[0, :] = scratch_state(s)
    cap = 11 * p_ + 5 * maxd + 16
    stack_a = np.empty(cap, np.int64)
    stack_d = np.empty(cap, np.int64)
    path = np.empty(maxd, np.int64)
    buf = np.empty(V.stop_action(p_) + 1, np.int64)
    k = legal_actions(s, buf)
    for i in range(k):
        stack_a[i] = buf[k - 1 - i]
        stack_d[i] = 0
    meta = np.empty(3, np.int64)
    meta[0] = k  # stack pointer
    meta[1] = c  # the side whose turn is walked
    meta[2] = s[H_PHASE]
    return states, stack_a, stack_d, path, buf, meta


@njit(cache=True)
def walk_next(states, stack_a, stack_d, path, buf, meta):
    """Advance to the next way of finishing the turn; return its row in ``states`` or -1 when done.

    A leaf is reached when the turn passes, the game ends, the phase changes
    or square captures are pending (``SUB_CAPTURE``; the caller chooses them).
    ``path[:row]`` holds the actions from the start state; ``path[0]`` is the
    action to play now.  The leaf row may be modified by the caller.
    """
    sp = meta[0]
    mover = meta[1]
    phase = meta[2]
    while sp > 0:
        sp -= 1
        a = stack_a[sp]
        d = stack_d[sp]
        states[d + 1, :] = states[d, :]
        t = states[d + 1]
        apply_action(t, a)
        path[d] = a
        if (t[H_PHASE] != phase or t[H_TO_MOVE] != mover
                or (t[H_PHASE] == PH_BATTLE and t[H_SUB] == SUB_CAPTURE)):
            meta[0] = sp
            return d + 1
        k = legal_actions(t, buf)
        for i in range(k):
            stack_a[sp] = buf[k - 1 - i]
            stack_d[sp] = d + 1
            sp += 1
    meta[0] = 0
    return -1


@njit(cache=True)
def block_tally(s, a, skip, c):
    """(own, enemy, empty) among the points of the 2x2 block with top-left point ``a`` (a
    :func:`~jiu_env.vocab.square_corner`), point ``skip`` left out; own = colour ``c``."""
    n = s[H_N]
    own = 0
    enemy = 0
    empty = 0
    for i in range(2):
        for j in range(2):
            q = a + i * n + j
            if q == skip:
                continue
            v = s[HDR + q]
            if v == c:
                own += 1
            elif v == opponent(c):
                enemy += 1
            else:
                empty += 1
    return own, enemy, empty


__all__ = ["rng_state", "rand_below", "scratch_state", "walk_start", "walk_next", "block_tally", "W_WIN"]
