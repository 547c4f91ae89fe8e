"""Hostile input to the kernel and envs: states, actions, buffers and parameters never crash the interpreter.

Every case gets a clear exception naming the problem, leaves the state (or
the env) unchanged, and the crash reproductions run in a subprocess so that a
regression fails the test instead of killing pytest.
"""

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jiu_env
from jiu_env import Rules
from jiu_env import kernel as K
from jiu_env.bots import make_bot
from jiu_env.observation import NUM_PLANES, observe, write_observation
from jiu_env.envs.single_agent import JiuSelfPlayEnv, JiuVsBotEnv
from jiu_env.validate import InvalidStateError, validate_state
from jiu_env.batch import BatchRunner
from jiu_env.envs.vector import JiuVectorEnv

BOTS = ["random", "greedy", "pattern", "alphabeta:depth=1", "mcts:sims=20"]


def _battle(n=8, seed=3):
    s = Rules.make(board_size=n).new_state()
    K.random_placement(s, seed)
    return s


def _states_of_a_game(n=6, seed=0):
    """Every state of a random game (placement, battle, chains, drops, captures, over)."""
    rng = np.random.default_rng(seed)
    r = Rules.make("competitive", board_size=n)
    s = r.new_state()
    buf = np.empty(r.num_actions, np.int64)
    out = []
    while s[K.H_PHASE] != K.PH_OVER:
        out.append(s.copy())
        k = K.legal_actions(s, buf)
        K.apply_action(s, int(buf[rng.integers(k)]))
    out.append(s.copy())
    return out


