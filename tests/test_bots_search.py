"""The search opponents: alpha-beta (jiu_env.bots.alphabeta) and MCTS (jiu_env.bots.mcts)."""

import re

import numpy as np
import pytest

from jiu_env import kernel as K
from jiu_env.bots import make_bot
from jiu_env.bots import alphabeta as AB
from jiu_env.bots import evaluation_fn as E
from jiu_env.bots import mcts as M
from jiu_env.bots.base import legal_actions
from jiu_env.bots.search_tree import T_ACTION, T_FIRST, T_NCHILD, T_VISITS
from jiu_env.state import position_state
from jiu_env.rules import Rules

from conftest import board_from_text

SUBS = ("placement", "move", "chain", "drop", "capture")


def bucket(s):
    if s[K.H_PHASE] == K.PH_PLACEMENT:
        return "placement"
    return ("move", "chain", "drop", "capture")[int(s[K.H_SUB])]


def sample_states(n, seed, per_bucket=3, profile="competitive", max_games=20):
    """Live states of every phase and sub-phase from capture-hungry seeded games on an n x n board."""
    rules = Rules.make(profile, board_size=n)
    rng = np.random.default_rng(seed)
    out = {b: [] for b in SUBS}
    for _ in range(max_games):
        s = rules.new_state()
        while s[K.H_PHASE] != K.PH_OVER:
            b = bucket(s)
            if len(out[b]) < per_bucket and rng.random() < 0.3:
                out[b].append(s.copy())
            acts = legal_actions(s)
            good = [a for a in acts if s[K.H_PHASE] == K.PH_BATTLE and E.action_gain(s, a) > 0]
            a = rng.choice(good) if good and rng.random() < 0.8 else rng.choice(acts)
            K.apply_action(s, int(a))
        if all(len(v) >= per_bucket for v in out.values()):
            break
    return out


@pytest.fixture(scope="module")
def states():
    """States of all phases / sub-phases on 5x5, 6x6 and 8x8 (several rule profiles) and a few 14x14."""
    got = []
    for n, seed, profile in ((5, 1, "competitive"), (6, 2, "competitive"), (8, 3, "ludii8"), (6, 4, "traditional")):
        for b, lst in sample_states(n, seed, profile=profile).items():
            got += [(f"{n}x{n} {profile} {b}", s) for s in lst]
    big = sample_states(14, 5, per_bucket=1, max_games=1)
    got += [(f"14x14 {b}", s) for b, lst in big.items() for s in lst]
    return got


def test_sampled_states_cover_every_sub_phase(states):
    seen = {name.split()[-1] for name, _ in states}
    assert seen == set(SUBS)


# ------------------------------------------------------------ the protocol
@pytest.mark.parametrize("spec", ["alphabeta:depth=2", "mcts:sims=40"])
def test_legal_and_never_mutates_over_all_sub_phases(states, spec):
    bot = make_bot(spec, seed=7)
    for name, s in states:
        before = s.copy()
        a = bot.step(s)
        assert isinstance(a, int)
        assert K.is_legal(s, a), f"{spec} chose illegal {a} in {name}"
        assert np.array_equal(s, before), f"{spec} modified the state in {name}"


@pytest.mark.parametrize("spec", ["alphabeta:depth=1", "mcts:sims=10"])
def test_finished_game_and_bad_state_raise(spec):
    bot = make_bot(spec, seed=0)
    r = Rules.make("competitive", board_size=6)
    s = r.new_state()
    K.random_placement(s, 3)
    s[K.H_PHASE] = K.PH_OVER
    with pytest.raises(ValueError, match="over"):
        bot.step(s)
    with pytest.raises(TypeError):
        bot.step([0, 1, 2])
    with pytest.raises(ValueError):
        bot.step(np.zeros(10, np.int64))


@pytest.mark.parametrize("spec", ["alphabeta:depth=0", "alphabeta:time=-1", "alphabeta:cap_width=-2",
                                  "alphabeta:drop_width=1.5", "alphabeta:place_depth=0", "alphabeta:tt_bits=40",
                                  "alphabeta:quiesce=17", "alphabeta:null=9", "alphabeta:qdelta=-1",
                                  "alphabeta:qdelta=1.5", "mcts:sims=0", "mcts:c=-1", "mcts:rollout_cap=-1",
                                  "mcts:reuse=maybe", "mcts:widen=-1"])
def test_bad_parameters_are_errors(spec):
    # each refusal names the bot, the parameter and the value given (not some other parameter's check)
    bot, kv = spec.split(":")
    name, value = kv.split("=")
    with pytest.raises(ValueError, match=rf"^{bot} {name} must be .*, not '?{re.escape(value)}'?$"):
        make_bot(spec)


def _play(rules, white, black, seed, max_decisions=None):
    """Tiny local game loop: (actions, final state)."""
    white.restart(seed)
    black.restart(seed + 1)
    s = rules.new_state()
    acts = []
    while s[K.H_PHASE] != K.PH_OVER and (max_decisions is None or len(acts) < max_decisions):
        bot = white if s[K.H_TO_MOVE] == K.WHITE else black
        a = bot.step(s)
        assert K.is_legal(s, a)
        K.apply_action(s, a)
        acts.append(a)
    return acts, s


def test_seeded_games_repeat_exactly():
    r = Rules.make("competitive", board_size=6)
    runs = [_play(r, make_bot("alphabeta:depth=2", seed=1), make_bot("mcts:sims=60", seed=2), seed=11,
                  max_decisions=90)[0] for _ in range(2)]
    assert runs[0] == runs[1]
    assert len(runs[0]) > 36  # placement done, battle under way


