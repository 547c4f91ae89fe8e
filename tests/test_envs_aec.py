"""The PettingZoo AEC env: API conformance, observation planes, infos, seeding,
copies, and the handling of bad input (clear errors, game left untouched)."""

import copy
import pickle
import warnings

import numpy as np
import pytest
from pettingzoo.utils import wrappers

from jiu_env.envs.aec import ActionTypeWrapper, TerminateIllegalWrapper

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # pettingzoo.test imports its bundled classic envs
    from pettingzoo.test import api_test, render_test, seed_test

import jiu_env
from jiu_env import PLANE_NAMES, NUM_PLANES, Rules
from jiu_env import kernel as K
from jiu_env.notation import action_to_str

from conftest import BLACK, WHITE, A, act, board_from_text, legal_str, make_env, plain_env, pt


INFO_KEYS = {"phase", "subphase", "stone_counts", "pending_captures", "battle_turn", "to_move", "winner",
             "end_reason"}


def plane(obs, name):
    return obs["observation"][..., PLANE_NAMES.index(name)]


def const(obs, name):
    """Value of a constant plane (asserting it is constant)."""
    p = plane(obs, name)
    assert (p == p.flat[0]).all(), f"plane {name} is not constant"
    return float(p.flat[0])


def snapshot(e):
    raw = e.unwrapped
    return (raw.state.copy(), raw.agent_selection, dict(raw.rewards), dict(raw._cumulative_rewards),
            dict(raw.terminations), dict(raw.truncations), copy.deepcopy(raw.infos), list(raw.agents))


def assert_unchanged(e, snap):
    now = snapshot(e)
    assert (now[0] == snap[0]).all(), "kernel state changed"
    assert now[1:] == snap[1:], "env bookkeeping changed"


def mid_battle_env(seed=3, decisions=25, n=8, **options):
    """A raw env some random decisions into the battle phase."""
    e = jiu_env.raw_env(board_size=n, **options)
    e.reset(seed=seed, options={"start": "battle"})
    rng = np.random.default_rng(seed)
    for _ in range(decisions):
        if e.phase != "battle":
            break
        e.step(int(rng.choice(e.legal_actions())))
    assert e.phase == "battle", "pick a seed whose game is still on"
    return e


CHAIN_BOARD = """
.......
...o...
..o....
xo.o...
.......
.......
....ox.
"""


# ------------------------------------------------------------ PettingZoo
API_WARNINGS = [
    pytest.mark.filterwarnings("ignore:ignoring unknown reset option"),  # api_test probes reset(options={"options": 1})
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably"),  # a Dict space, as for classic games
]


@API_WARNINGS[0]
@API_WARNINGS[1]
def test_api_test_default_rules():
    api_test(jiu_env.env(), num_cycles=300)


@pytest.mark.parametrize("options", [dict(board_size=5), dict(rules="ludii8"), dict(board_size=6, max_battle_turns=5)])
@API_WARNINGS[0]
@API_WARNINGS[1]
def test_api_test_other_rules(options):
    api_test(jiu_env.env(**options), num_cycles=300)


def test_seed_test():
    seed_test(jiu_env.env, num_cycles=300)
    seed_test(lambda: jiu_env.env(board_size=6, max_battle_turns=20), num_cycles=300)


def test_render_test(monkeypatch):
    pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    render_test(lambda render_mode=None: jiu_env.env(render_mode=render_mode, board_size=6))


def test_render_outputs():
    e = jiu_env.env(render_mode="ansi", board_size=6)
    e.reset(seed=1)
    txt = e.render()
    assert "placement" in txt and txt.splitlines()[1].startswith(" a ")
    e = jiu_env.env(render_mode="rgb_array", board_size=6)
    e.reset(seed=1)
    img = e.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    with pytest.raises(ValueError, match="render_mode"):
        jiu_env.env(render_mode="video")


def test_metadata_and_wrappers():
    e = jiu_env.env()
    assert e.metadata["name"] == "jiu_v0"
    assert set(e.metadata["render_modes"]) == {"human", "ansi", "rgb_array"}
    chain = []
    w = e
    while hasattr(w, "env"):
        chain.append(type(w))
        w = w.env
    assert chain == [wrappers.OrderEnforcingWrapper, ActionTypeWrapper, TerminateIllegalWrapper]
    assert issubclass(ActionTypeWrapper, wrappers.AssertOutOfBoundsWrapper)
    assert issubclass(TerminateIllegalWrapper, wrappers.TerminateIllegalWrapper)
    assert isinstance(w, jiu_env.raw_env) and e.unwrapped is w
    assert e.possible_agents == ["white", "black"]


