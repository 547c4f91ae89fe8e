"""jiu_env performance benchmark: one command, one table, absolute figures and ratios.

Run it as ``jiu bench`` (or ``python benchmarks/bench.py`` from a checkout)::

    jiu bench                            # full run (a few minutes)
    jiu bench --quick                    # short run (seconds per figure)
    jiu bench --only kernel,aec --out /tmp/bench

Sections (``--only``, comma-separated):

``kernel``   random full games in the numba kernel on one core (decisions/s)
``batched``  the batched runner (:mod:`jiu_env.batch`) on 1 thread and on all cores
``aec``      the PettingZoo AEC env through its full API, against a do-nothing AEC
             env with the same wrappers and spaces (the API's floor), PettingZoo
             ``go_v5`` (19x19), ``chess_v6`` and OpenSpiel ``checkers`` (each only
             if installed: ``pip install -e ".[bench]"`` in a checkout of the repository)
``vector``   the single-agent env and the vector env against random / greedy
``search``   alpha-beta nodes/s (the current defaults, and the first release's engine
             as a fixed peer) and MCTS simulations/s on fixed mid-game positions
``compile``  fresh interpreters: import + first ``reset()`` + first ``step()`` of
             the AEC env with a cold numba cache (empty ``NUMBA_CACHE_DIR``) and
             a warm one

Each rate is the best of a few repeats (the machine may be shared).  Results
are printed and written to ``OUT/results.json`` and ``OUT/RESULTS.md``
(``OUT`` defaults to ``benchmarks/results``).  ``main(argv)`` is the command
line; :func:`run_benchmarks` is the function API.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Sequence, cast

import numpy as np

SECTIONS = ("kernel", "batched", "aec", "vector", "search", "compile")
TARGETS = {
    "kernel random games, 1 core": ("value", 1_000_000),
    "batched runner, all cores": ("ratio", 1.8),
    "aec env, random play": ("ratio", 0.6),
    "alpha-beta search": ("value", 500_000),
    "mcts search": ("value", 2_000),
    "compile, warm cache: first reset()": ("max", 2.0),
}


# ------------------------------------------------------------------ timing
class Rate(float):
    """Units per wall-clock second, with ``.cpu``: units per CPU-second of this process (all its threads)."""

    cpu: float

    def __new__(cls, wall: float, cpu: float) -> Rate:
        r = super().__new__(cls, wall)
        r.cpu = cpu
        return r


def best_rate(fn: Callable[[], float], min_time: float, repeats: int) -> Rate:
    """Best units/s over ``repeats`` runs; each run calls ``fn() -> units`` until ``min_time`` s have passed.

    Returns a :class:`Rate` (wall-clock rate of the best run, and its CPU-time rate).
    """
    best = Rate(0.0, 0.0)
    for _ in range(repeats):
        units: float = 0
        t0 = time.perf_counter()
        c0 = time.process_time()
        while True:
            units += fn()
            dt = time.perf_counter() - t0
            if dt >= min_time:
                break
        cpu = time.process_time() - c0
        if units / dt > best:
            best = Rate(units / dt, units / cpu if cpu > 0 else 0.0)
    return best


class Table:
    """Rows of (section, name, value, unit, ratio, ratio_to, note)."""

    def __init__(self, echo: bool = True) -> None:
        self.rows: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.echo = echo

    def add(self, section: str, name: str, value: float | None, unit: str, ratio: float | None = None,
            ratio_to: str | None = None, note: str = "") -> dict[str, Any]:
        row = {"section": section, "name": name, "value": None if value is None else float(value), "unit": unit,
               "per_cpu_s": getattr(value, "cpu", None), "ratio": ratio, "ratio_to": ratio_to, "note": note}
        kind_target = TARGETS.get(name)
        if kind_target is not None and value is not None:
            kind, target = kind_target
            got = ratio if kind == "ratio" else value
            row["target"] = (">= " if kind != "max" else "< ") + _fmt(target) + ("x" if kind == "ratio" else "")
            row["met"] = bool(got is not None and (got < target if kind == "max" else got >= target))
        self.rows.append(row)
        if self.echo:
            print(_text_row(row), flush=True)
        return row

    def skip(self, section: str, name: str, why: str) -> None:
        self.notes.append(f"{name}: skipped ({why})")
        self.rows.append({"section": section, "name": name, "value": None, "unit": "", "per_cpu_s": None,
                          "ratio": None, "ratio_to": None, "note": f"skipped: {why}"})
        if self.echo:
            print(f"  {name:<46} skipped: {why}", flush=True)

    def get(self, name: str) -> float | None:
        for r in self.rows:
            if r["name"] == name:
                return r["value"]
        return None


def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float) and abs(v) < 100:
        return f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"
    return f"{v:,.0f}"


def _text_row(r):
    ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}x {r['ratio_to']}"
    tgt = "" if "target" not in r else f"  [target {r['target']}: {'met' if r['met'] else 'MISSED'}]"
    cpu = "" if not r.get("per_cpu_s") else f" ({_fmt(r['per_cpu_s'])} per CPU-s)"
    return f"  {r['name']:<46} {_fmt(r['value']):>14} {r['unit']:<16} {ratio}{tgt}{cpu}"


# ---------------------------------------------------------------- sections
def kernel_games(seed: int = 0) -> Callable[[], int]:
    """The one-core kernel loop: a function that plays two random full games (14x14, competitive) per call,
    each with a new seed, and returns their decisions.  The kernel is compiled / loaded here."""
    from jiu_env import Rules, kernel as K

    template = Rules.make("competitive").new_state()
    K.random_games(template, 1, 0)
    last = [seed]

    def run():
        last[0] += 1
        return K.random_games(template, 2, last[0])

    return run


def bench_kernel(t: Table, cfg: dict[str, Any]) -> None:
    """Section ``kernel``: random full games in the numba kernel on one core, the ceiling of every shell."""
    rate = best_rate(kernel_games(), cfg["time"], cfg["repeats"])
    t.add("kernel", "kernel random games, 1 core", rate, "decisions/s",
          note="K.random_games, 14x14 competitive, full games from placement")


_KERNEL_WORKER = r"""
import json, sys
from jiu_env.benchmark import best_rate, kernel_games
run = kernel_games(int(sys.argv[2]))
print("ready", flush=True)
sys.stdin.readline()
print(json.dumps(float(best_rate(run, float(sys.argv[1]), 1))), flush=True)
"""


def _pipes(p: subprocess.Popen[str]) -> tuple[IO[str], IO[str]]:
    """``p.stdin`` and ``p.stdout`` of a process started with both as pipes (typed Optional by subprocess)."""
    if p.stdin is None or p.stdout is None:
        raise RuntimeError("the worker process was started without stdin/stdout pipes")
    return p.stdin, p.stdout


def process_ceiling(processes: int, seconds: float) -> tuple[float, list[float]]:
    """Summed decisions/s of ``processes`` independent interpreters running the 1-core kernel loop at once.

    Nothing is shared between them but the hardware, so this is the most any
    parallel runner of this code can reach on the machine (cores that share a
    physical core or a memory bus show up here, not in the runner).
    """
    root = Path(__file__).resolve().parent.parent
    procs = [subprocess.Popen([sys.executable, "-c", _KERNEL_WORKER, str(seconds), str(1000 * i)], cwd=root,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for i in range(processes)]
    pipes = [_pipes(p) for p in procs]
    try:
        for _, stdout in pipes:
            if stdout.readline().strip() != "ready":
                raise RuntimeError("kernel worker process failed to start")
        for stdin, _ in pipes:  # start together
            stdin.write("go\n")
            stdin.flush()
        rates = [float(json.loads(stdout.readline())) for _, stdout in pipes]
    except BaseException:
        for p in procs:
            p.kill()
        raise
    finally:
        for p, (stdin, _) in zip(procs, pipes):
            stdin.close()
            p.wait()
    return sum(rates), rates


def bench_batched(t: Table, cfg: dict[str, Any]) -> None:
    """Section ``batched``: the batched runner on one thread and on all cores, against separate kernel processes."""
    import numba

    from jiu_env.batch import BatchRunner, derive_seeds, sample_masked

    base = t.get("kernel random games, 1 core")
    threads = cast(Any, numba.config).NUMBA_NUM_THREADS  # numba.config sets it at import time, unseen by mypy
    previous = numba.get_num_threads()
    b = cfg["games"]
    runner = BatchRunner(b, seed=1)
    runner.reset()
    runner.play_random(10)  # compile / load

    def rate_with(nthreads):
        numba.set_num_threads(nthreads)
        try:
            return best_rate(lambda: runner.play_random(200), cfg["time"], cfg["repeats"])
        finally:
            numba.set_num_threads(previous)

    one = rate_with(1)
    allc = rate_with(threads)
    kr = None if not base else one / base
    t.add("batched", "batched runner, 1 core", one, "decisions/s", kr, "kernel 1 core" if kr else None,
          note=f"BatchRunner({b}).play_random, no observations")
    t.add("batched", "batched runner, all cores", allc, "decisions/s",
          None if not base else allc / base, "kernel 1 core" if base else None,
          note=f"{threads} threads; {allc / one:.2f}x the runner on 1 thread")
    if threads > 1:
        ceiling, rates = process_ceiling(threads, cfg["time"])
        t.add("batched", f"kernel in {threads} separate processes", ceiling, "decisions/s",
              None if not base else ceiling / base, "kernel 1 core" if base else None,
              note=f"the machine's ceiling: {threads} independent interpreters at once "
                   f"({', '.join(_fmt(r) for r in rates)}); the runner reaches {allc / ceiling:.2f}x of it")

    obs, masks = runner.reset()
    rng = derive_seeds(2, b)
    state = {"masks": masks}

    def step():
        _, m, _, _, _ = runner.step(sample_masked(state["masks"], rng))
        state["masks"] = m
        return b

    step()
    for label, nthreads in (("1 core", 1), ("all cores", threads)):
        numba.set_num_threads(nthreads)
        try:
            rate = best_rate(step, cfg["time"], cfg["repeats"])
        finally:
            numba.set_num_threads(previous)
        t.add("batched", f"batched runner step() with obs + masks, {label}", rate, "decisions/s",
              None if not base else rate / base, "kernel 1 core" if base else None,
              note=f"{b} games, {nthreads} thread(s), one Python call per batch step, random legal actions")


# -- AEC envs
def _aec_rate(make_env, cfg, seed=0):
    """Steps/s of random masked play through the full AEC API (env.last, action_space.sample(mask), env.step)."""
    env = make_env()
    env.reset(seed=seed)
    for a in env.possible_agents:
        env.action_space(a).seed(seed)
    counter = {"games": 0}

    def run():
        n = 0
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                action = None
            else:
                action = env.action_space(agent).sample(obs["action_mask"])
            env.step(action)
            n += 1
            if n >= 2000:
                break
        if not env.agents:
            counter["games"] += 1
            env.reset(seed=seed + counter["games"])
        return n

    run()
    return best_rate(run, cfg["time"], cfg["repeats"])


def floor_env(board_size: int = 14, planes: int | None = None, game_length: int = 1000) -> Any:
    """A do-nothing AEC env with Jiu's spaces and the same wrappers as :func:`jiu_env.env`.

    Its observation and mask are fixed arrays (a third of the actions legal),
    steps only alternate the agents, and a game ends after ``game_length`` steps:
    the cost of the PettingZoo API itself.
    """
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers

    from jiu_env import kernel as K
    from jiu_env.observation import NUM_PLANES

    planes = NUM_PLANES if planes is None else planes
    n = board_size
    na = K.num_actions(n)

    class NoopEnv(AECEnv):
        metadata = {"name": "noop_v0", "render_modes": [], "is_parallelizable": False}

        def __init__(self):
            super().__init__()
            self.possible_agents = ["white", "black"]
            space = spaces.Dict({"observation": spaces.Box(0.0, 1.0, (n, n, planes), np.float32),
                                 "action_mask": spaces.Box(0, 1, (na,), np.int8)})
            self.observation_spaces = {a: space for a in self.possible_agents}
            self.action_spaces = {a: spaces.Discrete(na) for a in self.possible_agents}
            self._obs = np.zeros((n, n, planes), np.float32)
            self._mask = np.zeros(na, np.int8)
            self._mask[::3] = 1
            self.render_mode = None

        def observation_space(self, agent):
            return self.observation_spaces[agent]

        def action_space(self, agent):
            return self.action_spaces[agent]

        def observe(self, agent):
            return {"observation": self._obs, "action_mask": self._mask}

        def reset(self, seed=None, options=None):
            self.agents = list(self.possible_agents)
            self.rewards = {a: 0.0 for a in self.agents}
            self._cumulative_rewards = {a: 0.0 for a in self.agents}
            self.terminations = {a: False for a in self.agents}
            self.truncations = {a: False for a in self.agents}
            self.infos = {a: {} for a in self.agents}
            self.agent_selection = "white"
            self._t = 0

        def step(self, action):
            agent = self.agent_selection
            if self.terminations[agent] or self.truncations[agent]:
                return self._was_dead_step(action)
            self._cumulative_rewards[agent] = 0
            self._t += 1
            if self._t >= game_length:
                self.terminations = {a: True for a in self.agents}
            self.agent_selection = "black" if agent == "white" else "white"
            self._accumulate_rewards()

    e = NoopEnv()
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


def bench_aec(t: Table, cfg: dict[str, Any]) -> None:
    """Section ``aec``: the AEC env's full API, as a ratio to a do-nothing env with the same wrappers and to peers."""
    import warnings

    with warnings.catch_warnings():
        # PettingZoo's deprecation notices for the classic envs and their agent names
        warnings.simplefilter("ignore")
        _bench_aec(t, cfg)


