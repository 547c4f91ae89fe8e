"""Supervised training of the policy-value network on positions labelled by search.

The network is :func:`jiu_env.bots.network.build_net` (residual CNN over
the observation planes, a spatial policy head over the flat actions, a
pooled value head).  Loss: cross-entropy of the policy against the
teacher's move, plus ``value_weight`` times the squared error of the value
against :func:`jiu_env.learn.dataset.value_target`.  Every batch is mapped
by a random symmetry that commutes with the rules of each position's phase.

Resumable: every ``save_every`` steps the run directory gets ``state.pt``
(weights, optimiser, step, the settings, the CPU and wall seconds so far),
written to a temporary file and renamed, after ``net.pt`` (so a run stopped
between the two trains those steps again); a run started again on the same
directory continues from it, with the same batches it would have drawn
(batch ``k`` is drawn from a generator seeded by ``(seed, k)``).  The curve
(``curve.csv``: losses, validation accuracy, CPU seconds) is appended as it
goes, and ``net.pt`` is the latest network as a checkpoint that the players
load.  Training runs on the CPU by default, on a GPU when ``device`` names one.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import pathlib
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..fileio import atomic_write_bytes, atomic_write_text
from ..rules import Rules
from .dataset import DECISION_KINDS, PLANE_SCALE, Positions, augment, decision_kinds, sharpen_targets, value_target
from .params import check_fields, check_number
from .selfplay import file_sha256

PRECISIONS = ("fp32", "bf16")
POLICY_TARGETS = ("soft", "move", "soft-battle")
STATE = "state.pt"
CURVE = "curve.csv"
NET = "net.pt"
CURVE_FIELDS = ("step", "positions", "cpu_seconds", "wall_seconds", "lr", "train_policy_loss", "train_value_loss",
                "val_policy_loss", "val_value_loss", "val_placement_value_loss", "val_accuracy", "val_placement_accuracy", "val_battle_accuracy")


def check_decision_weight(kind: Any, weight: Any) -> None:
    """ValueError unless ``kind`` is one of :data:`DECISION_KINDS` and ``weight`` a number in (0, 100]."""
    if kind not in DECISION_KINDS:
        raise ValueError(f"decision_weight: unknown decision kind {kind!r} (expected one of "
                         f"{', '.join(DECISION_KINDS)})")
    if (isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight)
            or not 0 < weight <= 100):
        raise ValueError(f"decision_weight: the weight of {kind!r} must be a number in (0, 100], not {weight!r}")


@dataclass(frozen=True)
class TrainConfig:
    """Network shape and optimisation settings (stored with the run; a resumed run must match)."""

    channels: int = 32
    blocks: int = 3
    batch: int = 256
    steps: int = 20_000
    lr: float = 2e-3
    warmup: int = 200
    weight_decay: float = 1e-4
    value_weight: float = 1.0
    result_weight: float = 0.5
    placement_result_weight: float = 1.0
    value_scale: float = 800.0
    val_share: float = 0.05
    seed: int = 0
    eval_every: int = 500
    save_every: int = 500
    #: the network's input planes (:mod:`jiu_env.bots.features`): "planes" or "tactics"
    features: str = "planes"
    #: the policy's target: "soft" (a position's stored distribution, self-play visits or soft
    #: labels, where the data has one; else its move), "move" (the labelled move alone, one-hot) or
    #: "soft-battle" (the distribution in battle positions, the move in placement ones)
    policy_target: str = "soft"
    #: the soft targets raised to this power and renormalised (1: as stored): a soft label made at
    #: temperature T learns as one made at T / sharpen (the scores' exponent is linear in 1/T), and
    #: self-play visit shares as AlphaZero's ``N ** (1 / tau)`` with tau = 1 / sharpen; one-hot targets
    #: are unchanged
    sharpen: float = 1.0
    #: the policy loss of a position weighted by its kind of decision (:data:`DECISION_KINDS
    #: <jiu_env.learn.dataset.DECISION_KINDS>`: placement, move, chain, drop, capture; a kind not named
    #: weighs 1), the batch's loss divided by its total weight; empty: the plain mean.  Where a network
    #: is weak at one kind of decision (a capture choice, a flying stone's drop) that is not common,
    #: this spends more of its training there without changing the data
    decision_weight: Mapping[str, float] = field(default_factory=dict)
    #: the arithmetic of the training step's forward and backward pass: "fp32", or "bf16" (autocast to
    #: bfloat16, the weights and optimiser stay float32; on a CPU with AVX512-BF16 about 1.7 times
    #: faster for 64x6 on 14x14, on one without it slower); validation is float32 either way
    precision: str = "fp32"

    def __post_init__(self) -> None:
        from ..bots.features import check_features

        check_features(self.features)
        if not isinstance(self.decision_weight, Mapping):
            raise ValueError(f"decision_weight must map decision kinds to weights, not {self.decision_weight!r}")
        for kind, w in self.decision_weight.items():
            check_decision_weight(kind, w)
        # a plain dict in the kinds' order (what the run's state stores and compares); set once, here
        object.__setattr__(self, "decision_weight", {k: float(self.decision_weight[k]) for k in DECISION_KINDS
                                                     if k in self.decision_weight})
        if self.policy_target not in POLICY_TARGETS:
            raise ValueError(f"policy_target must be one of {POLICY_TARGETS}, not {self.policy_target!r}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, not {self.precision!r}")
        check_fields(self, ints=dict(channels=(1, 1024), blocks=(0, 64), batch=(1, 1 << 16), steps=(1, 10 ** 9),
                                     warmup=(0, 10 ** 9), seed=(0, 2 ** 63 - 1), eval_every=(1, 10 ** 9),
                                     save_every=(1, 10 ** 9)),
                     numbers=dict(weight_decay=(0, 1), value_weight=(0, 100), result_weight=(0, 1),
                                  placement_result_weight=(0, 1), sharpen=(0.01, 100), value_scale=(1e-6, 1e9),
                                  val_share=(0, 0.5)))
        check_number("lr", self.lr, 0, 10, lo_open=True)  # lr 0 would run every step and learn nothing

    def __hash__(self) -> int:  # the generated hash would fail on the dict field
        return hash(json.dumps(asdict(self), sort_keys=True))


def _lr(cfg: TrainConfig, step: int) -> float:
    """Linear warm-up, then cosine decay to a tenth of ``lr`` at ``steps``."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    t = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))


