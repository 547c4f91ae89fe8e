"""Play bots against each other on kernel states, or against anything through PettingZoo.

Two bots, one game::

    from jiu_env.bots import make_bot
    from jiu_env.bots.match import play_game

    g = play_game("competitive", make_bot("greedy"), make_bot("random"), seed=3)
    g["result"], g["winner"], g["reason"], g["battle_turns"]

Any bot as the opponent in a PettingZoo loop: ``bot.policy()`` (or
:func:`policy` here, which also takes a spec string) gives ``policy(env) ->
action`` for the agent to move in ``env``, the wrapped env of
:func:`jiu_env.env` or the raw one.  It reads ``env.unwrapped.state``; call
it only for an agent whose game is on (a finished agent steps ``None``)::

    import jiu_env
    from jiu_env.bots.match import policy

    env = jiu_env.env(board_size=8)
    env.reset(seed=0)
    opponent = policy("greedy", seed=0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            action = None
        elif agent == "black":
            action = opponent(env)
        else:
            action = env.action_space(agent).sample(obs["action_mask"])
        env.step(action)

The bot behind a policy is not restarted between games: keep it
(``opponent = make_bot(...)``; ``opponent.policy()``) to call ``restart()``.
"""

import time

import numpy as np

from .. import kernel as K
from ..rules import Rules
from . import Bot, make_bot

from ..vocab import COLOUR_NAMES, END_REASON_NAMES, WINNER_NAMES


def policy(bot, seed=None):
    """``policy(env) -> action`` playing ``bot`` (a :class:`Bot` or a spec string) for the agent to move."""
    return (make_bot(bot, seed=seed) if isinstance(bot, str) else bot).policy()


def _as_bot(b, seed):
    if isinstance(b, str):
        return make_bot(b, seed=seed)
    if not isinstance(b, Bot) and not callable(getattr(b, "step", None)):
        raise TypeError(f"a player is a Bot or a bot spec string, not {type(b).__name__}")
    return b


def play_game(rules, white, black, seed=None, start="placement", max_decisions=None, record=True):
    """Play one game between two bots and return its result (White's point of view).

    ``rules``: a profile name, :class:`~jiu_env.rules.Rules` or dict of
    options.  ``white``/``black``: :class:`Bot` objects or spec strings (the
    same bot object may play both sides).  ``seed``: when given, both bots
    are restarted with seeds derived from it and the random placement of
    ``start="battle"`` uses it, so the game is reproducible; when ``None`` the
    bots are restarted with their own seeds.  ``start``: ``"placement"`` (a
    new game), ``"battle"`` (a seeded random placement, then the bots fight),
    or a kernel state to continue from (copied, never modified).
    ``max_decisions``: stop after that many decisions (reason
    ``"max_decisions"``, result 0).

    Returns a dict: ``result`` (1 White won, -1 Black won, 0 otherwise),
    ``winner`` (``"white"``, ``"black"``, ``"draw"`` or ``None``), ``reason``
    (``"too_few_stones"``, ``"no_move"``, ``"repetition"``, ``"turn_limit"``
    or ``"max_decisions"``), ``battle_turns``, ``decisions`` (played in this
    call), ``actions`` (list of ints, ``None`` when ``record=False``),
    ``time_white`` / ``time_black`` (seconds spent deciding), ``stones``
    (final counts ``{"white": n, "black": n}``) and ``state`` (the final
    kernel state).  A bot that returns an illegal action raises ValueError.
    """
    r = Rules.make(rules) if not isinstance(rules, Rules) else rules
    if seed is not None:
        seeds = [int(x) for x in np.random.SeedSequence(seed).generate_state(3)]
    else:
        seeds = [None, None, None]
    white = _as_bot(white, seeds[0])
    black = _as_bot(black, seeds[1])
    white.restart(seeds[0])
    if black is not white:
        black.restart(seeds[1])
    if isinstance(start, np.ndarray):
        s = start.copy()
        if s.dtype != np.int64 or s.ndim != 1 or s.size < K.HDR or s[K.H_N] != r.board_size:
            raise ValueError(f"start state does not fit the rules (board size {r.board_size})")
    elif start == "placement":
        s = r.new_state()
    elif start == "battle":
        s = r.new_state()
        ps = seeds[2] if seed is not None else int(np.random.SeedSequence().generate_state(1)[0])
        K.random_placement(s, ps)
    else:
        raise ValueError(f"start must be 'placement', 'battle' or a kernel state, not {start!r}")
    if max_decisions is not None and max_decisions < 0:
        raise ValueError(f"max_decisions must be >= 0 or None, not {max_decisions}")
    players = {K.WHITE: white, K.BLACK: black}
    spent = {K.WHITE: 0.0, K.BLACK: 0.0}
    actions = [] if record else None
    decisions = 0
    stopped = False
    while s[K.H_PHASE] != K.PH_OVER:
        if max_decisions is not None and decisions >= max_decisions:
            stopped = True
            break
        side = int(s[K.H_TO_MOVE])
        t0 = time.perf_counter()
        a = players[side].step(s)
        spent[side] += time.perf_counter() - t0
        if not K.is_legal(s, int(a)):
            name = COLOUR_NAMES[side]
            raise ValueError(f"{players[side]!r} playing {name} chose the illegal action {a} at decision {decisions}")
        K.apply_action(s, int(a))
        decisions += 1
        if record:
            actions.append(int(a))
    w, _ = K.returns(s)
    return {
        "result": int(w),
        "winner": None if stopped else (WINNER_NAMES[int(s[K.H_WINNER])] if s[K.H_WINNER] else None),
        "reason": "max_decisions" if stopped else END_REASON_NAMES[int(s[K.H_END_REASON])],
        "battle_turns": int(s[K.H_TURNS]),
        "decisions": decisions,
        "actions": actions,
        "time_white": spent[K.WHITE],
        "time_black": spent[K.BLACK],
        "stones": {"white": int(s[K.H_COUNT + K.WHITE]), "black": int(s[K.H_COUNT + K.BLACK])},
        "state": s,
    }


__all__ = ["play_game", "policy"]
