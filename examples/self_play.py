"""Self-play MaskablePPO with a pool of frozen snapshots, evaluated against the built-in ladder.

One file, CleanRL style: every hyper-parameter is a field of ``Args`` below and
a command-line flag (``--pool-size 4``, ``--minutes 10``...).

- env: ``JiuSelfPlayEnv`` (``jiu_env/JiuSelfPlay-v0``): the learner plays
  White or Black at random against an opponent drawn at every reset from a
  pool of snapshots of itself (the newest with probability ``latest_prob``,
  otherwise any of the ``pool_size`` kept); until the first snapshot the
  ``bootstrap`` bot plays.  Battle-phase start after a random placement,
  +1 / -1 / 0 results plus a small capture shaping, as in
  ``train_maskable_ppo.py``;
- ``jiu_env.sb3.SelfPlayCallback`` sends a frozen ``PolicySnapshot`` to every
  env each ``snapshot_every`` steps (pickled to the workers under
  ``--vec-env subproc``);
- ``--init MODEL.zip`` starts from a trained model (for example the result of
  ``train_maskable_ppo.py``) instead of a fresh network: a model of this
  board and these rules (``--board-size``, ``--rules``; anything else is
  refused before the run starts); a whole-game ``--init`` stays one under
  ``--start battle`` (its placement is kept, not replaced by random placing);
- the run's rules go into ``model.zip`` (``jiu_env.sb3.set_model_rules``), as
  in ``train_maskable_ppo.py``;
- evaluation every ``eval_every`` steps against each bot of ``ladder`` with
  the evaluation harness; ``eval.csv``, ``learning_curve.png`` and
  ``model.zip`` go to ``out`` (default ``runs/selfplay14``; an ``out`` holding
  a previous run's results is refused unless ``--overwrite`` is given).

Use::

    python examples/self_play.py --quick                     # smoke run, < 1 min
    python examples/self_play.py --minutes 30                # into runs/selfplay14
    # (the shipped baselines/training/selfplay14 is replaced only with --out baselines/training/selfplay14 --overwrite)
    python examples/self_play.py --init baselines/training/ppo14/model.zip --minutes 30
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
    max_battle_turns: int = 1000
    start: str = "battle"
    capture_reward: float = 0.05
    # self-play pool
    bootstrap: str = "random"  # the opponent until the first snapshot
    snapshot_every: int = 40_000
    pool_size: int = 8
    latest_prob: float = 0.5
    # PPO
    n_envs: int = 8
    n_steps: int = 256
    batch_size: int = 512
    n_epochs: int = 4
    learning_rate: float = 3e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    # network (ignored with --init)
    channels: int = 32
    layers: int = 4
    init: str = ""  # a MaskablePPO .zip to start from
    # evaluation against the built-in ladder
    ladder: str = "random,greedy,pattern"
    eval_every: int = 40_000
    eval_games: int = 16
    # budget and output
    total_steps: int = 3_000_000
    minutes: float = 30.0
    seed: int = 0
    threads: int = 2
    vec_env: str = "dummy"  # "dummy" or "subproc"
    out: str = "runs/selfplay14"  # never the shipped baselines/ folder by default
    overwrite: bool = False
    quick: bool = False


QUICK = dict(board_size=8, max_battle_turns=60, n_envs=2, n_steps=64, batch_size=64, n_epochs=1, channels=8,
             layers=2, snapshot_every=64, pool_size=2, eval_every=128, eval_games=2, ladder="random,greedy",
             total_steps=256, minutes=1.0, out="runs/quick_selfplay")


#: The values a string flag takes (anything else is an argument error).
CHOICES = dict(start=("battle", "placement"), vec_env=("dummy", "subproc"))

#: The files a run writes into ``out``: an ``out`` holding any of them is refused unless ``--overwrite``.
RESULT_FILES = ("args.json", "eval.csv", "learning_curve.png", "model.zip")


# what each flag does, for --help (the default is added to it)
HELP = dict(
    rules="rules profile",
    board_size="board size N (N x N)",
    max_battle_turns="battle turn limit of the rules (a truncation)",
    start="'battle': random placement, the learner plays the battle only; 'placement': whole games",
    capture_reward="reward shaping per stone captured (and minus per stone lost)",
    bootstrap="bot spec of the opponent until the first snapshot",
    snapshot_every="env steps between snapshots of the learner added to the pool",
    pool_size="snapshots kept in the opponent pool (the newest)",
    latest_prob="probability that the opponent is the newest snapshot (otherwise any in the pool)",
    n_envs="parallel envs",
    n_steps="PPO rollout steps per env",
    batch_size="PPO minibatch size (at least 2: the advantages are normalised over each minibatch)",
    n_epochs="PPO epochs per rollout",
    learning_rate="PPO learning rate",
    gamma="discount factor",
    gae_lambda="GAE lambda",
    clip_range="PPO clip range",
    ent_coef="entropy bonus coefficient",
    channels="channels of the network's CNN trunk (ignored with --init)",
    layers="conv layers of the network's CNN trunk (ignored with --init)",
    init="MaskablePPO .zip to start from, trained on this board and these rules ('': a fresh network)",
    ladder="comma-separated bot specs evaluated against",
    eval_every="env steps between evaluations against the ladder",
    eval_games="games per ladder bot and evaluation (colours alternate)",
    total_steps="stop after this many env steps",
    minutes="stop after this many minutes of wall time",
    seed="random seed (0 to 2**31 - 1)",
    threads="torch CPU threads",
    vec_env="vectorised env: 'dummy' (one process) or 'subproc' (one process per env)",
    out="output folder (args.json, eval.csv, learning_curve.png, model.zip)",
    overwrite="replace the results of a previous run in --out (otherwise such a folder is refused)",
    quick="smoke run (< 1 min): tiny board, network and budget unless given explicitly",
)


def parse_args(argv=None, check_out=False):
    """The command line as ``Args`` (--quick under the flags given); a value no run can use is an argument error
    naming its flag.  ``check_out``: also refuse an ``out`` holding a previous run's results (unless
    ``--overwrite``)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        quick = f"; --quick: {QUICK[f.name]!r}" if f.name in QUICK else ""
        text = f"{HELP[f.name]} (default {f.default!r}{quick})".replace("%", "%%")
        if isinstance(f.default, bool):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=text)
        else:
            p.add_argument(flag, type=type(f.default), default=None, choices=CHOICES.get(f.name), help=text)
    ns = vars(p.parse_args(argv))
    args = Args(**{k: v for k, v in ns.items() if v is not None and k != "quick"}, quick=bool(ns["quick"]))
    if args.quick:
        for k, v in QUICK.items():
            if ns.get(k) is None:
                setattr(args, k, v)
    check_args(p, args)
    if check_out:
        check_out_folder(p, args)
    return args