def _tensor(planes: np.ndarray, device: Any) -> Any:
    """uint8 planes ``(B, N, N, C)`` as a float32 ``(B, C, N, N)`` tensor in channels-last memory."""
    import torch

    x = torch.from_numpy(planes).to(device).permute(0, 3, 1, 2).float().mul_(1.0 / PLANE_SCALE)
    return x.contiguous(memory_format=torch.channels_last)


def _targets(data: Positions, cfg: TrainConfig) -> np.ndarray:
    """Value targets: placement positions weigh the result by ``placement_result_weight`` (the teacher's
    placement values are a hand-set heuristic, which the network should not copy), battle positions by
    ``result_weight``."""
    w = np.where(data.placement, cfg.placement_result_weight, cfg.result_weight)
    return value_target(data.value, data.result, w, cfg.value_scale)


def _trim_curve(path: pathlib.Path, step: int) -> None:
    """Drop curve rows past ``step`` (written after the last saved state by a run that was stopped)."""
    if not path.exists():
        return
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    keep = [r for r in rows if int(r["step"]) <= step]
    if len(keep) != len(rows):
        buf = io.StringIO()
        w = csv.DictWriter(buf, CURVE_FIELDS)
        w.writeheader()
        w.writerows(keep)
        atomic_write_text(path, buf.getvalue(), newline="")


