"""The one game loop: two players, one game, one result type.

:func:`play_game` is what the match runner, tournaments (``jiu eval``), the
SB3 evaluation and the examples use, so that a game is played, timed, checked
and reported the same way everywhere::

    from jiu_env import play_game

    g = play_game({"board_size": 8}, "greedy", "random", seed=3)
    g.winner, g.end_reason, g.battle_turns, g.stones
    g.outcome   # the one result type, jiu_env.Outcome (also the record's and the tournament's)

Players are anything :func:`jiu_env.players.make_player` accepts (spec
strings, bots, SB3 models, callables).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from . import kernel as K

from . import vocab as V
from .checks import check_action_value, check_int
from .outcome import FORFEIT as FORFEIT, STOPPED as STOPPED, Outcome, outcome_of
from .players import make_player
from .rules import Rules, state_rules_mismatch
from .validate import validate_state
from .vocab import COLOUR_NAMES

if TYPE_CHECKING:
    from .records import GameRecord

# FORFEIT ("illegal_action") and STOPPED ("max_decisions"), the end reasons of :class:`GameResult` beyond the
# kernel's, are defined with the other end reasons in :mod:`jiu_env.outcome` and importable from here as before.


@dataclass
class GameResult:
    """The result of one game, from White's point of view where it has one.

    ``winner``: ``"white"``, ``"black"``, ``"draw"`` or ``None`` (stopped at
    the turn limit or by ``max_decisions``).  ``end_reason``: a kernel end
    reason (``"too_few_stones"``, ``"no_move"``, ``"repetition"``,
    ``"turn_limit"``), ``"illegal_action"`` (a forfeit) or ``"max_decisions"``.
    ``result``: +1 White won, -1 Black won, 0 otherwise; ``score_white``: 1,
    1/2 or 0 (undecided games count 1/2).  ``decisions``: actions applied in
    this call; ``actions``: them (``None`` when not recorded); ``stones``:
    final counts; ``time``: seconds each side spent deciding; ``moves_by``:
    decisions each side made; ``forfeit``: ``{"colour", "action"}`` of an
    illegal action under ``on_illegal="forfeit"``; ``state``: the final kernel
    state.  ``record`` builds the :class:`~jiu_env.records.GameRecord`.

    ``outcome``: the game's :class:`~jiu_env.outcome.Outcome`, the result type
    that records, tournaments and the envs share (``winner`` there is the
    colour constant or ``None``); ``winner``, ``end_reason``, ``result``,
    ``score_white`` and ``truncated`` here are derived from it.  A GameResult
    made by hand without ``outcome`` gets it from ``winner``, ``end_reason``
    and ``battle_turns``; either way those five fields must agree with it
    (ValueError naming the field otherwise; TypeError for a ``winner`` that is
    not a str or None).

    Reading a GameResult like a dict (``g["winner"]``, ``g["reason"]``,
    ``g.get(...)``, ``"stones" in g``) is deprecated: it warns and will be
    removed in the next release; use the attributes (``g.winner``,
    ``g.end_reason``, ``g.time["white"]``).
    """

    winner: str | None
    end_reason: str
    result: int
    score_white: float
    truncated: bool
    battle_turns: int
    decisions: int
    actions: list[int] | None
    stones: dict[str, int]
    time: dict[str, float]
    moves_by: dict[str, int]
    state: np.ndarray = field(repr=False)
    rules: Rules = field(repr=False)
    forfeit: dict[str, Any] | None = None
    players: dict[str, Any] = field(default_factory=dict, repr=False)
    seed: Any = None
    meta: dict[str, Any] = field(default_factory=dict, repr=False)
    from_placement: bool = field(default=True, repr=False)
    # Always an Outcome after __init__: play_game passes it, and one made by hand gets it from its own fields.
    outcome: Outcome = field(default=None, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.winner is not None and not isinstance(self.winner, str):
            raise TypeError(f"winner must be 'white', 'black', 'draw' or None (no result), not "
                            f"{type(self.winner).__name__} {self.winner!r}")
        if self.winner not in ("white", "black", "draw", None):
            raise ValueError(f"winner must be 'white', 'black', 'draw' or None (no result), not {self.winner!r}")
        if self.outcome is None:
            self.outcome = Outcome(winner={"white": V.WHITE, "black": V.BLACK}.get(self.winner or ""),
                                   end_reason=self.end_reason, battle_turns=self.battle_turns,
                                   decisions=int(self.state[V.H_DECISIONS]))
        elif not isinstance(self.outcome, Outcome):
            raise TypeError(f"outcome must be an Outcome or None, not {type(self.outcome).__name__}")
        self._check_derived()

    def _check_derived(self) -> None:
        """``winner``, ``end_reason``, ``result``, ``score_white`` and ``truncated`` against ``outcome``."""
        o = self.outcome
        want = {"winner": o.to_dict()["winner"], "end_reason": o.end_reason,
                "result": int(o.reward_for(V.WHITE)), "score_white": o.score_for(V.WHITE), "truncated": o.truncated}
        for name, value in want.items():
            got = getattr(self, name)
            if isinstance(got, (bool, np.bool_)) != isinstance(value, bool) or got != value:
                raise ValueError(f"{name}={got!r} does not fit the game's outcome ({o}): it is {value!r}")

    # The old dict keys of the match runner, kept readable (deprecated: see the class docstring).
    _ALIASES = {"reason": "end_reason", "time_white": ("time", "white"), "time_black": ("time", "black")}

    @staticmethod
    def _warn_dict(how: str) -> None:
        warnings.warn(f"reading a GameResult like a dict ({how}) is deprecated and will be removed in the next "
                      "release: use its attributes (g.winner, g.end_reason, g.time['white'], ...) or g.outcome "
                      "(jiu_env.Outcome)", DeprecationWarning, stacklevel=3)

    def __getitem__(self, key: str) -> Any:
        self._warn_dict(f"g[{key!r}]")
        return self._item(key)

    def _item(self, key: str) -> Any:
        alias = self._ALIASES.get(key, key)
        if isinstance(alias, tuple):
            return getattr(self, alias[0])[alias[1]]
        if alias == "record":
            return self.record
        if not isinstance(alias, str) or alias.startswith("_") or not hasattr(self, alias):
            raise KeyError(key)
        return getattr(self, alias)

    def _keys(self) -> list[str]:
        from dataclasses import fields

        return [f.name for f in fields(self) if f.name != "outcome"] + ["record", *self._ALIASES]

    def keys(self) -> list[str]:
        """The readable keys: the fields, ``record`` and the old aliases (deprecated, as dict access is)."""
        self._warn_dict("g.keys()")
        return self._keys()

    def __iter__(self) -> Iterator[str]:
        self._warn_dict("iter(g)")
        return iter(self._keys())

    def __contains__(self, key: object) -> bool:
        self._warn_dict(f"{key!r} in g")
        return key in self._keys()

    def get(self, key: str, default: Any = None) -> Any:
        """Deprecated, as dict access is: use the attributes."""
        self._warn_dict(f"g.get({key!r})")
        try:
            return self._item(key)
        except KeyError:
            return default

    @property
    def record(self) -> GameRecord:
        """The game as a :class:`~jiu_env.records.GameRecord` (games from the placement phase only)."""
        from .records import GameRecord, result_of

        if not self.from_placement or self.actions is None:
            raise ValueError("a record needs a recorded game from the placement phase (start='placement', record=True)")
        meta = dict(self.meta)
        if self.forfeit is not None:
            meta["forfeit"] = self.forfeit
        return GameRecord(rules=self.rules, actions=list(self.actions), players=dict(self.players), seed=self.seed,
                          result=result_of(self.state), meta=meta)


def _derived_seeds(seed: int | None) -> list[int | None]:
    if seed is None:
        return [None, None, None]
    return [int(x) for x in np.random.SeedSequence(seed).generate_state(3)]


def play_game(rules: Any, white: Any, black: Any, seed: int | None = None, *, start: Any = "placement",
              random_opening: int = 0, opening_seed: int | None = None, max_decisions: int | None = None,
              on_illegal: str = "raise", record: bool = True, players: dict[str, Any] | None = None,
              meta: dict[str, Any] | None = None) -> GameResult:
    """Play one game between two players and return its :class:`GameResult`.

    ``rules``: a profile name, :class:`~jiu_env.rules.Rules` or dict of
    options.  ``white``/``black``: anything :func:`~jiu_env.players.make_player`
    takes (the same object may play both sides).  ``seed``: when given, both
    players are restarted with seeds derived from it and a random start uses
    it, so the game is reproducible; when ``None`` the players are restarted
    with their own seeds.  ``start``: ``"placement"`` (a new game),
    ``"battle"`` (a seeded random placement, then the players fight), or a
    kernel state to continue from (copied, never modified; checked as a
    state, and refused when it holds other rules than ``rules``).  A player's
    choice must be an integer (any numpy integer type; a float such as ``5.0``
    is not an action).
    ``random_opening``: the first that many placements of the game are drawn
    at random (seeded by ``opening_seed``, else by ``seed``) — recorded as
    moves, unlike ``start="battle"``.  They are counted from the start of the
    game (a start state's placements count), and a number beyond the
    placement phase draws all of it (tournaments give any number up to
    100,000 and read a longer one back as the whole placement).  With
    ``start="battle"`` or a start state past the placement phase there is
    nothing to draw: a ``random_opening`` above 0 is a ValueError there.
    ``max_decisions``: stop after that many decisions.
    ``on_illegal``: ``"raise"`` (ValueError naming the player and action) or
    ``"forfeit"`` (the player loses; ``end_reason`` ``"illegal_action"``).
    ``players``/``meta``: names and extra fields for the record.

    Each player gets a copy of the state, so a misbehaving player cannot
    change the game.

    Every argument is checked before the players are touched (restarted):
    TypeError / ValueError naming it.  ``seed`` and ``opening_seed`` are ints
    >= 0 or None (numpy integers too; not bools); ``random_opening`` and
    ``max_decisions`` ints >= 0 (``max_decisions`` also None); ``record``
    True or False; ``players`` and ``meta`` dicts or None.
    """
    if not isinstance(on_illegal, str) or on_illegal not in ("raise", "forfeit"):
        raise ValueError(f"on_illegal must be 'raise' or 'forfeit', not {on_illegal!r}")
    if max_decisions is not None:
        max_decisions = check_int("max_decisions", max_decisions, 0)
    random_opening = check_int("random_opening", random_opening, 0)
    for name, value in (("seed", seed), ("opening_seed", opening_seed)):
        if value is not None:
            check_int(name, value, 0)  # checked only: the value itself seeds, as before
    if not isinstance(record, (bool, np.bool_)):  # "no" would be taken as True
        raise TypeError(f"record must be True or False, not {type(record).__name__} {record!r}")
    for name, table in (("players", players), ("meta", meta)):  # used only after the game: checked before it
        if table is not None and not isinstance(table, dict):
            raise TypeError(f"{name} must be a dict or None, not {type(table).__name__} {table!r}")
    r = rules if isinstance(rules, Rules) else Rules.make(rules)
    start_state = None
    if isinstance(start, np.ndarray):
        validate_state(start)  # its type and layout first; a corrupt state would reach the players and the loop
        if start[V.H_N] != r.board_size:
            raise ValueError(f"start state does not fit the rules (board size {r.board_size}, "
                             f"the state's {int(start[V.H_N])})")
        differ = state_rules_mismatch(r, start)
        if differ:  # the kernel would play the state's rules, and the result would name these
            raise ValueError(f"start state holds other rules than the game's: {'; '.join(differ)}")
        if random_opening and start[V.H_PHASE] != V.PH_PLACEMENT:
            raise ValueError(f"random_opening={random_opening} draws placements, and the start state is past "
                             "the placement phase; give random_opening=0")
        start_state = start.copy()
    elif not isinstance(start, str) or start not in ("placement", "battle"):
        raise ValueError(f"start must be 'placement', 'battle' or a kernel state, not {start!r}")
    elif start == "battle" and random_opening:
        raise ValueError(f"random_opening={random_opening} draws placements, and start='battle' draws the whole "
                         "placement already; give one of them (random_opening=0 with start='battle')")
    seeds = _derived_seeds(seed)
    # a player object is restarted once, below (make_player would restart it with a seed too)
    white = make_player(white, seed=seeds[0] if isinstance(white, str) else None)
    black = make_player(black, seed=seeds[1] if isinstance(black, str) else None)
    white.restart(seeds[0])
    if black is not white:
        black.restart(seeds[1])
    from_placement = True
    if start_state is not None:
        s = start_state
        # a new game only: a position (position_state) also counts 0 decisions, but its stones were never played
        from_placement = bool(s[V.H_PHASE] == V.PH_PLACEMENT and s[V.H_DECISIONS] == 0
                              and s[V.H_COUNT + V.WHITE] == 0 and s[V.H_COUNT + V.BLACK] == 0)
    elif start == "placement":
        s = r.new_state()
    else:  # "battle"
        s = r.new_state()
        ps = seeds[2] if seed is not None else int(np.random.SeedSequence().generate_state(1)[0])
        K.random_placement(s, ps)
        from_placement = False
    opening_rng = np.random.default_rng(opening_seed if opening_seed is not None else seed)
    by_colour = {V.WHITE: white, V.BLACK: black}
    spent = {V.WHITE: 0.0, V.BLACK: 0.0}
    made = {V.WHITE: 0, V.BLACK: 0}
    buf = np.empty(r.num_actions, np.int64)
    actions: list[int] | None = [] if record else None
    decisions = 0
    forfeit = None
    stopped = False
    a: int | None  # a player's choice may be no action at all (None): checked before it is applied
    while s[V.H_PHASE] != V.PH_OVER:
        if max_decisions is not None and decisions >= max_decisions:
            stopped = True
            break
        side = int(s[V.H_TO_MOVE])
        if s[V.H_PHASE] == V.PH_PLACEMENT and int(s[V.H_DECISIONS]) < random_opening:
            k = K.legal_actions(s, buf)
            a = int(buf[opening_rng.integers(k)])
        else:
            t0 = time.perf_counter()
            try:
                choice = by_colour[side].step(s.copy())
            finally:
                spent[side] += time.perf_counter() - t0
                made[side] += 1
            a = _as_action(choice)
            if a is None or not 0 <= a < r.num_actions or not K.is_legal(s, a):
                if on_illegal == "raise":
                    what = "the illegal action" if a is not None else "what is not an integer action:"
                    raise ValueError(f"{by_colour[side]!r} playing {COLOUR_NAMES[side]} chose {what} "
                                     f"{choice!r} at decision {decisions}")
                forfeit = {"colour": COLOUR_NAMES[side], "action": a if a is not None else -1}
                break
        K.apply_action_unchecked(s, a)  # checked just above (is_legal validates the state too)
        decisions += 1
        if actions is not None:
            actions.append(a)
    outcome = _outcome(s, forfeit, stopped)
    return GameResult(
        winner=outcome.to_dict()["winner"],  # GameResult's spelling: "white", "black", "draw", None (no result)
        end_reason=outcome.end_reason, result=int(outcome.reward_for(V.WHITE)), score_white=outcome.score_for(V.WHITE),
        truncated=bool(s[V.H_TRUNC]), battle_turns=int(s[V.H_TURNS]), decisions=decisions, actions=actions,
        stones={"white": int(s[V.H_COUNT + V.WHITE]), "black": int(s[V.H_COUNT + V.BLACK])},
        time={"white": spent[V.WHITE], "black": spent[V.BLACK]},
        moves_by={"white": made[V.WHITE], "black": made[V.BLACK]}, state=s, rules=r, forfeit=forfeit,
        players=dict(players or {}), seed=opening_seed if opening_seed is not None else seed,
        meta=dict(meta or {}), from_placement=from_placement, outcome=outcome)


def _outcome(s: np.ndarray, forfeit: dict[str, Any] | None, stopped: bool) -> Outcome:
    """The outcome of a game the loop ended: a forfeit or a stop (not in the state), else the state's."""
    turns, decisions = int(s[V.H_TURNS]), int(s[V.H_DECISIONS])
    if forfeit is not None:
        return Outcome(winner=V.BLACK if forfeit["colour"] == "white" else V.WHITE, end_reason=FORFEIT,
                       battle_turns=turns, decisions=decisions)
    if stopped:
        return Outcome(winner=None, end_reason=STOPPED, battle_turns=turns, decisions=decisions)
    o = outcome_of(s)
    assert o is not None  # the loop only ends otherwise when the game is over
    return o


def _as_action(choice: Any) -> int | None:
    """A player's choice as an int, or None when it is not an integer at all (a float such as ``5.0``, a
    bool, a string: the env shells refuse them too, so a game does not quietly accept what they refuse)."""
    try:
        return check_action_value(choice)
    except (TypeError, ValueError, OverflowError):
        return None


__all__ = ["GameResult", "play_game", "FORFEIT", "STOPPED"]
