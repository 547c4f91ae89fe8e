"""AlphaZero-style self-play training for Jiu, after Li et al. (2023).

One file, CleanRL style: every hyper-parameter is a field of ``Args`` below
and a command-line flag (``--sims 48``, ``--no-augment``...).

- what is learned (``--phase``): ``placement`` (default, the paper's
  two-stage design) or ``game``.  With ``placement`` a self-play game ends
  when the board is full and is scored by the mean of
  ``judge_final_playouts`` battles in which the bot ``judge`` (default
  ``mcts:sims=100``, the engine that fights the battle in games) plays both
  sides for up to ``judge_final_turns`` turns (``--judge greedy``: fast
  greedy playouts), each scored +-1 / 0 when the game ends, else by the stone
  difference ``clip((white - black) / adjudicate_margin, -1, 1)``; inside
  the search every battle position is a leaf valued by greedy playouts of
  ``judge_turns`` turns (``judge_playouts``).  In games the battle is played
  by another engine (``--battle``, MCTS by default).  With ``game`` the
  network plays every decision, and a self-play battle that reaches
  ``adjudicate_turns`` completed turns is scored by the stone difference;
- league games: in ``league_share`` of the games one side is played by a bot
  of ``league`` (colours alternating) and only the network's decisions are
  learned, so that White's results do not all become losses as pure
  self-play drifts to Black winning every judged battle;
- self-play: ``games`` games at once, every decision searched by PUCT
  (``c_puct = 3.5``) with Dirichlet noise at the root, sampled with
  temperature 1 for the first ``temp_decisions`` decisions, then the most
  visited action; forced decisions (one legal action) are played unsearched;
- training: (planes, visit distribution, legal mask, outcome) samples in a
  replay buffer; every sampled position is seen through a random board
  symmetry that commutes with the rules of its phase (all 8 in battle, the 4
  that keep the centre square's diagonal ends in placement), the policy target
  and the legal mask mapped with it; loss = MSE(value, z) + cross-entropy
  (visits, masked policy) + weight decay;
- a small checkpoint after every iteration (``--checkpoint``), and every
  ``match_every`` iterations a match against ``opponent`` whose best
  network is kept as ``<checkpoint>.best.pt`` (scores swing between
  iterations), plotted in ``<checkpoint>.curve.png``.  A checkpoint path
  where a previous run left its files is refused unless ``--overwrite``.

Use::

    python examples/alphazero.py --quick                       # smoke run, < 1 min
    python examples/alphazero.py --minutes 40                  # train on 8x8 (default)
    python examples/alphazero.py --evaluate baselines/alphazero/jiu8.pt \\
        --opponent mcts:sims=100 --eval-games 20 --eval-sims 100

``--evaluate`` plays the checkpoint (PUCT, temperature 0, ``eval_sims``
simulations, the same search as ``AlphaZeroBot``; for a placement checkpoint
the battle by ``mcts:sims=<eval_sims>`` unless ``--battle`` says otherwise)
against a built-in bot, colours alternating, several games at once so that
the network sees batches.  It plays on the checkpoint's board and rules
profile: ``--board-size`` / ``--profile`` given with other values are an
error.
"""

import argparse
import dataclasses
import io
import json
import math
import pathlib
import time
from dataclasses import dataclass

import numpy as np


from jiu_env import kernel as K
from jiu_env import symmetry as S
from jiu_env.bots import make_bot
from jiu_env.bots.alphazero import (PUCT, build_net, judge_battle, load_checkpoint, make_evaluator,
                                    pick_action, save_checkpoint, search_options, terminal_value)
from jiu_env.fileio import atomic_write_bytes
from jiu_env.observation import NUM_PLANES, write_observation
from jiu_env.rules import Rules


