"""Evaluation harness: tournaments between any players, Elo ratings and reports.

Quick use::

    from jiu_env.evaluation import TournamentConfig, run_tournament
    cfg = TournamentConfig(players=["random", "greedy"], games=20, seed=1)
    result = run_tournament(cfg, out_dir="results", workers=2)
    print(result.summary["elo"])

The command line ``jiu eval`` wraps the same functions; see ``docs/evaluation.md``.
"""

from .elo import EloFit, bootstrap_elo, elo_diff, expected_score, fit_elo
from ..players import PLAYER_KINDS, make_player, register_player_kind
from .report import markdown_report, pairs_table, ratings_table, write_reports
from .tournament import (
    GameTask, Player, TournamentConfig, TournamentResult, load_config, run_game, run_tournament, schedule, summarise,
)

__all__ = [
    "EloFit", "fit_elo", "bootstrap_elo", "elo_diff", "expected_score",
    "PLAYER_KINDS", "make_player", "register_player_kind",
    "markdown_report", "pairs_table", "ratings_table", "write_reports",
    "GameTask", "Player", "TournamentConfig", "TournamentResult", "load_config", "run_game", "run_tournament",
    "schedule", "summarise",
]
