"""The env shells as one package: a core free of env frameworks, the lazy root, old import paths, one reset rule."""

import importlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import jiu_env
from jiu_env import kernel as K
from jiu_env import vocab as V
from jiu_env.envs.common import UnknownResetOptionWarning

SHELLS = ("env", "raw_env", "JiuVsBotEnv", "JiuSelfPlayEnv", "JiuVectorEnv")


def _python(code):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


# ------------------------------------------------------------ a free core
def test_core_imports_neither_pettingzoo_nor_gymnasium():
    _python("import jiu_env, jiu_env.kernel, jiu_env.bots, jiu_env.game, jiu_env.records, jiu_env.rules\n"
            "import jiu_env.players, jiu_env.batch, jiu_env.envs\n"
            "import sys\n"
            "assert 'pettingzoo' not in sys.modules and 'gymnasium' not in sys.modules, "
            "[m for m in sys.modules if m.startswith(('pettingzoo', 'gymnasium'))]\n"
            "jiu_env.play_game(jiu_env.Rules.make('competitive', board_size=6), 'random', 'random', seed=0)\n"
            "assert 'pettingzoo' not in sys.modules and 'gymnasium' not in sys.modules\n")


def test_shells_load_on_first_access():
    out = _python("import sys, jiu_env\n"
                  "e = jiu_env.JiuVsBotEnv\n"
                  "print('gymnasium' in sys.modules, 'pettingzoo' in sys.modules)\n"
                  "jiu_env.env\n"
                  "print('pettingzoo' in sys.modules)\n")
    assert out.split() == ["True", "False", "True"]


def test_gym_ids_registered_when_gymnasium_is_imported_later():
    _python("import sys, jiu_env\n"
            "assert 'gymnasium' not in sys.modules\n"
            "import gymnasium\n"
            "for i in ('jiu_env/JiuVsBot-v0', 'jiu_env/JiuSelfPlay-v0'):\n"
            "    e = gymnasium.make(i, board_size=6)\n"
            "    e.reset(seed=0)\n"
            "assert type(gymnasium.__loader__).__name__ == 'SourceFileLoader', gymnasium.__loader__\n"
            "assert not any(type(f).__module__ == 'jiu_env._lazy' for f in sys.meta_path)\n")


def test_gym_ids_registered_when_gymnasium_came_first():
    _python("import gymnasium, jiu_env\n"
            "gymnasium.make('jiu_env/JiuVsBot-v0', board_size=6).reset(seed=0)\n")


# --------------------------------------------------------- the public root
def test_root_lists_and_gives_the_shells():
    from jiu_env.envs import aec, single_agent, vector

    for name in SHELLS:
        assert name in jiu_env.__all__ and name in dir(jiu_env)
    assert jiu_env.env is aec.env and jiu_env.raw_env is aec.raw_env
    assert jiu_env.JiuVsBotEnv is single_agent.JiuVsBotEnv and jiu_env.JiuSelfPlayEnv is single_agent.JiuSelfPlayEnv
    assert jiu_env.JiuVectorEnv is vector.JiuVectorEnv
    with pytest.raises(AttributeError):
        jiu_env.no_such_name


def test_old_import_paths_keep_working():
    from jiu_env.batch import BatchRunner
    from jiu_env.envs.aec import raw_env as new_raw_env
    from jiu_env.envs.single_agent import JiuVsBotEnv as NewVsBot

    # the former paths work for this release, each with a DeprecationWarning naming its new home
    for old, new in (("jiu_env.env", "jiu_env.envs.aec"), ("jiu_env.single_agent", "jiu_env.envs.single_agent"),
                     ("jiu_env.vector", "jiu_env.batch")):
        sys.modules.pop(old, None)
        with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
            importlib.import_module(old)
    from jiu_env.env import ActionTypeWrapper, position_state, raw_env  # noqa: F401
    from jiu_env.single_agent import JiuSelfPlayEnv, JiuVsBotEnv, as_opponent, check_action  # noqa: F401
    from jiu_env.vector import BatchRunner as OldRunner, JiuVectorEnv, derive_seeds, sample_masked  # noqa: F401

    assert raw_env is new_raw_env and JiuVsBotEnv is NewVsBot and OldRunner is BatchRunner
    assert JiuVectorEnv is jiu_env.JiuVectorEnv
    # the former module jiu_env/env.py does not replace the factory function
    importlib.import_module("jiu_env.env")
    assert callable(jiu_env.env) and not isinstance(jiu_env.env, type(sys))
    assert jiu_env.env(board_size=6).unwrapped.board_size == 6


