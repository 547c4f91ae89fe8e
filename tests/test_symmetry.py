"""Board symmetries: bijections on points/actions, and commutation with the rules.

The commutation tests play a random game and, beside it, the same game seen
through a symmetry ``g`` (start from ``transform_state(s0, g)``, play the mapped
actions).  At every decision the legal actions, the board, every header field
and the observation planes of the second game must be the images of the first.
"""

import numpy as np
import pytest

from jiu_env import kernel as K
from jiu_env import symmetry as S
from jiu_env.observation import NUM_PLANES, write_observation
from jiu_env.rules import Rules

SIZES = (4, 5, 8, 9, 14)


def legal(state):
    buf = np.empty(10 * int(state[K.H_P]) + 1, np.int64)
    return buf[:K.legal_actions(state, buf)].copy()


def obs_of(state, me):
    n = int(state[K.H_N])
    out = np.empty((n, n, NUM_PLANES), np.float32)
    write_observation(state, me, out)
    return out


def window_count(state, h):
    """Occurrences of hash ``h`` in the repetition window of ``state``."""
    idx, cap = int(state[K.H_HLEN]), int(state[K.H_CAP])
    lo = max(int(state[K.H_HIRR]), idx - cap)
    base = K.HDR + int(state[K.H_P])
    return int(np.count_nonzero(state[base + np.arange(lo, idx) % cap] == h))


