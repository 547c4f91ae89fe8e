"""Shipping the package: factories over ``jiu_env`` pickle (cloudpickle, spawn), envs survive read-only trips.

RLlib's ``register_env`` factory, ``@ray.remote`` closures and SB3's
``SubprocVecEnv`` with the ``spawn`` start method all pickle a function that
refers to the package; these tests do exactly that, and run the result in a
freshly spawned interpreter.
"""

from __future__ import annotations

import multiprocessing as mp
import pickle

import numpy as np
import pytest

import jiu_env

cloudpickle = pytest.importorskip("cloudpickle")


def _run_factory(payload: bytes) -> list[int]:
    """In a spawned process: unpickle the factory, play the first legal action ten times, return the actions."""
    import cloudpickle as cp

    make = cp.loads(payload)
    env = make()
    env.reset(seed=0)
    played = []
    for agent in env.agent_iter(10):
        obs, _, term, trunc, _ = env.last()
        a = None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0])
        env.step(a)
        played.append(a)
    return played


def test_package_pickles_by_reference():
    assert pickle.loads(pickle.dumps(jiu_env)) is jiu_env
    assert cloudpickle.loads(cloudpickle.dumps(jiu_env)) is jiu_env
    assert callable(jiu_env.env)  # still the factory function, not the old-path module


def test_factory_over_the_package_pickles_and_runs_in_a_spawned_process():
    payload = cloudpickle.dumps(lambda: jiu_env.env(board_size=6))
    here = _run_factory(payload)
    with mp.get_context("spawn").Pool(1) as pool:
        there = pool.apply(_run_factory, (payload,))
    assert there == here and len(here) == 10


def test_sb3_subproc_vec_env_with_spawn():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vec = SubprocVecEnv([lambda: jiu_env.JiuVsBotEnv(opponent="random", board_size=6)] * 2, start_method="spawn")
    try:
        vec.seed(3)
        obs = vec.reset()
        masks = vec.env_method("action_masks")
        obs, rewards, dones, infos = vec.step(np.array([int(np.flatnonzero(m)[0]) for m in masks]))
        assert obs.shape[0] == 2 and rewards.shape == (2,)
    finally:
        vec.close()


def test_rllib_register_env_factory_pickles():
    pytest.importorskip("ray")
    import jiu_env.integrations.rllib  # noqa: F401  (the factory reaches the class through the package)

    payload = cloudpickle.dumps(lambda config: jiu_env.integrations.rllib.JiuMultiAgentEnv({**config, "board_size": 6}))
    env = cloudpickle.loads(payload)({})
    obs, _ = env.reset(seed=1)
    assert set(obs) == {"white"}


def _multi_agent_play(env, n):
    out = []
    obs, _ = env.reset(seed=5, options={"start": "battle"})
    for _ in range(n):
        (agent, o), = obs.items()
        a = int(np.flatnonzero(o["action_mask"])[-1])
        obs, rew, term, trunc, _ = env.step({agent: a})
        out.append((agent, a, dict(rew)))
        if term["__all__"] or trunc["__all__"]:
            break
    return out


def test_multi_agent_env_read_only_state_goes_on():
    pytest.importorskip("ray")
    from jiu_env import kernel as K
    from jiu_env.integrations.rllib import JiuMultiAgentEnv

    ref = JiuMultiAgentEnv({"board_size": 6})
    want = _multi_agent_play(ref, 30)
    env = JiuMultiAgentEnv({"board_size": 6})
    obs, _ = env.reset(seed=5, options={"start": "battle"})  # the battle's paths on a read-only state
    env.state.setflags(write=False)
    got = []
    for _ in range(30):
        assert env.state[K.H_PHASE] == K.PH_BATTLE and not env.state.flags.writeable
        (agent, o), = obs.items()
        a = int(np.flatnonzero(o["action_mask"])[-1])
        obs, rew, term, trunc, _ = env.step({agent: a})
        got.append((agent, a, dict(rew)))
        env.state.setflags(write=False)
        if term["__all__"] or trunc["__all__"]:
            break
    assert got == want and len(got) >= 5


def test_multi_agent_env_unpickled_read_only_goes_on():
    pytest.importorskip("ray")
    from jiu_env import kernel as K
    from jiu_env.integrations.rllib import JiuMultiAgentEnv

    env = JiuMultiAgentEnv({"board_size": 6})
    obs, _ = env.reset(seed=2, options={"start": "battle"})  # the battle's paths on the unpickled state
    for _ in range(5):
        (agent, o), = obs.items()
        obs, *_ = env.step({agent: int(np.flatnonzero(o["action_mask"])[0])})
    assert env.state[K.H_PHASE] == K.PH_BATTLE
    bufs: list = []
    data = pickle.dumps(env, protocol=5, buffer_callback=bufs.append)
    twin = pickle.loads(data, buffers=[b.raw().toreadonly() for b in bufs])
    assert twin.state.flags.writeable
    assert twin.state[K.H_PHASE] == K.PH_BATTLE
    (agent, o), = obs.items()
    a = int(np.flatnonzero(o["action_mask"])[0])
    r1 = env.step({agent: a})
    r2 = twin.step({agent: a})
    assert np.array_equal(env.state, twin.state)
    assert r1[1] == r2[1]
