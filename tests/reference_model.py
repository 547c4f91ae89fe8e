"""A plain-Python reference model of docs/rules.md that the tests diff the numba kernel against.

:class:`RefGame` plays the rules written out directly (slow, exact history, no
hashing), so a kernel bug and a model bug have to agree to go unseen.
:func:`ref_from_state` reads a kernel state into the model (refusing states the
rules could not reach) and :func:`compare_with_reference` asserts that a kernel
state and the model describe the same game, decision by decision.  It is kept
out of conftest.py so that the shared board and env helpers stay short and the
model reads as one piece; tests import it as ``from reference_model import
RefGame`` (pytest puts tests/ on the import path, as for conftest).
"""

import numpy as np

import jiu_env
from jiu_env import kernel as K
from jiu_env.options import RULE_OPTIONS

from conftest import kernel_legal

EMPTY, WHITE, BLACK = K.EMPTY, K.WHITE, K.BLACK

_DR = (-1, 0, 1, 0)
_DC = (0, 1, 0, -1)


class RefGame:
    """docs/rules.md §2-§5 written out directly in Python (slow, exact history, no hashing).

    The rules options come by name from the table of jiu_env/options.py: each is
    modelled below (:attr:`MODELLED`) or, if the table has an option the model does
    not know, it must be at its default, else the model refuses the rules rather
    than play a different game than the kernel.
    """

    #: The options the model implements (history_size only sizes the kernel's history: the model keeps all).
    MODELLED = frozenset({"board_size", "fly_threshold", "single_jump_ban", "min_stones", "chain_may_stop",
                          "repetition_draw", "max_battle_turns", "flyer_moves", "min_stones_check",
                          "square_on_return", "formations", "history_size", "ban_after_capture"})

    def __init__(self, rules):
        for o in RULE_OPTIONS:
            if o.name not in self.MODELLED and getattr(rules, o.name) != o.default:
                raise NotImplementedError(f"the reference model (tests/reference_model.py) does not model the rules "
                                          f"option {o.name}={getattr(rules, o.name)!r}: add it to RefGame")
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
        self.ban_after = rules.ban_after_capture
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

    def ban_rule(self, mover_flies, enemy_flies):
        """docs/rules.md §4: does the single-jump ban bind a mover, given both sides' flying?"""
        return {"none": False, "vs_flyer": (not mover_flies) and enemy_flies, "flyer": mover_flies,
                "both": mover_flies or enemy_flies}[self.ban_mode]

    def ban_after_capture(self, board):
        """§10.6 ``ban_after_capture``: the ban decided again on ``board``, after a jump's capture."""
        c = self.to_move
        enemy = sum(1 for v in board if v == 3 - c)
        return self.ban_after and self.ban_rule(self.fly_now, self.fly > 0 and enemy <= self.fly)

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
                if self.ban_now or self.ban_after:
                    b = list(self.board)
                    b[p], b[self._at(p, d, 1)], b[t] = EMPTY, EMPTY, c
                    if (self.ban_now or self.ban_after_capture(b)) and not self._has_jump(b, t, c):
                        continue  # a lone single jump under the ban
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
            if self.may_stop and not ((self.ban_now or self.ban_after_capture(self.board)) and self.jumps < 2):
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
        self.ban_now = self.ban_rule(fc, fo)
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

#: Kernel header fields the reference model keeps no counterpart of (hashing, history, counters):
#: :func:`ref_from_state` neither reads nor checks them.
REF_UNMODELLED = (K.H_CAP, K.H_HASH, K.H_HLEN, K.H_HIRR, K.H_CAPTURED, K.H_LAST_ACTION, K.H_DECISIONS,
                  K.H_REP_COUNT)


