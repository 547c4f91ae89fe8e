"""The input planes of the learned players: the observation, and optionally one-move tactics.

A network's checkpoint names its feature set (``config["features"]``):

``"planes"``
    the 21 observation planes of :mod:`jiu_env.observation` (every network
    before the tactics set, and the default);
``"tactics"``
    those 21 planes and :data:`NUM_TACTIC_PLANES` = 20 more, laid out like
    the policy head: for every action kind ``k`` (0..9, the block
    ``a // P`` of a flat action) a plane holding, at the action's point,
    what that legal action gains at once, ``min(gain, GAIN_CAP) / GAIN_CAP``:

    * planes 21..30, the side to move's actions;
    * planes 31..40, the opponent's actions if it were to move now (in the
      placement phase, and in the battle's move and capture sub-phases;
      zero in the chain and drop sub-phases, where its turn is further off).

    The gain of an action is, in the placement phase, the squares the placed
    stone completes; in the battle phase, the opponent's stones it removes
    at once (a jump's stone) plus the square captures it earns, and
    :data:`GAIN_CAP` for a move that wins the game.

*Why*: a network without search loses most games by missing a capture or
leaving one, a one-move fact that the observation only shows through many
layers of convolution.  These planes are the kernel's own answer to "what
does each move take, and what does the opponent threaten", the kind of
input AlphaGo gave its policy network (capture and atari sizes).  They look
one move ahead for both sides and no further: the network still chooses.
They cost one copy and one kernel move per legal action of each side.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from .. import kernel as K
from .. import vocab as V
from ..observation import NUM_PLANES, write_observation
from ..symmetry import transform_observation, transform_policy
from ..vocab import A_STOP, opponent

#: Feature sets a network may be trained on, and how many input planes each has.
TACTIC_KINDS = A_STOP  # action kinds 0..9 (STOP has no point and no plane)
NUM_TACTIC_PLANES = 2 * TACTIC_KINDS
FEATURE_PLANES = {"planes": NUM_PLANES, "tactics": NUM_PLANES + NUM_TACTIC_PLANES}
#: A gain is clipped to this and divided by it (a quarter step is exact in the uint8 training planes).
GAIN_CAP = 4


def check_features(features: str) -> str:
    """``features`` if it is a known feature set, else ValueError naming the ones there are."""
    if not isinstance(features, str) or features not in FEATURE_PLANES:
        raise ValueError(f"unknown feature set {features!r} (expected one of {', '.join(FEATURE_PLANES)})")
    return features


@njit(cache=True)
def _action_gains(s, out, base, buf, scratch):
    """Write the gain of each legal action of the side to move in ``s`` to ``out[r, c, base + kind]``."""
    n = s[V.H_N]
    p_ = s[V.H_P]
    c = s[V.H_TO_MOVE]
    o = opponent(c)
    placing = s[V.H_PHASE] == V.PH_PLACEMENT
    m = K.legal_actions_unchecked(s, buf)
    for i in range(m):
        a = buf[i]
        kind = a // p_
        if kind >= A_STOP:
            continue
        scratch[:] = s
        K.apply_action_unchecked(scratch, a)
        if placing:
            g = K.squares_at(scratch, a, c)
        elif scratch[V.H_PHASE] == V.PH_OVER:
            g = GAIN_CAP if scratch[V.H_WINNER] == c else 0
        else:
            g = s[V.H_COUNT + o] - scratch[V.H_COUNT + o]
            if scratch[V.H_TO_MOVE] == c and scratch[V.H_SUB] == V.SUB_CAPTURE:
                g += scratch[V.H_PENDING]
        if g > GAIN_CAP:
            g = GAIN_CAP
        p = a - kind * p_
        out[p // n, p % n, base + kind] = g / GAIN_CAP


@njit(cache=True)
def write_tactics_unchecked(s, out):
    """Fill ``out`` (float32, shape (N, N, NUM_TACTIC_PLANES)) with the tactics planes of ``s``. Unchecked."""
    out[:] = 0.0
    ph = s[V.H_PHASE]
    if ph == V.PH_OVER:
        return
    buf = np.empty(A_STOP * s[V.H_P] + 1, np.int64)
    scratch = s.copy()
    _action_gains(s, out, 0, buf, scratch)
    other = s.copy()
    if ph == V.PH_PLACEMENT:
        other[V.H_TO_MOVE] = opponent(s[V.H_TO_MOVE])
    elif s[V.H_SUB] == V.SUB_MOVE or s[V.H_SUB] == V.SUB_CAPTURE:
        K.pass_turn_unchecked(other)  # the same board, the opponent to move (its turn-start checks run)
        if other[V.H_PHASE] != V.PH_BATTLE or other[V.H_TO_MOVE] == s[V.H_TO_MOVE]:
            return
    else:
        return
    _action_gains(other, out, TACTIC_KINDS, buf, scratch)


@njit(cache=True)
def write_net_input_unchecked(s, tactics, out):
    """The network input of ``s`` for its side to move: the observation planes, then (``tactics``) the
    tactics planes, into ``out`` (float32, shape (N, N, C)). Unchecked."""
    write_observation(s, s[V.H_TO_MOVE], out[:, :, :NUM_PLANES])
    if tactics:
        write_tactics_unchecked(s, out[:, :, NUM_PLANES:])


@njit(cache=True)
def write_net_inputs(states, tactics, out):
    """:func:`write_net_input_unchecked` for each state of a batch (``out[i]`` for ``states[i]``)."""
    for i in range(states.shape[0]):
        write_net_input_unchecked(states[i], tactics, out[i])


def net_input(state: np.ndarray, features: str = "planes") -> np.ndarray:
    """The input planes ``(N, N, C)`` of a network with feature set ``features`` for ``state``'s side to move."""
    check_features(features)
    s = K.validate_state(state)
    n = int(s[V.H_N])
    out = np.zeros((n, n, FEATURE_PLANES[features]), np.float32)
    write_net_input_unchecked(s, features == "tactics", out)
    return out


