"""``jiu train --stage rl``: PPO on the network's own games against a fixed opponent.

Imitation copies a teacher and stops below it: on 14x14 every imitation
variant left the battle network alone at 45-48% against
``alphabeta:depth=1``, and this stage took it to 58.5%
(``baselines/learned/jiu14-g18-ppo``, the shipped battle network).  The
signal is the game's result: the learner plays ``opponent``, samples its
battle moves from ``softmax(logits / temperature)``, and clipped PPO
(Schulman et al. 2017) with the network's own value head as the critic
(GAE, gamma 1, the result +1 / 0 / -1 the only reward) moves the policy
towards the moves of the games it won.

- **What is learnt**: the battle decisions with more than one legal action.
  The placement is played by argmax of a fixed network (``placement``,
  default the initial network), as the ``policy`` player places.
- **Batch norm stays in evaluation mode** (the statistics of the imitation
  data), so the acting and the learning network compute the same function.
- **Value warm-up**: the first ``value_warmup`` iterations fit the value
  head's own layers alone (a value trained on search values and results is
  not yet the critic of the sampling policy); the trunk and the policy wait.
- **Games**: an iteration plays ``games`` games, colours alternating, each
  opened by ``random_opening`` random placements, every random choice
  derived from ``(seed, iteration, game)``.  They are split into ``streams``
  streams (the games ``seeds[i::streams]``), and a stream is played
  ``concurrent`` games at a time with one batched forward pass for all of
  their decisions.  The games depend on the settings only, not on
  ``workers`` or the backend: a stream is the same games in any process, on
  the local pool or on a Ray cluster (a batch's forward pass depends on
  which games share it, which the streams fix).
- **Resumable**: after every iteration ``DIR/rl/`` gets ``state.pt``
  (weights, optimiser, iteration, CPU seconds, the settings and the curve's
  rows; the iteration is done once it is written), ``net.pt`` (the
  learner, a checkpoint the players load), ``curve.csv`` (rewritten from the
  rows in ``state.pt``) and every ``snapshot_every`` iterations
  ``snap-NNNN.pt``.  A run started again on the directory continues after
  the last iteration written, and refuses other settings; an iteration cut
  off is played again from its start, the same games.

``jiu train DIR --stage rl --init NET.pt --opponent alphabeta:depth=1
--iterations 70`` runs it from the command line; :func:`run_rl` from Python.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import pathlib
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator

import numpy as np

from .. import kernel as K
from .. import vocab as V
from ..rules import Rules
from .params import check_fields, check_int, check_number
from .selfplay import file_sha256
from .train import PRECISIONS

#: The curve's columns (``curve.csv``), one row an iteration.
FIELDS = ("iteration", "games", "decisions", "win", "draw", "loss", "score", "turns", "policy_loss", "value_loss",
          "entropy", "kl", "clipped", "cpu_seconds", "wall_seconds")
STATE, NET = "state.pt", "net.pt"


@dataclass(frozen=True)
class RLConfig:
    """What a PPO run plays and how it learns (kept in ``state.pt``; a resumed run must match it).

    ``init`` is the checkpoint the learner starts from and ``placement`` the
    fixed network that places (``None``: the initial network); their SHA-256
    (filled in by :meth:`for_nets`) pin them, so a run never changes
    networks half-way.
    """

    init: str
    init_sha256: str
    placement: str | None = None
    placement_sha256: str | None = None
    opponent: str = "alphabeta:depth=1"
    rules: dict[str, Any] = field(default_factory=lambda: Rules.make("competitive").to_dict())
    seed: int = 0
    games: int = 96  #: games an iteration
    streams: int = 2  #: an iteration's games are split into this many streams (the unit of work)
    concurrent: int = 16  #: games a stream plays at once, one batched forward pass for their decisions
    random_opening: int = 4  #: random placements before the players
    temperature: float = 0.25  #: the learner samples softmax(logits / temperature); its argmax is the player's move
    gae_lambda: float = 0.95
    lr: float = 2e-5
    epochs: int = 2
    minibatch: int = 512
    clip: float = 0.2
    value_coef: float = 0.5
    entropy_coef: float = 0.0
    max_grad_norm: float = 0.5
    value_warmup: int = 2  #: iterations that fit the value head's layers alone
    snapshot_every: int = 10
    precision: str = "fp32"  #: the learner's battle forward passes and training step: fp32 or bf16 (autocast)

    def __post_init__(self) -> None:
        for name in ("init", "init_sha256", "opponent"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"{name} must be a non-empty string, not {getattr(self, name)!r}")
        if (self.placement is None) != (self.placement_sha256 is None):
            raise ValueError("placement and placement_sha256 go together (RLConfig.for_nets fills both in)")
        check_fields(self, ints=dict(seed=(0, 2 ** 63 - 1), games=(1, 1_000_000), streams=(1, 4096),
                                     concurrent=(1, 4096), random_opening=(0, 64), epochs=(1, 1000),
                                     minibatch=(1, 1_000_000), value_warmup=(0, 1_000_000),
                                     snapshot_every=(1, 1_000_000)))
        if self.streams > self.games:
            raise ValueError(f"streams ({self.streams}) must be at most games an iteration ({self.games})")
        check_number("temperature", self.temperature, 0.0, 100.0, lo_open=True)
        check_number("gae_lambda", self.gae_lambda, 0.0, 1.0)
        check_number("lr", self.lr, 0.0, 1.0, lo_open=True)
        check_number("clip", self.clip, 0.0, 10.0, lo_open=True)
        check_number("value_coef", self.value_coef, 0.0, 1000.0)
        check_number("entropy_coef", self.entropy_coef, 0.0, 1000.0)
        check_number("max_grad_norm", self.max_grad_norm, 0.0, 1e6, lo_open=True)
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, not {self.precision!r}")
        if not isinstance(self.rules, dict):  # stored as given (a resumed run compares it): a dict of options
            raise TypeError(f"rules must be a dict of rules options (Rules.to_dict()), not "
                            f"{type(self.rules).__name__} {self.rules!r}")
        try:
            Rules.make(dict(self.rules))  # refuse bad rules now, not in a worker
        except (TypeError, ValueError) as e:
            raise type(e)(f"rules: {e}") from None
        from ..bots import make_bot

        make_bot(self.opponent)  # refuse a bad opponent spec now, naming it

    @classmethod
    def for_nets(cls, init: str | os.PathLike[str], placement: str | os.PathLike[str] | None = None,
                 **kw: Any) -> "RLConfig":
        """The settings for the networks at ``init`` (and ``placement``), their hashes filled in."""
        for what, path in (("init", init), ("placement", placement)):
            if path is not None and not pathlib.Path(path).is_file():
                raise FileNotFoundError(f"{what} checkpoint {path} not found")
        return cls(init=str(init), init_sha256=file_sha256(str(init)),
                   placement=None if placement is None else str(placement),
                   placement_sha256=None if placement is None else file_sha256(str(placement)), **kw)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def iteration_seeds(config: RLConfig, iteration: int) -> list[int]:
    """The game seeds of iteration ``iteration`` (0-based); an even seed plays White, odd Black, half each."""
    seeds = [int(x) for x in np.random.SeedSequence([config.seed, iteration]).generate_state(config.games)]
    return [(s & ~1) | (i % 2) for i, s in enumerate(seeds)]


# ---------------------------------------------------------------- acting
_NETS: dict[str, Any] = {}  # the placement network of a worker process, by SHA-256


def _placement_net(path: str, sha256: str) -> Any:
    net = _NETS.get(sha256)
    if net is None:
        from ..bots.network import load_network

        if file_sha256(path) != sha256:
            raise ValueError(f"placement checkpoint {path} (--placement-net, else --init) has changed since the "
                             "run started")
        net = _NETS[sha256] = load_network(path)[0]
    return net


def net_bytes(net: Any) -> bytes:
    """The learner's weights as sent to the processes that play: its shape and contiguous CPU tensors."""
    import torch

    buf = io.BytesIO()
    torch.save({"config": dict(net.config),
                "state_dict": {k: v.detach().cpu().contiguous() for k, v in net.state_dict().items()}}, buf)
    return buf.getvalue()