@pytest.mark.parametrize("n", [4, 9, 14, 20])
def test_spaces(n):
    e = jiu_env.env(board_size=n)
    e.reset(seed=0)
    for agent in e.possible_agents:
        sp = e.observation_space(agent)
        assert sp["observation"].shape == (n, n, NUM_PLANES) == (n, n, 21)
        assert sp["observation"].dtype == np.float32
        assert sp["action_mask"].shape == (10 * n * n + 1,) and sp["action_mask"].dtype == np.int8
        assert e.action_space(agent).n == 10 * n * n + 1
        obs = e.observe(agent)
        assert sp.contains(obs)
    assert len(PLANE_NAMES) == NUM_PLANES == 21


@pytest.mark.parametrize("env_fn", [jiu_env.env, jiu_env.raw_env])
def test_an_unknown_agent_is_the_same_value_error_everywhere(env_fn):
    e = env_fn(board_size=6)
    e.reset(seed=0)
    for ask in (e.observe, e.observation_space, e.action_space):
        with pytest.raises(ValueError, match="unknown agent 'red'; the agents are 'white' and 'black'"):
            ask("red")


# ------------------------------------------------------ observation planes
def test_planes_in_placement():
    n = 14
    e = jiu_env.raw_env()
    e.reset(seed=0)
    ow, ob = e.observe("white"), e.observe("black")
    assert plane(ow, "empty").all() and not plane(ow, "own").any() and not plane(ow, "enemy").any()
    assert const(ow, "placement") == 1 and const(ow, "move") == 0
    assert const(ow, "is_white") == 1 and const(ob, "is_white") == 0
    assert const(ow, "to_move") == 1 and const(ob, "to_move") == 0
    ends = np.zeros((n, n))
    ends[6, 6] = ends[7, 7] = 1
    assert (plane(ow, "centre_ends") == ends).all() and (plane(ob, "centre_ends") == ends).all()
    assert not plane(ow, "last_to").any()
    e.step(pt("h7", n))
    ow, ob = e.observe("white"), e.observe("black")
    assert plane(ow, "own")[7, 7] == 1 and plane(ob, "enemy")[7, 7] == 1 and plane(ob, "empty")[7, 7] == 0
    assert plane(ow, "last_to")[7, 7] == 1 and plane(ow, "last_to").sum() == 1
    assert const(ob, "to_move") == 1
    for name in ("turn_progress", "repetition", "own_flying", "enemy_flying", "jump_ban", "pending"):
        assert const(ow, name) == 0


def test_planes_egocentric_and_flying():
    # Black has 2 stones (flying with threshold 3), White 4 (not)
    e = make_env("""
        ......
        .x....
        ......
        ...x..
        ......
        oo..oo
    """, fly_threshold=3, single_jump_ban="vs_flyer", min_stones=0, max_battle_turns=10)
    ob, ow = e.observe("black"), e.observe("white")
    assert (plane(ob, "own") == plane(ow, "enemy")).all() and (plane(ob, "enemy") == plane(ow, "own")).all()
    assert plane(ob, "own")[1, 1] == 1 and plane(ob, "own").sum() == 2
    assert const(ob, "move") == 1 and const(ob, "placement") == 0
    assert const(ob, "own_flying") == 1 and const(ob, "enemy_flying") == 0
    assert const(ow, "own_flying") == 0 and const(ow, "enemy_flying") == 1
    # the ban (vs_flyer) binds White, not Black, and the plane shows the mover's ban
    assert const(ob, "jump_ban") == 0
    assert const(ob, "repetition") == pytest.approx(1 / 3)
    assert const(ob, "turn_progress") == 0
    act(e, "b1-b2")
    ow = e.observe("white")
    assert const(ow, "jump_ban") == 1 and const(ow, "turn_progress") == pytest.approx(0.1)
    assert plane(ow, "last_from")[1, 1] == 1 and plane(ow, "last_to")[1, 2] == 1
    assert plane(ow, "last_from").sum() == 1


