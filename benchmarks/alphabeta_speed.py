"""Alpha-beta nodes/s of several engine settings on the positions of ``jiu bench --only search``.

    python benchmarks/alphabeta_speed.py                      # the default variants, 2 rounds
    python benchmarks/alphabeta_speed.py --rounds 3 --specs alphabeta alphabeta:quiesce=0

``jiu bench`` reports one alpha-beta figure, nodes/s of the *current*
defaults at depth 3 on three fixed mid-game positions.  When the defaults
change (quiescence, evaluation weights, reductions), that figure moves for a
reason that is not speed: a node of the quiescence search costs a move
generation and ordering, where a plain leaf costs one evaluation.  This
script searches the bench's positions with each spec (``SPEC,depth=D``, a
fresh table per position, timed by the bench's own loop,
``jiu_env.benchmark.search_totals``), alternating the specs round by round
in one process so that a shared machine's load falls on all of them alike,
and prints for each spec: nodes, the share of them in
quiescence, wall-clock and CPU nodes/s, CPU seconds per search, and the
ratio of its nodes/s (per CPU-second) to the first spec's.  Nodes replay
exactly; seconds depend on the machine, so compare the ratios.
"""

from __future__ import annotations

import argparse

DEFAULT_SPECS = (
    "alphabeta",                                          # the current defaults
    "alphabeta:quiesce=0,lmr=false,eval=hand",            # the first release's engine
    "alphabeta:quiesce=0",                                # the current defaults without quiescence
    "alphabeta:eval=hand",                                # ... with the first release's weights
    "alphabeta:lmr=false",                                # ... without late-move reductions
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--specs", nargs="+", default=list(DEFAULT_SPECS), help="alpha-beta specs, first = reference")
    ap.add_argument("--depth", type=int, default=3, help="search depth in turns (default 3, as jiu bench)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds over all specs (default 2)")
    a = ap.parse_args()
    if a.depth < 1 or a.rounds < 1:
        ap.error("--depth and --rounds must be >= 1")

    from jiu_env.benchmark import midgame_positions, search_totals
    from jiu_env.bots import make_bot

    pos = midgame_positions()
    sep = lambda spec: "," if ":" in spec else ":"
    bots = {spec: make_bot(f"{spec}{sep(spec)}depth={a.depth}", seed=0) for spec in a.specs}
    for bot in bots.values():  # load the numba code outside the timing
        bot.step(pos[0])
    counts = {"nodes": lambda info: info["nodes"], "qnodes": lambda info: info.get("qnodes", 0)}
    rows: dict[str, list[tuple[int, int, float, float]]] = {spec: [] for spec in a.specs}
    for _ in range(a.rounds):
        for spec, bot in bots.items():
            # the bench's own timing loop: a fresh search per position, wall-clock and CPU seconds summed
            t = search_totals(bot, pos, counts, load=False)
            rows[spec].append((int(t["nodes"]), int(t["qnodes"]), t["wall"], t["cpu"]))

    ref = None
    print(f"depth {a.depth}, {len(pos)} positions (jiu_env.benchmark.midgame_positions), {a.rounds} rounds")
    print(f"{'spec':<44} {'nodes':>8} {'quiesc.':>7} {'nodes/s':>9} {'per CPU-s':>9} {'CPU s':>6} {'ratio':>6}")
    for spec, runs in rows.items():
        nodes, qnodes = runs[0][0], runs[0][1]
        wall = min(r[2] for r in runs)  # the best round of each, as the bench's best-of-repeats
        cpu = min(r[3] for r in runs)
        per_cpu = nodes / cpu
        ref = per_cpu if ref is None else ref
        print(f"{spec:<44} {nodes:>8,} {qnodes / max(nodes, 1):>7.0%} {nodes / wall:>9,.0f} {per_cpu:>9,.0f} "
              f"{cpu:>6.2f} {per_cpu / ref:>6.2f}")


if __name__ == "__main__":
    main()
