"""Random full games with every invariant checked at every decision.

Each game is played through the raw env with seeded random legal actions,
alongside the plain-Python reference model of docs/rules.md (reference_model.RefGame),
and at every step:

- env mask == kernel legal list (as sets) == {a : is_legal(a)} == reference;
- the other agent's mask is all zeros;
- every legal action (a sample on big boards) applies cleanly to a clone,
  and the clone leaves the original untouched; ``deepcopy(env)`` too;
- stone counts equal the board, never grow in battle, and fall exactly by
  the stones jumped or captured; the hash equals a fresh Zobrist hash;
- at the end: zero-sum results, battle turns <= max_battle_turns, decisions
  bounded by the captures made.

The default run plays a few short games per configuration; the sweep at the
end is marked slow.
"""

import copy

import numpy as np
import pytest

import jiu_env
from jiu_env import kernel as K

from conftest import BLACK, WHITE, check_bookkeeping, is_legal_all, kernel_legal
from reference_model import RefGame, compare_with_reference

BANS = ["none", "vs_flyer", "flyer", "both"]


def random_position(rules, rng, dense=False):
    """A seeded random battle position.

    Sparse: few stones on both sides, so both may fly.  Dense: one to four
    empty points and one side at most N stones, so the mover often has more
    stones than there are empty points while the ban is in force.
    """
    n = rules.board_size
    p = n * n
    while True:
        if dense:
            few = int(rng.integers(1, n + 1))
            many = p - few - int(rng.integers(1, 5))
            kw, kb = (few, many) if rng.integers(2) else (many, few)
        else:
            hi = max(2, min(p // 3, 2 * n))
            kw, kb = rng.integers(1, hi + 1, size=2)
        pts = rng.permutation(p)
        b = np.zeros(p, np.int64)
        b[pts[:kw]] = WHITE
        b[pts[kw:kw + kb]] = BLACK
        ms = rules.min_stones
        if ms and kw < ms and kb < ms:
            continue
        return b.reshape(n, n), ("white" if rng.integers(2) else "black")


def play_checked(rules_kw, seed, start="placement", clone_sample=None, max_decisions=20000, on_step=None):
    """Play one seeded random game with all invariants; return the raw env at the end.

    ``on_step(before, action, after)`` (optional) sees every decision's states.
    """
    rng = np.random.default_rng(seed)
    e = jiu_env.raw_env(**rules_kw)
    rules = e.rules
    n = rules.board_size
    na = rules.num_actions
    if start == "placement":
        e.reset(seed=seed)
        ref = RefGame(rules)
    elif start == "battle":
        e.reset(seed=seed, options={"start": "battle"})
        ref = RefGame.from_position(rules, e.board, BLACK)
    else:
        board, to_move = random_position(rules, rng, dense=(start == "dense"))
        e.reset(seed=seed, options={"board": board, "to_move": to_move})
        ref = RefGame.from_position(rules, board, WHITE if to_move == "white" else BLACK)
    flags = np.empty(na, np.int64)
    removed_in_battle = 0
    steps = 0
    decisions0 = int(e.state[K.H_DECISIONS])
    while True:
        s = e.state
        check_bookkeeping(s)
        compare_with_reference(s, ref)
        agent = e.agent_selection
        other = "black" if agent == "white" else "white"
        mask = e.observe(agent)["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (na,)
        assert not e.observe(other)["action_mask"].any()
        legal = kernel_legal(s)
        is_legal_all(s, flags)
        assert set(np.flatnonzero(mask).tolist()) == set(legal) == set(np.flatnonzero(flags).tolist())
        if int(s[K.H_PHASE]) == K.PH_OVER:
            break
        assert legal, "a live game must have a legal action"
        assert steps < max_decisions, "game did not end"
        # every masked action applies cleanly to a clone; the clone is independent
        snap = s.copy()
        tries = legal if clone_sample is None or len(legal) <= clone_sample else rng.choice(legal, clone_sample, replace=False)
        for a in tries:
            c = s.copy()
            K.apply_action(c, int(a))
            check_bookkeeping(c)
            assert int(c[K.H_DECISIONS]) == int(s[K.H_DECISIONS]) + 1
        assert (s == snap).all(), "applying to a clone changed the original"
        a = int(legal[rng.integers(len(legal))])
        before = {WHITE: int(s[K.H_COUNT + WHITE]), BLACK: int(s[K.H_COUNT + BLACK])}
        phase, sub, mover = int(s[K.H_PHASE]), int(s[K.H_SUB]), int(s[K.H_TO_MOVE])
        # deepcopy of the env: stepping the copy leaves the original alone and agrees with it
        twin = copy.deepcopy(e) if steps % 3 == 0 else None
        if twin is not None:
            twin.step(a)
            assert (e.state == snap).all() and e.agent_selection == agent
        e.step(a)
        ref.apply(a)
        steps += 1
        if on_step is not None:
            on_step(snap, a, e.state)
        if twin is not None:
            assert (twin.state == e.state).all() and twin.agent_selection == e.agent_selection
            assert twin.rewards == e.rewards and twin.terminations == e.terminations
        after = {WHITE: int(e.state[K.H_COUNT + WHITE]), BLACK: int(e.state[K.H_COUNT + BLACK])}
        # stone bookkeeping
        if phase == K.PH_PLACEMENT:
            if int(e.state[K.H_PHASE]) == K.PH_PLACEMENT:
                assert after[mover] == before[mover] + 1 and after[3 - mover] == before[3 - mover]
            else:  # the last placement, then the two diagonal-end stones leave the board
                assert after[WHITE] + after[BLACK] == n * n - 2
        else:
            assert after[mover] == before[mover], "the mover lost a stone on its own turn"
            p_ = n * n
            takes = 1 if (sub == K.SUB_CAPTURE or (5 * p_ <= a < 9 * p_)) else 0
            assert before[3 - mover] - after[3 - mover] == takes
            removed_in_battle += takes
    # end of game
    s = e.state
    w, b = K.returns(s)
    assert w + b == 0.0
    assert sum(e.rewards.values()) == 0.0
    win = int(s[K.H_WINNER])
    assert (w, b) == {WHITE: (1.0, -1.0), BLACK: (-1.0, 1.0)}.get(win, (0.0, 0.0))
    assert e.rewards == {"white": w, "black": b}
    if s[K.H_TRUNC]:
        assert all(e.truncations.values()) and not any(e.terminations.values()) and win == 0
    else:
        assert all(e.terminations.values()) and not any(e.truncations.values()) and win != 0
    turns = int(s[K.H_TURNS])
    if rules.max_battle_turns:
        assert turns <= rules.max_battle_turns
    # each battle turn is a step, a fly (2 decisions) or jumps; every further decision removes a stone
    battle_decisions = int(s[K.H_DECISIONS]) - decisions0 - (n * n if start == "placement" else 0)
    assert battle_decisions <= 2 * (turns + 1) + removed_in_battle
    assert int(s[K.H_DECISIONS]) - decisions0 == steps
    return e


# ------------------------------------------------------------ default run
@pytest.mark.parametrize("ban", BANS)
@pytest.mark.parametrize("n,maxt", [(4, 60), (5, 60), (8, 40), (14, 12)])
def test_random_games_from_placement(n, maxt, ban):
    for seed in range(2 if n < 14 else 1):
        play_checked(dict(board_size=n, single_jump_ban=ban, max_battle_turns=maxt), 100 * n + seed,
                     clone_sample=None if n <= 8 else 12)


@pytest.mark.parametrize("ban", BANS)
@pytest.mark.parametrize("n", [5, 6, 8])
def test_random_games_sparse_positions_fly_and_ban(n, ban):
    # few stones: both sides fly at once, so LIFT/drop and the ban happen often
    for seed in range(3):
        play_checked(dict(board_size=n, single_jump_ban=ban, max_battle_turns=60, min_stones=2), 7000 + 10 * n + seed,
                     start="position")


@pytest.mark.parametrize("ban", BANS)
@pytest.mark.parametrize("n", [4, 5])
def test_random_games_dense_positions(n, ban):
    # more stones than empty points: the move generator walks the empty points
    for seed in range(4):
        play_checked(dict(board_size=n, single_jump_ban=ban, max_battle_turns=40, min_stones=1), 8000 + 10 * n + seed,
                     start="dense")


@pytest.mark.parametrize("profile", ["competitive", "traditional", "ludii8", "jqchess8"])
def test_random_games_each_profile(profile):
    kw = dict(rules=profile, max_battle_turns=30)
    if profile in ("competitive", "traditional"):
        kw["board_size"] = 14
    for seed in range(2):
        play_checked(kw, 900 + seed, start="battle", clone_sample=12)


@pytest.mark.parametrize("options", [
    dict(board_size=6, chain_may_stop=False, max_battle_turns=80),
    dict(board_size=6, fly_threshold=0, max_battle_turns=80),
    dict(board_size=7, min_stones=0, max_battle_turns=80),
    dict(board_size=5, repetition_draw=2, max_battle_turns=0),
    dict(board_size=4, repetition_draw=0, max_battle_turns=100),
    dict(board_size=11, max_battle_turns=10),
])
def test_random_games_option_values(options):
    for seed in range(2):
        play_checked(options, 300 + seed, start="battle", clone_sample=16)


# The options of docs/rules.md §8-§9, alone and together, from the three kinds of start.
RULE_OPTIONS = {
    "fly_only": dict(flyer_moves="fly_only"),
    "turn_end": dict(min_stones_check="turn_end"),
    "on_return": dict(square_on_return=True),
    "formations": dict(formations=True),
    "ban_after": dict(ban_after_capture=True),
    "all": dict(flyer_moves="fly_only", min_stones_check="turn_end", square_on_return=True, formations=True,
                ban_after_capture=True),
}


@pytest.mark.parametrize("name", list(RULE_OPTIONS))
def test_random_games_rule_options(name):
    opts = RULE_OPTIONS[name]
    for seed, ban in enumerate(("vs_flyer", "flyer")):
        play_checked(dict(board_size=5, single_jump_ban=ban, max_battle_turns=40, **opts), 9100 + seed)
        play_checked(dict(board_size=6, single_jump_ban=ban, max_battle_turns=40, min_stones=3, **opts),
                     9200 + seed, start="position")
        play_checked(dict(board_size=4, single_jump_ban=ban, max_battle_turns=30, min_stones=2, **opts),
                     9300 + seed, start="dense")


def test_random_games_ban_after_capture_binds():
    # sparse positions around the flying threshold: the option refuses lone jumps (or a stop after one
    # jump) that the turn-start ban allows, and the kernel still agrees with the reference at every step
    refused = []

    def watch(before, a, after):
        if int(before[K.H_PHASE]) == K.PH_BATTLE and int(before[K.H_SUB]) in (K.SUB_MOVE, K.SUB_CHAIN):
            off = before.copy()
            off[K.H_BAN_AFTER] = 0
            extra = set(kernel_legal(off)) - set(kernel_legal(before))
            assert not set(kernel_legal(before)) - set(kernel_legal(off))  # the option only takes actions away
            refused.extend(extra)

    for seed in range(8):
        for ban in ("vs_flyer", "both"):
            play_checked(dict(board_size=6, single_jump_ban=ban, ban_after_capture=True, max_battle_turns=60,
                              min_stones=2), 9500 + seed, start="position", on_step=watch)
    assert refused


def test_random_games_formations_take_lines():
    # full lines are common on the 4x4 board: these games (checked against the reference) take line captures
    seen = []

    def watch(before, a, after):
        if int(after[K.H_PHASE]) == K.PH_BATTLE and int(after[K.H_SUB]) == K.SUB_CAPTURE \
                and int(before[K.H_SUB]) != K.SUB_CAPTURE:
            q, c = int(after[K.H_LAST_TO]), int(after[K.H_TO_MOVE])
            if K.full_lines_at(after, q, c):
                seen.append(int(after[K.H_PENDING]) - K.squares_at(after, q, c))

    for seed in range(6):
        play_checked(dict(board_size=4, formations=True, max_battle_turns=40, min_stones=1), 9400 + seed,
                     start="dense", on_step=watch)
    assert seen and all(x > 0 for x in seen)


def test_kernel_random_games_end_with_zero_sum_results():
    # the numba driver, many games: every one ends, within the turn limit
    for n in (4, 5, 8):
        r = jiu_env.Rules.make(board_size=n, max_battle_turns=200)
        buf = np.empty(r.num_actions, np.int64)
        K.seed_numba(n)
        for _ in range(40):
            s = r.new_state()
            K.random_playout(s, buf)
            assert s[K.H_PHASE] == K.PH_OVER and s[K.H_TURNS] <= 200
            w, b = K.returns(s)
            assert w + b == 0
            check_bookkeeping(s)


def test_seed_numba_names_a_bad_seed():
    """numba's typing error for a float seed was a traceback of its compiler; numpy's for -1 an overflow."""
    for bad in (1.5, -1, 2**32, True, "1"):
        with pytest.raises(ValueError, match="seed must be an int in 0..2\\*\\*32-1"):
            K.seed_numba(bad)
    K.seed_numba(np.int64(7))
    a = K.random_games(jiu_env.Rules.make(board_size=5).new_state(), 3, 7)
    assert a == K.random_games(jiu_env.Rules.make(board_size=5).new_state(), 3, 7)


# ------------------------------------------------------------------ sweep
@pytest.mark.slow
@pytest.mark.parametrize("n", list(range(4, 21)))
def test_sweep_all_sizes_all_bans(n):
    for ban in BANS:
        for seed in range(3 if n <= 10 else 1):
            play_checked(dict(board_size=n, single_jump_ban=ban, max_battle_turns=300), 50000 + 100 * n + seed,
                         start="placement" if n <= 8 else "battle", clone_sample=8)
            play_checked(dict(board_size=n, single_jump_ban=ban, max_battle_turns=300, min_stones=2),
                         60000 + 100 * n + seed, start="position", clone_sample=8)


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["competitive", "traditional", "ludii8"])
def test_sweep_profiles_full_length(profile):
    for seed in range(3):
        play_checked(dict(rules=profile), 70000 + seed, start="battle", clone_sample=6)