def _run(code, timeout=300):
    """Run ``code`` in a fresh interpreter; return (returncode, output)."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout + p.stderr


# ------------------------------------------------------------ validate_state
MUTATIONS = [
    ("lift", {K.H_SUB: K.SUB_DROP, K.H_LIFT: 10**9}, "H_LIFT=1000000000 is not a point of the 8x8 board"),
    ("sub9", {K.H_SUB: 9}, "H_SUB=9 is not a sub-phase"),
    ("to_move", {K.H_TO_MOVE: 7}, "H_TO_MOVE=7 is not a colour"),
    ("to_move0", {K.H_TO_MOVE: 0}, "H_TO_MOVE=0 is not a colour"),
    ("phase", {K.H_PHASE: 5}, "H_PHASE=5 is not a phase"),
    ("phase-1", {K.H_PHASE: -1}, "H_PHASE=-1 is not a phase"),
    ("n", {K.H_N: 10**6}, "H_N=1000000 is not a board size"),
    ("p", {K.H_P: 65}, "H_P=65 is not 8*8"),
    ("cap", {K.H_CAP: 5}, "its length 1105 is not HDR + P + H_CAP = 109"),
    ("cap0", {K.H_CAP: 0}, "H_CAP=0 is not a history capacity in 1..1000001"),
    ("cap-big", {K.H_CAP: 10**7}, "H_CAP=10000000 is not a history capacity in 1..1000001"),
    ("flyer_moves", {K.H_FLYER_MOVES: 2}, "H_FLYER_MOVES=2 (flyer_moves) is not in 0..1: 0 all, 1 fly_only"),
    ("min_check", {K.H_MIN_CHECK: -1}, "H_MIN_CHECK=-1 (min_stones_check) is not in 0..1"),
    ("formations", {K.H_FORMATIONS: 5}, "H_FORMATIONS=5 (formations) is not in 0..1"),
    ("maxt", {K.H_MAXT: -3}, "H_MAXT=-3"),
    ("fly", {K.H_FLY: 1000}, "H_FLY=1000 (fly_threshold: at most N² on the 8x8 board, as Rules allows) "
            "is not in 0..64"),
    ("ban", {K.H_BAN: 4}, "H_BAN=4 (single_jump_ban) is not in 0..3: 0 none, 1 vs_flyer, 2 flyer, 3 both"),
    ("min", {K.H_MIN: -1}, "H_MIN=-1 (min_stones: at most N²//2 − 1 on the 8x8 board, as Rules allows) "
            "is not in 0..31"),
    ("chain_stop", {K.H_CHAIN_STOP: 2}, "H_CHAIN_STOP=2 (chain_may_stop) is not in 0..1"),
    ("rep1", {K.H_REP: 1}, "H_REP=1 (repetition_draw) would draw every game at its first battle turn"),
    ("count", {K.H_COUNT + K.WHITE: 0}, "but the board has"),
    ("board", {K.HDR + 5: 3}, "board value 3 at point 5"),
    ("board-neg", {K.HDR + 9: -1}, "board value -1 at point 9"),
    ("placed", {K.H_PLACED: 3}, "H_PLACED=3 after the placement phase must be P=64"),
    ("chain-empty", {K.H_SUB: K.SUB_CHAIN, K.H_CHAIN: -1}, "H_CHAIN=-1 must be a point holding a stone"),
    ("drop-no-lift", {K.H_SUB: K.SUB_DROP}, "H_LIFT=-1 must be a point holding a stone"),
    ("capture-none", {K.H_SUB: K.SUB_CAPTURE}, "H_PENDING=0 in the capture sub-phase"),
    ("pending-move", {K.H_PENDING: 2}, "H_PENDING=2 must be 0 in the move sub-phase"),
    ("pending-huge", {K.H_SUB: K.SUB_CAPTURE, K.H_PENDING: 10**9}, "H_PENDING=1000000000"),
    ("origin", {K.H_ORIGIN: 64}, "H_ORIGIN=64 is not a point"),
    ("last_to", {K.H_LAST_TO: -5}, "H_LAST_TO=-5 is not a point"),
    ("last_action", {K.H_LAST_ACTION: 10**12}, "H_LAST_ACTION=1000000000000"),
    ("winner-live", {K.H_WINNER: K.WHITE}, "a game in progress has H_WINNER=1"),
    ("over-no-reason", {K.H_PHASE: K.PH_OVER}, "H_PHASE is over but H_END_REASON=0"),
    ("hlen", {K.H_HLEN: -1}, "H_HLEN=-1"),
    ("hirr", {K.H_HIRR: 10**6}, "H_HIRR="),
    ("turns", {K.H_TURNS: 10**6}, "H_TURNS=1000000"),
    ("fly_now", {K.H_FLY_NOW: 1}, "H_FLY_NOW=1 does not fit"),
    ("flag", {K.H_CAPTURED: 7}, "H_CAPTURED=7"),
]


@pytest.mark.parametrize("name,fields,message", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_validate_state_names_the_field(name, fields, message):
    s = _battle()
    for f, v in fields.items():
        s[f] = v
    before = s.copy()
    with pytest.raises(InvalidStateError, match="not a valid kernel state") as info:
        validate_state(s)
    assert message in str(info.value)
    assert np.array_equal(s, before)


def test_validate_state_accepts_every_state_of_real_games():
    for seed in range(3):
        for s in _states_of_a_game(6, seed):
            assert validate_state(s) is s
    for profile, n in (("traditional", 5), ("ludii8", 8), ("competitive", 4)):
        r = Rules.make(profile, board_size=n, max_battle_turns=0 if n == 5 else 60)
        s = r.new_state()
        K.seed_numba(n)
        K.random_playout(s, np.empty(r.num_actions, np.int64))
        validate_state(s)


def test_validate_state_layout_and_types():
    with pytest.raises(TypeError, match="1-D np.int64"):
        validate_state([0] * 100)
    with pytest.raises(TypeError, match="1-D np.int64"):
        validate_state(_battle().astype(np.int32))
    with pytest.raises(TypeError, match="1-D np.int64"):
        validate_state(_battle()[None, :])
    with pytest.raises(InvalidStateError, match="fewer than the 40 header fields"):
        validate_state(np.zeros(10, np.int64))
    with pytest.raises(InvalidStateError, match="its length"):
        validate_state(np.concatenate([_battle(), [0]]))
    with pytest.raises(InvalidStateError):
        validate_state(np.zeros(2000, np.int64))
    with pytest.raises(ValueError, match="the game is over"):
        validate_state(_states_of_a_game()[-1], live=True)


def test_validate_state_fuzz_single_fields():
    """Random field changes: validate_state either refuses, or every bot returns a legal action."""
    rng = np.random.default_rng(7)
    states = _states_of_a_game(6, 1) + _states_of_a_game(5, 2)
    bots = {spec: make_bot(spec, seed=0) for spec in ["random", "greedy", "pattern", "alphabeta:depth=1"]}
    vals = [-(2**62), -2, -1, 0, 1, 2, 3, 4, 5, 9, 24, 25, 36, 10**9, 2**62]
    accepted = 0
    for _ in range(400):
        s = states[rng.integers(len(states))].copy()
        f = int(rng.integers(0, K.HDR + int(s[K.H_P])))
        s[f] = vals[rng.integers(len(vals))]
        try:
            validate_state(s, live=True)
        except ValueError:
            continue
        accepted += 1
        for spec, bot in bots.items():
            before = s.copy()
            a = bot.step(s)
            assert K.is_legal(s, a), (spec, f)
            assert np.array_equal(s, before)
    assert accepted > 20


def test_validate_state_is_fast():
    import time

    s = _battle(14)
    validate_state(s)
    t0 = time.perf_counter()
    for _ in range(200):
        validate_state(s)
    assert (time.perf_counter() - t0) / 200 < 1e-3  # a few microseconds; generous for a busy machine


# ---------------------------------------------------------------- bots
@pytest.mark.parametrize("spec", BOTS)
@pytest.mark.parametrize("name,fields,message", MUTATIONS[:6], ids=[m[0] for m in MUTATIONS[:6]])
def test_bots_refuse_bad_states(spec, name, fields, message):
    s = _battle()
    for f, v in fields.items():
        s[f] = v
    before = s.copy()
    with pytest.raises(InvalidStateError, match=message.split(" is ")[0]):
        make_bot(spec, seed=0).step(s)
    assert np.array_equal(s, before)


@pytest.mark.parametrize("spec", BOTS)
def test_bots_refuse_random_integer_bodies(spec):
    rng = np.random.default_rng(0)
    s = _battle()
    s[K.H_PHASE + 1:] = rng.integers(-2**62, 2**62, s.size - K.H_PHASE - 1)
    with pytest.raises(InvalidStateError):
        make_bot(spec, seed=0).step(s)
    t = rng.integers(-2**62, 2**62, s.size)
    with pytest.raises(InvalidStateError):
        make_bot(spec, seed=0).step(t)


def test_bot_crash_reproductions_in_a_subprocess():
    """The original crashes (SIGSEGV, endless loops, memory exhaustion): each must now be a clean ValueError."""
    rc, out = _run("""
        import numpy as np
        from jiu_env import kernel as K, Rules
        from jiu_env.bots import make_bot
        cases = {"lift": {K.H_SUB: K.SUB_DROP, K.H_LIFT: 10**9}, "sub9": {K.H_SUB: 9},
                 "to_move": {K.H_TO_MOVE: 9}, "phase": {K.H_PHASE: 3}}
        for spec in ["random", "greedy", "pattern", "alphabeta:depth=1", "mcts:sims=20"]:
            for name, fields in cases.items():
                s = Rules.make().new_state(); K.random_placement(s, 3)
                for f, v in fields.items():
                    s[f] = v
                try:
                    make_bot(spec, seed=0).step(s)
                    print("ACCEPTED", spec, name)
                except ValueError:
                    pass
            rng = np.random.default_rng(1)
            s = Rules.make().new_state(); s[K.H_PHASE + 1:] = rng.integers(-2**62, 2**62, s.size - K.H_PHASE - 1)
            try:
                make_bot(spec, seed=0).step(s)
                print("ACCEPTED", spec, "random body")
            except ValueError:
                pass
        print("DONE")
    """, timeout=600)
    assert rc == 0 and "DONE" in out and "ACCEPTED" not in out, out


@pytest.mark.parametrize("spec,param", [("mcts:time=inf", "time"), ("mcts:time=nan", "time"),
                                        ("alphabeta:time=1e300", "time"), ("alphabeta:time=inf", "time"),
                                        ("mcts:sims=1000000000000", "sims"), ("mcts:c=inf", "c"),
                                        ("mcts:widen=nan", "widen"), ("mcts:max_nodes=100000000000", "max_nodes"),
                                        ("mcts:rollout_cap=-1", "rollout_cap"), ("alphabeta:cap_width=1.5", "cap_width"),
                                        ("mcts:time=0", "time"), ("alphabeta:time=-1", "time"),
                                        ("mcts:sims=true", "sims")])
def test_bot_budgets_are_finite_and_bounded(spec, param):
    with pytest.raises(ValueError, match=rf"{spec.split(':')[0]} {param} must be"):
        make_bot(spec)


def test_bot_budgets_within_bounds_still_work():
    assert make_bot("mcts:time=0.05").time == 0.05
    assert make_bot("alphabeta:time=86400").time == 86400.0
    assert make_bot("mcts:sims=5,c=0,widen=0").sims == 5


# -------------------------------------------------------- kernel entry points
def test_kernel_apply_action_is_checked():
    s = _battle()
    before = s.copy()
    with pytest.raises(ValueError, match="out of range"):
        K.apply_action(s, 10**9)
    with pytest.raises(ValueError, match="out of range"):
        K.apply_action(s, -1)
    with pytest.raises(TypeError, match="integer"):
        K.apply_action(s, 1.5)
    with pytest.raises(TypeError, match="integer"):
        K.apply_action(s, True)
    with pytest.raises(ValueError, match="illegal action 0: in the move sub-phase"):
        K.apply_action(s, 0)
    bad = s.copy()
    bad[K.H_LIFT] = 10**9
    with pytest.raises(InvalidStateError, match="H_LIFT"):
        K.apply_action(bad, 0)
    over = _states_of_a_game()[-1]
    with pytest.raises(ValueError, match="over"):
        K.apply_action(over, 0)
    assert np.array_equal(s, before)
    buf = np.empty(K.num_actions(8), np.int64)
    a = int(buf[:K.legal_actions(s, buf)][0])
    t = s.copy()
    K.apply_action(s, a)
    K.apply_action_unchecked(t, a)
    assert np.array_equal(s, t)


def test_kernel_buffers_are_checked():
    s = _battle()
    na = K.num_actions(8)
    for bad, err in [(np.empty(5, np.int64), ValueError), (np.empty(na, np.int32), ValueError),
                     (np.empty((na, 1), np.int64), ValueError), ([0] * na, TypeError)]:
        with pytest.raises(err):
            K.legal_actions(s, bad)
        with pytest.raises(err):
            K.random_playout(s.copy(), bad)
    ro = np.empty(na, np.int64)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        K.legal_actions(s, ro)
    for bad in (np.empty(na - 1, np.int8), np.empty(na + 5, np.int8), np.empty(na, np.complex64)):
        with pytest.raises(ValueError):
            K.legal_mask(s, bad)
    mask = np.empty(na, np.int8)
    assert K.legal_mask(s, mask) == K.legal_actions(s, np.empty(na, np.int64)) == mask.sum()


def test_kernel_overflow_reproductions_in_a_subprocess():
    rc, out = _run("""
        import numpy as np
        from jiu_env import kernel as K, Rules
        s = Rules.make().new_state(); K.random_placement(s, 3)
        for f in (lambda: K.legal_actions(s, np.empty(3, np.int64)), lambda: K.legal_mask(s, np.empty(3, np.int8)),
                  lambda: K.apply_action(s, 10**9), lambda: K.apply_action(s, -(2**62))):
            try:
                f(); print("ACCEPTED")
            except ValueError:
                pass
        print("DONE")
    """)
    assert rc == 0 and "DONE" in out and "ACCEPTED" not in out, out


def test_kernel_is_legal_and_other_entry_points_are_checked():
    s = _battle()
    assert K.is_legal(s, 10**30) is False
    assert K.is_legal(s, -1) is False
    with pytest.raises(TypeError):
        K.is_legal(s, "a0")
    bad = s.copy()
    bad[K.H_SUB] = 9
    with pytest.raises(InvalidStateError):
        K.is_legal(bad, 0)
    with pytest.raises(ValueError, match="seed"):
        K.random_placement(Rules.make(board_size=8).new_state(), -1)
    with pytest.raises(InvalidStateError):
        K.random_placement(bad, 0)
    with pytest.raises(ValueError, match="n_games"):
        K.random_games(Rules.make(board_size=8).new_state(), -1, 0)
    with pytest.raises(ValueError, match="pass"):
        K.pass_turn(Rules.make(board_size=8).new_state())
    fresh = Rules.make(board_size=4).new_state()
    with pytest.raises(ValueError, match="board"):
        K.set_position(fresh, np.full(16, 7), K.BLACK)
    with pytest.raises(ValueError, match="to_move"):
        K.set_position(fresh, np.zeros(16, np.int64), 5)
    with pytest.raises(ValueError, match="fresh"):
        K.set_position(s, np.zeros(64, np.int64), K.BLACK)


def test_numba_callers_still_get_the_fast_functions():
    """Checked in Python, unchecked in @njit code (bots, batched runner): same results as before."""
    assert K.apply_action.unchecked is K.apply_action_unchecked
    assert K.legal_actions.unchecked is K.legal_actions_unchecked
    r = Rules.make(board_size=6)
    assert K.random_games(r.new_state(), 3, 5) == K.random_games_unchecked(r.new_state(), 3, 5)


# ------------------------------------------------------------------ read-only
def _ro(s):
    s = s.copy()
    s.setflags(write=False)
    return s


def test_read_only_states_in_kernel_and_observation():
    for s in _states_of_a_game(6, 4)[::7]:
        r = _ro(s)
        n = int(s[K.H_N])
        na = K.num_actions(n)
        validate_state(r)
        buf, mask = np.empty(na, np.int64), np.empty(na, np.int8)
        k = K.legal_actions(r, buf)
        assert k == K.legal_actions_unchecked(r, np.empty(na, np.int64))
        assert K.legal_mask(r, mask) == K.legal_mask_unchecked(r, np.empty(na, np.int8)) == k
        for a in buf[:min(k, 3)]:
            assert K.is_legal(r, int(a)) and K.is_legal_unchecked(r, int(a))
        K.returns(r)
        K.decision_hash(r)
        assert K.same_decision_point(r, s)
        K.squares_at(r, 0, K.WHITE)
        obs = np.empty((n, n, NUM_PLANES), np.float32)
        write_observation(r, K.WHITE, obs)
        observe(r, K.BLACK, True, obs, mask)
        if k:
            with pytest.raises(ValueError, match="read-only"):
                K.apply_action(r, int(buf[0]))
        assert np.array_equal(r, s)


@pytest.mark.parametrize("spec", BOTS)
def test_bots_on_read_only_states(spec):
    for s in _states_of_a_game(6, 5)[:-1:9]:
        a = make_bot(spec, seed=1).step(_ro(s))
        assert a == make_bot(spec, seed=1).step(s.copy())


def _ray_roundtrip(obj):
    """Pickle with out-of-band buffers and load them read-only, as Ray's object store does."""
    bufs = []
    data = pickle.dumps(obj, protocol=5, buffer_callback=bufs.append)
    assert bufs  # the arrays really went out of band
    return pickle.loads(data, buffers=[b.raw().toreadonly() for b in bufs])


