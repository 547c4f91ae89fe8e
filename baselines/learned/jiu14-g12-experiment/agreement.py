"""Held-out agreement of networks with the harvested labels, on the held-out positions of the training run.

The training (README.md) took placement and battle positions from the harvest (`--data` and
`--placement-data` the same directory) and held out a share of its games (TrainConfig's
`val_share`, `seed`); this rebuilds that split and scores each checkpoint on it the way the
training's curve does (top-1 agreement, all / placement / battle).

    python agreement.py HARVEST_DIR CHECKPOINT [CHECKPOINT ...]
"""
import sys

from jiu_env.bots.network import load_network
from jiu_env.learn.dataset import concat_positions, load_positions
from jiu_env.learn.train import TrainConfig, evaluate_net

data_dir, checkpoints = sys.argv[1], sys.argv[2:]
battle, _ = load_positions([data_dir], phase="battle")
placement, _ = load_positions([data_dir], phase="placement")
cfg = TrainConfig()
_, val = concat_positions([battle, placement]).split(cfg.val_share, cfg.seed)
print(f"{len(val)} held-out positions ({int(val.placement.sum())} placement)")
for path in checkpoints:
    net, _, _ = load_network(path)
    m = evaluate_net(net, val, cfg)
    print(f"{path}: all {100 * m['val_accuracy']:.1f}%, placement {100 * m['val_placement_accuracy']:.1f}%, "
          f"battle {100 * m['val_battle_accuracy']:.1f}%")
