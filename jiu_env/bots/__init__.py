"""Built-in opponents, all following :class:`jiu_env.bots.base.Bot`.

``make_bot("alphabeta:depth=4,time=0.5", seed=1)`` builds a bot from a short
spec string: a name, then optionally ``:`` and comma-separated ``key=value``
parameters (ints, floats, ``true``/``false`` or bare words).  ``make_bot`` is
the one player registry (:func:`jiu_env.players.make_player`): it also takes
``sb3:PATH``, ``alphazero:PATH``, ``mix:...``, ``phases:...``, ``module:Class``
and objects.  Adding a built-in bot is one module plus one line in
:data:`REGISTRY`.  The registry (``REGISTRY``, ``bot_class``) is defined in
:mod:`jiu_env.players` and the spec syntax (``parse_spec``, ``parse_value``)
in :mod:`jiu_env.specs`, so that neither imports a bot; they are named here
too.
"""

from __future__ import annotations

from typing import Any

from ..players import REGISTRY, bot_class, make_player
from ..specs import parse_spec, parse_value
from .base import Bot, check_state, legal_actions


def make_bot(spec: Any, seed: int | None = None, **overrides: Any) -> Any:
    """Build a player from a spec string or object (see :func:`jiu_env.players.make_player`)."""
    return make_player(spec, seed=seed, **overrides)


__all__ = ["Bot", "REGISTRY", "bot_class", "make_bot", "parse_spec", "parse_value", "check_state", "legal_actions"]