def _play_aec(env, n):
    out = []
    for _ in range(n):
        obs, r, t, tr, _ = env.last()
        a = None if t or tr else int(np.flatnonzero(obs["action_mask"])[-1])
        env.step(a)
        out.append((a, r, t, tr))
        if not env.agents:
            break
    return out


@pytest.mark.parametrize("make", [lambda: jiu_env.raw_env(board_size=6), lambda: jiu_env.env(board_size=6)],
                         ids=["raw", "wrapped"])
def test_aec_env_unpickled_read_only_goes_on(make):
    e = make()
    e.reset(seed=1)
    _play_aec(e, 30)
    e.last()
    e2 = _ray_roundtrip(e)
    assert e2.unwrapped._state.flags.writeable  # the array numba steps is writable and the env's own
    assert not e2.unwrapped.state.flags.writeable and not np.shares_memory(e2.unwrapped.state, e.unwrapped.state)
    assert _play_aec(e2, 40) == _play_aec(e, 40)
    assert np.array_equal(e2.unwrapped.state, e.unwrapped.state)


@pytest.mark.parametrize("opp", BOTS)
def test_single_agent_env_unpickled_read_only_goes_on(opp):
    env = JiuVsBotEnv(opponent=opp, learner="white", board_size=6)
    env.reset(seed=2)
    for _ in range(4):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    env2 = _ray_roundtrip(env)

    def cont(x):
        res = []
        for _ in range(8):
            m = x.action_masks()
            if not m.any():
                break
            o, r, t, tr, i = x.step(int(np.flatnonzero(m)[-1]))
            res.append((r, t, tr, o.tobytes()))
        return res

    assert cont(env2) == cont(env)
    env2.reset(seed=3)
    env.reset(seed=3)
    assert cont(env2) == cont(env)


