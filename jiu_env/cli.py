"""The ``jiu`` command line: tournaments, playing a bot in the terminal, replaying records.

Run ``jiu --help`` or ``jiu <command> --help``.  Every sub-command is one
entry of :data:`COMMANDS`; :func:`main` takes the argument list, so the
commands can be driven from Python (``main(["eval", "--quick"])``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from typing import Any, Callable, Sequence

import numpy as np

from . import kernel as K
from .bots import parse_value  # rules options use the bot-spec value syntax
from .state import explain_illegal
from .notation import action_to_str, str_to_action
from .render import render_ansi
from .vocab import COLOUR_NAMES, SUBPHASE_NAMES
from .rules import Rules

# ---------------------------------------------------------------- helpers
def int_at_least(lo: int) -> Callable[[str], int]:
    """An argparse ``type``: an int >= ``lo`` (argparse names the flag in its error)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer >= {lo}, not {text!r}") from None
        if value < lo:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo}, not {value}")
        return value

    parse.__name__ = f"int >= {lo}"
    return parse


def writable_file(path: str | os.PathLike[str], flag: str) -> str | None:
    """None if ``path`` can be written later (its folder exists and is writable), else why not."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if os.path.isdir(path):
        return f"{flag} {path} is a directory, not a file"
    if not os.path.isdir(folder):
        return f"{flag} {path}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        return f"{flag} {path} is not writable"
    return None


def writable_dir(path: str | os.PathLike[str], flag: str) -> str | None:
    """None if ``path`` is (or can be made) a folder we may write files in, else why not (nothing is created)."""
    path = os.path.abspath(path)
    if os.path.exists(path):
        if not os.path.isdir(path):
            return f"{flag} {path} exists and is not a directory"
        if not os.access(path, os.W_OK | os.X_OK):
            return f"{flag} {path} is not writable"
        return None
    parent = path
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"{flag} {path} cannot be created: {parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{flag} {path} cannot be created: {parent} is not writable"
    return None


def _rules_from_args(args):
    opts = {}
    for item in args.rule or []:
        key, eq, val = item.partition("=")
        if not eq or not key.strip():
            _exit_error(f"--rule expects KEY=VALUE (e.g. board_size=8), not {item!r}", args)
        opts[key.strip()] = parse_value(val.strip())
    if getattr(args, "board_size", None) is not None:
        if "board_size" in opts and opts["board_size"] != args.board_size:
            _exit_error(f"--board-size {args.board_size} and --rule board_size={opts['board_size']} disagree", args)
        opts["board_size"] = args.board_size
    try:
        return Rules.make(args.rules, **opts)
    except (TypeError, ValueError) as e:
        _exit_error(f"--rules/--rule: {e}", args)


def _add_rules_args(p):
    p.add_argument("--rules", default="competitive", metavar="PROFILE",
                   help="rules profile: competitive (default), traditional, ludii8 or jqchess8")
    p.add_argument("--rule", action="append", metavar="KEY=VALUE",
                   help="override one rules option, e.g. --rule board_size=8 (repeatable)")
    p.add_argument("--board-size", type=int, metavar="N", help="board size (the same as --rule board_size=N)")


def _err_text(msg, args=None):
    """``jiu CMD: error: MSG`` (argparse style); a message starting with ``CMD: `` names its command."""
    cmd, colon, rest = msg.partition(": ")
    if colon and cmd in COMMANDS:
        return f"jiu {cmd}: error: {rest}"
    command = getattr(args, "command", None)
    return f"jiu {command}: error: {msg}" if command else f"jiu: error: {msg}"


def _exit_error(msg, args=None):
    print(_err_text(msg, args), file=sys.stderr)
    raise SystemExit(2)


def _err(msg, code=2):
    print(_err_text(msg), file=sys.stderr)
    return code


# ------------------------------------------------------------------ jiu eval
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
                        "random unrated, greedy = 0 Elo (a few minutes on 2 cores)")
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
    p.add_argument("--title", help="title of the report")
    p.add_argument("--no-progress", action="store_true", help="no progress bar / progress lines")
    p.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"),
                   help="two players only: stop as soon as a sequential probability ratio test of H0 'the first "
                        "player is ELO0 Elo stronger' against H1 'ELO1 Elo stronger' decides (pentanomial model on "
                        "colour-swapped game pairs, logistic Elo, as fishtest); --games is then the most games "
                        f"played (default {SPRT_GAMES})")
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
    from .bots import bot_class

    out, skipped = [], []
    for name, spec in QUICK_PLAYERS:
        try:
            bot_class(name)
            out.append({"name": name, "spec": spec})
        except ImportError:
            skipped.append(name)
    return out, skipped


def _build_config(args):
    from .evaluation.tournament import TournamentConfig, load_config

    rules_given = args.rules != "competitive" or args.rule or args.board_size is not None
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
        cfg["rules"] = _rules_from_args(args).to_dict()
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
    from .players import sb3_spec_rules

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
        from .evaluation.tournament import eta_text, scores_text

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
    from .evaluation.tournament import TournamentConfig

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
    if args.games is None and not args.config:
        d["games"] = SPRT_GAMES
    try:
        out = TournamentConfig.from_dict(d)
    except (ValueError, TypeError) as e:
        raise type(e)(f"--sprt: {e}") from None
    out.execution = dict(cfg.execution)
    return out


def cmd_eval(args: argparse.Namespace) -> int:
    from .evaluation.report import pairs_table, ratings_table, settings_text, sprt_table
    from .evaluation.tournament import run_tournament

    if args.fresh and not args.out:
        return _err("eval: --fresh needs --out")
    why = args.out and writable_dir(args.out, "--out")
    if why:
        return _err(f"eval: {why}")
    try:
        cfg = _with_sprt(_build_config(args), args)
    except (ValueError, TypeError, ImportError, OSError) as e:
        return _err(f"eval: {e}")
    for name in cfg.battle_only():
        _note(f"{name}: its model file says it learned the battle only, so its stones are placed at random as in "
              f"its training: it plays {cfg.played_spec(name)} (a phases:PLACER+BATTLE spec is played as given)")
    backend = args.backend or cfg.execution.get("backend") or "local"
    address = args.address or cfg.execution.get("address")
    if address and backend != "ray":
        return _err("eval: --address is the address of a Ray cluster: it needs --backend ray")
    command = "jiu " + " ".join(shlex.quote(a) for a in args._argv) if hasattr(args, "_argv") else None
    t0 = time.perf_counter()
    progress = _Progress(not args.no_progress)
    try:
        res = run_tournament(cfg, out_dir=args.out, workers=args.workers, resume=not args.fresh,
                             progress=progress, command=command, log=_note,
                             backend=backend, address=address)
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
            need = int(np.ceil(cfg.games * (widest / CI_TARGET) ** 2 / 2) * 2)
            print(f"\nwidest {elo['confidence'] * 100:.0f}% interval: ±{widest:.0f} Elo; about {need} games per pair "
                  f"would bring it to ±{CI_TARGET:.0f} (with --out, a larger --games keeps the games already played)")
    counted = " counted by the SPRT" if s.get("sprt") else ""
    print(f"\n{res.new_games} games played in {el:.1f}s ({s['games']} in total{counted})")
    if s.get("stale_lines_ignored"):
        print(f"{s['stale_lines_ignored']} stored games did not match this configuration and were ignored")
    if args.out:
        print(f"results in {args.out}/: games.jsonl, results.json, results.md, ratings.csv, pairs.csv, results.png")
    return 0


# ------------------------------------------------------------------ jiu play
PLAY_HELP = """commands:
  <move>        a move in notation: g6 (place / drop / capture), g6-g7 (step),
                g6xg8 (jump), ^g6 (lift a stone to fly), stop (end a jump chain)
  <number>      the legal move with that number (see 'moves')
  moves         list the legal moves with their numbers
  undo          take back your last decision (and the bot's replies)
  hint          ask the hint bot for a move
  save FILE     save the game (.json record, or competition notation for .txt/.jiu)
  board         show the board again
  quit          leave (also Ctrl-D)"""


def _play_args(p):
    p.add_argument("--bot", default="greedy", metavar="SPEC",
                   help="the opponent: any player spec accepted by jiu eval (default greedy, or random if "
                        "greedy is not available)")
    p.add_argument("--colour", "--color", default="white", choices=["white", "black"],
                   help="your colour (White places first; Black moves first in the battle)")
    p.add_argument("--hint-bot", metavar="SPEC", help="bot asked by 'hint' (default: the opponent's spec)")
    _add_rules_args(p)
    p.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the bot and of --start battle")
    p.add_argument("--start", default="placement", choices=["placement", "battle"],
                   help="'battle' fills the board with random (seeded) placements first")
    p.add_argument("--save", metavar="FILE", help="save the game to FILE when it ends or you quit")
    p.add_argument("--gui", action="store_true", help="also show the board in a pygame window")


def _default_bot(spec_given):
    if spec_given != "greedy":
        return spec_given
    from .bots import bot_class

    try:
        bot_class("greedy")
        return "greedy"
    except ImportError:
        return "random"


class _Game:
    """A game with full history, so that any decision can be taken back."""

    def __init__(self, rules):
        self.rules = rules
        self.state = rules.new_state()
        self.history = []  # (state before, who decided: "you" / "bot" / "setup", action)

    def apply(self, a, who):
        self.history.append((self.state.copy(), who, int(a)))
        K.apply_action(self.state, int(a))

    def undo_to_last(self, who):
        for i in range(len(self.history) - 1, -1, -1):
            if self.history[i][1] == who:
                self.state = self.history[i][0].copy()
                taken = self.history[i][2]
                del self.history[i:]
                return taken
        return None

    def actions(self):
        return [h[2] for h in self.history]

    def legal(self):
        buf = np.empty(self.rules.num_actions, np.int64)
        k = K.legal_actions(self.state, buf)
        return np.sort(buf[:k])


def _moves_listing(legal, n):
    items = [f"{i}:{action_to_str(a, n)}" for i, a in enumerate(legal, start=1)]
    width = max(len(x) for x in items) + 2 if items else 0
    per_line = max(1, 78 // max(width, 1))
    return "\n".join("".join(x.ljust(width) for x in items[i:i + per_line]).rstrip()
                     for i in range(0, len(items), per_line))


def _save_game(game, path, players, seed):
    from .records import GameRecord

    from .records.export import today

    rec = GameRecord.from_actions(game.rules, game.actions(), players=players, seed=seed,
                                  meta={"source": "jiu play", "event": "jiu play", "date": today()})
    rec.save(path)


def cmd_play(args: argparse.Namespace, inp: Callable[[str], str] = input) -> int:
    from .players import make_player

    rules = _rules_from_args(args)
    n = rules.board_size
    spec = _default_bot(args.bot)
    try:
        bot = make_player(spec, seed=args.seed)
        hint_bot = make_player(args.hint_bot or spec, seed=args.seed + 1)
    except (ValueError, TypeError, ImportError, OSError) as e:
        return _err(f"play: {e}")
    why = args.save and writable_file(args.save, "--save")
    if why:
        return _err(f"play: {why}")
    me = K.WHITE if args.colour == "white" else K.BLACK
    players = {"white": "human", "black": spec} if me == K.WHITE else {"white": spec, "black": "human"}
    game = _Game(rules)
    if args.start == "battle":
        rng = np.random.default_rng(args.seed)
        buf = np.empty(rules.num_actions, np.int64)
        while game.state[K.H_PHASE] == K.PH_PLACEMENT:
            k = K.legal_actions(game.state, buf)
            game.apply(int(buf[rng.integers(k)]), "setup")
    window = None
    if args.gui:
        try:
            from .render import PygameWindow

            window = PygameWindow("Jiu")
        except Exception as e:  # no pygame / no display: the terminal still works
            print(f"(no window: {e})")
            window = None

    def show():
        print()
        print(render_ansi(game.state))
        if window is not None:
            from .render import render_rgb

            try:
                window.show(render_rgb(game.state), 30)
            except Exception as e:
                print(f"(window closed: {e})")

    print(f"You play {args.colour} against {spec}. Type 'help' for the commands.")
    show()
    saved = None  # (path, actions) of the last `save FILE`: --save skips only that exact save
    while True:
        s = game.state
        over = s[K.H_PHASE] == K.PH_OVER
        if not over and s[K.H_TO_MOVE] != me:
            made = []
            while s[K.H_PHASE] != K.PH_OVER and s[K.H_TO_MOVE] != me:
                a = int(bot.step(s.copy()))
                if not K.is_legal(s, a):
                    print(f"the bot chose an illegal action {a}; it forfeits")
                    return 1
                game.apply(a, "bot")
                s = game.state
                made.append(action_to_str(a, n))
            print(f"\n{COLOUR_NAMES[3 - me]} ({spec}) plays: {', '.join(made)}")
            show()
            continue
        legal = game.legal()
        if over:
            prompt = "game over - undo, save FILE or quit> "
        else:
            sub = "placement" if s[K.H_PHASE] == K.PH_PLACEMENT else SUBPHASE_NAMES[int(s[K.H_SUB])]
            hint_list = f"{len(legal)} legal moves" + (": " + " ".join(action_to_str(a, n) for a in legal)
                                                       if len(legal) <= 12 else ", 'moves' lists them")
            print(f"{hint_list}")
            prompt = f"{COLOUR_NAMES[me]} ({sub})> "
        try:
            line = inp(prompt)
        except EOFError:
            line = "quit"
        text = line.strip()
        if not text:
            continue
        word, _, rest = text.partition(" ")
        word = word.lower()
        if word in ("quit", "q", "exit"):
            break
        if word in ("help", "?", "h"):
            print(PLAY_HELP)
            continue
        if word == "board":
            show()
            continue
        if word == "moves":
            print(_moves_listing(legal, n) if len(legal) else "no legal moves: the game is over")
            continue
        if word == "save":
            path = rest.strip()
            if not path:
                print("save needs a file name: save FILE")
                continue
            try:
                _save_game(game, path, players, args.seed)
                saved = (os.path.realpath(path), list(game.actions()))
                print(f"saved to {path}")
            except (OSError, ValueError) as e:  # ValueError: text that cannot be encoded, a record not expressible
                print(f"could not save (the file that was there is unchanged): {e}")
            continue
        if word == "undo":
            taken = game.undo_to_last("you")
            if taken is None:
                print("nothing to undo")
            else:
                print(f"took back {action_to_str(taken, n)}")
                show()
            continue
        if word == "hint":
            if over:
                print("the game is over")
                continue
            a = int(hint_bot.step(s.copy()))
            print(f"hint: {action_to_str(a, n)}")
            continue
        if over:
            print(f"{text!r}: the game is over; undo, save FILE or quit")
            continue
        if text.isdigit():
            i = int(text)
            if not 1 <= i <= len(legal):
                print(f"{i} is not a move number: choose 1..{len(legal)} ('moves' lists them)")
                continue
            a = int(legal[i - 1])
        else:
            try:
                a = str_to_action(text, n)
            except ValueError as e:
                print(f"not understood: {e}. Type 'help' for the commands.")
                continue
        if not K.is_legal(s, a):
            print(f"illegal: {action_to_str(a, n)} - {explain_illegal(s, a)}. Try again ('moves' lists the legal ones).")
            continue
        game.apply(a, "you")
        if game.state[K.H_PHASE] == K.PH_OVER or game.state[K.H_TO_MOVE] == me:
            show()
    if args.save and saved != (os.path.realpath(args.save), list(game.actions())):
        try:
            _save_game(game, args.save, players, args.seed)
            print(f"saved to {args.save}")
        except (OSError, ValueError) as e:
            return _err(f"play: could not save (the file that was there is unchanged): {e}", 1)
    if window is not None:
        window.close()
    print("bye")
    return 0


# ------------------------------------------------------------------ jiu replay
def _replay_args(p):
    p.add_argument("file", metavar="FILE",
                   help="a game record: .json, a games.jsonl of jiu eval (with --game), competition notation or a"
                        " jiuchess CSV file (the format is detected from the content)")
    p.add_argument("--game", metavar="ID", help="in a .jsonl file: the game id (e.g. 'random|greedy|3') or line number;"
                                                " in a jiuchess CSV file: the game's line number (from 0)")
    p.add_argument("--all", action="store_true", help="print every position and exit (no prompts)")
    p.add_argument("--lenient", action="store_true",
                   help="competition / jiuchess notation: go on past irregularities instead of stopping at the first error")
    _add_rules_args(p)


def cmd_replay(args: argparse.Namespace, inp: Callable[[str], str] = input) -> int:
    from .records import ChooseGame, RecordError, load_record, result_text

    try:
        rules = _rules_from_args(args)
        rec = load_record(args.file, game=args.game, strict=not args.lenient, rules=rules)
        states = rec.positions()  # header and board only: small even with a huge turn limit
    except UnicodeDecodeError:
        return _err(f"replay: {args.file} is not a text file (not UTF-8)")
    except ChooseGame as e:
        return _err(f"replay: {args.file} holds {e.count} games; choose one with --game ID (a game id or a "
                    "0-based line number)")
    except (RecordError, OSError, ValueError) as e:
        return _err(f"replay: {e}")
    n = rec.rules.board_size
    players = rec.players or {}
    print(f"{players.get('white') or '?'} (white) vs {players.get('black') or '?'} (black); "
          f"{len(rec.actions)} decisions; result: {result_text(rec.result)}")
    for issue in rec.issues:
        print(f"irregularity: {issue}")

    def show(i):
        head = "start" if i == 0 else f"after {i}/{len(rec.actions)}: {action_to_str(rec.actions[i - 1], n)}"
        print(f"\n[{head}]")
        print(render_ansi(states[i]))

    if args.all:
        for i in range(len(states)):
            show(i)
        return 0
    i = 0
    show(i)
    while True:
        try:
            cmd = inp("[Enter] next, b back, NUMBER go to, q quit> ").strip().lower()
        except EOFError:
            break
        if cmd in ("q", "quit", "exit"):
            break
        if cmd == "":
            if i + 1 < len(states):
                i += 1
                show(i)
            else:
                print("end of the game: " + result_text(rec.result))
        elif cmd in ("b", "back"):
            if i > 0:
                i -= 1
                show(i)
            else:
                print("already at the start")
        elif cmd.isdigit() and int(cmd) < len(states):
            i = int(cmd)
            show(i)
        else:
            print(f"{cmd!r}: press Enter for the next position, b to go back, a number 0..{len(states) - 1}, q to quit")
    return 0


# ------------------------------------------------------------------ jiu export
def _export_args(p):
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="a games.jsonl of jiu eval (every game, or --game), or record files in any format the "
                        "package reads (JSON, competition notation, jiuchess CSV: every game line)")
    p.add_argument("--format", required=True, choices=["json", "competition", "jiuchess"],
                   help="the format of the files written: json (.json), competition (.txt) or jiuchess (.csv)")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="the folder for the files (made if missing), one per game: NNNN-WHITE-vs-BLACK.EXT, "
                        "the input's name first when several inputs are given")
    p.add_argument("--game", metavar="N", help="only this game of each input: a games.jsonl game id or a game "
                                               "number from 0")
    p.add_argument("--force", action="store_true", help="overwrite files that exist already (default: refuse, "
                                                        "writing nothing)")
    p.add_argument("--lenient", action="store_true",
                   help="competition / jiuchess inputs: go on past irregularities instead of stopping at the first")
    _add_rules_args(p)


def cmd_export(args: argparse.Namespace) -> int:
    from .records.export import ExportError, export_games

    why = writable_dir(args.out, "--out")
    if why:
        return _err(f"export: {why}")
    rules = _rules_from_args(args)
    try:
        report = export_games(args.inputs, args.format, args.out, game=args.game, force=args.force, rules=rules,
                              strict=not args.lenient)
    except (ExportError, OSError) as e:
        return _err(f"export: {e}")
    for label, reason in report.refused:
        print(f"jiu export: refused {label}: {reason}", file=sys.stderr)
    print(report.text(args.out))
    if report.refused:
        print(f"jiu export: {len(report.refused)} of {report.games} games not written (named above); "
              f"the other {len(report.written)} were", file=sys.stderr)
        return 1
    return 0


# ------------------------------------------------------------------ jiu warm
def _warm_args(p):
    from .warmup import DEFAULT_BOTS

    p.add_argument("bots", nargs="*", metavar="BOT",
                   help=f"player specs to warm (default: {' '.join(DEFAULT_BOTS)})")
    p.add_argument("--board-size", type=int, action="append", metavar="N",
                   help="board size of the warm-up games (repeatable; default 8: numba compiles per type, "
                        "not per size, so a small board compiles everything)")
    p.add_argument("--rules", default="competitive", metavar="PROFILE", help="rules profile (default competitive)")


def cmd_warm(args: argparse.Namespace) -> int:
    from .warmup import warm_up

    try:
        rules = Rules.make(args.rules)
    except (TypeError, ValueError) as e:
        return _err(f"warm: {e}")
    board_sizes = args.board_size or [8]
    rep = warm_up(args.bots or None, board_sizes=board_sizes, rules=rules,
                  note=lambda text: print(text, flush=True))
    print(rep.text())
    if rep.compiled:
        print("compiled: " + ", ".join(rep.compiled))
    if not rep.bots:
        return _err("warm: none of the bots could be built here")
    return 0


# ------------------------------------------------------------------ the parser
def _bench_args(p):
    from . import benchmark

    benchmark.add_arguments(p)


def cmd_bench(args: argparse.Namespace) -> int:
    from . import benchmark

    try:
        return benchmark.run(args)
    except OSError as e:
        return _err(f"bench: {e}")


def _train_args(p):
    from .learn import pipeline

    pipeline.add_arguments(p)
    _add_rules_args(p)


def cmd_train(args: argparse.Namespace) -> int:
    from .learn import pipeline

    given = args.board_size is not None or any(r.partition("=")[0].strip() == "board_size" for r in args.rule or [])
    if args.quick and not given:  # --quick is a 6x6 run unless a board size is given
        args.board_size = pipeline.QUICK["board_size"]
    return pipeline.run(args, _rules_from_args(args))


# name -> (help, example, add the arguments, run): the sub-commands of ``jiu``
Command = tuple[str, str, Callable[[argparse.ArgumentParser], Any], Callable[[argparse.Namespace], int]]
COMMANDS: dict[str, Command] = {
    "eval": ("tournament between bots / models with Elo ratings and reports",
             "jiu eval random greedy alphabeta:depth=2 --games 20 --out results\n"
             "  jiu eval --quick\n"
             "  jiu eval --quick --backend ray --address HEAD:6379\n"
             "  jiu eval --config ladder --out baselines/results",
             _eval_args, cmd_eval),
    "play": ("play a bot in the terminal (moves in notation or by number; undo, hint, save)",
             "jiu play --bot alphabeta:depth=2 --colour black --start battle",
             _play_args, cmd_play),
    "replay": ("step through a saved game (Enter next, b back, q quit; --all prints everything)",
               "jiu replay game.json\n  jiu replay results/games.jsonl --game 'random|greedy|0' --all",
               _replay_args, cmd_replay),
    "export": ("write every game of a games.jsonl or of record files, one file per game, as JSON, competition "
               "notation or jiuchess CSV, with event, date, players, result and rules headers",
               "jiu export results/games.jsonl --format competition --out results/games",
               _export_args, cmd_export),
    "bench": ("performance benchmark: kernel, batched runner, envs and search, side by side with peers",
              "jiu bench --quick --out /tmp/bench",
              _bench_args, cmd_bench),
    "warm": ("compile the bots' numba code into the on-disk cache (once per machine, image or cluster node)",
             "jiu warm\n  jiu warm greedy alphabeta:depth=2 --board-size 14",
             _warm_args, cmd_warm),
    "train": ("learn a policy-value network from the engines: labelled engine games, then training (resumable)",
              "jiu train runs/jiu14 --games 1000 --steps 20000\n  jiu train /tmp/quick --quick",
              _train_args, cmd_train),
}


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``jiu`` with every sub-command."""
    lines = ["examples (jiu COMMAND --help for every option):"]
    for name, (_, example, _, _) in COMMANDS.items():
        lines += ["  " + ex.strip() for ex in example.splitlines()]
    parser = argparse.ArgumentParser(
        prog="jiu",
        description="Jiu (久棋), the Tibetan board game: evaluation, play and replay tools.",
        epilog="\n".join(lines),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"jiu_env {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (hlp, example, add_args, _) in COMMANDS.items():
        p = sub.add_parser(name, help=hlp, description=hlp, epilog="example:\n  " + example,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        add_args(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``jiu`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 0
    args._argv = argv
    return COMMANDS[args.command][3](args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

__all__ = ["main", "build_parser", "COMMANDS"]

