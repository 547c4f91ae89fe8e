"""rllib:PATH checkpoints: a missing, foreign or damaged checkpoint (or one of another board size) is an error naming
the path, raised when the player is built; the ray backend ships checkpoint directories to its workers."""

import os
import re
import shutil

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import jiu_env  # noqa: E402
from jiu_env import kernel as K  # noqa: E402
from jiu_env.players import make_player, sb3_spec_rules  # noqa: E402

ALGO_MODULES = os.path.join("learner_group", "learner", "rl_module")


def _save_module(path, board_size=6, module_cls=None, spaces=None):
    import gymnasium as gym

    from jiu_env.integrations.rllib import JiuMaskedModule, JiuMultiAgentEnv

    if spaces is None:
        env = JiuMultiAgentEnv({"board_size": board_size})
        spaces = env.observation_spaces["white"], env.action_spaces["white"]
    cls = module_cls or JiuMaskedModule
    config = {"channels": 4, "layers": 1, "value_hidden": 4} if cls is JiuMaskedModule else {}
    module = cls(observation_space=spaces[0], action_space=spaces[1], model_config=config)
    module.save_to_path(str(path))
    assert isinstance(spaces[1], gym.spaces.Discrete)
    return path


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """A 6x6 and an 8x8 RLModule checkpoint, the 6x6 one also in an Algorithm checkpoint's layout, and an RLModule
    of another environment (a vector observation, two actions)."""
    import gymnasium as gym

    from jiu_env.integrations.rllib import JiuRandomModule

    work = tmp_path_factory.mktemp("rllib_files")
    six = _save_module(work / "six", 6)
    eight = _save_module(work / "eight", 8)
    algo = work / "algo"
    shutil.copytree(six, algo / ALGO_MODULES / "learner")
    (algo / "algorithm_state.pkl").write_bytes(b"")  # never read by the player
    foreign = _save_module(work / "foreign", module_cls=JiuRandomModule,
                           spaces=(gym.spaces.Box(-1.0, 1.0, (4,), np.float32), gym.spaces.Discrete(2)))
    return {"six": six, "eight": eight, "algo": algo, "foreign": foreign}


def _copy(src, dst):
    shutil.copytree(src, dst)
    return dst


def _raises(exc, path, *words):
    """pytest.raises matching the path and then each of ``words`` in the message."""
    return pytest.raises(exc, match=re.escape(str(path)) + "".join(".*" + re.escape(w) for w in words))


def test_good_checkpoints_play(checkpoints):
    for key in ("six", "algo"):
        player = make_player(f"rllib:{checkpoints[key]}", seed=0)
        s = jiu_env.Rules.make(board_size=6).new_state()
        assert K.is_legal(s, player.step(s))
        assert player.board_size == 6


def test_missing_file_empty_and_foreign_directories(checkpoints, tmp_path):
    with _raises(FileNotFoundError, tmp_path / "nothere", "not found"):
        make_player(f"rllib:{tmp_path / 'nothere'}")
    f = tmp_path / "model.zip"
    f.write_bytes(b"PK not a checkpoint")
    with _raises(ValueError, f, "is a file, not a checkpoint directory"):
        make_player(f"rllib:{f}")
    empty = tmp_path / "empty"
    empty.mkdir()
    with _raises(ValueError, empty, "empty directory"):
        make_player(f"rllib:{empty}")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("hello")
    (other / "weights.pt").write_bytes(b"\x00" * 10)
    with _raises(ValueError, other, "is not an RLlib checkpoint", "no module_state"):
        make_player(f"rllib:{other}")
    with _raises(ValueError, checkpoints["algo"], "no RLModule 'league_3'", "its modules: learner"):
        make_player(f"rllib:{checkpoints['algo']}:module=league_3")
    with _raises(ValueError, checkpoints["foreign"], "not one for Jiu", "Box"):
        make_player(f"rllib:{checkpoints['foreign']}")


