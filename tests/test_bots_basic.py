"""The simple built-in opponents (random, greedy, pattern) and the match runner."""

import numpy as np
import pytest

import jiu_env
from jiu_env import kernel as K
from jiu_env import position_state, str_to_action, str_to_point
from jiu_env.bots import make_bot
from jiu_env.bots.greedy import GreedyBot, greedy_action, scratch_state, walk_next, walk_start
from jiu_env.bots.match import play_game, policy
from jiu_env.bots.pattern import PatternBot, attack_scores, defence_scores
from jiu_env.bots.random_bot import RandomBot
from jiu_env.outcome import outcome_of
from jiu_env.rules import Rules

NAMES = ("random", "greedy", "pattern")

# Rule sets the positions are drawn from: the profiles on several sizes plus
# options that change what a turn may contain.
RULESETS = [
    Rules.make("competitive", board_size=6),
    Rules.make("ludii8"),
    Rules.make("traditional", board_size=8, chain_may_stop=False),
    Rules.make("competitive", board_size=8, single_jump_ban="both"),
    Rules.make("competitive"),
]


def _legal(s):
    buf = np.empty(10 * int(s[K.H_P]) + 1, np.int64)
    return buf[:K.legal_actions(s, buf)]


def _kind(s):
    """A label for the decision a state asks for."""
    if s[K.H_PHASE] == K.PH_PLACEMENT:
        return "opening" if s[K.H_PLACED] < 2 else "placement"
    sub = ("move", "chain", "drop", "capture")[int(s[K.H_SUB])]
    if sub == "move" and s[K.H_FLY_NOW]:
        return "fly-move"
    if sub == "move" and s[K.H_BAN_NOW]:
        return "ban-move"
    return sub


def random_positions(rules, seed, games=3, per_kind=6):
    """Positions of every kind met in seeded random games (at most ``per_kind`` of each per game)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(games):
        s = rules.new_state()
        seen = {}
        while s[K.H_PHASE] != K.PH_OVER:
            kind = _kind(s)
            acts = _legal(s)
            if seen.get(kind, 0) < per_kind and rng.random() < (0.05 if kind == "placement" else 0.3):
                seen[kind] = seen.get(kind, 0) + 1
                out.append(s.copy())
            K.apply_action(s, acts[rng.integers(acts.size)])
    return out


@pytest.fixture(scope="module")
def positions():
    return {r.board_size * 100 + i: random_positions(r, 11 + i) for i, r in enumerate(RULESETS)}


def test_positions_cover_every_kind_of_decision(positions):
    kinds = {_kind(s) for ps in positions.values() for s in ps}
    assert kinds >= {"opening", "placement", "move", "chain", "drop", "capture", "fly-move", "ban-move"}
    assert {int(s[K.H_N]) for ps in positions.values() for s in ps} == {6, 8, 14}


@pytest.mark.parametrize("name", NAMES)
def test_bots_play_only_legal_actions_and_never_touch_the_state(name, positions):
    bot = make_bot(name, seed=5)
    for ps in positions.values():
        for s in ps:
            before = s.copy()
            a = bot.step(s)
            assert isinstance(a, int)
            assert K.is_legal(s, a), (name, _kind(s), a)
            np.testing.assert_array_equal(s, before)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [5, 6, 8])
def test_bots_finish_whole_games_against_themselves(name, n):
    g = play_game(Rules.make("competitive", board_size=n), make_bot(name), make_bot(name), seed=n)
    assert g.state[K.H_PHASE] == K.PH_OVER
    assert g.outcome == outcome_of(g.state)  # the rules ended it (no forfeit, no stop): its winner is the state's
    assert g.decisions == len(g.actions or []) >= n * n


# ------------------------------------------------------------ seeding
@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_game(name):
    r = Rules.make("competitive", board_size=8)
    a = play_game(r, make_bot(name, seed=1), make_bot("random", seed=2), seed=None)
    b = play_game(r, make_bot(name, seed=1), make_bot("random", seed=2), seed=None)
    assert a.actions == b.actions
    c = play_game(r, make_bot(name), make_bot("random"), seed=7)
    d = play_game(r, make_bot(name), make_bot("random"), seed=7)
    assert c.actions == d.actions
    e = play_game(r, make_bot(name), make_bot("random"), seed=8)
    assert e.actions != c.actions


@pytest.mark.parametrize("name", NAMES)
def test_restart_reproduces_and_the_seed_matters(name, positions):
    states = positions[800 + 1] + positions[1400 + 4]
    bot = make_bot(name, seed=3)
    first = [bot.step(s) for s in states]
    bot.restart()
    assert [bot.step(s) for s in states] == first
    bot.restart(seed=4)
    other = [bot.step(s) for s in states]
    bot.restart(seed=3)
    assert [bot.step(s) for s in states] == first
    # placements have many equal choices: a different seed must break ties differently
    assert other != first


def test_random_bot_is_uniform():
    r = Rules.make("competitive", board_size=6)
    s = r.new_state()
    K.apply_action(s, _legal(s)[0])
    K.apply_action(s, _legal(s)[0])
    acts = _legal(s)  # 34 empty points
    bot = RandomBot(seed=0)
    counts = np.bincount([bot.step(s) for _ in range(6800)], minlength=36)[acts]
    assert counts.min() > 140 and counts.max() < 260  # expected 200 each


# ------------------------------------------------------------ errors and registry
@pytest.mark.parametrize("name", NAMES)
def test_finished_game_and_bad_states_raise(name):
    bot = make_bot(name, seed=0)
    g = play_game(Rules.make("competitive", board_size=5), "random", "random", seed=0)
    with pytest.raises(ValueError, match="over"):
        bot.step(g.state)
    with pytest.raises(TypeError):
        bot.step(np.zeros(10))
    with pytest.raises(ValueError):
        bot.step(Rules.make("competitive", board_size=6).new_state()[:-3])


def test_make_bot_names_and_parameters():
    for name, cls in zip(NAMES, (RandomBot, GreedyBot, PatternBot)):
        bot = make_bot(name, seed=9)
        assert type(bot) is cls and bot.name == name and bot.seed == 9 and bot.PARAMS == {}
    with pytest.raises(ValueError, match="unknown parameter"):
        make_bot("greedy:depth=2")
    with pytest.raises(ValueError, match="unknown bot"):
        make_bot("greedier")


# ------------------------------------------------------------ the turn walker
def _reference_turns(s, mover, phase):
    """Every sequence of decisions that finishes the turn's move part (plain Python over the kernel)."""
    out = []
    for a in _legal(s):
        t = s.copy()
        K.apply_action(t, a)
        a = int(a)
        if t[K.H_PHASE] != phase or t[K.H_TO_MOVE] != mover or (t[K.H_PHASE] == K.PH_BATTLE and t[K.H_SUB] == K.SUB_CAPTURE):
            out.append(((a,), t[K.HDR:K.HDR + t[K.H_P]].tobytes()))
        else:
            out += [((a,) + p, b) for p, b in _reference_turns(t, mover, phase)]
    return out


