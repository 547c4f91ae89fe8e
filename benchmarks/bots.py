"""Search-bot speed and the strength ladder, in one command.

Run from the repository root::

    python benchmarks/bots.py --quick                      # a few minutes: small budgets, 2 games per pair
    python benchmarks/bots.py --games 100 --time 0.1 --workers 2
    python benchmarks/bots.py --skip-ladder                # speed figures only

1. **Speed** on fixed, seeded mid-game 14x14 battle positions (a random
   placement, then 30 random battle turns): alpha-beta nodes per second at a
   fixed depth, MCTS simulations per second with the default leaf evaluation,
   with 100-decision rollouts, and with rollouts played to the end of the game
   ("full playouts").  Rates are given per wall-clock second and per CPU
   second of this process (the CPU figure is the fairer one on a shared machine).
2. **Ladder** on 14x14 ``competitive`` rules: greedy, pattern, alphabeta and
   mcts each against random, alphabeta and mcts each against pattern, and
   alphabeta against mcts.  ``--games`` per pair, colours alternating (the
   first-named bot is White in even games), every game seeded.  Search bots get
   ``--time`` seconds per decision (``alphabeta:time=T``, ``mcts:time=T``;
   override with ``--alphabeta`` / ``--mcts`` specs, e.g. ``--alphabeta
   alphabeta:depth=3`` for a machine-independent budget).

Results are printed and written to ``OUT/bots.json`` and ``OUT/bots.md``
(``OUT`` defaults to ``benchmarks/results``).  A bot that cannot be built
(for example a module missing from the tree) has its pairs skipped with the
reason in the table.
"""

import argparse
import json
import math
import multiprocessing as mp
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

from jiu_env.benchmark import midgame_positions

PAIRS = (("greedy", "random"), ("pattern", "random"), ("alphabeta", "random"), ("mcts", "random"),
         ("alphabeta", "pattern"), ("mcts", "pattern"), ("alphabeta", "mcts"))


# ------------------------------------------------------------------ positions
# ---------------------------------------------------------------------- speed
def _measure(spec, positions, key):
    from jiu_env.benchmark import measure_search
    from jiu_env.bots import make_bot

    total, wall, cpu = measure_search(make_bot(spec, seed=0), positions, lambda info: info[key])
    return {"spec": spec, key: int(total), "wall_s": wall, "cpu_s": cpu,
            "per_wall_s": total / wall, "per_cpu_s": total / max(cpu, 1e-9)}


def speed(quick):
    """Alpha-beta nodes/s and MCTS simulations/s on the fixed positions."""
    positions = midgame_positions(count=4)
    depth = 3 if quick else 4
    sims = 500 if quick else 2000
    rows = [("alpha-beta", "nodes", _measure(f"alphabeta:depth={depth}", positions, "nodes"))]
    for label, extra in (("mcts, leaf evaluation (default)", ""), ("mcts, 100-decision rollouts", ",rollout_cap=100"),
                         ("mcts, full playouts", ",rollout_cap=1000000")):
        rows.append((label, "sims", _measure(f"mcts:sims={sims}{extra}", positions, "sims")))
    return [{"what": w, "unit": f"{u}/s", **m} for w, u, m in rows]


# --------------------------------------------------------------------- ladder
def _play_one(task):
    """One ladder game in a worker: returns a small dict (result from the first bot's side)."""
    from jiu_env.bots import make_bot
    from jiu_env.bots.match import play_game

    pair, a_spec, b_spec, game, seed = task
    a = make_bot(a_spec, seed=seed)
    b = make_bot(b_spec, seed=seed + 1)
    a_white = game % 2 == 0
    t0 = time.perf_counter()
    g = play_game("competitive", a if a_white else b, b if a_white else a, seed=seed, record=False)
    res = g.result if a_white else -g.result
    return {"pair": pair, "game": game, "a_white": a_white, "result": res, "reason": g.end_reason,
            "battle_turns": g.battle_turns, "decisions": g.decisions,
            "seconds": time.perf_counter() - t0,
            "a_seconds": g.time["white"] if a_white else g.time["black"],
            "b_seconds": g.time["black"] if a_white else g.time["white"]}


def _check_bot(spec):
    from jiu_env.bots import make_bot

    try:
        make_bot(spec, seed=0)
    except Exception as e:  # a bot module that is missing or broken: skip its pairs
        return f"{type(e).__name__}: {e}"
    return None


