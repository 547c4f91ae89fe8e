"""Maximum-likelihood Elo (Bradley-Terry) ratings with confidence intervals.

Model: player ``i`` scores against ``j`` with expectation
``E = 1 / (1 + 10 ** (-(R_i - R_j) / 400))``; a win is 1 point, a draw 1/2
(draws enter the likelihood as half a win and half a loss), a loss 0.  The
ratings maximise the binomial log-likelihood of the points scored in every
pair, found by Newton's method.

Ratings are only defined up to a constant; the fit fixes it by an *anchor*:
a player's name (that player is rated 0, its own interval is 0 wide, and the
others' intervals measure the difference to it) or ``"mean"`` (the ratings
average 0).

A player that wins (or loses) every game has an infinite maximum-likelihood
rating.  ``prior_draws`` virtual drawn games are therefore added to every pair
that played (default 2, as BayesElo does); this pulls ratings a little towards
each other and matters only when a pair played few games.  Use
``prior_draws=0`` for the plain maximum-likelihood fit.

Intervals come from the Fisher information (the inverse of the observed
information matrix at the optimum: normal approximation) or from a seeded
parametric bootstrap over the games of every pair (:func:`bootstrap_elo`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Iterable

import numpy as np
from numpy.typing import ArrayLike

from ..validate import check_int, check_real

ELO_PER_NAT: float = 400.0 / math.log(10.0)  # Elo points per natural-log unit of the logistic model


def expected_score(diff: ArrayLike) -> float | np.ndarray:
    """Expected score of a player rated ``diff`` Elo above its opponent."""
    return 1.0 / (1.0 + 10.0 ** (-np.asarray(diff, dtype=float) / 400.0))


def elo_diff(score: ArrayLike) -> float | np.ndarray:
    """Elo difference that gives expected ``score`` (0 < score < 1): 0.75 -> 190.85."""
    s = np.asarray(score, dtype=float)
    if np.any((s <= 0) | (s >= 1)):
        raise ValueError("a score of 0 or 1 has no finite Elo difference")
    return 400.0 * np.log10(s / (1.0 - s))


@dataclass
class EloFit:
    """Result of :func:`fit_elo` (ratings, standard errors and intervals in Elo)."""

    names: list[str]
    ratings: np.ndarray
    se: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    anchor: str
    method: str
    confidence: float
    prior_draws: float
    iterations: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-able ``{name: {"elo", "se", "lower", "upper"}}`` plus the fit settings."""
        return {
            "anchor": self.anchor,
            "method": self.method,
            "confidence": self.confidence,
            "prior_draws": self.prior_draws,
            "ratings": {
                n: {"elo": float(r), "se": float(s), "lower": float(lo), "upper": float(hi)}
                for n, r, s, lo, hi in zip(self.names, self.ratings, self.se, self.lower, self.upper)
            },
        }

    def __getitem__(self, name: str) -> float:
        return float(self.ratings[self.names.index(name)])


#: Why :func:`bootstrap_elo` (and a tournament's bootstrap intervals) refuse ``prior_draws=0``.
BOOTSTRAP_NEEDS_PRIOR = ("bootstrap intervals need prior_draws > 0: a resample in which a player wins (or loses) "
                         "every game against the rest has no finite rating")


def _check_names(names: list[str]) -> None:
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"player names must be unique; repeated: {', '.join(map(str, dup))}")


def _check_fit_settings(prior_draws: Any, confidence: Any) -> None:
    check_real("prior_draws", prior_draws)
    check_real("confidence", confidence)
    if prior_draws < 0:
        raise ValueError(f"prior_draws cannot be negative, not {prior_draws!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), not {confidence!r}")


def _matrices(names, wins, draws):
    k = len(names)
    w = np.asarray(wins, dtype=float)
    d = np.zeros((k, k)) if draws is None else np.asarray(draws, dtype=float)
    if w.shape != (k, k) or d.shape != (k, k):
        raise ValueError(f"wins and draws must be {k}x{k} matrices (one row/column per player)")
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(d))):
        raise ValueError("game counts must be finite numbers (no nan or inf)")
    if np.any(w < 0) or np.any(d < 0):
        raise ValueError("game counts cannot be negative")
    if not np.allclose(d, d.T):
        raise ValueError("the draws matrix must be symmetric (draws[i, j] == draws[j, i])")
    if np.any(np.diag(w) != 0) or np.any(np.diag(d) != 0):
        raise ValueError("a player cannot play itself (the diagonals must be 0)")
    return w, d


def _components(n_games):
    k = n_games.shape[0]
    comp = -np.ones(k, dtype=int)
    c = 0
    for s in range(k):
        if comp[s] >= 0:
            continue
        stack = [s]
        comp[s] = c
        while stack:
            i = stack.pop()
            for j in np.flatnonzero(n_games[i] > 0):
                if comp[j] < 0:
                    comp[j] = c
                    stack.append(j)
        c += 1
    return comp, c


