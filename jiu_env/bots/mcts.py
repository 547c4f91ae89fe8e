"""UCT Monte-Carlo tree search opponent: the one search loop with UCB1 and a static-evaluation leaf evaluator.

The search is :class:`jiu_env.bots.search.Search` over the tree of
:mod:`jiu_env.bots.search_tree` (preallocated arrays: parent, first child,
child count, action, visits, value sum, mover, minimax value; no priors),
with :class:`~jiu_env.bots.search.RolloutEvaluator` as the evaluator, which
runs inside the numba loop.  The children of a node are one contiguous
block, ordered at expansion by the tactical gain of their action (captures
and square-forming moves first, formation value in the placement phase)
with seeded random tie-breaks.  Selection is the tree's ``RULE_UCB1``:
``Q/N + c*sqrt(ln(N_parent + 1) / N)`` with ``c = sqrt(2)`` by default (Shen et al.
2021) over the first ``1 + widen*sqrt(N_parent)`` children (progressive
widening; unvisited children first, in their order).  Each decision of a turn
(move, chain jump / STOP, fly drop, capture choice) is its own tree level; a
value is stored from the point of view of the side that took the action into
the node.  What is MCTS-specific is the bot's parameters and the evaluator
(below; its numba functions are in :mod:`jiu_env.bots.leaves`): the child
ordering, the leaf values and the placement reward shaping of
``place_rollout``.

Leaves
    A new leaf gets one evaluation.  ``rollout_cap`` > 0 plays up to that many
    battle decisions first with a light policy (jumps and square-forming moves
    with probability 0.85, else uniform); a finished game scores +1/0/-1 for
    White, an unfinished one ``tanh(eval / 300)`` with the static evaluation of
    :mod:`jiu_env.bots.evaluation_fn`.  The default ``rollout_cap=0`` evaluates
    the leaf directly: on 8x8 and 10x10 games against the greedy and pattern
    bots at equal time it won clearly where rollouts of 10, 30 or 200 decisions
    lost (random moves break the formations the evaluation measures).
    Placement leaves: with ``place_rollout=true`` the rollout fills the board
    at random and stops when the placement phase ends; the result is +1/-1/0
    from the relative count of complete squares and a placement node's reward is
    ``0.7 * result + 0.3 * location``, location being +1 on the centre square
    down to -1 on the edge (Shen et al. 2021).  The default evaluates placement
    leaves with the formation values instead (double gate 800, gate 100,
    triangle 50, centre control), which beat the pattern bot from the empty
    board where the random-fill judgement did not.

Budget and reuse
    ``sims`` simulations, or ``time`` seconds (a wall clock read inside numba
    through ``objmode`` every 8 simulations), or both (whichever ends first).
    The played move is the most visited root child.

Minimax values
    With ``minimax`` = m > 0 (default 1) every node also keeps the minimax value
    of its explored subtree (:func:`~jiu_env.bots.search_tree.update_minimax`)
    and selection uses ``(1 - m) * mean + m * minimax`` as the value term
    (implicit minimax backups, Lanctot, Winands, Pepels and Sturtevant 2014).
    The mean of many static evaluations is slow to see a single refutation:
    with ``minimax=0`` (plain UCT, the first release's search) more
    simulations played *worse* on 14x14 (``mcts:sims=200`` beat
    ``mcts:sims=800`` 60.5% in the ladder), because widening opens more and more
    weak replies and capture choices whose evaluations dilute the mean of a
    good move.  With minimax values 2N beats N (``docs/bots.md`` has the
    figures, ``benchmarks/budget_scaling.py`` measures them).

Tree reuse
    Between calls the tree is
    kept (:func:`~jiu_env.bots.search_tree.find_descendant` and
    :func:`~jiu_env.bots.search_tree.reroot`): when the new state is a descendant of the previous root (found by
    replaying the visited tree paths with the right number of decisions and
    comparing the Zobrist hash, the header and the board), that subtree is moved
    to the front of the arrays and becomes the root.  The tree is only reused
    for a state under the same rules (every header slot of
    :data:`jiu_env.kernel.RULE_FIELDS` equal): a position under other rules
    gets a fresh tree, whose moves are legal there.  With a ``sims`` budget
    the bot is deterministic for a seed.

Random numbers
    numba's global ``np.random``, re-seeded at the start of every
    search with a seed the bot draws from its ``self.rng``: the
    tie-break keys of the child ordering and the rollouts.  Kept as it is so
    that seeded games do not change (see :mod:`jiu_env.bots.search_tree`).
"""

import math
import time as _time



