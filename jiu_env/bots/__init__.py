"""Built-in opponents, all following :class:`jiu_env.bots.base.Bot`.

``make_bot("alphabeta:depth=4,time=0.5", seed=1)`` builds a bot from a short
spec string: a name, then optionally ``:`` and comma-separated ``key=value``
parameters (ints, floats, ``true``/``false`` or bare words).
"""

import importlib

from .base import Bot, check_state, legal_actions

# name -> (module, class); modules are imported on first use.
REGISTRY = {
    "random": ("jiu_env.bots.random_bot", "RandomBot"),
    "greedy": ("jiu_env.bots.greedy", "GreedyBot"),
    "pattern": ("jiu_env.bots.pattern", "PatternBot"),
    "alphabeta": ("jiu_env.bots.alphabeta", "AlphaBetaBot"),
    "mcts": ("jiu_env.bots.mcts", "MCTSBot"),
    "alphazero": ("jiu_env.bots.alphazero", "AlphaZeroBot"),
}


def bot_class(name):
    """The class registered under ``name``."""
    if name not in REGISTRY:
        raise ValueError(f"unknown bot {name!r}; available: {', '.join(sorted(REGISTRY))}")
    mod, cls = REGISTRY[name]
    return getattr(importlib.import_module(mod), cls)


def _parse_value(text):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_spec(spec):
    """``"mcts:sims=2000,c=1.4"`` -> ``("mcts", {"sims": 2000, "c": 1.4})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"a bot spec is a non-empty string like 'alphabeta:depth=4', not {spec!r}")
    name, _, rest = spec.strip().partition(":")
    params = {}
    if rest.strip():
        for item in rest.split(","):
            key, eq, val = item.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"bad parameter {item!r} in bot spec {spec!r}: expected key=value")
            params[key.strip()] = _parse_value(val.strip())
    return name.strip(), params


def make_bot(spec, seed=None, **overrides):
    """Build a bot from a spec string (see module doc); unknown names/parameters raise ValueError."""
    name, params = parse_spec(spec)
    cls = bot_class(name)
    params.update(overrides)
    allowed = getattr(cls, "PARAMS", {})
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        listing = ", ".join(f"{k} ({v})" for k, v in allowed.items()) or "none"
        raise ValueError(f"unknown parameter(s) {', '.join(unknown)} for bot {name!r}; it takes: {listing}")
    return cls(seed=seed, **params)


__all__ = ["Bot", "REGISTRY", "bot_class", "make_bot", "parse_spec", "check_state", "legal_actions"]
