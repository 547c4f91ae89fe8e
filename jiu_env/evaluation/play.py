"""One game of a tournament, in any process: :func:`run_game` and :func:`play_task`.

``play_task`` is what a worker (a local process or a Ray actor,
:mod:`jiu_env.evaluation.backends`) runs for each scheduled
:class:`~jiu_env.evaluation.schedule.GameTask`; its result is one line of
``games.jsonl``.  ``run_game`` plays through the one game loop
(:func:`jiu_env.game.play_game`), from random placements or from an opening
of a suite.
"""

from __future__ import annotations

from typing import Any

from ..bots import REGISTRY
from ..game import play_game
from ..players import make_player, warm_spec
from ..rules import Rules
from .schedule import GameTask


def run_game(rules: str | Rules | dict[str, Any], white: Any, black: Any, seed: int = 0, random_opening: int = 0,
             players: Any = None, opening: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play one tournament game (the one game loop, :func:`jiu_env.game.play_game`); return a result dict.

    ``random_opening`` placements are drawn at random (seeded by ``seed``)
    before the players decide; the players keep their own seeds.  A player
    returning an illegal action loses the game by forfeit.  The dict holds the
    :class:`GameRecord` under ``record``, the game's
    :class:`~jiu_env.outcome.Outcome` under ``outcome``, ``winner``
    (``"white"``/``"black"``/``"draw"``/``None``), ``score_white`` (1, 1/2
    or 0; truncated games count 1/2), ``end_reason``, lengths and the
    players' total decision times.  A ``games.jsonl`` line holds the same
    keys but ``outcome`` (its JSON form is the line's ``winner``,
    ``end_reason``, ``battle_turns`` and ``decisions``:
    ``Outcome.from_dict(line)`` reads it back).

    ``opening``: an opening of a suite (``{"name", "moves"[, "start"]}``,
    see :mod:`jiu_env.evaluation.openings`) played before the players
    decide; the record holds its moves, and ``decisions`` counts them.
    """
    if opening is not None:
        return _run_from_opening(rules, white, black, seed, players, opening)
    g = play_game(rules, white, black, seed=None, random_opening=random_opening, opening_seed=seed,
                  on_illegal="forfeit", players=players, meta={"random_opening": random_opening})
    return _game_line(g, g.decisions, g.record)


def _game_line(g, decisions, record):
    """The dict :func:`run_game` returns for the played game ``g``."""
    return {
        "winner": g.winner,
        "score_white": g.score_white,
        "end_reason": g.end_reason,
        "truncated": g.truncated,
        "battle_turns": g.battle_turns,
        "decisions": decisions,
        "time": g.time,
        "moves_by": g.moves_by,
        "record": record,
        "outcome": g.outcome,
    }


def _run_from_opening(rules, white, black, seed, players, opening):
    """:func:`run_game` from the position after ``opening``: the players decide from there, and the record
    holds the opening's moves then theirs."""
    from ..notation import str_to_action
    from ..records import GameRecord, result_of
    from .openings import Opening

    r = rules if isinstance(rules, Rules) else Rules.make(rules)
    n = r.board_size
    op = Opening(str(opening["name"]), tuple(str_to_action(m, n) for m in opening["moves"]), opening.get("start"))
    meta = {"random_opening": 0, "opening": op.name, "opening_plies": len(op.actions)}
    g = play_game(r, white, black, seed=None, start=op.state(r), opening_seed=seed, on_illegal="forfeit",
                  players=players)
    record = GameRecord(rules=r, actions=[*op.actions, *(g.actions or [])],
                        start=op.start if op.start is not None else {"from": "placement"},
                        players=dict(players or {}), seed=seed, result=result_of(g.state),
                        meta={**meta, **({"forfeit": g.forfeit} if g.forfeit is not None else {})})
    return _game_line(g, len(op.actions) + g.decisions, record)


_WARMED: set[tuple[str, str]] = set()  # (spec, repr(rules)) of the bots warmed in this process


def _warm_up(spec, rules):
    """Play one game of a built-in bot against random in this process, its time budget cut (``warm_spec``).

    The first calls of a numba bot load (or compile) its functions; without
    this they would count as decision time of the first game a worker plays.
    """
    key = (spec, repr(rules))
    if key in _WARMED or spec.partition(":")[0] not in REGISTRY:
        return
    _WARMED.add(key)
    run_game(rules, make_player(warm_spec(spec), seed=0), make_player("random", seed=0), seed=0)


def play_task(task: GameTask, build_specs: dict[str, str] | None = None) -> dict[str, Any]:
    """Play a :class:`GameTask` (in any process); return its JSON-able result line.

    ``build_specs`` maps a task's spec to the spec the player is built from
    here (a worker on another machine names its local copy of a model file);
    the result line keeps the task's own specs.
    """
    build_specs = build_specs or {}
    white_build = build_specs.get(task.white_spec, task.white_spec)
    black_build = build_specs.get(task.black_spec, task.black_spec)
    _warm_up(white_build, task.rules)
    _warm_up(black_build, task.rules)
    white = make_player(white_build, seed=task.white_seed)
    black = make_player(black_build, seed=task.black_seed)
    r = run_game(task.rules, white, black, seed=task.seed, random_opening=task.random_opening,
                 players={"white": task.white_spec, "black": task.black_spec}, opening=task.opening)
    rec = r.pop("record")
    del r["outcome"]  # in the line as its JSON spelling: winner, end_reason, battle_turns, decisions
    line = {
        "id": task.id, "pair": list(task.pair), "game": task.game, "white": task.white, "black": task.black,
        "white_spec": task.white_spec, "black_spec": task.black_spec, "seed": task.seed,
        "white_version": task.white_version, "black_version": task.black_version,
        "fingerprint": task.fingerprint(),
    }
    if task.opening is not None:
        line["opening"] = task.opening
    line.update(r)
    line["record"] = rec.to_dict(moves=False)
    return line


__all__ = ["run_game", "play_task"]
