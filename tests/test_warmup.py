"""Numba warm-up: `jiu warm` leaves a cache that a later process loads without compiling, and
`jiu eval` says when it is warming up (no timing assertions)."""

import json
import os
import subprocess
import sys
import textwrap

import jiu_env
from jiu_env.cli import main
from jiu_env.warmup import builtin_specs, numba_functions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(jiu_env.__file__)))

CHECK = textwrap.dedent("""
    import json, os
    import jiu_env
    from jiu_env.warmup import cache_is_warm, numba_functions
    from jiu_env import kernel as K
    from jiu_env.bots import greedy
    warm_before = cache_is_warm(("jiu_env.kernel", "jiu_env.bots.greedy"))
    rep = jiu_env.warm_up(["random", "greedy"], board_sizes=[6])
    index = {n: os.path.exists(d._cache._cache_file._index_path)
             for n, d in numba_functions() if n in ("jiu_env.kernel.apply_action_unchecked", "jiu_env.bots.greedy.greedy_action")}
    hits = sum(K.apply_action_unchecked.stats.cache_hits.values())
    print(json.dumps({"warm_before": warm_before, "compiled": rep.compiled, "loaded": rep.loaded,
                      "index": index, "hits": hits}))
""")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_jiu_warm_leaves_a_cache_the_next_process_loads():
    r = subprocess.run([sys.executable, "-m", "jiu_env.cli", "warm", "random", "greedy", "--board-size", "6"],
                       capture_output=True, text=True, timeout=600, env=_env(), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "warming up numba" in r.stdout and "numba warm in" in r.stdout and "cache:" in r.stdout
    r = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=600, env=_env(),
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["warm_before"] is True
    assert got["compiled"] == []  # everything came from the cache
    assert "jiu_env.kernel.apply_action_unchecked" in got["loaded"] and "jiu_env.bots.greedy.greedy_action" in got["loaded"]
    assert got["hits"] >= 1
    assert all(got["index"].values()) and len(got["index"]) == 2


def test_eval_progress_says_it_is_warming(capsys):
    rc = main(["eval", "random", "b=greedy", "--games", "2", "--workers", "1", "--rule", "board_size=6",
               "--rule", "max_battle_turns=60"])
    err = capsys.readouterr().err
    assert rc == 0
    assert "warming up numba" in err and "numba ready in" in err
    assert err.index("warming up numba") < err.index("ETA")  # the warm-up comes before the game ETA
    main(["eval", "random", "b=random", "--games", "2", "--workers", "1", "--rule", "board_size=6", "--no-progress"])
    assert "warming" not in capsys.readouterr().err


def test_builtin_specs_and_function_listing():
    assert builtin_specs("mix:0.5:greedy") == ["greedy"]
    assert builtin_specs("phases:random+alphabeta:depth=1") == ["random", "alphabeta:depth=1"]
    assert builtin_specs("sb3:model.zip") == [] and builtin_specs("pkg.mod:Cls") == []
    names = [n for n, _ in numba_functions()]
    assert "jiu_env.kernel.apply_action_unchecked" in names


def test_warm_up_covers_what_the_envs_call():
    """After warm_up, the observation, mask and batched-runner code is compiled or loaded: the first env step
    does not compile (checked in a fresh process, where nothing else has run)."""
    code = textwrap.dedent("""
        import json
        import jiu_env
        from jiu_env.warmup import numba_functions
        jiu_env.warm_up(["random"], board_sizes=[6])
        want = ("jiu_env.observation.observe_unchecked", "jiu_env.observation.write_observation_unchecked",
                "jiu_env.kernel.legal_mask_unchecked", "jiu_env.batch._run_batch")
        print(json.dumps({n: len(d.signatures) for n, d in numba_functions() if n in want}))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=_env(), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(got) == 4 and all(v >= 1 for v in got.values()), got


@__import__("pytest").mark.slow
def test_after_a_cold_warm_up_the_envs_compile_nothing(tmp_path):
    """From an empty numba cache: warm_up, then the AEC, single-agent and vector envs step without compiling."""
    code = textwrap.dedent("""
        import json
        import numpy as np
        import jiu_env
        from jiu_env.warmup import numba_functions, _counts
        jiu_env.warm_up(["random", "greedy"], board_sizes=[6])
        import jiu_env.envs.aec, jiu_env.envs.single_agent, jiu_env.envs.vector
        before = _counts(numba_functions())
        env = jiu_env.env(board_size=6)
        env.reset(seed=0)
        for agent in env.agent_iter(40):
            obs, r, t, tr, info = env.last()
            env.step(None if t or tr else env.action_space(agent).sample(obs["action_mask"]))
        e = jiu_env.JiuVsBotEnv(opponent="greedy", board_size=6)
        e.reset(seed=0)
        for _ in range(10):
            e.step(int(np.flatnonzero(e.action_masks())[0]))
        v = jiu_env.JiuVectorEnv(2, board_size=6, opponent="random")
        v.reset(seed=0)
        v.step(np.array([int(np.flatnonzero(m)[0]) for m in v.action_masks()]))
        after = _counts(numba_functions())
        print(json.dumps([n for n in after if after[n][1] > before.get(n, (0, 0))[1]]))
    """)
    env = dict(_env(), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == []


def test_spread_balances_bots_over_processes():
    from jiu_env.warmup import COMPILE_WEIGHT, spread

    bots = ["random", "greedy", "pattern", "alphabeta:depth=1", "mcts:sims=100"]
    for k in (1, 2, 3, 5, 9):
        groups = spread(bots, k)
        assert sorted(b for g in groups for b in g) == sorted(bots)  # each bot once
        assert len(groups) == min(k, len(bots)) and all(groups)
    two = spread(bots, 2)
    weight = [sum(COMPILE_WEIGHT.get(b.partition(":")[0], 1) for b in g) for g in two]
    assert sorted(weight) == [33, 39]  # mcts (32) and random (1) against alphabeta, greedy and pattern (21+9+9)
    assert sorted(map(sorted, two)) == [["alphabeta:depth=1", "greedy", "pattern"], ["mcts:sims=100", "random"]]
    assert spread([], 4) == []


@__import__("pytest").mark.slow
def test_a_cold_warm_up_in_two_processes_leaves_everything_cached(tmp_path):
    """From an empty numba cache: warm_up(workers=2) compiles in two processes; a later process loads all."""
    code = textwrap.dedent("""
        import json, sys
        import jiu_env
        rep = jiu_env.warm_up(["random", "greedy", "alphabeta:depth=1"], board_sizes=[6], envs=False,
                              workers=int(sys.argv[1]))
        print(json.dumps({"processes": rep.processes, "compiled": rep.compiled, "loaded": rep.loaded}))
    """)
    env = dict(_env(), NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    first = subprocess.run([sys.executable, "-c", code, "2"], capture_output=True, text=True, timeout=900, env=env,
                           cwd=ROOT)
    assert first.returncode == 0, first.stderr
    got = json.loads(first.stdout.strip().splitlines()[-1])
    assert got["processes"] == 2
    again = subprocess.run([sys.executable, "-c", code, "2"], capture_output=True, text=True, timeout=900, env=env,
                           cwd=ROOT)
    got2 = json.loads(again.stdout.strip().splitlines()[-1])
    assert got2["processes"] == 1 and got2["compiled"] == []  # warm: loaded here, no children
    assert "jiu_env.bots.alphabeta.search_root" in got2["loaded"] and "jiu_env.bots.greedy.greedy_action" in got2["loaded"]


def test_jiu_warm_refuses_a_bad_worker_count(capsys):
    assert main(["warm", "random", "--board-size", "6", "--workers", "0"]) == 2
    assert "--workers must be 1..1024" in capsys.readouterr().err
    assert main(["warm", "random", "--board-size", "6", "--workers", "1"]) == 0


def test_warm_spec_cuts_a_built_in_bots_time_budget_and_keeps_everything_else():
    from jiu_env.players import WARM_TIME, warm_spec

    assert warm_spec("alphabeta:time=1") == f"alphabeta:time={WARM_TIME}"
    assert warm_spec("alphabeta:depth=3, time=2.5") == f"alphabeta:depth=3,time={WARM_TIME}"
    assert warm_spec("alphazero:checkpoint=net.pt,time=1") == f"alphazero:checkpoint=net.pt,time={WARM_TIME}"
    for same in ("alphabeta", "mcts:sims=100", "alphazero:net.pt", "mix:0.5:greedy", "phases:random+greedy",
                 "greedy"):
        assert warm_spec(same) == same
    # inside mix: and phases: too (jiu warm and jiu eval warm the spec as given)
    assert warm_spec("mix:0.5:alphabeta:time=1") == f"mix:0.5:alphabeta:time={WARM_TIME}"
    assert (warm_spec("phases:mcts:time=2+mix:0.1:alphabeta:depth=2,time=3")
            == f"phases:mcts:time={WARM_TIME}+mix:0.1:alphabeta:depth=2,time={WARM_TIME}")


def test_timed_bots_warm_up_on_the_cut_budget_in_workers_and_in_warm_up(monkeypatch):
    # a warm-up game with the tournament's own budget (time=1) would take minutes a worker on a large board
    from jiu_env import warmup
    from jiu_env.evaluation import play as P
    from jiu_env.players import WARM_TIME
    from jiu_env.rules import Rules

    built = []
    for module in (P, warmup):
        real = module.make_player
        monkeypatch.setattr(module, "make_player", lambda spec, seed=None, real=real: built.append(spec) or
                            real(spec, seed=seed))
    monkeypatch.setattr(P, "_WARMED", set())
    P._warm_up("alphabeta:depth=1,time=5", Rules.make(board_size=6).to_dict())
    assert built == [f"alphabeta:depth=1,time={WARM_TIME}", "random"]
    built.clear()
    warmup.warm_up(["alphabeta:depth=1,time=5"], board_sizes=[6], envs=False)
    assert f"alphabeta:depth=1,time={WARM_TIME}" in built and "alphabeta:depth=1,time=5" in built  # built, played
