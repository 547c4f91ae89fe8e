"""The batched runner and the vector env against the single-game kernel.

Every game slot of :class:`jiu_env.batch.BatchRunner` is replayed in plain
Python with the kernel's own functions and a Python copy of the slot's
SplitMix64 stream: states (the whole array, history ring included), masks,
observations, rewards, terminations / truncations, final observations and the
automatic reset must agree exactly, for self-play and for the built-in random
and greedy opponents, and must not depend on the number of numba threads.
"""

import json

import numba
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_action_space, check_observation_space, data_equivalence
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import RecordEpisodeStatistics

from jiu_env import kernel as K
from jiu_env.bots.greedy import greedy_action
from jiu_env.observation import NUM_PLANES, write_observation
from jiu_env.rules import Rules
from jiu_env.batch import BatchRunner, derive_seeds, sample_masked
from jiu_env.envs.vector import JiuVectorEnv

M64 = (1 << 64) - 1
# Small boards and a short turn limit: many games end (and reset) within a few hundred steps.
SMALL = dict(board_size=6, max_battle_turns=40)


class SplitMix:
    """Python copy of the runner's per-game SplitMix64 stream."""

    def __init__(self, state):
        self.x = int(state)

    def next(self):
        self.x = (self.x + 0x9E3779B97F4A7C15) & M64
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def randint(self, m):
        return ((self.next() >> 32) * m) >> 32


def kernel_order(s):
    buf = np.empty(10 * int(s[K.H_P]) + 1, np.int64)
    k = K.legal_actions(s, buf)
    return buf[:k].copy()


class RefSlot:
    """One game slot replayed with the single-game kernel."""

    def __init__(self, rules, opponent, learner, start, stream):
        self.template = rules.new_state()
        self.opp = opponent
        self.learner_mode = learner
        self.start = start
        self.rng = SplitMix(stream)
        self.s = None
        self.learner = None

    def opponent_action(self):
        if self.opp == "greedy":
            return int(greedy_action(self.s, self.rng.next() >> 1))
        acts = kernel_order(self.s)
        return int(acts[self.rng.randint(len(acts))])

    def advance(self, me):
        while self.s[K.H_PHASE] != K.PH_OVER and self.s[K.H_TO_MOVE] != me:
            K.apply_action(self.s, self.opponent_action())

    def new_game(self):
        while True:
            self.s = self.template.copy()
            if self.start == "battle":
                while self.s[K.H_PHASE] == K.PH_PLACEMENT:
                    acts = kernel_order(self.s)
                    K.apply_action(self.s, int(acts[self.rng.randint(len(acts))]))
            if self.learner_mode == "random":
                self.learner = 1 + self.rng.randint(2)
            else:
                self.learner = {"white": K.WHITE, "black": K.BLACK}[self.learner_mode]
            if self.opp is not None:
                self.advance(self.learner)
            if self.s[K.H_PHASE] != K.PH_OVER:
                return

    def pov(self):
        return self.learner if self.opp is not None else int(self.s[K.H_TO_MOVE])

    def observe(self):
        n = int(self.s[K.H_N])
        obs = np.empty((n, n, NUM_PLANES), np.float32)
        write_observation(self.s, self.pov(), obs)
        mask = np.zeros(10 * n * n + 1, np.int8)
        mask[kernel_order(self.s)] = 1
        return obs, mask

    def step(self, a):
        """Returns (reward, terminated, truncated, final_obs or None)."""
        actor = int(self.s[K.H_TO_MOVE])
        K.apply_action(self.s, int(a))
        if self.opp is not None:
            self.advance(actor)
        if self.s[K.H_PHASE] != K.PH_OVER:
            return 0.0, False, False, None
        w, b = K.returns(self.s)
        n = int(self.s[K.H_N])
        final = np.empty((n, n, NUM_PLANES), np.float32)
        write_observation(self.s, actor, final)
        tr = bool(self.s[K.H_TRUNC])
        self.new_game()
        return (w if actor == K.WHITE else b), not tr, tr, final