def _bench_aec(t, cfg):
    import jiu_env

    jiu = _aec_rate(jiu_env.env, cfg)
    floor = _aec_rate(floor_env, cfg)
    t.add("aec", "aec env, random play", jiu, "steps/s", jiu / floor, "do-nothing floor",
          note="jiu_env.env() (standard wrappers), 14x14, env.last + action_space.sample(mask) + env.step")
    t.add("aec", "aec do-nothing floor", floor, "steps/s",
          note="same wrappers, spaces and random-choice code, no game")
    others = [("pettingzoo go_v5 19x19", "pettingzoo.classic", "go_v5", {"board_size": 19}, "pettingzoo"),
              ("pettingzoo chess_v6", "pettingzoo.classic", "chess_v6", {}, "chess")]
    for name, mod, attr, kw, need in others:
        try:
            module = __import__(mod, fromlist=[attr])
            make = getattr(module, attr).env
            make(**kw).reset(seed=0)
        except Exception as e:  # missing optional dependency
            t.skip("aec", name, f"not available ({type(e).__name__}: {e}); pip install '{need}'")
            continue
        rate = _aec_rate(lambda: make(**kw), cfg)
        t.add("aec", name, rate, "steps/s", jiu / rate, "(Jiu aec / this)", note="same random masked loop")
    try:
        import pyspiel
    except ImportError:
        t.skip("aec", "openspiel checkers", "open_spiel not installed; pip install open_spiel")
        return
    game = pyspiel.load_game("checkers")
    rng = np.random.default_rng(0)

    def run():
        n = 0
        while n < 2000:
            st = game.new_initial_state()
            while not st.is_terminal():
                acts = st.legal_actions()
                st.apply_action(acts[rng.integers(len(acts))])
                n += 1
        return n

    rate = best_rate(run, cfg["time"], cfg["repeats"])
    t.add("aec", "openspiel checkers", rate, "steps/s", jiu / rate, "(Jiu aec / this)",
          note="pyspiel C++ state, legal_actions + apply_action, no observation tensor")