# ------------------------------------------------------------ make / unmake
def test_make_unmake_restores_every_entry(states):
    ply = 3
    u_hdr = np.zeros((8, K.HDR), np.int64)
    u_pts = np.zeros((8, 8), np.int64)
    u_hist = np.zeros((8, 2), np.int64)
    checked = 0
    for name, s in states:
        for a in legal_actions(s):
            work = s.copy()
            AB.make_move(work, int(a), ply, u_hdr, u_pts, u_hist)
            ref = s.copy()
            K.apply_action(ref, int(a))
            assert np.array_equal(work, ref), f"make_move differs from apply_action in {name}"
            AB.unmake_move(work, ply, u_hdr, u_pts, u_hist)
            assert np.array_equal(work, s), f"unmake_move did not restore {name} after {a}"
            checked += 1
    assert checked > 500


def test_make_null_unmake_restores_every_entry(states):
    # a null move is the kernel's pass (the other side to move, its turn-start checks run) and
    # unmake_move restores the state exactly
    u = (np.zeros((4, K.HDR), np.int64), np.zeros((4, 8), np.int64), np.zeros((4, 2), np.int64))
    checked = 0
    for name, s in states:
        if s[K.H_PHASE] != K.PH_BATTLE or s[K.H_SUB] != K.SUB_MOVE:
            continue
        work = s.copy()
        AB.make_null(work, 2, *u)
        ref = s.copy()
        K.pass_turn(ref)
        assert np.array_equal(work, ref), name
        assert u[1][2, 7] == 1  # marked: no second null move right after it
        AB.unmake_move(work, 2, *u)
        assert np.array_equal(work, s), name
        checked += 1
    assert checked > 10


def test_make_unmake_across_the_end_of_placement():
    r = Rules.make("competitive", board_size=4)
    s = r.new_state()
    rng = np.random.default_rng(0)
    while s[K.H_PLACED] < 15:
        K.apply_action(s, int(rng.choice(legal_actions(s))))
    u = (np.zeros((2, K.HDR), np.int64), np.zeros((2, 8), np.int64), np.zeros((2, 2), np.int64))
    before = s.copy()
    last = int(legal_actions(s)[0])
    AB.make_move(s, last, 1, *u)
    e0, e1 = K.diagonal_ends(4)
    assert s[K.H_PHASE] == K.PH_BATTLE and s[K.HDR + e0] == K.EMPTY and s[K.HDR + e1] == K.EMPTY
    AB.unmake_move(s, 1, *u)
    assert np.array_equal(s, before)


def test_decision_hash_separates_decision_points():
    rules = Rules.make("competitive", board_size=6, fly_threshold=0)
    s = position_state(rules, board_from_text(DOUBLE_SQUARE), "white")
    step = next(int(x) for x in legal_actions(s) if E.action_gain(s, x) >= 400)  # the double square
    t = s.copy()
    K.apply_action(t, step)
    assert t[K.H_SUB] == K.SUB_CAPTURE and t[K.H_PENDING] == 2
    u = t.copy()
    victim = int(legal_actions(t)[0])
    K.apply_action(u, victim)
    v = t.copy()
    v[K.H_PENDING] = 1  # same board and side, one capture fewer to choose
    assert K.decision_hash(t) != K.decision_hash(v)
    assert K.decision_hash(t) != K.decision_hash(u)
    assert K.decision_hash(t) != t[K.H_HASH]


# ------------------------------------------------------------- evaluation
def _placement_board(n, white_points, black_points=(), to_move=K.WHITE):
    s = Rules.make("competitive", board_size=n).new_state()
    for p in white_points:
        s[K.HDR + p] = K.WHITE
    for p in black_points:
        s[K.HDR + p] = K.BLACK
    s[K.H_TO_MOVE] = to_move
    return s