def run_and_compare(num_games, steps, seed, opponent=None, learner="random", start="placement", **options):
    """Step a runner with seeded random legal actions and replay every slot; return the finished-game count."""
    opts = {**SMALL, **options}
    runner = BatchRunner(num_games, opponent=opponent, learner=learner, start=start, seed=seed, **opts)
    rules = Rules.make(**opts)
    streams = derive_seeds(seed, num_games)
    refs = [RefSlot(rules, opponent, learner, start, st) for st in streams]
    for r in refs:
        r.new_game()
    obs, masks = runner.reset()
    pick = np.random.default_rng(seed + 1)
    finished = 0
    for step in range(steps):
        for i, r in enumerate(refs):
            ro, rm = r.observe()
            assert np.array_equal(runner.states[i], r.s), f"state of game {i} differs at step {step}"
            assert runner.learner[i] == r.learner or opponent is None
            assert np.array_equal(masks[i], rm), f"mask of game {i} differs at step {step}"
            assert np.array_equal(obs[i], ro), f"observation of game {i} differs at step {step}"
        acts = np.array([pick.choice(np.flatnonzero(m)) for m in masks], np.int64)
        obs, masks, rew, term, trunc = runner.step(acts)
        for i, r in enumerate(refs):
            rr, rt, rtr, rfinal = r.step(acts[i])
            assert (rew[i], term[i], trunc[i]) == (rr, rt, rtr), f"game {i} step {step}"
            if rfinal is not None:
                finished += 1
                assert np.array_equal(runner.final_obs[i], rfinal)
                assert runner.final_pov[i] == int(rfinal[0, 0, 14] == 0) + 1  # is_white plane
    assert runner.games_done.sum() == finished
    return finished


# ------------------------------------------------------------- runner
def test_runner_self_play_matches_kernel():
    finished = run_and_compare(5, 250, seed=11)
    assert finished >= 5  # resets were exercised


def test_runner_vs_random_matches_kernel_battle_start():
    finished = run_and_compare(4, 150, seed=5, opponent="random", start="battle")
    assert finished >= 4


def test_runner_vs_random_fixed_colours_flying_rules():
    finished = run_and_compare(3, 150, seed=9, opponent="random", learner="black", start="battle",
                               single_jump_ban="both", fly_threshold=12)
    assert finished >= 3


def test_runner_vs_greedy_matches_kernel():
    finished = run_and_compare(2, 60, seed=3, opponent="greedy", learner="white", start="battle")
    assert finished >= 1


def test_results_do_not_depend_on_thread_count():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip(f"numba has {numba.config.NUMBA_NUM_THREADS} thread (NUMBA_NUM_THREADS): one thread against "
                    "one compares nothing")

    def trace(threads):
        r = BatchRunner(6, opponent="random", start="battle", seed=21, threads=threads, **SMALL)
        assert r.threads == threads
        obs, masks = r.reset()
        pick = np.random.default_rng(0)
        out = []
        for _ in range(80):
            acts = sample_masked(masks, derive_seeds(int(pick.integers(1 << 30)), 6))
            obs, masks, rew, term, trunc = r.step(acts)
            out.append((obs.copy(), masks.copy(), rew, term, trunc))
        return out, r.states.copy()

    a, sa = trace(1)
    b, sb = trace(2)  # the six games split over two threads
    assert np.array_equal(sa, sb)
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            assert np.array_equal(u, v)


def test_play_random_is_seeded_and_keeps_games_consistent():
    r1 = BatchRunner(4, seed=2, **SMALL)
    r2 = BatchRunner(4, seed=2, **SMALL)
    r1.reset()
    r2.reset()
    d1 = r1.play_random(300)
    d2 = r2.play_random(300)
    assert d1 == d2 == 4 * 300
    assert np.array_equal(r1.states, r2.states)
    assert r1.games_done.sum() > 0
    for s in r1.states:  # every slot holds a live game after its resets
        assert s[K.H_PHASE] != K.PH_OVER
        n = int(s[K.H_N])
        board = s[K.HDR:K.HDR + n * n]
        assert s[K.H_COUNT + 1] == np.sum(board == 1) and s[K.H_COUNT + 2] == np.sum(board == 2)


def test_play_random_counts_opponent_decisions():
    r = BatchRunner(3, opponent="random", seed=4, **SMALL)
    r.reset()
    d = r.play_random(100)
    assert d > 3 * 100  # the opponent's decisions are counted too