# -- single-agent / vector envs
def bench_vector(t: Table, cfg: dict[str, Any]) -> None:
    """Section ``vector``: learner steps/s of the single-agent env and the vector env against random and greedy."""
    from jiu_env.batch import derive_seeds, sample_masked
    from jiu_env.envs.vector import JiuVectorEnv

    b = cfg["games"]
    single = {}
    try:
        from jiu_env.envs.single_agent import JiuVsBotEnv
        have_single = True
    except ImportError as e:
        have_single = False
        t.skip("vector", "single-agent env vs random", f"jiu_env.envs.single_agent not available ({e})")
    for opp in ("random", "greedy"):
        if have_single:
            env = JiuVsBotEnv(opponent=opp)
            env.reset(seed=0)
            rng = np.random.default_rng(0)

            def run(env=env, rng=rng):
                n = 0
                while n < 200:
                    a = rng.choice(np.flatnonzero(env.action_masks()))
                    _, _, term, trunc, _ = env.step(a)
                    n += 1
                    if term or trunc:
                        env.reset()
                return n

            run()
            single[opp] = best_rate(run, cfg["time"], cfg["repeats"])
            t.add("vector", f"single-agent env vs {opp}", single[opp], "learner steps/s",
                  note="JiuVsBotEnv, 14x14, random legal learner actions, opponent inside step()")
        for label, nthreads in (("1 core", 1), ("all cores", None)):
            venv = JiuVectorEnv(b, opponent=opp, threads=nthreads)
            venv.reset(seed=0)
            seeds = derive_seeds(0, b)

            def vrun(venv=venv, seeds=seeds):
                venv.step(sample_masked(venv.runner.masks, seeds))
                return b

            vrun()
            rate = best_rate(vrun, cfg["time"], cfg["repeats"])
            ratio = rate / single[opp] if opp in single else None
            t.add("vector", f"vector env vs {opp}, {b} games, {label}", rate, "learner steps/s", ratio,
                  "single-agent env" if ratio else None, note="JiuVectorEnv, opponent in the same numba call")