def test_planes_chain_drop_capture():
    e = plain_env(CHAIN_BOARD)
    act(e, "d0xd2")
    ob = e.observe("black")
    assert const(ob, "chain") == 1 and const(ob, "move") == 0
    assert plane(ob, "chaining_stone")[3, 2] == 1 and plane(ob, "chaining_stone").sum() == 1
    e = plain_env("""
        .......
        .xxx...
        .x.x...
        .xxx...
        .......
        ....o.o
        x....oo
    """, fly_threshold=10)
    act(e, "^g0")
    ob = e.observe("black")
    assert const(ob, "drop") == 1
    assert plane(ob, "lifted_stone")[6, 0] == 1 and plane(ob, "lifted_stone").sum() == 1
    assert plane(ob, "own")[6, 0] == 1  # the lifted stone is still on its point
    act(e, "c2")
    ob, ow = e.observe("black"), e.observe("white")
    assert const(ob, "capture") == 1 and const(ob, "pending") == 1.0  # 4 squares / 4
    assert const(ow, "pending") == 1.0 and const(ow, "to_move") == 0
    act(e, "f4")
    assert const(e.observe("black"), "pending") == 0.75


def test_planes_after_the_end():
    e = plain_env("""
        ......
        ..o...
        ..x...
        ......
        ......
        ......
    """)
    act(e, "c2xa2")
    assert e.phase == "over"
    for agent in ("white", "black"):
        o = e.observe(agent)
        for name in ("placement", "move", "chain", "drop", "capture", "to_move"):
            assert const(o, name) == 0
        assert not o["action_mask"].any()


# --------------------------------------------------------------- infos
def test_infos_keys_and_values():
    e = jiu_env.raw_env(board_size=6)
    e.reset(seed=0)
    for agent in ("white", "black"):
        assert set(e.infos[agent]) == INFO_KEYS
    i = e.infos["white"]
    assert (i["phase"], i["subphase"], i["winner"], i["end_reason"]) == ("placement", "none", "none", "none")
    assert e.subphase is None  # the accessor keeps its Python value; only infos spell it "none"
    assert e.infos["black"]["to_move"] == "white"
    e = plain_env(CHAIN_BOARD)
    act(e, "d0xd2")
    i = e.infos["white"]
    assert (i["phase"], i["subphase"], i["to_move"], i["battle_turn"]) == ("battle", "chain", "black", 0)
    assert i["stone_counts"] == {"white": 4, "black": 2} == e.stone_counts
    act(e, "stop")
    assert e.infos["black"]["battle_turn"] == 1
    e = plain_env("......\n..o...\n..x...\n......\n......\n......")
    act(e, "c2xa2")
    for agent in ("white", "black"):
        assert set(e.infos[agent]) == INFO_KEYS
        assert e.infos[agent]["winner"] == "black" and e.infos[agent]["end_reason"] == "no_move"
        assert (e.infos[agent]["to_move"], e.infos[agent]["subphase"]) == ("none", "none")


def _check_info(info):
    """Every info value is a plain int or str (nested dicts included), never None."""
    assert set(info) == INFO_KEYS
    for key, value in info.items():
        if isinstance(value, dict):
            assert set(value) == {"white", "black"} and all(type(v) is int for v in value.values()), key
        else:
            assert value is not None and type(value) in (int, str), (key, value)


@pytest.mark.parametrize("seed,options", [(0, dict(board_size=6)), (1, dict(board_size=6, max_battle_turns=3)),
                                          (2, dict(board_size=8, max_battle_turns=40))])
def test_infos_never_none_through_whole_games(seed, options):
    """Walk whole games through placement, battle and the end (a decision or the turn limit)."""
    e = jiu_env.env(**options)
    rng = np.random.default_rng(seed)
    seen = set()
    for game in range(4):
        e.reset(seed=seed * 10 + game)
        for agent in e.agent_iter():
            obs, reward, terminated, truncated, info = e.last()
            for a in e.agents:
                _check_info(e.infos[a])
            _check_info(info)
            seen.add((info["phase"], info["subphase"], info["to_move"] == "none", info["end_reason"]))
            if terminated or truncated:
                assert info["phase"] == "over" and info["to_move"] == "none" and info["subphase"] == "none"
                assert (info["winner"] == "none") == (info["end_reason"] == "turn_limit")
                e.step(None)
            else:
                assert info["to_move"] == agent and info["winner"] == info["end_reason"] == "none"
                e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    phases = {s[0] for s in seen}
    assert phases == {"placement", "battle", "over"}
    if options.get("max_battle_turns") == 3:
        assert ("over", "none", True, "turn_limit") in seen