def _net_from_bytes(weights: bytes) -> Any:
    import torch

    from ..bots.network import build_net

    data = torch.load(io.BytesIO(weights), weights_only=True)
    net = build_net(**data["config"])
    net.load_state_dict(data["state_dict"])
    net.eval()
    return net.to(memory_format=torch.channels_last)


def _forward(net: Any, states: list[np.ndarray], bf16: bool) -> tuple[np.ndarray, np.ndarray]:
    """Logits and values of ``states`` (the input planes of each side to move), one batched pass."""
    import torch

    from ..bots.features import FEATURE_PLANES, write_net_inputs
    from ..bots.network import net_features

    n = int(states[0][V.H_N])
    features = net_features(net)
    obs = np.empty((len(states), n, n, FEATURE_PLANES[features]), np.float32)
    write_net_inputs(np.stack(states), features == "tactics", obs)
    x = torch.from_numpy(obs).permute(0, 3, 1, 2)  # channels-last memory, NCHW view
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits, v = net(x)
    return logits.float().numpy(), v.float().numpy()


def play_stream(cfg: dict[str, Any], weights: bytes, seeds: list[int]) -> tuple[list[dict[str, Any]], float]:
    """The games ``seeds`` of the learner (weights ``weights``) against the opponent, ``concurrent`` at a
    time; each game's learnt decisions (states, actions, log-probabilities, values) and result, and the
    CPU seconds this took."""
    import torch

    from ..bots import make_bot

    config = RLConfig(**cfg)
    t0 = time.process_time()
    torch.set_num_threads(1)  # the forward passes of a stream on one thread, in whatever process plays it
    battle = _net_from_bytes(weights)
    # the fixed placement network: --placement-net, else the initial network (not the learner, whose trunk moves)
    place = (_placement_net(config.init, config.init_sha256) if config.placement is None
             else _placement_net(config.placement, str(config.placement_sha256)))
    bf16 = config.precision == "bf16"
    rules = Rules.make(dict(config.rules))
    buf = np.empty(rules.num_actions, np.int64)
    todo = list(seeds)
    slots: list[dict[str, Any]] = []
    done: list[dict[str, Any]] = []

    def start(gseed: int) -> dict[str, Any]:
        ss = np.random.SeedSequence(gseed).generate_state(3)
        rng = np.random.default_rng(int(ss[0]))
        s = rules.new_state()
        for _ in range(config.random_opening):
            if s[V.H_PHASE] != V.PH_PLACEMENT:
                break
            k = K.legal_actions_unchecked(s, buf)
            K.apply_action_unchecked(s, int(buf[rng.integers(k)]))
        me = V.WHITE if gseed % 2 == 0 else V.BLACK
        return {"seed": gseed, "s": s, "rng": np.random.default_rng(int(ss[2])), "me": me,
                "opp": make_bot(config.opponent, seed=int(ss[1])), "states": [], "actions": [], "logp": [],
                "values": []}

    while todo or slots:
        while todo and len(slots) < config.concurrent:
            slots.append(start(todo.pop(0)))
        for g in slots:  # the opponent moves until the learner is to move or the game is over
            s = g["s"]
            while s[V.H_PHASE] != V.PH_OVER and int(s[V.H_TO_MOVE]) != g["me"]:
                K.apply_action_unchecked(s, int(g["opp"].step(s.copy())))
        for g in slots:
            if g["s"][V.H_PHASE] == V.PH_OVER:
                white, black = K.returns(g["s"])
                g["reward"] = float(white if g["me"] == V.WHITE else black)
                g["turns"] = int(g["s"][V.H_TURNS])
                done.append(g)
        slots = [g for g in slots if g["s"][V.H_PHASE] != V.PH_OVER]
        placing = [g for g in slots if g["s"][V.H_PHASE] == V.PH_PLACEMENT]
        fighting = [g for g in slots if g["s"][V.H_PHASE] != V.PH_PLACEMENT]
        if placing:  # the placement network's most likely legal placement
            logits, _ = _forward(place, [g["s"] for g in placing], bf16=False)
            for g, lg in zip(placing, logits):
                k = K.legal_actions_unchecked(g["s"], buf)
                K.apply_action_unchecked(g["s"], int(buf[:k][int(np.argmax(lg[buf[:k]]))]))
        if fighting:  # the learner samples its battle moves
            logits, values = _forward(battle, [g["s"] for g in fighting], bf16=bf16)
            for g, lg, v in zip(fighting, logits, values):
                s = g["s"]
                k = K.legal_actions_unchecked(s, buf)
                acts = buf[:k].copy()
                if k == 1:
                    K.apply_action_unchecked(s, int(acts[0]))
                    continue
                x = lg[acts].astype(np.float64) / config.temperature
                x -= x.max()
                lp = x - np.log(np.exp(x).sum())
                p = np.exp(lp)
                i = int(g["rng"].choice(k, p=p / p.sum()))
                g["states"].append(s.copy())
                g["actions"].append(int(acts[i]))
                g["logp"].append(float(lp[i]))
                g["values"].append(float(v))
                K.apply_action_unchecked(s, int(acts[i]))
    out = [{"seed": g["seed"], "me": g["me"], "reward": g["reward"], "turns": g["turns"],
            "states": np.array(g["states"], np.int64).reshape(len(g["states"]), -1),
            "actions": np.array(g["actions"], np.int64), "logp": np.array(g["logp"], np.float32),
            "values": np.array(g["values"], np.float32)} for g in done]
    return out, time.process_time() - t0