# --------------------------------------------------------------- bijections
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("g", range(8))
def test_maps_are_bijections(n, g):
    p_ = n * n
    pm, am = S.point_map(g, n), S.action_map(g, n)
    assert sorted(pm.tolist()) == list(range(p_))
    assert sorted(am.tolist()) == list(range(10 * p_ + 1))
    assert sorted(S.direction_map(g, n).tolist()) == [0, 1, 2, 3]
    assert am[10 * p_] == 10 * p_  # STOP is fixed
    # action kinds are preserved: POINT, STEP, JUMP, LIFT stay in their ranges
    kinds = np.arange(10 * p_) // p_
    assert np.array_equal(am[:10 * p_] // p_ >= 5, kinds >= 5)
    assert np.array_equal(am[:p_], pm) and np.array_equal(am[9 * p_:10 * p_] - 9 * p_, pm)
    gi = S.inverse(g)
    assert np.array_equal(S.action_map(gi, n)[am], np.arange(10 * p_ + 1))
    assert S.compose(gi, g) == S.IDENTITY


@pytest.mark.parametrize("n", (5, 8))
@pytest.mark.parametrize("g", range(8))
def test_directions_follow_points(n, g):
    """The image of a step p -> p+d is the step g(p) -> g(p) + g(d)."""
    pm, dm = S.point_map(g, n), S.direction_map(g, n)
    for p in range(n * n):
        r, c = divmod(p, n)
        for d in range(4):
            r1, c1 = r + K.DR[d], c + K.DC[d]
            if not (0 <= r1 < n and 0 <= c1 < n):
                continue
            gr, gc = divmod(int(pm[p]), n)
            assert pm[r1 * n + c1] == (gr + K.DR[dm[d]]) * n + gc + K.DC[dm[d]]


def test_named_symmetries():
    n = 8
    corner = n - 1  # top-right corner (0, 7)
    assert S.transform_point(corner, S.NAMES.index("rot90"), n) == 0  # a quarter turn anticlockwise
    assert S.transform_point(corner, S.NAMES.index("transpose"), n) == (n - 1) * n
    assert S.transform_point(1, S.NAMES.index("flip_lr"), n) == n - 2
    assert S.direction_map(S.NAMES.index("rot90")).tolist() == [3, 0, 1, 2]  # up -> left
    assert {S.compose(g, h) for g in range(8) for h in range(8)} == set(range(8))
    with pytest.raises(ValueError):
        S.point_map(8, n)


def test_placement_symmetries():
    for n in (4, 6, 8, 14):
        assert S.placement_symmetries(n) == tuple(S.NAMES.index(x) for x in ("identity", "rot180", "transpose", "anti_transpose"))
    for n in (5, 9, 13):
        assert S.placement_symmetries(n) == tuple(S.NAMES.index(x) for x in ("identity", "transpose"))
    s = Rules.make("competitive", board_size=8).new_state()
    assert S.symmetries_for(s) == S.placement_symmetries(8)
    K.random_placement(s, 3)
    assert S.symmetries_for(s) == S.ALL_SYMMETRIES


@pytest.mark.parametrize("n", (5, 8))
def test_other_symmetries_break_placement(n):
    """A symmetry moving the diagonal ends does not commute with the first placement."""
    s = Rules.make("competitive", board_size=n).new_state()
    first = set(legal(s).tolist())
    for g in set(range(8)) - set(S.placement_symmetries(n)):
        mapped = {S.transform_action(a, g, n) for a in first}
        assert mapped != set(legal(S.transform_state(s, g)).tolist())


# ------------------------------------------------------------- commutation
def assert_images(s, t, g, same_history=True):
    """``t`` (played in the mapped game) is the image of ``s`` under ``g``.

    ``same_history=False``: ``t`` descends from a mid-game ``transform_state``,
    which forgets older positions, so repetition counts may differ.
    """
    n = int(s[K.H_N])
    ts = S.transform_state(s, g)
    skip = {K.H_HIRR}  # the window start differs: older positions are forgotten
    if not same_history:
        skip.add(K.H_REP_COUNT)
    for f in range(K.HDR):
        if f not in skip:
            assert ts[f] == t[f], f"header field {f}: {ts[f]} != {t[f]}"
    assert np.array_equal(ts[K.HDR:K.HDR + n * n], t[K.HDR:K.HDR + n * n])
    assert S.board_hash(t[K.HDR:K.HDR + n * n], t[K.H_TO_MOVE]) == t[K.H_HASH]
    if same_history and s[K.H_PHASE] == K.PH_BATTLE and s[K.H_SUB] == K.SUB_MOVE:
        assert window_count(ts, ts[K.H_HASH]) == window_count(t, t[K.H_HASH]) == t[K.H_REP_COUNT]
    am = S.action_map(g, n)
    la, lt = legal(s), legal(t)
    assert sorted(am[la].tolist()) == sorted(lt.tolist())
    mask = np.zeros(10 * n * n + 1, np.int8)
    mask[la] = 1
    mask_t = np.zeros_like(mask)
    mask_t[lt] = 1
    assert np.array_equal(S.transform_policy(mask, g, n), mask_t)
    planes = slice(None) if same_history else slice(0, NUM_PLANES - 1)  # the last plane is the repetition count
    for me in (K.WHITE, K.BLACK):
        assert np.array_equal(S.transform_observation(obs_of(s, me), g)[..., planes], obs_of(t, me)[..., planes])
    return la


def play_parallel(s0, syms, seed, max_decisions):
    rng = np.random.default_rng(seed)
    n = int(s0[K.H_N])
    s = s0.copy()
    games = {g: S.transform_state(s0, g) for g in syms}
    for _ in range(max_decisions):
        for g, t in games.items():
            la = assert_images(s, t, g)
        if s[K.H_PHASE] == K.PH_OVER:
            break
        a = int(rng.choice(la))
        K.apply_action(s, a)
        for g, t in games.items():
            K.apply_action(t, S.transform_action(a, g, n))
    return s


@pytest.mark.parametrize("profile,n,seed", [
    ("competitive", 5, 1), ("competitive", 8, 2), ("ludii8", 8, 3), ("traditional", 6, 4), ("competitive", 9, 5),
])
def test_battle_commutes_with_all_symmetries(profile, n, seed):
    rules = Rules.make(profile, board_size=n, max_battle_turns=300)
    seen = set()
    for k in range(3):
        s0 = rules.new_state()
        K.random_placement(s0, seed * 100 + k)
        end = play_parallel(s0, S.ALL_SYMMETRIES, seed * 100 + k, 1500)
        seen.add(int(end[K.H_PHASE]))
    assert K.PH_OVER in seen


@pytest.mark.parametrize("n,seed", [(4, 1), (5, 2), (6, 3), (8, 4), (9, 5)])
def test_placement_commutes_with_diagonal_preserving_symmetries(n, seed):
    rules = Rules.make("competitive", board_size=n, max_battle_turns=100)
    s0 = rules.new_state()
    end = play_parallel(s0, S.placement_symmetries(n), seed, n * n + 2)
    assert end[K.H_PHASE] != K.PH_PLACEMENT  # the board filled up and the battle began


def test_sub_phases_are_covered():
    """The random games above pass through every sub-phase (chain, drop, capture)."""
    rules = Rules.make("competitive", board_size=5, max_battle_turns=300)
    subs = set()
    rng = np.random.default_rng(0)
    for k in range(10):
        s = rules.new_state()
        K.random_placement(s, 100 + k)
        while s[K.H_PHASE] == K.PH_BATTLE:
            subs.add(int(s[K.H_SUB]))
            if s[K.H_SUB] != K.SUB_MOVE:
                g = int(rng.integers(8))
                t = S.transform_state(s, g)
                la = assert_images(s, t, g)
                a = int(rng.choice(la))
                K.apply_action(t, S.transform_action(a, g, 5))
                K.apply_action(s, a)
                assert_images(s, t, g, same_history=False)
            else:
                K.apply_action(s, int(rng.choice(legal(s))))
    assert subs == {K.SUB_MOVE, K.SUB_CHAIN, K.SUB_DROP, K.SUB_CAPTURE}


def test_transform_state_keeps_input_and_repetition_count():
    """A shuffle back and forth draws by repetition at the same decision after a mid-game transform."""
    from jiu_env.state import position_state
    from jiu_env.notation import str_to_action

    board = np.zeros((5, 5), np.int64)
    board[0, :4] = K.WHITE  # lines, not squares: a shuffle captures nothing
    board[4, :4] = K.BLACK
    rules = Rules.make("competitive", board_size=5, fly_threshold=0, single_jump_ban="none")
    s = position_state(rules, board, "black")
    n = 5
    cycle = [str_to_action(t, n) for t in ("e3-d3", "a3-b3", "d3-e3", "b3-a3")]
    for a in cycle:  # the start position now occurred twice
        K.apply_action(s, a)
    assert s[K.H_REP_COUNT] == 2
    for g in range(8):
        before = s.copy()
        t = S.transform_state(s, g)
        assert np.array_equal(before, s)
        assert t[K.H_REP_COUNT] == 2 and window_count(t, t[K.H_HASH]) == 2
        u = s.copy()
        for i, a in enumerate(cycle):
            K.apply_action(u, a)
            K.apply_action(t, S.transform_action(a, g, n))
            assert t[K.H_PHASE] == u[K.H_PHASE], i
        assert u[K.H_PHASE] == K.PH_OVER and u[K.H_END_REASON] == K.END_REPETITION
        assert t[K.H_WINNER] == K.DRAW and t[K.H_END_REASON] == K.END_REPETITION


def test_batched_planes_and_channels_first():
    rules = Rules.make("competitive", board_size=6)
    s = rules.new_state()
    K.random_placement(s, 7)
    batch = np.stack([obs_of(s, K.WHITE), obs_of(s, K.BLACK)])
    for g in range(8):
        out = S.transform_observation(batch, g)
        assert out.shape == batch.shape
        chw = S.transform_observation(batch.transpose(0, 3, 1, 2), g, channels_last=False)
        assert np.array_equal(chw, out.transpose(0, 3, 1, 2))
        t = S.transform_state(s, g)
        assert np.array_equal(out[1], obs_of(t, K.BLACK))
    pol = np.random.default_rng(0).random((3, rules.num_actions))
    for g in range(8):
        back = S.transform_policy(S.transform_policy(pol, g, 6), S.inverse(g), 6)
        assert np.array_equal(back, pol)