def check_args(p, args):
    """``p.error`` (exit code 2, naming the flag) for a value no run can use, before anything is built."""
    def bad(name, why):
        p.error(f"--{name.replace('_', '-')} {getattr(args, name)!r}: {why}")

    for name in ("snapshot_every", "pool_size", "n_envs", "n_steps", "batch_size", "n_epochs", "channels", "layers",
                 "eval_every", "eval_games", "total_steps", "threads"):
        if getattr(args, name) < 1:
            bad(name, "must be at least 1")
    check_ppo_batches(p, args)
    if not 0 <= args.seed <= SEED_MAX:
        bad("seed", f"must be a whole number in 0..{SEED_MAX}")
    for name in ("learning_rate", "clip_range", "minutes"):
        if not 0 < getattr(args, name) < math.inf:
            bad(name, "must be a number > 0")
    for name, lo, hi in (("latest_prob", 0, 1), ("gamma", 0, 1), ("gae_lambda", 0, 1), ("ent_coef", 0, math.inf)):
        if not lo <= getattr(args, name) <= hi:
            bad(name, f"must be a number in {lo}..{hi}")
    if not math.isfinite(args.capture_reward):
        bad("capture_reward", "must be a finite number")
    from jiu_env import Rules
    from jiu_env.players import make_player

    for name, specs in (("ladder", args.ladder.split(",")), ("bootstrap", [args.bootstrap])):
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
        p.error(f"--init {args.init}: no such model file")
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
    """``p.error`` unless ``--init`` is a MaskablePPO model of Jiu on this run's board (--board-size) and, if it
    records its rules, on this run's rules (--rules; the turn limit aside)."""
    from jiu_env import Rules
    from jiu_env.players import rules_mismatch
    from jiu_env.sb3 import load_sb3_model, model_rules

    try:
        model = load_sb3_model(args.init)
        trained = model_rules(args.init)
    except (ValueError, OSError) as e:
        p.error(f"--init {args.init}: {e}")
    n = int(model.policy.observation_space.shape[0])
    if n != args.board_size:
        p.error(f"--init {args.init} plays the {n}x{n} board, not this run's --board-size {args.board_size} (to "
                "go on on another board, train_maskable_ppo.py --init moves a network's weights)")
    if trained is not None:
        diff = rules_mismatch(trained, Rules.make(args.rules, board_size=args.board_size,
                                                  max_battle_turns=args.max_battle_turns))
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

    import torch
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from jiu_env.sb3 import PolicySnapshot, SelfPlayCallback, evaluate
    from jiu_env import JiuSelfPlayEnv

    torch.set_num_threads(args.threads)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "args.json", json.dumps(dataclasses.asdict(args), indent=2))
    rule_options = dict(rules=args.rules, board_size=args.board_size, max_battle_turns=args.max_battle_turns)
    ladder = args.ladder.split(",")

    env_kwargs = dict(bootstrap=args.bootstrap, pool_size=args.pool_size, latest_prob=args.latest_prob,
                      start=args.start, capture_reward=args.capture_reward, **rule_options)
    vec_cls = {"dummy": DummyVecEnv, "subproc": SubprocVecEnv}[args.vec_env]
    venv = make_vec_env(JiuSelfPlayEnv, n_envs=args.n_envs, seed=args.seed, env_kwargs=env_kwargs,
                        vec_env_cls=vec_cls)
    model = build_model(args, venv)
    if args.init:  # a loaded model is the first pool member, so self-play starts at its level
        venv.env_method("add_snapshot", PolicySnapshot(model, tag="init"))

    class LadderEval(BaseCallback):
        """Evaluate against the ladder, log, plot and save; stop at the time budget."""

        def __init__(self):
            super().__init__()
            self.t0 = time.time()
            self.next_eval = args.eval_every
            self.rows = []

        def _on_training_start(self):
            self.next_eval = self.num_timesteps + args.eval_every
            if not self.rows:  # the starting network is the first point of the curve
                self.evaluate()

        def _on_step(self):
            if self.num_timesteps >= self.next_eval:
                self.next_eval += args.eval_every
                self.evaluate()
            return time.time() - self.t0 < args.minutes * 60

        def _on_training_end(self):
            if not self.rows or self.rows[-1]["steps"] != self.num_timesteps:
                self.evaluate()

        def evaluate(self):
            t = time.time()
            row = {"steps": self.num_timesteps, "minutes": round((t - self.t0) / 60, 2), "snapshots": snapshots.added}
            for i, opp in enumerate(ladder):
                r = evaluate(self.model, opp, n_games=args.eval_games, seed=20_000 + 1000 * i, start=args.start,
                             **rule_options)
                row[f"win_{opp}"] = r["win_rate"]
                row[f"score_{opp}"] = r["score"]
            row["eval_seconds"] = round(time.time() - t, 1)
            self.rows.append(row)
            print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
            write_csv(out / "eval.csv", self.rows)
            plot_curve(out / "learning_curve.png", self.rows, ladder)
            save_model(self.model, out / "model.zip")

    snapshots = SelfPlayCallback(every=args.snapshot_every)
    ladder_eval = LadderEval()
    t0 = time.time()
    model.learn(total_timesteps=args.total_steps, callback=CallbackList([snapshots, ladder_eval]),
                reset_num_timesteps=not args.init)
    minutes = (time.time() - t0) / 60
    print(f"self-play: {model.num_timesteps} steps, {snapshots.added} snapshots, {minutes:.1f} min; results in {out}")
    venv.close()
    return ladder_eval.rows