@dataclass
class Args:
    # run
    seed: int = 21
    minutes: float = 15.0  # wall-clock training budget (self-play + learning)
    iterations: int = 1_000_000  # stop earlier after this many iterations
    checkpoint: str = "runs/alphazero/jiu8.pt"  # written after every iteration
    overwrite: bool = False  # replace a previous run's checkpoint, log, best network and curve
    init: str = ""  # start from this checkpoint's weights
    threads: int = 1  # torch CPU threads
    # game
    profile: str = "competitive"
    board_size: int = 8
    # network
    channels: int = 24
    blocks: int = 1
    # what is learned: "placement" (Li et al. (2023): the battle is judged by fast playouts
    # in training and played by the `battle` bot in games) or "game" (placement and battle)
    phase: str = "placement"
    # self-play and search
    games: int = 64  # games played at once per iteration (one network batch)
    sims: int = 32  # simulations per decision in self-play
    c_puct: float = 3.5
    fpu: float = 0.0  # value of unvisited edges
    dirichlet_alpha: float = 0.3
    dirichlet_eps: float = 0.25
    temp_decisions: int = 30  # decisions played with temperature 1, then the most visited
    league: str = "mcts:sims=100 pattern"  # bot specs (space-separated) that play one side of some self-play games
    league_share: float = 0.5  # fraction of the games played against a league bot (when `league` is set)
    adjudicate_turns: int = 40  # phase "game": battle turns after which a self-play game is scored by stones
    adjudicate_margin: float = 4.0  # stone difference that counts as a full win
    judge: str = "mcts:sims=100"  # phase "placement": who fights the battle that scores a finished
    # self-play placement: a bot spec playing both sides (default: the battle engine of games) or "greedy"
    # (numba playouts)
    judge_turns: int = 40  # battle turns of a judging playout
    judge_playouts: int = 1  # greedy playouts per battle leaf inside the search
    judge_final_playouts: int = 4  # battles that score a finished placement (their mean)
    judge_final_turns: int = 1000  # battle turns of those battles (0: judge_turns; a large value: to the end)
    # learning
    lr: float = 2e-3
    weight_decay: float = 1e-4
    batch_size: int = 256
    replay_ratio: float = 4.0  # times each new sample is drawn for training, on average
    buffer_size: int = 60_000
    augment: bool = True  # random rules-preserving symmetry per sampled position
    # matches during training: every `match_every` iterations `match_games` games against `opponent`
    # (at `eval_sims` simulations, one fixed seed); the best-scoring network is kept as <checkpoint>.best.pt
    match_every: int = 6  # 0: no matches
    match_games: int = 40
    # evaluation
    evaluate: str = ""  # checkpoint to evaluate instead of training
    opponent: str = "mcts:sims=100"
    battle: str = ""  # who plays the network's battle: "net" or a bot spec ("": "net" for a "game"
    # checkpoint, "mcts:sims=<eval_sims>" for a "placement" one)
    eval_games: int = 0  # games against the opponent after training (0: none)
    eval_sims: int = 100
    eval_parallel: int = 10  # evaluation games played at once
    eval_max_battle_turns: int = 1000  # rules option for the evaluation games
    quick: bool = False  # tiny smoke run (< 1 min)


QUICK = dict(minutes=1.0, iterations=1, board_size=6, channels=8, blocks=1, games=4, sims=4,
             temp_decisions=6, adjudicate_turns=6, judge="greedy", judge_turns=6, judge_final_playouts=2,
             judge_final_turns=0, league="greedy", match_every=1, match_games=2,
             batch_size=32, buffer_size=2000,
             checkpoint="runs/alphazero/quick.pt", eval_games=1, eval_sims=4, eval_parallel=1,
             opponent="random", battle="greedy", eval_max_battle_turns=40)


#: The values a string flag takes; the ranges of the numeric flags (inclusive; POSITIVE: > 0).  Anything else is an
#: argument error naming the flag, before anything is built.
CHOICES = dict(phase=("placement", "game"))
LIMITS = dict(seed=(0, 2**63 - 1), iterations=(1, math.inf), threads=(1, 1024), channels=(1, 4096), blocks=(0, 256),
              games=(1, math.inf), sims=(1, math.inf), fpu=(-1, 1), dirichlet_eps=(0, 1), temp_decisions=(0, math.inf),
              league_share=(0, 1), adjudicate_turns=(1, math.inf), judge_turns=(1, math.inf),
              judge_playouts=(1, math.inf), judge_final_playouts=(1, math.inf), judge_final_turns=(0, math.inf),
              weight_decay=(0, math.inf), batch_size=(1, math.inf), buffer_size=(1, math.inf),
              match_every=(0, math.inf), match_games=(1, math.inf), eval_games=(0, math.inf), eval_sims=(1, math.inf),
              eval_parallel=(1, math.inf), eval_max_battle_turns=(1, math.inf))
