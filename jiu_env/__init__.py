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
PettingZoo nor Gymnasium; the env shells (:mod:`jiu_env.envs`) do, and the
root loads them on first use: ``import jiu_env`` stays free of both, and
``jiu_env.env``, ``raw_env``, ``JiuVsBotEnv``, ``JiuSelfPlayEnv`` and
``JiuVectorEnv`` import their shell when first touched.  The Gymnasium ids
``"jiu_env/JiuVsBot-v0"`` and ``"jiu_env/JiuSelfPlay-v0"`` are registered as
soon as Gymnasium is imported (at once if it already is).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
from typing import Any

from . import kernel
from .bots import Bot, make_bot
from .game import GameResult, play_game
from .notation import action_to_str, point_to_str, str_to_action, str_to_point
from .observation import NUM_PLANES, PLANE_NAMES
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

__all__ = [
    "env", "raw_env", "JiuVsBotEnv", "JiuSelfPlayEnv", "JiuVectorEnv",
    "Rules", "PROFILES", "kernel", "position_state",
    "Bot", "make_bot", "play_game", "GameResult", "GameRecord",
    "action_to_str", "str_to_action", "point_to_str", "str_to_point",
    "NUM_PLANES", "PLANE_NAMES", "warm_up", "__version__",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(types.ModuleType):
    """The package's module type: ``jiu_env.env`` stays the factory function.

    ``jiu_env/env.py`` (the AEC env's former module, kept so that ``from
    jiu_env.env import raw_env`` works) would otherwise replace the function
    with itself when it is imported: the import system sets every loaded
    submodule as an attribute of its package.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "env" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


# ------------------------------------------------------------ Gymnasium ids
_GYM_IDS: tuple[tuple[str, str], ...] = (
    ("jiu_env/JiuVsBot-v0", "jiu_env.envs.single_agent:JiuVsBotEnv"),
    ("jiu_env/JiuSelfPlay-v0", "jiu_env.envs.single_agent:JiuSelfPlayEnv"),
)


def _register_gym_ids() -> None:
    """Register the single-agent ids with Gymnasium (the env modules load on ``gymnasium.make``)."""
    from gymnasium.envs.registration import register, registry

    for env_id, entry in _GYM_IDS:
        if env_id not in registry:
            register(id=env_id, entry_point=entry)


class _RegisterAfterGymnasium(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """One-shot import hook: registers the ids right after Gymnasium's first import.

    Gymnasium 1.x has no plugin entry points, so a package registers its ids
    by importing Gymnasium; this hook defers that to whoever imports
    Gymnasium first (``import jiu_env`` itself never does).  It finds
    ``gymnasium`` through the other finders, runs its own loader, then
    registers; it leaves ``sys.meta_path`` and the module's loader as they were.
    """

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "gymnasium":
            return None
        self.uninstall()
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        self._loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__.loader = module.__loader__ = self._loader
        self._loader.exec_module(module)
        try:
            _register_gym_ids()
        except Exception as e:  # never fail gymnasium's import over it
            warnings.warn(f"jiu_env could not register its Gymnasium ids: {e!r}", RuntimeWarning, stacklevel=2)

    def uninstall(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)


if "gymnasium" in sys.modules:
    _register_gym_ids()
elif not any(isinstance(f, _RegisterAfterGymnasium) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterAfterGymnasium())
