"""MaskablePPO against the built-in bots, with a curriculum random -> greedy -> pattern.

One file, CleanRL style: every hyper-parameter is a field of ``Args`` below and
a command-line flag (``--n-envs 4``, ``--minutes 10``...).

- env: ``JiuVsBotEnv`` (``jiu_env/JiuVsBot-v0``), 14x14 competitive rules,
  each game starting at the battle phase after a uniformly random placement
  (``start="battle"``); the learner plays White or Black at random; reward
  +1 / -1 / 0 at the end plus a small capture shaping (``capture_reward`` per
  stone taken, minus the same per stone lost); ``adjudicate="material"``
  (off by default) also scores a game stopped by the turn limit +-1 for the
  side with more stones;
- policy: ``jiu_env.sb3.JiuPolicy``, a small CNN trunk with a spatial action
  head (one logit plane per action kind) and a pooled value head;
- warm start (``bc_games > 0``, the default): before PPO the teacher bot
  ``bc_teacher`` (alpha-beta, one turn deep) plays ``bc_games`` games as the
  learner against ``bc_opponent`` in the same env, and the network is fitted
  to its decisions (cross-entropy over the legal actions) and to the
  discounted returns (value head) for ``bc_epochs`` epochs; PPO then
  fine-tunes with a low learning rate.  ``--bc-games 0`` is pure RL from
  scratch.  The ``minutes`` budget includes the warm start;
- curriculum: every env plays the current stage's opponent, except a
  ``keep_old`` share of games against earlier stages (the env draws each
  game's opponent uniformly from a list of 8, so the share is in eighths:
  0, or 1/8 to 7/8, a value rounding to neither is refused); the stage moves on when
  the training policy (sampling its actions) has won a ``promote_at`` share of
  its last ``promote_window`` training games against the stage's opponent;
- evaluation every ``eval_every`` steps against each of ``eval_opponents``
  with the evaluation harness (``jiu_env.sb3.evaluate``), colours alternating;
  results go to ``eval.csv``, the learning curves (win rate, and the final
  stone difference, which moves long before wins do) to ``learning_curve.png``,
  and the model to ``model.zip`` (plus ``best.zip``, the one with the best
  total score over the evaluation opponents so far);
- stops after ``total_steps``, ``minutes`` of wall time or ``cpu_minutes``
  of this process's CPU time (0: no CPU limit), whichever first; ``eval.csv``
  has both clocks;
- the rules go into ``model.zip`` (``jiu_env.sb3.set_model_rules``): ``jiu
  eval`` plays ``sb3:model.zip`` on them when given no rules, and refuses a
  game of other rules naming both; so does what it learned
  (``jiu_env.sb3.set_model_phase``: ``"battle"`` with ``start="battle"``,
  else ``"game"``, and ``"game"`` for an ``--init`` whole-game model, whose
  placement more battles do not undo): a battle-only model plays whole games
  from random placements (``phases:random+sb3:model.zip``), and ``jiu eval``
  says so;
- presets (``--preset NAME``, :data:`PRESETS`) set a whole recipe's defaults;
  flags given explicitly win.  ``--preset scratch8``: 8x8 from scratch (no
  warm start), whole games from the empty board (placement included), the
  rules' 1000-turn limit, ``capture_reward=0.1``, ``adjudicate="material"``,
  curriculum random -> greedy with 50%, 35% and 20% of its decisions random
  (``mix:P:greedy``) -> greedy, 16 envs, one torch thread, 60 CPU minutes
  (``baselines/training/sb3-8-scratch``).  ``--preset scratch14``: 14x14
  from scratch by a board-size curriculum: it starts from the scratch8 run's
  network (``--init``, :func:`jiu_env.sb3.transfer_weights`; the network is
  fully convolutional, so its 8x8 weights play 14x14 as they are) and goes
  on against greedy on 14x14 for 1,441,792 decisions, about 95 CPU minutes
  (``baselines/training/sb3-14-scratch``).  No engine's moves are copied at
  any point: both stages are PPO from random weights.

Use::

    python examples/train_maskable_ppo.py --quick          # smoke run, < 1 min
    python examples/train_maskable_ppo.py --preset scratch8 --out runs/ppo8_scratch   # 8x8 from scratch, 1 CPU hour
    python examples/train_maskable_ppo.py --preset scratch14   # then 14x14 from that network, ~95 CPU minutes more
    python examples/train_maskable_ppo.py --minutes 30     # the baseline run, into runs/ppo14
    # (an --out holding a previous run's results is refused unless --overwrite is given: the shipped baseline in
    # baselines/training/ppo14 is replaced only with --out baselines/training/ppo14 --overwrite)
    python examples/train_maskable_ppo.py --bc-games 0 --learning-rate 3e-4 --ent-coef 0.01   # pure RL
    jiu eval ppo=sb3:baselines/training/ppo14/model.zip random greedy pattern --gauntlet ppo \\
        --random-opening 196 --games 200 --anchor greedy   # evaluate it again
"""

