"""Held-out agreement of networks with a soft-labelled data run: the exact move, and a near-best move.

Near-best: the network's most likely action is one of the teacher's stored root moves whose score is
within T*ln(2) of the best (its soft weight at least half the top one's; T: the run's temperature, so
28 centistones at T = 40).  The held-out games are the training's (TrainConfig's val_share and seed).
Like the training curve's accuracy, the network's top action is taken over all actions (the policy
player masks the illegal ones; a network's top action is nearly always legal).

    python near_best.py runs/soft1/data net64=baselines/learned/jiu14-g4-net64/net.pt soft1=runs/soft1/net/net.pt
"""
import argparse

import numpy as np
import torch

from jiu_env.bots.network import load_network
from jiu_env.learn.data import read_manifest
from jiu_env.learn.dataset import load_positions
from jiu_env.learn.train import TrainConfig, _tensor

ap = argparse.ArgumentParser()
ap.add_argument("data", help="a data run made with --soft")
ap.add_argument("nets", nargs="+", metavar="NAME=PATH")
args = ap.parse_args()
temperature = read_manifest(args.data)["config"]["soft"]
data, rules = load_positions([args.data])
cfg = TrainConfig()
_, val = data.split(cfg.val_share, cfg.seed)
pi_actions, pi_probs = val.policy_targets()
print(f"{len(val)} held-out positions ({int(val.placement.sum())} placement); soft temperature {temperature}")
for spec in args.nets:
    name, path = spec.split("=", 1)
    net, _, _ = load_network(path)
    net.eval()
    with torch.inference_mode():
        top = np.concatenate([net(_tensor(val.planes[i:i + 512], "cpu"))[0].argmax(1).numpy()
                              for i in range(0, len(val), 512)])
    exact = top == val.action
    weight = np.where(pi_actions == top[:, None], pi_probs, 0).sum(1)
    near = weight >= 0.5 * pi_probs.max(1)
    for what, m in (("all", slice(None)), ("placement", val.placement), ("battle", ~val.placement)):
        print(f"{name:8s} {what:9s} exact {exact[m].mean():.3f}  near-best {near[m].mean():.3f}")