# -- search bots
def midgame_positions(count: int = 3, turns: int = 30, seed: int = 7, board_size: int = 14) -> list[np.ndarray]:
    """Fixed mid-game battle states (move sub-phase): a random placement, then ``turns`` random turns (seeded)."""
    from jiu_env import Rules, kernel as K

    rules = Rules.make("competitive", board_size=board_size)
    out: list[np.ndarray] = []
    rng = np.random.default_rng(seed)
    buf = np.empty(rules.num_actions, np.int64)
    while len(out) < count:
        s = rules.new_state()
        K.random_placement(s, int(rng.integers(1 << 30)))
        while s[K.H_PHASE] == K.PH_BATTLE and s[K.H_TURNS] < turns:
            k = K.legal_actions(s, buf)
            K.apply_action(s, int(buf[rng.integers(k)]))
        if s[K.H_PHASE] == K.PH_BATTLE and s[K.H_SUB] == K.SUB_MOVE:
            out.append(s)
    return out


def measure_search(bot: Any, positions: Sequence[np.ndarray], units: Callable[[dict[str, Any]], float]
                   ) -> tuple[float, float, float]:
    """Time one decision of ``bot`` on each position (after one untimed call that loads its numba code).

    ``units(last_info)`` counts the work of a decision (nodes, simulations).
    Returns (units in total, wall-clock seconds, CPU seconds).
    """
    bot.step(positions[0])
    total = wall = cpu = 0.0
    for s in positions:
        bot.restart(seed=0)
        t0, c0 = time.perf_counter(), time.process_time()
        bot.step(s)
        wall += time.perf_counter() - t0
        cpu += time.process_time() - c0
        total += units(getattr(bot, "last_info", {}) or {})
    return total, wall, cpu


