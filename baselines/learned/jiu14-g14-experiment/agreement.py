"""Held-out agreement of networks with each source's labels, on the held-out games of a run trained on several.

The training (README.md) took battle positions from every `--data` directory and placement positions from
`--placement-data`, and held out a share of the games of the whole (TrainConfig's `val_share`, `seed`, split by
game seed).  This rebuilds that split and scores each checkpoint on the held-out positions of each source
separately (top-1 agreement with the label), so a network's gain on one teacher's labels is not hidden by
another's.

    python agreement.py PLACEMENT_DIR BATTLE_DIR [BATTLE_DIR ...] -- CHECKPOINT [CHECKPOINT ...]
"""
import sys

import numpy as np

from jiu_env.bots.network import load_network
from jiu_env.learn.dataset import concat_positions, load_positions
from jiu_env.learn.train import TrainConfig, evaluate_net

args = sys.argv[1:]
cut = args.index("--")
place_dir, battle_dirs, checkpoints = args[0], args[1:cut], args[cut + 1:]
pieces = [(f"{d} battle", load_positions([d], phase="battle")[0]) for d in battle_dirs]
pieces.append((f"{place_dir} placement", load_positions([place_dir], phase="placement")[0]))
whole = concat_positions([p for _, p in pieces])
cfg = TrainConfig()
_, val = whole.split(cfg.val_share, cfg.seed)  # the training's split, by game seed
val_games = np.unique(val.game)  # each source's held-out share: its positions of those games
nets = {path: load_network(path)[0] for path in checkpoints}
for name, part in pieces:
    held = part.subset(np.flatnonzero(np.isin(part.game, val_games)))
    print(f"{name}: {len(held)} held-out positions")
    for path, net in nets.items():
        m = evaluate_net(net, held, cfg)
        print(f"  {path}: {100 * m['val_accuracy']:.1f}%")
print(f"all: {len(val)} held-out positions")
for path, net in nets.items():
    print(f"  {path}: {100 * evaluate_net(net, val, cfg)['val_accuracy']:.1f}%")