def wilson(wins, n, z=1.96):
    """95% Wilson interval of a win rate (draws count half)."""
    if n == 0:
        return (0.0, 0.0)
    p = wins / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def ladder(games, specs, workers, seed=2024):
    """Play every pair; return the per-pair summaries and the raw games."""
    tasks, skipped = [], {}
    for i, (a, b) in enumerate(PAIRS):
        pair = f"{a} vs {b}"
        bad = _check_bot(specs[a]) or _check_bot(specs[b])
        if bad:
            skipped[pair] = bad
            print(f"  skipping {pair}: {bad}", flush=True)
            continue
        for g in range(games):
            tasks.append((pair, specs[a], specs[b], g, seed + 1000 * i + 2 * g))
    results = []
    t0 = time.perf_counter()
    if workers > 1 and len(tasks) > 1:
        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
        with ctx.Pool(workers) as pool:
            for r in pool.imap_unordered(_play_one, tasks):
                results.append(r)
                _progress(r, len(results), len(tasks), t0)
    else:
        for t in tasks:
            r = _play_one(t)
            results.append(r)
            _progress(r, len(results), len(tasks), t0)
    wall = time.perf_counter() - t0
    summary = []
    for a, b in PAIRS:
        pair = f"{a} vs {b}"
        if pair in skipped:
            summary.append({"pair": pair, "a": specs[a], "b": specs[b], "skipped": skipped[pair]})
            continue
        rs = [r for r in results if r["pair"] == pair]
        w = sum(r["result"] > 0 for r in rs)
        d = sum(r["result"] == 0 for r in rs)
        l_ = sum(r["result"] < 0 for r in rs)
        n = len(rs)
        lo, hi = wilson(w + 0.5 * d, n)
        reasons = {}
        for r in rs:
            reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
        summary.append({
            "pair": pair, "a": specs[a], "b": specs[b], "games": n, "wins": w, "draws": d, "losses": l_,
            "score": (w + 0.5 * d) / n if n else 0.0, "ci95": [lo, hi],
            "mean_battle_turns": float(np.mean([r["battle_turns"] for r in rs])) if rs else 0.0,
            "mean_game_seconds": float(np.mean([r["seconds"] for r in rs])) if rs else 0.0,
            "a_seconds_per_decision": sum(r["a_seconds"] for r in rs) / max(1, sum(r["decisions"] for r in rs) / 2),
            "reasons": reasons,
        })
    return summary, results, wall


def _progress(r, done, total, t0):
    el = time.perf_counter() - t0
    print(f"  [{done}/{total}] {r['pair']} game {r['game']}: {'+' if r['result'] > 0 else ('=' if r['result'] == 0 else '-')}"
          f" ({r['reason']}, {r['battle_turns']} turns, {r['seconds']:.0f}s; {el:.0f}s elapsed)", flush=True)