# ---------------------------------------------------------------- learning
def gae(values: np.ndarray, reward: float, lam: float) -> np.ndarray:
    """Advantages of one game's learnt decisions: GAE(``lam``) with gamma 1, the result the only reward.

    ``values[t]`` is the critic's value of decision ``t``; the value after the
    last decision is the result.  ``lam = 1`` gives ``reward - values``,
    ``lam = 0`` the one-step differences ``values[t+1] - values[t]``.
    """
    nxt = np.append(values[1:], reward)
    delta = nxt - values
    adv = np.zeros_like(values)
    acc = 0.0
    for t in range(len(values) - 1, -1, -1):
        acc = delta[t] + lam * acc
        adv[t] = acc
    return adv


def learn(net: Any, opt: Any, games: list[dict[str, Any]], config: RLConfig, policy_on: bool,
          rng: np.random.Generator) -> dict[str, float]:
    """``config.epochs`` passes of clipped PPO over the games' decisions; the statistics of the last pass.

    ``policy_on`` false (the value warm-up) trains the value head's own layers alone.
    """
    import torch

    from ..bots.features import FEATURE_PLANES, write_net_inputs
    from ..bots.network import net_features

    states = np.concatenate([g["states"] for g in games])
    if not len(states):
        return {"policy": 0.0, "value": 0.0, "entropy": 0.0, "kl": 0.0, "clipped": 0.0, "decisions": 0.0}
    actions = torch.from_numpy(np.concatenate([g["actions"] for g in games]))
    old = torch.from_numpy(np.concatenate([g["logp"] for g in games]))
    adv_np = np.concatenate([gae(g["values"].astype(np.float64), g["reward"], config.gae_lambda) for g in games])
    ret = torch.from_numpy((adv_np + np.concatenate([g["values"] for g in games])).astype(np.float32))
    adv = torch.from_numpy(((adv_np - adv_np.mean()) / (adv_np.std() + 1e-8)).astype(np.float32))
    n = int(states[0][V.H_N])
    features = net_features(net)
    obs = np.empty((len(states), n, n, FEATURE_PLANES[features]), np.float32)
    write_net_inputs(states, features == "tactics", obs)
    masks = np.zeros((len(states), V.num_actions(n)), bool)
    for i, s in enumerate(states):
        K.legal_mask_unchecked(s, masks[i])
    x_all = torch.from_numpy(obs).permute(0, 3, 1, 2)
    m_all = torch.from_numpy(masks)
    for name, p in net.named_parameters():  # warm-up: the value head's own layers only
        p.requires_grad_(policy_on or name.startswith("value."))
    stats: dict[str, float] = {}
    for _ in range(config.epochs):
        order = rng.permutation(len(states))
        sums = {"policy": 0.0, "value": 0.0, "entropy": 0.0, "kl": 0.0, "clipped": 0.0}
        for lo in range(0, len(order), config.minibatch):
            idx = torch.from_numpy(order[lo:lo + config.minibatch])
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=config.precision == "bf16"):
                logits, v = net(x_all[idx])
            logits = logits.float().masked_fill(~m_all[idx], -1e9) / config.temperature
            logp_all = torch.log_softmax(logits, dim=1)
            logp = logp_all.gather(1, actions[idx, None]).squeeze(1)
            ratio = torch.exp(logp - old[idx])
            a = adv[idx]
            pol = -torch.min(ratio * a, ratio.clamp(1 - config.clip, 1 + config.clip) * a).mean()
            val = ((v.float() - ret[idx]) ** 2).mean()
            p = logp_all.exp()
            ent = -(p * logp_all.clamp(min=-1e8)).sum(1).mean()
            loss = config.value_coef * val + (pol - config.entropy_coef * ent if policy_on else 0.0)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), config.max_grad_norm)
            opt.step()
            w = len(idx) / len(order)
            with torch.no_grad():
                sums["policy"] += float(pol) * w
                sums["value"] += float(val) * w
                sums["entropy"] += float(ent) * w
                sums["kl"] += float((old[idx] - logp).mean()) * w
                sums["clipped"] += float(((ratio - 1).abs() > config.clip).float().mean()) * w
        stats = sums
    stats["decisions"] = float(len(states))
    return stats