import argparse
import csv
import dataclasses
import io
import json
import math
import pathlib
import time
from dataclasses import dataclass

from jiu_env.fileio import atomic_write_bytes, atomic_write_text


@dataclass
class Args:
    # rules and env
    rules: str = "competitive"
    board_size: int = 14
    max_battle_turns: int = 1000  # the rules' turn limit (a truncation)
    start: str = "battle"  # "battle": random placement, the learner plays the battle only; "placement": whole games
    capture_reward: float = 0.05  # shaping per stone captured (and minus per stone lost)
    adjudicate: str = "none"  # "material": a game stopped by the turn limit scores +-1 for the side with more stones
    # PPO
    n_envs: int = 8
    n_steps: int = 256  # per env and rollout
    batch_size: int = 512
    n_epochs: int = 4
    learning_rate: float = 1e-4  # low: PPO fine-tunes the cloned policy rather than overwriting it
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.001
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    # network
    channels: int = 32
    layers: int = 4
    # curriculum: opponents in order; the stage moves on when the win rate of the (sampling) policy in its
    # last promote_window training games against the stage's opponent reaches promote_at
    curriculum: str = "random,greedy,pattern"
    promote_at: str = "0.7,0.5"
    promote_window: int = 40
    keep_old: float = 0.25  # share of training games against earlier stages, in eighths (an 8-slot opponent list)
    # warm start: behaviour cloning of a teacher bot before PPO (bc_games = 0: pure RL from scratch).
    # The teacher plays the learner's side against bc_opponent in the same env; the network learns its
    # choices (cross-entropy over the legal actions) and the discounted returns (value head).
    bc_teacher: str = "alphabeta:depth=1"
    bc_opponent: str = "greedy"
    bc_games: int = 500  # about 96k teacher decisions, 1.5 min to record on 2 cores
    bc_epochs: int = 10  # about 40 s each on 2 cores
    bc_batch_size: int = 256
    bc_learning_rate: float = 1e-3
    bc_workers: int = 2  # processes recording teacher games
    # board-size curriculum: start from the weights of a model.zip trained on another board (the network is
    # fully convolutional, jiu_env.sb3.transfer_weights); "" starts from random weights
    init: str = ""
    # evaluation
    eval_every: int = 32_768
    eval_games: int = 16
    eval_opponents: str = "random,greedy,pattern"
    eval_deterministic: bool = True
    # budget and output
    total_steps: int = 3_000_000
    minutes: float = 30.0  # wall-clock budget
    cpu_minutes: float = 0.0  # CPU-time budget of this process (0: none); what counts on a shared machine
    seed: int = 0
    threads: int = 2  # torch threads
    vec_env: str = "dummy"  # "dummy" or "subproc"
    out: str = "runs/ppo14"  # never the shipped baselines/ folder by default
    overwrite: bool = False  # replace the results of a previous run in out (otherwise such an out is refused)
    preset: str = ""  # a named set of defaults (see PRESETS), e.g. "scratch8"; flags given explicitly win
    quick: bool = False


QUICK = dict(board_size=8, max_battle_turns=60, n_envs=2, n_steps=64, batch_size=64, n_epochs=1, channels=8, layers=2,
             promote_window=2, promote_at="0.0,0.0",
             bc_games=2, bc_epochs=1, bc_workers=1,
             eval_every=128, eval_games=2, eval_opponents="random,greedy", total_steps=256, minutes=1.0,
             out="runs/quick_ppo")


#: The values a string flag takes (anything else is an argument error).
CHOICES = dict(start=("battle", "placement"), adjudicate=("none", "material"), vec_env=("dummy", "subproc"))

