"""The seeds of a data run's games: one function for engine data and self-play alike."""

from __future__ import annotations

from typing import Any

import numpy as np


def game_seed(config: Any, game: int) -> int:
    """The seed of game number ``game`` of a run (its ``config.seed``; independent of chunking and of the process
    that plays it)."""
    return int(np.random.SeedSequence([config.seed, game]).generate_state(1, np.uint64)[0] >> np.uint64(1))


__all__ = ["game_seed"]
