"""Composite players built from other players: a handicapped player and a per-phase player.

Both are :class:`~jiu_env.bots.base.Bot` subclasses; their inner players are
built by the one player registry (:func:`jiu_env.players.make_player`), so an
inner spec may be anything a spec can name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import vocab as V
from ..players import make_player, player_version, source_hash
from .base import Bot, check_param, legal_actions


def child_seed(seed: int | None, k: int) -> int | None:
    """Seed ``k`` derived from a composite player's seed (None stays None: fresh entropy)."""
    return None if seed is None else int(np.random.SeedSequence([seed, k]).generate_state(1)[0])


class MixPlayer(Bot):
    """A handicapped player (``mix:P:SPEC``): SPEC's choice, but a uniformly random legal
    action instead with probability P at every decision.

    ``mix:0.5:greedy`` lies between random and greedy in strength; a few such
    rungs make a ladder whose neighbours score between 20% and 80% against
    each other, which an Elo fit can measure (a 100% score cannot).
    """

    name: str = "mix"
    PARAMS: dict[str, str] = {"p": "probability of a random action at each decision",
                              "spec": "the player being handicapped"}

    def __init__(self, p: float, spec: Any, seed: int | None = None) -> None:
        # a number in 0..1: float() took True and " 1 " as 1.0
        self.p = float(check_param("mix", "p", p, 0.0, 1.0))
        self.spec = spec
        self.inner = make_player(spec, seed=seed)
        super().__init__(seed=seed)

    def restart(self, seed: int | None = None) -> None:
        super().restart(seed)
        # the inner player gets its own stream, derived from this one's seed
        self.inner.restart(child_seed(self.seed, 1))

    def version_key(self) -> str:
        return f"{player_version(self.inner)}+{source_hash(type(self))}"

    def _choose(self, state):
        if self.rng.random() < self.p:
            acts = legal_actions(state)
            return acts[self.rng.integers(acts.size)]
        return self.inner.step(state)


class PhasePlayer(Bot):
    """One player for the placement phase and another for the battle (``phases:PLACE+BATTLE``).

    ``phases:random+sb3:model.zip`` lets a model trained on battles only
    (``start="battle"``) play whole games: its stones are placed at random, as
    in its training, and it fights the battle itself.
    """

    name: str = "phases"
    PARAMS: dict[str, str] = {"placement": "the player of the placement phase",
                              "battle": "the player of the battle phase"}

    def __init__(self, placement: Any, battle: Any, seed: int | None = None) -> None:
        self.placement_spec = placement
        self.battle_spec = battle
        self.placement = make_player(placement, seed=seed)
        self.battle = make_player(battle, seed=seed)
        super().__init__(seed=seed)

    def restart(self, seed: int | None = None) -> None:
        super().restart(seed)
        self.last_info: dict[str, Any] = {}
        for i, inner in enumerate((self.placement, self.battle)):
            inner.restart(child_seed(self.seed, 2 + i))

    def version_key(self) -> str:
        return f"{player_version(self.placement)}+{player_version(self.battle)}+{source_hash(type(self))}"

    def _choose(self, state):
        inner = self.placement if state[V.H_PHASE] == V.PH_PLACEMENT else self.battle
        action = inner.step(state)
        # what the player of this decision reports (e.g. alphabeta's value and root scores, which make
        # ``phases:...`` a teacher of jiu train with each phase's own engine)
        self.last_info = dict(getattr(inner, "last_info", None) or {})
        return action


__all__ = ["MixPlayer", "PhasePlayer", "child_seed"]
