"""Self-play with the network inside the search: the data of the next generation.

The network of a run (a ``policy-value`` checkpoint, e.g. ``net/net.pt``)
plays itself with PUCT search (:class:`jiu_env.bots.alphazero.PUCT`, the
shared search tree of :mod:`jiu_env.bots.search_tree`).  The games of a chunk
are played **at once**: one search object holds one tree per game, and every
simulation round sends the leaves of all the games that are thinking to the
network in one batch, so a forward pass serves up to ``chunk_games`` games.

What a decision stores (the same chunk format as :mod:`jiu_env.learn.data`,
so :func:`~jiu_env.learn.dataset.load_positions` mixes self-play chunks with
engine data):

- ``labels``: the most visited root action (the improved policy's move);
- ``pi_actions`` / ``pi_visits``: the ``top_k`` most visited root actions
  and their visit counts, the soft policy target (visits are what PUCT
  improves over the prior; cross-entropy to them is AlphaZero's policy loss);
- ``values``: the root's mean value ``q`` for the side to move, stored in the
  engine data's units as ``VALUE_SCALE * atanh(q)`` so that the training's
  ``tanh(value / 800)`` gives ``q`` back (a value target from search, mixed
  with the game result like an engine's);
- the game result, played out to the end (or adjudicated by the stone
  difference after ``adjudicate_turns`` battle turns, see
  :func:`~jiu_env.bots.alphazero.terminal_value`).

Exploration: Dirichlet noise on the root priors, moves sampled in proportion
to visits for the first ``temp_decisions`` searched decisions after a random
opening of up to ``random_opening`` placements; the label is always the most
visited action.  Every random choice derives from ``seed`` and the numbers of
the chunk's games, so a chunk is the same bytes whichever process or machine
plays it.

The run directory, its manifest and chunks behave like an engine-data run
(:func:`jiu_env.learn.data.generate`): resumable chunk by chunk, settings
(with the network's SHA-256) checked on resume, local processes or Ray.
"""

from __future__ import annotations

import hashlib
import io
import math
import pathlib
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .. import kernel as K

from .. import vocab as V
from ..rules import Rules
from .params import check_fields
from .seeds import game_seed

VALUE_SCALE = 800.0  #: ``values`` = VALUE_SCALE * atanh(q), the training's default value scale
Q_CLIP = 0.999  # |q| is clipped below 1 before atanh


def file_sha256(path: str | pathlib.Path) -> str:
    """SHA-256 of a file's bytes: pins the checkpoint a self-play run uses, so a resumed run plays the same net."""
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class SelfPlayConfig:
    """What a self-play run plays (stored in the manifest; a resumed run must match it).

    ``net`` is the checkpoint's path and ``net_sha256`` its hash (filled in by
    :meth:`for_net`): a run never mixes two networks.
    """

    net: str
    net_sha256: str
    rules: dict[str, Any] = field(default_factory=lambda: Rules.make("competitive").to_dict())
    seed: int = 0
    chunk_games: int = 16
    sims: int = 32
    c_puct: float = 3.5
    dirichlet_alpha: float = 0.3
    dirichlet_eps: float = 0.25
    temp_decisions: int = 30
    random_opening: int = 8
    adjudicate_turns: int = 0
    adjudicate_margin: float = 8.0
    top_k: int = 8
    kind: str = "selfplay"

    def __post_init__(self) -> None:
        check_fields(self, ints=dict(seed=(0, 2 ** 63 - 1), chunk_games=(1, 4096), sims=(1, 100_000),
                                     temp_decisions=(0, 10_000), random_opening=(0, 64),
                                     adjudicate_turns=(0, 100_000), top_k=(1, 64)),
                     numbers=dict(c_puct=(0, 1e6), dirichlet_alpha=(1e-6, 1e6), dirichlet_eps=(0, 1),
                                  adjudicate_margin=(1e-6, 1e6)))
        if self.kind != "selfplay":
            raise ValueError(f"kind must be 'selfplay', not {self.kind!r}")
        Rules.make(dict(self.rules))

    @classmethod
    def for_net(cls, net: str | pathlib.Path, **kw: Any) -> SelfPlayConfig:
        """A config for the checkpoint ``net`` (its rules unless ``rules`` is given, its hash filled in)."""
        from ..bots.network import load_network

        path = pathlib.Path(net).resolve()
        _, _, rules = load_network(path)
        if "rules" not in kw:
            if rules is None:
                raise ValueError(f"{path} does not say which rules it was trained under: pass rules=")
            kw["rules"] = rules.to_dict()
        elif rules is not None and Rules.make(dict(kw["rules"])) != rules:
            raise ValueError(f"{path} was trained under {rules.to_dict()}, not the asked rules {kw['rules']}")
        return cls(net=str(path), net_sha256=file_sha256(path), **kw)

    @property
    def rules_obj(self) -> Rules:
        return Rules.make(dict(self.rules))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _game_rng(config: SelfPlayConfig, game: int) -> tuple[int, np.random.Generator]:

    gseed = game_seed(config, game)
    return gseed, np.random.default_rng(gseed)