def test_self_play_env_unpickled_read_only_goes_on():
    env = JiuSelfPlayEnv(board_size=6)
    env.add_snapshot("greedy")
    env.reset(seed=3)
    env2 = _ray_roundtrip(env)
    a = int(np.flatnonzero(env.action_masks())[0])
    assert env2.step(a)[1:4] == env.step(a)[1:4]


def test_batch_runner_and_vector_env_unpickled_read_only_go_on():
    # started in the battle (a finished game restarts there too): the battle's paths run on the copies
    r = BatchRunner(3, board_size=6, opponent="greedy", seed=4, threads=1, start="battle")
    r.reset()
    r2 = _ray_roundtrip(r)
    v = JiuVectorEnv(3, board_size=6, opponent="random", threads=1, start="battle")
    v.reset(seed=5)
    v2 = _ray_roundtrip(v)
    for _ in range(10):
        for states in (r2.states, v2.runner.states):
            assert (states[:, K.H_PHASE] == K.PH_BATTLE).all()
        acts = np.array([int(np.flatnonzero(m)[0]) for m in r.masks])
        for x, y in zip(r.step(acts), r2.step(acts)):
            assert np.array_equal(x, y)
        acts = np.array([int(np.flatnonzero(m)[0]) for m in v.action_masks()])
        for x, y in zip(v.step(acts)[:4], v2.step(acts)[:4]):
            assert np.array_equal(x, y)
    assert np.array_equal(r.states, r2.states) and np.array_equal(v.runner.states, v2.runner.states)