def _walked_turns(s):
    """(actions, final board) of every way the turn walker finishes the turn of s."""
    ctx = walk_start(s)
    got = []
    while (row := walk_next(*ctx)) >= 0:
        st = ctx[0][row]
        got.append((tuple(int(a) for a in ctx[3][:row]), st[K.HDR:K.HDR + st[K.H_P]].tobytes()))
    return got


def test_walker_enumerates_every_way_to_finish_the_turn(positions):
    checked = set()
    for ps in (positions[600], positions[800 + 1], positions[800 + 2], positions[800 + 3]):
        for s in ps:
            if s[K.H_PHASE] != K.PH_BATTLE or s[K.H_SUB] == K.SUB_CAPTURE:
                continue
            checked.add(_kind(s))
            got = _walked_turns(s)
            assert sorted(got) == sorted(_reference_turns(s, s[K.H_TO_MOVE], s[K.H_PHASE]))
            assert len(set(p for p, _ in got)) == len(got)
    assert checked >= {"move", "chain", "drop", "fly-move", "ban-move"}


OPTION_RULESETS = [
    Rules.make("jqchess8", board_size=6),
    Rules.make("competitive", board_size=6, min_stones_check="turn_end", square_on_return=True),
    Rules.make("traditional", board_size=5, formations=True, flyer_moves="fly_only"),
]


@pytest.mark.parametrize("i", range(len(OPTION_RULESETS)))
def test_walker_and_simple_bots_under_the_rules_options(i):
    # every way to finish a turn, and legal untouched play of the simple bots, under docs/rules.md §8-§9 options
    kinds = set()
    bots = [make_bot(name, seed=i) for name in NAMES]
    for s in random_positions(OPTION_RULESETS[i], 70 + i, games=2, per_kind=3):
        before = s.copy()
        for bot in bots:
            assert K.is_legal(s, bot.step(s)) and np.array_equal(s, before)
        if s[K.H_PHASE] != K.PH_BATTLE or s[K.H_SUB] == K.SUB_CAPTURE:
            continue
        kinds.add(_kind(s))
        got = _walked_turns(s)
        assert sorted(got) == sorted(_reference_turns(s, s[K.H_TO_MOVE], s[K.H_PHASE]))
    assert {"move", "fly-move"} <= kinds