#: What a flag does, for --help, where its name does not say it all (the default is added to it).
HELP = dict(
    keep_old="share of training games against earlier stages, in eighths: each env draws its opponent from a list "
             "of 8 (the current stage's and earlier ones), so the share is rounded to eighths; 0, or one that rounds "
             "to 1/8..7/8",
    init="a model.zip to start from (a JiuPolicy of these --channels and --layers, trained on these --rules on any "
         "board: a board-size curriculum)",
)

#: The files a run writes into ``out``: an ``out`` holding any of them is refused unless ``--overwrite``.
RESULT_FILES = ("args.json", "eval.csv", "curriculum.json", "learning_curve.png", "model.zip", "best.zip", "bc.json")


#: Named sets of defaults (--preset NAME); flags given on the command line override them, --quick comes last.
PRESETS = {
    # 8x8 from scratch (pure RL, no warm start), whole games from the empty board, the rules' turn limit
    "scratch8": dict(board_size=8, start="placement", bc_games=0, capture_reward=0.1, adjudicate="material",
                     curriculum="random,mix:0.5:greedy,mix:0.35:greedy,mix:0.2:greedy,greedy",
                     promote_at="0.6,0.5,0.5,0.5",
                     keep_old=0.25, learning_rate=3e-4, ent_coef=0.003, n_envs=16, n_steps=128, batch_size=512,
                     eval_every=65_536, eval_games=40, eval_opponents="random,greedy", threads=1,
                     minutes=60.0, cpu_minutes=60.0, out="runs/ppo8_scratch"),
    # 14x14 from scratch by a board-size curriculum: the scratch8 run's network goes on learning on 14x14 against
    # greedy (pure RL throughout: no engine's moves are ever copied); 1,441,792 decisions (22 evaluations, about
    # 95 CPU minutes; 120 at most) here + scratch8's 49 <= 3 h
    "scratch14": dict(board_size=14, start="placement", bc_games=0, capture_reward=0.1, adjudicate="material",
                      init="runs/ppo8_scratch/model.zip", curriculum="greedy", promote_at="", keep_old=0.0,
                      learning_rate=1e-4, ent_coef=0.003, n_envs=16, n_steps=128, batch_size=512,
                      eval_every=65_536, eval_games=40, eval_opponents="random,greedy", threads=1,
                      total_steps=1_441_792, minutes=240.0, cpu_minutes=120.0, out="runs/ppo14_scratch"),
}