def evaluate_net(net: Any, data: Positions, cfg: TrainConfig, device: Any = "cpu", batch: int = 1024
                 ) -> dict[str, float]:
    """Policy and value loss and top-1 accuracy (all, placement, battle) of ``net`` on ``data`` (no augmentation)."""
    import torch
    import torch.nn.functional as F

    net.eval()
    target_v = _targets(data, cfg)
    pl = 0.0
    sq = np.zeros(len(data), np.float64)
    hit = np.zeros(len(data), bool)
    with torch.inference_mode():
        for i in range(0, len(data), batch):
            sl = slice(i, i + batch)
            logits, v = net(_tensor(data.planes[sl], device))
            y = torch.from_numpy(data.action[sl]).to(device)
            pl += float(F.cross_entropy(logits, y, reduction="sum"))
            sq[sl] = ((v - torch.from_numpy(target_v[sl]).to(device)) ** 2).cpu().numpy()
            hit[sl] = (logits.argmax(1) == y).cpu().numpy()
    m = max(1, len(data))
    place = data.placement
    return {"val_policy_loss": pl / m, "val_value_loss": float(sq.sum()) / m,
            "val_placement_value_loss": float(sq[place].mean()) if place.any() else float("nan"), "val_accuracy": float(hit.mean()) if len(data) else 0.0,
            "val_placement_accuracy": float(hit[place].mean()) if place.any() else float("nan"),
            "val_battle_accuracy": float(hit[~place].mean()) if (~place).any() else float("nan")}


def differences(a: Mapping[str, Any], b: Mapping[str, Any], labels: tuple[str, str] = ("stored", "now")) -> str:
    """The keys whose values differ between ``a`` and ``b``, as ``key: LABEL_A X, LABEL_B Y`` (sorted): an error
    names the setting that differs rather than printing two whole tables to compare by eye."""
    keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return "; ".join(f"{k}: {labels[0]} {a.get(k)!r}, {labels[1]} {b.get(k)!r}" for k in keys)


def init_network(init: str | os.PathLike[str], cfg: TrainConfig, rules: Rules) -> Any:
    """The network of checkpoint ``init`` that starts a run of ``cfg`` under ``rules`` (deepened to
    ``cfg.blocks``); ValueError if it cannot (another width or feature set, more blocks, other rules).

    ``jiu train`` calls it before its data stage too, so that a wrong ``--init`` is found before the games
    are played, not after."""
    from ..bots.network import deepen, load_network

    start, data_init, init_rules = load_network(init)
    shape = data_init["config"]
    if (shape.get("channels") != cfg.channels or not 0 <= int(shape.get("blocks", -1)) <= cfg.blocks
            or shape.get("features", "planes") != cfg.features):
        raise ValueError(f"{init} is a {data_init['config']} network, not channels={cfg.channels}, "
                         f"blocks <= {cfg.blocks}, features={cfg.features!r}: it cannot start this run")
    if init_rules is not None and init_rules != rules:
        raise ValueError(f"{init} was trained under other rules than this data "
                         f"({differences(init_rules.to_dict(), rules.to_dict(), ('the network', 'the data'))})")
    if int(shape["blocks"]) < cfg.blocks:  # a deeper network that starts computing what init computes
        start = deepen(start, cfg.blocks)
    return start


def read_state(out_dir: str | os.PathLike[str], device: Any = "cpu") -> dict[str, Any] | None:
    """The training state saved in ``out_dir`` (:data:`STATE`), or None for a run not started yet."""
    import torch

    path = pathlib.Path(out_dir) / STATE
    return torch.load(path, map_location=device, weights_only=False) if path.exists() else None


def check_resume(state_path: pathlib.Path, st: dict[str, Any], cfg: TrainConfig, rules: Rules,
                 data_key: str | None = None, init: str | os.PathLike[str] | None = None) -> None:
    """Refuse to resume the run saved as ``st`` with other settings, rules, data (``data_key``) or ``init``
    weights (by SHA-256): the result would be neither run.  ValueError naming what differs."""
    # a run saved before feature sets had names read the observation planes (and learnt soft targets, in float32)
    was = {"features": "planes", "policy_target": "soft", "precision": "fp32", "sharpen": 1.0, "decision_weight": {},
           **st["config"]}
    if was != asdict(cfg):
        raise ValueError(f"{state_path} belongs to a run with other settings ({differences(was, asdict(cfg))}); "
                         "use another directory")
    if st["rules"] != rules.to_dict():
        raise ValueError(f"{state_path} belongs to a run under other rules "
                         f"({differences(st['rules'], rules.to_dict())}); use another directory")
    if data_key is not None and st.get("data_key") not in (None, data_key):
        raise ValueError(f"{state_path} belongs to a run on other data (its chunks differ from the ones "
                         "given now); use another directory")
    if "init_sha256" in st and init is not None and st["init_sha256"] != file_sha256(pathlib.Path(init)):
        # (a state saved before init_sha256 was kept: unknown)
        raise ValueError(f"{state_path} belongs to a run started from "
                         f"{st['init'] or 'random weights'}, not from --init {init}; use another directory")


