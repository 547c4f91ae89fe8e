"""Built-in opponents, all following :class:`jiu_env.bots.base.Bot`.

``make_bot("alphabeta:depth=4,time=0.5", seed=1)`` builds a bot from a short
spec string: a name, then optionally ``:`` and comma-separated ``key=value``
parameters (ints, floats, ``true``/``false`` or bare words).  ``make_bot`` is
the one player registry (:func:`jiu_env.players.make_player`): it also takes
``sb3:PATH``, ``alphazero:PATH``, ``mix:...``, ``phases:...``, ``module:Class``
and objects.  Adding a built-in bot is one module plus one line in
:data:`REGISTRY`.
"""

from __future__ import annotations

from typing import Any

import importlib

from ..names import did_you_mean
from .base import Bot, check_state, legal_actions

# name -> (module, class); modules are imported on first use.
REGISTRY: dict[str, tuple[str, str]] = {
    "random": ("jiu_env.bots.random_bot", "RandomBot"),
    "greedy": ("jiu_env.bots.greedy", "GreedyBot"),
    "pattern": ("jiu_env.bots.pattern", "PatternBot"),
    "alphabeta": ("jiu_env.bots.alphabeta", "AlphaBetaBot"),
    "mcts": ("jiu_env.bots.mcts", "MCTSBot"),
    "alphazero": ("jiu_env.bots.alphazero", "AlphaZeroBot"),
    "policy": ("jiu_env.bots.policy", "PolicyBot"),
}


def bot_class(name: str) -> type:
    """The class registered under ``name``."""
    if name not in REGISTRY:
        raise ValueError(f"unknown bot {name!r}{did_you_mean(name, REGISTRY)}; available: {', '.join(sorted(REGISTRY))}")
    mod, cls = REGISTRY[name]
    return getattr(importlib.import_module(mod), cls)


def parse_value(text: str) -> Any:
    """A spec parameter value: ``true``/``false``, an int, a float, or the text itself."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_spec(spec: str) -> tuple[str, dict]:
    """``"mcts:sims=2000,c=1.4"`` -> ``("mcts", {"sims": 2000, "c": 1.4})``; a parameter given twice raises ValueError."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a bot spec is a non-empty string like 'alphabeta:depth=4', not {spec!r}")
    name, _, rest = spec.strip().partition(":")
    params = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, val = item.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"bad parameter {item!r} in bot spec {spec!r}: expected key=value")
            if key.strip() in params:
                raise ValueError(f"parameter {key.strip()!r} is given twice in bot spec {spec!r}: give it once")
            params[key.strip()] = parse_value(val.strip())
    return name.strip(), params


def make_bot(spec: Any, seed: int | None = None, **overrides: Any) -> Any:
    """Build a player from a spec string or object (see :func:`jiu_env.players.make_player`)."""
    from ..players import make_player

    return make_player(spec, seed=seed, **overrides)


__all__ = ["Bot", "REGISTRY", "bot_class", "make_bot", "parse_spec", "parse_value", "check_state", "legal_actions"]