#: the first release's alpha-beta engine: a fixed peer for the default's nodes/s, which moves with the defaults
FIRST_RELEASE_AB = "quiesce=0,lmr=false,eval=hand"


def _best_search(bot: Any, positions: Sequence[np.ndarray], units: Callable[[dict[str, Any]], float],
                 repeats: int) -> tuple[float, Rate]:
    """Work of one pass over ``positions`` and the best rate of ``repeats`` passes (as every other figure)."""
    best = Rate(0.0, 0.0)
    total = 0.0
    for _ in range(repeats):
        total, secs, cpu = measure_search(bot, positions, units)
        if total / secs > best:
            best = Rate(total / secs, total / max(cpu, 1e-9))
    return total, best


def bench_search(t: Table, cfg: dict[str, Any]) -> None:
    """Section ``search``: alpha-beta nodes/s (the first release's engine as a fixed peer) and MCTS simulations/s."""
    from jiu_env.bots import make_bot

    positions = midgame_positions()
    depth = cfg["ab_depth"]
    where = f"depth {depth} on {len(positions)} fixed mid-game positions, bot.last_info['nodes']"
    try:
        bot = make_bot(f"alphabeta:depth={depth}", seed=0)
        first = make_bot(f"alphabeta:depth={depth},{FIRST_RELEASE_AB}", seed=0)
    except (ImportError, ValueError) as e:
        t.skip("search", "alpha-beta search", f"alpha-beta bot not available ({e})")
    else:
        nodes, rate = _best_search(bot, positions, lambda info: info.get("nodes", 0), cfg["repeats"])
        if nodes:
            # The default's nodes/s moves with its settings (a quiescence node costs a move generation
            # where a plain leaf costs one evaluation); the first release's engine, measured in the same
            # run, is the peer that tells a slower search from a different one.  The ratio is of the
            # per-CPU-second rates: both are one thread, and on a loaded machine the wall-clock rate of
            # a pass of a fraction of a second follows the scheduler more than the code.
            _, frate = _best_search(first, positions, lambda info: info.get("nodes", 0), cfg["repeats"])
            ratio = rate.cpu / frate.cpu if frate.cpu else None
            t.add("search", "alpha-beta search", rate, "nodes/s",
                  ratio, "first release's engine, per CPU-s" if ratio else None,
                  note=f"make_bot('alphabeta:depth={depth}'), the current defaults; {where}")
            t.add("search", "alpha-beta search, first release's engine", frate, "nodes/s",
                  note=f"make_bot('alphabeta:depth={depth},{FIRST_RELEASE_AB}'); {where}")
        else:
            t.skip("search", "alpha-beta search", "the bot reports no node count")
    try:
        bot = make_bot(f"mcts:sims={cfg['mcts_sims']}", seed=0)
    except (ImportError, ValueError) as e:
        t.skip("search", "mcts search", f"MCTS bot not available ({type(e).__name__}: {e})")
        return
    _, rate = _best_search(bot, positions, lambda info: info.get("sims", info.get("simulations", cfg["mcts_sims"])),
                           cfg["repeats"])
    t.add("search", "mcts search", rate, "simulations/s",
          note=f"make_bot('mcts:sims={cfg['mcts_sims']}') (other parameters at their defaults) on {len(positions)} fixed mid-game positions")