def test_greedy_threats_follow_fly_only():
    from jiu_env.bots.greedy import jump_threats
    # White (2 stones, flying at threshold 2) could jump b1 -- unless a flyer may only fly
    board = _board(["W B . . . .", ". . . . . .", ". . . . . .", ". . . . . .", ". . . . . .", "B B . . . W"])
    mark = np.zeros(36, np.int64)
    for moves, threats in (("all", 1), ("fly_only", 0)):
        r = Rules.make("competitive", board_size=6, fly_threshold=2, min_stones=0, single_jump_ban="none",
                       flyer_moves=moves)
        s = position_state(r, board, "black")
        assert jump_threats(s, K.WHITE, mark) == threats


def test_scratch_copy_plays_like_the_state():
    r = Rules.make("competitive", board_size=6)
    s = r.new_state()
    K.random_placement(s, 3)
    t = scratch_state(s)
    rng = np.random.default_rng(0)
    for _ in range(30):
        if s[K.H_PHASE] == K.PH_OVER:
            break
        acts = _legal(s)
        np.testing.assert_array_equal(_legal(t), acts)
        a = acts[rng.integers(acts.size)]
        K.apply_action(s, a)
        K.apply_action(t, a)
        assert t[K.H_HASH] == s[K.H_HASH]


# ------------------------------------------------------------ behaviour on built positions
def _rules6():
    return Rules.make("competitive", board_size=6, fly_threshold=0, min_stones=0)


def _board(rows):
    return np.array([[".WB".index(ch) for ch in row.split()] for row in rows])


def _a(text, n=6):
    return str_to_action(text, n)


@pytest.mark.parametrize("name", ["greedy", "pattern"])
def test_takes_a_jump(name):
    s = position_state(_rules6(), _board([
        ". . . . . .",
        ". W B . . .",
        ". . . . . .",
        ". . . . . W",
        ". . . . . W",
        "B . . . . .",
    ]), "white")
    assert make_bot(name, seed=0).step(s) == _a("b1xb3")


@pytest.mark.parametrize("name", ["greedy", "pattern"])
def test_completes_a_square(name):
    s = position_state(_rules6(), _board([
        "B . . . . B",
        ". . . . . .",
        ". . W W . .",
        ". . W . . .",
        ". . . W . .",
        "B . . . . B",
    ]), "white")
    assert make_bot(name, seed=0).step(s) == _a("e3-d3")


@pytest.mark.parametrize("name", ["greedy", "pattern"])
def test_continues_a_chain(name):
    s = position_state(_rules6(), _board([
        ". . . . . .",
        "W B . B . .",
        ". . . . . .",
        ". . . . . W",
        ". . . . . .",
        ". . . B . .",
    ]), "white")
    bot = make_bot(name, seed=0)
    a = bot.step(s)
    assert a == _a("b0xb2")
    K.apply_action(s, a)
    assert s[K.H_SUB] == K.SUB_CHAIN
    assert bot.step(s) == _a("b2xb4")


def _capture_state(rows):
    """White completes the square c2 c3 d2 d3 with e3-d3 and has one capture to choose."""
    s = position_state(_rules6(), _board(rows), "white")
    K.apply_action(s, _a("e3-d3"))
    assert s[K.H_SUB] == K.SUB_CAPTURE and s[K.H_PENDING] == 1
    return s


SQUARE_ROWS = [". . W W . .", ". . W . . .", ". . . W . ."]


def test_greedy_captures_the_stone_that_threatens():
    # f0 can jump f1 (into f2); f5 threatens nothing
    s = _capture_state([". . . . . .", ". . . . . .", *SQUARE_ROWS, "B W . . . B"])
    for seed in range(5):
        assert make_bot("greedy", seed=seed).step(s) == str_to_point("f0", 6)
        assert make_bot("pattern", seed=seed).step(s) == str_to_point("f0", 6)
    # a4 a5 b5 is a black near-square with its gap b4, which c4 can fill next turn:
    # any of those four breaks the threat, f5 does not
    s = _capture_state([". . . . B B", ". . . . . B", ". . W W B .", ". . W . . .", ". . . W . .",
                        ". . . . . B"])
    threat = {str_to_point(p, 6) for p in ("a4", "a5", "b5", "c4")}
    picks = {make_bot("greedy", seed=seed).step(s) for seed in range(8)}
    assert picks <= threat and len(picks) > 1


