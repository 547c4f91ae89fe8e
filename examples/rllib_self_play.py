"""Self-play PPO for Jiu with RLlib (new API stack), then a match against the random bot.

    pip install torch==2.13.0 && pip install -e ".[rllib]"
    python examples/rllib_self_play.py --quick            # 2 tiny iterations on 6x6, about a minute
    python examples/rllib_self_play.py --iterations 200   # a real run
    jiu eval me=rllib:checkpoints/rllib_self_play greedy random --rule board_size=8

The learner plays both colours: against itself, frozen snapshots of itself
(one added every SNAPSHOT_EVERY iterations) and the random module.  The
checkpoint is an ordinary RLlib Algorithm checkpoint; the ``rllib:`` player
kind loads its ``learner`` module.  A ``--checkpoint`` folder that holds a
previous run's checkpoint is refused unless ``--overwrite`` is given; the new
checkpoint is written beside it and replaces it whole once saved.
"""

import argparse
import os
import shutil
import tempfile
import time

from jiu_env import Rules
from jiu_env.evaluation import run_game
from jiu_env.players import make_player

# ray and jiu_env.integrations.rllib are imported where they are used, so that --help is quick and works
# without the rllib extra

# ----------------------------------------------------------- hyper-parameters
BOARD_SIZE = 8
MAX_BATTLE_TURNS = 200
ITERATIONS = 50
SNAPSHOT_EVERY = 5          # iterations between league snapshots
CHANNELS, LAYERS = 32, 4    # JiuMaskedModule's conv trunk
LR = 3e-4
TRAIN_BATCH = 4000          # env steps (decisions of both colours) per iteration
MINIBATCH = 500
EPOCHS = 4
ENV_RUNNERS = 1             # 0 samples in the driver process
EVAL_GAMES = 20
CHECKPOINT = "checkpoints/rllib_self_play"

QUICK = dict(board_size=6, max_battle_turns=30, iterations=2, snapshot_every=1, channels=8, layers=2,
             train_batch=256, minibatch=64, epochs=1, env_runners=0, eval_games=4)


def build(a):
    from jiu_env.integrations.rllib import ppo_self_play_config

    config = ppo_self_play_config(board_size=a.board_size, max_battle_turns=a.max_battle_turns,
                                  snapshot_every=a.snapshot_every, channels=a.channels, layers=a.layers)
    config.training(lr=LR, train_batch_size_per_learner=a.train_batch, minibatch_size=a.minibatch,
                    num_epochs=a.epochs)
    config.env_runners(num_env_runners=a.env_runners)
    config.debugging(seed=a.seed)
    return config.build_algo()


def evaluate(checkpoint, a, opponent="random"):
    """Win / draw / loss of the checkpoint's learner against a built-in bot, alternating colours."""
    rules = Rules.make("competitive", board_size=a.board_size, max_battle_turns=a.max_battle_turns)
    score = {"win": 0, "draw": 0, "loss": 0, "undecided": 0}
    for i in range(a.eval_games):
        me, other = make_player(f"rllib:{checkpoint}", seed=i), make_player(opponent, seed=1000 + i)
        colour = "white" if i % 2 == 0 else "black"
        white, black = (me, other) if colour == "white" else (other, me)
        w = run_game(rules, white, black, seed=a.seed + i)["winner"]
        score["undecided" if w is None else "draw" if w == "draw" else "win" if w == colour else "loss"] += 1
    return score


def make_parser(defaults=True):
    """The command line; ``defaults=False`` leaves the flags that are not given out of the namespace (how --quick
    tells a flag given, at any value and however abbreviated, from one not given)."""
    def d(value):
        return value if defaults else argparse.SUPPRESS

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", default=d(False),
                   help="two tiny iterations on 6x6, a smoke test; flags given explicitly are kept (default: off)")
    p.add_argument("--board-size", type=int, default=d(BOARD_SIZE), help=f"board size N (N x N) (default {BOARD_SIZE})")
    p.add_argument("--max-battle-turns", type=int, default=d(MAX_BATTLE_TURNS),
                   help=f"battle turn limit of the rules (default {MAX_BATTLE_TURNS})")
    p.add_argument("--iterations", type=int, default=d(ITERATIONS), help=f"training iterations (default {ITERATIONS})")
    p.add_argument("--snapshot-every", type=int, default=d(SNAPSHOT_EVERY),
                   help=f"iterations between snapshots added to the league (default {SNAPSHOT_EVERY})")
    p.add_argument("--channels", type=int, default=d(CHANNELS), help=f"channels of the conv trunk (default {CHANNELS})")
    p.add_argument("--layers", type=int, default=d(LAYERS), help=f"conv layers of the trunk (default {LAYERS})")
    p.add_argument("--train-batch", type=int, default=d(TRAIN_BATCH),
                   help=f"env steps (decisions of both colours) per iteration (default {TRAIN_BATCH})")
    p.add_argument("--minibatch", type=int, default=d(MINIBATCH), help=f"PPO minibatch size (default {MINIBATCH})")
    p.add_argument("--epochs", type=int, default=d(EPOCHS), help=f"PPO epochs per iteration (default {EPOCHS})")
    p.add_argument("--env-runners", type=int, default=d(ENV_RUNNERS),
                   help=f"RLlib env runners; 0 samples in the driver process (default {ENV_RUNNERS})")
    p.add_argument("--eval-games", type=int, default=d(EVAL_GAMES),
                   help=f"games against the random bot after training, colours alternating (default {EVAL_GAMES})")
    p.add_argument("--checkpoint", default=d(CHECKPOINT),
                   help=f"where the RLlib checkpoint is saved (default {CHECKPOINT})")
    p.add_argument("--overwrite", action="store_true", default=d(False),
                   help="replace a previous run's checkpoint in --checkpoint (otherwise such a folder is refused)")
    p.add_argument("--seed", type=int, default=d(0), help="random seed (default 0)")
    p.add_argument("--num-cpus", type=int, default=d(2), help="CPUs of the local Ray instance (default 2)")
    return p