# -- compile time
_PROBE = r"""
import json, time
t0 = time.perf_counter()
import jiu_env
t1 = time.perf_counter()
env = jiu_env.env()
env.reset(seed=0)
t2 = time.perf_counter()
obs, r, term, trunc, info = env.last()
env.step(env.action_space(env.agent_selection).sample(obs["action_mask"]))
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "reset": t2 - t1, "step": t3 - t2}))
"""


def _probe(cache_dir=None):
    envv = dict(os.environ)
    if cache_dir is not None:
        envv["NUMBA_CACHE_DIR"] = str(cache_dir)
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", _PROBE], env=envv, cwd=root, capture_output=True, text=True,
                         timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "probe failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_compile(t: Table, cfg: dict[str, Any]) -> None:
    """Section ``compile``: import, first ``reset()`` and first ``step()`` in fresh interpreters, cold and warm."""
    if cfg["quick"]:
        # The package's own cache (warmed by this process) stands in for a warm cache.
        import jiu_env

        jiu_env.env().reset(seed=0)
        warm = _probe()
        note = "--quick: cold cache not measured"
    else:
        with tempfile.TemporaryDirectory(prefix="jiu-numba-") as d:
            cold = _probe(d)
            warm = _probe(d)
        t.add("compile", "compile, cold cache: import", cold["import"], "s")
        t.add("compile", "compile, cold cache: first reset()", cold["reset"], "s")
        t.add("compile", "compile, cold cache: first step()", cold["step"], "s")
        note = "fresh interpreter, NUMBA_CACHE_DIR filled by the cold run"
    t.add("compile", "compile, warm cache: import", warm["import"], "s", note=note)
    t.add("compile", "compile, warm cache: first reset()", warm["reset"], "s", note=note)
    t.add("compile", "compile, warm cache: first step()", warm["step"], "s", note=note)


