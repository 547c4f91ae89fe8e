"""AlphaZero-style player: a small policy-value CNN guiding PUCT tree search.

The approach of Li et al. (2023).  A network is trained
either on the placement phase only (the paper's two-stage design: the battle
that follows a placement is fought out by a bot in training and played by
that engine in games; inside the search, by fast greedy playouts) or on the whole game, every decision
included (placements, moves, chain jumps / STOP, fly drops, square captures).

- **Network** (:func:`build_net`, PyTorch, imported lazily).  Input: the 21
  observation planes of :mod:`jiu_env.observation` for the side to move.  A
  3x3 convolution stem and residual blocks, then two heads.  The policy head
  is a 1x1 convolution to 10 channels, one per action kind of the flat
  encoding (POINT, STEP x4, JUMP x4, LIFT), so channel ``k`` at point ``p``
  is the logit of action ``k*P + p``; the STOP logit comes from the pooled
  trunk.  The value head pools the trunk (mean and max over the board) into
  a small MLP with a ``tanh`` output: the expected result for the side to
  move.  Nothing depends on the board size, so one network runs on any N.
- **Search** (:class:`PUCT`): the shared array tree of
  :mod:`jiu_env.bots.search_tree` (with priors) and its ``RULE_PUCT``
  selection, ``Q + c * P * sqrt(N_parent) / (1 + N)`` with ``c = 3.5`` (Li et
  al. 2023), ``N_parent`` the sum of the children's visits and unvisited
  children valued ``fpu`` (0 by default); the leaf evaluator is the network.
  One search object runs many trees at once (one per self-play game, rows of
  2-D tree arrays) and sends their leaves to the network in one batch; the
  state of each node that has been reached is stored (``nstate``, indexed
  through ``slot``).  Values are backed up for White and signed by the side
  that decided at each node, so a side deciding several times in a row
  (chains, drops, captures) is handled like any other decision.  For
  self-play: Dirichlet noise at the root, and either an adjudication (a
  battle turn after which a position counts as finished, scored by the stone
  difference) or, for placement training, battle positions valued by
  :func:`judge_battle`.
- **Bot** (:class:`AlphaZeroBot`): loads a checkpoint and plays through the
  bot protocol of :mod:`jiu_env.bots.base` (``make_bot("alphazero:sims=200")``),
  every decision type; the battle of a placement checkpoint goes to a bot
  named by ``battle`` (MCTS by default).

The training loop is ``examples/alphazero.py``; ``docs/alphazero.md`` has the
design choices and measured results.
"""

import math
import pathlib
import time as _time

import numpy as np
from numba import njit

from .. import kernel as K
from ..observation import NUM_PLANES, write_observation
from .base import MAX_SECONDS, MAX_SIMS, Bot, check_param, legal_actions
from .greedy import greedy_action
# the network and its checkpoints (jiu_env.bots.network), also importable from here as before
from .network import (CHECKPOINT_FORMAT, DEFAULT_CHECKPOINT, SHIPPED, atomic_torch_save, build_net, load_checkpoint,
                      load_network, make_evaluator, rules_mismatch, save_checkpoint, search_options)
from .search_tree import RULE_PUCT, add_children, backup, new_trees, reset_roots, select_child, tree_row

TIMED_SIMS = 4000  # the most simulations of a decision with a time budget (the tree is sized by it)
# The shipped 8x8 baseline is package data, so the default works after a normal install
# (it is the same file as baselines/alphazero/jiu8.pt in the repository).


# ---------------------------------------------------------------- search (numba)
@njit(cache=True)
def terminal_value(s, adj_turns, adj_margin):
    """``(finished, value for White)`` of state ``s``.

    A finished game scores +1 / -1 / 0.  With ``adj_turns > 0`` a battle
    position after ``adj_turns`` completed battle turns also counts as
    finished, scored ``clip((white stones - black stones) / adj_margin, -1, 1)``.
    """
    if s[K.H_PHASE] == K.PH_OVER:
        return True, K.result_for_white(s)
    if adj_turns > 0 and s[K.H_PHASE] == K.PH_BATTLE and s[K.H_TURNS] >= adj_turns:
        d = (s[K.H_COUNT + K.WHITE] - s[K.H_COUNT + K.BLACK]) / adj_margin
        return True, min(1.0, max(-1.0, d))
    return False, 0.0