def parse_args(argv=None, check_out=False):
    """The command line as ``Args`` (preset, then --quick, under the flags given); a value no run can use is an
    argument error naming its flag.  ``check_out``: also refuse an ``out`` holding a previous run's results
    (unless ``--overwrite``)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        what = HELP[f.name] + " " if f.name in HELP else ""
        if f.type is bool or isinstance(f.default, bool):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                           help=f"(default {f.default}{'; --quick: ' + str(QUICK[f.name]) if f.name in QUICK else ''})")
        else:
            p.add_argument(flag, type=type(f.default), default=None, metavar=f.name.upper(),
                           choices=CHOICES.get(f.name),
                           help=f"{what}(default {f.default}{'; --quick: ' + str(QUICK[f.name]) if f.name in QUICK else ''}"
                                f"{'; one of ' + ', '.join(CHOICES[f.name]) if f.name in CHOICES else ''})")
    ns = vars(p.parse_args(argv))
    args = Args(**{k: v for k, v in ns.items() if v is not None and k != "quick"}, quick=bool(ns["quick"]))
    if args.preset:
        if args.preset not in PRESETS:
            p.error(f"--preset {args.preset!r} is not one of {', '.join(sorted(PRESETS))}")
        for k, v in PRESETS[args.preset].items():
            if ns.get(k) is None:
                setattr(args, k, v)
    if args.quick:  # a smoke run: tiny everything, unless given explicitly
        for k, v in QUICK.items():
            if ns.get(k) is None:
                setattr(args, k, v)
        if ns.get("promote_at") is None:  # promote at once, whatever the number of stages
            args.promote_at = ",".join(["0.0"] * (len(args.curriculum.split(",")) - 1))
    if ns.get("promote_at") is None and not args.preset and not args.quick:
        # the default thresholds are for the default curriculum: another one keeps as many as it has changes
        changes = len(args.curriculum.split(",")) - 1
        default = args.promote_at.split(",") if args.promote_at else []
        args.promote_at = ",".join((default + default[-1:] * changes)[:changes]) if default else ""
    check_args(p, args)
    if check_out:
        check_out_folder(p, args)
    return args


def check_args(p, args):
    """``p.error`` (exit code 2, naming the flag) for a value no run can use, before anything is built."""
    def bad(name, why):
        p.error(f"--{name.replace('_', '-')} {getattr(args, name)!r}: {why}")

    for name in ("n_envs", "n_steps", "batch_size", "n_epochs", "channels", "layers", "promote_window", "bc_epochs",
                 "bc_batch_size", "bc_workers", "eval_every", "eval_games", "total_steps", "threads"):
        if getattr(args, name) < 1:
            bad(name, "must be at least 1")
    check_ppo_batches(p, args)
    if not 0 <= args.seed <= SEED_MAX:
        bad("seed", f"must be a whole number in 0..{SEED_MAX}")
    if args.bc_games < 0:
        bad("bc_games", "must be at least 0 (0: no warm start)")
    for name, lo, hi, what in (("learning_rate", 0, math.inf, "> 0"), ("bc_learning_rate", 0, math.inf, "> 0"),
                               ("clip_range", 0, math.inf, "> 0"), ("max_grad_norm", 0, math.inf, "> 0"),
                               ("minutes", 0, math.inf, "> 0")):
        if not lo < getattr(args, name) < hi:
            bad(name, f"must be a number {what}")
    for name, lo, hi in (("gamma", 0, 1), ("gae_lambda", 0, 1), ("keep_old", 0, 1), ("ent_coef", 0, math.inf),
                         ("vf_coef", 0, math.inf), ("cpu_minutes", 0, math.inf)):
        if not lo <= getattr(args, name) <= hi:
            bad(name, f"must be a number in {lo}..{hi}")
    if not math.isfinite(args.capture_reward):
        bad("capture_reward", "must be a finite number")
    if args.keep_old > 0 and not 1 <= round(args.keep_old * 8) <= 7:
        # at 8 eighths no game is against the current stage (which then never promotes); at 0 it would be 1/8
        bad("keep_old", "the share of games against earlier stages is in eighths (an 8-slot opponent list): give 0, "
                        "or a share that rounds to 1/8..7/8 (0.0625 < keep_old < 0.9375)")
    stages = args.curriculum.split(",")
    try:
        promote = [float(x) for x in args.promote_at.split(",")] if args.promote_at else []
    except ValueError:
        bad("promote_at", "must be comma-separated numbers in 0..1, one per change of curriculum stage")
    if not all(0 <= x <= 1 for x in promote):
        bad("promote_at", "every threshold must be a number in 0..1")
    if len(promote) != len(stages) - 1:
        bad("promote_at", f"gives {len(promote)} threshold(s) for the {len(stages) - 1} change(s) of stage of "
                          f"--curriculum {args.curriculum!r}: give one per change")
    from jiu_env import Rules
    from jiu_env.players import make_player

    for name, specs in (("curriculum", stages), ("eval_opponents", args.eval_opponents.split(",")),
                        ("bc_teacher", [args.bc_teacher]), ("bc_opponent", [args.bc_opponent])):
        for spec in specs:
            try:
                make_player(spec, seed=0)
            except (ValueError, TypeError, OSError, ImportError) as e:
                bad(name, f"{spec!r}: {e}")
    try:
        Rules.make(args.rules, board_size=args.board_size, max_battle_turns=args.max_battle_turns)
    except (TypeError, ValueError) as e:
        p.error(f"--rules/--board-size/--max-battle-turns: {e}")
    if args.init and not pathlib.Path(args.init).is_file():
        p.error(f"--init {args.init}: no such model file (the scratch14 preset starts from the scratch8 "
                "run's model: run --preset scratch8 first, or pass --init PATH)")
    if args.init:
        check_init(p, args)


#: The largest --seed (numpy's and torch's seeds are 32-bit; each env gets seed + its index).
SEED_MAX = 2**31 - 1


def check_ppo_batches(p, args):
    """PPO normalises the advantages over each minibatch: a minibatch of one sample gives NaN (SB3 then stops
    mid-run), so the rollout (n_steps x n_envs) is split into minibatches of at least 2."""
    rollout = args.n_steps * args.n_envs
    if args.batch_size < 2:
        p.error(f"--batch-size {args.batch_size}: must be at least 2 (the advantages are normalised over each "
                "minibatch)")
    if rollout < 2:
        p.error(f"--n-steps {args.n_steps} x --n-envs {args.n_envs}: a rollout of {rollout} step; must be at "
                "least 2 (the advantages are normalised over each minibatch)")
    if rollout > args.batch_size and rollout % args.batch_size == 1:
        p.error(f"--batch-size {args.batch_size}: the rollout of --n-steps {args.n_steps} x --n-envs {args.n_envs} = "
                f"{rollout} steps would leave a last minibatch of one step (the advantages are normalised over each "
                "minibatch): choose sizes that leave none, or at least 2")


def check_init(p, args):
    """``p.error`` unless ``--init`` is a MaskablePPO model of this network (--channels, --layers) whose rules are
    this run's (--rules), on any board: the board-size curriculum moves the weights onto this run's board."""
    import inspect

    from jiu_env import Rules
    from jiu_env.players import rules_mismatch
    from jiu_env.sb3 import JiuPolicy, load_sb3_model, model_rules

    try:
        model = load_sb3_model(args.init)
        trained = model_rules(args.init)
    except (ValueError, OSError) as e:
        p.error(f"--init {args.init}: {e}")
    if not isinstance(model.policy, JiuPolicy):
        p.error(f"--init {args.init}: a {type(model.policy).__name__} policy, not a JiuPolicy: its weights do not "
                "transfer")
    net = model.policy._get_constructor_parameters()
    value_hidden = inspect.signature(JiuPolicy).parameters["value_hidden"].default  # what this script builds
    diff = [f"--{k} {net[k]} (here: {getattr(args, k)})" for k in ("channels", "layers")
            if net[k] != getattr(args, k)]
    diff += [f"value_hidden {net['value_hidden']} (here: {value_hidden})"] if net["value_hidden"] != value_hidden else []
    if diff:
        p.error(f"--init {args.init} is another network: {', '.join(diff)}; give its --channels and --layers")
    if trained is None:  # a model that records no rules: only its board is known, and any board will do
        return
    try:  # this run's rules on the model's board: what the model must have learned
        here = Rules.make(args.rules, board_size=trained.board_size, max_battle_turns=args.max_battle_turns)
        diff = rules_mismatch(trained, here)
    except (TypeError, ValueError) as e:
        diff = [f"--rules {args.rules} has no {trained.board_size}x{trained.board_size} board ({e})"]
    if diff:
        p.error(f"--init {args.init} was trained on other rules than --rules {args.rules}: {'; '.join(diff)}")


def check_out_folder(p, args):
    """Refuse an ``out`` that holds a previous run's results, unless ``--overwrite`` (which removes them)."""
    out = pathlib.Path(args.out)
    if out.exists() and not out.is_dir():
        p.error(f"--out {args.out}: not a folder")
    old = [name for name in RESULT_FILES if (out / name).exists()]
    init = getattr(args, "init", None)
    if old and init and pathlib.Path(init).resolve() in {(out / name).resolve() for name in old}:
        # --overwrite would delete the model this run starts from before it is loaded
        p.error(f"--init {init} is a result of the run in --out {args.out}, which this run would replace: copy it "
                "elsewhere first, or choose another --out")
    if old and not args.overwrite:
        p.error(f"--out {args.out} holds a previous run's results ({', '.join(old)}): choose another --out, "
                f"or give --overwrite to replace them")
    for name in old:  # --overwrite: the folder then holds this run's results only
        (out / name).unlink()


