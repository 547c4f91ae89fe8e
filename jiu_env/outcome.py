"""One result type for a finished game: :class:`Outcome` (who won, why, after how long).

Every part of the package that reports how a game ended gives the same
object, so that a result read from a record, a tournament line, the game
loop or an env can be compared with ``==``::

    from jiu_env import Outcome, outcome_of, play_game
    from jiu_env.vocab import WHITE

    g = play_game({"board_size": 6}, "greedy", "random", seed=3)
    o = g.outcome                      # also: g.record.outcome, outcome_of(g.state)
    o.winner, o.end_reason, o.battle_turns, o.decisions
    o.result(), o.score_for(WHITE)     # "1-0", 1.0
    assert Outcome.from_dict(o.to_dict()) == o == g.record.outcome == outcome_of(g.state)

In the Python API "no winner" has one spelling, ``None``: ``winner`` is
:data:`~jiu_env.vocab.WHITE`, :data:`~jiu_env.vocab.BLACK` or ``None`` (a
draw, or a game without a result), and ``end_reason`` says which.  The
string spellings stay at the edges whose formats already use them:
:attr:`Outcome.winner_name` gives the infos' ``"white"``/``"black"``/
``"draw"``/``"none"``, and :meth:`Outcome.to_dict` the JSON of tournament
lines and records (``"draw"``, and ``null`` for no result).

Like python-chess's ``Outcome(termination, winner)``, an unfinished game has
no outcome: :func:`outcome_of` returns ``None`` while the game is on.

This module sits in the kernel layer (it reads kernel states and imports
nothing above them), so that the game loop, records, tournaments, the
integrations and the envs can all build and return it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from . import vocab as V
from .checks import check_int
from .vocab import BLACK, DRAW, END_REASON_NAMES, WHITE, WINNER_NAMES, colour_name

#: End reasons beyond the kernel's, which only the game loop (:func:`jiu_env.play_game`) knows:
#: a player chose an illegal action (``on_illegal="forfeit"``; the other side wins), or
#: ``max_decisions`` stopped the game (no result).
FORFEIT, STOPPED = "illegal_action", "max_decisions"

#: Every end reason of an :class:`Outcome`: the kernel's (the vocabulary's names) and the game loop's.
END_REASONS: tuple[str, ...] = tuple(END_REASON_NAMES[1:]) + (FORFEIT, STOPPED)
#: End reasons with a winner.
WIN_REASONS: frozenset[str] = frozenset({END_REASON_NAMES[V.END_FEW_STONES], END_REASON_NAMES[V.END_NO_MOVE], FORFEIT})
#: End reasons of a drawn game (half a point each, and a result): the repetition draw.
DRAW_REASONS: frozenset[str] = frozenset({END_REASON_NAMES[V.END_REPETITION]})
#: End reasons of a game stopped without a result (the turn limit, ``max_decisions``).
UNDECIDED_REASONS: frozenset[str] = frozenset({END_REASON_NAMES[V.END_TURN_LIMIT], STOPPED})

_JSON_WINNERS = {WHITE: WINNER_NAMES[WHITE], BLACK: WINNER_NAMES[BLACK]}  # winner -> its JSON name
_JSON_KEYS = ("winner", "end_reason", "battle_turns", "decisions")


_colour = V.check_colour  # WHITE or BLACK; a clear error for a name, a bool or anything else


@dataclass(frozen=True)
class Outcome:
    """How a game ended: ``winner``, ``end_reason`` and the game's length.

    ``winner``: :data:`~jiu_env.vocab.WHITE`, :data:`~jiu_env.vocab.BLACK`
    or ``None`` (no winner: a draw or a game stopped without a result).
    ``end_reason``: one of :data:`END_REASONS` — the kernel's
    ``"too_few_stones"``, ``"no_move"`` (a win), ``"repetition"`` (a
    draw), ``"turn_limit"`` (no result), or the game loop's
    ``"illegal_action"`` (a forfeit: the other side wins) and
    ``"max_decisions"`` (stopped, no result).  ``battle_turns``: battle
    turns completed; ``decisions``: actions applied since the game began
    (placements included), as records count them.

    A winner and an end reason that contradict each other (a winner of a
    repetition draw, no winner of ``"no_move"``) raise ValueError: every
    outcome is one the rules can produce.
    """

    winner: int | None
    end_reason: str
    battle_turns: int
    decisions: int

    def __post_init__(self) -> None:
        if self.winner is not None:
            object.__setattr__(self, "winner", _colour(self.winner, "winner"))
        if self.end_reason not in END_REASONS:
            raise ValueError(f"end_reason must be one of {list(END_REASONS)}, not {self.end_reason!r}")
        if self.winner is None and self.end_reason in WIN_REASONS:
            raise ValueError(f"a game that ends by {self.end_reason!r} has a winner; got winner None")
        if self.winner is not None and self.end_reason not in WIN_REASONS:
            raise ValueError(f"a game that ends by {self.end_reason!r} has no winner; got winner "
                             f"{colour_name(self.winner)} ({self.winner})")
        object.__setattr__(self, "battle_turns", check_int("battle_turns", self.battle_turns, 0))
        object.__setattr__(self, "decisions", check_int("decisions", self.decisions, 0))

    # ------------------------------------------------------------ reading
    @property
    def draw(self) -> bool:
        """A drawn game (a result: half a point each), as opposed to a win or no result."""
        return self.end_reason in DRAW_REASONS

    @property
    def truncated(self) -> bool:
        """Stopped by the rules' turn limit (``max_battle_turns``), as the envs' ``truncated`` says."""
        return self.end_reason == END_REASON_NAMES[V.END_TURN_LIMIT]

    @property
    def winner_name(self) -> str:
        """The infos' spelling (docs/env.md): ``"white"``, ``"black"``, ``"draw"`` or ``"none"`` (no result)."""
        if self.winner is not None:
            return WINNER_NAMES[self.winner]
        return WINNER_NAMES[DRAW] if self.draw else WINNER_NAMES[0]

    def result(self) -> str:
        """The result in the usual notation: ``"1-0"`` (White won), ``"0-1"``, ``"1/2-1/2"`` (a draw), ``"*"`` (no result)."""
        if self.winner is not None:
            return "1-0" if self.winner == WHITE else "0-1"
        return "1/2-1/2" if self.draw else "*"

    def score_for(self, colour: int) -> float:
        """Points for ``colour`` (WHITE / BLACK): 1 for a win, 0 for a loss, 1/2 otherwise (a game without a
        result counts 1/2, as tournaments score it: ``score_for(WHITE)`` is a tournament line's ``score_white``)."""
        c = _colour(colour, "colour")
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == c else 0.0

    def reward_for(self, colour: int) -> float:
        """The final reward of ``colour`` (WHITE / BLACK) as the envs and :func:`jiu_env.kernel.returns` give it:
        +1.0 won, -1.0 lost, 0.0 otherwise."""
        c = _colour(colour, "colour")
        if self.winner is None:
            return 0.0
        return 1.0 if self.winner == c else -1.0

    @property
    def returns(self) -> tuple[float, float]:
        """``(white, black)`` rewards, as a record's ``result["returns"]`` holds them."""
        return self.reward_for(WHITE), self.reward_for(BLACK)

    def __str__(self) -> str:
        head = f"{self.winner_name} wins" if self.winner is not None else ("draw" if self.draw else "undecided")
        return f"{head} ({self.end_reason}) after {self.battle_turns} battle turns"

    # --------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        """JSON-able: ``winner`` as a tournament line and a record spell it (``"white"``, ``"black"``,
        ``"draw"``, or ``None`` for no result), ``end_reason``, ``battle_turns``, ``decisions``."""
        w = _JSON_WINNERS.get(self.winner) if self.winner is not None else ("draw" if self.draw else None)
        return {"winner": w, "end_reason": self.end_reason, "battle_turns": self.battle_turns,
                "decisions": self.decisions}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Outcome:
        """The outcome of :meth:`to_dict`'s form; other keys are ignored, so a tournament line
        (``games.jsonl``) or a finished record's ``result`` reads as well.  ValueError names a missing key,
        a winner spelled otherwise, or a ``"draw"`` that is not a draw's end reason."""
        if not isinstance(d, Mapping):
            raise TypeError(f"an outcome is read from a mapping, not {type(d).__name__}")
        missing = [k for k in _JSON_KEYS if k not in d]
        if missing:
            raise ValueError(f"an outcome needs the keys {list(_JSON_KEYS)}; missing {missing}")
        if d["end_reason"] is None:
            raise ValueError("no outcome: end_reason is None (the game is not over)")
        w = d["winner"]
        if w not in ("white", "black", "draw", None):
            raise ValueError(f"winner must be 'white', 'black', 'draw' or None (no result), not {w!r}")
        o = cls(winner={"white": WHITE, "black": BLACK}.get(w) if w is not None else None,
                end_reason=d["end_reason"], battle_turns=d["battle_turns"], decisions=d["decisions"])
        if (w == "draw") != o.draw:
            raise ValueError(f"winner {w!r} does not fit end_reason {o.end_reason!r}")
        return o