# ---------------------------------------------------------------- the run
def _play(cfg: dict[str, Any], weights: bytes, streams: list[list[int]], pool: Any, backend: str
          ) -> Iterator[tuple[list[dict[str, Any]], float]]:
    """The streams' games, played here, on the local pool or as Ray tasks, in the order they finish."""
    if backend == "ray":
        import ray

        job = ray.remote(num_cpus=1, max_retries=3)(play_stream)
        ref = ray.put(weights)
        pending = [job.remote(cfg, ref, seeds) for seeds in streams]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            yield ray.get(ready[0])
    elif pool is None:
        for seeds in streams:
            yield play_stream(cfg, weights, seeds)
    else:
        from concurrent.futures import as_completed

        for fut in as_completed([pool.submit(play_stream, cfg, weights, seeds) for seeds in streams]):
            yield fut.result()


def _meta(config: RLConfig, iteration: int, cpu: float) -> dict[str, Any]:
    """What a checkpoint of the run records of how it was made."""
    return {"kind": "policy-value", "phase": "both", "stage": "rl", "init": config.init,
            "placement": config.placement, "opponent": config.opponent, "iteration": iteration,
            "games": iteration * config.games, "seed": config.seed,
            "ppo": {k: v for k, v in config.to_dict().items()
                    if k not in ("init", "init_sha256", "placement", "placement_sha256", "opponent", "rules", "seed")},
            "cpu_seconds": round(cpu, 1)}