def test_sample_masked_picks_legal_actions_uniformly():
    masks = np.zeros((2, 10), np.int8)
    masks[0, [1, 4, 7]] = 1
    rng = derive_seeds(0, 2)
    counts = np.zeros(10, int)
    for _ in range(3000):
        a = sample_masked(masks, rng)
        counts[a[0]] += 1
        assert a[1] == -1
    assert set(np.flatnonzero(counts)) == {1, 4, 7}
    assert counts[[1, 4, 7]].min() > 850


def test_illegal_action_raises_and_changes_nothing():
    r = BatchRunner(3, seed=0, **SMALL)
    obs, masks = r.reset()
    before = r.states.copy()
    acts = np.array([np.flatnonzero(m)[0] for m in masks])
    acts[1] = np.flatnonzero(masks[1] == 0)[0]
    with pytest.raises(ValueError, match="game 1"):
        r.step(acts)
    assert np.array_equal(r.states, before)
    with pytest.raises(ValueError):
        r.step(acts[:2])


def test_runner_argument_errors():
    with pytest.raises(ValueError):
        BatchRunner(0)
    with pytest.raises(ValueError, match="opponent"):
        BatchRunner(2, opponent="nobody")
    with pytest.raises(ValueError, match="learner"):
        BatchRunner(2, learner="red")
    with pytest.raises(ValueError, match="start"):
        BatchRunner(2, start="middle")
    with pytest.raises(ValueError):
        BatchRunner(2, board_size=3)
    with pytest.raises(ValueError, match="threads"):
        BatchRunner(2, threads=0)
    with pytest.raises(RuntimeError):
        BatchRunner(2).step([0, 0])
    # the wrong kind is a TypeError naming the argument, not "unhashable type"
    for kw in ({"opponent": ["random"]}, {"learner": ["white"]}, {"start": {"battle": 1}}, {"learner": None}):
        (name,) = kw
        with pytest.raises(TypeError, match=f"{name} must be one of .*, not "):
            BatchRunner(2, **kw)
    with pytest.raises(TypeError, match="opponent must be one of"):
        JiuVectorEnv(2, opponent=["random"])
    r = BatchRunner(2, seed=4)
    rng = r.rng.copy()
    for bad in (-1, [1, -1], np.int64(-5)):
        with pytest.raises(ValueError, match=r"seed.* must be an int >= 0.*, not -"):
            r.seed(bad)
        with pytest.raises(ValueError, match=r"seed.* must be an int >= 0.*, not -"):
            r.reset(seed=bad)
    assert np.array_equal(r.rng, rng)  # nothing changed
    r.seed(2**80)  # any size


def test_per_game_seed_list():
    seeds = [7, 8, 9]
    r = BatchRunner(3, opponent="random", start="battle", seed=seeds, **SMALL)
    r.reset()
    one = BatchRunner(1, opponent="random", start="battle", seed=[8], **SMALL)
    one.reset()
    assert np.array_equal(r.states[1], one.states[0])


# --------------------------------------------------------- vector env
def make_venv(**kw):
    return JiuVectorEnv(3, opponent="random", **{**SMALL, **kw})


def test_vector_env_seed_list_is_continued_and_bad_seeds_are_refused():
    def two_resets():
        v = make_venv()
        v.reset(seed=[1, 2, 3])
        return v.reset()[0]

    assert np.array_equal(two_resets(), two_resets())  # reset() continues the seeded streams
    v = make_venv()
    first = v.reset(seed=5)[0]
    for bad, kind in ((1.5, TypeError), ([None, 1, 2], TypeError), ("123", TypeError), ([True, 1, 2], TypeError),
                      ([1, 2], ValueError), (-1, ValueError), ([1, -2, 3], ValueError)):
        with pytest.raises(kind, match="seed"):
            v.reset(seed=bad)
    assert np.array_equal(make_venv().reset(seed=5)[0], first)


