"""Sequential probability ratio test (SPRT) on colour-swapped game pairs.

The test decides between two hypotheses about the Elo difference of a
player A over a player B (logistic Elo, expected score
``1 / (1 + 10^(-elo/400))``)::

    H0: elo = elo0        H1: elo = elo1        (elo0 < elo1)

Games are counted in pairs: the two games of a pair have the same opening and
seeds with colours swapped, and the pair's score for A is 0, ½, 1, 1½ or 2.
The counts of these five pair scores (the *pentanomial*) are the data; a pair
model accounts for the correlation between the two games of a pair, which a
per-game (trinomial) model ignores.

The log-likelihood ratio is the generalised one of fishtest (the Stockfish
testing framework, after Michel Van den Bergh): for each hypothesis the
pentanomial distribution is the maximum-likelihood one among the
distributions whose expected per-game score is that hypothesis' expected
score, and ``LLR = sum_i n_i log(p1_i / p0_i)``.  That constrained maximum
has the form ``p_i = q_i / (1 + x (a_i - s))`` (``q`` the observed
frequencies, ``a_i = i/4`` the per-game score of pair outcome ``i``, ``s`` the
expected score), with ``x`` the root of ``sum_i q_i (a_i - s) / (1 + x (a_i - s)) = 0``.
As in fishtest, a count of zero is replaced by ``1e-3`` so that every
outcome has a positive probability.

The test stops at the first pair after which the LLR is at or below
``log(beta / (1 - alpha))`` (H0 accepted) or at or above
``log((1 - beta) / alpha)`` (H1 accepted); ``alpha`` and ``beta`` are the
error rates of wrongly accepting H1 and H0.

Training code can gate a new network with it::

    from jiu_env.evaluation.sprt import SequentialSPRT
    test = SequentialSPRT(elo0=0, elo1=20)
    for pair_score in ...:          # 0, 0.5, 1, 1.5 or 2 for the new network per pair
        if test.add(pair_score).decided:
            break
    accept = test.result.decision == "H1 accepted"
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from ..validate import check_real

#: the pair scores counted by a pentanomial, in order (points of player A in two games)
PAIR_SCORES: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0)
#: what replaces a zero count in the likelihood (as fishtest does)
EPSILON: float = 1e-3
H0, H1, CONTINUE = "H0 accepted", "H1 accepted", "continue"
DECISIONS: tuple[str, ...] = (H1, H0, CONTINUE)


#: The largest |elo0| and |elo1| of a test: beyond it the expected score is 1 (or 0) as near as makes no difference.
MAX_ELO = 2000.0


def expected_score(elo: float) -> float:
    """The expected per-game score of a player ``elo`` logistic Elo above its opponent."""
    return float(1.0 / (1.0 + 10.0 ** (-float(elo) / 400.0)))


def bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """The LLR bounds ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))`` (Wald)."""
    check_error_rates(alpha, beta)
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def check_error_rates(alpha: Any, beta: Any) -> None:
    """ValueError / TypeError unless ``alpha`` and ``beta`` are in (0, 1) with ``alpha + beta < 1``."""
    for name, v in (("alpha", alpha), ("beta", beta)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"SPRT {name} must be a number, not {type(v).__name__} {v!r}")
        if not (math.isfinite(v) and 0.0 < v < 1.0):
            raise ValueError(f"SPRT {name} must be strictly between 0 and 1, not {v!r}")
    if alpha + beta >= 1.0:
        raise ValueError(f"SPRT alpha + beta must be below 1 (alpha {alpha!r}, beta {beta!r}): "
                         "otherwise the bounds do not enclose 0")


def check_settings(elo0: Any, elo1: Any, alpha: Any = 0.05, beta: Any = 0.05) -> dict[str, float]:
    """The SPRT settings as plain floats ``{elo0, elo1, alpha, beta}``; a clear error if they are not valid."""
    for name, v in (("elo0", elo0), ("elo1", elo1)):
        check_real(f"SPRT {name}", v, " (Elo)")
        if abs(float(v)) > MAX_ELO:  # the expected score is 1 (or 0) to the float's precision: the test would fail later
            raise ValueError(f"SPRT {name} must be within +-{MAX_ELO:g} Elo (an expected score of "
                             f"{expected_score(MAX_ELO):.6f}), not {v!r}")
    if not elo0 < elo1:
        raise ValueError(f"SPRT needs elo0 < elo1 (H0: elo = elo0 against H1: elo = elo1), got {elo0!r} and {elo1!r}")
    check_error_rates(alpha, beta)
    return {"elo0": float(elo0), "elo1": float(elo1), "alpha": float(alpha), "beta": float(beta)}


def _counts(pentanomial: Sequence[float] | np.ndarray) -> np.ndarray:
    n = np.asarray(pentanomial, dtype=float)
    if n.shape != (5,):
        raise ValueError(f"a pentanomial is 5 counts (pair scores 0, 0.5, 1, 1.5, 2), not {pentanomial!r}")
    if not np.all(np.isfinite(n)) or np.any(n < 0):
        raise ValueError(f"pentanomial counts must be finite and >= 0, not {pentanomial!r}")
    return n


def constrained_mle(frequencies: Sequence[float], score: float) -> np.ndarray:
    """The pentanomial distribution nearest (in likelihood) to ``frequencies`` whose expected per-game score is ``score``.

    ``frequencies`` are positive and sum to 1.  The maximiser of
    ``sum q_i log p_i`` under ``sum p_i = 1`` and ``sum p_i a_i = score`` is
    ``p_i = q_i / (1 + x d_i)`` with ``d_i = a_i - score``, where ``x`` is the
    root of the decreasing function ``sum q_i d_i / (1 + x d_i)`` on the
    interval where every ``1 + x d_i`` is positive.
    """
    from scipy.optimize import brentq

    q = np.asarray(frequencies, dtype=float)
    d = np.arange(5) / 4.0 - float(score)
    if not 0.0 < score < 1.0:
        raise ValueError(f"the expected score must be strictly between 0 and 1, not {score!r}")
    lo, hi = -1.0 / d.max(), -1.0 / d.min()  # the poles: 1 + x d_i = 0 for the largest and smallest d_i

    def f(x: float) -> float:
        return float(np.sum(q * d / (1.0 + x * d)))

    # f falls from +inf at lo to -inf at hi: step in from both poles until the signs differ
    for k in range(3, 17):
        eps = (hi - lo) * 10.0 ** (-k)
        a, b = lo + eps, hi - eps
        if f(a) > 0 > f(b):
            break
    else:  # pragma: no cover - only with frequencies of extreme dynamic range
        raise ArithmeticError(f"no root of the constrained likelihood for frequencies {q!r} and score {score!r}")
    x = brentq(f, a, b, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    p: np.ndarray = q / (1.0 + x * d)
    normalised: np.ndarray = p / p.sum()
    return normalised


def llr(pentanomial: Sequence[float] | np.ndarray, elo0: float, elo1: float) -> float:
    """The generalised log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for pentanomial counts.

    ``pentanomial``: the numbers of pairs in which player A scored 0, ½, 1, 1½
    and 2 points.  Zero counts are replaced by :data:`EPSILON`.  With no
    pairs at all the LLR is 0.
    """
    n = _counts(pentanomial)
    if n.sum() == 0:
        return 0.0
    n = np.where(n > 0, n, EPSILON)
    total = n.sum()
    q = n / total
    p0 = constrained_mle(q, expected_score(elo0))
    p1 = constrained_mle(q, expected_score(elo1))
    return float(np.sum(n * np.log(p1 / p0)))


@dataclass(frozen=True)
class SPRTResult:
    """The state of a test: its LLR, bounds and decision after ``pairs`` pairs.

    ``decision`` is ``"H1 accepted"``, ``"H0 accepted"`` or ``"continue"``.
    """

    llr: float
    lower: float
    upper: float
    decision: str
    pentanomial: tuple[float, ...]  # whole counts as ints, fractional counts (sprt() accepts them) as floats
    pairs: int
    elo0: float
    elo1: float
    alpha: float
    beta: float

    @property
    def decided(self) -> bool:
        return self.decision != CONTINUE

    def as_dict(self) -> dict[str, Any]:
        """A JSON-able dict (``pentanomial`` as a list of counts for pair scores 0, ½, 1, 1½, 2)."""
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
                "llr": self.llr, "lower": self.lower, "upper": self.upper, "decision": self.decision,
                "pairs": self.pairs, "pentanomial": list(self.pentanomial)}


def decide(value: float, lower: float, upper: float) -> str:
    """The decision of an LLR ``value`` against the bounds."""
    if value >= upper:
        return H1
    if value <= lower:
        return H0
    return CONTINUE


def sprt(pentanomial: Sequence[float], elo0: float, elo1: float, alpha: float = 0.05,
         beta: float = 0.05) -> SPRTResult:
    """The SPRT of H0 ``elo = elo0`` against H1 ``elo = elo1`` on pentanomial counts (all pairs at once).

    For a test that stops at the first pair that decides, feed the pairs one
    by one to :class:`SequentialSPRT` (or use :func:`sequential_sprt`).
    """
    s = check_settings(elo0, elo1, alpha, beta)
    n = _counts(pentanomial)
    lower, upper = bounds(alpha, beta)
    value = llr(n, elo0, elo1)
    counts = tuple(int(c) if float(c).is_integer() else float(c) for c in n)
    return SPRTResult(llr=value, lower=lower, upper=upper, decision=decide(value, lower, upper),
                      pentanomial=counts, pairs=int(round(float(n.sum()))), **s)


def pair_index(pair_score: float) -> int:
    """The pentanomial index (0-4) of a pair score 0, 0.5, 1, 1.5 or 2."""
    try:
        i = float(pair_score) * 2.0
    except (TypeError, ValueError):
        raise ValueError(f"a pair score is 0, 0.5, 1, 1.5 or 2, not {pair_score!r}") from None
    if not (i.is_integer() and 0 <= i <= 4):
        raise ValueError(f"a pair score is 0, 0.5, 1, 1.5 or 2, not {pair_score!r}")
    return int(i)


def pentanomial(pair_scores: Iterable[float | tuple[float, float]]) -> list[int]:
    """Pentanomial counts from pair scores.

    Each item is a pair's total score for player A (0, 0.5, 1, 1.5 or 2) or
    the two game scores ``(s1, s2)`` (each 0, 0.5 or 1) of the pair.
    """
    counts = [0] * 5
    for item in pair_scores:
        if isinstance(item, (tuple, list)):
            if len(item) != 2:
                raise ValueError(f"a pair is two game scores, not {item!r}")
            for g in item:
                if isinstance(g, bool) or not isinstance(g, (int, float, np.integer, np.floating)) \
                        or float(g) not in (0.0, 0.5, 1.0):
                    raise ValueError(f"a game score is 0, 0.5 or 1, not {g!r} (in the pair {item!r})")
            item = float(item[0]) + float(item[1])
        counts[pair_index(item)] += 1
    return counts


def pair_scores_from_games(games: Iterable[dict[str, Any]], player: str) -> list[float]:
    """``player``'s score in each complete colour-swapped pair of tournament result lines, by opponent (sorted by
    name), then in game order.

    ``games``: result lines as in a ``games.jsonl`` of ``jiu eval`` (or any
    dicts with ``white``, ``black``, ``score_white`` and the game number
    ``game``): games ``2k`` and ``2k + 1`` of a pair of players form pair
    ``k``.  Pairs with a missing game are left out.
    """
    halves: dict[tuple[str, int], dict[int, float]] = {}
    for ln in games:
        if player not in (ln["white"], ln["black"]):
            continue
        opponent = ln["black"] if ln["white"] == player else ln["white"]
        sw = float(ln["score_white"])
        score = sw if ln["white"] == player else 1.0 - sw
        g = int(ln["game"])
        halves.setdefault((opponent, g // 2), {})[g % 2] = score
    return [h[0] + h[1] for _, h in sorted(halves.items()) if len(h) == 2]


def pentanomial_from_games(games: Iterable[dict[str, Any]], player: str) -> list[int]:
    """Pentanomial counts of ``player`` over the complete pairs of result lines (see :func:`pair_scores_from_games`)."""
    return pentanomial(pair_scores_from_games(games, player))


class SequentialSPRT:
    """A test fed one pair at a time; it keeps the first decision it reaches.

    :meth:`add` returns the current :class:`SPRTResult`.  Once H0 or H1 is
    accepted, further pairs are ignored (the decision and its counts stay
    those of the pair that decided).
    """

    def __init__(self, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05) -> None:
        self.settings = check_settings(elo0, elo1, alpha, beta)
        self.counts = [0] * 5
        self.result = sprt(self.counts, **self.settings)

    @property
    def decided(self) -> bool:
        return self.result.decided

    def add(self, pair_score: float | tuple[float, float]) -> SPRTResult:
        """Count one more pair (its total score for A, or its two game scores); checked even once decided."""
        index = pentanomial([pair_score]).index(1)
        if self.result.decided:
            return self.result
        counts = list(self.counts)
        counts[index] += 1
        self.counts = counts
        self.result = sprt(counts, **self.settings)
        return self.result


def sequential_sprt(pair_scores: Iterable[float | tuple[float, float]], elo0: float, elo1: float,
                    alpha: float = 0.05, beta: float = 0.05) -> SPRTResult:
    """The SPRT on pairs in order, stopped at the first pair that decides (or after the last pair)."""
    test = SequentialSPRT(elo0, elo1, alpha, beta)
    for ps in pair_scores:
        if test.add(ps).decided:
            break
    return test.result


__all__ = [
    "PAIR_SCORES", "EPSILON", "MAX_ELO", "H0", "H1", "CONTINUE", "DECISIONS", "SPRTResult", "SequentialSPRT", "bounds", "check_settings",
    "check_error_rates", "constrained_mle", "decide", "expected_score", "llr", "pair_scores_from_games", "pentanomial",
    "pentanomial_from_games", "sequential_sprt", "sprt",
]
