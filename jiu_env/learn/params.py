"""The range checks of the learning configs' fields, written once for the data, self-play, training and PPO configs.

Every config of :mod:`jiu_env.learn` checks its fields when it is made, so
that a wrong value stops a run before its first game or step and names the
field; a run resumed from its stored config goes through the same checks.
The messages have one shape everywhere: ``games must be an int in
1..10000000, not 0``; ``lr must be a number > 0 and <= 1.0, not nan``.

``bool`` is refused where an int or a number is asked for (``True`` is an
``int`` to Python, never a count or a rate to a user), and so are ``nan`` and
the infinities.
"""

from __future__ import annotations

import math
from typing import Any, Mapping


def check_int(name: str, value: Any, lo: int, hi: int) -> int:
    """``value`` if it is an ``int`` in ``lo..hi``; ValueError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an int in {lo}..{hi}, not {value!r}")
    return value


def check_number(name: str, value: Any, lo: float, hi: float, lo_open: bool = False) -> float:
    """``value`` as a float if it is a finite number in ``lo..hi`` (``lo_open``: above ``lo``); ValueError
    naming ``name`` otherwise."""
    ok = (not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
          and (value > lo if lo_open else value >= lo) and value <= hi)
    if not ok:
        rng = f"> {lo} and <= {hi}" if lo_open else f"in {lo}..{hi}"
        raise ValueError(f"{name} must be a number {rng}, not {value!r}")
    return float(value)


def check_fields(obj: Any, ints: Mapping[str, tuple[int, int]] | None = None,
                 numbers: Mapping[str, tuple[float, float]] | None = None) -> None:
    """Check the attributes of ``obj`` named in ``ints`` and ``numbers`` against their ``(lo, hi)`` ranges."""
    for name, (lo, hi) in (ints or {}).items():
        check_int(name, getattr(obj, name), lo, hi)
    for name, (flo, fhi) in (numbers or {}).items():
        check_number(name, getattr(obj, name), flo, fhi)
