"""The policy-value network of the learned players, and its checkpoint files.

One place for what :mod:`jiu_env.bots.alphazero` (the network inside the
search) and :mod:`jiu_env.bots.policy` (the network alone) share: the
network (:func:`build_net`, PyTorch, imported lazily), the checkpoint format
with the rules the network was trained under (:func:`save_checkpoint`,
:func:`load_checkpoint`, :func:`load_network`), the networks shipped in the
package data, and the check that a position is under a network's rules.
"""

from __future__ import annotations

import io
import pathlib

import numpy as np

from .. import vocab as V
from ..fileio import atomic_write_bytes
from ..rules import Rules

CHECKPOINT_FORMAT = "jiu_env.alphazero/1"
DATA_DIR = pathlib.Path(__file__).resolve().parents[1] / "data"
DEFAULT_CHECKPOINT = DATA_DIR / "alphazero_jiu8.pt"
#: The shipped networks by board size (package data).
SHIPPED = {14: DATA_DIR / "policy_jiu14.pt"}
#: The shipped battle networks by board size: the ``policy`` player's network for battle positions where
#: one is shipped (a network that battles better than the one of :data:`SHIPPED` but places worse).
SHIPPED_BATTLE = {14: DATA_DIR / "policy_jiu14_battle.pt"}


def shipped_checkpoint(board_size: int) -> pathlib.Path:
    """The checkpoint shipped for ``board_size``; FileNotFoundError naming the sizes there are."""
    path = SHIPPED.get(int(board_size))
    if path is None or not path.exists():
        have = sorted(n for n, p in SHIPPED.items() if p.exists())
        raise FileNotFoundError(f"no network is shipped for {board_size}x{board_size} (shipped: "
                                f"{', '.join(f'{n}x{n}' for n in have) or 'none'}); train one with `jiu train` "
                                "and pass checkpoint=PATH")
    return path


def rules_mismatch(state: np.ndarray, rules: Rules) -> str | None:
    """Why ``state`` is not under ``rules`` (a sentence naming both), or None when it is."""
    ref = rules.new_state()
    diff = [i for i in V.RULE_FIELDS if int(state[i]) != int(ref[i])]
    if not diff:
        return None
    names = {v: k for k, v in vars(V).items() if k.startswith("H_") and isinstance(v, int)}
    parts = ", ".join(f"{names.get(i, i)}={int(state[i])} (network: {int(ref[i])})" for i in diff)
    return f"the position's rules differ from the network's ({rules.board_size}x{rules.board_size} " \
           f"{rules.profile}): {parts}"


# ---------------------------------------------------------------- network (torch)
def build_net(channels=32, blocks=3, in_planes=None, features="planes"):
    """The policy-value network (a ``torch.nn.Module``); ``net(x)`` with ``x``
    float32 ``(B, C, N, N)`` returns ``(logits (B, 10*N*N+1), values (B,))``.

    ``features`` names its input planes (:mod:`jiu_env.bots.features`: ``"planes"``, the 21 observation
    planes, or ``"tactics"``, 41); ``in_planes``, when given, must agree with it (older checkpoints
    name only ``in_planes``).
    """
    import torch
    from torch import nn

    from .features import FEATURE_PLANES, check_features

    check_features(features)
    if in_planes is None:
        in_planes = FEATURE_PLANES[features]
    elif int(in_planes) != FEATURE_PLANES[features]:
        raise ValueError(f"in_planes={in_planes} does not match features={features!r} "
                         f"({FEATURE_PLANES[features]} planes)")

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.b1 = nn.BatchNorm2d(c)
            self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.b2 = nn.BatchNorm2d(c)

        def forward(self, x):
            y = torch.relu(self.b1(self.c1(x)))
            return torch.relu(x + self.b2(self.c2(y)))

    class PolicyValueNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.config = {"channels": int(channels), "blocks": int(blocks), "in_planes": int(in_planes),
                           "features": features}
            self.stem = nn.Sequential(nn.Conv2d(in_planes, channels, 3, padding=1, bias=False),
                                      nn.BatchNorm2d(channels), nn.ReLU())
            self.trunk = nn.Sequential(*[Block(channels) for _ in range(blocks)])
            self.policy = nn.Conv2d(channels, 10, 1)
            self.stop = nn.Linear(channels, 1)
            self.value = nn.Sequential(nn.Linear(2 * channels, 64), nn.ReLU(), nn.Linear(64, 1))

        def forward(self, x):
            h = self.trunk(self.stem(x))
            b = h.shape[0]
            mean = h.mean(dim=(2, 3))
            pooled = torch.cat([mean, h.amax(dim=(2, 3))], dim=1)
            logits = torch.cat([self.policy(h).reshape(b, -1), self.stop(mean)], dim=1)
            return logits, torch.tanh(self.value(pooled)).squeeze(1)

    return PolicyValueNet()