@pytest.mark.parametrize("spec", ["alphabeta:depth=2", "mcts:sims=50", "greedy", "pattern"])
def test_bots_unpickled_read_only_keep_their_tables(spec):
    s = _battle(6, 1)
    bot = make_bot(spec, seed=1)
    bot.step(s)
    bot2 = _ray_roundtrip(bot)
    assert bot2.step(s) == bot.step(s)


# ---------------------------------------------------------- single-agent env
class _BadOpponent:
    name = "bad"

    def __init__(self, ret):
        self.ret = ret

    def restart(self, seed=None):
        pass

    def step(self, state):
        if isinstance(self.ret, str) and self.ret == "raise":
            raise KeyError("boom")
        return self.ret


@pytest.mark.parametrize("ret", [None, "x", 10**30, -1, 10**9, 1.5, True, "raise", np.array([1, 2])])
def test_single_agent_env_after_an_opponent_error(ret):
    env = JiuVsBotEnv(opponent=_BadOpponent(ret), learner="white", board_size=8)
    env.reset(seed=0)
    a = int(np.flatnonzero(env.action_masks())[0])
    raising = isinstance(ret, str) and ret == "raise"
    with pytest.raises(KeyError if raising else RuntimeError) as info:
        env.step(a)
    if not raising:
        assert "opponent (bad)" in str(info.value)
    # the opponent is to move in a half-played turn: the learner must not move for it
    assert not env.action_masks().any()
    assert env.legal_actions().size == 0
    with pytest.raises(RuntimeError, match="ended with an error; call reset"):
        env.step(a)
    env.set_opponent("random")
    env.reset(seed=1)
    env.step(int(np.flatnonzero(env.action_masks())[0]))


def test_single_agent_failed_reset_leaves_the_env_untouched():
    env = JiuVsBotEnv(opponent="random", learner="white", board_size=8)
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    state, colour = env.state.copy(), env.learner_colour
    rng_state = env.np_random.bit_generator.state
    for options in [{"learner": "black", "board": [[9]]}, {"learner": "purple"}, {"start": "middle"},
                    {"learner": "black", "board": np.full((8, 8), 1)}, {"to_move": "white"}, [("learner", "black")],
                    {"learner": ["white"]}]:
        with pytest.raises((ValueError, TypeError)):
            env.reset(seed=99, options=options)
        assert env.learner_colour == colour
        assert np.array_equal(env.state, state)
        assert env.np_random.bit_generator.state == rng_state
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # the game goes on


def test_self_play_failed_reset_does_not_reseed():
    env = JiuSelfPlayEnv(board_size=6)
    env.reset(seed=5)
    rng_state = env.np_random.bit_generator.state
    with pytest.raises(ValueError):
        env.reset(seed=6, options={"learner": "nobody"})
    assert env.np_random.bit_generator.state == rng_state


def test_single_agent_env_refuses_a_state_changed_from_outside():
    env = JiuVsBotEnv(opponent="random", learner="white", board_size=8)
    env.reset(seed=0)
    env.state[K.H_SUB] = 9
    with pytest.raises(InvalidStateError):
        env.step(0)
    with pytest.raises(InvalidStateError):
        env.action_masks()


# -------------------------------------------------------------- raw AEC env
def test_raw_env_failed_reset_does_not_reseed():
    e = jiu_env.raw_env(board_size=8)
    e.reset(seed=5)
    x = e._np_random.bit_generator.state
    state = e.state.copy()
    for options in [{"start": "purple"}, {"board": [[1]]}, {"to_move": "white"}]:
        with pytest.raises(ValueError):
            e.reset(seed=99, options=options)
        assert e._np_random.bit_generator.state == x
        assert np.array_equal(e.state, state)


def test_raw_env_step_after_the_end():
    e = jiu_env.raw_env(board_size=6)
    e.reset(seed=0)
    while e.agents:
        obs, r, t, tr, _ = e.last()
        if t or tr:
            with pytest.raises(ValueError, match="only valid action is None"):
                e.step(0)
            e.step(None)
        else:
            e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    for a in (0, None):
        with pytest.raises(RuntimeError, match="call reset"):
            e.step(a)
    with pytest.raises(ValueError, match="unknown agent"):
        e.observe("purple")


