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
- **Search** (:class:`PUCT`): the one search loop of
  :mod:`jiu_env.bots.search` over the shared array tree of
  :mod:`jiu_env.bots.search_tree` (with priors), with ``RULE_PUCT``
  selection, ``Q + c * P * sqrt(N_parent) / (1 + N)`` with ``c = 3.5`` (Li et
  al. 2023), ``N_parent`` the sum of the children's visits and unvisited
  children valued ``fpu`` (0 by default); the leaf evaluator is the network
  (:class:`NetworkEvaluator`).  One search object runs many trees at once
  (one per self-play game, rows of 2-D tree arrays) and sends their leaves
  to the network in one batch; a leaf's position is replayed from the root
  along its path.  One tree can also send several leaves a round
  (``batch``): each pending leaf's path holds a virtual loss, so that the
  next descent of the round looks elsewhere; a network on one CPU core
  costs about a third as much a position in batches of 8 as one by one,
  so a decision on a clock makes about 2.8 times the simulations.  Values
  are backed up for White and signed by the side that decided at each
  node, so a side deciding several times in a row (chains, drops,
  captures) is handled like any other decision.  For
  self-play: Dirichlet noise at the root, and either an adjudication (a
  battle turn after which a position counts as finished, scored by the stone
  difference) or, for placement training, battle positions valued by
  :func:`judge_battle`.
- **Bot** (:class:`AlphaZeroBot`): loads a checkpoint and plays through the
  bot protocol of :mod:`jiu_env.bots.base` (``make_bot("alphazero:sims=200")``),
  every decision type; the battle of a placement checkpoint goes to a bot
  named by ``battle`` (MCTS by default).  A second network can search the
  battle (``battle_checkpoint``): by default, as for the ``policy`` player,
  the battle network shipped for the board size where there is one, since
  the network that places best is not the one that battles best.

