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
