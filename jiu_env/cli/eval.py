"""``jiu eval``: a tournament between bots / models with Elo ratings and reports (:mod:`jiu_env.evaluation`)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time

import numpy as np

from .common import _add_rules_args, _err, _rules_from_args, int_at_least, rules_flags, rules_flags_given, writable_dir


QUICK_PLAYERS = [
    ("random", "random"),
    ("greedy", "greedy"),
    ("pattern", "pattern"),
    ("alphabeta", "alphabeta:depth=1"),
    ("mcts", "mcts:sims=100"),
]
QUICK_GAMES = 4
QUICK_OPENING = 4
CI_TARGET = 50.0  # Elo: the interval half-width the baseline ladder aims at
SPRT_GAMES = 1000  # the most games of an SPRT match when --games is not given


def _eval_args(p):
    p.add_argument("players", nargs="*", metavar="PLAYER",
                   help="player specs: a built-in bot ('random', 'alphabeta:depth=2'), 'sb3:MODEL.zip', "
                        "'alphazero:CHECKPOINT', 'module:Class' or 'file.py:Class'; 'NAME=SPEC' names a player")
    p.add_argument("--config", metavar="FILE",
                   help="tournament config: a TOML or JSON file, or the name of one shipped with jiu_env (ladder, "
                        "ladder8, ladder_time: the baseline ladders), e.g. --config ladder")
    p.add_argument("--quick", action="store_true",
                   help=f"preset: the built-in bots with small budgets on 14x14, {QUICK_GAMES} games per pair, "
                        "random unrated, greedy = 0 Elo (about half a minute on 2 cores; under a minute the first time, "
                        "when numba compiles)")
    p.add_argument("--games", type=int_at_least(1), metavar="N", help="games per pair, colours alternating (default 2)")
    p.add_argument("--gauntlet", nargs="+", metavar="NAME",
                   help="gauntlet: only these players meet every other player (default: round robin)")
    _add_rules_args(p)
    p.add_argument("--seed", type=int_at_least(0), help="tournament seed (default 0)")
    p.add_argument("--random-opening", type=int_at_least(0), metavar="K", help="first K placements drawn at random (default 0)")
    p.add_argument("--openings", metavar="SUITE",
                   help="opening suite: a shipped one (jiu14, jiu8) or a file (one opening per line in move "
                        "notation, a JSON list, records, a games.jsonl); game pair k of every pair of players starts "
                        "from opening k (cycling), once with each colour; not with --random-opening")
    p.add_argument("--tc", type=_seconds, metavar="SECONDS",
                   help="time control: SECONDS per turn, given as time= to every player that takes a time budget "
                        "(alphabeta, mcts, alphazero); the players it cannot reach are named")
    p.add_argument("--anchor", help="rated 0: a player name, 'mean', or 'auto' (random if present, else mean)")
    p.add_argument("--unrated", nargs="+", metavar="NAME",
                   help="players that play but stay out of the Elo fit (e.g. a reference that loses every game)")
    p.add_argument("--bootstrap", type=int_at_least(2), metavar="SAMPLES",
                   help="Elo intervals from a seeded bootstrap with SAMPLES refits (default: Fisher information)")
    p.add_argument("--workers", type=int_at_least(1), metavar="W",
                   help="worker processes (default: all cores; at most one per game left to play; "
                        "with --backend ray: the cluster's CPUs)")
    p.add_argument("--backend", choices=["local", "ray"],
                   help="where the games run: local (this machine, the default) or ray (Ray actors, on this "
                        "machine or on a cluster with --address; same games, see docs/scaling_ray.md)")
    p.add_argument("--address", metavar="HOST:PORT",
                   help="with --backend ray: the address of a running Ray cluster (e.g. HEAD:6379); without it "
                        "a private Ray instance runs on this machine")
    p.add_argument("--out", metavar="DIR", help="write games.jsonl (resumable) and the reports here")
    p.add_argument("--fresh", action="store_true", help="with --out: discard stored games instead of resuming")
    p.add_argument("--report-only", action="store_true",
                   help="with --out: print the report of the games of this tournament already stored there (e.g. "
                        "with another --sprt) and play nothing (--workers, --backend, --address change nothing); writes "
                        "nothing, so it may read a folder that a run is still playing into")
    p.add_argument("--stored-versions", action="store_true",
                   help="with --report-only: read the stored games whatever code versions of the players played "
                        "them (one a player; a folder played by an older release, which this code would play "
                        "again); the report names their versions")
    p.add_argument("--title", help="title of the report")
    p.add_argument("--no-progress", action="store_true", help="no progress bar / progress lines")
    p.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"),
                   help="two players only: stop as soon as a sequential probability ratio test of H0 'the first "
                        "player (the challenger of a gauntlet) is ELO0 Elo stronger' against H1 'ELO1 Elo stronger' "
                        "decides (pentanomial model on colour-swapped game pairs, logistic Elo, as fishtest); "
                        f"--games is then the most games played (default {SPRT_GAMES}, unless --config sets games)")
    p.add_argument("--alpha", type=float, metavar="P",
                   help="with --sprt: the probability of accepting H1 when H0 holds (default 0.05)")
    p.add_argument("--beta", type=float, metavar="P",
                   help="with --sprt: the probability of accepting H0 when H1 holds (default 0.05)")


def _seconds(text: str) -> float:
    """An argparse ``type``: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds (a number > 0), not {text!r}") from None
    if not np.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, not {text}")
    return value