def _aec_snapshot(e):
    return (e.state.copy(), e.agent_selection, dict(e.rewards), dict(e._cumulative_rewards), dict(e.terminations),
            dict(e.truncations), str(e.infos), list(e.agents))


def _assert_aec_same(e, snap):
    now = _aec_snapshot(e)
    assert np.array_equal(now[0], snap[0]) and now[1:] == snap[1:]


def _mid_game_aec(n=8, decisions=40, seed=0):
    e = jiu_env.raw_env(board_size=n, render_mode="ansi")
    e.reset(seed=seed, options={"start": "battle"})
    _play_aec(e, decisions)
    assert e.phase == "battle"
    return e


def _aec_goes_on(e):
    """The env still plays: observe, last, render and a step of the side to move."""
    obs, *_ = e.last()
    e.observe("white"), e.observe("black"), e.render(), e.legal_actions()
    e.step(int(np.flatnonzero(obs["action_mask"])[0]))


def _public_writes(e):
    """Every way found to write into the public state array without reaching for a private name."""
    from numpy.lib.stride_tricks import as_strided

    s = e.state
    yield "item", lambda: s.__setitem__(K.H_TO_MOVE, 5)
    yield "slice", lambda: s.__setitem__(slice(None), 0)
    yield "in-place op", lambda: s.__iadd__(1)
    yield "copyto", lambda: np.copyto(s, 0)
    yield "ufunc out=", lambda: np.add(s, 1, out=s)
    yield "fill", lambda: s.fill(0)
    yield "put", lambda: s.put([K.H_TO_MOVE], [5])
    yield "sort", lambda: s.sort()
    yield "setflags", lambda: s.setflags(write=True)
    yield "flags", lambda: setattr(s.flags, "writeable", True)
    yield "view of the view", lambda: s.view().__setitem__(K.H_TO_MOVE, 5)
    yield "reshape", lambda: s.reshape(1, -1).__setitem__((0, K.H_TO_MOVE), 5)
    yield "as_strided writeable", lambda: as_strided(s, writeable=True).__setitem__(K.H_TO_MOVE, 5)
    yield "frombuffer", lambda: np.frombuffer(s, np.int64).__setitem__(K.H_TO_MOVE, 5)
    yield "memoryview", lambda: memoryview(s).__setitem__(K.H_TO_MOVE, 5)
    yield "kernel apply_action", lambda: K.apply_action(s, int(e.legal_actions()[0]))
    yield "kernel random_playout", lambda: K.random_playout(s, np.empty(e.rules.num_actions, np.int64))
    yield "kernel pass_turn", lambda: K.pass_turn(s)


@pytest.mark.parametrize("wrapped", [False, True], ids=["raw", "wrapped"])
def test_aec_state_is_a_read_only_view_that_follows_the_game(wrapped):
    """Writing into ``env.state`` raises, whichever public way is tried, and leaves the game as it was."""
    e = _mid_game_aec()
    env = e
    if wrapped:
        env = jiu_env.env(board_size=8, render_mode="ansi")
        env.reset(seed=0, options={"start": "battle"})
        _play_aec(env, 40)
        e = env.unwrapped
    view = e.state
    snap = _aec_snapshot(e)
    for name, write in _public_writes(e):
        with pytest.raises((ValueError, TypeError)):  # numpy's "read-only" / the kernel's checks
            write()
        _assert_aec_same(e, snap)
    a = int(e.legal_actions()[0])
    env.step(a)  # the view follows the game, as the array did before it was the env's own
    assert np.array_equal(view, e.state) and not np.array_equal(view, snap[0])
    assert not view.flags.writeable and not e.state.flags.writeable


def test_aec_state_assignment_is_checked_and_copied():
    e = _mid_game_aec()
    other = _mid_game_aec(seed=5, decisions=50)
    s = other.state.copy()
    e.state = s
    assert np.array_equal(e.state, s) and not np.shares_memory(e.state, s)
    s[K.H_TO_MOVE] = 7  # the caller's array is a copy: changing it later does not reach the env
    assert e.state[K.H_TO_MOVE] in (K.WHITE, K.BLACK)
    ro = other.state  # a read-only state (a view, or one from Ray's object store) is fine
    e.state = ro
    assert e._state.flags.writeable and not np.shares_memory(e.state, ro)
    assert e.agent_selection == other.agent_selection and e.agents == ["white", "black"]  # as after a reset
    _aec_goes_on(e)
    over = _mid_game_aec()  # a finished game: both agents are done, as reset() from a decided position leaves them
    while over.agents:
        obs, _, t, tr, _ = over.last()
        over.step(None if t or tr else int(np.flatnonzero(obs["action_mask"])[0]))
    final = over._state.base.copy()
    e.state = final
    assert all(e.terminations.values()) or all(e.truncations.values())
    assert e.rewards == {"white": K.returns(final)[0], "black": K.returns(final)[1]} and e.winner == over.winner
    e.step(None), e.step(None)
    assert not e.agents


