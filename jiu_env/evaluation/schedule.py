"""The schedule of a tournament: which games are played, by whom with which colour, from which seed and opening.

A tournament plays ``games`` games for every pair of players that meet
(:meth:`TournamentConfig.pairs`: round robin, or gauntlet).  Colours
alternate inside a pair: game ``2k`` has the pair's first player as White and
game ``2k + 1`` swaps colours with the same game seed, so that both players
get the same openings and bot seeds from both sides.  Every game's seed is
derived from the tournament seed, the pair's names and the game pair's number
(adding a player does not change the other pairs' games), and with an opening
suite game pair ``k`` starts from opening ``k`` (:meth:`TournamentConfig.opening_of`).
The schedule is deterministic: the same config gives the same games whatever
the number of workers or machines.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from .config import TournamentConfig


@dataclass
class GameTask:
    """One scheduled game."""

    id: str
    pair: tuple[str, str]
    game: int
    white: str
    black: str
    white_spec: str
    black_spec: str
    seed: int
    white_seed: int
    black_seed: int
    rules: dict[str, Any]
    random_opening: int
    white_version: str = ""
    black_version: str = ""
    opening: dict[str, Any] | None = None  # {"index", "name", "moves"[, "start"]} of an opening suite

    def fingerprint(self) -> str:
        """Hash of everything that decides the game: specs, player code versions, rules, seeds, opening."""
        parts = [self.white_spec, self.black_spec, self.white_version, self.black_version, self.rules,
                 self.seed, self.white_seed, self.black_seed, self.random_opening]
        if self.opening is not None:  # (games without a suite keep the fingerprints they always had)
            parts.append({"moves": self.opening["moves"], "start": self.opening.get("start")})
        key = json.dumps(parts, sort_keys=True)
        return hashlib.sha1(key.encode()).hexdigest()[:16]


def _crc(text):
    return zlib.crc32(text.encode("utf-8"))


def _seed_of(*parts):
    return int(np.random.SeedSequence([int(x) for x in parts]).generate_state(1, np.uint32)[0])


def schedule(config: TournamentConfig, versions: dict[str, str] | None = None) -> list[GameTask]:
    """The list of :class:`GameTask` of a tournament (deterministic).

    ``versions`` maps a spec to its player's code version (see
    :func:`jiu_env.players.player_version`); stored games are only
    reused for the same versions.  The specs are the players' specs under
    the time control (:meth:`TournamentConfig.played_spec`).
    """
    versions = versions or {}
    tasks = []
    for a, b in config.pairs():
        pair_key = _crc(a + "\x00" + b)
        for g in range(config.games):
            seed = _seed_of(config.seed, pair_key, g // 2)
            white, black = (a, b) if g % 2 == 0 else (b, a)
            white_spec, black_spec = config.played_spec(white), config.played_spec(black)
            tasks.append(GameTask(
                id=f"{a}|{b}|{g}", pair=(a, b), game=g, white=white, black=black,
                white_spec=white_spec, black_spec=black_spec, seed=seed,
                white_seed=_seed_of(seed, _crc(white)), black_seed=_seed_of(seed, _crc(black)),
                rules=config.rules, random_opening=config.random_opening,
                white_version=versions.get(white_spec, ""),
                black_version=versions.get(black_spec, ""),
                opening=config.opening_of(g),
            ))
    if len({t.id for t in tasks}) != len(tasks):  # each game is played and counted once (a pair listed twice)
        raise ValueError(f"the schedule holds a pair twice: {config.pairs()}")
    return tasks


__all__ = ["GameTask", "schedule"]
