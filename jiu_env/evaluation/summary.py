"""What a tournament's games add up to: :func:`summarise` (scores per pair, player and colour, Elo, openings,
SPRT) and the :class:`TournamentResult` that holds games and summary.

Every figure is computed from the result lines alone, so that a summary of
stored games (``games.jsonl``) is the summary of the run that played them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .config import TournamentConfig
from .schedule import schedule


@dataclass
class TournamentResult:
    """Games and summary of a finished tournament (see :func:`summarise`)."""

    config: TournamentConfig
    games: list[dict[str, Any]]
    summary: dict[str, Any]
    new_games: int = 0
    out_dir: str | None = None


# ------------------------------------------------------------------ summary
def _running_scores(config, lines):
    scores = {n: [0.0, 0] for n in config.names}
    for ln in lines:
        _add_score(scores, ln)
    return scores


def _add_score(scores, line):
    sw = line["score_white"]
    scores[line["white"]][0] += sw
    scores[line["white"]][1] += 1
    scores[line["black"]][0] += 1.0 - sw
    scores[line["black"]][1] += 1


def _wdl():
    return {"games": 0, "wins": 0, "draws": 0, "losses": 0}


def _tally(d, score):
    d["games"] += 1
    if score == 1.0:
        d["wins"] += 1
    elif score == 0.0:
        d["losses"] += 1
    else:
        d["draws"] += 1


def summarise(config: TournamentConfig, games: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate result lines: per pair and per colour W/D/L, lengths, decision times, Elo.

    Pair figures are from the pair's first player's point of view.  Draws
    include repetition draws and games stopped at the turn limit (counted
    separately as ``truncated``).
    """
    names = config.names
    idx = {n: i for i, n in enumerate(names)}
    k = len(names)
    wins = np.zeros((k, k))
    draws = np.zeros((k, k))
    pairs = {}
    for a, b in config.pairs():
        pairs[(a, b)] = {"a": a, "b": b, "total": _wdl(), "a_white": _wdl(), "a_black": _wdl(),
                         "battle_turns": 0, "decisions": 0, "truncated": 0, "forfeits": 0}
    per = {n: {"total": _wdl(), "white": _wdl(), "black": _wdl(), "time": 0.0, "moves": 0} for n in names}
    colour = {"white_wins": 0, "black_wins": 0, "draws": 0}
    for ln in games:
        a, b = ln["pair"]
        pr = pairs[(a, b)]
        sw = ln["score_white"]
        s_a = sw if ln["white"] == a else 1.0 - sw
        _tally(pr["total"], s_a)
        _tally(pr["a_white"] if ln["white"] == a else pr["a_black"], s_a)
        pr["battle_turns"] += ln["battle_turns"]
        pr["decisions"] += ln["decisions"]
        pr["truncated"] += int(ln.get("truncated", False))
        pr["forfeits"] += int(ln.get("end_reason") == "illegal_action")
        for side, name, sc in (("white", ln["white"], sw), ("black", ln["black"], 1.0 - sw)):
            _tally(per[name]["total"], sc)
            _tally(per[name][side], sc)
            per[name]["time"] += ln["time"][side]
            per[name]["moves"] += ln["moves_by"][side]
        ia, ib = idx[a], idx[b]
        if s_a == 1.0:
            wins[ia, ib] += 1
        elif s_a == 0.0:
            wins[ib, ia] += 1
        else:
            draws[ia, ib] += 1
            draws[ib, ia] += 1
        colour["white_wins" if sw == 1.0 else "black_wins" if sw == 0.0 else "draws"] += 1
    pair_list = []
    for (a, b), pr in pairs.items():
        g = pr["total"]["games"]
        pair_list.append({
            "a": a, "b": b, "games": g,
            "a_wins": pr["total"]["wins"], "draws": pr["total"]["draws"], "b_wins": pr["total"]["losses"],
            "a_score": (pr["total"]["wins"] + 0.5 * pr["total"]["draws"]) / g if g else None,
            "a_as_white": pr["a_white"], "a_as_black": pr["a_black"],
            "avg_battle_turns": pr["battle_turns"] / g if g else None,
            "avg_decisions": pr["decisions"] / g if g else None,
            "truncated": pr["truncated"], "forfeits": pr["forfeits"],
        })
    players = {}
    for n in names:
        p = per[n]
        t = p["total"]
        players[n] = {
            "spec": config.played_spec(n),
            **t,
            "score": (t["wins"] + 0.5 * t["draws"]) / t["games"] if t["games"] else None,
            "as_white": p["white"], "as_black": p["black"],
            "decisions": p["moves"],
            "avg_decision_ms": 1000.0 * p["time"] / p["moves"] if p["moves"] else None,
        }
    summary = {
        "title": config.title,
        "config": config.to_dict(),
        "players": players,
        "pairs": pair_list,
        "by_colour": colour,
        "games": len(games),
        "scheduled": config.games * len(pairs),
        "wins_matrix": wins.tolist(),
        "draws_matrix": draws.tolist(),
    }
    summary["elo"] = rate(config, wins, draws)
    if config.openings is not None:
        summary["openings"] = _openings_summary(config, games)
    if config.tc is not None:
        summary["tc"] = {"seconds": config.tc, "per": "turn", "untimed": config.untimed()}
    if config.sprt is not None:
        summary["sprt"] = sprt_summary(config, games)
    return summary