@njit(cache=True)
def judge_battle(s, turns, margin, playouts):
    """White's value of a battle position by fast playouts (the placement judge).

    Each of ``playouts`` games is continued by the greedy bot on both sides
    for ``turns`` battle turns and scored by :func:`terminal_value` with
    adjudication (a finished game +1 / -1 / 0, else the clipped stone
    difference over ``margin``); the mean is returned.  Deterministic: the
    playouts are seeded by the position's hash.
    """
    total = 0.0
    stop = s[K.H_TURNS] + turns
    for i in range(playouts):
        t = s.copy()
        seed = s[K.H_HASH] + 7919 * i
        k = 0
        while t[K.H_PHASE] == K.PH_BATTLE and t[K.H_TURNS] < stop:
            K.apply_action(t, greedy_action(t, seed + k))
            k += 1
        total += terminal_value(t, stop, margin)[1]
    return total / playouts


@njit(cache=True)
def node_value(s, adj_turns, adj_margin, judge_turns, judge_playouts):
    """``(finished, value for White)`` of a search node.

    With ``judge_turns > 0`` (placement-only search) every battle position is
    final, valued by :func:`judge_battle`; otherwise :func:`terminal_value`.
    """
    if judge_turns > 0 and s[K.H_PHASE] == K.PH_BATTLE:
        return True, judge_battle(s, judge_turns, adj_margin, judge_playouts)
    return terminal_value(s, adj_turns, adj_margin)


@njit(cache=True)
def _new_node(nstate, nover, nterm, nnodes, g, src, action, adj_turns, adj_margin, judge_turns, judge_playouts):
    """Store a node's state in tree ``g``: a copy of slot ``src``'s state after ``action``
    (``src < 0``: the state already in the next slot; ``action < 0``: no action).  Returns the slot."""
    c = nnodes[g]
    nnodes[g] = c + 1
    if src >= 0:
        nstate[g, c, :] = nstate[g, src, :]
    if action >= 0:
        K.apply_action(nstate[g, c], action)
    over, v = node_value(nstate[g, c], adj_turns, adj_margin, judge_turns, judge_playouts)
    nover[g, c] = 1 if over else 0
    nterm[g, c] = v
    return c


NEED_VALUE = 1  # need[g]: the leaf of tree g waits for the network's value
NEED_PRIORS = 2  # ... and its children (created this round) for their priors


@njit(cache=True)
def _select(active, c_puct, fpu, adj_turns, adj_margin, judge_turns, judge_playouts,
            trees, meta, slot, nstate, nover, nterm, nnodes, path, path_len, leaf, need, obs, buf):
    """One descent per active tree.  A finished leaf is backed up at once;
    otherwise its children are created (priors still 0) when it has none, its
    planes written to ``obs[g]`` and ``need[g]`` set: the caller evaluates it
    and calls :func:`_expand`.  A child's state is made when the descent first
    reaches it; when the state slots are spent, the parent is evaluated again.
    """
    n_trees = nstate.shape[0]
    max_nodes = nstate.shape[1]
    for g in range(n_trees):
        need[g] = 0
        if active[g] == 0:
            continue
        tree = tree_row(trees, g)
        first = tree[1]
        action = tree[3]
        node = 0
        plen = 0
        while nover[g, slot[g, node]] == 0 and first[node] >= 0:
            ch = select_child(tree, node, RULE_PUCT, c_puct, fpu)
            path[g, plen] = ch
            plen += 1
            if slot[g, ch] < 0:
                if nnodes[g] >= max_nodes:  # state slots spent: re-evaluate this leaf
                    plen -= 1
                    break
                slot[g, ch] = _new_node(nstate, nover, nterm, nnodes, g, slot[g, node], action[ch],
                                        adj_turns, adj_margin, judge_turns, judge_playouts)
                node = ch
                break
            node = ch
        path_len[g] = plen
        leaf[g] = node
        sl = slot[g, node]
        if nover[g, sl] == 1:
            backup(tree, path[g], plen, nterm[g, sl])
            continue
        s = nstate[g, sl]
        need[g] = NEED_VALUE
        if first[node] < 0:
            k = K.legal_actions(s, buf)
            start = add_children(tree, meta[g], node, buf, k, s[K.H_TO_MOVE])
            if start >= 0:
                slot[g, start:start + k] = -1
                need[g] = NEED_PRIORS
            # else the tree is full: value only
        write_observation(s, s[K.H_TO_MOVE], obs[g])