def _ml_ratings(score, n_games, anchor_idx, max_iter=200):
    """Newton's method on the log-likelihood; returns (theta in nats, information matrix, iterations)."""
    k = score.shape[0]
    theta = np.zeros(k)
    free = np.array([i for i in range(k) if i != anchor_idx])

    def loglik(t):
        diff = t[:, None] - t[None, :]
        # log sigmoid, written to stay finite for large |diff|
        ls = -np.logaddexp(0.0, -diff)
        return float(np.sum(score * ls))

    ll = loglik(theta)
    it = 0
    for it in range(1, max_iter + 1):
        diff = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))
        grad = np.sum(score - n_games * p, axis=1)
        info = n_games * p * (1.0 - p)
        h = -info
        h[np.diag_indices(k)] = np.sum(info, axis=1)
        step = np.zeros(k)
        step[free] = np.linalg.solve(h[np.ix_(free, free)], grad[free])
        t = 1.0
        while True:
            cand = theta + t * step
            cll = loglik(cand)
            if cll >= ll - 1e-12 or t < 1e-6:
                break
            t *= 0.5
        theta, ll = cand, cll
        if np.max(np.abs(t * step)) < 1e-10:
            break
        if np.max(np.abs(theta)) > 60.0:  # about 10,000 Elo: the optimum is at infinity
            raise ValueError("ratings diverge: a player won or lost every game against the rest;"
                             " use prior_draws > 0 or play more games")
    diff = theta[:, None] - theta[None, :]
    p = 1.0 / (1.0 + np.exp(-diff))
    info = n_games * p * (1.0 - p)
    h = -info
    h[np.diag_indices(k)] = np.sum(info, axis=1)
    return theta, h, it


def fit_elo(names: Iterable[str], wins: ArrayLike, draws: ArrayLike | None = None, anchor: str = "mean",
            prior_draws: float = 2.0, confidence: float = 0.95) -> EloFit:
    """Fit Elo ratings to a tournament.

    ``wins[i, j]``: games player ``i`` won against player ``j`` (either
    colour); ``draws[i, j]`` (symmetric): drawn games between them.  ``anchor``
    is ``"mean"`` or a player name rated 0.  Intervals are the normal
    approximation from the Fisher information at ``confidence``.
    """
    names = list(names)
    k = len(names)
    if k < 2:
        raise ValueError("an Elo fit needs at least two players")
    _check_names(names)
    _check_fit_settings(prior_draws, confidence)
    w, d = _matrices(names, wins, draws)
    n_games = w + w.T + d
    played = n_games > 0
    comp, nc = _components(n_games)
    if nc > 1:
        groups = [[names[i] for i in range(k) if comp[i] == c] for c in range(nc)]
        raise ValueError("the players do not form one connected group, so their ratings cannot be compared: "
                         + " | ".join(", ".join(g) for g in groups))
    score = w + 0.5 * d + 0.5 * prior_draws * played
    n_eff = n_games + prior_draws * played
    if anchor == "mean":
        anchor_idx = 0
    elif anchor in names:
        anchor_idx = names.index(anchor)
    else:
        raise ValueError(f"anchor {anchor!r} is neither 'mean' nor a player ({', '.join(names)})")
    theta, h, it = _ml_ratings(score, n_eff, anchor_idx)
    if anchor == "mean":
        theta = theta - theta.mean()
        cov = np.linalg.pinv(h)  # the covariance under the sum-zero constraint
    else:
        theta = theta - theta[anchor_idx]
        free = [i for i in range(k) if i != anchor_idx]
        cov = np.zeros((k, k))
        cov[np.ix_(free, free)] = np.linalg.inv(h[np.ix_(free, free)])
    ratings = theta * ELO_PER_NAT
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None)) * ELO_PER_NAT
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    return EloFit(names, ratings, se, ratings - z * se, ratings + z * se, anchor, "fisher", confidence,
                  float(prior_draws), it)


def bootstrap_elo(names: Iterable[str], wins: ArrayLike, draws: ArrayLike | None = None, anchor: str = "mean",
                  prior_draws: float = 2.0, confidence: float = 0.95, samples: int = 500, seed: int = 0) -> EloFit:
    """Like :func:`fit_elo` but with percentile intervals from a seeded parametric bootstrap.

    Each sample redraws every pair's games (same number) from the pair's
    observed win/draw/loss frequencies and refits; ``se`` is the standard
    deviation of the samples.  ``prior_draws`` must be above 0 (a resample
    in which one player sweeps the rest has no finite rating) and
    ``samples`` at least 2.
    """
    names = list(names)
    check_int("samples", samples, 2)
    _check_fit_settings(prior_draws, confidence)
    if prior_draws == 0:
        raise ValueError(BOOTSTRAP_NEEDS_PRIOR)
    w, d = _matrices(names, wins, draws)
    point = fit_elo(names, w, d, anchor=anchor, prior_draws=prior_draws, confidence=confidence)
    rng = np.random.default_rng(seed)
    k = len(names)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k) if w[i, j] + w[j, i] + d[i, j] > 0]
    draws_ = np.empty((samples, k))
    for b in range(samples):
        wb = np.zeros((k, k))
        db = np.zeros((k, k))
        for i, j in pairs:
            n = int(round(w[i, j] + w[j, i] + d[i, j]))
            probs = np.array([w[i, j], d[i, j], w[j, i]]) / max(n, 1)
            a, dr, c = rng.multinomial(n, probs / probs.sum())
            wb[i, j], wb[j, i] = a, c
            db[i, j] = db[j, i] = dr
        draws_[b] = fit_elo(names, wb, db, anchor=anchor, prior_draws=prior_draws).ratings
    alpha = (1.0 - confidence) / 2.0
    lower = np.quantile(draws_, alpha, axis=0)
    upper = np.quantile(draws_, 1.0 - alpha, axis=0)
    se = draws_.std(axis=0, ddof=1)
    return EloFit(names, point.ratings, se, lower, upper, anchor, f"bootstrap({samples}, seed={seed})",
                  confidence, float(prior_draws), point.iterations)


__all__ = ["EloFit", "fit_elo", "bootstrap_elo", "BOOTSTRAP_NEEDS_PRIOR", "expected_score", "elo_diff", "ELO_PER_NAT"]