def _bad_states(e):
    good = e.state.copy()
    for name, changes, msg in MUTATIONS:
        bad = good.copy()
        if name == "cap":
            continue  # written for another length
        for i, v in changes.items():
            bad[i] = v
        yield name, bad, (InvalidStateError, ValueError), None
    yield "6x6 state", Rules.make(board_size=6).new_state(), ValueError, "6x6 board.*for 8x8.*board_size=6"
    yield "14x14 state", Rules.make().new_state(), ValueError, "14x14 board.*for 8x8"
    yield "short", good[:K.HDR + 10], ValueError, "length"
    yield "few", good[:5], ValueError, "fewer than"
    yield "list", good.tolist(), TypeError, "list"
    yield "float", good.astype(np.float64), TypeError, "float64"
    yield "int32", good.astype(np.int32), TypeError, "int32"
    yield "2-D", good[None, :], TypeError, "2-D"
    yield "None", None, TypeError, "NoneType"


def test_aec_assigning_a_bad_state_raises_and_leaves_the_env_untouched():
    e = _mid_game_aec()
    snap = _aec_snapshot(e)
    for name, bad, exc, msg in _bad_states(e):
        with pytest.raises(exc, match=msg) as info:
            e.state = bad
        assert str(info.value), name
        _assert_aec_same(e, snap)
    _aec_goes_on(e)


def test_aec_guard_catches_a_state_changed_behind_the_envs_back():
    """The owner array behind the public view (``env.state.base``) can be made writable again: every reader
    notices, checks the state as an assignment, and refuses a bad one (InvalidStateError naming the field)."""
    e = _mid_game_aec()
    snap = _aec_snapshot(e)
    owner = e.state.base
    owner.flags.writeable = True
    owner[K.H_SUB], owner[K.H_LIFT] = K.SUB_DROP, 10**9
    readers = [("observe", lambda: e.observe("white")), ("last", lambda: e.last()), ("render", e.render),
               ("step", lambda: e.step(0)), ("legal_actions", e.legal_actions), ("phase", lambda: e.phase),
               ("board", lambda: e.board), ("outcome", lambda: e.outcome), ("to_move", lambda: e.to_move)]
    for name, read in readers:
        with pytest.raises(InvalidStateError, match="H_LIFT=1000000000"):
            read()
    assert owner[K.H_LIFT] == 10**9 and e.agent_selection == snap[1]  # refused, nothing stepped
    owner[:] = snap[0]  # a valid state written the same way is adopted
    _aec_goes_on(e)
    assert not e.state.base.flags.writeable  # the env holds a checked copy of its own again
    # the owner's memory replaced (ndarray.__setstate__): the env reads the new owner, never the freed memory
    owner = e.state.base
    owner.flags.writeable = True
    owner.__setstate__(Rules.make().new_state().__reduce__()[2])  # a 14x14 state into the 8x8 env
    for name, read in readers:
        with pytest.raises(ValueError, match="14x14 board"):
            read()
    e.state = snap[0]  # assigning a good state (or reset()) ends it
    _aec_goes_on(e)
    e.state.base.flags.writeable = True
    e.state.base[K.H_TO_MOVE] = 0
    with pytest.raises(InvalidStateError, match="H_TO_MOVE=0"):
        e.last()
    e.reset(seed=1)
    _aec_goes_on(e)


def test_aec_readers_after_hostile_writes_in_a_subprocess():
    """observe, last, render and step after every write attempt found: exceptions, never a crash."""
    rc, out = _run("""
        import numpy as np, jiu_env
        from jiu_env import kernel as K, Rules
        e = jiu_env.raw_env(board_size=8, render_mode="ansi"); e.reset(seed=0, options={"start": "battle"})
        def play(k):
            for _ in range(k):
                if not e.agents:
                    e.reset(seed=1, options={"start": "battle"})
                obs, r, t, tr, _ = e.last()
                e.step(None if t or tr else int(np.flatnonzero(obs["action_mask"])[0]))
        play(20)
        good = e.state.copy()
        def attempt(write):
            try:
                write()
            except (ValueError, TypeError):
                pass
            for read in (lambda: e.observe("white"), e.last, e.render, lambda: e.step(0), e.legal_actions):
                try:
                    read()
                except (ValueError, TypeError):
                    pass
            e.state = good
        s = e.state
        attempt(lambda: s.__setitem__(K.H_N, 10**6))
        attempt(lambda: s.setflags(write=True))
        def via_owner(changes):
            o = e.state.base; o.flags.writeable = True
            for i, v in changes.items():
                o[i] = v
        for changes in ({K.H_N: 10**6}, {K.H_P: 10**6}, {K.H_CAP: 10**7}, {K.H_SUB: K.SUB_DROP, K.H_LIFT: 10**9},
                        {K.H_CHAIN: -10**9, K.H_SUB: K.SUB_CHAIN}, {K.H_TO_MOVE: 7}, {K.HDR + 3: 9}):
            attempt(lambda: via_owner(changes))
        def replace(state):
            o = e.state.base; o.flags.writeable = True; o.__setstate__(state.__reduce__()[2])
        for state in (Rules.make().new_state(), Rules.make(board_size=8).new_state()[:K.HDR], np.zeros(3, np.int64)):
            attempt(lambda: replace(state))
        play(30)
        print("DONE")
    """)
    assert rc == 0 and "DONE" in out, out