def parse_args(argv=None):
    """The command line; with --quick, QUICK replaces the values of the flags not given."""
    p = make_parser()
    a = p.parse_args(argv)
    if a.quick:
        given = set(vars(make_parser(defaults=False).parse_args(argv)))
        for key, value in QUICK.items():
            if key not in given:  # flags given explicitly win over --quick, even at their default value
                setattr(a, key, value)
    for name in ("iterations", "snapshot_every", "channels", "layers", "train_batch", "minibatch", "epochs",
                 "eval_games", "num_cpus"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} {getattr(a, name)}: must be >= 1")
    for name in ("env_runners", "seed"):
        if getattr(a, name) < 0:
            p.error(f"--{name.replace('_', '-')} {getattr(a, name)}: must be >= 0")
    if a.minibatch > a.train_batch:  # RLlib's PPOConfig refuses it, after Ray has started
        p.error(f"--minibatch {a.minibatch}: must be at most --train-batch {a.train_batch} (each iteration's batch "
                "is split into minibatches)")
    try:
        Rules.make("competitive", board_size=a.board_size, max_battle_turns=a.max_battle_turns)
    except (TypeError, ValueError) as e:
        p.error(f"--board-size/--max-battle-turns: {e}")
    problem = checkpoint_problem(a)
    if problem:
        p.error(problem)
    return a


def is_checkpoint(path):
    """Whether ``path`` is an RLlib Algorithm checkpoint folder (what --overwrite may replace)."""
    return os.path.isfile(os.path.join(path, "rllib_checkpoint.json"))


def checkpoint_problem(a):
    """Why ``--checkpoint`` cannot take this run's checkpoint (a file, a previous run's checkpoint without
    --overwrite, a folder of other files), else None.  A missing or empty folder is fine."""
    path = a.checkpoint
    if os.path.exists(path) and not os.path.isdir(path):
        return f"--checkpoint {path}: not a folder"
    if not os.path.isdir(path) or not os.listdir(path):
        return None
    if not is_checkpoint(path):
        return (f"--checkpoint {path} holds files that are not an RLlib checkpoint: choose another --checkpoint "
                "(--overwrite replaces only a previous run's checkpoint)")
    if not a.overwrite:
        return (f"--checkpoint {path} holds a previous run's checkpoint: choose another --checkpoint, or give "
                "--overwrite to replace it")
    return None


def save(algo, checkpoint):
    """``algo.save`` into ``checkpoint``, replacing a previous one whole only once the new one is saved (a run
    stopped mid-save keeps the previous checkpoint); returns the checkpoint's absolute path."""
    final = os.path.abspath(checkpoint)  # Ray needs an absolute path or URI
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    new = tempfile.mkdtemp(prefix=os.path.basename(final) + ".new-", dir=parent)
    try:
        algo.save(new)
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    old = None
    if os.path.isdir(final):
        if os.listdir(final) and not is_checkpoint(final):  # appeared since parse_args: leave it alone
            raise FileExistsError(f"{final} holds files that are not an RLlib checkpoint; the new one is in {new}")
        old = tempfile.mkdtemp(prefix=os.path.basename(final) + ".old-", dir=parent)
        os.replace(final, os.path.join(old, "checkpoint"))
    os.replace(new, final)
    if old:
        shutil.rmtree(old, ignore_errors=True)
    return final


def main(argv=None):
    a = parse_args(argv)

    import ray

    # address="local": always a fresh local instance, never an existing cluster
    ray.init(address="local", num_cpus=a.num_cpus, include_dashboard=False, log_to_driver=False)
    try:
        algo = build(a)
        for it in range(1, a.iterations + 1):
            t = time.perf_counter()
            result = algo.train()
            runners = result.get("env_runners", {})
            print(f"iteration {it}: {time.perf_counter() - t:.1f}s, "
                  f"{runners.get('num_env_steps_sampled', 0)} env steps, {runners.get('num_episodes', 0)} games, "
                  f"learner win rate {runners.get('learner_win_rate', float('nan')):.2f}, "
                  f"league {result.get('league_size')}", flush=True)
        path = save(algo, a.checkpoint)
        algo.stop()
    finally:
        ray.shutdown()
    print(f"checkpoint: {path}")
    print(f"against random over {a.eval_games} games: {evaluate(path, a)}")


if __name__ == "__main__":
    main()