POSITIVE = ("minutes", "c_puct", "dirichlet_alpha", "adjudicate_margin", "lr", "replay_ratio")


# what each flag does, for --help (the default is added to it)
HELP = dict(
    seed="random seed",
    minutes="wall-clock training budget in minutes (self-play + learning)",
    iterations="stop earlier after this many iterations",
    checkpoint="checkpoint written after every iteration",
    overwrite="replace the files a previous run left at --checkpoint (its .pt, .log.jsonl, .best.pt, .curve.png); "
              "otherwise such a --checkpoint is refused",
    init="start from this checkpoint's weights ('': a fresh network)",
    threads="torch CPU threads",
    profile="rules profile",
    board_size="board size N (N x N)",
    channels="channels of the network's convolutions",
    blocks="residual blocks of the network",
    phase="what is learned: 'placement' (the battle is judged by playouts in training and played by "
          "--battle in games) or 'game' (placement and battle)",
    games="self-play games played at once per iteration (one network batch)",
    sims="simulations per decision in self-play",
    c_puct="PUCT exploration constant",
    fpu="value of unvisited edges",
    dirichlet_alpha="alpha of the Dirichlet noise at the root",
    dirichlet_eps="weight of the Dirichlet noise at the root",
    temp_decisions="decisions played with temperature 1, then the most visited action",
    league="bot specs (space-separated) that play one side of some self-play games ('': pure self-play)",
    league_share="fraction of the games played against a league bot (when --league is set)",
    adjudicate_turns="phase 'game': battle turns after which a self-play game is scored by stones",
    adjudicate_margin="stone difference that counts as a full win",
    judge="phase 'placement': bot spec playing both sides of the battles that score a finished "
          "self-play placement, or 'greedy' (fast greedy playouts)",
    judge_turns="battle turns of a judging playout inside the search",
    judge_playouts="greedy playouts per battle leaf inside the search",
    judge_final_playouts="battles that score a finished placement (their mean)",
    judge_final_turns="battle turns of those battles (0: --judge-turns; a large value: to the end)",
    lr="learning rate (AdamW)",
    weight_decay="AdamW weight decay",
    batch_size="training batch size",
    replay_ratio="times each new sample is drawn for training, on average",
    buffer_size="replay buffer size (samples)",
    augment="random rules-preserving board symmetry per sampled position",
    match_every="iterations between matches against --opponent (0: no matches); the best-scoring "
                "network is kept as <checkpoint>.best.pt",
    match_games="games of each match during training",
    evaluate="checkpoint to evaluate instead of training ('': train)",
    opponent="bot spec of the opponent in matches and evaluation",
    battle="who plays the network's battle: 'net' or a bot spec ('': 'net' for a 'game' checkpoint, "
           "'mcts:sims=<eval_sims>' for a 'placement' one)",
    eval_games="games against --opponent after training (0: none)",
    eval_sims="simulations per decision in matches and evaluation",
    eval_parallel="evaluation games played at once",
    eval_max_battle_turns="battle turn limit (rules option) of the evaluation games",
    quick="tiny smoke run (< 1 min): small board, network and budget unless given explicitly",
)