def main(argv=None):
    args = parse_args(argv, check_out=True)
    t_start = time.time()  # the minutes budget counts from here (a behaviour-cloning warm start included)
    cpu_start = time.process_time()

    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from jiu_env.sb3 import JiuPolicy, evaluate, run_phase, set_model_phase, set_model_rules
    from jiu_env import JiuVsBotEnv

    torch.set_num_threads(args.threads)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "args.json", json.dumps(dataclasses.asdict(args), indent=2))
    stages = args.curriculum.split(",")
    promote = [float(x) for x in args.promote_at.split(",")] if args.promote_at else []
    eval_opps = args.eval_opponents.split(",")
    rule_options = dict(rules=args.rules, board_size=args.board_size, max_battle_turns=args.max_battle_turns)

    def stage_mix(k):
        """Opponent list for stage k: mostly stage k, a keep_old share spread over earlier stages."""
        if k == 0 or args.keep_old <= 0:
            return [stages[k]]
        n_old = round(args.keep_old * 8)  # eighths: check_args refused a share that rounds to 0 or 8
        return [stages[k]] * (8 - n_old) + [stages[i % k] for i in range(n_old)]

    env_kwargs = dict(opponent=stage_mix(0), learner="random", start=args.start,
                      capture_reward=args.capture_reward, adjudicate=args.adjudicate, **rule_options)
    vec_cls = {"dummy": DummyVecEnv, "subproc": SubprocVecEnv}[args.vec_env]
    venv = make_vec_env(JiuVsBotEnv, n_envs=args.n_envs, seed=args.seed, env_kwargs=env_kwargs, vec_env_cls=vec_cls)
    model = MaskablePPO(
        JiuPolicy, venv, learning_rate=args.learning_rate, n_steps=args.n_steps, batch_size=args.batch_size,
        n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip_range,
        ent_coef=args.ent_coef, vf_coef=args.vf_coef, max_grad_norm=args.max_grad_norm,
        policy_kwargs=dict(channels=args.channels, layers=args.layers), seed=args.seed, verbose=0, device="cpu")
    # the rules travel in model.zip: jiu eval / jiu play then play the model on them and refuse others
    set_model_rules(model, **rule_options)
    # and what it learns: the battle only (from random placements) or whole games; jiu eval and make_bot give a
    # battle-only model random placement in whole games (phases:random+sb3:model.zip) and say so
    set_model_phase(model, run_phase(args.start, args.init))
    if args.init:  # parse_args checked that it is a model of this network and these rules
        from jiu_env.sb3 import transfer_weights
        moved = transfer_weights(args.init, model)
        print(f"started from {args.init}: {moved['parameters']} weights (board-size curriculum)")
    n_params = sum(p.numel() for p in model.policy.parameters())
    print(f"JiuPolicy: {n_params} parameters; {args.n_envs} envs x {args.n_steps} steps per rollout")
    if args.bc_games > 0:
        behaviour_clone(model, args, rule_options, out)

    class CurriculumEval(BaseCallback):
        """Evaluate, log, plot, save and move the curriculum on; stop at the time budget."""

        def __init__(self):
            super().__init__()
            self.t0 = t_start
            self.next_eval = args.eval_every
            self.stage = 0
            self.rows = []
            self.best = None
            self.recent = []  # results of the latest training games against the current stage's opponent
            self.stage_starts = [(0, stages[0])]  # (step, opponent) at every change of stage

        def _on_training_start(self):
            self.next_eval = self.num_timesteps + args.eval_every
            if not self.rows:  # the starting network is the first point of the curve
                self.evaluate()

        def _on_step(self):
            for done, info in zip(self.locals["dones"], self.locals["infos"]):
                if done and info.get("opponent") == stages[self.stage]:
                    self.recent.append(info["outcome"] > 0)
            del self.recent[:-args.promote_window]
            if (self.stage < len(promote) and self.stage + 1 < len(stages) and len(self.recent) >= args.promote_window
                    and np.mean(self.recent) >= promote[self.stage]):
                self.stage += 1
                self.recent = []
                self.stage_starts.append((self.num_timesteps, stages[self.stage]))
                self.training_env.env_method("set_opponent", stage_mix(self.stage))
                print(f"curriculum: step {self.num_timesteps}, now training against {stage_mix(self.stage)}", flush=True)
            if self.num_timesteps >= self.next_eval:
                self.next_eval += args.eval_every
                self.evaluate()
            if args.cpu_minutes and time.process_time() - cpu_start >= args.cpu_minutes * 60:
                return False
            return time.time() - self.t0 < args.minutes * 60

        def _on_training_end(self):
            if not self.rows or self.rows[-1]["steps"] != self.num_timesteps:
                self.evaluate()

        def evaluate(self):
            t = time.time()
            row = {"steps": self.num_timesteps, "minutes": round((t - self.t0) / 60, 2),
                   "cpu_minutes": round((time.process_time() - cpu_start) / 60, 2), "stage": stages[self.stage],
                   "train_win": round(float(np.mean(self.recent)), 3) if self.recent else ""}
            for i, opp in enumerate(eval_opps):
                r = evaluate(self.model, opp, n_games=args.eval_games, seed=10_000 + 1000 * i,
                             deterministic=args.eval_deterministic, start=args.start, **rule_options)
                row[f"win_{opp}"] = r["win_rate"]
                row[f"score_{opp}"] = r["score"]
                row[f"turns_{opp}"] = round(r["mean_turns"], 1)
                row[f"material_{opp}"] = round(r["material"], 1)
            row["eval_seconds"] = round(time.time() - t, 1)
            self.rows.append(row)
            print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
            write_csv(out / "eval.csv", self.rows)
            atomic_write_text(out / "curriculum.json", json.dumps(self.stage_starts))
            plot_curve(out / "learning_curve.png", self.rows, eval_opps, self.stage_starts)
            save_model(self.model, out / "model.zip")
            key = sum(row[f"score_{opp}"] for opp in eval_opps)  # best: the highest total score
            if self.best is None or key >= self.best:
                self.best = key
                save_model(self.model, out / "best.zip")

    cb = CurriculumEval()
    model.learn(total_timesteps=args.total_steps, callback=cb)
    minutes = (time.time() - t_start) / 60
    cpu = (time.process_time() - cpu_start) / 60
    print(f"trained {model.num_timesteps} steps in {minutes:.1f} min wall, {cpu:.1f} min CPU "
          f"({model.num_timesteps / (minutes * 60):.0f} steps/s including evaluation and any warm start); results in {out}")
    venv.close()
    return cb.rows


