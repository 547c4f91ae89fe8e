"""A short demo: one seeded game of random play through the PettingZoo API, shown as text.

    python examples/demo_game.py --board-size 8 --seed 3
"""

import argparse

import jiu_env


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board-size", type=int, default=8, help="board size N (N x N) (default %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the game and the random moves (default %(default)s)")
    ap.add_argument("--every", type=int, default=0,
                    help="also print the board every K decisions (0: start of battle and end only) "
                         "(default %(default)s)")
    args = ap.parse_args(argv)
    if args.seed < 0:
        ap.error(f"--seed {args.seed}: must be >= 0")
    if args.every < 0:
        ap.error(f"--every {args.every}: must be >= 0 (0: start of battle and end only)")
    try:
        jiu_env.Rules.make("competitive", board_size=args.board_size)
    except (TypeError, ValueError) as e:
        ap.error(f"--board-size {args.board_size}: {e}")

    env = jiu_env.env(render_mode="ansi", board_size=args.board_size)
    env.reset(seed=args.seed)
    seen_battle = False
    for i, agent in enumerate(env.agent_iter()):
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        if info.get("phase") == "battle" and not seen_battle:
            seen_battle = True
            print("== battle phase starts\n" + env.render() + "\n")
        elif args.every and i % args.every == 0:
            print(env.render() + "\n")
        env.action_space(agent).seed(args.seed + i)
        env.step(env.action_space(agent).sample(obs["action_mask"]))
    print("== final position\n" + env.render())
    return env.unwrapped.winner


if __name__ == "__main__":
    main()