def _openings_summary(config, games):
    """The suite's source and, per opening, its moves and the games played from it by result."""
    n = int(config.rules["board_size"])
    rows = []
    for k, o in enumerate(config.openings["openings"]):
        rows.append({"index": k, "name": o["name"], "moves": " ".join(o["moves"]),
                     "start": "position" if o.get("start") else "placement",
                     "games": 0, "white_wins": 0, "draws": 0, "black_wins": 0})
    for ln in games:
        op = ln.get("opening")
        k = op.get("index") if isinstance(op, dict) else None
        if isinstance(k, int) and 0 <= k < len(rows):
            row = rows[k]
            row["games"] += 1
            sw = ln["score_white"]
            row["white_wins" if sw == 1.0 else "black_wins" if sw == 0.0 else "draws"] += 1
    return {"source": config.openings["source"], "count": len(rows), "board_size": n, "per_opening": rows}


# ------------------------------------------------------------------ SPRT
def _score_of(line, player):
    sw = float(line["score_white"])
    return sw if line["white"] == player else 1.0 - sw


class _SPRTWatch:
    """The SPRT of a two-player tournament, fed the complete colour-swapped pairs in schedule order.

    Pair ``k`` is games ``2k`` and ``2k + 1`` (same seed, colours swapped).
    Only the first pairs that are complete are counted, one by one, and the
    test stops at the first pair that decides: the decision does not depend
    on the order in which parallel workers finish games, and a resumed run
    reaches the same decision on the same games.
    """

    def __init__(self, config, tasks):
        from .sprt import SequentialSPRT

        self.test = SequentialSPRT(**config.sprt)
        self.player = config.pairs()[0][0]
        self.pairs = [(tasks[i].id, tasks[i + 1].id) for i in range(0, len(tasks) - 1, 2)]
        self.next = 0

    @property
    def decided(self):
        return self.test.decided

    def update(self, done):
        """Count the pairs completed in ``done`` (by id) that extend the counted prefix; True once decided."""
        while not self.test.decided and self.next < len(self.pairs):
            a, b = self.pairs[self.next]
            if a not in done or b not in done:
                break
            self.test.add(_score_of(done[a], self.player) + _score_of(done[b], self.player))
            self.next += 1
        return self.test.decided

    def used_ids(self):
        """The ids of the games of the counted pairs."""
        return {i for pr in self.pairs[:self.next] for i in pr}


def sprt_summary(config: TournamentConfig, games: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The SPRT of a two-player tournament with ``config.sprt`` on its result lines, as a JSON-able dict.

    The pairs are counted in schedule order up to the first one that is
    incomplete or that decides the test.  ``a`` is the player whose Elo over
    ``b`` is tested (the pair's first player).
    """
    watch = _SPRTWatch(config, schedule(config))
    watch.update({ln["id"]: ln for ln in games})
    a, b = config.pairs()[0]
    return {"a": a, "b": b, **watch.test.result.as_dict(),
            "max_pairs": len(watch.pairs)}


def rate(config: TournamentConfig, wins: Any, draws: Any) -> dict[str, Any] | None:
    """Elo fit of the tournament's win/draw matrices as a JSON-able dict (``None`` when impossible)."""
    from .elo import bootstrap_elo, fit_elo

    keep = [i for i, n in enumerate(config.names) if n not in config.unrated]
    names = [config.names[i] for i in keep]
    wins = np.asarray(wins)[np.ix_(keep, keep)]
    draws = np.asarray(draws)[np.ix_(keep, keep)]
    n_games = wins + wins.T + draws
    if not np.any(n_games):
        return None
    anchor = config.anchor_name()
    try:
        if config.intervals == "bootstrap":
            fit = bootstrap_elo(names, wins, draws, anchor=anchor, prior_draws=config.prior_draws,
                                confidence=config.confidence, samples=config.bootstrap_samples, seed=config.seed)
        else:
            fit = fit_elo(names, wins, draws, anchor=anchor, prior_draws=config.prior_draws,
                          confidence=config.confidence)
    except ValueError as e:
        return {"error": str(e)}
    return fit.as_dict()


def scores_text(scores: dict[str, Any], width: int = 70) -> str:
    """A compact running score line: ``ab2 7.5/10  random 1/10 ...`` (best first)."""
    parts = []
    for n, (pts, g) in sorted(scores.items(), key=lambda kv: (-(kv[1][0] / kv[1][1]) if kv[1][1] else 0.0, kv[0])):
        pts_s = f"{pts:g}"
        parts.append(f"{n} {pts_s}/{g}")
    text = "  ".join(parts)
    return text if len(text) <= width else text[:width - 1] + "…"


def eta_text(seconds: float | None) -> str:
    """Seconds left as ``H:MM:SS`` (``M:SS`` under an hour) for the progress line; ``"?"`` while unknown."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    seconds = int(seconds)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


__all__ = ["TournamentResult", "summarise", "rate", "sprt_summary", "scores_text", "eta_text"]