def ref_from_state(state):
    """The reference game at the decision of a kernel state, read field by field.

    Raises ValueError when the rules (docs/rules.md) could not have led there:
    options that :class:`jiu_env.Rules` refuses, a placement out of turn or off the
    diagonal ends, flags (flying, the single-jump ban, the turn's sub-phase and
    its stones) that the reference derives otherwise, a result that does not fit
    the board.  The reference's repetition history starts at this position, and
    the fields of :data:`REF_UNMODELLED` are not read.
    """
    s = [int(v) for v in state[:K.HDR]]
    n = s[K.H_N]
    if not K.MIN_N <= n <= K.MAX_N or s[K.H_P] != n * n or state.size < K.HDR + n * n:
        raise ValueError("board size")
    try:
        rules = jiu_env.Rules(**{o.name: _option_value(o, s[o.slot]) for o in RULE_OPTIONS
                                 if o.slot not in REF_UNMODELLED})
    except (TypeError, ValueError) as e:
        raise ValueError(f"rules: {e}") from None
    g = RefGame(rules)
    P_ = g.np
    g.board = [int(v) for v in state[K.HDR:K.HDR + P_]]

    def need(ok, what):
        if not ok:
            raise ValueError(what)

    need(all(v in (EMPTY, WHITE, BLACK) for v in g.board), "board values")
    need(s[K.H_COUNT + WHITE] == g.count(WHITE) and s[K.H_COUNT + BLACK] == g.count(BLACK), "stone counts")
    ph, c = s[K.H_PHASE], s[K.H_TO_MOVE]
    stones = g.count(WHITE) + g.count(BLACK)
    if ph == K.PH_PLACEMENT:
        need(s[K.H_PLACED] == stones < P_, "placements")
        need(c == (WHITE if stones % 2 == 0 else BLACK) and g.count(WHITE) == (stones + 1) // 2, "turn order")
        ends = sorted(g.board[e] for e in g.ends())
        need(stones == 0 or ends == ([EMPTY, WHITE] if stones == 1 else [WHITE, BLACK]), "diagonal ends")
        need(s[K.H_SUB] == 0 and s[K.H_TURNS] == 0 and s[K.H_WINNER] == 0 and s[K.H_END_REASON] == 0
             and s[K.H_TRUNC] == 0 and s[K.H_PENDING] == 0 and s[K.H_CHAIN_LEN] == 0 and s[K.H_FLY_NOW] == 0
             and s[K.H_BAN_NOW] == 0, "placement status")
        need(s[K.H_CHAIN] == s[K.H_LIFT] == s[K.H_ORIGIN] == s[K.H_LAST_FROM] == -1, "placement points")
        need(-1 <= s[K.H_LAST_TO] < P_, "last point")
        g.placed, g.to_move = stones, c
        return g
    need(s[K.H_PLACED] == P_, "placements")
    g.placed = P_
    g.turns = s[K.H_TURNS]
    need(g.turns >= 0 and (rules.max_battle_turns == 0 or g.turns <= rules.max_battle_turns), "battle turns")
    for f in (K.H_CHAIN, K.H_LIFT, K.H_ORIGIN, K.H_LAST_FROM, K.H_LAST_TO):
        need(-1 <= s[f] < P_, "point field")
    need(0 <= s[K.H_CHAIN_LEN] <= P_ and s[K.H_SUB] in _SUBS and c in (WHITE, BLACK), "turn fields")
    need(s[K.H_FLY_NOW] in (0, 1) and s[K.H_BAN_NOW] in (0, 1) and s[K.H_PENDING] >= 0, "flags")
    if ph == K.PH_OVER:
        g.phase = "over"
        need(s[K.H_CHAIN] == s[K.H_LIFT] == -1 and s[K.H_PENDING] == 0, "no turn left")
        reason, win = _REASONS.get(s[K.H_END_REASON]), s[K.H_WINNER]
        need(reason is not None and s[K.H_TRUNC] == (reason == "turn_limit"), "end reason")
        need(win == {"turn_limit": 0, "repetition": K.DRAW}.get(reason, win) and win in (0, WHITE, BLACK, K.DRAW)
             and (win in (WHITE, BLACK) or reason in ("turn_limit", "repetition")), "winner")
        need(reason != "turn_limit" or g.turns == rules.max_battle_turns > 0, "turn limit")
        need(reason != "repetition" or rules.repetition_draw > 0, "repetition")
        g.winner, g.reason, g.truncated = win, reason, reason == "turn_limit"
        return g
    need(ph == K.PH_BATTLE and s[K.H_WINNER] == s[K.H_END_REASON] == s[K.H_TRUNC] == 0, "phase")
    need(rules.max_battle_turns == 0 or g.turns < rules.max_battle_turns, "turn limit")
    need(stones < P_, "full board")
    o = 3 - c
    g.phase, g.to_move, g.sub = "battle", c, _SUBS[s[K.H_SUB]]
    g.jumps, g.pending = s[K.H_CHAIN_LEN], s[K.H_PENDING]
    g.chain = None if s[K.H_CHAIN] < 0 else s[K.H_CHAIN]
    g.lift = None if s[K.H_LIFT] < 0 else s[K.H_LIFT]
    g.origin = None if s[K.H_ORIGIN] < 0 else s[K.H_ORIGIN]
    g.fly_now, g.ban_now = bool(s[K.H_FLY_NOW]), bool(s[K.H_BAN_NOW])
    mid_turn = g.sub in ("chain", "capture")
    ms = rules.min_stones
    need(g.count(c) >= max(ms, 1) and g.count(o) >= (1 if g.min_at_turn_end and mid_turn else max(ms, 1)),
         "too few stones")
    need(g.fly_now == g.flying(c), "flying")
    need((g.chain is not None) == (g.sub == "chain") and (g.lift is not None) == (g.sub == "drop")
         and (g.pending > 0) == (g.sub == "capture") and (g.origin is None) == (g.sub == "move")
         and (g.jumps == 0 or mid_turn), "sub-phase fields")

    def reach(a, b, jumps):
        if jumps == 0 or (g.fly_now and g.fly_only):
            return False
        dr, dc = abs(a // n - b // n), abs(a % n - b % n)
        return dr % 2 == dc % 2 == 0 and (dr + dc) // 2 <= jumps and (jumps - (dr + dc) // 2) % 2 == 0

    taken = 0  # enemy stones taken this turn, at least
    more = 0  # and perhaps this many more
    if g.sub == "drop":
        need(g.board[g.lift] == c and g.origin == g.lift and g.fly_now, "lifted stone")
    elif g.sub == "chain":
        need(g.board[g.chain] == c and g._has_jump(g.board, g.chain, c), "chaining stone")
        need(g.origin == g.chain or g.board[g.origin] == EMPTY, "chain origin")
        need(reach(g.origin, g.chain, g.jumps), "chain path")
        need(s[K.H_LAST_FROM] == g.origin and s[K.H_LAST_TO] == g.chain, "chain last move")
        taken = g.jumps
    elif g.sub == "capture":
        q = s[K.H_LAST_TO]
        need(q >= 0 and g.board[q] == c and s[K.H_LAST_FROM] == g.origin, "moved stone")
        need(g.origin == q or g.board[g.origin] == EMPTY, "origin")
        step = abs(g.origin // n - q // n) + abs(g.origin % n - q % n) == 1
        need(reach(g.origin, q, g.jumps) if g.jumps else (step or (g.fly_now and q != g.origin)), "move path")
        need(q != g.origin or rules.square_on_return, "square on return")
        k = g.squares(q, c) + (2 * g.full_lines(q, c) if g.formations else 0)
        need(1 <= g.pending <= min(k, g.count(o)), "pending captures")
        taken, more = g.jumps, k - g.pending
    fly, mode = rules.fly_threshold, rules.single_jump_ban

    def ban(enemy_at_start):
        fo = fly > 0 and enemy_at_start <= fly
        return {"none": False, "vs_flyer": (not g.fly_now) and fo, "flyer": g.fly_now, "both": g.fly_now or fo}[mode]

    need(g.ban_now in (ban(g.count(o) + taken), ban(g.count(o) + taken + more)), "single-jump ban")
    need(bool(g.legal()), "no legal action")
    return g


def _option_value(option, v):
    """A rules option's value from its header field, by the row's type ("?", which Rules refuses, if none fits)."""
    if option.type is bool:
        return v == 1 if v in (0, 1) else "?"
    if option.type is str:
        return option.choices[v] if 0 <= v < len(option.choices) else "?"
    return v


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