class PickledNet:
    """A network as pickle carries it (:func:`pickled_net`, :func:`unpickled_net`): its config and weights.

    The network's class is made inside :func:`build_net` (torch is imported there, not when the package
    is), so pickle cannot name it: a player holding a network pickles this instead and rebuilds the
    network from it, in the same state, wherever it is unpickled (another process, a Ray worker).
    """

    def __init__(self, config, state_dict, training):
        self.config, self.state_dict, self.training = dict(config), state_dict, bool(training)


def pickled_net(net):
    """``net`` as a :class:`PickledNet` (weights copied)."""
    return PickledNet(net.config, {k: v.detach().clone() for k, v in net.state_dict().items()}, net.training)


def unpickled_net(p):
    """The network a :class:`PickledNet` holds, built again (in eval mode if it was)."""
    net = build_net(**p.config)
    net.load_state_dict(p.state_dict)
    net.train(p.training)
    return net


def deepen(net, blocks):
    """A network of ``blocks`` residual blocks computing exactly what ``net`` (fewer, same width) computes.

    ``net``'s blocks keep their order, spread evenly among the new ones; each
    new block starts with the scale and shift of its last batch norm at zero,
    so its residual is 0 and the block passes its (non-negative, post-ReLU)
    input through unchanged, in training and in evaluation mode alike.
    Training then grows the new blocks from there (Net2Net's deeper
    network, Chen et al. 2016): a larger network starts from a trained one
    instead of from random weights.
    """
    import torch

    old = int(net.config["blocks"])
    if not isinstance(blocks, int) or isinstance(blocks, bool) or blocks < old:
        raise ValueError(f"a network of {old} blocks can only be deepened to >= {old} blocks, not {blocks!r}")
    big = build_net(int(net.config["channels"]), blocks, features=net_features(net))
    at = [(j * blocks) // old for j in range(old)]  # where the old blocks go
    with torch.no_grad():
        for i in set(range(blocks)) - set(at):
            big.trunk[i].b2.weight.zero_()
            big.trunk[i].b2.bias.zero_()
    state = big.state_dict()  # the new blocks' weights; the rest is net's (a strict load checks every key)
    state.update({k: v for k, v in net.state_dict().items() if not k.startswith("trunk.")})
    for j, i in enumerate(at):
        state.update({f"trunk.{i}.{k}": v for k, v in net.trunk[j].state_dict().items()})
    big.load_state_dict(state)
    return big


def net_features(net) -> str:
    """The feature set a network reads (``"planes"`` for networks made before feature sets had names)."""
    return str(getattr(net, "config", {}).get("features", "planes"))


def make_evaluator(net):
    """``evaluate(planes)`` for :class:`PUCT` from a network (eval mode, no gradients).

    The function's ``features`` attribute names the input planes it takes (:func:`net_features`),
    so that the search writes the planes the network was trained on.
    """
    import torch

    def evaluate(obs):
        with torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(obs.transpose(0, 3, 1, 2)))
            logits, v = net(x)
        return logits.numpy(), v.numpy()

    evaluate.features = net_features(net)
    net.eval()
    return evaluate