The training loop is ``examples/alphazero.py``; ``docs/alphazero.md`` has the
design choices and measured results.
"""

import os
import pathlib
import time as _time

import numpy as np
from numba import njit

from .. import vocab as V
from ..observation import NUM_PLANES, write_observation
from .base import MAX_NODES, MAX_SECONDS, MAX_SIMS, Bot, check_param, legal_actions
from ..validate import check_int
# the network and its checkpoints (jiu_env.bots.network), also importable from here as before
from .network import (CHECKPOINT_FORMAT, DEFAULT_CHECKPOINT, SHIPPED, SHIPPED_BATTLE, atomic_torch_save, build_net, load_checkpoint,
                      load_network, make_evaluator, rules_mismatch, save_checkpoint, search_options)
# the final-position values (jiu_env.bots.leaves), importable from here as before
from .leaves import judge_battle, node_value, terminal_value  # noqa: F401
from .features import FEATURE_PLANES, check_features, write_net_inputs
from .search import MAX_DEPTH, Evaluator, Search
from .search_tree import RULE_PUCT, T_ACTION, T_PRIOR, T_VISITS, T_WSUM

TIMED_SIMS = 4000  # the most simulations of a decision with a time budget (the tree is sized by it)
# Leaves of one search a forward pass with a time budget: on one core the shipped 14x14 networks make about
# 2.8 times the simulations a second in batches of 8 as one by one (4: 2.5 times, 16: 3.0 times), for little
# virtual-loss distortion at hundreds of simulations a decision.  A sims budget keeps one leaf a pass, the
# search its seeded games were recorded with.
TIMED_BATCH = 8
# The shipped 8x8 baseline is package data, so the default works after a normal install
# (it is the same file as baselines/alphazero/jiu8.pt in the repository).


# ---------------------------------------------------------------- search
@njit(cache=True)
def write_observations(states, obs):
    """The planes of each state for its side to move (``obs[i]`` for ``states[i]``)."""
    for i in range(states.shape[0]):
        s = states[i]
        write_observation(s, s[V.H_TO_MOVE], obs[i])


class NetworkEvaluator(Evaluator):
    """The :class:`~jiu_env.bots.search.Evaluator` of a policy-value network: ``evaluate(obs) ->
    (logits, values)`` on the observation planes of a batch of leaves (one forward pass per round of
    the search, whatever the number of trees)."""

    priors = True

    def __init__(self, evaluate):
        self.evaluate_planes = evaluate
        #: the input planes the network reads (``evaluate.features``, :mod:`jiu_env.bots.features`)
        self.features = check_features(getattr(evaluate, "features", "planes"))

    def evaluate(self, states):
        n = int(states[0, V.H_N])
        obs = np.zeros((states.shape[0], n, n, FEATURE_PLANES[self.features]), np.float32)
        if self.features == "planes":
            write_observations(states, obs)
        else:
            write_net_inputs(states, True, obs)
        return self.evaluate_planes(obs)

    def __repr__(self):
        return f"NetworkEvaluator({self.evaluate_planes!r})"


class PUCT:
    """Batched PUCT search over ``num_trees`` independent trees: the one search loop
    (:class:`jiu_env.bots.search.Search`) with ``RULE_PUCT`` and a :class:`NetworkEvaluator`.

    ``evaluate(obs) -> (logits, values)`` maps float32 planes ``(B, N, N, 21)``
    to float32 logits ``(B, 10*N*N+1)`` over the flat actions and values
    ``(B,)`` in [-1, 1] for the side to move.  ``state_size`` is the length of
    the kernel states searched (all trees use the same rules).
    ``adjudicate_turns`` / ``adjudicate_margin``: see :func:`terminal_value`;
    ``judge_turns > 0`` makes every battle position a leaf valued by
    :func:`judge_battle` (placement-only search).  ``batch``: leaves of each tree evaluated in one
    forward pass, spread over the tree by a virtual loss (:class:`~jiu_env.bots.search.Search`).
    """

    def __init__(self, evaluate, board_size, state_size, num_trees=1, sims=200, c_puct=3.5, fpu=0.0,
                 adjudicate_turns=0, adjudicate_margin=4.0, judge_turns=0, judge_playouts=1, batch=1):
        n = int(board_size)
        p_ = n * n
        self.evaluate = evaluate
        self.n, self.sims, self.c_puct, self.fpu = n, int(sims), float(c_puct), float(fpu)
        self.state_size = int(state_size)
        self.adj_turns, self.adj_margin = int(adjudicate_turns), float(adjudicate_margin)
        self.judge_turns, self.judge_playouts = int(judge_turns), int(judge_playouts)
        g, m = int(num_trees), int(sims) + 2
        # one tree per state searched: the root and up to e children (the root can always be expanded), at
        # most MAX_NODES (a full tree values its leaves without expanding them); a path is at most one node
        # per round, and at most MAX_DEPTH (a leaf there is valued where it is)
        e = min(m * p_ + V.num_actions(n), MAX_NODES - 1)
        self.num_trees = g
        self.searcher = Search(NetworkEvaluator(evaluate), g, e + 1, RULE_PUCT, self.c_puct, self.fpu,
                               adjudicate_turns=self.adj_turns, adjudicate_margin=self.adj_margin,
                               judge_turns=self.judge_turns, judge_playouts=self.judge_playouts,
                               max_depth=min(m, MAX_DEPTH), batch=batch)
        self.trees = self.searcher.trees

    def _root_children(self, g):
        """Slice of the root's children in the rows of tree ``g``."""
        return self.searcher.root_children(g)

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
        for s in states:
            if int(s[V.H_N]) != self.n or s.size != self.state_size:
                raise ValueError(f"a PUCT search for {self.n}x{self.n} states of length {self.state_size} cannot "
                                 f"search a {int(s[V.H_N])}x{int(s[V.H_N])} state of length {s.size}")
        noise = (rng, dirichlet_alpha, dirichlet_eps) if dirichlet_eps > 0 else None
        self.searcher.run(states, self.sims, deadline, noise=noise)
        out = []
        action, visits, wsum = self.trees[T_ACTION], self.trees[T_VISITS], self.trees[T_WSUM]
        for g in range(k):
            r = self._root_children(g)
            vis = visits[g, r].astype(np.int64)
            tot = max(int(vis.sum()), 1)
            q = float(wsum[g, r].sum()) / tot
            out.append((action[g, r].astype(np.int64), vis, q))  # child values are the root mover's
        return out

    def root_priors(self, g=0):
        """Priors of the root's children in tree ``g`` after the last search (kernel order)."""
        return self.trees[T_PRIOR][g, self._root_children(g)].copy()