@njit(cache=True)
def _expand(idx, logits, values, trees, slot, nstate, path, path_len, leaf, need):
    """Priors (softmax of the legal logits) and value backup for the evaluated leaves ``idx``."""
    for j in range(idx.size):
        g = idx[j]
        tree = tree_row(trees, g)
        node = leaf[g]
        if need[g] == NEED_PRIORS:
            first = tree[1]
            action = tree[3]
            prior = tree[7]
            start = first[node]
            end = start + tree[2][node]
            m = -1e30
            for e in range(start, end):
                x = logits[j, action[e]]
                if x > m:
                    m = x
            tot = 0.0
            for e in range(start, end):
                p = math.exp(logits[j, action[e]] - m)
                prior[e] = p
                tot += p
            for e in range(start, end):
                prior[e] /= tot
        v = values[j]
        vw = v if nstate[g, slot[g, node], K.H_TO_MOVE] == K.WHITE else -v  # an evaluated leaf is never over
        backup(tree, path[g], path_len[g], vw)


class PUCT:
    """Batched PUCT search over ``num_trees`` independent trees.

    ``evaluate(obs) -> (logits, values)`` maps float32 planes ``(B, N, N, 21)``
    to float32 logits ``(B, 10*N*N+1)`` over the flat actions and values
    ``(B,)`` in [-1, 1] for the side to move.  ``state_size`` is the length of
    the kernel states searched (all trees use the same rules).
    ``adjudicate_turns`` / ``adjudicate_margin``: see :func:`terminal_value`;
    ``judge_turns > 0`` makes every battle position a leaf valued by
    :func:`judge_battle` (placement-only search).
    """

    def __init__(self, evaluate, board_size, state_size, num_trees=1, sims=200, c_puct=3.5, fpu=0.0,
                 adjudicate_turns=0, adjudicate_margin=4.0, judge_turns=0, judge_playouts=1):
        n = int(board_size)
        p_ = n * n
        self.evaluate = evaluate
        self.n, self.sims, self.c_puct, self.fpu = n, int(sims), float(c_puct), float(fpu)
        self.adj_turns, self.adj_margin = int(adjudicate_turns), float(adjudicate_margin)
        self.judge_turns, self.judge_playouts = int(judge_turns), int(judge_playouts)
        g, m = int(num_trees), int(sims) + 2
        e = m * p_ + K.num_actions(n)  # the root can always be expanded
        self.num_trees = g
        # the shared tree (search_tree), one row per tree: the root and up to e children
        self.trees = new_trees(g, e + 1, priors=True)
        self.meta = np.zeros((g, 1), np.int64)
        # the states of the nodes reached so far: node -> slot (-1: not yet reached), per slot the state,
        # whether it is final and its value for White
        self.slot = np.full((g, e + 1), -1, np.int32)
        self.nstate = np.zeros((g, m, int(state_size)), np.int64)
        self.nover = np.zeros((g, m), np.int8)
        self.nterm = np.zeros((g, m), np.float64)
        self.nnodes = np.zeros(g, np.int64)
        self.path = np.zeros((g, m), np.int64)
        self.path_len = np.zeros(g, np.int64)
        self.leaf = np.zeros(g, np.int64)
        self.need = np.zeros(g, np.int8)
        self.obs = np.zeros((g, n, n, NUM_PLANES), np.float32)
        self.buf = np.empty(K.num_actions(n), np.int64)

    def _round(self, active):
        _select(active, self.c_puct, self.fpu, self.adj_turns, self.adj_margin, self.judge_turns, self.judge_playouts,
                self.trees, self.meta, self.slot, self.nstate, self.nover, self.nterm, self.nnodes,
                self.path, self.path_len, self.leaf, self.need, self.obs, self.buf)
        idx = np.flatnonzero(self.need).astype(np.int64)
        if idx.size:
            logits, values = self.evaluate(self.obs[idx])
            _expand(idx, np.asarray(logits, np.float32), np.asarray(values, np.float64), self.trees, self.slot,
                    self.nstate, self.path, self.path_len, self.leaf, self.need)

    def _root_children(self, g):
        """Slice of the root's children in the rows of tree ``g``."""
        f, c = int(self.trees[1][g, 0]), int(self.trees[2][g, 0])
        return slice(f, f + c) if f >= 0 else slice(0, 0)

    def search(self, states, rng=None, dirichlet_alpha=0.0, dirichlet_eps=0.0, deadline=None):
        """Search each state in ``states`` (at most ``num_trees``, none finished).

        Returns one ``(actions, visits, root_value)`` per state: the legal
        actions (kernel order), their visit counts after ``sims`` simulations,
        and the mean value of the root for the side to move.  With
        ``dirichlet_eps > 0`` the root priors are mixed with Dirichlet(alpha)
        noise drawn from ``rng``.  ``deadline`` (a ``time.perf_counter()``
        value): stop simulating when it has passed, after at least one
        simulation.
        """
        k = len(states)
        if k > self.num_trees:
            raise ValueError(f"{k} states for a search with {self.num_trees} trees")
        active = np.zeros(self.num_trees, np.int8)
        active[:k] = 1
        self.nnodes[:] = 0
        if any(s[K.H_PHASE] == K.PH_OVER for s in states):
            raise ValueError("cannot search a finished game")
        reset_roots(self.trees, self.meta, k)
        for g, s in enumerate(states):
            self.nstate[g, 0, :] = s
            self.slot[g, 0] = _new_node(self.nstate, self.nover, self.nterm, self.nnodes,
                                        g, -1, -1, 0, 1.0, 0, 1)  # the root itself is never final
        self._round(active)  # expands the roots
        prior = self.trees[7]
        if dirichlet_eps > 0:
            for g in range(k):
                r = self._root_children(g)
                c = r.stop - r.start
                if c > 1:
                    noise = rng.dirichlet(np.full(c, dirichlet_alpha))
                    prior[g, r] = (1 - dirichlet_eps) * prior[g, r] + dirichlet_eps * noise
        for i in range(self.sims):
            if deadline is not None and i > 0 and _time.perf_counter() > deadline:
                break
            self._round(active)
        out = []
        action, visits, wsum = self.trees[3], self.trees[4], self.trees[5]
        for g in range(k):
            r = self._root_children(g)
            vis = visits[g, r].astype(np.int64)
            tot = max(int(vis.sum()), 1)
            q = float(wsum[g, r].sum()) / tot
            out.append((action[g, r].astype(np.int64), vis, q))  # child values are the root mover's
        return out

    def root_priors(self, g=0):
        """Priors of the root's children in tree ``g`` after the last search (kernel order)."""
        return self.trees[7][g, self._root_children(g)].copy()