# ------------------------------------------------------------- seeding
def test_reset_seed_determinism_placement_and_battle():
    a, b = jiu_env.raw_env(board_size=8), jiu_env.raw_env(board_size=8)
    a.reset(seed=11)
    b.reset(seed=11)
    assert (a.state == b.state).all() and (a.state == Rules.make(board_size=8).new_state()).all()
    a.reset(seed=5, options={"start": "battle"})
    b.reset(seed=5, options={"start": "battle"})
    assert (a.state == b.state).all() and a.phase == "battle"
    # unseeded resets continue the seeded stream, identically in both envs
    for _ in range(3):
        a.reset(options={"start": "battle"})
        b.reset(options={"start": "battle"})
        assert (a.state == b.state).all()
    c = jiu_env.raw_env(board_size=8)
    c.reset(seed=6, options={"start": "battle"})
    a.reset(seed=5, options={"start": "battle"})
    assert not (a.board == c.board).all()



def test_reset_seed_is_checked_by_name_and_a_numpy_int_is_a_seed():
    a, b = jiu_env.raw_env(board_size=6), jiu_env.raw_env(board_size=6)
    a.reset(seed=np.int64(3), options={"start": "battle"})  # Gymnasium's seeding takes only a Python int
    b.reset(seed=3, options={"start": "battle"})
    assert (a.state == b.state).all() and a._np_random_seed == 3
    state, rng = a.state.copy(), a._np_random.bit_generator.state
    for bad, exc in ((-1, ValueError), (True, TypeError), (1.5, TypeError), ("3", TypeError)):
        with pytest.raises(exc, match="seed must be an int >= 0 or None, not"):
            a.reset(seed=bad, options={"start": "battle"})
        assert (a.state == state).all() and a._np_random.bit_generator.state == rng  # nothing changed
    a.reset(seed=2**80, options={"start": "battle"})  # any size: Gymnasium takes it


# -------------------------------------------------------------- copies
def _live_envs():
    yield "mid_battle", mid_battle_env()
    e = plain_env(CHAIN_BOARD)
    act(e, "d0xd2")
    assert e.subphase == "chain"
    yield "mid_chain", e


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_copy_round_trip_of_a_live_game(how):
    for name, e in _live_envs():
        twin = pickle.loads(pickle.dumps(e)) if how == "pickle" else copy.deepcopy(e)
        assert (twin.state == e.state).all(), name
        assert twin.agent_selection == e.agent_selection and twin.rules == e.rules
        assert twin.infos == e.infos and twin.rewards == e.rewards
        assert twin.state is not e.state
        snap = snapshot(e)
        # play the copy on: the original does not move
        a = int(twin.legal_actions()[0])
        twin.step(a)
        assert_unchanged(e, snap)
        # and the original played the same way reaches the same state
        e.step(a)
        assert (twin.state == e.state).all()
        # the RNG travels too
        twin.reset(options={"start": "battle"})
        e.reset(options={"start": "battle"})
        assert (twin.state == e.state).all()


