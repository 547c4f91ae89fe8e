"""Self-play PPO for Jiu with RLlib (new API stack), then a match against the random bot.

    pip install torch==2.13.0 && pip install -e ".[rllib]"
    python examples/rllib_self_play.py --quick            # 2 tiny iterations on 6x6, about a minute
    python examples/rllib_self_play.py --iterations 200   # a real run
    jiu eval me=rllib:checkpoints/rllib_self_play greedy random --rule board_size=8

The learner plays both colours: against itself, frozen snapshots of itself
(one added every SNAPSHOT_EVERY iterations) and the random module.  The
checkpoint is an ordinary RLlib Algorithm checkpoint; the ``rllib:`` player
kind loads its ``learner`` module.
"""

import argparse
import os
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


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="two tiny iterations on 6x6, a smoke test; flags set away from their defaults are kept "
                        "(default: off)")
    p.add_argument("--board-size", type=int, default=BOARD_SIZE, help="board size N (N x N) (default %(default)s)")
    p.add_argument("--max-battle-turns", type=int, default=MAX_BATTLE_TURNS,
                   help="battle turn limit of the rules (default %(default)s)")
    p.add_argument("--iterations", type=int, default=ITERATIONS, help="training iterations (default %(default)s)")
    p.add_argument("--snapshot-every", type=int, default=SNAPSHOT_EVERY,
                   help="iterations between snapshots added to the league (default %(default)s)")
    p.add_argument("--channels", type=int, default=CHANNELS, help="channels of the conv trunk (default %(default)s)")
    p.add_argument("--layers", type=int, default=LAYERS, help="conv layers of the trunk (default %(default)s)")
    p.add_argument("--train-batch", type=int, default=TRAIN_BATCH,
                   help="env steps (decisions of both colours) per iteration (default %(default)s)")
    p.add_argument("--minibatch", type=int, default=MINIBATCH, help="PPO minibatch size (default %(default)s)")
    p.add_argument("--epochs", type=int, default=EPOCHS, help="PPO epochs per iteration (default %(default)s)")
    p.add_argument("--env-runners", type=int, default=ENV_RUNNERS,
                   help="RLlib env runners; 0 samples in the driver process (default %(default)s)")
    p.add_argument("--eval-games", type=int, default=EVAL_GAMES,
                   help="games against the random bot after training, colours alternating (default %(default)s)")
    p.add_argument("--checkpoint", default=CHECKPOINT, help="where the RLlib checkpoint is saved (default %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default %(default)s)")
    p.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray instance (default %(default)s)")
    a = p.parse_args()
    if a.quick:
        for key, value in QUICK.items():
            if p.get_default(key) == getattr(a, key):  # flags given explicitly win over --quick
                setattr(a, key, value)

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
        path = algo.save(os.path.abspath(a.checkpoint)).checkpoint.path  # Ray needs an absolute path or URI
        algo.stop()
    finally:
        ray.shutdown()
    print(f"checkpoint: {path}")
    print(f"against random over {a.eval_games} games: {evaluate(path, a)}")


if __name__ == "__main__":
    main()