# ------------------------------------------------------------- batched runner
def test_batch_runner_refuses_corrupted_states():
    r = BatchRunner(4, board_size=6, opponent="random", seed=1, threads=1)
    _, masks = r.reset()
    acts = np.array([int(np.flatnonzero(m)[0]) for m in masks])
    r.states[2, K.H_SUB] = K.SUB_DROP
    r.states[2, K.H_LIFT] = 10**9
    before = r.states.copy()
    with pytest.raises(InvalidStateError, match="H_LIFT"):
        r.step(acts)
    with pytest.raises(InvalidStateError, match="H_LIFT"):
        r.play_random(5)
    assert np.array_equal(r.states, before)
    with pytest.raises(ValueError, match="num_decisions"):
        r.play_random(-1)
    r.states = r.states[:, :10]
    with pytest.raises(ValueError, match="runner.states"):
        r.step(acts)
    _, masks = r.reset()  # starts every slot anew, with a states array of its own
    r.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))


@pytest.mark.parametrize("name", ["template", "learner", "rng", "final_obs", "winners", "final_pov", "games_done"])
def test_batch_runner_arrays_that_numba_trusts_are_read_only(name):
    """Every array the numba step reads or writes besides ``states`` is the runner's own: it cannot be replaced
    (a shorter array would let numba write past it) and its public view cannot be written."""
    r = BatchRunner(3, board_size=6, opponent="random", seed=1, threads=1)
    _, masks = r.reset()
    view = getattr(r, name)
    with pytest.raises(AttributeError):
        setattr(r, name, np.zeros(1, view.dtype))
    with pytest.raises(ValueError, match="read-only"):
        view[...] = 0
    for _ in range(40):  # the runner goes on, and the views follow its arrays
        _, masks, _, terms, truncs = r.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
    assert np.array_equal(r.games_done, view if name == "games_done" else r.games_done)


@pytest.mark.parametrize("bad", [np.array([10**9] * 3), np.array([-1] * 3), np.array([2**63 - 1] * 3, np.uint64),
                                 np.array([1.5] * 3), np.array(["a"] * 3), [0, 1], np.zeros((3, 1), np.int64)])
def test_batch_runner_refuses_bad_actions(bad):
    r = BatchRunner(3, board_size=6, seed=1, threads=1)
    r.reset()
    before = r.states.copy()
    with pytest.raises(ValueError):
        r.step(bad)
    assert np.array_equal(r.states, before)


# ------------------------------------------------------ the rest of the surface
def test_observation_writers_are_checked():
    s = _battle()
    bad = s.copy()
    bad[K.H_SUB], bad[K.H_LIFT] = K.SUB_DROP, 10**9
    obs = np.empty((8, 8, NUM_PLANES), np.float32)
    mask = np.empty(K.num_actions(8), np.int8)
    with pytest.raises(InvalidStateError, match="H_LIFT"):
        write_observation(bad, K.WHITE, obs)
    with pytest.raises(ValueError, match="me must be"):
        write_observation(s, 7, obs)
    with pytest.raises(ValueError, match="shape"):
        write_observation(s, K.WHITE, np.empty((2, 2, 2), np.float32))
    with pytest.raises(ValueError):
        observe(s, K.WHITE, True, obs, np.empty(3, np.int8))
    observe(s, K.BLACK, True, obs, mask)
    assert mask.sum() == K.legal_actions(s, np.empty(K.num_actions(8), np.int64))


def test_observation_crash_reproduction_in_a_subprocess():
    rc, out = _run("""
        import numpy as np
        from jiu_env import kernel as K, Rules
        from jiu_env.observation import write_observation
        s = Rules.make(board_size=8).new_state(); K.random_placement(s, 3)
        s[K.H_SUB] = K.SUB_DROP; s[K.H_LIFT] = 10**9
        try:
            write_observation(s, 1, np.empty((8, 8, 21), np.float32)); print("ACCEPTED")
        except ValueError:
            print("DONE")
    """)
    assert rc == 0 and "DONE" in out, out


def test_symmetry_notation_and_state_helpers_are_checked():
    from jiu_env import symmetry as S
    from jiu_env.notation import action_to_str
    from jiu_env.rules import rules_from_state
    from jiu_env.state import explain_illegal

    s = _battle()
    bad = s.copy()
    bad[K.H_LIFT] = 10**9
    for f in (lambda: S.transform_state(bad, 1), lambda: S.symmetries_for(bad), lambda: explain_illegal(bad, 0),
              lambda: rules_from_state(bad)):
        with pytest.raises(InvalidStateError):
            f()
    with pytest.raises(ValueError, match="out of range"):
        S.transform_point(-5, 1, 8)
    with pytest.raises(ValueError, match="out of range"):
        S.transform_action(10**9, 1, 8)
    with pytest.raises(ValueError, match="shape"):
        S.transform_observation(np.zeros((3, 3)), 1)
    assert "out of range" in explain_illegal(s, 10**9)
    with pytest.raises(TypeError):
        action_to_str(True, 8)
    assert S.transform_point(0, 0, 8) == 0


def test_alphazero_bot_on_read_only_states_and_bounded_budgets():
    pytest.importorskip("torch")
    s = Rules.make(board_size=8).new_state()
    assert make_bot("alphazero:sims=8", seed=0).step(_ro(s)) == make_bot("alphazero:sims=8", seed=0).step(s)
    for spec in ("alphazero:sims=0", "alphazero:c=inf", "alphazero:temperature=nan", "alphazero:threads=-1"):
        with pytest.raises(ValueError, match="alphazero"):
            make_bot(spec)
