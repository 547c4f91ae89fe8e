"""The one result type, :class:`jiu_env.Outcome`: built from states of every end reason, its JSON form,
the same outcome from the game loop, the record and the tournament line, and the deprecated old paths."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from jiu_env import GameRecord, Outcome, Rules, kernel as K, outcome_of, play_game
from jiu_env.evaluation import TournamentConfig, make_player, run_game, schedule
from jiu_env.evaluation.tournament import play_task
from jiu_env.outcome import END_REASONS, FORFEIT, STOPPED
from jiu_env.state import game_info
from jiu_env.vocab import BLACK, WHITE

# (rules, seed) of a seeded random-vs-random game that ends by each of the kernel's end reasons
ENDS = {
    "too_few_stones": ({"board_size": 4}, 0),
    "no_move": ({"board_size": 4, "min_stones": 0, "fly_threshold": 0}, 0),
    "repetition": ({"board_size": 4}, 21),
    "turn_limit": ({"board_size": 6, "max_battle_turns": 30}, 0),
}


@pytest.mark.parametrize("reason", sorted(ENDS))
def test_outcome_of_every_end_reason(reason):
    rules, seed = ENDS[reason]
    g = play_game(rules, "random", "random", seed=seed)
    s = g.state
    o = outcome_of(s)
    assert o is not None and o.end_reason == reason
    assert o.battle_turns == s[K.H_TURNS] and o.decisions == s[K.H_DECISIONS]
    w = int(s[K.H_WINNER])
    assert o.winner == (w if w in (WHITE, BLACK) else None)
    assert o.draw == (w == K.DRAW) and o.truncated == bool(s[K.H_TRUNC])
    assert o.returns == K.returns(s)
    assert o.score_for(WHITE) == g.score_white and o.score_for(WHITE) + o.score_for(BLACK) == 1.0
    assert o.result() == {WHITE: "1-0", BLACK: "0-1"}.get(o.winner, "1/2-1/2" if o.draw else "*")
    # the infos' strings are its spellings; GameResult's fields are derived from it
    info = game_info(s)
    assert (info["winner"], info["end_reason"]) == (o.winner_name, o.end_reason)
    assert g.outcome == o and g.winner == o.to_dict()["winner"] and g.end_reason == reason
    assert g.result == int(o.reward_for(WHITE))
    # JSON round trip, and the record's outcome is the same
    d = json.loads(json.dumps(o.to_dict()))
    assert Outcome.from_dict(d) == o
    assert g.record.outcome == o
    assert Outcome.from_dict(GameRecord.from_json(g.record.to_json()).result) == o


def test_game_on_has_no_outcome():
    s = Rules.make("competitive", board_size=6).new_state()
    assert outcome_of(s) is None
    info = game_info(s)
    assert info["winner"] == "none" and info["end_reason"] == "none"
    with pytest.raises(ValueError, match="kernel state"):
        outcome_of(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="kernel state"):
        outcome_of(s.astype(np.int32))


def test_game_loop_outcomes_of_a_forfeit_and_a_stop():
    r = Rules.make("competitive", board_size=6)
    g = play_game(r, lambda s: 10**6, "random", seed=1, on_illegal="forfeit")
    assert g.outcome == Outcome(winner=BLACK, end_reason=FORFEIT, battle_turns=0, decisions=0)
    assert g.record.outcome == g.outcome  # the record knows the forfeit from meta["forfeit"]
    assert g.outcome.result() == "0-1" and g.outcome.winner_name == "black"
    cut = play_game(r, "random", "random", seed=1, max_decisions=10, record=False)
    assert cut.outcome == Outcome(winner=None, end_reason=STOPPED, battle_turns=0, decisions=10)
    assert cut.outcome.result() == "*" and not cut.outcome.draw and cut.outcome.score_for(WHITE) == 0.5
    assert cut.winner is None and cut.result == 0


def test_run_game_record_and_tournament_line_agree():
    rules = {"board_size": 5, "max_battle_turns": 40}
    cfg = TournamentConfig(players=["random", "b=greedy"], games=2, seed=5, rules=rules)
    for task in schedule(cfg):
        line = json.loads(json.dumps(play_task(task)))
        assert "outcome" not in line  # the line keeps its format: the outcome is its winner/end_reason/counts
        # the same game as play_task plays it
        white, black = make_player(task.white_spec, seed=task.white_seed), make_player(task.black_spec,
                                                                                      seed=task.black_seed)
        r = run_game(task.rules, white, black, seed=task.seed, random_opening=task.random_opening,
                     players={"white": task.white_spec, "black": task.black_spec}, opening=task.opening)
        assert r["record"].to_dict(moves=False) == line["record"]
        o = r["outcome"]
        assert isinstance(o, Outcome)
        assert Outcome.from_dict(line) == o == r["record"].outcome == outcome_of(r["record"].replay())
        assert line["score_white"] == o.score_for(WHITE) and line["truncated"] == o.truncated


def test_construction_checks():
    Outcome(WHITE, "no_move", 3, 40)
    Outcome(None, "repetition", 3, 40)
    Outcome(np.int64(BLACK), "too_few_stones", np.int64(2), 30)
    with pytest.raises(TypeError, match="colour_of"):
        Outcome("white", "no_move", 3, 40)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="WHITE"):
        Outcome(3, "no_move", 3, 40)
    with pytest.raises(ValueError, match="WHITE"):
        Outcome(True, "no_move", 3, 40)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="end_reason must be one of"):
        Outcome(WHITE, "none", 3, 40)
    with pytest.raises(ValueError, match="has a winner"):
        Outcome(None, "no_move", 3, 40)
    with pytest.raises(ValueError, match="has no winner"):
        Outcome(WHITE, "repetition", 3, 40)
    with pytest.raises(ValueError, match="^battle_turns must be an int >= 0, not -1$"):
        Outcome(WHITE, "no_move", -1, 40)
    with pytest.raises(TypeError, match="^decisions must be an int >= 0, not bool True$"):
        Outcome(WHITE, "no_move", 3, True)
    with pytest.raises(ValueError, match="WHITE"):
        Outcome(WHITE, "no_move", 3, 40).score_for(0)
    assert set(END_REASONS) == {"too_few_stones", "no_move", "repetition", "turn_limit", FORFEIT, STOPPED}
    o = Outcome(WHITE, "no_move", 3, 40)
    with pytest.raises(AttributeError):
        o.winner = BLACK  # type: ignore[misc]  # frozen
    assert hash(o) == hash(Outcome(WHITE, "no_move", 3, 40))
    assert str(o) == "white wins (no_move) after 3 battle turns"


def test_from_dict_checks():
    good = {"winner": "draw", "end_reason": "repetition", "battle_turns": 5, "decisions": 40}
    assert Outcome.from_dict(good).draw
    with pytest.raises(ValueError, match="missing"):
        Outcome.from_dict({"winner": "white"})
    with pytest.raises(ValueError, match="not over"):
        Outcome.from_dict({**good, "winner": None, "end_reason": None})
    for spelling in ("none", ""):  # None is the one spelling of "no winner"
        with pytest.raises(ValueError, match="winner must be"):
            Outcome.from_dict({**good, "winner": spelling, "end_reason": "turn_limit"})
    with pytest.raises(ValueError, match="does not fit"):
        Outcome.from_dict({**good, "winner": None})
    with pytest.raises(ValueError, match="does not fit"):
        Outcome.from_dict({**good, "winner": "draw", "end_reason": "turn_limit"})
    with pytest.raises(TypeError, match="mapping"):
        Outcome.from_dict([1, 2])  # type: ignore[arg-type]


def test_unfinished_record_has_no_outcome():
    rules = Rules.make("competitive", board_size=6)
    cut = play_game(rules, "random", "random", seed=2, max_decisions=12)
    assert cut.record.result["over"] is False and cut.record.outcome is None


def test_game_result_dict_access_is_deprecated():
    g = play_game({"board_size": 5}, "greedy", "random", seed=1)
    with pytest.warns(DeprecationWarning, match=r"g\['reason'\].*g\.outcome"):
        assert g["reason"] == g.end_reason
    with pytest.warns(DeprecationWarning, match="attributes"):
        assert g["time_white"] == g.time["white"]
    with pytest.warns(DeprecationWarning):
        assert g.get("nothing", 7) == 7
    with pytest.warns(DeprecationWarning):
        assert "stones" in g and "outcome" not in g.keys()
    with pytest.warns(DeprecationWarning):
        assert "record" in list(g)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g.winner, g.outcome, g.record  # noqa: B018  (attributes do not warn)


def test_env_helpers_are_deprecated():
    from jiu_env.envs.common import outcome, winner_or_none

    g = play_game({"board_size": 4}, "random", "random", seed=21)  # a repetition draw
    with pytest.warns(DeprecationWarning, match="outcome_of"):
        assert winner_or_none(g.state) == "draw"
    with pytest.warns(DeprecationWarning, match="reward_for"):
        assert outcome(g.state, WHITE) == 0.0
    g = play_game({"board_size": 4}, "random", "random", seed=0)
    with pytest.warns(DeprecationWarning):
        assert outcome(g.state, g.outcome.winner) == 1.0


def test_envs_give_the_outcome():
    from jiu_env.envs.aec import raw_env
    from jiu_env.envs.single_agent import JiuVsBotEnv

    env = raw_env(board_size=4)
    env.reset(seed=3)
    assert env.outcome is None and env.winner is None
    rng = np.random.default_rng(0)
    final = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            final[agent] = (reward, info)
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    o = env.outcome
    assert o is not None and o == outcome_of(env.state)
    assert env.winner == o.to_dict()["winner"]
    for agent, colour in (("white", WHITE), ("black", BLACK)):
        reward, info = final[agent]
        assert (info["winner"], info["end_reason"], reward) == (o.winner_name, o.end_reason, o.reward_for(colour))

    e = JiuVsBotEnv(board_size=4)
    _, info = e.reset(seed=1)
    assert e.outcome is None
    illegal = int(np.flatnonzero(~e.action_masks().astype(bool))[0])
    _, reward, term, _, info = e.step(illegal)
    o = e.outcome
    assert term and o is not None and o.end_reason == FORFEIT and o.winner == 3 - e.colour
    assert (info["winner"], info["end_reason"], info["outcome"]) == (o.winner_name, o.end_reason, -1.0) == (
        o.winner_name, FORFEIT, o.reward_for(e.colour))
    e.reset(seed=2)
    assert e.outcome is None
    done = False
    while not done:
        _, _, term, trunc, info = e.step(int(np.flatnonzero(e.action_masks())[0]))
        done = term or trunc
    o = e.outcome
    assert o is not None and info["outcome"] == o.reward_for(e.colour) and info["winner"] == o.winner_name