def transform_tactics(planes: np.ndarray, g: int) -> np.ndarray:
    """Tactics planes ``(..., N, N, NUM_TACTIC_PLANES)`` mapped by symmetry ``g``.

    The planes are indexed by action kind, and a symmetry maps a step's or
    jump's direction to another direction, so each half is mapped as a
    vector over the flat actions (:func:`jiu_env.symmetry.transform_policy`),
    not as pictures: the tactics of ``transform_state(s, g)`` equal
    ``transform_tactics(tactics of s, g)``.
    """
    planes = np.asarray(planes)
    *lead, n, n2, c = planes.shape
    if n != n2 or c != NUM_TACTIC_PLANES:
        raise ValueError(f"tactics planes have shape (..., N, N, {NUM_TACTIC_PLANES}), not {planes.shape}")
    p_ = n * n
    out = np.empty_like(planes)
    for half in (0, TACTIC_KINDS):
        kinds = planes[..., half:half + TACTIC_KINDS].reshape(*lead, p_, TACTIC_KINDS)
        flat = np.zeros((*lead, A_STOP * p_ + 1), planes.dtype)
        flat[..., :-1] = np.swapaxes(kinds, -1, -2).reshape(*lead, A_STOP * p_)
        mapped = transform_policy(flat, g, n)[..., :-1].reshape(*lead, TACTIC_KINDS, p_)
        out[..., half:half + TACTIC_KINDS] = np.swapaxes(mapped, -1, -2).reshape(*lead, n, n, TACTIC_KINDS)
    return out


def transform_input(planes: np.ndarray, g: int) -> np.ndarray:
    """Network input planes ``(..., N, N, C)`` of either feature set mapped by symmetry ``g``."""
    planes = np.asarray(planes)
    c = planes.shape[-1]
    if c == NUM_PLANES:
        return transform_observation(planes, g)
    if c != FEATURE_PLANES["tactics"]:
        raise ValueError(f"network input planes have {NUM_PLANES} or {FEATURE_PLANES['tactics']} channels, "
                         f"not {c}")
    n = planes.shape[-2]
    out = np.empty_like(planes)
    out[..., :NUM_PLANES] = transform_observation(np.ascontiguousarray(planes[..., :NUM_PLANES]), g)
    tactics = np.ascontiguousarray(planes[..., NUM_PLANES:]).reshape(*planes.shape[:-3], n * n * NUM_TACTIC_PLANES)
    out[..., NUM_PLANES:] = tactics[..., _tactics_gather(n, int(g))].reshape(*planes.shape[:-1], NUM_TACTIC_PLANES)
    return out


@functools.lru_cache(maxsize=None)
def _tactics_gather(n: int, g: int) -> np.ndarray:
    """Where each entry of the flattened tactics planes mapped by ``g`` comes from (one gather a batch)."""
    return transform_tactics(np.arange(n * n * NUM_TACTIC_PLANES).reshape(n, n, NUM_TACTIC_PLANES), g).ravel()


__all__ = ["FEATURE_PLANES", "NUM_TACTIC_PLANES", "TACTIC_KINDS", "GAIN_CAP", "check_features", "net_input",
           "write_net_input_unchecked", "write_net_inputs", "write_tactics_unchecked", "transform_tactics",
           "transform_input"]
