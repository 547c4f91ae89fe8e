"""Section ``search``: alpha-beta nodes/s and MCTS simulations/s on fixed mid-game positions.

:func:`midgame_positions` and :func:`measure_search` are also the tools of the
search scripts of ``benchmarks/`` (``bots.py``, ``alphabeta_speed.py``), so
that their figures are measured on the same positions in the same way.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .timing import Rate, Table


def midgame_positions(count: int = 3, turns: int = 30, seed: int = 7, board_size: int = 14) -> list[np.ndarray]:
    """Fixed mid-game battle states (move sub-phase): a random placement, then ``turns`` random turns (seeded)."""
    from jiu_env import Rules, kernel as K

    rules = Rules.make("competitive", board_size=board_size)
    out: list[np.ndarray] = []
    rng = np.random.default_rng(seed)
    buf = np.empty(rules.num_actions, np.int64)
    while len(out) < count:
        s = rules.new_state()
        K.random_placement(s, int(rng.integers(1 << 30)))
        while s[K.H_PHASE] == K.PH_BATTLE and s[K.H_TURNS] < turns:
            k = K.legal_actions(s, buf)
            K.apply_action(s, int(buf[rng.integers(k)]))
        if s[K.H_PHASE] == K.PH_BATTLE and s[K.H_SUB] == K.SUB_MOVE:
            out.append(s)
    return out


def search_totals(bot: Any, positions: Sequence[np.ndarray], counts: Mapping[str, Callable[[dict[str, Any]], float]],
                  load: bool = True) -> dict[str, float]:
    """Time one decision of ``bot`` on each position: the totals of ``counts`` over them, and the seconds.

    Each decision starts from a fresh search (``bot.restart(seed=0)``: no table
    or tree kept from the previous position), so that a pass over the positions
    is the same work whatever ran before it, and its counts replay exactly.
    ``counts`` names what a decision's work is, read from its ``bot.last_info``
    (``{"nodes": lambda info: info["nodes"]}``; several counts are summed in the
    same pass).  ``load`` makes one untimed decision first, which loads the
    bot's numba code; a caller that alternates several bots and has loaded
    them all already passes ``False``.

    Returns ``{name: total for each count, "wall": wall-clock seconds, "cpu": CPU seconds}``
    of the timed decisions.  The search section, :func:`measure_search` and
    ``benchmarks/alphabeta_speed.py`` all time searches with it.
    """
    clash = sorted({"wall", "cpu"} & set(counts))
    if clash:
        raise ValueError(f"count name(s) {', '.join(clash)} would overwrite the seconds of the result; "
                         "name the counts otherwise")
    if len(positions) == 0:
        raise ValueError("no positions to search: pass at least one state (midgame_positions() makes some)")
    if load:
        bot.step(positions[0])
    totals = dict.fromkeys(counts, 0.0)
    wall = cpu = 0.0
    for s in positions:
        bot.restart(seed=0)
        t0, c0 = time.perf_counter(), time.process_time()
        bot.step(s)
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        info = getattr(bot, "last_info", {}) or {}
        for name, count in counts.items():
            totals[name] += count(info)
    return {**totals, "wall": wall, "cpu": cpu}


def measure_search(bot: Any, positions: Sequence[np.ndarray], units: Callable[[dict[str, Any]], float]
                   ) -> tuple[float, float, float]:
    """Time one decision of ``bot`` on each position (after one untimed call that loads its numba code).

    ``units(last_info)`` counts the work of a decision (nodes, simulations).
    Returns (units in total, wall-clock seconds, CPU seconds); :func:`search_totals`
    does the timing, and sums several counts in one pass.
    """
    t = search_totals(bot, positions, {"units": units})
    return t["units"], t["wall"], t["cpu"]


#: the first release's alpha-beta engine: a fixed peer for the default's nodes/s, which moves with the defaults
FIRST_RELEASE_AB = "quiesce=0,lmr=false,eval=hand"


def _best_search(bot: Any, positions: Sequence[np.ndarray], units: Callable[[dict[str, Any]], float],
                 repeats: int) -> tuple[float, Rate]:
    """Work of one pass over ``positions`` and the best rate of ``repeats`` passes (as every other figure)."""
    best = Rate(0.0, 0.0)
    total = 0.0
    for _ in range(repeats):
        total, secs, cpu = measure_search(bot, positions, units)
        if total / secs > best:
            best = Rate(total / secs, total / max(cpu, 1e-9))
    return total, best


def bench_search(t: Table, cfg: dict[str, Any]) -> None:
    """Section ``search``: alpha-beta nodes/s (the first release's engine as a fixed peer) and MCTS simulations/s."""
    from jiu_env.bots import make_bot

    positions = midgame_positions()
    depth = cfg["ab_depth"]
    where = f"depth {depth} on {len(positions)} fixed mid-game positions, bot.last_info['nodes']"
    try:
        bot = make_bot(f"alphabeta:depth={depth}", seed=0)
        first = make_bot(f"alphabeta:depth={depth},{FIRST_RELEASE_AB}", seed=0)
    except (ImportError, ValueError) as e:
        t.skip("search", "alpha-beta search", f"alpha-beta bot not available ({e})")
    else:
        nodes, rate = _best_search(bot, positions, lambda info: info.get("nodes", 0), cfg["repeats"])
        if nodes:
            # The default's nodes/s moves with its settings (a quiescence node costs a move generation
            # where a plain leaf costs one evaluation); the first release's engine, measured in the same
            # run, is the peer that tells a slower search from a different one.  The ratio is of the
            # per-CPU-second rates: both are one thread, and on a loaded machine the wall-clock rate of
            # a pass of a fraction of a second follows the scheduler more than the code.
            _, frate = _best_search(first, positions, lambda info: info.get("nodes", 0), cfg["repeats"])
            ratio = rate.cpu / frate.cpu if frate.cpu else None
            t.add("search", "alpha-beta search", rate, "nodes/s",
                  ratio, "first release's engine, per CPU-s" if ratio else None,
                  note=f"make_bot('alphabeta:depth={depth}'), the current defaults; {where}")
            t.add("search", "alpha-beta search, first release's engine", frate, "nodes/s",
                  note=f"make_bot('alphabeta:depth={depth},{FIRST_RELEASE_AB}'); {where}")
        else:
            t.skip("search", "alpha-beta search", "the bot reports no node count")
    try:
        bot = make_bot(f"mcts:sims={cfg['mcts_sims']}", seed=0)
    except (ImportError, ValueError) as e:
        t.skip("search", "mcts search", f"MCTS bot not available ({type(e).__name__}: {e})")
        return
    _, rate = _best_search(bot, positions, lambda info: info.get("sims", info.get("simulations", cfg["mcts_sims"])),
                           cfg["repeats"])
    t.add("search", "mcts search", rate, "simulations/s",
          note=f"make_bot('mcts:sims={cfg['mcts_sims']}') (other parameters at their defaults) on {len(positions)} fixed mid-game positions")