def play_selfplay_games(config: SelfPlayConfig, games: list[int], net: Any = None) -> list[dict[str, Any]]:
    """Play the self-play games numbered ``games`` at once; one dict per game (like
    :func:`jiu_env.learn.data.play_labelled_game`'s, plus ``pi_actions``/``pi_visits``)."""
    import torch

    from ..bots.alphazero import PUCT, load_network, make_evaluator, pick_action, terminal_value

    rules = config.rules_obj
    if net is None:
        path = pathlib.Path(config.net)
        if file_sha256(path) != config.net_sha256:
            raise ValueError(f"{path} is not the network this run was started with (its SHA-256 changed)")
        net, _, net_rules = load_network(path)
        if net_rules is not None and net_rules != rules:
            raise ValueError(f"{path} was trained under other rules than this run's")
    torch.set_num_threads(1)
    search = PUCT(make_evaluator(net), rules.board_size, rules.new_state().size, len(games), config.sims,
                  config.c_puct, 0.0, config.adjudicate_turns, config.adjudicate_margin)
    na = rules.num_actions
    buf = np.empty(na, np.int64)
    rngs, seeds, openings = [], [], []
    for g in games:
        gseed, rng = _game_rng(config, g)
        seeds.append(gseed)
        rngs.append(rng)
        openings.append(int(rng.integers(config.random_opening + 1)))
    states = [rules.new_state() for _ in games]
    rec: list[dict[str, list[Any]]] = [{"actions": [], "labels": [], "values": [], "pi_actions": [], "pi_visits": []}
                                       for _ in games]
    thinking = [0] * len(games)  # searched decisions so far (the temperature counts these)

    def finished(s: np.ndarray) -> bool:
        return bool(terminal_value(s, config.adjudicate_turns, config.adjudicate_margin)[0])

    def play(i: int, a: int, label: int = -1, value: int = 0, pa: Any = None, pv: Any = None) -> None:
        K.apply_action(states[i], a)
        r = rec[i]
        r["actions"].append(a)
        r["labels"].append(label)
        r["values"].append(value)
        if label >= 0:
            r["pi_actions"].append(pa)
            r["pi_visits"].append(pv)

    while True:
        to_search = []
        for i, s in enumerate(states):
            while not finished(s):
                k = K.legal_actions(s, buf)
                if s[V.H_PHASE] == V.PH_PLACEMENT and int(s[V.H_DECISIONS]) < openings[i]:
                    play(i, int(buf[rngs[i].integers(k)]))
                elif k == 1:
                    play(i, int(buf[0]))
                else:
                    to_search.append(i)
                    break
        if not to_search:
            break
        # one noise generator per search call, from the first thinking game's stream (deterministic)
        results = search.search([states[i] for i in to_search], rngs[to_search[0]], config.dirichlet_alpha,
                                config.dirichlet_eps)
        for i, (acts, visits, q) in zip(to_search, results):
            order = np.lexsort((acts, -visits))[:config.top_k]  # most visited first, ties by action
            pa = np.full(config.top_k, -1, np.int32)
            pv = np.zeros(config.top_k, np.int32)
            pa[:order.size] = acts[order]
            pv[:order.size] = visits[order]
            label = int(pa[0])
            value = int(round(VALUE_SCALE * math.atanh(max(-Q_CLIP, min(Q_CLIP, float(q))))))
            temp = 1.0 if thinking[i] < config.temp_decisions else 0.0
            a = int(pick_action(acts, visits, temp, rngs[i])) if temp > 0 else label
            thinking[i] += 1
            play(i, a, label, value, pa, pv)
    out = []
    for i, s in enumerate(states):
        over, zw = terminal_value(s, config.adjudicate_turns, config.adjudicate_margin)
        result = 0 if zw == 0 else (1 if zw > 0 else -1)
        r = rec[i]
        out.append({"seed": seeds[i], "actions": r["actions"], "labels": r["labels"], "values": r["values"],
                    "pi_actions": r["pi_actions"], "pi_visits": r["pi_visits"], "result": result,
                    "end_reason": int(s[V.H_END_REASON]), "battle_turns": int(s[V.H_TURNS])})
    return out


def play_selfplay_chunk(config: SelfPlayConfig, index: int) -> tuple[bytes, float, float]:
    """Play the games of chunk ``index``: ``(the chunk file's bytes, CPU seconds, wall seconds)``."""
    t0, w0 = time.process_time(), time.perf_counter()
    games = play_selfplay_games(config, list(range(index * config.chunk_games, (index + 1) * config.chunk_games)))
    k = config.top_k
    arrays = {
        "seed": np.array([g["seed"] for g in games], np.int64),
        "offsets": np.cumsum([0] + [len(g["actions"]) for g in games]).astype(np.int64),
        "actions": np.concatenate([np.array(g["actions"], np.int32) for g in games]),
        "labels": np.concatenate([np.array(g["labels"], np.int32) for g in games]),
        "values": np.concatenate([np.array(g["values"], np.int32) for g in games]),
        "pi_actions": np.concatenate([np.array(g["pi_actions"], np.int32).reshape(-1, k) for g in games]),
        "pi_visits": np.concatenate([np.array(g["pi_visits"], np.int32).reshape(-1, k) for g in games]),
        "result": np.array([g["result"] for g in games], np.int8),
        "end_reason": np.array([g["end_reason"] for g in games], np.int8),
        "battle_turns": np.array([g["battle_turns"] for g in games], np.int32),
    }
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue(), time.process_time() - t0, time.perf_counter() - w0


__all__ = ["SelfPlayConfig", "VALUE_SCALE", "play_selfplay_games", "play_selfplay_chunk", "file_sha256"]
