"""Positions for training, replayed from the game chunks of :mod:`jiu_env.learn.data`.

A :class:`Positions` holds, per labelled decision, the observation planes of
the side to move (``uint8``, the plane value times :data:`PLANE_SCALE`: the
planes are 0/1 except a few constant fractions, which this keeps to 1/240),
the teacher's action, its search value, the game result for the side to move,
whether the position is in the placement phase and the game it came from.
At about 4 KB a position on 14x14, half a million positions fit in memory.

Symmetry augmentation (:func:`augment`) maps planes and actions with the
symmetries that commute with the rules of the position's phase
(:func:`jiu_env.symmetry.symmetries_for`: 8 in battle, 4 in placement on an
even board), so a placement target is never moved by a symmetry the
placement rules do not have.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from .. import vocab as V
from ..bots.features import FEATURE_PLANES, check_features, transform_input, write_net_input_unchecked
from ..rules import Rules
from ..symmetry import ALL_SYMMETRIES, action_map, placement_symmetries
from .data import NO_VALUE, VALUE_WIN, iter_positions, load_games, read_manifest
from .params import check_number

PLANE_SCALE = 240  # uint8 planes: value * 240 (exact for 0, 1, quarters and thirds)


@dataclass
class Positions:
    """Labelled positions as arrays (first axis: position)."""

    planes: np.ndarray  # uint8 (M, N, N, C), the side to move's input planes * PLANE_SCALE (C: the feature set's)
    action: np.ndarray  # int64 (M,), the teacher's action
    value: np.ndarray  # int32 (M,), the teacher's search value for the side to move (NO_VALUE: none)
    result: np.ndarray  # int8 (M,), the game result for the side to move
    placement: np.ndarray  # bool (M,), a placement-phase position
    game: np.ndarray  # int64 (M,), the game's seed
    #: int32 (M, K): the soft policy target's actions (-1: padding); K = 1 and ``action`` for engine data
    pi_actions: np.ndarray | None = None
    #: float32 (M, K): their probabilities (each row sums to 1)
    pi_probs: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.pi_actions is None:
            self.pi_actions = self.action.astype(np.int32).reshape(-1, 1)
            self.pi_probs = np.ones((self.action.size, 1), np.float32)

    def __len__(self) -> int:
        return int(self.action.size)

    @property
    def soft(self) -> bool:
        """Whether any position has a soft policy target (more than one action)."""
        return self.policy_targets()[0].shape[1] > 1

    def policy_targets(self) -> tuple[np.ndarray, np.ndarray]:
        """``(pi_actions, pi_probs)``, the soft policy targets (set for every position)."""
        if self.pi_actions is None or self.pi_probs is None:
            raise ValueError("positions without policy targets")  # never: __post_init__ sets them
        return self.pi_actions, self.pi_probs

    def subset(self, idx: np.ndarray) -> Positions:
        pa, pp = self.policy_targets()
        return Positions(self.planes[idx], self.action[idx], self.value[idx], self.result[idx],
                         self.placement[idx], self.game[idx], pa[idx], pp[idx])

    def split(self, val_share: float, seed: int = 0) -> tuple[Positions, Positions]:
        """``(train, validation)`` split by game, so no game has positions on both sides.

        ``val_share`` (0..1) of the games go to validation (at least one when
        it is above 0 and there are two games or more).
        """
        check_number("val_share", val_share, 0, 1)
        games = np.unique(self.game)
        rng = np.random.default_rng(seed)
        val_games = rng.choice(games, size=max(1, int(round(val_share * games.size))), replace=False) \
            if games.size > 1 and val_share > 0 else np.array([], np.int64)
        is_val = np.isin(self.game, val_games)
        return self.subset(np.flatnonzero(~is_val)), self.subset(np.flatnonzero(is_val))


def rules_of_run(data_dir: str | os.PathLike[str]) -> Rules:
    """The rules a data run was played under, from its manifest: its positions replay only under them."""
    manifest = read_manifest(data_dir)
    if manifest is None:
        raise FileNotFoundError(f"no manifest in {data_dir}: not a training-data directory")
    return Rules.make(dict(manifest["config"]["rules"]))


def _dir_list(data_dirs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Any]:
    """``data_dirs`` as a list (one directory given alone is a list of one); a directory named twice is refused,
    since its positions would count twice."""
    dirs = [data_dirs] if isinstance(data_dirs, (str, bytes, os.PathLike)) else list(data_dirs)
    seen: dict[str, Any] = {}
    for d in dirs:
        key = os.path.realpath(os.fsdecode(d))
        if key in seen:
            raise ValueError(f"data directory {d} is given twice (as {seen[key]}): its positions would count twice")
        seen[key] = d
    return dirs


def data_key(data_dirs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> str:
    """An identifier of the chunks in ``data_dirs`` (their SHA-256s from the manifests, in order)."""
    import hashlib

    h = hashlib.sha256()
    for d in _dir_list(data_dirs):
        manifest = read_manifest(d)
        if manifest is None:
            raise FileNotFoundError(f"no manifest in {d}: not a training-data directory")
        for name in sorted(manifest["chunks"]):
            h.update(f"{name}:{manifest['chunks'][name]['sha256']};".encode())
        h.update(b"|")
    return h.hexdigest()[:16]


#: which labelled positions :func:`load_positions` keeps
PHASES = ("both", "placement", "battle")


def load_positions(data_dirs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], max_games: int | None = None,
                   progress: bool = False, features: str = "planes", workers: int = 1,
                   phase: str = "both") -> tuple[Positions, Rules]:
    """Replay every game of the runs in ``data_dirs`` (all made under the same rules) into :class:`Positions`.

    ``data_dirs``: data run directories (one alone may be given as is); each at most once.

    ``features``: the input planes written per position (:mod:`jiu_env.bots.features`).
    ``workers > 1`` splits the games over that many processes; the positions and their order are the
    same as with one.  ``phase``: keep the positions of one phase only (``"placement"`` or
    ``"battle"``), e.g. to train each phase on another teacher's labels (:func:`concat_positions`).
    """
    check_features(features)
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, not {phase!r}")
    dirs = _dir_list(data_dirs)
    if not dirs:
        raise ValueError("no data directories given")
    rules = rules_of_run(dirs[0])
    for d in dirs[1:]:
        if rules_of_run(d) != rules:
            raise ValueError(f"{d} was made under other rules than {dirs[0]}")
    games = itertools.islice((g for d in dirs for g in load_games(d)),
                             None if max_games is None else max(0, int(max_games)))
    if int(workers) > 1:
        from concurrent.futures import ProcessPoolExecutor

        todo = list(games)
        parts = [[todo[i] for i in idx] for idx in np.array_split(np.arange(len(todo)),
                                                                  max(1, min(int(workers), len(todo))))]
        with ProcessPoolExecutor(len(parts)) as pool:
            pieces = [p for done in pool.map(_replay_games, [rules] * len(parts), parts, [features] * len(parts),
                                             [False] * len(parts), [phase] * len(parts))
                      for p in done]
    else:
        pieces = _replay_games(rules, games, features, progress, phase)
    if not pieces:
        raise ValueError(f"no labelled {'' if phase == 'both' else phase + ' '}positions in {dirs}")
    return concat_positions(pieces), rules


def concat_positions(pieces: list[Positions]) -> Positions:
    """Positions of several sets, one after another (soft targets padded to the widest: actions with -1,
    probabilities with 0)."""
    if not pieces:
        raise ValueError("no positions to concatenate")
    targets = [p.policy_targets() for p in pieces]
    k = max(a.shape[1] for a, _ in targets)
    pi_a = np.concatenate([np.pad(a, ((0, 0), (0, k - a.shape[1])), constant_values=-1) for a, _ in targets])
    pi_p = np.concatenate([np.pad(q, ((0, 0), (0, k - q.shape[1]))) for _, q in targets])

    def cat(field: str) -> np.ndarray:
        return np.concatenate([getattr(p, field) for p in pieces])

    return Positions(cat("planes"), cat("action"), cat("value"), cat("result"), cat("placement"), cat("game"),
                     pi_a, pi_p)


def _replay_games(rules: Rules, games: Iterable[dict[str, Any]], features: str, progress: bool = False,
                  phase: str = "both") -> list[Positions]:
    """The labelled positions (of ``phase``) of each game that has any, one :class:`Positions` a game."""
    n = rules.board_size
    out = []
    obs = np.empty((n, n, FEATURE_PLANES[features]), np.float32)
    tactics = features == "tactics"
    for i, game in enumerate(games, 1):
        rows = []
        keep = []  # per labelled position: of the phase kept (the others' input planes are never written)
        for s, label, value, result in iter_positions(rules, game):
            placement = bool(s[V.H_PHASE] == V.PH_PLACEMENT)
            keep.append(phase == "both" or placement == (phase == "placement"))
            if not keep[-1]:
                continue
            write_net_input_unchecked(s, tactics, obs)
            rows.append((np.rint(obs * PLANE_SCALE).astype(np.uint8), label, value, result, placement))
        if rows:
            pi_actions = pi_probs = None  # engine data: one-hot on the label (Positions.__post_init__)
            if "pi_actions" in game:  # self-play: visit counts of the most visited root actions
                mask = np.array(keep, bool)
                visits = game["pi_visits"][mask].astype(np.float32)
                pi_actions = game["pi_actions"][mask].astype(np.int32)
                pi_probs = visits / np.maximum(visits.sum(1, keepdims=True), 1.0)
            out.append(Positions(np.stack([r[0] for r in rows]), np.array([r[1] for r in rows], np.int64),
                                 np.array([r[2] for r in rows], np.int32), np.array([r[3] for r in rows], np.int8),
                                 np.array([r[4] for r in rows], bool), np.full(len(rows), game["seed"], np.int64),
                                 pi_actions, pi_probs))
        if progress and i % 100 == 0:
            print(f"replayed {i} games", flush=True)
    return out


def value_target(value: np.ndarray, result: np.ndarray, result_weight: float | np.ndarray, scale: float
                 ) -> np.ndarray:
    """The value head's target in [-1, 1]: ``w * result + (1 - w) * tanh(search value / scale)``.

    The game result alone is noisy (one game decides it for every position
    in it); the search value alone is the teacher's evaluation.  A position
    whose teacher gave no value uses the result alone.  ``result_weight`` may
    be an array (one weight per position).
    """
    v = value.astype(np.float64)
    has = value != NO_VALUE
    search = np.where(has, np.tanh(np.clip(v, -VALUE_WIN, VALUE_WIN) / scale), result)
    return (result_weight * result + (1.0 - result_weight) * search).astype(np.float32)


def sharpen_targets(probs: np.ndarray, power: float) -> np.ndarray:
    """Policy target rows ``(M, K)`` raised to ``power`` and renormalised (zeros and one-hot rows stay).

    A soft label's weights are ``exp((score - best) / T)``, so the power
    turns it into the label of temperature ``T / power`` exactly (up to the
    stored weights' rounding), without labelling the games again.
    """
    check_number("the sharpening power", power, 0, 1e6, lo_open=True)  # inf would zero every soft row
    p = np.power(probs.astype(np.float64), power)
    total = p.sum(1, keepdims=True)
    return np.where(total > 0, p / np.where(total > 0, total, 1.0), 0.0).astype(np.float32)


#: The kinds of decision a position is, as :func:`decision_kinds` numbers them: a placement, or
#: the battle's sub-phase (``vocab.SUBPHASE_NAMES``).
DECISION_KINDS = ("placement",) + V.SUBPHASE_NAMES


def decision_kinds(planes: np.ndarray) -> np.ndarray:
    """The kind of each position of ``planes`` ``(M, N, N, C)`` (an index of :data:`DECISION_KINDS`).

    Read from the constant phase planes the observation writes (``PL_PLACEMENT``, ``PL_MOVE + sub``),
    so it needs nothing beside the stored planes.
    """
    const = planes[:, 0, 0, :]
    sub = np.argmax(const[:, V.PL_MOVE:V.PL_MOVE + len(V.SUBPHASE_NAMES)], axis=1)
    return np.where(const[:, V.PL_PLACEMENT] > 0, 0, 1 + sub).astype(np.int64)


def random_symmetries(placement: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """One symmetry per position, uniform over those that commute with the rules of its phase."""
    place_syms = np.array(placement_symmetries(n))
    every = np.array(ALL_SYMMETRIES)
    return np.where(placement, place_syms[rng.integers(place_syms.size, size=placement.size)],
                    every[rng.integers(every.size, size=placement.size)])


def apply_symmetries(planes: np.ndarray, actions: np.ndarray, syms: np.ndarray, n: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Planes ``(B, N, N, C)`` and actions ``(B,)`` or ``(B, K)`` (soft targets, -1 padding kept) each mapped
    by its own symmetry ``syms[i]``."""
    out_p = np.empty_like(planes)
    out_a = np.empty_like(actions)
    for sym in np.unique(syms):
        idx = np.flatnonzero(syms == sym)
        out_p[idx] = transform_input(planes[idx], int(sym))
        a = actions[idx]
        mapped = action_map(int(sym), n)[np.maximum(a, 0)]
        out_a[idx] = np.where(a >= 0, mapped, a)  # -1 pads a soft target's short rows
    return out_p, out_a


def augment(planes: np.ndarray, actions: np.ndarray, placement: np.ndarray, n: int,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A random rules-preserving symmetry per position: mapped planes ``(B, N, N, C)`` and actions."""
    return apply_symmetries(planes, actions, random_symmetries(placement, n, rng), n)


__all__ = ["Positions", "PLANE_SCALE", "load_positions", "data_key", "rules_of_run", "value_target", "sharpen_targets", "augment",
           "DECISION_KINDS", "decision_kinds",
           "random_symmetries", "apply_symmetries"]