def run_rl(out_dir: str | os.PathLike[str], config: RLConfig, iterations: int, workers: int = 1,
           threads: int = 1, progress: bool = True, backend: str = "local", address: str | None = None
           ) -> list[dict[str, Any]]:
    """Run (or resume) PPO in ``out_dir`` until ``iterations`` iterations are done; the curve's rows.

    ``workers`` processes play an iteration's streams (``backend="local"``;
    1: this process), or Ray tasks on the cluster at ``address`` (``"ray"``;
    without one, a private instance of ``workers`` CPUs here).  The learner
    trains with ``threads`` torch threads.  The games and the weights depend on
    the settings only, not on ``workers`` or the backend.
    """
    import torch

    from ..bots.network import load_network, save_checkpoint
    from ..evaluation.backends import check_backend, ray_session, worker_pool
    from ..fileio import atomic_write_bytes, atomic_write_text

    check_int("iterations", iterations, 0, 1_000_000)
    check_int("workers", workers, 1, 1024)
    check_int("threads", threads, 1, 1024)
    check_backend(backend, address)
    out = pathlib.Path(out_dir)
    state_path, curve = out / STATE, out / "curve.csv"
    cfg = config.to_dict()
    st = torch.load(state_path, weights_only=True) if state_path.exists() else None
    if st is not None and st["config"] != cfg:
        was = st["config"]
        diff = sorted(k for k in set(was) | set(cfg) if was.get(k) != cfg.get(k))
        raise ValueError(f"{out} holds a PPO run with other settings ({', '.join(diff)}); use a new directory")
    if file_sha256(config.init) != config.init_sha256:
        raise ValueError(f"init checkpoint {config.init} has changed since the run started")
    if config.placement is not None and file_sha256(config.placement) != config.placement_sha256:
        raise ValueError(f"placement checkpoint {config.placement} has changed since the run started")
    net, _, rules = load_network(config.init)  # in evaluation mode: batch norm keeps its statistics
    want = Rules.make(dict(config.rules))
    for what, r in (("init", rules), ("placement", None if config.placement is None else
                                      load_network(config.placement)[2])):
        if r is not None and r != want:
            raise ValueError(f"the {what} checkpoint was trained under other rules than this run's "
                             f"({r.to_dict()} != {want.to_dict()})")
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(threads)
    net = net.to(memory_format=torch.channels_last)
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    it, cpu, wall = 0, 0.0, 0.0
    lines: list[str] = []  # the curve's rows: curve.csv is rewritten from them
    if st is not None:
        net.load_state_dict(st["net"])
        opt.load_state_dict(st["opt"])
        it, cpu, wall, lines = int(st["iteration"]), float(st["cpu_seconds"]), float(st["wall_seconds"]), list(st["curve"])
        if progress:
            print(f"resuming {out} after iteration {it}", file=sys.stderr, flush=True)
    with contextlib.ExitStack() as stack:
        pool = None
        if it < iterations and backend == "ray":
            stack.enter_context(ray_session(address, workers if workers > 1 else None))
        elif it < iterations and workers > 1:
            pool = worker_pool(min(workers, config.streams))
            stack.callback(pool.shutdown, cancel_futures=True)
        while it < iterations:
            w0, c0 = time.perf_counter(), time.process_time()
            seeds = iteration_seeds(config, it)
            streams = [seeds[i::config.streams] for i in range(config.streams)]
            games: list[dict[str, Any]] = []
            elsewhere = pool is not None or backend == "ray"  # this process's CPU time counts the rest
            for res, c in _play(cfg, net_bytes(net), streams, pool, backend):
                games += res
                cpu += c if elsewhere else 0.0
            games.sort(key=lambda g: g["seed"])
            torch.set_num_threads(threads)
            stats = learn(net, opt, games, config, it >= config.value_warmup,
                          np.random.default_rng([config.seed, it, 1]))
            it += 1
            cpu += time.process_time() - c0
            wall += time.perf_counter() - w0
            rewards = np.array([g["reward"] for g in games])
            row = {"iteration": it, "games": len(games), "decisions": int(stats["decisions"]),
                   "win": int((rewards > 0).sum()), "draw": int((rewards == 0).sum()),
                   "loss": int((rewards < 0).sum()), "score": float((rewards.mean() + 1) / 2),
                   "turns": float(np.mean([g["turns"] for g in games])),
                   "policy_loss": stats["policy"], "value_loss": stats["value"], "entropy": stats["entropy"],
                   "kl": stats["kl"], "clipped": stats["clipped"], "cpu_seconds": round(cpu, 1),
                   "wall_seconds": round(wall, 1)}
            meta = _meta(config, it, cpu)
            save_checkpoint(out / NET, net, want, meta)
            if it % config.snapshot_every == 0:
                save_checkpoint(out / f"snap-{it:04d}.pt", net, want, meta)
            text = io.StringIO()
            csv.DictWriter(text, FIELDS, lineterminator="\n").writerow(row)
            lines.append(text.getvalue().rstrip("\n"))
            buf = io.BytesIO()
            torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "iteration": it, "cpu_seconds": cpu,
                        "wall_seconds": wall, "curve": lines, "config": cfg}, buf)
            atomic_write_bytes(state_path, buf.getvalue())  # the iteration is done once this file is written
            atomic_write_text(curve, "\n".join([",".join(FIELDS), *lines]) + "\n")
            if progress:
                print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
                      file=sys.stderr, flush=True)
    return read_curve(curve)


def read_curve(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a run's ``curve.csv`` (numbers as floats, counts as ints); none for a missing file."""
    path = pathlib.Path(path)
    if not path.exists():
        return []
    ints = {"iteration", "games", "decisions", "win", "draw", "loss"}
    with path.open(newline="") as f:
        return [{k: int(v) if k in ints else float(v) for k, v in row.items()} for row in csv.DictReader(f)]


__all__ = ["RLConfig", "run_rl", "play_stream", "learn", "gae", "iteration_seeds", "read_curve", "FIELDS"]