def test_vector_env_spaces_and_metadata():
    env = make_venv()
    check_observation_space(env.single_observation_space)
    check_action_space(env.single_action_space)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert env.observation_space.shape == (3, 6, 6, NUM_PLANES)
    assert env.action_space.shape == (3,)
    obs, info = env.reset(seed=1)
    assert obs in env.observation_space and isinstance(info, dict)
    m = env.action_masks()
    assert m.shape == (3, 361) and m.dtype == bool and m.any(axis=1).all()
    with pytest.warns(UserWarning, match="board"):  # no reset options: every key warns
        env.reset(seed=1, options={"board": None})
    with pytest.raises(ValueError):
        JiuVectorEnv(2, opponent=None)


def rollout(env, seed, steps):
    obs, _ = env.reset(seed=seed)
    rng = derive_seeds(seed, env.num_envs)
    out = [obs]
    for _ in range(steps):
        acts = sample_masked(env.action_masks().astype(np.int8), rng)
        out.append(env.step(acts))
    return out


def test_vector_env_reset_and_step_determinism():
    a = rollout(make_venv(), 3, 120)
    b = rollout(make_venv(), 3, 120)
    assert data_equivalence(a, b, exact=True)
    c = rollout(make_venv(), 4, 120)
    assert not data_equivalence(a, c)


def test_vector_env_step_contract_and_final_obs():
    env = make_venv(learner="black")
    obs, _ = env.reset(seed=2)
    rng = derive_seeds(2, 3)
    seen_final = 0
    prev = obs
    for _ in range(300):
        acts = sample_masked(env.action_masks().astype(np.int8), rng)
        obs, rew, term, trunc, info = env.step(acts)
        assert obs is not prev and not np.shares_memory(obs, prev)  # returned data is not reused
        prev = obs
        assert obs in env.observation_space
        assert rew.dtype == np.float32 and term.dtype == bool and trunc.dtype == bool
        assert np.all(obs[:, 0, 0, 14] == 0.0)  # the learner plays black in every game
        assert np.all(obs[:, 0, 0, 15] == 1.0)  # and it is always the learner's decision
        done = term | trunc
        assert np.all(rew[~done] == 0.0)
        if done.any():
            assert np.array_equal(info["_final_obs"], done)
            for i in np.flatnonzero(done):
                seen_final += 1
                fin = info["final_obs"][i]
                assert fin in env.single_observation_space
                assert fin[0, 0, 15] == 0.0  # the finished game has no next decision
                w = info["final_info"]["winner"][i]
                assert rew[i] == (0.0 if w in (0, K.DRAW) else (1.0 if w == K.BLACK else -1.0))
                assert info["final_info"]["learner"][i] == K.BLACK
                assert trunc[i] == (w == 0)
        else:
            assert info == {}
    assert seen_final > 0


def test_vector_env_illegal_action_raises():
    env = make_venv()
    env.reset(seed=0)
    acts = np.array([np.flatnonzero(~m)[0] for m in env.action_masks()])
    with pytest.raises(ValueError, match="illegal"):
        env.step(acts)


def test_vector_env_non_integer_actions_are_a_type_error_as_in_every_env():
    env = make_venv()
    env.reset(seed=0)
    acts = np.array([np.flatnonzero(m)[0] for m in env.action_masks()])
    before = env.runner.states.copy()
    for bad in (acts.astype(float), list(acts.astype(float)), acts > 0):
        with pytest.raises(TypeError, match="actions must be 3 integers, not an array of (float64|bool)"):
            env.step(bad)
    assert np.array_equal(env.runner.states, before)
    with pytest.raises(ValueError, match="3 integers"):  # the wrong number of actions stays a ValueError
        env.step(acts[:2])
    env.step(list(acts))  # a list of ints is taken


def test_vector_env_with_gymnasium_episode_statistics():
    env = RecordEpisodeStatistics(make_venv(), buffer_length=1000)
    env.reset(seed=5)
    rng = derive_seeds(5, 3)
    returns = []
    for _ in range(300):
        _, rew, term, trunc, info = env.step(sample_masked(env.unwrapped.action_masks().astype(np.int8), rng))
        if "episode" in info:
            done = info["_episode"]
            assert np.array_equal(done, term | trunc)
            assert np.allclose(info["episode"]["r"][done], rew[done])
            returns.extend(rew[done].tolist())
    assert len(returns) > 0 and len(env.return_queue) == len(returns)


