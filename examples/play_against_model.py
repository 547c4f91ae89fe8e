"""Play a trained MaskablePPO model in the terminal, or watch it play a built-in bot.

The game itself is ``jiu play`` (moves in notation or by number, ``moves``,
``undo``, ``hint``, ``save``...) with the model as the opponent
(``--bot sb3:MODEL.zip``); the board size is read from the model.  Models
trained with ``start="battle"`` (the default of ``train_maskable_ppo.py``)
never learnt the placement phase, so the game starts at the battle phase after
a random placement unless ``--start placement`` is given.

Use::

    python examples/play_against_model.py                          # baselines/training/ppo14/model.zip
    python examples/play_against_model.py --model runs/my.zip --colour black
    python examples/play_against_model.py --watch greedy --games 4 # model vs a bot, results only
"""

import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

DEFAULT_MODEL = ROOT / "baselines" / "training" / "ppo14" / "model.zip"
WATCH_GAMES = 2  # --games with --watch


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=str(DEFAULT_MODEL), help="the MaskablePPO .zip to play (default %(default)s)")
    p.add_argument("--colour", "--color", default="white", choices=["white", "black"],
                   help="your colour (default %(default)s)")
    p.add_argument("--start", default="battle", choices=["battle", "placement"],
                   help="'battle': the game starts at the battle phase after seeded random placements; "
                        "'placement': a whole game (default %(default)s)")
    p.add_argument("--rules", default="competitive",
                   help="rules profile; the board size comes from the model (default %(default)s)")
    p.add_argument("--seed", type=int, default=0,
                   help="random seed of the placements and the bots (default %(default)s)")
    p.add_argument("--watch", metavar="BOT",
                   help="no human: the model plays this bot spec and the results print (default: none, you play)")
    p.add_argument("--games", type=int, default=None,
                   help=f"games to watch with --watch, colours alternating (default {WATCH_GAMES})")
    p.add_argument("--show", action="store_true",
                   help="with --watch, print the final board of every game (default: off)")
    args = p.parse_args(argv)
    if args.seed < 0:
        p.error(f"--seed {args.seed}: must be >= 0")
    if not args.watch and (args.games is not None or args.show):  # they would be ignored
        p.error(f"{'--games' if args.games is not None else '--show'} applies to --watch only")
    if args.games is None:
        args.games = WATCH_GAMES
    if args.games < 1:
        p.error(f"--games {args.games}: must be >= 1")
    from jiu_env.bots import make_bot
    from jiu_env.rules import Rules

    try:
        Rules.make(args.rules)
    except (TypeError, ValueError) as e:
        p.error(f"--rules: {e}")
    if args.watch:
        try:
            make_bot(args.watch, seed=0)
        except (ValueError, TypeError, OSError, ImportError) as e:
            p.error(f"--watch {args.watch}: {e}")

    model_path = pathlib.Path(args.model)
    if not model_path.is_file():
        print(f"no model at {model_path}: train one with examples/train_maskable_ppo.py "
              f"(--quick for a tiny one) or pass --model", file=sys.stderr)
        return 2
    from jiu_env.sb3 import load_sb3_model

    try:  # unpickles only known classes from the file (docs/evaluation.md): a model file can hold code
        model = load_sb3_model(model_path)
    except ValueError as e:
        print(f"--model {model_path}: {e}", file=sys.stderr)
        return 2
    n = model.observation_space.shape[0]

    if args.watch:
        return watch(model, args, n)
    from jiu_env.cli import main as jiu

    return jiu(["play", "--bot", f"sb3:{model_path}", "--colour", args.colour, "--start", args.start,
                "--seed", str(args.seed), "--rules", args.rules, "--rule", f"board_size={n}"])


def watch(model, args, n):
    """The model (deterministic) against a bot, colours alternating; prints each result."""
    from jiu_env.bots import make_bot
    from jiu_env.evaluation import run_game
    from jiu_env.render import render_ansi
    from jiu_env.rules import Rules
    from jiu_env.sb3 import ModelPlayer

    rules = Rules.make(args.rules, board_size=n)
    me = ModelPlayer(model, deterministic=True, seed=args.seed)
    bot = make_bot(args.watch, seed=args.seed + 1)
    opening = rules.num_points if args.start == "battle" else 0
    wins = 0
    for g in range(args.games):
        colour = "white" if g % 2 == 0 else "black"
        white, black = (me, bot) if colour == "white" else (bot, me)
        r = run_game(rules, white, black, seed=args.seed + g, random_opening=opening)
        wins += r["winner"] == colour
        print(f"game {g + 1}: model as {colour}: winner {r['winner']} ({r['end_reason']}, "
              f"{r['battle_turns']} battle turns)")
        if args.show:
            print(render_ansi(r["record"].replay()))
    print(f"model won {wins} of {args.games} against {args.watch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
