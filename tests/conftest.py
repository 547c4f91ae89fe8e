"""Shared helpers: boards from text, envs from positions, state checks, and a
plain-Python reference model of docs/rules.md that the random-game tests compare
the numba kernel against, decision by decision.

Board text: one line per row, ``.`` empty, ``o`` White, ``x`` Black (the
characters of ``render_mode="ansi"``); spaces inside a row are ignored.
"""

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


# --------------------------------------------------------- reference model
_DR = (-1, 0, 1, 0)
_DC = (0, 1, 0, -1)
_BANS = ("none", "vs_flyer", "flyer", "both")


class RefGame:
    """docs/rules.md §2-§5 written out directly in Python (slow, exact history, no hashing)."""

    def __init__(self, rules):
        self.n = rules.board_size
        self.np = self.n * self.n
        self.fly = rules.fly_threshold
        self.ban_mode = rules.single_jump_ban
        self.min = rules.min_stones
        self.may_stop = rules.chain_may_stop
        self.rep = rules.repetition_draw
        self.maxt = rules.max_battle_turns
        self.fly_only = rules.flyer_moves == "fly_only"
        self.min_at_turn_end = rules.min_stones_check == "turn_end"
        self.sq_return = rules.square_on_return
        self.formations = rules.formations
        self.board = [EMPTY] * self.np
        self.phase = "placement"
        self.to_move = WHITE
        self.placed = 0
        self.sub = "move"
        self.chain = None
        self.jumps = 0
        self.lift = None
        self.pending = 0
        self.origin = None
        self.fly_now = False
        self.ban_now = False
        self.turns = 0
        self.winner = 0  # 0 undecided, WHITE, BLACK or K.DRAW
        self.truncated = False
        self.reason = None
        self.history = []

    @classmethod
    def from_position(cls, rules, board, to_move):
        g = cls(rules)
        g.board = [int(v) for v in np.asarray(board).ravel()]
        g.placed = g.np
        g.phase = "battle"
        g.to_move = to_move
        g._begin_turn()
        return g

    # geometry
    def _at(self, p, d, dist):
        r = p // self.n + dist * _DR[d]
        c = p % self.n + dist * _DC[d]
        if 0 <= r < self.n and 0 <= c < self.n:
            return r * self.n + c
        return None

    def count(self, c):
        return sum(1 for v in self.board if v == c)

    def flying(self, c):
        return self.fly > 0 and self.count(c) <= self.fly

    def ends(self):
        c0 = (self.n - 1) // 2
        c1 = c0 + 1
        return c0 * self.n + c0, c1 * self.n + c1

    def _jump_to(self, board, p, d, c):
        m, q = self._at(p, d, 1), self._at(p, d, 2)
        if m is None or q is None or board[m] != 3 - c or board[q] != EMPTY:
            return None
        return q

    def _has_jump(self, board, p, c):
        return any(self._jump_to(board, p, d, c) is not None for d in range(4))

    def squares(self, q, c):
        n, k = self.n, 0
        r, col = divmod(q, n)
        for r0 in (r - 1, r):
            for c0 in (col - 1, col):
                if 0 <= r0 < n - 1 and 0 <= c0 < n - 1:
                    pts = (r0 * n + c0, r0 * n + c0 + 1, (r0 + 1) * n + c0, (r0 + 1) * n + c0 + 1)
                    if all(self.board[x] == c for x in pts):
                        k += 1
        return k

    def full_lines(self, q, c):
        """Full board lines (row, column) of colour c through q."""
        r, col = divmod(q, self.n)
        row = all(self.board[r * self.n + i] == c for i in range(self.n))
        column = all(self.board[i * self.n + col] == c for i in range(self.n))
        return int(row) + int(column)

    # legal actions
    def _move_actions(self):
        c, P_ = self.to_move, self.np
        out = set()
        for p in range(P_):
            if self.board[p] != c:
                continue
            if self.fly_now and self.fly_only:  # a flying-eligible side may only fly
                out.add(9 * P_ + p)
                continue
            for d in range(4):
                q = self._at(p, d, 1)
                if q is not None and self.board[q] == EMPTY:
                    out.add(P_ + d * P_ + p)
                t = self._jump_to(self.board, p, d, c)
                if t is None:
                    continue
                if self.ban_now:
                    b = list(self.board)
                    b[p], b[self._at(p, d, 1)], b[t] = EMPTY, EMPTY, c
                    if not self._has_jump(b, t, c):
                        continue
                out.add(5 * P_ + d * P_ + p)
            if self.fly_now:
                out.add(9 * P_ + p)
        return out

    def legal(self):
        """The set of legal actions."""
        P_ = self.np
        if self.phase == "over":
            return set()
        if self.phase == "placement":
            if self.placed < 2:
                return {e for e in self.ends() if self.board[e] == EMPTY}
            return {p for p in range(P_) if self.board[p] == EMPTY}
        if self.sub == "move":
            return self._move_actions()
        if self.sub == "chain":
            out = {5 * P_ + d * P_ + self.chain for d in range(4)
                   if self._jump_to(self.board, self.chain, d, self.to_move) is not None}
            if self.may_stop and not (self.ban_now and self.jumps < 2):
                out.add(10 * P_)
            return out
        if self.sub == "drop":
            return {p for p in range(P_) if self.board[p] == EMPTY}
        return {p for p in range(P_) if self.board[p] == 3 - self.to_move}

    # transitions
    def _over(self, winner, reason):
        self.phase = "over"
        self.winner = winner
        self.reason = reason

    def _begin_turn(self):
        c, o = self.to_move, 3 - self.to_move
        self.sub, self.chain, self.jumps, self.lift, self.pending, self.origin = "move", None, 0, None, 0, None
        if self.min > 0:
            if self.count(c) < self.min:
                return self._over(o, "too_few_stones")
            if self.count(o) < self.min:
                return self._over(c, "too_few_stones")
        fc, fo = self.flying(c), self.flying(o)
        self.fly_now = fc
        self.ban_now = {"none": False, "vs_flyer": (not fc) and fo, "flyer": fc, "both": fc or fo}[self.ban_mode]
        if not self._move_actions():
            return self._over(o, "no_move")
        pos = (tuple(self.board), c)
        self.history.append(pos)
        if self.rep > 0 and self.history.count(pos) >= self.rep:
            return self._over(K.DRAW, "repetition")
        if self.maxt > 0 and self.turns >= self.maxt:
            self.truncated = True
            return self._over(0, "turn_limit")

    def _end_turn(self):
        self.turns += 1
        self.to_move = 3 - self.to_move
        self._begin_turn()

    def _rest(self, q):
        c, o = self.to_move, 3 - self.to_move
        self.chain = self.lift = None
        k = 0
        if q != self.origin or self.sq_return:
            k = self.squares(q, c) + (2 * self.full_lines(q, c) if self.formations else 0)
        k = min(k, self.count(o))
        if k:
            self.sub, self.pending = "capture", k
        else:
            self._end_turn()

    def _removed(self):
        """After an enemy stone is removed: True if the game ended (too few stones)."""
        c = self.to_move
        if self.min_at_turn_end:  # checked when the turn is over (the next turn's start)
            return False
        if self.min > 0 and self.count(3 - c) < self.min:
            self._over(c, "too_few_stones")
            return True
        return False

    def apply(self, a):
        """Apply a legal action (asserted)."""
        assert a in self.legal(), f"reference: action {a} not legal"
        P_, c = self.np, self.to_move
        if self.phase == "placement":
            self.board[a] = c
            self.placed += 1
            if self.placed == P_:
                for e in self.ends():
                    self.board[e] = EMPTY
                self.phase = "battle"
                self.to_move = BLACK
                self._begin_turn()
            else:
                self.to_move = 3 - c
            return
        if self.sub == "capture":
            self.board[a] = EMPTY
            self.pending -= 1
            if self._removed():
                return
            if self.pending == 0 or self.count(3 - c) == 0:
                self.pending = 0
                self._end_turn()
            return
        if self.sub == "drop":
            self.board[self.lift] = EMPTY
            self.board[a] = c
            return self._rest(a)
        if a == 10 * P_:
            return self._rest(self.chain)
        kind, p = divmod(a, P_)
        if self.sub == "move":
            self.origin = p
        if 1 <= kind <= 4:
            q = self._at(p, kind - 1, 1)
            self.board[p], self.board[q] = EMPTY, c
            return self._rest(q)
        if kind == 9:
            self.lift = p
            self.sub = "drop"
            return
        d = kind - 5
        m, q = self._at(p, d, 1), self._at(p, d, 2)
        self.board[p], self.board[m], self.board[q] = EMPTY, EMPTY, c
        self.jumps += 1
        if self._removed():
            return
        if self._has_jump(self.board, q, c):
            self.sub, self.chain = "chain", q
        else:
            self._rest(q)