# ------------------------------------------------------------ benchmark
def load_bench():
    from jiu_env import benchmark

    return benchmark


def test_bench_quick_run_writes_results(tmp_path):
    bench = load_bench()
    rc = bench.main(["--quick", "--only", "kernel,batched,aec,vector", "--out", str(tmp_path)])
    assert rc == 0
    data = json.loads((tmp_path / "results.json").read_text())
    rows = {r["name"]: r for r in data["rows"]}
    assert rows["kernel random games, 1 core"]["value"] > 0
    assert rows["batched runner, all cores"]["ratio"] > 0
    assert rows["batched runner step() with obs + masks, 1 core"]["value"] > 0
    assert "aec do-nothing floor" in rows
    n = numba.config.NUMBA_NUM_THREADS
    if n > 1:  # the parallel ceiling: the one-core kernel in n processes at once
        assert rows[f"kernel in {n} separate processes"]["value"] > 0
    md = (tmp_path / "RESULTS.md").read_text()
    assert "kernel random games, 1 core" in md and "ratio" in md


def test_process_ceiling_sums_the_rates_of_independent_processes():
    total, rates = load_bench().process_ceiling(2, 0.2)
    assert len(rates) == 2 and all(r > 0 for r in rates)
    assert total == pytest.approx(sum(rates))


def test_jiu_bench_is_a_cli_subcommand(tmp_path, capsys):
    from jiu_env.cli import main

    assert main(["bench", "--quick", "--only", "kernel", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "RESULTS.md").exists()
    assert "kernel" in capsys.readouterr().out


class _CountingBot:
    """A stand-in search bot: its decision's work is the position's first value (nodes), and 1 quiescence node."""

    def __init__(self):
        self.steps = 0
        self.restarts = 0
        self.last_info = {}

    def restart(self, seed=None):
        self.restarts += 1

    def step(self, s):
        self.steps += 1
        self.last_info = {"nodes": int(s[0]), "qnodes": 1}
        return 0


def test_search_totals_sums_each_count_over_fresh_searches():
    bench = load_bench()
    positions = [np.array([5]), np.array([7]), np.array([11])]
    counts = {"nodes": lambda info: info["nodes"], "qnodes": lambda info: info["qnodes"]}
    bot = _CountingBot()
    t = bench.search_totals(bot, positions, counts)
    assert (t["nodes"], t["qnodes"]) == (23, 3) and t["wall"] >= 0 and t["cpu"] >= 0
    assert bot.steps == 4 and bot.restarts == 3  # one untimed loading decision, then a fresh search per position
    bot = _CountingBot()
    assert bench.search_totals(bot, positions, counts, load=False)["nodes"] == 23 and bot.steps == 3
    total, wall, cpu = bench.measure_search(_CountingBot(), positions, lambda info: info["nodes"])
    assert total == 23 and wall >= 0 and cpu >= 0


def test_search_totals_refuses_bad_input():
    bench = load_bench()
    with pytest.raises(ValueError, match="count name.* wall .*overwrite the seconds"):
        bench.search_totals(_CountingBot(), [np.array([1])], {"wall": lambda info: 1})
    with pytest.raises(ValueError, match="no positions to search"):
        bench.search_totals(_CountingBot(), [], {"nodes": lambda info: info["nodes"]})


def test_bench_package_keeps_the_former_module_names_and_finds_the_checkout():
    """jiu_env.benchmark was one module: its names import from the package, and the checkout's commit is found
    from the package's new depth (the subprocesses of the kernel ceiling and the compile probe run there too)."""
    import pathlib
    import shutil

    bench = load_bench()
    missing = [name for name in bench.__all__ if not hasattr(bench, name)]
    assert not missing, missing
    assert {"best_rate", "kernel_games", "midgame_positions", "measure_search", "floor_env", "run_benchmarks",
            "add_arguments", "run", "main", "Table", "Rate", "TARGETS", "SECTIONS", "BENCHES"} <= set(bench.__all__)
    assert set(bench.BENCHES) == set(bench.SECTIONS)
    if (pathlib.Path(__file__).resolve().parents[1] / ".git").exists() and shutil.which("git"):
        assert bench.code_info()["commit"]