def outcome_of(state: np.ndarray) -> Outcome | None:
    """The outcome of a kernel state, or ``None`` while its game is on.

    Reads the state's winner, end reason and counters; the game loop's own
    end reasons (a forfeit, ``max_decisions``) are not in a state, so
    :attr:`jiu_env.game.GameResult.outcome` is the outcome of a played game.
    """
    if not isinstance(state, np.ndarray) or state.dtype != np.int64 or state.ndim != 1 or state.size < V.HDR:
        raise ValueError("outcome_of needs a kernel state (a 1-D np.int64 array from Rules.new_state)")
    if state[V.H_PHASE] != V.PH_OVER:
        return None
    w = int(state[V.H_WINNER])
    reason = int(state[V.H_END_REASON])
    if not 0 < reason < len(END_REASON_NAMES):
        raise ValueError(f"the state is over but its end reason field is {reason}")
    return Outcome(winner=w if w in (WHITE, BLACK) else None, end_reason=END_REASON_NAMES[reason],
                   battle_turns=int(state[V.H_TURNS]), decisions=int(state[V.H_DECISIONS]))


__all__ = ["Outcome", "outcome_of", "END_REASONS", "WIN_REASONS", "DRAW_REASONS", "UNDECIDED_REASONS",
           "FORFEIT", "STOPPED"]
