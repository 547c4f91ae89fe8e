"""Sections ``aec`` and ``vector``: the env shells through their full API, against a floor and against peers.

``aec`` measures the PettingZoo AEC env against :func:`floor_env`, a
do-nothing env with the same wrappers and spaces (the cost of the API
itself), and against other games' envs where installed; ``vector`` the
single-agent env and the vector env against random and greedy opponents.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .timing import Table, best_rate


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
