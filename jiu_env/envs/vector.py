"""Gymnasium ``VectorEnv`` over the batched numba runner :class:`jiu_env.batch.BatchRunner`.

The runner (numba only, no Gymnasium) steps ``B`` games in one call and lets a
built-in numba opponent answer inside it; :class:`JiuVectorEnv` gives it the
Gymnasium vector API (autoreset mode ``SAME_STEP``).  See
:mod:`jiu_env.batch` for the contract of a step and for seeding.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..batch import BatchRunner
from ..rules import Rules
from .common import Thawing, planes_space, reset_options

# JiuVectorEnv takes no reset options: start, learner and opponent are set in the constructor.
RESET_OPTIONS: tuple[str, ...] = ()


class JiuVectorEnv(Thawing, VectorEnv):
    """Gymnasium ``VectorEnv``: ``num_envs`` single-agent Jiu games against a built-in numba opponent.

    The learner's observation is the egocentric ``Box(0, 1, (N, N, C), float32)``
    of :mod:`jiu_env.observation`; actions are the flat ``Discrete(10 N^2 + 1)``
    of docs/rules.md §7 and must be legal (:meth:`action_masks` gives the ``(B, A)``
    mask; an illegal action raises ``ValueError``).  The reward is +1 / -1 / 0
    for the learner at the end of a game, 0 before.  Autoreset mode is
    ``SAME_STEP``: a finished game's last observation is in
    ``info["final_obs"]`` (rows where ``info["_final_obs"]``), with
    ``info["final_info"]["winner"]`` (1 white, 2 black, 3 draw, 0 truncated)
    and ``["learner"]`` (the learner's colour in that game).

    ``opponent`` is ``"random"`` or ``"greedy"``; ``learner`` is ``"white"``,
    ``"black"`` or ``"random"`` (drawn per game); ``start`` is ``"placement"``
    or ``"battle"``; ``threads`` as in :class:`BatchRunner`; ``rules`` and
    keyword options as in :func:`jiu_env.env`.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 8, rules: str | Rules | dict[str, Any] = "competitive", *,
                 opponent: str = "random", learner: str = "random", start: str = "placement",
                 threads: int | None = None, **options: Any) -> None:
        if opponent is None:
            raise ValueError("JiuVectorEnv needs a built-in opponent ('random' or 'greedy'); use BatchRunner for self-play")
        self.runner = BatchRunner(num_envs, rules, opponent=opponent, learner=learner, start=start,
                                  threads=threads, **options)
        self.rules = self.runner.rules
        self.num_envs = self.runner.num_games
        self.render_mode = None
        self.single_observation_space = planes_space(self.rules.board_size)
        self.single_action_space = spaces.Discrete(self.rules.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._masks: np.ndarray | None = None  # set by reset()

    def reset(self, *, seed: int | list[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new game in every slot.  ``seed``: an int (per-game streams derived from it) or a list of ``num_envs`` ints.

        The env knows no reset options (start, learner and opponent are set in
        the constructor): every key warns
        (:class:`~jiu_env.envs.common.UnknownResetOptionWarning`) and is ignored.
        """
        reset_options(options, RESET_OPTIONS, hint="JiuVectorEnv sets start, learner and opponent in its constructor")
        if seed is not None:
            self.runner.seed(seed)  # checked there (an int or num_envs ints) before anything changes
            if isinstance(seed, (int, np.integer)):
                super().reset(seed=int(seed))
            else:  # seeded too: a later reset() continues these streams instead of drawing fresh entropy
                super().reset(seed=int(np.random.SeedSequence([int(x) for x in seed]).generate_state(1, np.uint64)[0]
                                    % (2**63)))
        elif self._np_random is None:
            # First reset without a seed: fresh entropy, recorded for reproduction.
            # SeedSequence() draws its entropy as one int (numpy types it as any entropy a caller may pass)
            root = int(cast(int, np.random.SeedSequence().entropy) % (2**63))
            super().reset(seed=root)
            self.runner.seed(root)
        obs, masks = self.runner.reset()
        self._masks = masks
        return obs, {}

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One learner decision per game; the opponent replies inside the same call."""
        if self._masks is None:
            raise RuntimeError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.size and not np.issubdtype(acts.dtype, np.integer):  # floats, bools: a TypeError as in every env
            raise TypeError(f"actions must be {self.num_envs} integers, not an array of {acts.dtype} "
                            f"({type(actions).__name__})")
        obs, masks, rewards, terms, truncs = self.runner.step(acts)  # it checks the shape and the legality
        self._masks = masks
        info = {}
        done = terms | truncs
        if done.any():
            r = self.runner
            final = np.zeros((self.num_envs,) + r.obs_shape, dtype=np.float32)
            final[done] = r.final_obs[done]
            info = {
                "final_obs": final,
                "_final_obs": done.copy(),
                "final_info": {
                    "winner": np.where(done, r.winners, 0),
                    "_winner": done.copy(),
                    # the slot's next game may have drawn another colour
                    "learner": np.where(done, r.final_pov, 0),
                    "_learner": done.copy(),
                },
                "_final_info": done.copy(),
            }
        return obs, rewards, terms, truncs, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the current decision of every game, ``(num_envs, A)`` bool."""
        if self._masks is None:
            raise RuntimeError("call reset() before action_masks()")
        return self._masks.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        self._masks = None

    def __repr__(self) -> str:
        return f"JiuVectorEnv(num_envs={self.num_envs}, opponent={self.runner.opponent!r}, learner={self.runner.learner_mode!r})"



__all__ = ["JiuVectorEnv", "RESET_OPTIONS"]
