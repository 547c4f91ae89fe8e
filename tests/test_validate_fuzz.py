"""validate_state against states one or two edits away from reachable ones.

Reachable states come from seeded random games under every rules profile (and
one game with every later option on), on 6x6, 8x8 and 14x14 boards.  Every one
of them, its image under a random board symmetry, its search scratch copy and,
now and then, the state after a passed turn must validate, and the plain-Python
reference model (reference_model.ref_from_state) must accept it too.

Each fuzz case then changes one or two header slots or board points at random
(seeded).  For every changed state that validate_state accepts:

- the reference model accepts it as well;
- the kernel's legal actions equal the reference model's, and are not empty
  in a game in progress;
- the observation planes of both colours lie in their Box (finite, 0..1) and
  the mover's action mask is the legal set;
- one random legal action, applied by the kernel and by the reference, leads
  to the same game (reference_model.compare_with_reference).

For every changed state that validate_state refuses while the reference model
accepts it, the refusal names a field the reference does not model
(reference_model.REF_UNMODELLED: hashing, history and counters).  The default
run is quick; the long one is marked slow.

Then one edit per cross-field check: each is refused with a message naming
its fields, and the reference refuses it too where it models the fields.  A
formations capture of five (reachable, once refused by the range of
H_PENDING) validates, and its observation stays in the Box (the pending plane
is H_PENDING / 8 under formations).
"""

import zlib

import numpy as np
import pytest

import jiu_env
from jiu_env import kernel as K
from jiu_env.bots.common import scratch_state
from jiu_env.observation import NUM_PLANES, observe, write_observation
from jiu_env.symmetry import symmetries_for, transform_state
from jiu_env.validate import InvalidStateError, validate_state

from conftest import kernel_legal
from reference_model import REF_UNMODELLED, compare_with_reference, ref_from_state

CONFIGS = {
    "competitive6": dict(rules="competitive", board_size=6, max_battle_turns=150),
    "traditional6": dict(rules="traditional", board_size=6, max_battle_turns=150),
    "ludii8": dict(rules="ludii8", max_battle_turns=100),
    "jqchess8": dict(rules="jqchess8", max_battle_turns=100),
    "competitive14": dict(rules="competitive", max_battle_turns=40),
    "traditional14": dict(rules="traditional", max_battle_turns=25),
    # every later option on, the ban on both sides, no early stop, a short repetition rule
    "options6": dict(rules="traditional", board_size=6, formations=True, square_on_return=True,
                     single_jump_ban="both", chain_may_stop=False, min_stones_check="turn_end",
                     flyer_moves="fly_only", fly_threshold=12, repetition_draw=2, max_battle_turns=150),
}

_UNMODELLED_NAMES = ("H_CAP", "H_HASH", "H_HLEN", "H_HIRR", "H_CAPTURED", "H_LAST_ACTION", "H_DECISIONS",
                     "H_REP_COUNT")


def reachable_states(config, seed, stats=None):
    """Every state of one seeded random game (placement to the end), each checked as reachable."""
    rules = jiu_env.Rules.make(**CONFIGS[config])
    rng = np.random.default_rng(seed)
    s = rules.new_state()
    buf = np.empty(rules.num_actions, np.int64)
    out = []
    while True:
        check_reachable(s, rng)
        out.append(s.copy())
        if s[K.H_PHASE] == K.PH_OVER:
            break
        k = K.legal_actions(s, buf)
        K.apply_action(s, int(buf[rng.integers(k)]))
    if stats is not None:
        stats["reachable"] = stats.get("reachable", 0) + len(out)
    return out


def check_reachable(s, rng):
    """A state of a real game: validate_state and the reference model take it, and the package's
    other state producers (the symmetries that commute with the rules from here, search scratch
    copies, a passed turn) give states that validate."""
    assert validate_state(s) is s
    ref = ref_from_state(s)
    assert set(kernel_legal(s)) == ref.legal()
    validate_state(transform_state(s, int(rng.choice(symmetries_for(s)))))
    if s[K.H_PHASE] == K.PH_BATTLE:
        validate_state(scratch_state(s))
        if s[K.H_SUB] in (K.SUB_MOVE, K.SUB_CAPTURE) and rng.random() < 0.1:
            t = s.copy()
            K.pass_turn(t)
            validate_state(t)


def _value(rng, old, p):
    r = rng.random()
    if r < 0.35:
        return old + int(rng.choice([-2, -1, 1, 2]))
    if r < 0.65:
        return int(rng.integers(-1, p))  # a point, or -1
    if r < 0.9:
        return int(rng.integers(0, 9))
    return int(rng.choice([-(2**62), -(10**6), 10**6, 2**40, 2**62]))