def test_pattern_breaks_enemy_squares_first():
    s = _capture_state(["B B . . . .", "B B . . . .", *SQUARE_ROWS, ". . . . . B"])
    square = {str_to_point(p, 6) for p in ("a0", "a1", "b0", "b1")}
    for seed in range(5):
        assert make_bot("pattern", seed=seed).step(s) in square


def test_greedy_does_not_step_into_a_jump():
    # e2-d2 would let c2 jump it; the other three steps are safe
    s = position_state(_rules6(), _board([
        ". . . . . .",
        ". . . . . .",
        ". . B . . .",
        ". . . . . .",
        ". . W . . .",
        ". . . . . .",
    ]), "white")
    for seed in range(8):
        assert make_bot("greedy", seed=seed).step(s) != _a("e2-d2")


# ------------------------------------------------------------ placement
def _placement_state(rules, white, black):
    """Alternate placements: ``white[0]``, ``black[0]``, ``white[1]``... (point names)."""
    n = rules.board_size
    s = rules.new_state()
    for i in range(max(len(white), len(black))):
        for side in (white, black):
            if i < len(side):
                a = str_to_point(side[i], n)
                assert K.is_legal(s, a)
                K.apply_action(s, a)
    return s


def test_pattern_defence_formations():
    r = Rules.make("competitive", board_size=8)
    # black: trinity a0 a1 a2, triangle g6 g7 h7, and c0 d1 clamping the white d0
    s = _placement_state(r, ["d3", "d0", "h0", "h2", "f2", "b5", "b7", "e6", "f0"],
                         ["e4", "a0", "a1", "a2", "g6", "g7", "h7", "c0", "d1"])
    assert s[K.H_TO_MOVE] == K.WHITE
    out = np.zeros(64, np.int64)
    defence_scores(s, K.WHITE, out)
    expect = np.zeros(64, np.int64)
    expect[str_to_point("b1", 8)] = 5  # trinity: the point beside the middle stone
    expect[str_to_point("h6", 8)] = 4  # triangle: the gap
    expect[str_to_point("c1", 8)] = 3  # contrast: diagonal to the clamped stone
    np.testing.assert_array_equal(out, expect)
    assert PatternBot(seed=0).step(s) == str_to_point("b1", 8)


def test_pattern_attack_and_chain():
    r = Rules.make("competitive", board_size=8)
    s = _placement_state(r, ["d3", "g1", "g2"], ["e4", "a7", "a5"])
    out = np.zeros(64, np.int64)
    defence_scores(s, K.WHITE, out)
    assert not out.any()
    attack_scores(s, K.WHITE, out)
    twain = {str_to_point(p, 8) for p in ("g0", "g3", "f1", "f2", "h1", "h2")}
    assert set(np.flatnonzero(out)) == twain and set(out[list(twain)]) == {5}
    assert PatternBot(seed=0).step(s) == str_to_point("f2", 8)  # the twain point nearest the centre
    # nothing to defend or attack: a point next to the own last stone, nearest the centre
    s = _placement_state(r, ["d3"], ["e4"])
    picks = {PatternBot(seed=k).step(s) for k in range(12)}
    assert picks == {str_to_point("d4", 8), str_to_point("e3", 8)}


def test_greedy_placement_blocks_and_builds():
    r = Rules.make("competitive", board_size=8)
    s = _placement_state(r, ["d3", "a7", "a5", "c7"], ["e4", "g6", "g7", "h7"])
    assert GreedyBot(seed=0).step(s) == str_to_point("h6", 8)  # the gap of the black near-square
    s = _placement_state(r, ["d3", "a0", "a1", "b0"], ["e4", "h7", "h5", "f7"])
    assert GreedyBot(seed=0).step(s) == str_to_point("b1", 8)  # the own square


def test_greedy_action_is_a_pure_function():
    # the action depends on the state and the seed only: the state is not modified, no calls in between
    # (other seeds) change it, and a fresh copy of the state gives the same action
    r = Rules.make("competitive", board_size=8)
    battle = r.new_state()
    K.random_placement(battle, 4)
    placement = r.new_state()
    for a in (27, 36, 28):
        K.apply_action(placement, a)
    for s in (battle, placement):
        before = s.copy()
        first = greedy_action(s, 123)
        assert K.is_legal(before, first)
        np.testing.assert_array_equal(s, before)
        for seed in range(5):
            greedy_action(s, seed)
        assert greedy_action(s, 123) == first
        assert greedy_action(before.copy(), 123) == first
        np.testing.assert_array_equal(s, before)