# -------------------------------------------------------------------- output
def markdown(report):
    lines = ["# Search bots: speed and strength ladder", ""]
    m = report["machine"]
    lines.append(f"Machine: {m['cpus']} CPUs, load average {m['load']} at the start; Python {m['python']}.")
    lines += ["", "## Speed (fixed mid-game 14x14 battle positions)", "",
              "| what | bot | total | wall s | CPU s | per wall s | per CPU s |", "|---|---|---:|---:|---:|---:|---:|"]
    for r in report["speed"]:
        key = "nodes" if "nodes" in r else "sims"
        lines.append(f"| {r['what']} | `{r['spec']}` | {r[key]:,} {key} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | "
                     f"{r['per_wall_s']:,.0f} {r['unit']} | {r['per_cpu_s']:,.0f} {r['unit']} |")
    if report.get("ladder"):
        lg = report["ladder"]
        lines += ["", f"## Ladder: 14x14 competitive, {lg['games']} games per pair, colours alternating", "",
                  f"Budgets: {', '.join(f'`{s}`' for s in lg['specs'].values())}. "
                  f"Wall time {lg['wall_s']:.0f} s with {lg['workers']} worker(s).", "",
                  "| pair | W | D | L | score | 95% CI | mean battle turns | s/game | s/decision (first bot) | endings |",
                  "|---|---:|---:|---:|---:|---|---:|---:|---:|---|"]
        for p in lg["pairs"]:
            if "skipped" in p:
                lines.append(f"| {p['pair']} | – | – | – | – | – | – | – | – | skipped: {p['skipped']} |")
                continue
            ends = ", ".join(f"{k} {v}" for k, v in sorted(p["reasons"].items()))
            lines.append(f"| {p['pair']} | {p['wins']} | {p['draws']} | {p['losses']} | {p['score']:.2f} | "
                         f"{p['ci95'][0]:.2f}–{p['ci95'][1]:.2f} | {p['mean_battle_turns']:.0f} | "
                         f"{p['mean_game_seconds']:.0f} | {p['a_seconds_per_decision']:.3f} | {ends} |")
        if lg.get("estimate"):
            lines += ["", lg["estimate"]]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=100, help="games per pair (default 100)")
    ap.add_argument("--time", type=float, default=0.1, help="seconds per decision for the search bots (default 0.1)")
    ap.add_argument("--workers", type=int, default=1, help="processes playing games in parallel (default 1)")
    ap.add_argument("--quick", action="store_true", help="2 games per pair, 0.02 s per decision, smaller speed runs")
    ap.add_argument("--alphabeta", default=None, help="alpha-beta spec instead of alphabeta:time=T")
    ap.add_argument("--mcts", default=None, help="MCTS spec instead of mcts:time=T")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--skip-ladder", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args(argv)
    games, tbudget = args.games, args.time
    if args.quick:
        games = 2 if args.games == 100 else args.games
        tbudget = 0.02 if args.time == 0.1 else args.time
    if games < 1 or tbudget <= 0 or args.workers < 1:
        ap.error("--games and --workers must be >= 1 and --time > 0")
    specs = {"random": "random", "greedy": "greedy", "pattern": "pattern",
             "alphabeta": args.alphabeta or f"alphabeta:time={tbudget:g}",
             "mcts": args.mcts or f"mcts:time={tbudget:g}"}
    report = {"machine": {"cpus": os.cpu_count(), "load": [round(x, 2) for x in os.getloadavg()],
                          "python": platform.python_version(), "platform": platform.platform()},
              "command": " ".join([Path(sys.argv[0]).name] + (argv if argv is not None else sys.argv[1:]))}
    if not args.skip_speed:
        print("speed (fixed mid-game 14x14 positions):", flush=True)
        report["speed"] = speed(args.quick)
        for r in report["speed"]:
            print(f"  {r['what']:<34} {r['per_wall_s']:>12,.0f} {r['unit']} (wall)  {r['per_cpu_s']:>12,.0f} {r['unit']} (CPU)"
                  f"   [{r['spec']}]", flush=True)
    else:
        report["speed"] = []
    if not args.skip_ladder:
        print(f"ladder: {games} games per pair, budgets {specs['alphabeta']} / {specs['mcts']}, "
              f"{args.workers} worker(s)", flush=True)
        pairs, games_raw, wall = ladder(games, specs, args.workers)
        played = [p for p in pairs if "skipped" not in p]
        per_game = {p["pair"]: p["mean_game_seconds"] for p in played}
        est = ""
        if per_game:
            full = sum(per_game.values()) * 100 / args.workers
            est = (f"Estimated time of a 100-games-per-pair run at these budgets with {args.workers} worker(s): "
                   f"{full / 3600:.1f} h (sum over pairs of the mean game time here x 100 / workers).")
        report["ladder"] = {"games": games, "workers": args.workers, "specs": specs, "pairs": pairs,
                            "wall_s": wall, "estimate": est, "results": games_raw}
        print()
        for p in pairs:
            if "skipped" in p:
                print(f"  {p['pair']:<22} skipped ({p['skipped']})")
            else:
                print(f"  {p['pair']:<22} W {p['wins']:>3}  D {p['draws']:>3}  L {p['losses']:>3}   score {p['score']:.2f}"
                      f"  [{p['ci95'][0]:.2f}, {p['ci95'][1]:.2f}]  {p['mean_battle_turns']:.0f} turns  {p['mean_game_seconds']:.0f} s/game")
        if est:
            print("\n" + est)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bots.json").write_text(json.dumps(report, indent=1))
    (out / "bots.md").write_text(markdown(report))
    print(f"\nwrote {out / 'bots.json'} and {out / 'bots.md'}")
    return report


if __name__ == "__main__":
    main()