BENCHES = {"kernel": bench_kernel, "batched": bench_batched, "aec": bench_aec, "vector": bench_vector,
           "search": bench_search, "compile": bench_compile}


# ------------------------------------------------------------------ report
def machine_info() -> dict[str, Any]:
    """What the figures were measured on."""
    import numba

    info = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numba": numba.__version__,
        "numpy": np.__version__,
        "cpu_count": os.cpu_count(),
        "numba_threads": cast(Any, numba.config).NUMBA_NUM_THREADS,  # set at import time, unseen by mypy
        "cpu": platform.processor() or "",
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info


def code_info() -> dict[str, Any]:
    """Which code was measured: the package version and, in a git checkout, the commit (and whether edited).

    Figures kept in the repository are quoted by the docs; the commit says which engine they describe.
    """
    from jiu_env import __version__

    info: dict[str, Any] = {"jiu_env": __version__, "commit": None, "modified": None}
    root = Path(__file__).resolve().parent.parent
    if (root / ".git").exists():
        try:
            head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
            diff = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "jiu_env"],
                                  cwd=root, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return info
        if head.returncode == 0:
            info["commit"] = head.stdout.strip()
            info["modified"] = bool(diff.stdout.strip()) if diff.returncode == 0 else None
    return info


def _load():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def _code_line(code: dict[str, Any] | None) -> list[str]:
    if not code:
        return []
    line = f"Code: jiu_env {code['jiu_env']}"
    if code.get("commit"):
        line += f", commit {code['commit'][:12]}" + (" with local changes to jiu_env/" if code.get("modified") else "")
    return [line + "."]


def to_markdown(result: dict[str, Any]) -> str:
    """The results as a Markdown page."""
    m = result["machine"]
    lines = [
        "# jiu_env benchmark results",
        "",
        f"Measured {result['date']} with `{result['command']}`.",
        "",
        f"Machine: {m['cpu']}, {m['cpu_count']} cores, numba {m['numba']} ({m['numba_threads']} threads), "
        f"numpy {m['numpy']}, Python {m['python']}, {m['platform']}.",
        *_code_line(result.get("code")),
        f"Load average (1 min) at start / end: {result['load_start']} / {result['load_end']}.",
    ]
    if result.get("note"):
        lines += ["", result["note"]]
    lines += ["", "| section | measurement | value | unit | per CPU-second | ratio | target | note |",
              "|---|---|---:|---|---:|---|---|---|"]
    for r in result["rows"]:
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}x {r['ratio_to']}"
        tgt = "" if "target" not in r else f"{r['target']}: {'met' if r['met'] else '**missed**'}"
        cpu = _fmt(r.get("per_cpu_s")) if r.get("per_cpu_s") else ""
        lines.append(f"| {r['section']} | {r['name']} | {_fmt(r['value'])} | {r['unit']} | {cpu} | {ratio} | {tgt} | {r['note']} |")
    lines += ["", "Values are wall-clock rates, the best of several repeats.  \"Per CPU-second\" divides the "
              "same work by the CPU time of the benchmark process (all its threads): on a machine shared with "
              "other work it shows what the code does when it gets a core.  Ratios \"Jiu aec / this\" are "
              "Jiu's AEC steps/s divided by the other game's.", ""]
    return "\n".join(lines)