def record_teacher_games(args, rule_options, games, seed):
    """Play ``games`` games of the teacher (as the learner) against ``bc_opponent`` in the training env.

    Returns observations (float16), masks, the teacher's actions and the discounted returns.
    """
    import numpy as np

    from jiu_env.bots import make_bot
    from jiu_env import JiuVsBotEnv

    env = JiuVsBotEnv(opponent=args.bc_opponent, learner="random", start=args.start,
                      capture_reward=args.capture_reward, **rule_options)
    teacher = make_bot(args.bc_teacher, seed=seed)
    obs_l, mask_l, act_l, ret_l = [], [], [], []
    for g in range(games):
        obs, _ = env.reset(seed=seed + g)
        teacher.restart(seed=seed + g)
        rewards, done = [], False
        while not done:
            a = int(teacher.step(env.state))
            obs_l.append(obs.astype(np.float16))
            mask_l.append(env.action_masks())
            act_l.append(a)
            obs, r, term, trunc, _ = env.step(a)
            rewards.append(r)
            done = term or trunc
        ret, g_ret = [], 0.0
        for r in reversed(rewards):
            g_ret = r + args.gamma * g_ret
            ret.append(g_ret)
        ret_l.extend(reversed(ret))
    return np.array(obs_l), np.array(mask_l), np.array(act_l, np.int64), np.array(ret_l, np.float32)


