"""jiu_env: the Tibetan board game Jiu (久棋) for reinforcement learning and game AI.

Quick use::

    import jiu_env
    env = jiu_env.env(render_mode="ansi")            # PettingZoo AEC, standard wrappers
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        action = None if terminated or truncated else env.action_space(agent).sample(obs["action_mask"])
        env.step(action)
"""

from . import kernel
from .env import env, position_state, raw_env
from .notation import action_to_str, point_to_str, str_to_action, str_to_point
from .observation import NUM_PLANES, PLANE_NAMES
from .rules import PROFILES, Rules

__version__ = "0.1.0"

__all__ = [
    "env", "raw_env", "position_state", "Rules", "PROFILES", "kernel",
    "action_to_str", "str_to_action", "point_to_str", "str_to_point",
    "NUM_PLANES", "PLANE_NAMES", "__version__",
]

# Single-agent Gymnasium envs (torch-free; SB3 helpers live in jiu_env.sb3).
from gymnasium.envs.registration import register as _register

from .single_agent import JiuSelfPlayEnv, JiuVsBotEnv

_register(id="jiu_env/JiuVsBot-v0", entry_point="jiu_env.single_agent:JiuVsBotEnv")
_register(id="jiu_env/JiuSelfPlay-v0", entry_point="jiu_env.single_agent:JiuSelfPlayEnv")
__all__ += ["JiuVsBotEnv", "JiuSelfPlayEnv"]

from .warmup import warm_up  # noqa: E402  (compile the numba code once per machine; `jiu warm`)
__all__ += ["warm_up"]