def _centre_term(n, points):
    return sum(E.P_CENTRE * (n // 2 - 1 - E.centre_ring(n, p)) for p in points)


def test_placement_formation_values_of_the_paper():
    n = 8
    block = [0, 1, 2, 8, 9, 10]  # two squares side by side: a double gate
    s = _placement_board(n, block)
    assert E.placement_eval(s) == 800 + _centre_term(n, block)
    square = [0, 1, 8, 9]
    assert E.placement_eval(_placement_board(n, square)) == 100 + _centre_term(n, square)
    tri = [0, 1, 8]  # three of a 2x2, fourth empty; the mover can complete it
    assert E.placement_eval(_placement_board(n, tri)) == 50 + E.P_TEMPO + _centre_term(n, tri)
    # the same triangle seen by the other side, and a blocked one
    assert E.placement_eval(_placement_board(n, tri, to_move=K.BLACK)) == -(50 + _centre_term(n, tri))
    assert E.placement_eval(_placement_board(n, tri, [9])) == _centre_term(n, tri) - _centre_term(n, [9])


def test_centre_rings_and_location_score():
    n = 14
    assert E.centre_ring(n, 6 * n + 6) == 0 and E.centre_ring(n, 7 * n + 7) == 0
    assert E.centre_ring(n, 0) == n // 2 - 1 and E.centre_ring(n, n * n - 1) == n // 2 - 1
    assert M.location_score(n, 6 * n + 7) == 1.0
    assert M.location_score(n, n - 1) == -1.0
    for n in (5, 7, 11, 13):  # odd boards: the score stays in -1..+1 (it reached -3 on 5x5's top edge)
        scores = [M.location_score(n, p) for p in range(n * n)]
        assert min(scores) == -1.0 and max(scores) == 1.0
        assert E.centre_ring(n, 0) == n // 2 and E.centre_ring(n, n * n - 1) == n // 2 - 1


def test_placement_result_counts_squares():
    r = Rules.make("competitive", board_size=4)
    s = position_state(r, board_from_text("""
        o o x x
        o o x .
        x o x o
        o x o x
    """), "black")
    assert M.placement_result(s) == 1.0  # white 1 square, black 0
    s2 = position_state(r, board_from_text("""
        o o x x
        o o x x
        x o x o
        o x o .
    """), "black")
    assert M.placement_result(s2) == 0.0


SHUTTLE = """
    . . . . . x
    . o o . . .
    . o o . . .
    . o . . . .
    . o o . . x
    x . . . x x
"""
DOUBLE_SQUARE = """
    . . . . . x
    . o o o . .
    . o . o . .
    . . o . . .
    . . . . . x
    x . . . x x
"""


def test_battle_eval_is_antisymmetric_and_sees_shuttles():
    rules = Rules.make("competitive", board_size=6, fly_threshold=0)
    b = board_from_text(SHUTTLE)
    sw = position_state(rules, b, "white")
    swapped = np.where(b == 1, 2, np.where(b == 2, 1, 0))
    sb = position_state(rules, swapped, "black")
    assert E.battle_eval(sw) == E.battle_eval(sb)
    # moving the lower stones away removes the shuttle and the value drops by more than the triangle
    broken = b.copy()
    broken[4, 1] = 0
    broken[4, 3] = 1
    assert E.battle_eval(position_state(rules, broken, "white")) < E.battle_eval(sw) - E.W_SHUTTLE


# --------------------------------------------------------- forced results
LAST_STONE = """
    o o . . . .
    o o . x . .
    . . . . . .
    x . . o x .
    . . . . . .
    . . . x . .
"""


def _win_turn(bot, s):
    """Let the bot play the rest of its turn; return the final state."""
    side = s[K.H_TO_MOVE]
    s = s.copy()
    while s[K.H_PHASE] != K.PH_OVER and s[K.H_TO_MOVE] == side:
        K.apply_action(s, bot.step(s))
        if s[K.H_PHASE] == K.PH_BATTLE and s[K.H_SUB] == K.SUB_MOVE:
            break
    return s


@pytest.mark.parametrize("spec", ["alphabeta:depth=1", "alphabeta:depth=3", "alphabeta:time=0.2",
                                  "mcts:sims=800"])
@pytest.mark.parametrize("board", [LAST_STONE, DOUBLE_SQUARE])
def test_takes_the_immediate_win(spec, board):
    rules = Rules.make("competitive", board_size=6, fly_threshold=0)
    s = position_state(rules, board_from_text(board), "white")
    end = _win_turn(make_bot(spec, seed=3), s)
    assert end[K.H_PHASE] == K.PH_OVER and end[K.H_WINNER] == K.WHITE


def test_alphabeta_sees_the_shuttle_win_at_three_turns_not_two():
    rules = Rules.make("competitive", board_size=6, fly_threshold=0)
    s = position_state(rules, board_from_text(SHUTTLE), "white")
    two = make_bot("alphabeta:depth=2,quiesce=0", seed=0)
    two.step(s)
    assert two.last_info["value"] < AB.WIN
    # the third turn of the win is a square-forming step: quiescence finds it from depth 2
    two_q = make_bot("alphabeta:depth=2", seed=0)
    two_q.step(s)
    assert two_q.last_info["value"] >= AB.WIN
    three = make_bot("alphabeta:depth=3,quiesce=0", seed=0)
    a = three.step(s)
    assert three.last_info["value"] >= AB.WIN
    # and it carries the win out against any defence
    rng = np.random.default_rng(5)
    t = s.copy()
    K.apply_action(t, a)
    for _ in range(40):
        if t[K.H_PHASE] == K.PH_OVER:
            break
        if t[K.H_TO_MOVE] == K.WHITE:
            K.apply_action(t, three.step(t))
        else:
            K.apply_action(t, int(rng.choice(legal_actions(t))))
    assert t[K.H_WINNER] == K.WHITE


# ------------------------------------------------- alpha-beta == minimax
def ref_negamax(s, depth, leaf=None):
    """Plain minimax (negamax form) over copies, with the bot's units, process score and leaves.

    ``leaf``: the value of a leaf (default: the static evaluation, as with ``quiesce=0``).
    """
    if depth <= 0:
        return int(E.evaluate(s)) if leaf is None else leaf(s)
    side = int(s[K.H_TO_MOVE])
    opp = 3 - side
    best = None
    for a in legal_actions(s):
        v = ref_child(s, int(a), side, opp, depth, leaf)
        best = v if best is None or v > best else best
    return best


def ref_child(s, a, side, opp, depth, leaf=None):
    c = s.copy()
    K.apply_action(c, a)
    if c[K.H_PHASE] == K.PH_OVER:
        w = c[K.H_WINNER]
        return AB.WIN + depth if w == side else (-AB.WIN - depth if w == opp else 0)
    bonus = int(s[K.H_COUNT + opp] - c[K.H_COUNT + opp]) * AB.PROCESS * depth
    same_turn = c[K.H_PHASE] == K.PH_BATTLE and c[K.H_SUB] != K.SUB_MOVE
    if same_turn:
        return ref_negamax(c, depth, leaf) + bonus
    if c[K.H_TO_MOVE] == side:
        return ref_negamax(c, depth - 1, leaf) + bonus
    return -ref_negamax(c, depth - 1, leaf) + bonus


def _minimax_positions():
    out = []
    for n, profile, seed in ((4, "competitive", 1), (5, "competitive", 2), (5, "traditional", 3),
                             (5, "ludii8", 4), (4, "competitive", 5)):
        rules = Rules.make(profile, board_size=n)
        for k in (0, 7, 15):
            s = rules.new_state()
            K.random_placement(s, seed * 100 + k)
            rng = np.random.default_rng(seed * 1000 + k)
            for _ in range(k):
                if s[K.H_PHASE] == K.PH_OVER:
                    break
                K.apply_action(s, int(rng.choice(legal_actions(s))))
            if s[K.H_PHASE] != K.PH_OVER:
                out.append((f"{n}x{n} {profile} +{k}", s))
    return out


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_alphabeta_equals_plain_minimax(depth):
    checked = 0
    for name, s in _minimax_positions():
        if depth == 3 and s[K.H_N] == 5 and len(legal_actions(s)) > 14:
            continue  # keep the Python reference quick
        side = int(s[K.H_TO_MOVE])
        vals = {int(a): ref_child(s, int(a), side, 3 - side, depth) for a in legal_actions(s)}
        bot = make_bot(f"alphabeta:depth={depth},cap_width=0,drop_width=0,quiesce=0,lmr=false,eval=hand", seed=depth)
        a = bot.step(s)
        if len(vals) == 1:
            continue
        reached = bot.last_info["depth"]
        if reached != depth:  # stopped early on a proven result: compare at the depth it reached
            assert abs(bot.last_info["value"]) >= AB.WIN
            vals = {int(x): ref_child(s, int(x), side, 3 - side, reached) for x in legal_actions(s)}
        assert bot.last_info["value"] == max(vals.values()), name
        assert vals[a] == max(vals.values()), name
        checked += 1
    assert checked >= 8


@pytest.mark.parametrize("depth,margin", [(1, 50), (2, 50), (2, 400)])
def test_root_margin_scores_every_near_best_root_move_exactly(depth, margin):
    # the root scores behind soft training labels: exact within the margin, an upper bound below it
    checked = 0
    for name, s in _minimax_positions():
        spec = f"alphabeta:depth={depth},cap_width=0,drop_width=0,quiesce=0,lmr=false,eval=hand"
        bot = make_bot(f"{spec},root_margin={margin}", seed=depth)
        a = bot.step(s)
        if len(legal_actions(s)) == 1:
            assert "root" not in bot.last_info
            continue
        side, reached = int(s[K.H_TO_MOVE]), bot.last_info["depth"]
        vals = {int(x): ref_child(s, int(x), side, 3 - side, reached) for x in legal_actions(s)}
        moves, scores = bot.last_info["root"]
        assert sorted(int(m) for m in moves) == sorted(vals)
        best = max(vals.values())
        assert int(scores[0]) == best == bot.last_info["value"] and int(moves[0]) == a, name
        for m, v in zip(moves, scores):
            if vals[int(m)] > best - margin:
                assert v == vals[int(m)], name
            else:
                assert vals[int(m)] <= v <= best - margin, name
            checked += 1
    assert checked >= 40


def test_root_margin_needs_no_time_budget_and_is_checked():
    s = _minimax_positions()[0][1]
    timed = make_bot("alphabeta:time=0.05,root_margin=100", seed=0)
    timed.step(s)
    assert "root" not in timed.last_info  # a timed search has no complete last iteration to report
    plain = make_bot("alphabeta:depth=1", seed=0)
    plain.step(s)
    assert "root" not in plain.last_info
    with pytest.raises(ValueError, match="root_margin"):
        make_bot("alphabeta:depth=1,root_margin=-1")


def ref_pick_order(moves, scores):
    """The order in which the search's lazy selection sort (``alphabeta._pick``) tries moves, ties included."""
    moves, scores = list(moves), list(scores)
    for i in range(len(moves)):
        b = i
        for j in range(i + 1, len(moves)):
            if scores[j] > scores[b]:
                b = j
        moves[i], moves[b] = moves[b], moves[i]
        scores[i], scores[b] = scores[b], scores[i]
    return moves


def ref_qsearch(s, qturns):
    """Plain minimax over the quiescence tree the search defines (no pruning of any kind).

    At a turn start: stand pat on the static evaluation, or play a jump / a square-forming
    step; mid-turn: the turn's decisions, the ``QCAP_WIDTH`` most damaging capture choices.
    """
    side = int(s[K.H_TO_MOVE])
    start = s[K.H_SUB] == K.SUB_MOVE
    stand = int(E.evaluate(s))
    if start and qturns <= 0:
        return stand
    moves = [int(a) for a in legal_actions(s)]
    if s[K.H_SUB] == K.SUB_CAPTURE:
        la = int(s[K.H_LAST_ACTION])
        if 0 <= la < s[K.H_P] and s[K.HDR + la] == K.EMPTY:
            moves = [a for a in moves if a > la]  # one order of a turn's captures, as the search
    gains = [int(E.action_gain(s, a)) for a in moves]
    cand = [(a, g) for a, g in zip(moves, gains) if not start or AB._tactical(s, a, g)]
    order = ref_pick_order([a for a, _ in cand], [g for _, g in cand])
    if s[K.H_SUB] == K.SUB_CAPTURE:
        order = order[:AB.QCAP_WIDTH]
    vals = [stand] if start else []
    for a in order:
        c = s.copy()
        K.apply_action(c, a)
        if c[K.H_PHASE] == K.PH_OVER:
            w = c[K.H_WINNER]
            vals.append(AB.WIN if w == side else (-AB.WIN if w == 3 - side else 0))
        elif c[K.H_SUB] != K.SUB_MOVE:
            vals.append(ref_qsearch(c, qturns))
        else:
            vals.append(-ref_qsearch(c, qturns - 1))
    return max(vals) if vals else stand


@pytest.mark.parametrize("depth", [1, 2])
def test_alphabeta_with_quiescence_equals_minimax_with_reference_quiescence(depth):
    # the same comparison with one turn of quiescence at the leaves (delta pruning off): checks the
    # quiescence search and its entries in the transposition table against plain minimax
    checked = with_captures = 0
    positions = _minimax_positions() + [("6x6 double square", position_state(
        Rules.make("competitive", board_size=6, fly_threshold=0), board_from_text(DOUBLE_SQUARE_NO_WIN), "white"))]
    for name, s in positions:
        if len(legal_actions(s)) == 1:
            continue
        side = int(s[K.H_TO_MOVE])
        leaf = lambda c: ref_qsearch(c, 1) if c[K.H_PHASE] == K.PH_BATTLE else int(E.evaluate(c))
        vals = {int(a): ref_child(s, int(a), side, 3 - side, depth, leaf) for a in legal_actions(s)}
        bot = make_bot(f"alphabeta:depth={depth},cap_width=0,drop_width=0,quiesce=1,qdelta=0,lmr=false,eval=hand", seed=depth)
        a = bot.step(s)
        if bot.last_info["depth"] != depth:
            continue  # a proven result stopped it early (compared at fixed depth above)
        assert bot.last_info["value"] == max(vals.values()), name
        assert vals[a] == max(vals.values()), name
        checked += 1
        with_captures += bot.last_info["qnodes"] > 0
    assert checked >= 8 and with_captures >= 3


DOUBLE_SQUARE_NO_WIN = """
    . . . . . x
    . o o o . x
    . o . o . x
    . . o . . .
    x . . . . x
    x x . . x x
"""


@pytest.mark.parametrize("depth", [1, 2])
def test_alphabeta_equals_minimax_through_a_double_capture(depth):
    # two captures in one turn: the search takes them in one order only, the reference in both
    rules = Rules.make("competitive", board_size=6, fly_threshold=0)
    s = position_state(rules, board_from_text(DOUBLE_SQUARE_NO_WIN), "white")
    vals = {int(a): ref_child(s, int(a), K.WHITE, K.BLACK, depth) for a in legal_actions(s)}
    bot = make_bot(f"alphabeta:depth={depth},cap_width=0,drop_width=0,quiesce=0,lmr=false,eval=hand", seed=0)
    a = bot.step(s)
    assert bot.last_info["value"] == max(vals.values())
    assert vals[a] == max(vals.values())
    assert E.action_gain(s, a) >= 400  # the double square
    t = s.copy()
    K.apply_action(t, a)
    assert t[K.H_PENDING] == 2
    first = bot.step(t)
    K.apply_action(t, first)
    second = bot.step(t)
    assert second != first and K.is_legal(t, second)


# A capture that loses: White's jump lands next to a black stone that jumps it back and
# chains on over the white stone below (two for one).  One turn of search takes the bait;
# quiescence plays Black's recapture out and, like a two-turn search, declines it.
POISONED_CAPTURE = """
    o o . . . x x x
    o o . . . . x x
    . . x . . . . .
    . o x . x x . .
    . . o . . . . .
    . . . . . . . .
    x . . . . . . o
    x x . . . . o o
"""


def test_quiescence_declines_a_capture_that_loses_two_for_one():
    rules = Rules.make("competitive", board_size=8, fly_threshold=0)
    s = position_state(rules, board_from_text(POISONED_CAPTURE), "white")
    bait = [int(a) for a in legal_actions(s) if K.is_jump_kind(K.action_kind(int(a), int(s[K.H_P])))]
    assert len(bait) == 1  # the only capture on the board
    flat = make_bot("alphabeta:depth=1,quiesce=0", seed=0)
    assert flat.step(s) == bait[0]
    quiet = make_bot("alphabeta:depth=1,quiesce=1", seed=0)
    assert quiet.step(s) != bait[0] and quiet.last_info["qnodes"] > 0
    deeper = make_bot("alphabeta:depth=2,quiesce=0", seed=0)
    assert deeper.step(s) != bait[0]
    # the recapture really takes two: after the bait Black's best turn is the chain
    t = s.copy()
    K.apply_action(t, bait[0])
    before = int(t[K.H_COUNT + K.WHITE])
    t = _win_turn(make_bot("alphabeta:depth=1,quiesce=0", seed=0), t)
    assert before - int(t[K.H_COUNT + K.WHITE]) == 2


def test_mcts_with_a_budget_declines_the_capture_that_loses_two_for_one():
    # the capture is the best-ordered move, so two simulations take it; with minimax values MCTS
    # sees Black's chain recapture; plain UCT (the first release) averages it away and takes it even
    # with 3000 simulations
    rules = Rules.make("competitive", board_size=8, fly_threshold=0)
    s = position_state(rules, board_from_text(POISONED_CAPTURE), "white")
    bait = [int(a) for a in legal_actions(s) if K.is_jump_kind(K.action_kind(int(a), int(s[K.H_P])))][0]
    for seed in range(3):
        assert make_bot("mcts:sims=2", seed=seed).step(s) == bait
        assert make_bot("mcts:sims=3000", seed=seed).step(s) != bait
        assert make_bot("mcts:sims=3000,minimax=0", seed=seed).step(s) == bait


def test_delta_pruning_searches_less_and_still_declines_the_bait(states):
    # with a margin the quiescence search skips captures that cannot lift the stand-pat score to
    # alpha: fewer quiescence nodes over the sampled battle states, the same refusal of the bait
    rules = Rules.make("competitive", board_size=8, fly_threshold=0)
    s = position_state(rules, board_from_text(POISONED_CAPTURE), "white")
    bait = [int(a) for a in legal_actions(s) if K.is_jump_kind(K.action_kind(int(a), int(s[K.H_P])))][0]
    assert make_bot("alphabeta:depth=2,qdelta=100", seed=0).step(s) != bait
    qnodes = {0: 0, 100: 0}
    for name, t in states:
        if t[K.H_PHASE] == K.PH_BATTLE and t[K.H_SUB] == K.SUB_MOVE:
            for margin in qnodes:
                bot = make_bot(f"alphabeta:depth=2,qdelta={margin}", seed=0)
                assert K.is_legal(t, bot.step(t)), name
                qnodes[margin] += bot.last_info["qnodes"]
    assert 0 < qnodes[100] < qnodes[0]


def test_null_move_searches_less_and_keeps_the_tactics(states):
    # null=1 cuts null-window turn starts whose static value beats beta when a search one turn
    # shallower after a pass still does: fewer nodes over the sampled battle states at depth 3,
    # legal moves, and the hand-built tactics are still found
    nodes = {0: 0, 1: 0}
    cuts = 0
    for name, t in states:
        if t[K.H_PHASE] == K.PH_BATTLE and t[K.H_SUB] == K.SUB_MOVE and t[K.H_P] >= 36:
            for r in nodes:
                bot = make_bot(f"alphabeta:depth=3,null={r}", seed=0)
                assert K.is_legal(t, bot.step(t)), name
                nodes[r] += bot.last_info["nodes"]
                cuts += bot.last_info["nullcuts"] if r else 0
    assert cuts > 0 and 0 < nodes[1] < nodes[0]
    rules = Rules.make("competitive", board_size=8, fly_threshold=0)
    s = position_state(rules, board_from_text(POISONED_CAPTURE), "white")
    bait = [int(a) for a in legal_actions(s) if K.is_jump_kind(K.action_kind(int(a), int(s[K.H_P])))][0]
    assert make_bot("alphabeta:depth=3,null=1", seed=0).step(s) != bait
    rules6 = Rules.make("competitive", board_size=6, fly_threshold=0)
    for board in (LAST_STONE, DOUBLE_SQUARE):
        end = _win_turn(make_bot("alphabeta:depth=3,null=1", seed=3), position_state(rules6, board_from_text(board), "white"))
        assert end[K.H_PHASE] == K.PH_OVER and end[K.H_WINNER] == K.WHITE
    s = position_state(rules6, board_from_text(SHUTTLE), "white")
    bot = make_bot("alphabeta:depth=3,null=1,quiesce=0", seed=0)
    bot.step(s)
    assert bot.last_info["value"] >= AB.WIN  # the three-turn shuttle win, as without null moves


def test_evaluation_cache_returns_the_evaluation(states):
    # the cache only saves time: every state evaluates as without it, also after colliding entries
    bot = make_bot("alphabeta:depth=1", seed=0)
    for _ in range(2):
        for name, s in states:
            ctx = bot._context(int(s[K.H_P]))
            ctx[11][:] = 0
            t = s.copy()
            want = int(E.evaluate_with(t, AB.SPSA_WEIGHTS))  # the default weights
            assert AB._evaluate(t, ctx) == want, name
            assert AB._evaluate(t, ctx) == want, name  # from the cache
            if t[K.H_PHASE] == K.PH_BATTLE:
                slot = (K.decision_hash(t) >> 8) & (ctx[11].shape[0] - 1)
                assert ctx[11][slot, 0] == K.decision_hash(t)
                ctx[11][slot, 0] ^= 1  # another position's entry in the slot is not used
                assert AB._evaluate(t, ctx) == want, name


def test_quiescence_off_is_the_plain_search():
    # quiesce=0, lmr=false and the hand weights are the alpha-beta of the first release, move for move:
    # with the default widths, its value and move are those of plain minimax with static leaves
    # (ref_negamax) at each depth; one turn of quiescence takes the bait at depth 1 no more
    rules = Rules.make("competitive", board_size=8, fly_threshold=0)
    s = position_state(rules, board_from_text(POISONED_CAPTURE), "white")
    moves = {}
    for depth in (1, 2, 3):
        vals = {int(a): ref_child(s, int(a), K.WHITE, K.BLACK, depth) for a in legal_actions(s)}
        bot = make_bot(f"alphabeta:depth={depth},quiesce=0,lmr=false,eval=hand", seed=0)
        a = bot.step(s)
        assert bot.last_info["qnodes"] == 0 and bot.last_info["depth"] == depth
        assert bot.last_info["value"] == ref_negamax(s, depth) == max(vals.values()), depth
        assert vals[a] == max(vals.values()), depth
        moves[depth] = a
    assert K.is_jump_kind(K.action_kind(moves[1], int(s[K.H_P])))  # the plain one-turn search takes the bait
    assert make_bot("alphabeta:depth=1,quiesce=1,lmr=false,eval=hand", seed=0).step(s) != moves[1]


def test_evaluation_weights_by_name_or_by_value(states):
    # eval=w1/w2/... (the spec-string form) and a Python sequence give the search those weights:
    # the hand weights written out play exactly as eval=hand, other weights reach the evaluation
    hand = "/".join(str(int(v)) for v in E.HAND_WEIGHTS)
    assert list(AB.eval_weights(hand)) == list(E.HAND_WEIGHTS)
    assert list(AB.eval_weights(list(E.TUNED_WEIGHTS))) == list(E.TUNED_WEIGHTS)
    battle = [s for name, s in states if s[K.H_PHASE] == K.PH_BATTLE][:12]
    for s in battle:
        a = make_bot("alphabeta:depth=2,eval=hand", seed=3)
        b = make_bot(f"alphabeta:depth=2,eval={hand}", seed=3)
        assert a.step(s) == b.step(s)
        assert a.last_info["nodes"] == b.last_info["nodes"]
    double = E.HAND_WEIGHTS * 2
    bot = AB.AlphaBetaBot(depth=1, eval=list(double))
    ctx = bot._context(int(battle[0][K.H_P]))
    assert AB._evaluate(battle[0].copy(), ctx) == E.evaluate_with(battle[0].copy(), double)


@pytest.mark.parametrize("bad", ["best", "1/2/3", "100/8/1/60/6/85/30/95/6.5", "100/8/1/60/6/85/30/95/x",
                                 "100/8/1/60/6/85/30/95/60/1", "100/8/1/60/6/85/30/95/99999999"])
def test_bad_evaluation_weights_are_errors(bad):
    with pytest.raises(ValueError, match="alphabeta eval must be one of spsa, hand, tuned"):
        make_bot(f"alphabeta:eval={bad}")
    with pytest.raises(ValueError, match="alphabeta eval"):
        AB.AlphaBetaBot(eval=[100, 8, 1, 60, 6, 85, 30, 95, True])


@pytest.mark.parametrize("budget", [0.15, 0.3])
def test_time_budget_is_per_turn(budget):
    """Mechanism, not speed: the decisions of one turn share one budget.

    Exact: what each decision is allotted (90% of the turn at its first
    decision, then what is left).  With a stated tolerance of 250 ms (a
    loaded machine may stall a process that long): the time actually spent.
    """
    rules = Rules.make("competitive", board_size=6, fly_threshold=0)
    s = position_state(rules, board_from_text(DOUBLE_SQUARE_NO_WIN), "white")
    bot = make_bot(f"alphabeta:time={budget}", seed=0)
    bot.step(s)  # compile outside the measured turn
    bot.restart(0)
    spent, allotted = [], []
    t = s.copy()
    while True:
        a = bot.step(t)
        spent.append(bot.last_info["seconds"])
        allotted.append(bot.last_info.get("budget"))
        K.apply_action(t, a)
        if t[K.H_PHASE] != K.PH_BATTLE or t[K.H_SUB] == K.SUB_MOVE:
            break
    assert len(spent) == 3  # the double square: the move, then two captures
    assert allotted[0] == pytest.approx((1 - AB.TURN_RESERVE) * budget)
    for i in (1, 2):
        if allotted[i] is not None:  # None: a forced decision, no search
            assert allotted[i] == pytest.approx(max(budget - sum(spent[:i]), 0.02 * budget))
    assert sum(spent) <= budget + 0.25
    # the next turn starts afresh
    assert bot._budget(t)[0] == pytest.approx((1 - AB.TURN_RESERVE) * budget)
    # a mid-turn position at the same turn, but not the decision right after the bot's last (another game,
    # a position set up by hand): a turn of its own
    bot.restart(0)
    t = s.copy()
    K.apply_action(t, bot.step(t))
    assert t[K.H_SUB] == K.SUB_CAPTURE
    assert bot._budget(t)[0] == pytest.approx(max(budget - bot._turn[1], 0.02 * budget))  # the turn goes on
    assert bot._turn[1] > 0
    other = t.copy()
    other[K.H_DECISIONS] += 7
    assert bot._budget(other)[0] == pytest.approx((1 - AB.TURN_RESERVE) * budget)
    # per decision (the first release's meaning of time): each decision may use the whole budget
    per = make_bot(f"alphabeta:time={budget},turn_time=false", seed=0)
    assert per._budget(s) == (budget, None)


def test_alphabeta_time_budget_gives_legal_moves(states):
    for spec in ("alphabeta:time=0.02", "alphabeta:time=0.02,depth=2", "mcts:time=0.02"):
        bot = make_bot(spec, seed=0)
        for name, s in states[::3]:
            a = bot.step(s)
            assert K.is_legal(s, a), f"{spec}: {name}"


def test_placement_depth_is_capped():
    r = Rules.make("competitive", board_size=8)
    s = r.new_state()
    K.apply_action(s, int(legal_actions(s)[0]))  # the two forced diagonal-end stones
    K.apply_action(s, int(legal_actions(s)[0]))
    bot = make_bot("alphabeta:depth=5,place_depth=2", seed=0)
    bot.step(s)
    assert bot.last_info["depth"] == 2


# -------------------------------------------------------------- MCTS tree
def test_mcts_reuses_the_subtree_of_the_moves_played():
    r = Rules.make("competitive", board_size=6, fly_threshold=0)
    s = position_state(r, board_from_text(SHUTTLE), "white")
    bot = make_bot("mcts:sims=400", seed=1)
    a = bot.step(s)
    tree = bot._search.tree(0)
    f, k = tree[T_FIRST][0], tree[T_NCHILD][0]
    child = int(np.flatnonzero(tree[T_ACTION][f:f + k] == a)[0]) + f
    expected_visits = int(tree[T_VISITS][child])
    t = s.copy()
    K.apply_action(t, a)
    # the opponent (or the same side, mid-turn) decides next; follow the most visited line once more
    bot.step(t)
    assert bot.last_info["reused_nodes"] > 1
    assert bot.last_info["reused_visits"] == expected_visits
    # an unrelated state starts a fresh tree
    other = position_state(r, board_from_text(LAST_STONE), "white")
    bot.step(other)
    assert bot.last_info["reused_nodes"] == 0


def test_mcts_reuses_trees_during_a_game():
    r = Rules.make("competitive", board_size=5)
    bot = make_bot("mcts:sims=60", seed=3)
    other = make_bot("random", seed=4)
    s = r.new_state()
    reused = 0
    while s[K.H_PHASE] != K.PH_OVER and s[K.H_DECISIONS] < 150:
        if s[K.H_TO_MOVE] == K.WHITE:
            a = bot.step(s)
            reused += bot.last_info["reused_nodes"] > 0
        else:
            a = other.step(s)
        assert K.is_legal(s, a)
        K.apply_action(s, a)
    assert reused > 10


# --------------------------------------------------------------- strength
def _match(rules, spec, opponent, games, seed):
    wins = 0
    for g in range(games):
        bot, opp = make_bot(spec), make_bot(opponent)
        if g % 2 == 0:
            _, end = _play(rules, bot, opp, seed + g)
            wins += end[K.H_WINNER] == K.WHITE
        else:
            _, end = _play(rules, opp, bot, seed + g)
            wins += end[K.H_WINNER] == K.BLACK
    return wins


def test_alphabeta_beats_random_ten_of_ten_on_8x8():
    assert _match(Rules.make("competitive", board_size=8), "alphabeta:depth=2", "random", 10, 100) == 10


def test_mcts_beats_random_six_of_six_on_8x8():
    assert _match(Rules.make("competitive", board_size=8), "mcts:sims=150", "random", 6, 200) == 6


# ------------------------------------------------------- the rules options (docs/rules.md §8-§9)
OPTION_RULES = {
    "fly_only": Rules.make("competitive", board_size=6, flyer_moves="fly_only"),
    "turn_end": Rules.make("competitive", board_size=6, min_stones_check="turn_end"),
    "on_return": Rules.make("competitive", board_size=6, square_on_return=True),
    "formations": Rules.make("traditional", board_size=5, formations=True),
    "jqchess8": Rules.make("jqchess8", board_size=6),
    "all": Rules.make("competitive", board_size=5, flyer_moves="fly_only", min_stones_check="turn_end",
                      square_on_return=True, formations=True, single_jump_ban="both"),
}


def option_states(rules, seed, per_bucket=3, max_games=12):
    """Live states of every sub-phase (and flying moves) from capture-hungry seeded games under ``rules``."""
    rng = np.random.default_rng(seed)
    out = []
    seen = {}
    for _ in range(max_games):
        s = rules.new_state()
        while s[K.H_PHASE] != K.PH_OVER:
            b = bucket(s) + ("-fly" if s[K.H_PHASE] == K.PH_BATTLE and s[K.H_FLY_NOW] else "")
            if seen.get(b, 0) < per_bucket and rng.random() < 0.3:
                seen[b] = seen.get(b, 0) + 1
                out.append((b, s.copy()))
            acts = legal_actions(s)
            good = [a for a in acts if s[K.H_PHASE] == K.PH_BATTLE and E.action_gain(s, a) > 0]
            a = rng.choice(good) if good and rng.random() < 0.8 else rng.choice(acts)
            K.apply_action(s, int(a))
    return out


@pytest.fixture(scope="module")
def option_state_sets():
    return {name: option_states(r, 40 + i) for i, (name, r) in enumerate(OPTION_RULES.items())}


@pytest.mark.parametrize("name", list(OPTION_RULES))
def test_make_unmake_restores_under_each_option(option_state_sets, name):
    u_hdr = np.zeros((4, K.HDR), np.int64)
    u_pts = np.zeros((4, 8), np.int64)
    u_hist = np.zeros((4, 2), np.int64)
    states = option_state_sets[name]
    assert {b for b, _ in states} >= {"move", "chain", "capture", "move-fly", "drop-fly"}
    for b, s in states:
        for a in legal_actions(s):
            work = s.copy()
            AB.make_move(work, int(a), 2, u_hdr, u_pts, u_hist)
            ref = s.copy()
            K.apply_action(ref, int(a))
            assert np.array_equal(work, ref), f"make_move differs from apply_action ({name}, {b})"
            AB.unmake_move(work, 2, u_hdr, u_pts, u_hist)
            assert np.array_equal(work, s), f"unmake_move did not restore ({name}, {b}) after {a}"


@pytest.mark.parametrize("name", list(OPTION_RULES))
def test_search_bots_play_legal_moves_under_each_option(option_state_sets, name):
    bots = [make_bot("alphabeta:depth=2", seed=3), make_bot("alphabeta:depth=2,cap_width=0,drop_width=0", seed=4),
            make_bot("greedy", seed=5), make_bot("mcts:sims=20", seed=6)]
    for b, s in option_state_sets[name]:
        before = s.copy()
        for bot in bots:
            a = bot.step(s)
            assert K.is_legal(s, a), f"{bot.name} chose illegal {a} ({name}, {b})"
            assert np.array_equal(s, before), f"{bot.name} modified the state ({name}, {b})"