@pytest.mark.parametrize("damage,words", [
    ("module_state.pkl", ("is damaged", "cannot be loaded")),
    ("class_and_ctor_args.pkl", ("damaged or foreign", "cannot be unpickled")),
    ("metadata.json", ("is damaged", "metadata.json is not readable JSON")),
])
@pytest.mark.parametrize("layout", ["module", "algorithm"])
def test_truncated_files_in_a_checkpoint(checkpoints, tmp_path, damage, words, layout):
    ckpt = _copy(checkpoints["six" if layout == "module" else "algo"], tmp_path / "ckpt")
    mdir = ckpt if layout == "module" else ckpt / ALGO_MODULES / "learner"
    data = (mdir / damage).read_bytes()
    (mdir / damage).write_bytes(data[: len(data) // 2])
    with _raises(ValueError, ckpt, *words):
        make_player(f"rllib:{ckpt}")


def test_missing_and_wrong_class_files(checkpoints, tmp_path):
    from ray import cloudpickle

    ckpt = _copy(checkpoints["six"], tmp_path / "noclass")
    (ckpt / "class_and_ctor_args.pkl").unlink()
    with _raises(ValueError, ckpt, "class_and_ctor_args.pkl is missing"):
        make_player(f"rllib:{ckpt}")
    ckpt = _copy(checkpoints["six"], tmp_path / "wrongclass")
    (ckpt / "class_and_ctor_args.pkl").write_bytes(cloudpickle.dumps({"class": dict, "ctor_args_and_kwargs": ((), {})}))
    with _raises(ValueError, ckpt, "not an RLModule checkpoint", "dict"):
        make_player(f"rllib:{ckpt}")
    ckpt = _copy(checkpoints["six"], tmp_path / "notadict")
    (ckpt / "class_and_ctor_args.pkl").write_bytes(cloudpickle.dumps([1, 2, 3]))
    with _raises(ValueError, ckpt, "not an RLModule checkpoint", "list"):
        make_player(f"rllib:{ckpt}")


def test_another_board_size_is_refused_before_and_during_a_game(checkpoints):
    spec = f"rllib:{checkpoints['eight']}"
    rules6 = {"profile": "competitive", "board_size": 6}
    with _raises(ValueError, checkpoints["eight"], "board_size=8", "here: 6"):
        sb3_spec_rules([spec, "random"], rules6)
    assert sb3_spec_rules([spec, "random"], {"board_size": 8}) == {"board_size": 8}
    assert sb3_spec_rules([f"mix:0.5:{spec}"], rules6) == rules6  # only top-level specs are read
    assert sb3_spec_rules([f"rllib:{checkpoints['eight']}/gone"], rules6) == rules6  # left to the factory
    player = make_player(spec, seed=0)
    s = jiu_env.Rules.make(board_size=6).new_state()
    before = s.copy()
    with _raises(ValueError, checkpoints["eight"], "H_N=6 (module: 8)", "8x8 board"):
        player.step(s)
    assert np.array_equal(s, before)


def test_jiu_eval_names_a_damaged_checkpoint(checkpoints, tmp_path, capsys):
    from jiu_env.cli import main

    ckpt = _copy(checkpoints["six"], tmp_path / "bad")
    (ckpt / "module_state.pkl").write_bytes(b"\x80\x04")
    assert main(["eval", f"rllib:{ckpt}", "random", "--rule", "board_size=6", "--games", "2", "--workers", "1",
                 "--no-progress", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert str(ckpt) in err and "damaged" in err and "Traceback" not in err


# ----------------------------------------------------------- the ray backend ships checkpoint directories
def test_ray_workers_play_from_a_shipped_checkpoint_directory(checkpoints, tmp_path):
    """The checkpoint directory is packed here and unpacked in the worker's temporary folder: the worker plays
    after the original directory has gone, and a tournament on the ray backend gives the local games."""
    ray = pytest.importorskip("ray")
    from jiu_env.evaluation import TournamentConfig, run_tournament, schedule
    from jiu_env.evaluation.backends import GameWorker, init_ray, ship_files, spec_files
    from jiu_env.evaluation.tournament import play_task, read_games
    from jiu_env.players import player_version

    ckpt = _copy(checkpoints["algo"], tmp_path / "ckpt")
    spec = f"rllib:{ckpt}:deterministic=false"
    rules = {"profile": "competitive", "board_size": 6, "max_battle_turns": 40}
    cfg = TournamentConfig(players=[f"rl={spec}", "random"], games=2, seed=5, rules=rules)
    versions = {p.spec: player_version(make_player(p.spec, seed=0)) for p in cfg.players}
    tasks = schedule(cfg, versions)
    expected = [play_task(t) for t in tasks]
    assert spec_files([spec, "random"]) == {str(ckpt): str(ckpt)}

    if ray.is_initialized():
        ray.shutdown()
    init_ray(num_cpus=1)
    try:
        local = run_tournament(cfg, out_dir=tmp_path / "local", workers=1, write_reports=False)
        remote = run_tournament(cfg, out_dir=tmp_path / "ray", backend="ray", write_reports=False)
        assert local.new_games == remote.new_games == 2

        def comparable(path):
            return {ln["id"]: {k: v for k, v in ln.items() if k != "time"} for ln in read_games(path)}

        assert comparable(tmp_path / "local" / "games.jsonl") == comparable(tmp_path / "ray" / "games.jsonl")

        shipped = ship_files(ray, [spec])
        (ref, name, kind), = shipped.values()
        assert (name, kind) == ("ckpt", "dir")
        actor = ray.remote(num_cpus=1)(GameWorker).remote(shipped)
        ckpt.rename(tmp_path / "moved")  # gone from its path: only the shipped copy remains
        got = ray.get([actor.play.remote(t) for t in tasks])
        assert ray.get(actor.close.remote())
        ray.kill(actor)
    finally:
        ray.shutdown()
    strip = [{k: v for k, v in x.items() if k != "time"} for x in got]
    assert strip == [{k: v for k, v in x.items() if k != "time"} for x in expected]
    assert got[0]["white_spec"] in (spec, "random") and spec in {g["white_spec"] for g in got} | {
        g["black_spec"] for g in got}  # the lines name the original spec, not the worker's copy


def test_shipped_directory_is_unpacked_once_under_its_hash(checkpoints, tmp_path, monkeypatch):
    """FileCache unpacks a directory archive into its temporary folder, once for every token naming it."""
    import sys
    import types

    from jiu_env.evaluation.backends import FileCache, pack_dir, unpack_dir

    data = pack_dir(str(checkpoints["algo"]))
    fake = types.SimpleNamespace(get=lambda ref: ref)  # the object ref is the bytes themselves
    monkeypatch.setitem(sys.modules, "ray", fake)
    cache = FileCache({"/a/ckpt": (data, "ckpt", "dir"), "/b/ckpt": (data, "ckpt", "dir")})
    a = cache.local_spec("rllib:/a/ckpt:module=learner")
    b = cache.local_spec("mix:0.5:rllib:/b/ckpt")
    path = a[len("rllib:"):].rpartition(":")[0]
    assert a == f"rllib:{path}:module=learner" and b == f"mix:0.5:rllib:{path}"
    assert path.startswith(cache.dir) and os.path.basename(path) == "ckpt"
    got = sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)
    want = sorted(os.path.relpath(os.path.join(d, f), checkpoints["algo"])
                  for d, _, fs in os.walk(checkpoints["algo"]) for f in fs)
    assert got == want
    cache.close()
    assert not os.path.exists(path)
    unpack_dir(data, str(tmp_path / "again"))
    assert (tmp_path / "again" / ALGO_MODULES / "learner" / "module_state.pkl").is_file()


def test_a_checkpoint_saved_again_to_the_same_directory_is_loaded_again(tmp_path):
    """The module cache is keyed on the weight files' hashes: a training run that overwrites its checkpoint is
    played with the new weights, under the new version key."""
    import torch

    path = tmp_path / "ckpt"
    torch.manual_seed(1)
    _save_module(path)
    first = make_player(f"rllib:{path}", seed=0)
    assert make_player(f"rllib:{path}", seed=0).module is first.module  # cached while the files are the same
    old_key = first.version_key()
    shutil.rmtree(path)
    torch.manual_seed(2)
    _save_module(path)
    second = make_player(f"rllib:{path}", seed=0)
    assert second.version_key() != old_key and second.module is not first.module
    new, old = second.module.state_dict(), first.module.state_dict()
    assert any(not torch.equal(new[k], old[k]) for k in new)