def build_model(args, venv):
    """The MaskablePPO model of the run: ``--init`` loaded (parse_args checked its board and rules), or a fresh
    ``JiuPolicy``; the run's rules and phase recorded on it, so they travel in the saved ``model.zip``."""
    from sb3_contrib import MaskablePPO

    from jiu_env.sb3 import JiuPolicy, run_phase, set_model_phase, set_model_rules

    ppo_kwargs = dict(learning_rate=args.learning_rate, n_steps=args.n_steps, batch_size=args.batch_size,
                      n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda,
                      clip_range=args.clip_range, ent_coef=args.ent_coef, seed=args.seed, device="cpu")
    if args.init:
        model = MaskablePPO.load(args.init, env=venv, **ppo_kwargs)
    else:
        model = MaskablePPO(JiuPolicy, venv, policy_kwargs=dict(channels=args.channels, layers=args.layers),
                            **ppo_kwargs)
    # jiu eval / jiu play then play the model on these rules and refuse others
    set_model_rules(model, args.rules, board_size=args.board_size, max_battle_turns=args.max_battle_turns)
    # a battle-only model plays whole games from random placements
    set_model_phase(model, run_phase(args.start, args.init))
    return model


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


def plot_curve(path, rows, ladder):
    """Win rate against each ladder bot over training steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    steps = [r["steps"] for r in rows]
    for opp in ladder:
        ax.plot(steps, [r[f"win_{opp}"] for r in rows], marker="o", label=f"vs {opp}")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("environment steps (learner decisions)")
    ax.set_ylabel("win rate")
    ax.set_title("Self-play MaskablePPO on Jiu: win rate against the built-in bots")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, dpi=100, format="png")
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


if __name__ == "__main__":
    main()