def run_benchmarks(sections: Iterable[str] = SECTIONS, quick: bool = False, games: int = 64, echo: bool = True,
                   note: str = "") -> dict[str, Any]:
    """Run the chosen sections; return the result dict (rows, machine, settings)."""
    cfg = {"quick": quick, "time": 0.3 if quick else 3.0, "repeats": 1 if quick else 3, "games": games,
           "ab_depth": 2 if quick else 3, "mcts_sims": 200 if quick else 2000}
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        raise ValueError(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    t = Table(echo=echo)
    load0 = _load()
    for name in SECTIONS:
        if name in sections:
            if echo:
                print(f"[{name}]", flush=True)
            BENCHES[name](t, cfg)
    load1 = _load()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "run_benchmarks()",
        "machine": machine_info(),
        "code": code_info(),
        "settings": cfg,
        "load_start": None if load0 is None else round(load0, 2),
        "load_end": None if load1 is None else round(load1, 2),
        "note": note,
        "rows": t.rows,
        "skipped": t.notes,
    }


def _sections_arg(text):
    """``--only``: a comma-separated list of known sections (kept as the text given)."""
    names = [x.strip() for x in text.split(",") if x.strip()]
    unknown = [x for x in names if x not in SECTIONS]
    if unknown or not names:
        what = f"unknown section(s) {', '.join(unknown)}" if unknown else "no section given"
        raise argparse.ArgumentTypeError(f"{what}; choose from {', '.join(SECTIONS)}")
    return text


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, not {value}")
    return value


def prepare_out(path: str | os.PathLike[str]) -> Path:
    """Create the output folder and check that files can be written there (before anything is measured)."""
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise OSError(f"--out {path}: cannot write results there ({e.strerror or e})") from None
    return out


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The benchmark's options on an argparse parser (for ``jiu bench``)."""
    parser.add_argument("--quick", action="store_true", help="short run (a fraction of a second per figure)")
    parser.add_argument("--out", default=str(Path("benchmarks") / "results"),
                        help="folder for results.json and RESULTS.md (default benchmarks/results)")
    parser.add_argument("--only", default=",".join(SECTIONS), type=_sections_arg,
                        help=f"comma-separated sections to run (default all: {','.join(SECTIONS)})")
    parser.add_argument("--games", type=_positive_int, default=64,
                        help="games in the batched runner / vector env (default 64)")
    parser.add_argument("--note", default="", help="a line for the Markdown report (machine load, ...)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Run from parsed arguments; write the files; return an exit code."""
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    out = prepare_out(args.out)  # an unusable folder fails now, not after minutes of measuring
    result = run_benchmarks(sections, quick=args.quick, games=args.games, note=args.note)
    flags = (["--quick"] if args.quick else []) + ([f"--only {args.only}"] if set(sections) != set(SECTIONS) else [])
    result["command"] = " ".join(["jiu bench"] + flags)
    (out / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "RESULTS.md").write_text(to_markdown(result))
    print(f"wrote {out / 'results.json'} and {out / 'RESULTS.md'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point: ``jiu bench [--quick] [--out DIR] [--only ...]``."""
    parser = add_arguments(argparse.ArgumentParser(prog="bench", description=__doc__.split("\n\n")[0]))
    args = parser.parse_args(argv)
    try:
        return run(args)
    except OSError as e:
        parser.error(str(e))


if __name__ == "__main__":
    sys.exit(main())
