"""Play bots against each other on kernel states, or against anything through PettingZoo.

Two bots, one game::

    from jiu_env.bots import make_bot
    from jiu_env.bots.match import play_game

    g = play_game("competitive", make_bot("greedy"), make_bot("random"), seed=3)
    g.result, g.winner, g.end_reason, g.battle_turns

:func:`play_game` is the package's one game loop (:mod:`jiu_env.game`),
re-exported here.

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

from ..game import GameResult, play_game  # noqa: F401  (the one game loop, re-exported here)
from . import make_bot


def policy(bot, seed=None):
    """``policy(env) -> action`` playing ``bot`` (a :class:`Bot` or a spec string) for the agent to move."""
    return make_bot(bot, seed=seed).policy()


__all__ = ["play_game", "policy", "GameResult"]