def _quick_players():
    from ..bots import bot_class

    out, skipped = [], []
    for name, spec in QUICK_PLAYERS:
        try:
            bot_class(name)
            out.append({"name": name, "spec": spec})
        except ImportError:
            skipped.append(name)
    return out, skipped


def _build_config(args):
    from ..evaluation.tournament import TournamentConfig, load_config

    rules_given = rules_flags_given(args)
    execution = {}
    if args.config:
        if args.quick:
            raise ValueError("--quick and --config cannot be combined")
        try:
            loaded = load_config(args.config)
        except OSError as e:
            raise OSError(f"--config {args.config}: {e.strerror or e}") from None
        except (ValueError, TypeError) as e:
            raise type(e)(f"--config {args.config}: {e}") from None
        execution = loaded.execution
        args.config_games = loaded.games_given  # --sprt's default of most games applies when the file has none
        for name, why in loaded.left_out.items():
            _note(f"{name} left out (an optional player of the config): {why}")
        cfg = loaded.to_dict()
        if args.players:
            cfg["players"] = cfg["players"] + list(args.players)
    elif args.quick:
        players, skipped = _quick_players()
        if skipped:
            print(f"jiu eval --quick: skipping bots not available here: {', '.join(skipped)}", file=sys.stderr)
        players += list(args.players)
        names = [p["name"] for p in players]
        cfg = {"players": players, "games": QUICK_GAMES, "random_opening": QUICK_OPENING,
               "title": "Jiu quick evaluation (built-in bots, small budgets)",
               # random loses (or draws) every game: it is a reference, not a rating anchor
               "unrated": ["random"] if "random" in names and len(names) > 2 else [],
               "anchor": "greedy" if "greedy" in names else "mean"}
    else:
        if len(args.players) < 2:
            raise ValueError("give at least two players, --config FILE or --quick (see jiu eval --help)")
        cfg = {"players": list(args.players)}
    if rules_given or "rules" not in cfg:
        # on a config file's rules, --rule and --board-size change the options they name; --rules PROFILE
        # replaces the file's rules (a profile is a whole set of rules)
        on_file = args.config and "--rules" not in rules_flags(args) and "rules" in cfg
        cfg["rules"] = _rules_from_args(args, cfg["rules"] if on_file else None).to_dict()
    for key, val in (("games", args.games), ("seed", args.seed), ("random_opening", args.random_opening),
                     ("anchor", args.anchor), ("title", args.title), ("tc", args.tc)):
        if val is not None:
            cfg[key] = val
    # one opening setting: a flag replaces the preset's or the config file's (both flags at once are refused)
    if args.openings is not None:
        if args.random_opening is not None:
            raise ValueError("--openings and --random-opening cannot be combined: choose an opening suite or "
                             "random placements")
        cfg["openings"], cfg["random_opening"] = args.openings, 0
    elif args.random_opening is not None:
        cfg.pop("openings", None)
    if args.unrated:
        cfg["unrated"] = args.unrated
    if args.gauntlet:
        cfg["mode"] = "gauntlet"
        cfg["challengers"] = args.gauntlet
    if args.bootstrap is not None:
        cfg["intervals"] = "bootstrap"
        cfg["bootstrap_samples"] = args.bootstrap
    config = TournamentConfig.from_dict(cfg)
    config.execution = dict(execution)
    # sb3: models that record their rules play on them by default, and refuse other rules
    from ..players import sb3_spec_rules

    specs = [p.spec for p in config.players]
    if not rules_given and not args.config:  # a config file names its rules (competitive if it says nothing)
        trained = sb3_spec_rules(specs)
        if trained is not None:
            config.rules = trained.to_dict()
            if config.openings is not None:  # the opening suite is checked again, on the rules the models play
                cfg["rules"] = config.rules
                config = TournamentConfig.from_dict(cfg)
                config.execution = dict(execution)
    sb3_spec_rules(specs, config.rules)
    return config