def make_parser(defaults=True):
    """A ``--flag`` per field of ``Args``; ``defaults=False`` leaves the flags that are not given out of the
    namespace (how --quick and --evaluate tell a flag given, at any value and however abbreviated, from one not)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        quick = f"; --quick: {QUICK[f.name]!r}" if f.name in QUICK else ""
        text = f"{HELP[f.name]} (default {f.default!r}{quick})".replace("%", "%%")
        default = f.default if defaults else argparse.SUPPRESS
        if f.type is bool or f.type == "bool":
            ap.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=text)
        else:
            typ = {"int": int, "float": float, "str": str}.get(f.type, f.type) if isinstance(f.type, str) else f.type
            ap.add_argument(flag, type=typ, default=default, choices=CHOICES.get(f.name), help=text)
    return ap


def given_flags(argv=None):
    """The fields whose flags the command line gives."""
    return set(vars(make_parser(defaults=False).parse_args(argv)))


def parse_args(argv=None):
    """``Args`` from the command line (every field is a ``--flag``); with ``--quick``, QUICK replaces the values of
    the flags not given.  A value no run can use is an argument error naming its flag (exit code 2)."""
    ap = make_parser()
    args = Args(**vars(ap.parse_args(argv)))
    if args.quick:
        given = given_flags(argv)
        for k, v in QUICK.items():
            if k not in given:
                setattr(args, k, v)
    for name, (lo, hi) in LIMITS.items():
        v = getattr(args, name)
        if not (math.isfinite(v) and lo <= v <= hi):  # NaN and the infinities too
            ap.error(f"--{name.replace('_', '-')} {v!r}: must be >= {lo}{'' if math.isinf(hi) else f' and <= {hi}'}")
    for name in POSITIVE:
        if not 0 < getattr(args, name) < math.inf:
            ap.error(f"--{name.replace('_', '-')} {getattr(args, name)!r}: must be a number > 0")
    if args.init and not pathlib.Path(args.init).is_file():
        ap.error(f"--init {args.init}: no such checkpoint file")
    if not args.evaluate:  # --evaluate plays on the checkpoint's rules (checked against these in main)
        try:
            Rules.make(args.profile, board_size=args.board_size, max_battle_turns=args.eval_max_battle_turns)
        except (TypeError, ValueError) as e:
            ap.error(f"--profile/--board-size/--eval-max-battle-turns: {e}")
    return args


# ------------------------------------------------------------------ replay buffer
class Replay:
    """A ring of training samples: planes (float16), visit distribution, legal mask, outcome, phase."""

    def __init__(self, size, n, num_actions):
        self.obs = np.zeros((size, n, n, NUM_PLANES), np.float16)
        self.pi = np.zeros((size, num_actions), np.float16)
        self.mask = np.zeros((size, num_actions), bool)
        self.z = np.zeros(size, np.float32)
        self.placement = np.zeros(size, bool)
        self.size, self.n, self.count, self.head = size, n, 0, 0

    def add(self, obs, pi, mask, z, placement):
        k = len(z)
        if k == 0:
            return
        j = (self.head + np.arange(k)) % self.size
        self.obs[j], self.pi[j], self.mask[j] = np.asarray(obs), np.asarray(pi), np.asarray(mask)
        self.z[j], self.placement[j] = np.asarray(z), np.asarray(placement)
        self.head = int((self.head + k) % self.size)
        self.count = min(self.count + k, self.size)

    def sample(self, batch, rng, augment):
        """A batch ``(obs, pi, mask, z)``, each position mapped by a random symmetry of its phase."""
        idx = rng.integers(self.count, size=batch)
        obs = self.obs[idx].astype(np.float32)
        pi = self.pi[idx].astype(np.float32)
        mask = self.mask[idx]
        if augment:
            sym = np.where(self.placement[idx],
                           np.asarray(S.placement_symmetries(self.n))[rng.integers(len(S.placement_symmetries(self.n)), size=batch)],
                           rng.integers(S.NUM_SYMMETRIES, size=batch))
            for g in np.unique(sym):
                if g == S.IDENTITY:
                    continue
                sel = sym == g
                obs[sel] = S.transform_observation(obs[sel], int(g))
                pi[sel] = S.transform_policy(pi[sel], int(g), self.n)
                mask[sel] = S.transform_policy(mask[sel], int(g), self.n)
        return obs, pi, mask, self.z[idx]


# ------------------------------------------------------------------ self-play
def _finished(s, args):
    """Is this self-play game over (placement mode: the board is full)?"""
    if args.phase == "placement":
        return s[K.H_PHASE] != K.PH_PLACEMENT
    return terminal_value(s, args.adjudicate_turns, args.adjudicate_margin)[0]


def bot_battle(s, spec, turns, margin, seed, battles=1):
    """White's mean score of ``battles`` battles from position ``s`` in which the bot ``spec``
    plays both sides (seeded from ``seed``) for up to ``turns`` turns."""
    total = 0.0
    for b in range(battles):
        t = s.copy()
        stop = int(t[K.H_TURNS]) + turns
        bots = {K.WHITE: make_bot(spec, seed=2 * (seed + b)), K.BLACK: make_bot(spec, seed=2 * (seed + b) + 1)}
        while t[K.H_PHASE] == K.PH_BATTLE and t[K.H_TURNS] < stop:
            K.apply_action(t, int(bots[int(t[K.H_TO_MOVE])].step(t)))
        total += terminal_value(t, stop, margin)[1]
    return total / battles


def _outcome(s, args, seed):
    """White's training target of a finished self-play game."""
    if args.phase == "placement":
        if s[K.H_PHASE] != K.PH_BATTLE:
            return terminal_value(s, 0, args.adjudicate_margin)[1]
        turns = args.judge_final_turns or args.judge_turns
        if args.judge == "greedy":
            return judge_battle(s, turns, args.adjudicate_margin, args.judge_final_playouts)
        return bot_battle(s, args.judge, turns, args.adjudicate_margin, seed, args.judge_final_playouts)
    return terminal_value(s, args.adjudicate_turns, args.adjudicate_margin)[1]