_SUBS = {K.SUB_MOVE: "move", K.SUB_CHAIN: "chain", K.SUB_DROP: "drop", K.SUB_CAPTURE: "capture"}
_REASONS = {K.END_FEW_STONES: "too_few_stones", K.END_NO_MOVE: "no_move",
            K.END_REPETITION: "repetition", K.END_TURN_LIMIT: "turn_limit"}


def compare_with_reference(state, ref):
    """Assert that a kernel state and the reference model describe the same game."""
    n = ref.n
    assert state[K.HDR:K.HDR + n * n].tolist() == ref.board, "board differs from the reference"
    ph = int(state[K.H_PHASE])
    assert ph == {"placement": K.PH_PLACEMENT, "battle": K.PH_BATTLE, "over": K.PH_OVER}[ref.phase]
    if ph == K.PH_OVER:
        assert int(state[K.H_WINNER]) == ref.winner
        assert _REASONS[int(state[K.H_END_REASON])] == ref.reason
        assert bool(state[K.H_TRUNC]) == ref.truncated
    else:
        assert int(state[K.H_TO_MOVE]) == ref.to_move
    if ph == K.PH_BATTLE:
        assert _SUBS[int(state[K.H_SUB])] == ref.sub
        assert int(state[K.H_PENDING]) == ref.pending
        assert bool(state[K.H_FLY_NOW]) == ref.fly_now
        assert bool(state[K.H_BAN_NOW]) == ref.ban_now
        assert int(state[K.H_CHAIN]) == (-1 if ref.chain is None else ref.chain)
        assert int(state[K.H_LIFT]) == (-1 if ref.lift is None else ref.lift)
    assert int(state[K.H_TURNS]) == ref.turns
    assert set(kernel_legal(state)) == ref.legal(), "legal actions differ from the reference"