class _Progress:
    """Progress display: a tqdm bar on a terminal, else a line every ~10% (both with ETA and running score)."""

    def __init__(self, enabled):
        self.enabled = enabled
        self.bar = None
        self.t0 = None
        self.start_done = 0
        self.next_line = 0
        self.use_bar = enabled and sys.stderr.isatty()

    def note(self, text):
        """A status line before the games start (e.g. the numba warm-up), instead of a misleading ETA."""
        if self.enabled:
            print(text, file=sys.stderr, flush=True)

    def __call__(self, done, total, line, scores):
        from ..evaluation.tournament import eta_text, scores_text

        if not self.enabled:
            return
        if self.t0 is None:
            self.t0 = time.perf_counter()
            self.start_done = done
            if self.use_bar:
                try:
                    from tqdm import tqdm
                except ImportError:
                    self.use_bar = False
                else:
                    self.bar = tqdm(total=total, initial=done, unit="game", dynamic_ncols=True, file=sys.stderr)
            self.next_line = done
            if done and line is None:
                print(f"resuming: {done}/{total} games already played", file=sys.stderr)
            return
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix_str(scores_text(scores, 60), refresh=True)
            if done == total:
                self.bar.close()
            return
        if done >= self.next_line or done == total:
            el = time.perf_counter() - self.t0
            rate = (done - self.start_done) / el if el > 0 else 0
            eta = (total - done) / rate if rate > 0 else None
            print(f"[{done}/{total}] {el:.0f}s elapsed, ETA {eta_text(eta)}  {scores_text(scores, 90)}", file=sys.stderr)
            self.next_line = done + max(1, total // 10)


def _note(msg):
    print(f"jiu eval: note: {msg}", file=sys.stderr)


def _with_sprt(cfg, args):
    """``cfg`` with the SPRT settings of ``--sprt``, ``--alpha`` and ``--beta`` (unchanged without them)."""
    from ..evaluation.tournament import TournamentConfig

    if args.sprt is None and cfg.sprt is None:
        if args.alpha is not None or args.beta is not None:
            raise ValueError("--alpha and --beta are the error rates of --sprt: give --sprt ELO0 ELO1")
        return cfg
    d = cfg.to_dict()
    sprt = dict(d.get("sprt") or {})  # a config file's sprt table, overridden by the flags
    if args.sprt is not None:
        sprt["elo0"], sprt["elo1"] = args.sprt
    for key, val in (("alpha", args.alpha), ("beta", args.beta)):
        if val is not None:
            sprt[key] = val
    d["sprt"] = sprt
    if args.games is None and not getattr(args, "config_games", False):  # neither --games nor the config's
        d["games"] = SPRT_GAMES
    try:
        out = TournamentConfig.from_dict(d)
    except (ValueError, TypeError) as e:
        raise type(e)(f"--sprt: {e}") from None
    out.execution = dict(cfg.execution)
    return out


def cmd_eval(args: argparse.Namespace) -> int:
    from ..evaluation.report import pairs_table, ratings_table, settings_text, sprt_table
    from ..evaluation.tournament import run_tournament

    if args.fresh and not args.out:
        return _err("eval: --fresh needs --out")
    if args.report_only and not args.out:
        return _err("eval: --report-only reads the games stored in a folder: give it with --out")
    if args.stored_versions and not args.report_only:
        return _err("eval: --stored-versions reads stored games as they were played: give --report-only too")
    if args.report_only and args.fresh:
        return _err("eval: --report-only reads the stored games; --fresh would discard them: give one of the two")
    why = args.out and not args.report_only and writable_dir(args.out, "--out")
    if why:
        return _err(f"eval: {why}")
    try:
        cfg = _with_sprt(_build_config(args), args)
    except (ValueError, TypeError, ImportError, OSError) as e:
        return _err(f"eval: {e}")
    for name in cfg.battle_only():
        _note(f"{name}: its model file says it learned the battle only, so its stones are placed at random as in "
              f"its training: it plays {cfg.played_spec(name)} (a phases:PLACER+BATTLE spec is played as given)")
    command = "jiu " + " ".join(shlex.quote(a) for a in args._argv) if hasattr(args, "_argv") else None
    t0 = time.perf_counter()
    progress = _Progress(not (args.no_progress or args.report_only))
    try:
        res = run_tournament(cfg, out_dir=args.out, workers=args.workers, resume=not args.fresh,
                             progress=progress, command=command, log=_note,
                             backend=args.backend, address=args.address, report_only=args.report_only,
                             stored_versions=args.stored_versions)
    except (ValueError, TypeError, ImportError, OSError) as e:
        return _err(f"eval: {e}")
    except RuntimeError as e:  # a game failed in a worker process: the message names it
        return _err(f"eval: {e}", 1)
    except KeyboardInterrupt:
        where = f"; the finished games are in {args.out}/games.jsonl: run the same command to resume" if args.out else ""
        return _err(f"eval: interrupted{where}", 130)
    el = time.perf_counter() - t0
    if progress.bar is not None:  # a match stopped by its SPRT ends before the bar's total
        progress.bar.close()
    s = res.summary
    print()
    print(s["title"])
    print(settings_text(s))
    print()
    print(ratings_table(s))
    print()
    print(pairs_table(s))
    bc = s["by_colour"]
    print(f"\nWhite won {bc['white_wins']}, Black won {bc['black_wins']}, {bc['draws']} drawn or undecided")
    if s.get("sprt"):
        print()
        print(sprt_table(s))
    elo = s.get("elo") or {}
    if "error" in elo:
        print(f"\nElo fit not possible: {elo['error']}")
    elif elo:
        widest = max(max(r["elo"] - r["lower"], r["upper"] - r["elo"]) for r in elo["ratings"].values())
        sweeps = [(p["a"] if p["a_wins"] == p["games"] else p["b"], p["b"] if p["a_wins"] == p["games"] else p["a"])
                  for p in s["pairs"] if p["games"] and p["games"] in (p["a_wins"], p["b_wins"])
                  and p["a"] in elo["ratings"] and p["b"] in elo["ratings"]]
        if sweeps:
            listing = ", ".join(f"{w} > {lo}" for w, lo in sweeps[:6]) + (" ..." if len(sweeps) > 6 else "")
            print(f"\nwon every game: {listing}. Such pairs say little about the size of the gap, however many "
                  "games; if intervals stay wide, add players of intermediate strength (e.g. mix:0.5:SPEC).")
        if widest > CI_TARGET and not s.get("sprt"):
            played = max(p["games"] for p in s["pairs"])  # per pair: the stored ones with --report-only
            need = int(np.ceil(played * (widest / CI_TARGET) ** 2 / 2) * 2)
            print(f"\nwidest {elo['confidence'] * 100:.0f}% interval: ±{widest:.0f} Elo; about {need} games per pair "
                  f"would bring it to ±{CI_TARGET:.0f} (with --out, a larger --games keeps the games already played)")
    counted = " counted by the SPRT" if s.get("sprt") else ""
    if args.report_only:
        print(f"\nreport only: {s['games']} of the {s['scheduled']} scheduled games{counted}, read from "
              f"{args.out}/games.jsonl; nothing played, nothing written")
        if args.stored_versions:
            print("played by the code versions " + ", ".join(f"{k} {v or '(none recorded)'}"
                                                            for k, v in s["versions"].items()))
    else:
        print(f"\n{res.new_games} games played in {el:.1f}s ({s['games']} in total{counted})")
    if s.get("stale_lines_ignored"):
        print(f"{s['stale_lines_ignored']} stored games did not match this configuration and were ignored")
        if args.report_only and not args.stored_versions:
            print("(games played by other code versions of the players are read with --stored-versions)")
    if args.out and not args.report_only:
        png = ", results.png" if os.path.exists(os.path.join(args.out, "results.png")) else ""
        print(f"results in {args.out}/: games.jsonl, results.json, results.md, ratings.csv, pairs.csv{png}")
    return 0