# ------------------------------------------------------------ strength
def _score(name, opp, rules, games, start):
    wins = 0
    for g in range(games):
        if g % 2 == 0:
            wins += play_game(rules, make_bot(name), make_bot(opp), seed=g, start=start).result == 1
        else:
            wins += play_game(rules, make_bot(opp), make_bot(name), seed=g, start=start).result == -1
    return wins


def test_greedy_beats_random_every_time():
    assert _score("greedy", "random", Rules.make("competitive", board_size=8), 20, "battle") == 20


@pytest.mark.parametrize("on_return", [False, True])
def test_pattern_scores_a_chain_back_on_its_origin_by_its_squares_under_square_on_return(on_return):
    from conftest import act, plain_env, pt
    from test_rules import LOOP_BOARD

    from jiu_env.bots.pattern import pattern_eva

    e = plain_env(LOOP_BOARD, square_on_return=on_return)
    base = int(e.state[K.H_COUNT + K.WHITE])
    act(e, "c2xc4", "c4xe4", "e4xe2", "e2xc2")  # four white stones jumped, back on c2 in its square
    assert int(e.state[K.H_LAST_FROM]) == int(e.state[K.H_LAST_TO]) == pt("c2", 7)
    assert pattern_eva(e.state, K.BLACK, base) == 40 + (10 if on_return else 0)


def test_pattern_beats_random_clearly():
    assert _score("pattern", "random", Rules.make("competitive", board_size=8), 20, "placement") >= 18


# ------------------------------------------------------------ match runner
def test_play_game_fields_and_options():
    r = Rules.make("competitive", board_size=6)
    g = play_game(r, "greedy", "random", seed=1)
    assert g.result == {"white": 1, "black": -1}.get(g.winner or "", 0)
    assert g.end_reason in ("too_few_stones", "no_move", "repetition", "turn_limit")
    assert g.battle_turns == g.state[K.H_TURNS] and g.time["white"] > 0 and g.time["black"] > 0
    # replaying the actions gives the same final state
    s = r.new_state()
    assert g.actions is not None
    for a in g.actions:
        assert K.is_legal(s, a)
        K.apply_action(s, a)
    np.testing.assert_array_equal(s, g.state)
    cut = play_game(r, "random", "random", seed=1, max_decisions=10, record=False)
    assert cut.end_reason == "max_decisions" and cut.decisions == 10 and cut.actions is None
    assert cut.result == 0 and cut.winner is None
    # continuing from a given state leaves it alone
    start = cut.state.copy()
    g2 = play_game(r, "pattern", "greedy", seed=2, start=start)
    np.testing.assert_array_equal(start, cut.state)
    assert g2.state[K.H_PHASE] == K.PH_OVER
    b = play_game(r, "random", "random", seed=3, start="battle")
    assert b.actions[0] >= 36  # the placement was drawn, not played: the first action is a move
    assert play_game(r, "random", "random", seed=3, start="battle").actions == b.actions
    assert play_game(r, "random", "random", seed=4, start="battle").actions != b.actions
    with pytest.raises(ValueError, match="start"):
        play_game(r, "random", "random", start="middle")
    with pytest.raises(ValueError, match="max_decisions"):
        play_game(r, "random", "random", max_decisions=-1)


def test_play_game_rejects_an_illegal_bot():
    class Cheat(RandomBot):
        def _choose(self, state):
            return 10 * int(state[K.H_P])  # STOP is never legal in the placement phase

    with pytest.raises(ValueError, match="illegal"):
        play_game("competitive", Cheat(seed=0), "random", seed=0)


def test_same_bot_can_play_both_sides():
    bot = make_bot("greedy", seed=0)
    a = play_game({"board_size": 6}, bot, bot, seed=4)
    b = play_game({"board_size": 6}, bot, bot, seed=4)
    assert a.actions == b.actions


def test_policy_drives_the_pettingzoo_env():
    env = jiu_env.env(board_size=6)
    env.reset(seed=0)
    players = {"white": policy("greedy", seed=0), "black": policy(make_bot("pattern", seed=0))}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            action = None
        else:
            action = players[agent](env)
            assert obs["action_mask"][action] == 1
        env.step(action)
    assert env.unwrapped.phase == "over"
