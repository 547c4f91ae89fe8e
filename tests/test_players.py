"""The player registry (jiu_env/players.py) and the Bot protocol's seeds."""

import pytest

from jiu_env.players import make_player


def test_a_bots_seed_is_checked_before_it_changes_and_an_objects_seed_is_used():
    """Bot.restart(seed) checks the seed first (numpy's error left the bot unusable: every later restart
    raised); make_player(bot, seed=...) restarts the bot with that seed (it was ignored)."""
    from jiu_env.bots.greedy import GreedyBot

    bot = make_player("greedy", seed=1)
    for bad, error in ((-1, ValueError), (True, TypeError), (1.0, TypeError), ("1", TypeError)):
        with pytest.raises(error, match="seed must be an int >= 0"):
            bot.restart(seed=bad)
        assert bot.seed == 1
    bot.restart()  # still usable
    with pytest.raises(ValueError, match="seed must be an int >= 0 or None"):
        GreedyBot(seed=-3)
    obj = GreedyBot(seed=1)
    assert make_player(obj, seed=2) is obj and obj.seed == 2
    assert make_player(obj) is obj and obj.seed == 2
