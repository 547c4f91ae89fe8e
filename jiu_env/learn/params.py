"""The range checks of the learning configs' fields, written once for the data, self-play, training and PPO configs.

Every config of :mod:`jiu_env.learn` checks its fields when it is made, so
that a wrong value stops a run before its first game or step and names the
field; a run resumed from its stored config goes through the same checks.
The messages have one shape everywhere: ``games must be an int in
1..10000000, not 0``; ``lr must be a number > 0 and <= 1.0, not nan``.
The integers are checked by the library's one integer check
(:func:`jiu_env.validate.check_int`, which the evaluation settings, the envs
and the integrations use too).

What is not a number is a TypeError, a number out of range a ValueError.
``bool`` is refused where an int or a number is asked for (``True`` is an
``int`` to Python, never a count or a rate to a user), and so are ``nan`` and
the infinities.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from ..validate import check_int as check_int


def check_number(name: str, value: Any, lo: float, hi: float, lo_open: bool = False) -> float:
    """``value`` as a float if it is a finite number in ``lo..hi`` (``lo_open``: above ``lo``); TypeError or
    ValueError naming ``name`` otherwise."""
    rng = f"> {lo} and <= {hi}" if lo_open else f"in {lo}..{hi}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):  # what JSON writes back as it was
        raise TypeError(f"{name} must be a number {rng}, not {type(value).__name__} {value!r}")
    if not (math.isfinite(value) and (value > lo if lo_open else value >= lo) and value <= hi):
        raise ValueError(f"{name} must be a number {rng}, not {value!r}")
    return float(value)


def check_fields(obj: Any, ints: Mapping[str, tuple[int, int]] | None = None,
                 numbers: Mapping[str, tuple[float, float]] | None = None) -> None:
    """Check the attributes of ``obj`` named in ``ints`` and ``numbers`` against their ``(lo, hi)`` ranges; an
    integer field given as a numpy integer is stored as an ``int`` (the configs are written as JSON)."""
    for name, (lo, hi) in (ints or {}).items():
        value = getattr(obj, name)
        n = check_int(name, value, lo, hi)
        if n is not value:  # a numpy integer (through object's __setattr__: the configs are frozen)
            object.__setattr__(obj, name, n)
    for name, (flo, fhi) in (numbers or {}).items():
        check_number(name, getattr(obj, name), flo, fhi)