def test_copy_of_the_wrapped_env():
    e = jiu_env.env(board_size=6)
    e.reset(seed=4, options={"start": "battle"})
    for _ in range(5):
        e.step(int(e.unwrapped.legal_actions()[0]))
    for twin in (copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
        assert (twin.unwrapped.state == e.unwrapped.state).all()
        snap = snapshot(e)
        twin.step(int(twin.unwrapped.legal_actions()[0]))
        assert_unchanged(e, snap)


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_copy_of_a_finished_game_stays_finished(how):
    # a forfeit ends the game in the env's bookkeeping only (the kernel state is still a live one): a copy
    # must not come back to life from its state, and goes on stepping out its agents as the original does
    e = jiu_env.env(board_size=6)  # the wrapped env: an illegal action forfeits
    e.reset(seed=1)
    e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"] == 0)[0]))
    assert all(e.terminations.values())
    twin = pickle.loads(pickle.dumps(e)) if how == "pickle" else copy.deepcopy(e)
    assert snapshot(twin)[1:] == snapshot(e)[1:] and (twin.unwrapped.state == e.unwrapped.state).all()
    for env in (e, twin):
        env.step(None)
    assert snapshot(twin)[1:] == snapshot(e)[1:] and len(e.unwrapped.agents) == 1
    # a game ended on the board, by the kernel, too
    e = jiu_env.raw_env(board_size=4, min_stones=7)
    e.reset(seed=2, options={"start": "battle"})
    while not all(e.terminations.values()) and not all(e.truncations.values()):
        e.step(int(e.legal_actions()[0]))
    twin = pickle.loads(pickle.dumps(e)) if how == "pickle" else copy.deepcopy(e)
    assert snapshot(twin)[1:] == snapshot(e)[1:]


# ----------------------------------------------------------- bad actions
def _placement_first():
    e = jiu_env.raw_env()
    e.reset()
    return e


def _placement_later():
    e = jiu_env.raw_env()
    e.reset()
    act(e, "g6", "h7", "a0")
    return e


def _move():
    return plain_env("""
        ......
        .xo...
        .x....
        ......
        .o....
        x....o
    """)


def _move_banned():
    # vs_flyer: Black (3 stones, not flying at threshold 2) vs White (2, flying): b1xb3 is a lone single jump
    return make_env("""
        ......
        .xo...
        .x....
        x.....
        ......
        .....o
    """, fly_threshold=2, single_jump_ban="vs_flyer", min_stones=0)


def _chain():
    e = plain_env(CHAIN_BOARD, chain_may_stop=False)
    act(e, "d0xd2")
    return e


def _move_flying():
    return plain_env("......\n.xo...\n......\n......\n......\n.....o", fly_threshold=3)


def _drop():
    e = _move_flying()
    act(e, "^b1")
    return e


def _capture():
    e = plain_env("""
        ......
        .xx...
        .x....
        ..x...
        ......
        ....oo
    """)
    act(e, "d2-c2")
    assert e.subphase == "capture"
    return e


def _over():
    e = plain_env("......\n..o...\n..x...\n......\n......\n......")
    act(e, "c2xa2")
    assert e.phase == "over"
    return e


BAD_ACTIONS = [
    (_placement_first, "a0", "diagonal ends"),
    (_placement_first, "g6-g7", "only POINT"),
    (_placement_first, "g6xg8", "only POINT"),
    (_placement_first, "^g6", "only POINT"),
    (_placement_first, "stop", "only POINT"),
    (_placement_later, "g6", "occupied"),
    (_placement_later, "a0-a1", "only POINT"),
    (_move, "a0", "only STEP, JUMP or LIFT"),
    (_move, "stop", "STOP only ends a jump chain"),
    (_move, "^b1", "not flying-eligible"),
    (_move, "b1-c1", "move"),  # onto its own stone
    (_move, "b1-b2", "move"),  # onto an enemy stone
    (_move, "a0-a1", "move"),  # no stone there
    (_move, "e1-d1", "move"),  # White's stone
    (_move, "c1xa1", "move"),  # over its own stone
    (_move, "c1xc3", "move"),  # over an empty point
    (_move, "step:f0:d", "move"),  # off the board
    (_move, "step:f0:l", "move"),
    (_move, "jump:f0:l", "move"),
    (_move_banned, "b1xb3", "single-jump ban"),
    (_move_flying, "^a0", "move"),  # lift from an empty point
    (_move_flying, "^b2", "move"),  # lift an enemy stone
    (_chain, "stop", "may not stop"),
    (_chain, "d2-e2", "chain"),
    (_chain, "g5xg3", "chain"),  # another stone's jump
    (_chain, "d2xf2", "chain"),  # no stone to jump there
    (_chain, "d2", "only JUMP from the chaining stone or STOP"),
    (_chain, "^d2", "chain"),
    (_drop, "b1", "drop"),  # its own point
    (_drop, "b2", "drop"),  # occupied
    (_drop, "b1-a1", "only POINT"),
    (_drop, "^b1", "only POINT"),
    (_drop, "stop", "only POINT"),
    (_drop, "b1xb3", "only POINT"),
    (_capture, "b1", "capture"),  # own stone
    (_capture, "a0", "capture"),  # empty point
    (_capture, "c2-c3", "only POINT on an enemy stone"),
    (_capture, "stop", "only POINT"),
    (_capture, "b1xd1", "only POINT"),
    (_capture, "^b1", "only POINT"),
]


@pytest.mark.parametrize("build,text,why", BAD_ACTIONS, ids=[f"{b.__name__}-{t}" for b, t, _ in BAD_ACTIONS])
def test_illegal_action_is_a_clear_error_and_changes_nothing(build, text, why):
    e = build()
    a = A(text, e.board_size)
    assert not K.is_legal(e.state, a)
    snap = snapshot(e)
    with pytest.raises(ValueError) as ei:
        e.step(a)
    msg = str(ei.value)
    assert "illegal action" in msg and action_to_str(a, e.board_size) in msg and why in msg
    assert_unchanged(e, snap)


def test_action_after_the_end_is_rejected():
    e = _over()
    assert not any(K.is_legal(e.state, a) for a in range(e.rules.num_actions))
    snap = snapshot(e)
    with pytest.raises(ValueError):
        e.step(0)
    assert_unchanged(e, snap)


@pytest.mark.parametrize("bad", [1.0, "5", True, False, np.float32(3.0), np.float64(3.0), np.bool_(True),
                                 [3], np.array([3]), 3 + 0j, np.array(3.0)])
def test_wrong_action_type_is_a_type_error(bad):
    for e in (_placement_later(), _move()):
        snap = snapshot(e)
        with pytest.raises(TypeError, match="action must be an int"):
            e.step(bad)
        assert_unchanged(e, snap)


def test_none_while_alive_is_a_type_error():
    e = _move()
    snap = snapshot(e)
    with pytest.raises(TypeError, match="None"):
        e.step(None)
    assert_unchanged(e, snap)


@pytest.mark.parametrize("bad", [-1, 10 * 36 + 1, 10**20, np.int64(-5)])
def test_out_of_range_action_is_a_value_error(bad):
    e = _move()
    snap = snapshot(e)
    with pytest.raises(ValueError, match="out of range"):
        e.step(bad)
    assert_unchanged(e, snap)


@pytest.mark.parametrize("kind", [int, np.int64, np.int32, np.int16, np.uint16, lambda a: np.array(a)])
def test_integer_like_actions_are_accepted(kind):
    e = _move()
    a = A("b1-a1", 6)
    e.step(kind(a))
    assert e.board[0, 1] == BLACK


def test_wrapped_env_illegal_action_terminates_with_offender_minus_one():
    e = make_env(_move().board, "black", wrapped=True, fly_threshold=0, single_jump_ban="none", min_stones=0)
    bad = A("stop", 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(bad)
    got = {}
    for agent in e.agent_iter():
        _, reward, term, trunc, _ = e.last()
        assert term
        got[agent] = reward
        e.step(None)
    assert got == {"black": -1.0, "white": 0.0}


def test_wrapped_env_out_of_space_action_fails_the_assertion():
    e = jiu_env.env(board_size=6)
    e.reset(seed=0)
    for bad in (-1, 361):
        with pytest.raises(AssertionError):
            e.step(bad)
    assert e.unwrapped.phase == "placement" and e.unwrapped.state[K.H_DECISIONS] == 0


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), 1.5, "a0", np.array([1, 2]), [3], None])
def test_wrapped_env_names_a_wrong_action_type(bad):
    """The mask lookup of TerminateIllegalWrapper must not see a bool or an array (numpy's "truth value" message)."""
    e = jiu_env.env(board_size=6)
    e.reset(seed=0)
    before = e.unwrapped.state.copy()
    with pytest.raises((TypeError, AssertionError)) as info:
        e.step(bad)
    if bad is not None:
        assert info.type is TypeError and "action must be an int" in str(info.value)
        assert type(bad).__name__ in str(info.value)
    assert np.array_equal(e.unwrapped.state, before)
    e.step(int(np.flatnonzero(e.observe("white")["action_mask"])[0]))  # still playable


