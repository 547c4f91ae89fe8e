"""jiu_env: the Tibetan board game Jiu (久棋) for reinforcement learning and game AI.

Quick use::

    import jiu_env
    env = jiu_env.env(render_mode="ansi")            # PettingZoo AEC, standard wrappers
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else env.action_space(agent).sample(obs["action_mask"])
        env.step(action)

The public root is small: the envs (``env``, ``raw_env``, ``JiuVsBotEnv``,
``JiuSelfPlayEnv``, ``JiuVectorEnv``), the rules (``Rules``), notation, the
bot protocol and registry (``Bot``, ``make_bot``), the game loop
(``play_game``, ``GameResult``), the one result type (``Outcome``,
``outcome_of``), records (``GameRecord``) and the kernel.
The core modules (kernel, rules, bots, game loop, records) import neither
PettingZoo nor Gymnasium; the env shells (:mod:`jiu_env.envs`) do, and the
root loads them on first use: ``import jiu_env`` stays free of both, and
``jiu_env.env``, ``raw_env``, ``JiuVsBotEnv``, ``JiuSelfPlayEnv`` and
``JiuVectorEnv`` import their shell when first touched.  The Gymnasium ids
``"jiu_env/JiuVsBot-v0"`` and ``"jiu_env/JiuSelfPlay-v0"`` are registered as
soon as Gymnasium is imported (at once if it already is).
"""

from __future__ import annotations

import sys as _sys
from typing import TYPE_CHECKING

# _numba_cache before kernel, the first module with numba code: it keys numba's on-disk cache by the package's sources
from . import _lazy, _numba_cache, kernel  # noqa: F401
from .bots import Bot, make_bot
from .game import GameResult, play_game
from .notation import action_to_str, point_to_str, str_to_action, str_to_point
from .observation import NUM_PLANES, PLANE_NAMES
from .outcome import Outcome, outcome_of
from .records import GameRecord
from .rules import PROFILES, Rules
from .state import position_state
from .warmup import warm_up  # compile the numba code once per machine (`jiu warm`)

__version__ = "0.1.0"

# The env shells, loaded on first access (PEP 562): they import PettingZoo / Gymnasium.
_LAZY: dict[str, str] = {
    "env": "jiu_env.envs.aec",
    "raw_env": "jiu_env.envs.aec",
    "JiuVsBotEnv": "jiu_env.envs.single_agent",
    "JiuSelfPlayEnv": "jiu_env.envs.single_agent",
    "JiuVectorEnv": "jiu_env.envs.vector",
}
if TYPE_CHECKING:  # what type checkers see of the lazy names (at run time they load on first access)
    from .envs.aec import env, raw_env
    from .envs.single_agent import JiuSelfPlayEnv, JiuVsBotEnv
    from .envs.vector import JiuVectorEnv

__all__ = [
    "env", "raw_env", "JiuVsBotEnv", "JiuSelfPlayEnv", "JiuVectorEnv",
    "Rules", "PROFILES", "kernel", "position_state",
    "Bot", "make_bot", "play_game", "GameResult", "Outcome", "outcome_of", "GameRecord",
    "action_to_str", "str_to_action", "point_to_str", "str_to_point",
    "NUM_PLANES", "PLANE_NAMES", "warm_up", "__version__",
]


def __getattr__(name: str) -> object:
    return _lazy.load(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


_sys.modules[__name__].__class__ = _lazy.Package  # ``import jiu_env.env`` keeps jiu_env.env the factory function
_lazy.register_gym_ids_with_gymnasium()  # now if Gymnasium is imported, else as soon as it is