def behaviour_clone(model, args, rule_options, out):
    """Record teacher games (in ``bc_workers`` processes) and fit the policy and value heads to them."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import numpy as np
    import torch

    t0 = time.time()
    w = max(1, args.bc_workers)
    shares = [args.bc_games // w + (i < args.bc_games % w) for i in range(w)]
    jobs = [(args, rule_options, n, args.seed * 1_000_003 + 100_000 * (i + 1)) for i, n in enumerate(shares) if n]
    with ProcessPoolExecutor(len(jobs), mp_context=multiprocessing.get_context("spawn")) as ex:
        parts = list(ex.map(record_teacher_games, *zip(*jobs)))
    obs, masks, acts, rets = (np.concatenate(x) for x in zip(*parts))
    t_record = time.time() - t0
    n = len(acts)
    rng = np.random.default_rng(args.seed)
    perm = rng.permutation(n)
    held, train = perm[: max(1, n // 20)], perm[max(1, n // 20):]  # 5% held out to report accuracy
    policy = model.policy
    opt = torch.optim.Adam(policy.parameters(), lr=args.bc_learning_rate)

    def batch(idx):
        return (torch.as_tensor(obs[idx], dtype=torch.float32), torch.as_tensor(acts[idx]), masks[idx],
                torch.as_tensor(rets[idx]))

    def accuracy():
        policy.set_training_mode(False)
        hit = 0
        with torch.no_grad():
            for i in range(0, len(held), 1024):
                o, a, m, _ = batch(held[i:i + 1024])
                probs = policy.get_distribution(o, action_masks=m).distribution.probs
                hit += int((probs.argmax(1) == a).sum())
        return hit / len(held)

    print(f"behaviour cloning: {n} decisions of {args.bc_teacher} vs {args.bc_opponent} "
          f"from {args.bc_games} games in {t_record:.0f} s", flush=True)
    stats = {"teacher": args.bc_teacher, "opponent": args.bc_opponent, "games": args.bc_games, "decisions": n,
             "record_seconds": round(t_record, 1), "epochs": []}
    for epoch in range(args.bc_epochs):
        policy.set_training_mode(True)
        rng.shuffle(train)
        losses = []
        for i in range(0, len(train), args.bc_batch_size):
            o, a, m, ret = batch(train[i:i + args.bc_batch_size])
            values, log_prob, _ = policy.evaluate_actions(o, a, action_masks=m)
            loss = -log_prob.mean() + args.vf_coef * torch.nn.functional.mse_loss(values.flatten(), ret)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), args.max_grad_norm)
            opt.step()
            losses.append(loss.item())
        acc = accuracy()
        stats["epochs"].append({"loss": round(float(np.mean(losses)), 4), "held_out_accuracy": round(acc, 4),
                                "seconds": round(time.time() - t0, 1)})
        print(f"  epoch {epoch + 1}: loss {np.mean(losses):.3f}, held-out accuracy {acc:.1%} "
              f"({time.time() - t0:.0f} s)", flush=True)
    atomic_write_text(out / "bc.json", json.dumps(stats, indent=2))
    return stats


def save_model(model, path):
    """``model.save(path)`` that replaces ``path`` whole or not at all (a run stopped mid-save keeps the last one)."""
    buf = io.BytesIO()
    model.save(buf)
    atomic_write_bytes(path, buf.getvalue())


def write_csv(path, rows):
    """The rows as a CSV file, replaced whole (atomically)."""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    f = io.StringIO(newline="")
    w = csv.DictWriter(f, fieldnames=keys)
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(path, f.getvalue(), newline="")


def plot_curve(path, rows, opponents, stage_starts):
    """Win rate (top) and final stone difference (middle) against each evaluation opponent over training
    steps, the background showing which opponent the curriculum was training against; the score (wins minus
    losses per game) over wall-clock minutes (bottom)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2, ax3) = plt.subplots(3, 1, figsize=(7, 8.5), gridspec_kw=dict(height_ratios=[3, 2, 2]))
    steps = [r["steps"] for r in rows]
    for opp in opponents:
        ax.plot(steps, [r[f"win_{opp}"] for r in rows], marker="o", label=f"vs {opp}")
        ax2.plot(steps, [r[f"material_{opp}"] for r in rows], marker="o", label=f"vs {opp}")
        ax3.plot([r["minutes"] for r in rows], [r[f"score_{opp}"] for r in rows], marker="o", label=f"vs {opp}")
    ends = [s for s, _ in stage_starts[1:]] + [max(steps[-1], stage_starts[-1][0])]
    for i, ((lo, name), hi) in enumerate(zip(stage_starts, ends)):
        for a in (ax, ax2):
            a.axvspan(lo, hi, color="grey", alpha=0.06 + 0.08 * (i % 2))
        ax.text(lo, 0.5, f" training vs {name}", rotation=90, fontsize=7, va="center", ha="left", color="dimgrey")
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("win rate")
    ax.set_title("MaskablePPO on Jiu: evaluation against the built-in bots")
    ax.grid(alpha=0.3)
    ax.legend(loc="center right")
    ax2.axhline(0, color="black", lw=0.8)
    ax2.set_ylabel("final stones: own - enemy")
    ax2.set_xlabel("environment steps (learner decisions)")
    ax2.grid(alpha=0.3)
    ax2.set_xlim(ax.get_xlim())
    ax3.axhline(0, color="black", lw=0.8)
    ax3.set_ylim(-1.05, 1.05)
    ax3.set_ylabel("score (wins - losses) / games")
    ax3.set_xlabel("wall-clock minutes")
    ax3.grid(alpha=0.3)
    ax3.legend(loc="lower right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, dpi=100, format="png")
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


if __name__ == "__main__":
    main()
