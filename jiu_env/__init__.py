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
(``play_game``, ``GameResult``), records (``GameRecord``) and the kernel.
The core modules (kernel, rules, bots, game loop, records) import neither
PettingZoo nor Gymnasium; the env shells do.
"""

from __future__ import annotations

from . import kernel
from .bots import Bot, make_bot
from .game import GameResult, play_game
from .notation import action_to_str, point_to_str, str_to_action, str_to_point
from .observation import NUM_PLANES, PLANE_NAMES
from .records import GameRecord
from .rules import PROFILES, Rules
from .state import position_state
from .warmup import warm_up  # compile the numba code once per machine (`jiu warm`)

# The env shells (PettingZoo AEC, single-agent and vector Gymnasium envs).  The
# modules above (kernel, rules, bots, game loop, records) import neither
# PettingZoo nor Gymnasium; ``jiu_env.env`` is both a module and the public
# factory function, so the shells are imported here, once.
from .env import env, raw_env  # noqa: E402
from .single_agent import JiuSelfPlayEnv, JiuVsBotEnv  # noqa: E402
from .vector import JiuVectorEnv  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "env", "raw_env", "JiuVsBotEnv", "JiuSelfPlayEnv", "JiuVectorEnv",
    "Rules", "PROFILES", "kernel", "position_state",
    "Bot", "make_bot", "play_game", "GameResult", "GameRecord",
    "action_to_str", "str_to_action", "point_to_str", "str_to_point",
    "NUM_PLANES", "PLANE_NAMES", "warm_up", "__version__",
]


def _register_gym_ids() -> None:
    """Register the single-agent ids with Gymnasium (a core dependency; the env modules load on ``make``)."""
    from gymnasium.envs.registration import register, registry

    for env_id, entry in (("jiu_env/JiuVsBot-v0", "jiu_env.single_agent:JiuVsBotEnv"),
                          ("jiu_env/JiuSelfPlay-v0", "jiu_env.single_agent:JiuSelfPlayEnv")):
        if env_id not in registry:
            register(id=env_id, entry_point=entry)


_register_gym_ids()
