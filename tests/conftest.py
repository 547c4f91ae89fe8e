"""Shared helpers: boards from text, envs from positions and state checks.

The plain-Python reference model of docs/rules.md that the random-game tests
compare the numba kernel against is in reference_model.py.

Board text: one line per row, ``.`` empty, ``o`` White, ``x`` Black (the
characters of ``render_mode="ansi"``); spaces inside a row are ignored.
"""

import contextlib

import numpy as np
from numba import njit

import jiu_env
from jiu_env import kernel as K
from jiu_env.notation import action_to_str, str_to_action

EMPTY, WHITE, BLACK = K.EMPTY, K.WHITE, K.BLACK
_CHARS = {".": EMPTY, "o": WHITE, "x": BLACK}

# Options that switch off everything a unit test is not about.
PLAIN = dict(fly_threshold=0, single_jump_ban="none", min_stones=0, repetition_draw=0, max_battle_turns=0)


# ------------------------------------------------------------------ boards
def random_actions(rules, seed, start=None):
    """The actions of a seeded uniformly random game played to its end (from ``start``, else the rules' start)."""
    s = rules.new_state() if start is None else start.copy()
    rng = np.random.default_rng(seed)
    buf = np.empty(rules.num_actions, np.int64)
    acts = []
    while s[K.H_PHASE] != K.PH_OVER:
        k = K.legal_actions(s, buf)
        a = int(buf[rng.integers(k)])
        K.apply_action(s, a)
        acts.append(a)
    return acts


def board_from_text(text):
    """N x N int64 array from rows of ``.ox``."""
    rows = [r.replace(" ", "") for r in text.strip("\n").splitlines() if r.strip()]
    n = len(rows)
    for r in rows:
        if len(r) != n:
            raise ValueError(f"row {r!r} has {len(r)} points, expected {n}")
    return np.array([[_CHARS[ch] for ch in r] for r in rows], dtype=np.int64)


def board_to_text(board):
    """Inverse of :func:`board_from_text` (for failure messages)."""
    b = np.asarray(board)
    return "\n".join("".join(".ox"[int(v)] for v in row) for row in b)


def board_of(state):
    """The kernel board as an N x N array (a copy)."""
    n = int(state[K.H_N])
    return state[K.HDR:K.HDR + n * n].reshape(n, n).copy()


def make_env(board, to_move="black", profile="competitive", wrapped=False, **options):
    """A raw (or wrapped) env reset to ``board`` (text or array) with ``to_move`` to decide."""
    if isinstance(board, str):
        board = board_from_text(board)
    options.setdefault("board_size", board.shape[0])
    e = jiu_env.env(rules=profile, **options) if wrapped else jiu_env.raw_env(rules=profile, **options)
    e.reset(options={"board": board, "to_move": to_move})
    return e


def plain_env(board, to_move="black", **options):
    """:func:`make_env` with flying, the ban, min_stones, repetition and the turn limit off unless given."""
    return make_env(board, to_move, **{**PLAIN, **options})


def act(env, *texts):
    """Step the raw env with actions written in notation."""
    raw = env.unwrapped
    for t in texts:
        env.step(str_to_action(t, raw.board_size))


def legal_str(env):
    """The legal actions of the side to move, in notation."""
    raw = env.unwrapped
    return {action_to_str(int(a), raw.board_size) for a in raw.legal_actions()}


def A(text, n):
    """Action index of a notation string on an n x n board."""
    return str_to_action(text, n)


def pt(text, n):
    """Point index of a point name (``g6``) on an n x n board."""
    return str_to_action(text, n)


# ------------------------------------------------------------ state checks
def zobrist(state):
    """Zobrist hash of board + side to move, recomputed from scratch."""
    n = int(state[K.H_N])
    board = state[K.HDR:K.HDR + n * n]
    h = int(np.bitwise_xor.reduce(K.ZOBRIST[board, np.arange(n * n)]))
    if state[K.H_TO_MOVE] == BLACK:
        h ^= int(K.ZOBRIST_SIDE)
    return h


@njit(cache=True)
def is_legal_all(s, out):
    """out[a] = is_legal(s, a) for every action a (the slow, checked path)."""
    for a in range(out.shape[0]):
        out[a] = 1 if K.is_legal(s, a) else 0


def kernel_legal(state):
    """Sorted list of the kernel's legal actions; asserts the generator has no duplicates."""
    buf = np.empty(10 * int(state[K.H_P]) + 1, np.int64)
    k = K.legal_actions(state, buf)
    acts = buf[:k].tolist()
    assert len(set(acts)) == len(acts), "legal_actions repeats an action"
    return sorted(acts)


def check_bookkeeping(state):
    """Stone counts match the board and the hash matches the board + side to move."""
    n = int(state[K.H_N])
    board = state[K.HDR:K.HDR + n * n]
    assert int(state[K.H_COUNT + WHITE]) == int(np.sum(board == WHITE))
    assert int(state[K.H_COUNT + BLACK]) == int(np.sum(board == BLACK))
    assert int(state[K.H_HASH]) == zobrist(state)


@contextlib.contextmanager
def loopback_ray_cluster():
    """A Ray cluster of a head and one worker node on 127.0.0.1, one CPU each, shut down on exit.

    Tests that compare a Ray backend with the local one start their own (never another address)."""
    import pytest

    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "node_ip_address": "127.0.0.1",
                                                      "include_dashboard": False})
    try:
        c.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        c.wait_for_nodes()
        yield c
    finally:
        if ray.is_initialized():
            ray.shutdown()
        c.shutdown()