def pick_action(actions, visits, temperature, rng):
    """An action from root visit counts: the most visited for ``temperature == 0``
    (ties broken at random), else sampled with probability ``visits ** (1 / temperature)``."""
    visits = np.asarray(visits, np.float64)
    if temperature <= 0:
        best = np.flatnonzero(visits == visits.max())
        return int(actions[best[rng.integers(best.size)]])
    w = visits ** (1.0 / temperature)
    if w.sum() <= 0:
        w = np.ones_like(w)
    return int(actions[rng.choice(len(actions), p=w / w.sum())])


# ---------------------------------------------------------------- bot
class AlphaZeroBot(Bot):
    """PUCT search guided by a trained policy-value network.

    With ``temperature = 0`` (default) it plays the most visited root action;
    a decision with one legal action is played without search.

    ``battle`` chooses who plays the battle phase: ``"net"`` (the same search
    and network, for checkpoints trained on the whole game) or a bot spec
    such as ``"mcts:sims=200"`` or ``"alphabeta:depth=2"`` (the two-stage
    design of Li et al. (2023), for checkpoints trained on the placement phase).
    The default follows the checkpoint: ``"net"`` for a whole-game network,
    ``"mcts:sims=<sims>"`` for a placement network.
    """

    name = "alphazero"
    PARAMS = {
        "checkpoint": f"checkpoint file (default: the network shipped for the position's board size: "
                      f"{DEFAULT_CHECKPOINT.name} on 8x8, policy_jiu14.pt on 14x14)",
        "sims": "simulations per decision (default 200; with time, the most simulations: default 4000)",
        "time": "seconds per decision: simulations stop at the deadline or at sims, whichever comes first",
        "c": "PUCT exploration constant (default 3.5)",
        "temperature": "0 plays the most visited action; > 0 samples visits ** (1/temperature) (default 0)",
        "battle": "'net' or a bot spec for the battle phase (default: 'net' for a whole-game checkpoint, "
                  "'mcts:sims=<sims>' for a placement checkpoint)",
        "threads": "torch CPU threads for the whole process; 0 leaves torch's setting (default 1: one-position "
                   "evaluations of a small network are fastest on one thread)",
        "any_size": "play positions of another board size than the checkpoint was trained on (default false: "
                    "refused with a ValueError; the network has no size-dependent layer, but it learnt one board)",
    }

    def __init__(self, seed=None, checkpoint=None, sims=None, c=3.5, temperature=0.0, battle=None, threads=1,
                 any_size=False, time=None):
        if not isinstance(any_size, bool):
            raise ValueError(f"alphazero any_size must be true or false, not {any_size!r}")
        self.any_size = any_size
        if time is not None:
            time = check_param("alphazero", "time", time, 0, MAX_SECONDS, lo_open=True)
        self.time = None if time is None else float(time)
        if sims is None:
            sims = 200 if time is None else TIMED_SIMS
        sims = check_param("alphazero", "sims", sims, 1, MAX_SIMS, integer=True)
        c = check_param("alphazero", "c", c, 0, 1e6)
        temperature = check_param("alphazero", "temperature", temperature, 0, 1e6)
        threads = check_param("alphazero", "threads", threads, 0, 1024, integer=True)
        import torch

        if threads:
            torch.set_num_threads(int(threads))
        self._by_size = not checkpoint  # the shipped network for each board size
        self._battle_arg = battle
        self.sims, self.c, self.temperature = int(sims), float(c), float(temperature)
        self._load(pathlib.Path(checkpoint) if checkpoint else DEFAULT_CHECKPOINT)
        super().__init__(seed=seed)

    def _load(self, path):
        """Load the network at ``path`` and set the battle player it asks for."""
        self.checkpoint = path
        if not self.checkpoint.exists():
            raise FileNotFoundError(f"AlphaZero checkpoint {self.checkpoint} not found; train one with examples/alphazero.py")
        # the rules the network was trained under: a position of another board size is refused (_check_rules)
        self.net, self.data, self._rules = load_network(self.checkpoint)
        self.evaluate = make_evaluator(self.net)
        battle = self._battle_arg
        if battle is None:
            battle = f"mcts:sims={self.sims}" if self.data["meta"].get("phase") == "placement" else "net"
        self.battle = battle if isinstance(battle, Bot) or battle == "net" else str(battle)
        self._battle_bot = None
        if isinstance(self.battle, Bot):
            self._battle_bot = self.battle
        elif self.battle != "net":
            from . import make_bot

            self._battle_bot = make_bot(self.battle)
        self._search = None

    def version_key(self):
        """Code and weights: a new checkpoint is a new player for a tournament."""
        from ..players import file_hash

        return f"{file_hash(__file__)}+{file_hash(self.checkpoint)}"

    def restart(self, seed=None):
        super().restart(seed)
        if getattr(self, "_battle_bot", None) is not None:
            self._battle_bot.restart(int(self.rng.integers(2 ** 31)))

    def _searcher(self, state):
        n, size = int(state[K.H_N]), state.size
        s = self._search
        if s is None or s.n != n or s.nstate.shape[2] != size:
            s = self._search = PUCT(self.evaluate, n, size, 1, self.sims, self.c, **search_options(self.data))
        return s

    def _check_rules(self, state):
        """Switch to the network shipped for the state's board size (default checkpoint only); then a
        ValueError naming the checkpoint and every differing rules option when ``state`` is not on the
        board size the network was trained on (its policy and value cannot be read on another board)."""
        rules = getattr(self, "_rules", None)
        n = int(state[K.H_N])
        if getattr(self, "_by_size", False) and rules is not None and n != rules.board_size:
            path = DEFAULT_CHECKPOINT if n == 8 else SHIPPED.get(n)
            if path is not None and path.exists():
                self._load(path)
                if self._battle_bot is not None:
                    self._battle_bot.restart(int(self.rng.integers(2 ** 31)))
                rules = self._rules
        if rules is not None and n != rules.board_size and not self.any_size:
            raise ValueError(f"alphazero checkpoint {self.checkpoint}: {rules_mismatch(state, rules)}; a network "
                             f"plays the {rules.board_size}x{rules.board_size} board it was trained on "
                             "(any_size=true plays other sizes)")

    def _choose(self, state):
        self._check_rules(state)
        if self._battle_bot is not None and state[K.H_PHASE] == K.PH_BATTLE:
            return self._battle_bot.step(state)
        acts = legal_actions(state)
        if acts.size == 1:
            return int(acts[0])
        deadline = None if self.time is None else _time.perf_counter() + self.time
        (actions, visits, _), = self._searcher(state).search([state], deadline=deadline)
        return pick_action(actions, visits, self.temperature, self.rng)

    def __repr__(self):
        return (f"AlphaZeroBot(checkpoint={str(self.checkpoint)!r}, sims={self.sims}, time={self.time}, c={self.c}, "
                f"battle={self.battle!r}, seed={self.seed!r})")


__all__ = ["AlphaZeroBot", "PUCT", "build_net", "make_evaluator", "save_checkpoint", "load_checkpoint", "load_network",
           "atomic_torch_save", "CHECKPOINT_FORMAT",
           "pick_action", "terminal_value", "judge_battle", "node_value", "search_options", "DEFAULT_CHECKPOINT"]
