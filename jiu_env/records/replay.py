"""The one replay loop shared by every record format.

A record is a list of kernel actions plus, for irregular real records only, a
list of *passes*: ``passes`` holds action indices, and before action ``i`` the
turn is handed over once for every occurrence of ``i`` (see
:func:`jiu_env.kernel.pass_turn`).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Protocol, Sequence

import numpy as np

from .. import kernel as K

from .. import vocab as V
from ..state import explain_illegal
from ..notation import action_to_str
from ..rules import Rules
from .errors import RecordError


class RecordLike(Protocol):
    """What :func:`turn_entries` reads of a record (a :class:`~jiu_env.records.GameRecord`)."""

    @property
    def rules(self) -> Rules: ...

    @property
    def actions(self) -> Sequence[int]: ...

    @property
    def passes(self) -> Sequence[int]: ...

    def initial_state(self) -> np.ndarray: ...


def can_pass(s: np.ndarray) -> bool:
    """Can the turn be handed over in ``s`` (battle phase, move or capture sub-phase)?"""
    return int(s[V.H_PHASE]) == V.PH_BATTLE and int(s[V.H_SUB]) in (V.SUB_MOVE, V.SUB_CAPTURE)


def check_action(s: np.ndarray, i: int, a: Any) -> None:
    """Raise RecordError unless ``a`` (action number ``i``) is an int in range and legal in ``s``."""
    n = int(s[V.H_N])
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)) or not 0 <= a <= 10 * n * n:
        raise RecordError(f"{a!r} is illegal: out of range (actions are 0..{10 * n * n})", action=i)
    a = int(a)
    if not K.is_legal(s, a):
        raise RecordError(f"{action_to_str(a, n)} ({a}) is illegal: {explain_illegal(s, a)}", action=i)


def check_passes(passes: Any, n_actions: int) -> list[int]:
    """The passes list as sorted ints in ``[0, n_actions)``; RecordError otherwise."""
    if passes is None:
        return []
    if not isinstance(passes, (list, tuple)) or not all(isinstance(p, int) and not isinstance(p, bool) for p in passes):
        raise RecordError("'passes' must be a list of action indices (integers)")
    out = [int(p) for p in passes]
    if out != sorted(out) or any(not 0 <= p < n_actions for p in out):
        raise RecordError(f"'passes' must be sorted action indices in 0..{n_actions - 1}")
    return out


def walk(state: np.ndarray, actions: Sequence[int], passes: Sequence[int] = (), check: bool = True,
         before: Callable[[int, int, np.ndarray], None] | None = None) -> Iterator[int]:
    """Play ``actions`` (with ``passes``) on ``state`` in place; yield ``i`` after each action ``i``.

    ``before(i, a, state)``, if given, sees the state just before action ``i``
    (after the passes due there).  With ``check`` every action is checked first
    (RecordError names its index).
    """
    pi = 0
    np_ = len(passes)
    for i, a in enumerate(actions):
        while pi < np_ and passes[pi] == i:
            if not can_pass(state):
                raise RecordError("the turn cannot be handed over here (a pass is only possible"
                                  " at the start of a battle turn or with captures pending)", action=i)
            K.pass_turn(state)
            pi += 1
        if check:
            check_action(state, i, a)
        if before is not None:
            before(i, a, state)
        K.apply_action(state, a)
        yield i
    if pi < np_:
        raise RecordError(f"a pass at action {passes[pi]} lies beyond the {len(actions)} actions")


def play(state: np.ndarray, actions: Sequence[int], passes: Sequence[int] = (), check: bool = True) -> np.ndarray:
    """Play everything on ``state`` in place and return it."""
    for _ in walk(state, actions, passes, check):
        pass
    return state


def inside_turn(state: np.ndarray) -> str | None:
    """What is left of the battle turn that ``state`` stands inside, or None at the start of a turn
    (and outside the battle phase).  The text notations write whole turns only."""
    if int(state[V.H_PHASE]) != V.PH_BATTLE:
        return None
    sub = int(state[V.H_SUB])
    if sub == V.SUB_DROP:
        return "a stone is lifted to fly and has not landed"
    if sub == V.SUB_CHAIN:
        return "a jump chain may go on or stop"
    if sub == V.SUB_CAPTURE:
        return f"{int(state[V.H_PENDING])} square capture(s) are still to choose"
    return None


def turn_entries(record: RecordLike) -> tuple[list[tuple[int, int]], list[dict[str, Any]]]:
    """Split a record's actions into placements and battle turns.

    Returns ``(placements, turns)``: ``placements`` is a list of ``(point,
    colour)``; each turn is a dict with ``colour``, ``path`` (points),
    ``jumped`` (points removed by jumps, in order), ``victims`` (square
    captures, in order) and ``fly`` (True when the move is a fly: LIFT, then
    the POINT where it lands).
    """
    n = record.rules.board_size
    p_ = n * n
    placements, turns = [], []
    cur = [None]

    def before(i, a, s):
        c = int(s[V.H_TO_MOVE])
        if s[V.H_PHASE] == V.PH_PLACEMENT:
            placements.append((a, c))
            return
        sub = int(s[V.H_SUB])
        if sub == V.SUB_MOVE:
            t = {"colour": c, "path": [], "jumped": [], "victims": [], "fly": False}
            cur[0] = t
            turns.append(t)
            kind, p = V.action_kind(a, p_), V.action_point(a, p_)
            if V.is_step_kind(kind):
                t["path"] += [p, int(V.landing(p, V.step_direction(kind), 1, n))]
            elif V.is_jump_kind(kind):
                d = V.jump_direction(kind)
                t["path"] += [p, int(V.landing(p, d, 2, n))]
                t["jumped"].append(int(V.landing(p, d, 1, n)))
            else:  # LIFT
                t["path"].append(p)
                t["fly"] = True
        elif sub == V.SUB_CHAIN:
            if a != V.stop_action(p_):
                p, d = V.action_point(a, p_), V.jump_direction(V.action_kind(a, p_))
                cur[0]["path"].append(int(V.landing(p, d, 2, n)))
                cur[0]["jumped"].append(int(V.landing(p, d, 1, n)))
        elif sub == V.SUB_DROP:
            cur[0]["path"].append(a)
        else:
            cur[0]["victims"].append(a)

    play_state = record.initial_state()
    for _ in walk(play_state, record.actions, record.passes, check=False, before=before):
        pass
    return placements, turns