from .. import vocab as V
from .base import MAX_NODES, MAX_SECONDS, MAX_SIMS, Bot, check_param, legal_actions
# the leaf evaluator's numba functions, importable from here as before
from .leaves import (CONTINUE_CHAIN, EVAL_SCALE, GREEDY, LOCATION_WEIGHT, PLACE_SCALE, location_score,  # noqa: F401
                     placement_result, rollout, rollout_action, white_value)
from .search import RolloutEvaluator, Search
from .search_tree import PLACEMENT_FLAG, RULE_UCB1  # noqa: F401

HDR = V.HDR


class MCTSBot(Bot):
    """UCT with array trees, capped rollouts and tree reuse (see the module doc)."""

    name = "mcts"
    PARAMS = {
        "sims": "simulations per decision, 1..1e8 (default 1000 when no time is given)",
        "time": "seconds per decision, > 0 and <= 86400",
        "c": "UCB exploration constant, 0..1e6 (default sqrt(2))",
        "rollout_cap": "battle decisions played out from a leaf before evaluating, 0..1e6 (default 0: evaluate the leaf)",
        "max_nodes": "tree capacity in nodes, 1000..1e8 (default 1,000,000)",
        "reuse": "keep the subtree of the played moves between decisions (default true)",
        "place_rollout": "placement leaves by random fill judged on squares + location (Shen et al. 2021) "
                         "instead of the formation evaluation (default false)",
        "widen": "progressive widening: N visits open the 1 + widen*sqrt(N) best-ordered children, 0..1e6 "
                 "(default 2; 0 = all)",
        "minimax": "weight of the explored tree's minimax value against the mean value in selection, 0..1 "
                   "(implicit minimax backups; default 1; 0 = plain UCT, the first release's search)",
    }

    def __init__(self, seed=None, sims=None, time=None, c=math.sqrt(2.0), rollout_cap=0,
                 max_nodes=1_000_000, reuse=True, widen=2.0, place_rollout=False, minimax=1.0):
        if sims is None and time is None:
            sims = 1000
        if sims is not None:
            sims = check_param("mcts", "sims", sims, 1, MAX_SIMS, integer=True)
        if time is not None:
            time = check_param("mcts", "time", time, 0, MAX_SECONDS, lo_open=True)
        c = check_param("mcts", "c", c, 0, 1e6)
        rollout_cap = check_param("mcts", "rollout_cap", rollout_cap, 0, 1_000_000, integer=True)
        max_nodes = check_param("mcts", "max_nodes", max_nodes, 1000, MAX_NODES, integer=True)
        widen = check_param("mcts", "widen", widen, 0, 1e6)
        minimax = check_param("mcts", "minimax", minimax, 0, 1)
        if not isinstance(place_rollout, bool):
            raise ValueError(f"mcts place_rollout must be true or false, not {place_rollout!r}")
        if not isinstance(reuse, bool):
            raise ValueError(f"mcts reuse must be true or false, not {reuse!r}")
        self.sims = sims
        self.time = None if time is None else float(time)
        self.c = float(c)
        self.rollout_cap = rollout_cap
        self.max_nodes = max_nodes
        self.reuse = reuse
        self.widen = float(widen)
        self.place_rollout = place_rollout
        self.minimax = float(minimax)
        self._search = None  # made at the first decision (the tree is large)
        self.last_info = {}
        super().__init__(seed=seed)

    def restart(self, seed=None):
        super().restart(seed)
        if getattr(self, "_search", None) is not None:
            self._search.forget()  # forget the previous game's tree
        self.last_info = {}

    def _searcher(self):
        if self._search is None:
            self._search = Search(RolloutEvaluator(self.rollout_cap, self.place_rollout), 1, self.max_nodes,
                                  RULE_UCB1, self.c, self.widen, self.minimax)
        return self._search

    def _choose(self, state):
        t0 = _time.perf_counter()
        moves = legal_actions(state)
        seed = int(self.rng.integers(0, 2**31 - 1))
        if len(moves) == 1:
            self.last_info = {"sims": 0, "reused_nodes": 0, "reused_visits": 0, "seconds": 0.0, "forced": True}
            return int(moves[0])
        search = self._searcher()
        sims = self.sims if self.sims is not None else 1 << 40
        deadline = 0.0 if self.time is None else t0 + self.time
        done, = search.run([state], sims, deadline, seed=seed, reuse=self.reuse, check_every=8)
        reused, reused_visits = search.reused[0]
        a, visits, value = search.best()
        self.last_info = {"sims": int(done), "reused_nodes": int(reused), "reused_visits": reused_visits,
                          "nodes": search.nodes(), "seconds": _time.perf_counter() - t0, "forced": False,
                          "visits": visits, "value": value}
        return a
