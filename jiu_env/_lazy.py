"""The root package's machinery: shells loaded on first use, and the Gymnasium ids registered without importing Gymnasium.

Kept out of ``jiu_env/__init__.py`` so that the root namespace holds only the
public names.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
from typing import Any

# The single-agent envs' Gymnasium ids and entry points.
GYM_IDS: tuple[tuple[str, str], ...] = (
    ("jiu_env/JiuVsBot-v0", "jiu_env.envs.single_agent:JiuVsBotEnv"),
    ("jiu_env/JiuSelfPlay-v0", "jiu_env.envs.single_agent:JiuSelfPlayEnv"),
)


def load(package: dict[str, Any], lazy: dict[str, str], name: str) -> Any:
    """The lazy attribute ``name`` of a package (its globals ``package``): import its module once, cache it."""
    module = lazy.get(name)
    if module is None:
        raise AttributeError(f"module {package['__name__']!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    package[name] = value
    return value


class Package(types.ModuleType):
    """The root package's module type: ``jiu_env.env`` stays the factory function.

    ``jiu_env/env.py`` (the AEC env's former module, kept so that ``from
    jiu_env.env import raw_env`` works) would otherwise replace the function
    with itself when it is imported: the import system sets every loaded
    submodule as an attribute of its package.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "env" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        """Pickle the package by name, as pickle-by-reference does for plain modules.

        cloudpickle looks its module reducer up by the exact type
        ``types.ModuleType``; without this a closure over ``jiu_env`` (RLlib's
        ``register_env`` factory, a ``@ray.remote`` function, a spawn-started
        ``SubprocVecEnv`` worker) failed with "cannot pickle 'Package' object".
        Unpickling imports the package, which gives back the same module.
        """
        return importlib.import_module, (self.__name__,)


def register_gym_ids() -> None:
    """Register the single-agent ids with Gymnasium (the env modules load on ``gymnasium.make``)."""
    from gymnasium.envs.registration import register, registry

    for env_id, entry in GYM_IDS:
        if env_id not in registry:
            register(id=env_id, entry_point=entry)


class RegisterAfterGymnasium(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """One-shot import hook: registers the ids right after Gymnasium's first import.

    Gymnasium 1.x has no plugin entry points, so a package registers its ids
    by importing Gymnasium; this hook leaves that to whoever imports
    Gymnasium first (``import jiu_env`` never does).  It finds ``gymnasium``
    through the other finders, runs its own loader, then registers; it leaves
    ``sys.meta_path`` and the module's loader as they were.
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
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        try:
            register_gym_ids()
        except Exception as e:  # never fail Gymnasium's import over it
            warnings.warn(f"jiu_env could not register its Gymnasium ids: {e!r}", RuntimeWarning, stacklevel=2)

    def uninstall(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)


def register_gym_ids_with_gymnasium() -> None:
    """Register the ids now if Gymnasium is imported, else as soon as it is."""
    if "gymnasium" in sys.modules:
        register_gym_ids()
    elif not any(isinstance(f, RegisterAfterGymnasium) for f in sys.meta_path):
        sys.meta_path.insert(0, RegisterAfterGymnasium())