def test_old_env_module_first_in_a_fresh_process():
    _python("from jiu_env.env import raw_env\n"
            "import jiu_env, types\n"
            "assert not isinstance(jiu_env.env, types.ModuleType)\n"
            "assert jiu_env.env(board_size=6).unwrapped.board_size == 6\n")


# ------------------------------------------------------- one reset rule
def _aec():
    return jiu_env.raw_env(board_size=6)


def _wrapped():
    return jiu_env.env(board_size=6)


def _vs_bot():
    return jiu_env.JiuVsBotEnv(board_size=6)


def _self_play():
    return jiu_env.JiuSelfPlayEnv(board_size=6)


def _vector():
    return jiu_env.JiuVectorEnv(2, board_size=6)


def _rllib():
    pytest.importorskip("ray.rllib")
    from jiu_env.integrations.rllib import JiuMultiAgentEnv

    return JiuMultiAgentEnv({"board_size": 6})


ENVS = [_aec, _wrapped, _vs_bot, _self_play, _vector, _rllib]
IDS = ["aec", "aec-wrapped", "vs-bot", "self-play", "vector", "rllib"]


@pytest.mark.parametrize("make", ENVS, ids=IDS)
def test_unknown_reset_key_warns_the_same_in_every_env(make):
    e = make()
    with pytest.warns(UnknownResetOptionWarning, match=r"ignoring unknown reset option\(s\) \['bord'\]; valid: \[") as w:
        e.reset(seed=0, options={"bord": 1})
    assert len(w) == 1 and issubclass(w[0].category, UserWarning)
    assert w[0].filename == __file__  # the warning points at the caller's reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnknownResetOptionWarning)
        with pytest.raises(UnknownResetOptionWarning, match="bord"):
            e.reset(seed=0, options={"bord": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e.reset(seed=0, options={})  # an empty dict is no news (Gymnasium's and RLlib's checkers pass one)
        e.reset(seed=0, options=None)


@pytest.mark.parametrize("make", ENVS, ids=IDS)
def test_reset_options_that_are_not_a_dict_are_a_type_error(make):
    with pytest.raises(TypeError, match="reset options must be a dict"):
        make().reset(seed=0, options=[("start", "battle")])


@pytest.mark.parametrize("make", [_aec, _wrapped, _vs_bot, _self_play, _rllib], ids=["aec", "aec-wrapped", "vs-bot",
                                                                                      "self-play", "rllib"])
def test_known_reset_keys_with_bad_values_raise_the_same(make):
    e = make()
    board = np.zeros((6, 6), int)
    board[0, 0:3], board[5, 0:3] = 1, 2
    for options, words in [({"start": "middle"}, "reset option 'start' must be 'placement' or 'battle'"),
                           ({"to_move": "white"}, "reset option 'to_move' needs a 'board'"),
                           ({"board": board, "start": "placement"}, "cannot be combined with start='placement'")]:
        with pytest.raises(ValueError) as info:
            e.reset(seed=0, options=options)
        assert words in str(info.value)


def test_the_pettingzoo_api_probe_passes_with_a_warning():
    e = _wrapped()
    with pytest.warns(UnknownResetOptionWarning, match="'options'"):
        e.reset(seed=0, options={"options": 1})
    assert e.unwrapped.phase == "placement"


def test_play_game_checks_its_start_state_and_integer_actions():
    from jiu_env import Rules, play_game
    from jiu_env.validate import InvalidStateError

    bad = Rules.make(board_size=4).new_state()
    bad[V.H_TO_MOVE] = 7
    with pytest.raises(InvalidStateError, match="H_TO_MOVE=7 is not a colour"):
        play_game({"board_size": 4}, "random", "random", start=bad)
    with pytest.raises(ValueError, match="other rules than the game's: fly_threshold=8 .state: 7."):
        play_game(Rules.make("competitive", board_size=8), "random", "random", start=Rules.make("ludii8").new_state())

    def first(s, as_type):
        buf = np.empty(Rules.make(board_size=4).num_actions, np.int64)
        K.legal_actions(s, buf)
        return as_type(buf[0])

    with pytest.raises(ValueError, match="not an integer action: 5.0"):  # a float is refused, as the envs do
        play_game({"board_size": 4}, lambda s: first(s, float), "random", seed=1)
    g = play_game({"board_size": 4}, lambda s: first(s, float), "random", seed=1, on_illegal="forfeit")
    assert g.forfeit == {"colour": "white", "action": -1}
    assert play_game({"board_size": 4}, lambda s: first(s, np.uint16), "random", seed=1).forfeit is None