def mutate(s, rng):
    """One or two random edits of ``s`` (a copy); returns the copy and the header slots edited."""
    t = s.copy()
    p = int(s[K.H_P])
    slots = set()
    for _ in range(int(rng.integers(1, 3))):
        kind = rng.random()
        if kind < 0.45:  # a header slot
            f = int(rng.integers(K.HDR))
            t[f] = _value(rng, int(t[f]), p)
            slots.add(f)
        elif kind < 0.75:  # a board point, with the stone counts kept in step (or not)
            q = K.HDR + int(rng.integers(p))
            old, new = int(t[q]), int(rng.integers(3))
            t[q] = new
            if rng.random() < 0.8:
                if old in (K.WHITE, K.BLACK):
                    t[K.H_COUNT + old] -= 1
                if new in (K.WHITE, K.BLACK):
                    t[K.H_COUNT + new] += 1
        else:  # two board points swap their contents: same stone counts, another position
            a, b = K.HDR + rng.integers(p, size=2)
            t[a], t[b] = t[b], t[a]
    return t, slots


def observation_in_box(s, legal):
    n = int(s[K.H_N])
    obs = np.empty((n, n, NUM_PLANES), np.float32)
    for me in (K.WHITE, K.BLACK):
        write_observation(s, me, obs)
        assert np.isfinite(obs).all() and obs.min() >= 0.0 and obs.max() <= 1.0, \
            f"observation plane(s) {sorted(set(np.argwhere((obs < 0) | (obs > 1))[:, 2].tolist()))} out of 0..1"
    mask = np.empty(K.num_actions(n), np.int8)
    mover = int(s[K.H_TO_MOVE])
    observe(s, mover, True, obs, mask)
    assert set(np.flatnonzero(mask).tolist()) == (set(legal) if s[K.H_PHASE] != K.PH_OVER else set())