# ------------------------------------------------------ bad rules options
BAD_RULES = [
    (dict(rules="blitz"), ValueError, "blitz"),
    (dict(rules=5), TypeError, "rules"),
    (dict(colour="red"), ValueError, "colour"),
    (dict(fly_treshold=3), ValueError, "fly_treshold"),
    (dict(board_size=3), ValueError, "board_size"),
    (dict(board_size=21), ValueError, "board_size"),
    (dict(board_size="8"), TypeError, "board_size"),
    (dict(board_size=8.0), TypeError, "board_size"),
    (dict(board_size=True), TypeError, "board_size"),
    (dict(board_size=None), TypeError, "board_size"),
    (dict(fly_threshold=-1), ValueError, "fly_threshold"),
    (dict(fly_threshold=197), ValueError, "fly_threshold"),
    (dict(fly_threshold=2.5), TypeError, "fly_threshold"),
    (dict(single_jump_ban="sometimes"), ValueError, "single_jump_ban"),
    (dict(single_jump_ban=None), ValueError, "single_jump_ban"),
    (dict(single_jump_ban=1), ValueError, "single_jump_ban"),
    (dict(min_stones=-1), ValueError, "min_stones"),
    (dict(min_stones=99), ValueError, "min_stones"),
    (dict(min_stones="4"), TypeError, "min_stones"),
    (dict(chain_may_stop=1), TypeError, "chain_may_stop"),
    (dict(chain_may_stop="yes"), TypeError, "chain_may_stop"),
    (dict(chain_may_stop=None), TypeError, "chain_may_stop"),
    (dict(repetition_draw=-1), ValueError, "repetition_draw"),
    (dict(repetition_draw=1), ValueError, "repetition_draw"),
    (dict(repetition_draw=2.0), TypeError, "repetition_draw"),
    (dict(max_battle_turns=-1), ValueError, "max_battle_turns"),
    (dict(max_battle_turns=1.5), TypeError, "max_battle_turns"),
    (dict(max_battle_turns=10**7), ValueError, "max_battle_turns"),
]