def make_search(evaluate, rules, num_trees, sims, args):
    """The self-play search: battle leaves judged (placement) or adjudicated (game)."""
    if args.phase == "placement":
        return PUCT(evaluate, rules.board_size, rules.new_state().size, num_trees, sims, args.c_puct, args.fpu,
                    0, args.adjudicate_margin, args.judge_turns, args.judge_playouts)
    return PUCT(evaluate, rules.board_size, rules.new_state().size, num_trees, sims, args.c_puct, args.fpu,
                args.adjudicate_turns, args.adjudicate_margin)


def self_play(search, rules, args, rng):
    """Play ``args.games`` games at once; return the samples and statistics."""
    n, na = rules.board_size, rules.num_actions
    states = [rules.new_state() for _ in range(args.games)]
    records = [[] for _ in states]  # (obs, pi, mask, mover, placement)
    decisions = np.zeros(len(states), np.int64)
    buf = np.empty(na, np.int64)
    # league games: a bot plays one side, the network White in even games; only its decisions are learned
    specs = args.league.split()
    league = {}  # game -> (the network's colour, bot spec, bot)
    for i in range(int(round(args.league_share * len(states))) if specs else 0):
        spec = specs[(i // 2) % len(specs)]
        league[i] = (K.WHITE if i % 2 == 0 else K.BLACK, spec, make_bot(spec, seed=int(rng.integers(2 ** 31))))
    while True:
        live = [i for i, s in enumerate(states) if not _finished(s, args)]
        if not live:
            break
        to_search = []
        for i in live:
            s = states[i]
            if i in league and s[K.H_TO_MOVE] != league[i][0]:
                K.apply_action(s, int(league[i][2].step(s)))
                continue
            k = K.legal_actions(s, buf)
            if k == 1:  # forced: no decision to learn
                K.apply_action(s, int(buf[0]))
                decisions[i] += 1
            else:
                to_search.append(i)
        if not to_search:
            continue
        results = search.search([states[i] for i in to_search], rng, args.dirichlet_alpha, args.dirichlet_eps)
        for i, (acts, visits, _) in zip(to_search, results):
            s = states[i]
            mover = int(s[K.H_TO_MOVE])
            obs = np.empty((n, n, NUM_PLANES), np.float32)
            write_observation(s, mover, obs)
            pi = np.zeros(na, np.float32)
            pi[acts] = visits / visits.sum()
            mask = np.zeros(na, bool)
            mask[acts] = True
            records[i].append((obs, pi, mask, mover, s[K.H_PHASE] == K.PH_PLACEMENT))
            temp = 1.0 if decisions[i] < args.temp_decisions else 0.0
            K.apply_action(s, pick_action(acts, visits, temp, rng))
            decisions[i] += 1
    out = {"obs": [], "pi": [], "mask": [], "z": [], "placement": []}
    stats = {"white": 0, "black": 0, "draw": 0, "decisions": int(decisions.sum()), "mean_abs_z": 0.0}
    vs = {}  # league bot -> [games, the network's summed score in 0..1]
    for i, (s, rec) in enumerate(zip(states, records)):
        zw = _outcome(s, args, int(rng.integers(2 ** 31)))
        stats["white" if zw > 0 else "black" if zw < 0 else "draw"] += 1
        stats["mean_abs_z"] += abs(zw) / len(states)
        if i in league:
            row = vs.setdefault(league[i][1], [0, 0.0])
            row[0] += 1
            row[1] += (1.0 + (zw if league[i][0] == K.WHITE else -zw)) / 2
        for obs, pi, mask, mover, placement in rec:
            out["obs"].append(obs)
            out["pi"].append(pi)
            out["mask"].append(mask)
            out["z"].append(zw if mover == K.WHITE else -zw)
            out["placement"].append(placement)
    for spec, (g, score) in vs.items():
        stats[f"score_vs[{spec}]"] = round(score / g, 3)
    return out, stats


# ------------------------------------------------------------------ learning
def train_steps(net, opt, replay, steps, args, rng):
    """``steps`` gradient steps on replay batches; mean (policy loss, value loss)."""
    import torch
    import torch.nn.functional as F

    net.train()
    lp = lv = 0.0
    for _ in range(steps):
        obs, pi, mask, z = replay.sample(args.batch_size, rng, args.augment)
        x = torch.from_numpy(np.ascontiguousarray(obs.transpose(0, 3, 1, 2)))
        logits, v = net(x)
        logits = logits.masked_fill(~torch.from_numpy(mask), -1e9)
        loss_p = -(torch.from_numpy(pi) * F.log_softmax(logits, dim=1)).sum(dim=1).mean()
        loss_v = F.mse_loss(v, torch.from_numpy(z))
        opt.zero_grad()
        (loss_p + loss_v).backward()
        opt.step()
        lp += loss_p.item()
        lv += loss_v.item()
    net.eval()
    return lp / max(steps, 1), lv / max(steps, 1)


def rules_of(args):
    return Rules.make(args.profile, board_size=args.board_size)


def run_files(checkpoint):
    """The files a training run writes at ``checkpoint``: the checkpoint, its log, best network and curve."""
    path = pathlib.Path(checkpoint)
    return [path, path.with_suffix(".log.jsonl"), path.with_suffix(".best.pt"), path.with_suffix(".curve.png")]


def previous_run(args):
    """Why training into ``--checkpoint`` would overwrite a previous run's files (None: it would not, or
    ``--overwrite``)."""
    old = [str(p) for p in run_files(args.checkpoint) if p.exists()]
    if old and not args.overwrite:
        return (f"--checkpoint {args.checkpoint}: a previous run left {', '.join(old)}: choose another "
                f"--checkpoint, or give --overwrite to replace them")
    return None


def train(args):
    import torch

    problem = previous_run(args)
    if problem:
        raise FileExistsError(problem)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    rules = rules_of(args)
    if args.init:
        net, _ = load_checkpoint(args.init)
    else:
        net = build_net(args.channels, args.blocks)
    net.eval()
    for old in run_files(args.checkpoint)[1:]:  # --overwrite: this run's files only (the checkpoint is replaced
        old.unlink(missing_ok=True)             # whole at the first save, so --init may name it)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    search = make_search(make_evaluator(net), rules, args.games, args.sims, args)
    replay = Replay(args.buffer_size, rules.board_size, rules.num_actions)
    log_path = pathlib.Path(args.checkpoint).with_suffix(".log.jsonl")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = log_path.open("x")  # a log line per iteration, as it goes
    t0 = time.time()
    games = samples = 0
    it = 0
    best, best_path = -1.0, pathlib.Path(args.checkpoint).with_suffix(".best.pt")
    while it < args.iterations and time.time() - t0 < args.minutes * 60:
        it += 1
        ts = time.time()
        data, stats = self_play(search, rules, args, rng)
        replay.add(data["obs"], data["pi"], data["mask"], data["z"], data["placement"])
        t_play = time.time() - ts
        steps = max(1, math.ceil(len(data["z"]) * args.replay_ratio / args.batch_size))
        lp, lv = train_steps(net, opt, replay, steps, args, rng)
        games += args.games
        samples += len(data["z"])
        row = {"iteration": it, "minutes": round((time.time() - t0) / 60, 2), "games": games, "samples": samples,
               "play_s": round(t_play, 1), "train_steps": steps, "loss_policy": round(lp, 4),
               "loss_value": round(lv, 4), **{k: (round(v, 2) if isinstance(v, float) else v) for k, v in stats.items()}}
        meta = {"phase": args.phase, "iterations": it, "games": games, "samples": samples, "minutes": row["minutes"],
                "args": json.dumps(dataclasses.asdict(args))}
        if args.match_every and it % args.match_every == 0:
            # the training clock stops during the match: the budget counts learning time only
            tm = time.time()
            res = evaluate(net, args, args.match_games, args.opponent, args.eval_sims, seed=args.seed + 1000,
                           verbose=False, phase=args.phase, options=search_options({"meta": meta}))
            row["match"] = {"opponent": args.opponent, "sims": args.eval_sims, "wins": res["wins"],
                            "losses": res["losses"], "draws": res["draws"], "score": round(res["score"], 3)}
            if res["score"] > best:
                best = res["score"]
                save_checkpoint(best_path, net, rules, meta={**meta, "match": json.dumps(row["match"])})
            t0 += time.time() - tm
        print(json.dumps(row), flush=True)
        log.write(json.dumps(row) + "\n")
        log.flush()
        save_checkpoint(args.checkpoint, net, rules, meta=meta)
    log.close()
    print(f"trained {it} iterations, {games} games, {samples} samples in {(time.time() - t0) / 60:.1f} min; "
          f"checkpoint {args.checkpoint}" + (f", best match score {best:.3f}: {best_path}" if best >= 0 else ""))
    plot_curve(log_path)
    return net


def plot_curve(log_path):
    """PNG beside the log: match score against the opponent, and the self-play league scores, over training time."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = [json.loads(line) for line in pathlib.Path(log_path).read_text().splitlines() if line.strip()]
    fig, ax = plt.subplots(figsize=(7, 4))
    m = [r for r in rows if "match" in r]
    if m:
        ax.plot([r["minutes"] for r in m], [r["match"]["score"] for r in m], "o-",
                label=f"match vs {m[0]['match']['opponent']} ({m[0]['match']['sims']} sims, "
                      f"{sum(m[0]['match'][k] for k in ('wins', 'losses', 'draws'))} games)")
    for key in sorted({k for r in rows for k in r if k.startswith("score_vs[")}):
        ax.plot([r["minutes"] for r in rows if key in r], [r[key] for r in rows if key in r], lw=0.8, alpha=0.6,
                label=f"self-play league, {key.replace('score_vs', 'vs')} (exploring)")
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("training minutes")
    ax.set_ylabel("score")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(pathlib.Path(log_path).name.replace(".log.jsonl", ""))
    out = pathlib.Path(log_path).with_name(pathlib.Path(log_path).name.replace(".log.jsonl", ".curve.png"))
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, dpi=110, format="png")
    plt.close(fig)
    atomic_write_bytes(out, buf.getvalue())
    return out


# ------------------------------------------------------------------ evaluation
def battle_spec(args, phase, sims):
    """Who plays the network's battle phase in evaluation games (``None``: the network)."""
    spec = args.battle or ("net" if phase == "game" else f"mcts:sims={sims}")
    return None if spec == "net" else spec


def evaluate(net, args, games, opponent, sims, seed=0, verbose=True, phase="game", options=None):
    """Play ``games`` games against the bot spec ``opponent``, colours alternating.

    The network plays PUCT with ``sims`` simulations and temperature 0 (the
    search of ``AlphaZeroBot``, with the checkpoint's ``options`` from
    :func:`search_options`), and the battle too unless :func:`battle_spec`
    names a bot for it; ``eval_parallel`` games run at once.  Returns a dict
    with wins / losses / draws from the network's point of view.
    """
    rules = Rules.make(args.profile, board_size=args.board_size, max_battle_turns=args.eval_max_battle_turns)
    rng = np.random.default_rng(seed)
    search = PUCT(make_evaluator(net), rules.board_size, rules.new_state().size, args.eval_parallel, sims, args.c_puct,
                  **(options or {}))
    res = {"wins": 0, "losses": 0, "draws": 0, "as_white": [0, 0, 0], "as_black": [0, 0, 0], "reasons": {},
           "battle_turns": [], "seconds": 0.0}
    t0 = time.time()
    buf = np.empty(rules.num_actions, np.int64)
    for first in range(0, games, args.eval_parallel):
        idx = list(range(first, min(games, first + args.eval_parallel)))
        states = {i: rules.new_state() for i in idx}
        az_colour = {i: K.WHITE if i % 2 == 0 else K.BLACK for i in idx}
        bots = {i: make_bot(opponent, seed=seed * 1000 + i) for i in idx}
        spec = battle_spec(args, phase, sims)
        own_battle = {i: make_bot(spec, seed=seed * 1000 + 500 + i) for i in idx} if spec else {}
        while True:
            live = [i for i in idx if states[i][K.H_PHASE] != K.PH_OVER]
            if not live:
                break
            mine = []
            for i in live:
                s = states[i]
                if s[K.H_TO_MOVE] != az_colour[i]:
                    a = bots[i].step(s)
                elif own_battle and s[K.H_PHASE] == K.PH_BATTLE:
                    a = own_battle[i].step(s)
                else:
                    k = K.legal_actions(s, buf)
                    if k > 1:
                        mine.append(i)
                        continue
                    a = int(buf[0])
                K.apply_action(s, int(a))
            if mine:
                for i, (acts, visits, _) in zip(mine, search.search([states[i] for i in mine])):
                    K.apply_action(states[i], pick_action(acts, visits, 0.0, rng))
        for i in idx:
            s = states[i]
            w = int(s[K.H_WINNER])
            me = az_colour[i]
            key = 0 if w == me else 1 if w == 3 - me else 2
            res[["wins", "losses", "draws"][key]] += 1
            res["as_white" if me == K.WHITE else "as_black"][key] += 1
            reason = ("", "too_few_stones", "no_move", "repetition", "turn_limit")[int(s[K.H_END_REASON])]
            res["reasons"][reason] = res["reasons"].get(reason, 0) + 1
            res["battle_turns"].append(int(s[K.H_TURNS]))
        if verbose:
            print(f"  after {idx[-1] + 1} games: +{res['wins']} -{res['losses']} ={res['draws']} "
                  f"({time.time() - t0:.0f} s)", flush=True)
    res["seconds"] = round(time.time() - t0, 1)
    res["score"] = (res["wins"] + 0.5 * res["draws"]) / max(games, 1)
    return res


def main(argv=None):
    args = parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    if args.evaluate:
        try:
            net, data = load_checkpoint(args.evaluate)
        except (FileNotFoundError, ValueError) as e:
            make_parser().error(f"--evaluate {args.evaluate}: {e}")
        rules = data.get("rules") or {}
        given = given_flags(argv)
        # the checkpoint's board and profile: a flag given with another value would be silently replaced
        differ = [f"--{k.replace('_', '-')} {getattr(args, k)!r} (the checkpoint's: {rules[k]!r})"
                  for k in ("board_size", "profile") if k in given and k in rules and getattr(args, k) != rules[k]]
        if differ:
            make_parser().error(f"--evaluate {args.evaluate} plays on the rules it was trained on: "
                                f"{', '.join(differ)}; leave these flags out")
        args.board_size = rules.get("board_size", args.board_size)
        args.profile = rules.get("profile", args.profile)
        try:
            Rules.make(args.profile, board_size=args.board_size, max_battle_turns=args.eval_max_battle_turns)
        except (TypeError, ValueError) as e:
            make_parser().error(f"--eval-max-battle-turns: {e}")
        phase = data["meta"].get("phase", "game")
        options = search_options(data)
    else:
        problem = previous_run(args)
        if problem:
            make_parser().error(problem)
        net = train(args)
        phase = args.phase
        options = search_options({"meta": {"phase": phase, "args": json.dumps(dataclasses.asdict(args))}})
    if args.evaluate or args.eval_games:
        n = args.eval_games or 20
        res = evaluate(net, args, n, args.opponent, args.eval_sims, seed=args.seed, phase=phase, options=options)
        print(json.dumps({"opponent": args.opponent, "sims": args.eval_sims,
                          "battle": battle_spec(args, phase, args.eval_sims) or "net", **res}))
        return res
    return None


if __name__ == "__main__":
    main()