def pick_action(actions, visits, temperature, rng):
    """An action from root visit counts: the most visited for ``temperature == 0``
    (ties broken at random), else sampled with probability ``visits ** (1 / temperature)``."""
    visits = np.asarray(visits, np.float64)
    if temperature <= 0:
        best = np.flatnonzero(visits == visits.max())
        return int(actions[best[rng.integers(best.size)]])
    with np.errstate(over="ignore"):
        w = visits ** (1.0 / temperature)
    if not np.isfinite(w.sum()):  # a small temperature overflows: the same weights, scaled by the largest
        with np.errstate(divide="ignore"):
            w = np.exp((np.log(visits) - np.log(visits.max())) / temperature)
    if w.sum() <= 0:
        w = np.ones_like(w)
    return int(actions[rng.choice(len(actions), p=w / w.sum())])


# ---------------------------------------------------------------- bot
class AlphaZeroBot(Bot):
    """PUCT search guided by a trained policy-value network.

    With ``temperature = 0`` (default) it plays the most visited root action;
    a decision with one legal action is played without search.  With a
    ``time`` budget the search evaluates ``batch`` leaves a forward pass
    (default 8; module doc), with ``sims`` alone one leaf a pass.

    ``battle`` chooses who plays the battle phase: ``"net"`` (the same search
    and network, for checkpoints trained on the whole game) or a bot spec
    such as ``"mcts:sims=200"`` or ``"alphabeta:depth=2"`` (the two-stage
    design of Li et al. (2023), for checkpoints trained on the placement phase).
    The default follows the checkpoint: ``"net"`` for a whole-game network,
    ``"mcts:sims=<sims>"`` for a placement network.

    With ``battle="net"``, ``battle_checkpoint`` names the network searched on
    battle positions (a search of a placement position keeps the checkpoint's
    network to its leaves, battle ones included).  Without ``checkpoint`` and
    ``battle_checkpoint``, the networks shipped for the board size play: on
    14x14 ``policy_jiu14.pt`` places and ``policy_jiu14_battle.pt`` battles,
    the pair the default ``policy`` plays.
    """

    name = "alphazero"
    PARAMS = {
        "checkpoint": f"checkpoint file (default: the network shipped for the position's board size: "
                      f"{DEFAULT_CHECKPOINT.name} on 8x8, policy_jiu14.pt on 14x14)",
        "sims": "simulations per decision (default 200; with time, the most simulations: default 4000); the "
                "tree holds up to sims * board points nodes, at most 1e8 (about 37 bytes each)",
        "time": "seconds per decision: simulations stop at the deadline or at sims, whichever comes first",
        "c": "PUCT exploration constant (default 3.5)",
        "batch": f"leaves of one search evaluated in one forward pass, spread over the tree by a virtual loss, "
                 f"1..256 (default {TIMED_BATCH} with time, where it buys simulations; 1 with sims alone)",
        "temperature": "0 plays the most visited action; > 0 samples visits ** (1/temperature) (default 0)",
        "battle": "'net' or a bot spec for the battle phase (default: 'net' for a whole-game checkpoint, "
                  "'mcts:sims=<sims>' for a placement checkpoint)",
        "battle_checkpoint": "network the search runs on battle positions with battle=net (default: with no "
                             "checkpoint, the battle network shipped for the board size, e.g. "
                             "policy_jiu14_battle.pt; else checkpoint); 'none': one network for both phases",
        "threads": "torch CPU threads for the whole process; 0 leaves torch's setting (default 1: one-position "
                   "evaluations of a small network are fastest on one thread)",
        "any_size": "play positions of another board size than the checkpoint was trained on (default false: "
                    "refused with a ValueError; the network has no size-dependent layer, but it learnt one board)",
    }

    def __init__(self, seed=None, checkpoint=None, sims=None, c=3.5, temperature=0.0, battle=None, threads=1,
                 any_size=False, time=None, battle_checkpoint=None, batch=None):
        check_int("seed", seed, 0, or_none=True)  # before a network is loaded and torch's threads are set
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
        if batch is None:
            batch = 1 if time is None else TIMED_BATCH
        self.batch = int(check_param("alphazero", "batch", batch, 1, 256, integer=True))
        temperature = check_param("alphazero", "temperature", temperature, 0, 1e6)
        threads = check_param("alphazero", "threads", threads, 0, 1024, integer=True)
        if checkpoint is not None and (not isinstance(checkpoint, (str, os.PathLike)) or not str(checkpoint)):
            # an empty or numeric value (an unset shell variable: checkpoint=$CKPT) played the shipped network
            raise ValueError(f"alphazero checkpoint must be a path to a network file, not {checkpoint!r}")
        if battle_checkpoint is not None and (not isinstance(battle_checkpoint, (str, pathlib.Path))
                                              or not str(battle_checkpoint)):
            raise ValueError(f"alphazero battle_checkpoint must be a path or 'none', not {battle_checkpoint!r}")
        none = battle_checkpoint is not None and str(battle_checkpoint).lower() == "none"
        if battle_checkpoint is not None and not none and battle is not None and battle != "net":
            raise ValueError(f"alphazero battle_checkpoint={battle_checkpoint} is the network the search runs in the "
                             f"battle, but battle={battle!r} gives the battle to another player; give one of them")
        self._by_size = checkpoint is None  # the shipped network for each board size
        self._battle_arg = battle
        # with no checkpoint and no battle_checkpoint the battle network shipped for the board size searches the
        # battle (as for `policy`); 'none' or a checkpoint alone: one network for both phases
        self._battle_path = None if none or battle_checkpoint is None else pathlib.Path(battle_checkpoint)
        self._shipped_battle = checkpoint is None and battle_checkpoint is None
        self.sims, self.c, self.temperature = int(sims), float(c), float(temperature)
        self._load(pathlib.Path(checkpoint) if checkpoint is not None else DEFAULT_CHECKPOINT)
        self._seeds_battle = self._battle_bot is not None  # restart draws the battle player's seed (restart)
        if threads:  # once the networks have loaded: a constructor that fails leaves the process's setting alone
            import torch

            torch.set_num_threads(int(threads))
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
        if battle is None:  # a placement network gives the battle to MCTS, on this bot's budget; a battle
            # network named (battle_checkpoint) is searched, whatever the checkpoint (it was ignored)
            placement = self.data["meta"].get("phase") == "placement" and self._battle_path is None
            budget = f"sims={self.sims}" + ("" if self.time is None else f",time={self.time!r}")
            battle = f"mcts:{budget}" if placement else "net"
        self.battle = battle if isinstance(battle, Bot) or battle == "net" else str(battle)
        self._battle_bot = None
        if isinstance(self.battle, Bot):
            self._battle_bot = self.battle
        elif self.battle != "net":
            from . import make_bot

            self._battle_bot = make_bot(self.battle)
        # the network of battle positions: a battle_checkpoint, or the one shipped for this board size
        self.battle_checkpoint = self._battle_path
        if self.battle_checkpoint is None and self._shipped_battle and self._battle_bot is None:
            shipped = SHIPPED_BATTLE.get(self._rules.board_size) if self._rules is not None else None
            self.battle_checkpoint = shipped if shipped is not None and shipped.exists() else None
        self._battle_evaluate = self._battle_rules = None
        if self.battle_checkpoint is not None and self._battle_bot is None:
            if not self.battle_checkpoint.exists():
                raise FileNotFoundError(f"alphazero battle_checkpoint {self.battle_checkpoint} not found")
            battle_net, battle_data, self._battle_rules = load_network(self.battle_checkpoint)
            self._battle_evaluate = make_evaluator(battle_net)
            self._battle_options = search_options(battle_data)
        self._search = self._battle_search = None

    def version_key(self):
        """Code and weights: a new checkpoint is a new player for a tournament.  The code is this module's
        and the bot modules it imports (:func:`jiu_env.players.source_hash`); the weights are the
        checkpoint's, or without one every network shipped, since the network is chosen by board size
        when the first position is seen; a battle player's version counts too."""
        from ..players import file_hash, player_version, source_hash

        paths = [self.checkpoint] if not self._by_size else [DEFAULT_CHECKPOINT, *SHIPPED.values()]
        if self._battle_path is not None:
            paths.append(self._battle_path)
        elif self._shipped_battle:
            paths += list(SHIPPED_BATTLE.values())
        keys = [source_hash(type(self)), *(file_hash(p) for p in dict.fromkeys(paths) if p.exists())]
        if self._battle_bot is not None:
            keys.append(player_version(self._battle_bot))
        return "+".join(keys)

    def restart(self, seed=None):
        super().restart(seed)
        # the battle player's seed is drawn as a new bot draws it: when the network it was built with has a
        # battle player, whatever network is loaded now, and kept for a battle player of a later switch of
        # board size; restart(seed) then plays as a bot built with that seed, whatever it played before
        self._battle_seed = int(self.rng.integers(2 ** 31)) if getattr(self, "_seeds_battle", False) else None
        if getattr(self, "_battle_bot", None) is not None:
            self._battle_bot.restart(self._next_battle_seed())

    def _next_battle_seed(self):
        return self._battle_seed if self._battle_seed is not None else int(self.rng.integers(2 ** 31))

    def _searcher(self, state):
        """The search of ``state``'s phase: over the battle network for a battle position when there is one."""
        n, size = int(state[V.H_N]), state.size
        if self._battle_evaluate is not None and state[V.H_PHASE] == V.PH_BATTLE:
            s = self._battle_search
            if s is None or s.n != n or s.state_size != size:
                s = self._battle_search = PUCT(self._battle_evaluate, n, size, 1, self.sims, self.c,
                                               batch=self.batch, **self._battle_options)
            return s
        s = self._search
        if s is None or s.n != n or s.state_size != size:
            s = self._search = PUCT(self.evaluate, n, size, 1, self.sims, self.c, batch=self.batch,
                                    **search_options(self.data))
        return s

    def _check_rules(self, state):
        """Switch to the network shipped for the state's board size (default checkpoint only); then a
        ValueError naming the checkpoint and every differing rules option when ``state`` is not on the
        board size the network was trained on (its policy and value cannot be read on another board)."""
        rules = getattr(self, "_rules", None)
        n = int(state[V.H_N])
        if getattr(self, "_by_size", False) and rules is not None and n != rules.board_size:
            path = DEFAULT_CHECKPOINT if n == 8 else SHIPPED.get(n)
            if path is not None and path.exists():
                self._load(path)
                if self._battle_bot is not None:
                    self._battle_bot.restart(self._next_battle_seed())
                rules = self._rules
        for what, path, rules in (("checkpoint", self.checkpoint, rules),
                                  ("battle_checkpoint", self.battle_checkpoint, self._battle_rules)):
            if rules is not None and n != rules.board_size and not self.any_size:
                raise ValueError(f"alphazero {what} {path}: {rules_mismatch(state, rules)}; a network plays the "
                                 f"{rules.board_size}x{rules.board_size} board it was trained on "
                                 "(any_size=true plays other sizes)")

    def _choose(self, state):
        self._check_rules(state)
        if self._battle_bot is not None and state[V.H_PHASE] == V.PH_BATTLE:
            return self._battle_bot.step(state)
        acts = legal_actions(state)
        if acts.size == 1:
            return int(acts[0])
        deadline = None if self.time is None else _time.perf_counter() + self.time
        (actions, visits, _), = self._searcher(state).search([state], deadline=deadline)
        return pick_action(actions, visits, self.temperature, self.rng)

    def __repr__(self):
        battle_checkpoint = None if self.battle_checkpoint is None else str(self.battle_checkpoint)
        return (f"AlphaZeroBot(checkpoint={str(self.checkpoint)!r}, battle_checkpoint={battle_checkpoint!r}, "
                f"sims={self.sims}, time={self.time}, c={self.c}, batch={self.batch}, battle={self.battle!r}, "
                f"seed={self.seed!r})")


__all__ = ["AlphaZeroBot", "PUCT", "NetworkEvaluator", "write_observations", "build_net", "make_evaluator", "save_checkpoint", "load_checkpoint", "load_network",
           "atomic_torch_save", "CHECKPOINT_FORMAT",
           "pick_action", "terminal_value", "judge_battle", "node_value", "search_options", "DEFAULT_CHECKPOINT"]