@pytest.mark.parametrize("kw,exc,name", BAD_RULES, ids=[str(k) for k, _, _ in BAD_RULES])
def test_bad_rules_options_raise_naming_the_problem(kw, exc, name):
    with pytest.raises(exc, match=name):
        jiu_env.env(**kw)
    with pytest.raises(exc, match=name):
        jiu_env.raw_env(**kw)
    kw = dict(kw)
    prof = kw.pop("rules", "competitive")
    with pytest.raises(exc, match=name):
        Rules.make(prof, **kw)


def test_rules_as_object_or_dict():
    r = Rules.make("ludii8", max_battle_turns=50)
    assert jiu_env.raw_env(rules=r).rules == r
    assert jiu_env.raw_env(rules=r.to_dict()).rules == r
    assert r.replace(board_size=10).fly_threshold == 9
    with pytest.raises(ValueError, match="board_sise"):
        r.replace(board_sise=10)


# ---------------------------------------------------- bad reset positions
def _good_board():
    return board_from_text("""
        xx....
        xx....
        ......
        ......
        ....oo
        ....oo
    """)


def _ragged():
    b = _good_board().tolist()
    b[2] = b[2][:4]
    return b


def _full():
    b = np.full((6, 6), WHITE)
    b[0, :] = BLACK
    return b


def _obj_none():
    b = _good_board().astype(object)
    b[2, 2] = None
    return b


BAD_POSITIONS = [
    (dict(board=np.zeros((5, 6), int)), ValueError, "shape"),
    (dict(board=np.zeros((6, 6, 1), int)), ValueError, "shape"),
    (dict(board=_good_board().ravel()), ValueError, "shape"),
    (dict(board=np.where(_good_board() == 2, 3, _good_board())), ValueError, "not 0, 1 or 2"),
    (dict(board=np.where(_good_board() == 2, -1, _good_board())), ValueError, "not 0, 1 or 2"),
    (dict(board=_good_board() * 0.5), ValueError, "whole numbers"),
    (dict(board=np.where(_good_board() == 0, np.nan, _good_board())), ValueError, "whole numbers"),
    (dict(board=_good_board() > 0), ValueError, "dtype"),
    (dict(board=_good_board().astype(str)), ValueError, "dtype"),
    (dict(board=_obj_none()), ValueError, "board"),
    (dict(board=_ragged()), ValueError, "board"),
    (dict(board=np.where(_good_board() == 1, 0, _good_board())), ValueError, "white has no stones"),
    (dict(board=np.where(_good_board() == 2, 0, _good_board())), ValueError, "black has no stones"),
    (dict(board=_full()), ValueError, "no empty point"),
    (dict(board=_good_board(), to_move="red"), ValueError, "to_move"),
    (dict(board=_good_board(), to_move=1), ValueError, "to_move"),
    (dict(board=_good_board(), to_move=None), ValueError, "to_move"),
    (dict(to_move="white"), ValueError, "to_move"),
    (dict(start="middle"), ValueError, "start"),
    (dict(board="xx..oo"), ValueError, "board"),
]


@pytest.mark.parametrize("opts,exc,words", BAD_POSITIONS, ids=[f"{i}-{w}" for i, (_, _, w) in enumerate(BAD_POSITIONS)])
def test_bad_reset_position_raises_and_leaves_the_game(opts, exc, words):
    e = mid_battle_env(n=6, seed=2, decisions=6)
    snap = snapshot(e)
    with pytest.raises(exc) as ei:
        e.reset(options=opts)
    assert words in str(ei.value)
    assert_unchanged(e, snap)


