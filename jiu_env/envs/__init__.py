"""The env shells over the kernel.

- :mod:`jiu_env.envs.aec`: the PettingZoo AEC env (:func:`env`, :class:`raw_env`);
- :mod:`jiu_env.envs.single_agent`: Gymnasium single-agent envs
  (:class:`JiuVsBotEnv`, :class:`JiuSelfPlayEnv`);
- :mod:`jiu_env.envs.vector`: the Gymnasium ``VectorEnv`` :class:`JiuVectorEnv`
  over the batched numba runner :class:`jiu_env.batch.BatchRunner`;
- :mod:`jiu_env.envs.common`: what they share (agents, the action check,
  the reset-option rule, spaces, the render / close path, results).

Importing this package imports no shell: each name below loads its module
(and PettingZoo or Gymnasium) on first access.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "env": "aec", "raw_env": "aec",
    "JiuVsBotEnv": "single_agent", "JiuSelfPlayEnv": "single_agent",
    "JiuVectorEnv": "vector",
    "UnknownResetOptionWarning": "common",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