def train(data: Positions, rules: Rules, out_dir: str | os.PathLike[str], cfg: TrainConfig, device: str = "cpu",
          threads: int = 1, progress: bool = True, meta: dict[str, Any] | None = None,
          stop_after: int | None = None, snapshot_every: int | None = 1000,
          init: str | os.PathLike[str] | None = None, data_key: str | None = None) -> dict[str, Any]:
    """Train (or continue training) a network on ``data``; returns the last curve row.

    ``stop_after``: stop after that many steps in this call (the run resumes
    later from ``state.pt``), e.g. to fit a session or a test.
    ``snapshot_every``: also keep the network of every that many steps as
    ``snapshots/net-STEP.pt`` (what a strength-over-training curve rates;
    those steps are saved whatever ``save_every``); ``None`` keeps none.
    ``init``: a checkpoint whose weights start a new run (the next generation
    starts from the last one).  A resumed run continues from its state; it
    refuses an ``init`` other than the one it started from (by SHA-256), and
    its checkpoints keep naming that one.
    ``data_key``: an identifier of the data (:func:`jiu_env.learn.dataset.data_key`),
    kept in the state so a resumed run refuses other data.
    """
    import torch
    import torch.nn.functional as F

    from ..bots.network import atomic_torch_save, build_net, save_checkpoint

    if threads:
        torch.set_num_threads(int(threads))
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    train_set, val_set = data.split(cfg.val_share, cfg.seed)
    if len(train_set) == 0:
        raise ValueError("no training positions (every game went to validation)")
    torch.manual_seed(cfg.seed)
    from ..bots.features import FEATURE_PLANES

    if data.planes.shape[-1] != FEATURE_PLANES[cfg.features]:
        raise ValueError(f"the positions have {data.planes.shape[-1]} input planes, the {cfg.features!r} feature set "
                         f"{FEATURE_PLANES[cfg.features]}: load them with load_positions(..., features={cfg.features!r})")
    net = build_net(cfg.channels, cfg.blocks, features=cfg.features).to(device).to(memory_format=torch.channels_last)
    soft = train_set.soft and cfg.policy_target != "move"
    pi_actions, pi_probs = train_set.policy_targets()
    if soft and cfg.policy_target == "soft-battle":  # placement positions learn their move alone
        pi_actions, pi_probs = pi_actions.copy(), pi_probs.copy()
        place = train_set.placement
        pi_actions[place] = -1
        pi_actions[place, 0] = train_set.action[place]
        pi_probs[place] = 0.0
        pi_probs[place, 0] = 1.0
    if soft and cfg.sharpen != 1.0:
        pi_probs = sharpen_targets(pi_probs, cfg.sharpen)
    if init is not None and not (out / STATE).exists():
        net.load_state_dict(init_network(init, cfg, rules).state_dict())
        net.to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    step, cpu0, wall0 = 0, 0.0, 0.0
    state_path = out / STATE
    started = {"init": None if init is None else str(init),
               "init_sha256": None if init is None else file_sha256(pathlib.Path(init))}
    st = read_state(out, device)
    if st is not None:
        check_resume(state_path, st, cfg, rules, data_key=data_key, init=init)
        if "init_sha256" in st:  # (a state saved before it was kept: unknown)
            started = {"init": st["init"], "init_sha256": st["init_sha256"]}
        net.load_state_dict(st["net"])
        opt.load_state_dict(st["opt"])
        step, cpu0, wall0 = int(st["step"]), float(st["cpu_seconds"]), float(st["wall_seconds"])
    _trim_curve(out / CURVE, step)
    c_start, w_start = time.process_time(), time.perf_counter()
    target_all = _targets(train_set, cfg)
    weight_all = None
    if cfg.decision_weight:
        weight_all = np.array([cfg.decision_weight.get(k, 1.0) for k in DECISION_KINDS],
                              np.float32)[decision_kinds(train_set.planes)]
    n = rules.board_size
    run_meta = {"kind": "policy-value", "phase": "both", "train": asdict(cfg), **(meta or {})}
    if started["init"] is not None:
        run_meta["init"] = started["init"]
    row: dict[str, Any] = {}
    sums = [0.0, 0.0, 0]
    end = cfg.steps if stop_after is None else min(cfg.steps, step + int(stop_after))

    def cpu() -> float:
        return cpu0 + time.process_time() - c_start

    def wall() -> float:
        return wall0 + time.perf_counter() - w_start

    def save() -> None:
        # the state last: a run stopped before it is written trains these steps again and writes net.pt (and
        # the snapshot) again, while one stopped after it would never write them (its loop is done)
        save_checkpoint(out / NET, net.to(memory_format=torch.contiguous_format), rules,
                        {**run_meta, "steps": step, "cpu_seconds": round(cpu(), 1)})
        if snapshot_every and step % snapshot_every == 0:
            (out / "snapshots").mkdir(exist_ok=True)
            atomic_write_bytes(out / "snapshots" / f"net-{step:07d}.pt", (out / NET).read_bytes())
        net.to(memory_format=torch.channels_last)
        atomic_torch_save({"net": net.state_dict(), "opt": opt.state_dict(), "step": step, "config": asdict(cfg),
                           "rules": rules.to_dict(), "cpu_seconds": cpu(), "wall_seconds": wall(),
                           "data_key": data_key, **started},
                          state_path)

    while step < end:
        net.train()
        rng = np.random.default_rng([cfg.seed, step])
        idx = rng.integers(len(train_set), size=cfg.batch)
        if soft:  # self-play data or soft labels: cross-entropy to the stored distribution
            planes, pa = augment(train_set.planes[idx], pi_actions[idx], train_set.placement[idx], n, rng)
        else:
            planes, actions = augment(train_set.planes[idx], train_set.action[idx], train_set.placement[idx], n, rng)
        for g in opt.param_groups:
            g["lr"] = _lr(cfg, step)
        with torch.autocast(torch.device(device).type, dtype=torch.bfloat16, enabled=cfg.precision == "bf16"):
            logits, v = net(_tensor(planes, device))
        logits, v = logits.float(), v.float()  # the losses in float32
        if soft:
            logp = F.log_softmax(logits, dim=1).gather(1, torch.from_numpy(np.maximum(pa, 0).astype(np.int64)).to(device))
            ce = -(torch.from_numpy(pi_probs[idx]).to(device) * logp).sum(1)
        else:
            ce = F.cross_entropy(logits, torch.from_numpy(actions).to(device),
                                 reduction="mean" if weight_all is None else "none")
        if weight_all is None:
            lp = ce.mean()
        else:  # each position's loss by its kind's weight, the batch's by its total weight
            wt = torch.from_numpy(weight_all[idx]).to(device)
            lp = (wt * ce).sum() / wt.sum()
        lv = F.mse_loss(v, torch.from_numpy(target_all[idx]).to(device))
        loss = lp + cfg.value_weight * lv
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step += 1
        sums[0] += lp.item()
        sums[1] += lv.item()
        sums[2] += 1
        if step % cfg.eval_every == 0 or step == end:
            row = {"step": step, "positions": step * cfg.batch, "cpu_seconds": round(cpu(), 1),
                   "wall_seconds": round(wall(), 1), "lr": _lr(cfg, step - 1),
                   "train_policy_loss": sums[0] / sums[2], "train_value_loss": sums[1] / sums[2],
                   **evaluate_net(net, val_set, cfg, device)}
            sums = [0.0, 0.0, 0]
            new = not (out / CURVE).exists()
            with open(out / CURVE, "a", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, CURVE_FIELDS)
                if new:
                    w.writeheader()
                w.writerow({k: (f"{row[k]:.5g}" if isinstance(row[k], float) else row[k]) for k in CURVE_FIELDS})
            if progress:
                print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}),
                      file=sys.stderr, flush=True)
        # a snapshot step is saved too, whatever save_every: its network is kept only when it is saved
        if step % cfg.save_every == 0 or step == end or (snapshot_every and step % snapshot_every == 0):
            save()
    return row


__all__ = ["TrainConfig", "check_decision_weight", "check_resume", "differences", "init_network", "read_state", "train",
           "evaluate_net", "STATE", "CURVE", "NET"]
