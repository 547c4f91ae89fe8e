"""`jiu train` refuses a bad setting before it writes or plays anything (a typo must not cost the data stage)."""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import shutil

import numpy as np
import pytest

from jiu_env import Rules
from jiu_env.learn.data import DataConfig, generate, read_manifest

torch = pytest.importorskip("torch")

from jiu_env.learn import pipeline  # noqa: E402
from jiu_env.learn.dataset import Positions, data_key, load_positions, sharpen_targets  # noqa: E402
from jiu_env.learn.train import TrainConfig  # noqa: E402

R6 = Rules.make("competitive", board_size=6)
CHEAP = ["--games", "2", "--chunk-games", "2", "--teacher", "alphabeta:depth=1,tt_bits=14"]


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    pipeline.add_arguments(p)
    return p.parse_args([str(a) for a in argv])


def run(out, *argv: str, **kw):
    args = parse(out, *argv)
    return pipeline.run_pipeline(out, pipeline.settings(args, R6), args.stage, progress=False,
                                 extra_data=args.data, placement_data=args.placement_data, **kw)


def files(root: pathlib.Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


@pytest.fixture(scope="module")
def data6(tmp_path_factory):
    out = tmp_path_factory.mktemp("d6")
    generate(out, DataConfig(teacher="alphabeta:depth=1,tt_bits=14", rules=R6.to_dict(), chunk_games=2, seed=3),
             2, progress=False)
    return out


def test_a_misspelt_teacher_or_player_writes_nothing_and_the_corrected_command_runs(tmp_path):
    cfg = DataConfig(teacher="alphabeta:depht=1", rules=R6.to_dict(), chunk_games=2)
    with pytest.raises(ValueError, match="depht"):
        generate(tmp_path / "d", cfg, 2, progress=False)
    with pytest.raises(ValueError, match="nosuchbot"):
        generate(tmp_path / "d", DataConfig(teacher="alphabeta:depth=1", rules=R6.to_dict(), chunk_games=2,
                                            players=("greedy", "nosuchbot")), 2, progress=False)
    # soft labels from a teacher that reports no root scores: refused before the manifest too
    with pytest.raises(ValueError, match="root_margin"):
        generate(tmp_path / "d", DataConfig(teacher="alphabeta:depth=1", rules=R6.to_dict(), chunk_games=2,
                                            soft=50.0), 2, progress=False)
    assert read_manifest(tmp_path / "d") is None
    good = DataConfig(teacher="alphabeta:depth=1,tt_bits=14", rules=R6.to_dict(), chunk_games=2)
    assert len(generate(tmp_path / "d", good, 2, progress=False)["chunks"]) == 1
    # and through jiu train: the run directory is not even created
    with pytest.raises(ValueError, match="depht"):
        run(tmp_path / "run", "--stage", "data", "--games", "2", "--teacher", "alphabeta:depht=1")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("flags, error, match", [
    (["--batch", "0"], ValueError, "batch must be an int in 1..65536, not 0"),
    (["--lr", "0"], ValueError, r"lr must be a number > 0 and <= 10, not 0.0"),
    (["--result-weight", "2"], ValueError, "result_weight"),
    (["--init", "missing.pt"], FileNotFoundError, "--init checkpoint missing.pt not found"),
    (["--data", "nodata"], FileNotFoundError, "--data nodata: no manifest there"),
    (["--placement-data", "nodata"], FileNotFoundError, "--placement-data nodata: no manifest there"),
])
def test_the_training_settings_are_checked_before_the_data_stage(tmp_path, flags, error, match):
    with pytest.raises(error, match=match):
        run(tmp_path / "run", *CHEAP, *flags)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("kw, match", [
    (dict(workers=0), "workers must be an int in 1..1024, not 0"),
    (dict(threads=0), "threads must be an int in 1..1024, not 0"),
    (dict(max_steps_now=0), "max_steps_now must be an int in 1..1000000000, not 0"),
    (dict(device="bogus"), "--device 'bogus' is not a torch device"),
    (dict(address="127.0.0.1:1"), "needs the ray backend"),
])
def test_run_settings_are_checked_before_anything_is_written(tmp_path, kw, match):
    with pytest.raises(ValueError, match=match):
        run(tmp_path / "run", *CHEAP, **kw)
    assert not (tmp_path / "run").exists()


def test_a_device_torch_cannot_use_here_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # a CPU-only build (the one CI installs)
    with pytest.raises(ValueError, match="--device cuda: this torch has no usable CUDA"):
        run(tmp_path / "run", *CHEAP, device="cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(ValueError, match=r"--device cuda:3: there are 1 CUDA device\(s\) here"):
        run(tmp_path / "run", *CHEAP, device="cuda:3")
    assert not (tmp_path / "run").exists()


def test_a_data_directory_given_twice_is_refused(data6, tmp_path):
    with pytest.raises(ValueError, match="given again: its positions would count twice"):
        run(tmp_path / "run", "--stage", "train", "--data", data6, "--data", data6)
    shutil.copytree(data6, tmp_path / "run" / "data")
    with pytest.raises(ValueError, match="the run's own"):
        run(tmp_path / "run", "--stage", "train", "--data", tmp_path / "run" / "data")
    with pytest.raises(ValueError, match="given twice"):
        load_positions([data6, pathlib.Path(os.path.relpath(data6))])
    with pytest.raises(ValueError, match="given twice"):
        data_key([data6, data6])
    # one directory alone is a list of one (not its path's characters)
    alone, _ = load_positions(str(data6))
    listed, _ = load_positions([data6])
    assert np.array_equal(alone.action, listed.action) and data_key(data6) == data_key([str(data6)])


def test_gate_player_template_is_checked():
    assert pipeline.gate_template("alphazero:sims=8,checkpoint={net}") == "alphazero:sims=8,checkpoint={net}"
    for bad, match in (("policy:checkpoint={net},x={y}", "no other"), ("policy", "must contain"),
                       ("policy:checkpoint={net}}", "not a template"), ("policy:checkpoint={net", "not a template")):
        with pytest.raises(ValueError, match=match):
            pipeline.gate_template(bad)


def test_gate_stage_refuses_a_bad_template_before_writing(tmp_path):
    with pytest.raises(ValueError, match="no other"):
        run(tmp_path / "run", "--stage", "gate", "--gate-player", "policy:checkpoint={net},x={y}")
    assert not (tmp_path / "run").exists()


def test_jiu_train_names_a_run_directory_that_is_a_file(tmp_path, capsys):
    from jiu_env.cli import main

    f = tmp_path / "f"
    f.write_text("x")
    assert main(["train", str(f), "--stage", "train"]) == 2
    assert "DIR" in capsys.readouterr().err and f.read_text() == "x"
    with pytest.raises(ValueError, match="is not a directory"):
        run(f, "--stage", "train")


def test_a_decision_kind_weighed_twice_is_refused():
    with pytest.raises(ValueError, match="names move more than once"):
        pipeline.settings(parse("x", "--decision-weight", "move=2", "--decision-weight", "move=3"), R6)
    s = pipeline.settings(parse("x", "--decision-weight", "move=2", "--decision-weight", "drop=3"), R6)
    assert s["train"]["decision_weight"] == {"move": 2.0, "drop": 3.0}


def test_quick_keeps_an_explicit_teacher_and_opening():
    quick = pipeline.settings(parse("x", "--quick"), R6)
    assert quick["teacher"] == pipeline.QUICK["teacher"] and quick["random_opening"] == pipeline.QUICK["random_opening"]
    assert quick["games"] == pipeline.QUICK["games"]
    mine = pipeline.settings(parse("x", "--quick", "--teacher", "greedy", "--random-opening", "0"), R6)
    assert mine["teacher"] == "greedy" and mine["random_opening"] == 0 and mine["rl"]["random_opening"] == 0
    assert mine["games"] == pipeline.QUICK["games"]  # the sizes stay the quick run's
    plain = pipeline.settings(parse("x"), R6)
    assert plain["teacher"] == pipeline.TEACHER
    assert (plain["random_opening"], plain["rl"]["random_opening"]) == (pipeline.OPENING["data"], pipeline.OPENING["rl"])


def test_dataset_helpers_refuse_bad_numbers():
    with pytest.raises(ValueError, match="lr must be a number > 0"):
        TrainConfig(lr=0.0)
    pos = Positions(np.zeros((4, 6, 6, 1), np.uint8), np.arange(4), np.zeros(4, np.int32), np.zeros(4, np.int8),
                    np.zeros(4, bool), np.arange(4))
    for share in (math.nan, -0.5, 2.0):
        with pytest.raises(ValueError, match="val_share"):
            pos.split(share)
    train, val = pos.split(0.5)
    assert len(train) == len(val) == 2
    for power in (math.inf, 0.0, math.nan):
        with pytest.raises(ValueError, match="sharpening power"):
            sharpen_targets(np.array([[0.6, 0.4]], np.float32), power)
    assert np.allclose(sharpen_targets(np.array([[0.6, 0.4], [0.0, 0.0]], np.float32), 2.0),
                       [[0.36 / 0.52, 0.16 / 0.52], [0.0, 0.0]])


def test_every_flag_says_which_stages_read_it():
    known = set(vars(parse("x"))) - {"out", "stage"}
    assert known == set(pipeline.FLAG_STAGES)  # a new flag is placed in the table
    assert all(stages <= set(pipeline.STAGES) and stages for stages in pipeline.FLAG_STAGES.values())


@pytest.mark.parametrize("argv, flag", [
    (["--stage", "selfplay", "--init", "n.pt"], "--init"),  # selfplay's network is --net
    (["--stage", "train", "--sims", "8"], "--sims"),
    (["--stage", "train", "--address", "127.0.0.1:1"], "--address"),
    (["--stage", "rl", "--teacher", "greedy"], "--teacher"),
    (["--stage", "data", "--placement-data", "d"], "--placement-data"),
    (["--stage", "gate", "--steps", "10"], "--steps"),
])
def test_a_flag_its_stage_would_ignore_is_refused(tmp_path, capsys, argv, flag):
    from jiu_env.cli import main

    assert main(["train", str(tmp_path / "run"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"jiu train: error: {flag} is read by --stage") and "it would be ignored" in err
    assert not (tmp_path / "run").exists()
    assert pipeline.stage_flag_problems(parse(tmp_path / "run", "--stage", "rl", "--init", "n.pt", "--lr", "1e-5",
                                              "--threads", "2", "--quick")) == []


TINY = [*CHEAP, "--steps", "2", "--batch", "8", "--channels", "4", "--blocks", "1", "--eval-every", "2",
        "--save-every", "2"]


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A finished run of TINY (2 games, 2 training steps of a 4x1 network), copied by each test that changes it."""
    out = tmp_path_factory.mktemp("trained") / "run"
    run(out, *TINY)
    return out


def test_more_games_on_a_trained_run_are_refused_before_they_are_played(trained_run, data6, tmp_path):
    shutil.copytree(trained_run, tmp_path / "run")
    before = files(tmp_path / "run")
    with pytest.raises(ValueError, match=r"--games 4 would add 1 chunk\(s\) to the 2 games in .*keep --games 2 here, "
                                         r"or train on more games in a new run directory"):
        run(tmp_path / "run", *TINY, "--games", "4")
    assert files(tmp_path / "run") == before  # nothing played
    run(tmp_path / "run", *TINY)  # the run itself still resumes (nothing to do)
    # a training state that would not resume with the settings or data given is refused before the data stage
    with pytest.raises(ValueError, match=r"other settings \(steps: stored 2, now 3\)"):
        run(tmp_path / "run", *TINY, "--steps", "3", "--games", "4")
    with pytest.raises(ValueError, match="other data"):
        run(tmp_path / "run", "--stage", "train", *TINY[6:], "--data", data6)
    assert files(tmp_path / "run") == before


@pytest.fixture(scope="module")
def data6_traditional(tmp_path_factory):
    out = tmp_path_factory.mktemp("d6t")
    generate(out, DataConfig(teacher="alphabeta:depth=1,tt_bits=14", chunk_games=2, seed=3,
                             rules=Rules.make("traditional", board_size=6).to_dict()), 2, progress=False)
    return out


def test_init_and_data_the_training_would_refuse_are_refused_before_the_data_stage(trained_run, data6_traditional,
                                                                                   tmp_path):
    from jiu_env.bots.network import build_net, save_checkpoint

    net = trained_run / "net" / "net.pt"
    with pytest.raises(ValueError, match=r"is a \{'channels': 4.* network, not channels=8"):
        run(tmp_path / "run", *TINY, "--channels", "8", "--init", net)
    assert not (tmp_path / "run").exists()  # no game played
    save_checkpoint(tmp_path / "trad.pt", build_net(4, 1), Rules.make("traditional", board_size=6))
    with pytest.raises(ValueError, match=r"trained under other rules than this data \(profile: the network "
                                         r"'traditional', the data 'competitive'"):
        run(tmp_path / "run", *TINY, "--init", tmp_path / "trad.pt")
    assert not (tmp_path / "run").exists()
    for flag in ("--data", "--placement-data"):
        with pytest.raises(ValueError, match=rf"{flag} {data6_traditional} was made under other rules than this run's "
                                             r"\(profile: there 'traditional', here 'competitive'"):
            run(tmp_path / "run", *TINY, flag, data6_traditional)
    assert not (tmp_path / "run").exists()
    # --stage train: the first directory's rules are the training's
    with pytest.raises(ValueError, match=rf"--data {data6_traditional} was made under other rules than "
                                         rf"{trained_run / 'data'}"):
        run(trained_run, "--stage", "train", *TINY[6:], "--data", data6_traditional)


def test_stage_train_refuses_rules_flags_other_than_its_datas(trained_run, tmp_path, capsys):
    from jiu_env.cli import main

    shutil.copytree(trained_run, tmp_path / "run")
    before = files(tmp_path / "run")
    for flags in (["--board-size", "8"], ["--rules", "traditional", "--board-size", "6"], ["--rule", "board_size=8"]):
        assert main(["train", str(tmp_path / "run"), "--stage", "train", *TINY[6:], *flags]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"jiu train: error: --stage train trains under the rules of its data, and "
                              f"{tmp_path / 'run' / 'data'} was made under other rules"), err
    assert files(tmp_path / "run") == before
    # the data's own rules, or none given (--quick's 6x6 is its default, not asked for), pass
    s = pipeline.settings(parse(tmp_path / "run", *TINY[6:]), Rules.make("competitive", board_size=8))
    pipeline.check_run(tmp_path / "run", s, "train", rules_given=False)
    with pytest.raises(ValueError, match="board_size: the data 6, asked 8"):
        pipeline.check_run(tmp_path / "run", s, "train", rules_given=True)
    given = {"rules": None, "rule": None}
    assert not pipeline.rules_flags_given(argparse.Namespace(quick=True, board_size=6, **given))
    assert pipeline.rules_flags_given(argparse.Namespace(quick=False, board_size=6, **given))
    assert pipeline.rules_flags_given(argparse.Namespace(quick=True, board_size=6, rules="competitive", rule=None))


def test_the_help_says_what_each_stage_makes_of_a_shared_flag():
    p = argparse.ArgumentParser()
    pipeline.add_arguments(p)
    helps = {a.dest: a.help for a in p._actions}
    assert "data and selfplay, k drawn from 0..K" in helps["random_opening"]
    assert "gate and rl, exactly K" in helps["random_opening"]
    assert all(f"{stage}:" in helps["games"] for stage in ("data", "selfplay", "gate"))
    assert all(what in helps["workers"] for what in ("gate games", "rl streams", "positions for train"))


def test_a_failed_game_of_the_gate_is_one_error_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    # the gate plays a tournament: a game that raises there is a GameFailed, reported as jiu eval reports it
    from jiu_env.evaluation.backends import GameFailed
    from jiu_env.learn import pipeline

    def fail(*args, **kwargs):
        raise GameFailed("game new|old|0 (new vs old) failed: ValueError: cannot play this position")

    from jiu_env.cli import main

    monkeypatch.setattr(pipeline, "run_pipeline", fail)
    assert main(["train", str(tmp_path / "run"), "--quick", "--stage", "gate"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("jiu train: error: game new|old|0 (new vs old) failed: ValueError") and "Traceback" not in err