def fuzz(configs, seeds, per_state, seed):
    """Mutate reachable states; check every accepted one against the reference and the observation Box."""
    rng = np.random.default_rng(seed)
    stats = dict(tried=0, accepted=0, rejected=0, ref_only=0, stepped=0)
    for config in configs:
        for game_seed in seeds:
            states = reachable_states(config, game_seed, stats)
            for i in rng.permutation(len(states))[:max(1, len(states) // 3)]:
                for _ in range(per_state):
                    t, slots = mutate(states[i], rng)
                    stats["tried"] += 1
                    check_mutated(t, slots, rng, stats, (config, game_seed, int(i)))
    return stats


def check_mutated(t, slots, rng, stats, where):
    before = t.copy()
    try:
        ref = ref_from_state(t)
    except ValueError as e:
        ref, why = None, str(e)
    try:
        validate_state(t)
    except InvalidStateError as e:
        stats["rejected"] += 1
        if ref is not None:
            stats["ref_only"] += 1
            # the reference model keeps no hash, history or counters: only those may tell them apart
            assert slots & set(REF_UNMODELLED) or any(name in str(e) for name in _UNMODELLED_NAMES), \
                f"{where}: validate_state refuses a state the reference accepts: {e}"
        assert np.array_equal(t, before)
        return
    stats["accepted"] += 1
    assert ref is not None, f"{where}: validate_state accepts a state the reference refuses ({why}); slots {slots}"
    legal = kernel_legal(t)
    assert set(legal) == ref.legal(), f"{where}: legal actions differ from the reference; slots {slots}"
    assert legal or t[K.H_PHASE] == K.PH_OVER
    observation_in_box(t, legal)
    if legal:
        a = int(legal[rng.integers(len(legal))])
        K.apply_action(t, a)
        ref.apply(a)
        if t[K.H_END_REASON] != K.END_REPETITION:  # the reference's history starts at the changed state
            compare_with_reference(t, ref)
            stats["stepped"] += 1
        validate_state(t)


def test_reachable_states_validate_under_every_profile():
    stats = {}
    for config in CONFIGS:
        for seed in range(2 if config.endswith("14") else 4):
            reachable_states(config, 1000 + seed, stats)
    assert stats["reachable"] > 3000


def test_fuzz_accepted_states_agree_with_the_reference():
    stats = fuzz(list(CONFIGS), seeds=[1], per_state=6, seed=20261125)
    print(stats)
    assert stats["tried"] > 2500
    assert stats["accepted"] > stats["tried"] // 10  # the edits reach deep into the checks
    assert stats["rejected"] > stats["tried"] // 4


@pytest.mark.slow
@pytest.mark.parametrize("config", list(CONFIGS))
def test_fuzz_long(config):
    stats = fuzz([config], seeds=range(2, 8), per_state=12, seed=zlib.crc32(config.encode()))
    print(config, stats)
    assert stats["accepted"] > stats["tried"] // 10


def test_formations_capture_of_five_is_a_valid_state():
    # a flight that completes a full line and three squares takes five stones (docs/rules.md §10.4):
    # the capture sub-phase with H_PENDING = 5 is reachable, and validate_state takes it
    from jiu_env.state import position_state

    W, B = K.WHITE, K.BLACK
    r = jiu_env.Rules.make("traditional", board_size=4, formations=True, min_stones=0, fly_threshold=16,
                           max_battle_turns=0)
    board = np.array([[W, W, W, B], [W, 0, W, W], [W, W, W, B], [B, B, B, W]])
    s = position_state(r, board, "white")
    K.apply_action(s, K.encode_lift(15, 16))
    K.apply_action(s, 5)
    assert s[K.H_SUB] == K.SUB_CAPTURE and s[K.H_PENDING] == 5
    validate_state(s)
    ref = ref_from_state(s)
    assert set(kernel_legal(s)) == ref.legal()
    for a in kernel_legal(s)[:1]:
        K.apply_action(s, a)
        assert s[K.H_PENDING] == 4


def test_formations_capture_of_five_observation_in_box():
    from jiu_env.state import position_state

    W, B = K.WHITE, K.BLACK
    r = jiu_env.Rules.make("traditional", board_size=4, formations=True, min_stones=0, fly_threshold=16,
                           max_battle_turns=0)
    s = position_state(r, np.array([[W, W, W, B], [W, 0, W, W], [W, W, W, B], [B, B, B, W]]), "white")
    K.apply_action(s, K.encode_lift(15, 16))
    K.apply_action(s, 5)
    observation_in_box(s, kernel_legal(s))


# ------------------------------------------------------- one edit per check
def _pool():
    """Reachable states of a few seeded 6x6 games, and of one stopped at the turn limit."""
    out = []
    for seed in range(6):
        out += reachable_states("competitive6", 40 + seed)
    r = jiu_env.Rules.make("competitive", board_size=6, max_battle_turns=3)
    s = r.new_state()
    K.random_placement(s, 1)
    K.seed_numba(1)
    K.random_playout(s, np.empty(r.num_actions, np.int64))
    assert s[K.H_END_REASON] == K.END_TURN_LIMIT
    return out + [s]


def _kind(s):
    ph = int(s[K.H_PHASE])
    if ph == K.PH_PLACEMENT:
        return "placement" if s[K.H_PLACED] >= 4 else "placement_start"
    if ph == K.PH_OVER:
        return "turn_limit" if s[K.H_END_REASON] == K.END_TURN_LIMIT else "over"
    sub = int(s[K.H_SUB])
    if sub == K.SUB_CAPTURE and s[K.H_CHAIN_LEN] == 0 and not s[K.H_FLY_NOW]:
        return "step_capture"
    return K.SUBPHASE_NAMES[sub]


def _put(s, q, v):
    """Point q holds v; the stone counts follow."""
    old = int(s[K.HDR + q])
    if old:
        s[K.H_COUNT + old] -= 1
    if v:
        s[K.H_COUNT + v] += 1
    s[K.HDR + q] = v


def _swap_white_black(s):
    pts = np.flatnonzero(s[K.HDR:K.HDR + 36] == K.BLACK)
    ends = K.diagonal_ends(6)
    _put(s, int([q for q in pts if q not in ends][0]), K.WHITE)


def _move_end_stone(s):
    a, b = K.diagonal_ends(6)
    end = a if s[K.HDR + a] == K.WHITE else b
    empty = int(np.flatnonzero(s[K.HDR:K.HDR + 36] == K.EMPTY)[0])
    _put(s, end, K.EMPTY)
    _put(s, empty, K.WHITE)


def _origin_on_a_stone(s):
    stones = np.flatnonzero(s[K.HDR:K.HDR + 36] != K.EMPTY)
    s[K.H_ORIGIN] = int([q for q in stones if q != s[K.H_CHAIN]][0])


def _no_jump_left(s):
    n, q, c = 6, int(s[K.H_CHAIN]), int(s[K.H_TO_MOVE])
    for d in range(4):
        r, col = q // n + K.DR[d], q % n + K.DC[d]
        r2, c2 = r + K.DR[d], col + K.DC[d]
        if 0 <= r2 < n and 0 <= c2 < n and s[K.HDR + r * n + col] == 3 - c and s[K.HDR + r2 * n + c2] == K.EMPTY:
            _put(s, r * n + col, K.EMPTY)


def _pending_past_squares(s):
    s[K.H_PENDING] = K.squares_at(s, int(s[K.H_LAST_TO]), int(s[K.H_TO_MOVE])) + 1


def _set(**fields):
    def edit(s):
        for name, v in fields.items():
            s[getattr(K, name)] = v(s) if callable(v) else v
    return edit


CROSS_FIELD = [
    ("min_stones", "move", _set(H_MIN=18), "H_MIN=18 (min_stones: at most N²//2 − 1 on the 6x6 board"),
    ("placement_counts", "placement", _swap_white_black, "H_COUNT+WHITE="),
    ("placement_ends", "placement", _move_end_stone, "the diagonal ends of the centre square (points 14 and 21)"),
    ("placement_rep", "placement", _set(H_REP_COUNT=1), "H_REP_COUNT=1 must be 0 in the placement phase"),
    ("placement_last_from", "placement_start", _set(H_LAST_FROM=3), "H_LAST_FROM=3 must be -1 in the placement"),
    ("over_pending", "over", _set(H_PENDING=1), "H_PENDING=1 must be 0 once the game is over"),
    ("over_chain", "over", _set(H_CHAIN=5), "H_CHAIN=5 must be -1 once the game is over"),
    ("over_turns", "turn_limit", _set(H_TURNS=2), "H_END_REASON=turn_limit needs H_TURNS = max_battle_turns"),
    ("over_repetition", "turn_limit", _set(H_END_REASON=K.END_REPETITION, H_WINNER=K.DRAW, H_TRUNC=0),
     "does not fit H_END_REASON=repetition with repetition_draw=3"),
    ("rep_count_high", "move", _set(H_REP_COUNT=3), "H_REP_COUNT=3 in a game in progress must be in 1..2"),
    ("rep_count_zero", "chain", _set(H_REP_COUNT=0), "H_REP_COUNT=0 in a game in progress must be in 1..2"),
    ("rep_window", "move", _set(H_REP_COUNT=2, H_HIRR=lambda s: s[K.H_HLEN] - 1),
     "H_REP_COUNT=2 is more than the 1 turn starts the history window holds"),
    ("ban", "move", _set(H_BAN_NOW=1), "H_BAN_NOW=1 does not fit single_jump_ban=vs_flyer"),
    ("captured_move", "move", _set(H_CAPTURED=1), "H_CAPTURED=1 does not fit the move sub-phase"),
    ("captured_chain", "chain", _set(H_CAPTURED=0), "H_CAPTURED=0 does not fit the chain sub-phase"),
    ("chain_origin", "chain", _origin_on_a_stone, "where the chain started, holds"),
    ("chain_path", "chain", _set(H_CHAIN_LEN=lambda s: s[K.H_CHAIN_LEN] + 1), "is not reached from H_ORIGIN="),
    ("chain_last", "chain", _set(H_LAST_FROM=-1), "in the chain sub-phase must be the chain's origin"),
    ("chain_no_jump", "chain", _no_jump_left, "has no further jump"),
    ("capture_stone", "capture", _set(H_LAST_TO=lambda s: s[K.H_ORIGIN]), "must be the point where the moved stone"),
    ("capture_path", "step_capture", _set(H_CHAIN_LEN=1, H_CAPTURED=1), "is not reached from H_ORIGIN="),
    ("capture_last_from", "capture", _set(H_LAST_FROM=-1), "in the capture sub-phase must be the move's origin"),
    ("capture_pending", "step_capture", _pending_past_squares, "captures that the moved stone's point"),
]


@pytest.fixture(scope="module")
def pool():
    return _pool()


@pytest.mark.parametrize("name,kind,edit,message", CROSS_FIELD, ids=[c[0] for c in CROSS_FIELD])
def test_each_cross_field_check_names_the_fields(pool, name, kind, edit, message):
    s = next(x for x in pool if _kind(x) == kind).copy()
    validate_state(s)
    edit(s)
    before = s.copy()
    with pytest.raises(InvalidStateError) as info:
        validate_state(s)
    assert message in str(info.value)
    assert np.array_equal(s, before)
    if not any(f in str(info.value) for f in _UNMODELLED_NAMES):
        with pytest.raises(ValueError):
            ref_from_state(s)  # the reference model refuses it too