def save_checkpoint(path, net, rules=None, meta=None):
    """Write ``net`` (its weights as float32 and its shape) to ``path`` with the rules it was trained on.

    The file is replaced whole or not at all (a failed or interrupted save leaves the previous one).
    """
    import torch

    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "format": CHECKPOINT_FORMAT,
        "config": dict(net.config),
        "rules": rules.to_dict() if rules is not None else None,
        "meta": dict(meta or {}),
        # on the CPU whatever device trained it: the file loads anywhere, even without map_location; in the
        # plain memory layout whatever layout the network ran in (a channels-last copy keeps its strides)
        "state_dict": {k: v.detach().to(device="cpu", dtype=torch.float32 if v.is_floating_point() else v.dtype)
                       .clone(memory_format=torch.contiguous_format) for k, v in net.state_dict().items()},
    }
    atomic_torch_save(data, path)


def atomic_torch_save(obj, path):
    """``torch.save(obj, path)`` that replaces ``path`` whole or not at all (:mod:`jiu_env.fileio`)."""
    import torch

    buf = io.BytesIO()
    torch.save(obj, buf)
    atomic_write_bytes(path, buf.getvalue())


def _torch_error(e):
    """A short account of an error torch raised reading a file (its first line, without advice to load
    the file unsafely)."""
    import pickle

    if isinstance(e, pickle.UnpicklingError):
        return f"torch: {type(e).__name__}: not a torch file holding weights and tables only"
    first = (str(e).strip().splitlines() or [""])[0]
    return f"torch: {type(e).__name__}: {first[:200]}"


def load_checkpoint(path):
    """``(net, data)`` from a checkpoint written by :func:`save_checkpoint` (net in eval mode).

    A missing file raises FileNotFoundError; a file that is not such a
    checkpoint (not a torch file, damaged, another program's, weights of
    another shape) raises ValueError naming the file and what is wrong,
    whatever torch raised inside.
    """
    import torch

    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"network checkpoint {path} not found")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch's own errors for a damaged or foreign file (pickle, zip, unpickler)
        raise ValueError(f"{path} is not a readable jiu_env AlphaZero checkpoint ({_torch_error(e)})") from None
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not a jiu_env AlphaZero checkpoint (format {CHECKPOINT_FORMAT})")
    missing = [k for k in ("config", "state_dict") if not isinstance(data.get(k), dict)]
    if missing:
        raise ValueError(f"{path} is not a complete jiu_env AlphaZero checkpoint: no {' or '.join(missing)} table")
    if data.get("rules") is not None:
        if not isinstance(data["rules"], dict):
            raise ValueError(f"{path}: the checkpoint's rules must be a table, not {type(data['rules']).__name__}")
        try:
            Rules.make(dict(data["rules"]))
        except (TypeError, ValueError) as e:
            raise ValueError(f"{path}: the checkpoint's rules are not valid: {e}") from None
    if data.get("meta") is None:
        data["meta"] = {}
    if not isinstance(data["meta"], dict):
        raise ValueError(f"{path}: the checkpoint's meta must be a table, not {type(data['meta']).__name__}")
    try:
        search_options(data)
    except (TypeError, ValueError, AttributeError) as e:
        raise ValueError(f"{path}: the checkpoint's training arguments (meta args) cannot be read: {e}") from None
    try:
        net = build_net(**data["config"])
        net.load_state_dict(data["state_dict"])
    except Exception as e:  # unknown config keys, weights of another shape or name
        raise ValueError(f"{path}: the network in the checkpoint cannot be built: {type(e).__name__}: {e}") from None
    net.eval()
    return net, data


def load_network(path):
    """``(net, data, rules)``: :func:`load_checkpoint` and the :class:`~jiu_env.rules.Rules` the network was
    trained under (None for a checkpoint that does not say)."""
    net, data = load_checkpoint(path)
    return net, data, (Rules.make(dict(data["rules"])) if data.get("rules") else None)


def search_options(data):
    """Extra :class:`PUCT` options a checkpoint was trained with.

    A placement network was trained with battle positions as leaves valued by
    :func:`jiu_env.bots.alphazero.judge_battle`; its search in games does the same, so that the last
    placements are judged as in training.  A whole-game network needs none.
    """
    import json

    meta = data.get("meta") or {}
    if meta.get("phase") != "placement":
        return {}
    args = json.loads(meta.get("args", "{}"))
    return {"adjudicate_margin": float(args.get("adjudicate_margin", 10.0)),
            "judge_turns": int(args.get("judge_turns", 40)), "judge_playouts": int(args.get("judge_playouts", 1))}