def test_both_sides_below_min_stones_is_rejected():
    b = np.zeros((6, 6), int)
    b[0, 0:3] = WHITE
    b[5, 0:3] = BLACK
    e = mid_battle_env(n=6, seed=2, decisions=6)
    snap = snapshot(e)
    with pytest.raises(ValueError, match="min_stones"):
        e.reset(options={"board": b})
    assert_unchanged(e, snap)
    e2 = jiu_env.raw_env(board_size=6, min_stones=3)
    e2.reset(options={"board": b})  # 3 each is enough for min_stones = 3
    assert e2.phase == "battle"


def test_reset_options_not_a_dict():
    e = mid_battle_env(n=6, seed=2, decisions=6)
    snap = snapshot(e)
    with pytest.raises(TypeError, match="dict"):
        e.reset(options=[("board", _good_board())])
    assert_unchanged(e, snap)


def test_unknown_reset_option_keys_only_warn():
    e = mid_battle_env(n=6, seed=2, decisions=6)
    with pytest.warns(UserWarning, match="options"):
        e.reset(options={"options": 1})
    assert e.phase == "placement" and e.state[K.H_DECISIONS] == 0
    with pytest.warns(UserWarning, match="bord"):
        e.reset(options={"bord": _good_board()})


def test_reset_position_defaults_to_black_and_accepts_lists():
    e = jiu_env.raw_env(board_size=6)
    e.reset(options={"board": _good_board().tolist()})
    assert e.agent_selection == "black" and e.phase == "battle" and e.battle_turns == 0
    assert (e.board == _good_board()).all()
    e.reset(options={"board": _good_board(), "to_move": "white"})
    assert e.agent_selection == "white"
    assert {"e4-d4", "e5-d5", "e4-e3"} <= legal_str(e)


def test_numpy_scalars_are_accepted_as_rules_options():
    r = jiu_env.Rules.make("competitive", board_size=np.int64(8), chain_may_stop=np.bool_(False))
    assert r.board_size == 8 and type(r.board_size) is int
    assert r.chain_may_stop is False and r.fly_threshold == 8


def test_board_with_start_placement_is_rejected():
    e = jiu_env.raw_env(board_size=6)
    e.reset(seed=0)
    before = e.state.copy()
    board = np.zeros((6, 6), int)
    board[0, 0], board[5, 5] = 1, 2
    with pytest.raises(ValueError, match="cannot be combined"):
        e.reset(options={"board": board, "start": "placement"})
    assert np.array_equal(e.state, before)


def test_wrapped_env_judges_an_action_by_the_position_set_after_the_last_observation():
    battle = jiu_env.raw_env(board_size=4)
    battle.reset(seed=0, options={"start": "battle"})
    e = jiu_env.env(board_size=4)
    e.reset(seed=0)
    placement_mask = e.last()[0]["action_mask"]  # the wrapper keeps this mask for the next step
    e.unwrapped.state = battle.state.copy()
    a = int(e.unwrapped.legal_actions()[0])
    assert not placement_mask[a]  # illegal in the position observed, legal in the one set since
    e.step(a)
    assert not any(e.terminations.values()) and e.rewards == {"white": 0.0, "black": 0.0}
    # an illegal action is still the offender's loss
    obs = e.last()[0]
    e.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert all(e.terminations.values()) and -1.0 in e.rewards.values()


def test_wrapped_env_state_action_types_and_none():
    e = jiu_env.env(board_size=4)
    e.reset(seed=0)
    s = e.state()  # PettingZoo's state(): the kernel state (a copy), not a call of the raw env's property
    assert np.array_equal(s, e.unwrapped.state) and s.flags.writeable
    obs = e.last()[0]
    e.step(np.uint64(np.flatnonzero(obs["action_mask"])[0]))  # any numpy integer
    assert e.agent_selection == "black"
    with pytest.raises(TypeError, match="action None is for an agent that is done"):
        e.step(None)
    assert e.agent_selection == "black" and not any(e.terminations.values())


def test_a_state_of_other_rules_is_refused():
    e = jiu_env.raw_env(board_size=8)
    e.reset(seed=0)
    before = e.state.copy()
    with pytest.raises(ValueError, match="other rules than this env's: fly_threshold=8 .state: 7.; "
                                         "single_jump_ban='vs_flyer' .state: 'flyer'."):
        e.state = Rules.make("ludii8").new_state()
    assert np.array_equal(e.state, before)
    e.state = Rules.make("competitive", board_size=8).new_state()  # the env's own rules
    assert e.phase == "placement"
