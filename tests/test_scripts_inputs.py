"""Bad input to the scripts (examples/, the baselines' analysis scripts, ``jiu bench`` and ``jiu warm``): an
argparse-style error naming the flag (exit code 2) before any training or measuring, never a traceback, nothing
silently ignored, and no run's results overwritten by another run.

Fast: each test parses a command line, or runs a script that stops in its argument checks.
"""

import importlib.util
import json
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
LEARNED = ROOT / "baselines" / "learned"
_MODULES = {}


def load(path, name):
    """A script as a module (once per test session)."""
    if name not in _MODULES:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # dataclasses look their module up by name
        spec.loader.exec_module(mod)
        _MODULES[name] = mod
    return _MODULES[name]


def refused(call, capsys, *words):
    """``call()`` exits with code 2 (argparse's) and its stderr holds every one of ``words``; returns stderr."""
    with pytest.raises(SystemExit) as e:
        call()
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert "Traceback" not in err
    for w in words:
        assert w in err, (w, err)
    return err


def script(path, *args, timeout=120):
    return subprocess.run([sys.executable, str(path), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def write_games(folder, games):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "games.jsonl").write_text("".join(json.dumps(g) + "\n" for g in games))
    return folder


# ------------------------------------------------------------------ examples: writing results
@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_examples_write_their_results_atomically(name):
    """No example writes a results file in place (a run stopped mid-write would leave it truncated)."""
    src = (EXAMPLES / name).read_text()
    for pattern in (r"\btorch\.save\(", r"\.write_text\(", r"open\([^)\n]*[\"']w[\"']", r"\.save\(out\b",
                    r"savefig\(path"):
        assert not re.search(pattern, src), f"{name}: {pattern}"


def test_self_play_default_out_is_not_the_shipped_baseline():
    mod = load(EXAMPLES / "self_play.py", "scripts_self_play")
    assert not mod.Args().out.startswith("baselines")


@pytest.mark.parametrize("name, files", [("train_maskable_ppo.py", ("model.zip",)),
                                         ("self_play.py", ("eval.csv", "args.json"))])
def test_sb3_examples_refuse_an_out_holding_a_previous_run(name, files, tmp_path, capsys):
    mod = load(EXAMPLES / name, "scripts_" + name[:-3])
    for f in files:
        (tmp_path / f).write_text("previous run")
    refused(lambda: mod.parse_args(["--quick", "--out", str(tmp_path)], check_out=True), capsys,
            f"--out {tmp_path}", "--overwrite")
    assert all((tmp_path / f).read_text() == "previous run" for f in files)
    mod.parse_args(["--quick", "--out", str(tmp_path / "new")], check_out=True)  # a new folder is fine
    mod.parse_args(["--quick", "--out", str(tmp_path), "--overwrite"], check_out=True)
    assert not any((tmp_path / f).exists() for f in files)  # --overwrite: this run's results only


@pytest.fixture(scope="module")
def sb3_models(tmp_path_factory):
    """Untrained MaskablePPO models of the --quick network (8 channels, 2 layers): ``m8`` (8x8 competitive rules
    recorded), ``m6`` (6x6), ``bare8`` (8x8, no rules recorded), ``wide8`` (16 channels), ``game8`` (``m8``
    declared a whole-game model); ``bad`` is not a model."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from jiu_env import JiuVsBotEnv
    from jiu_env.sb3 import JiuPolicy, set_model_phase, set_model_rules

    folder = tmp_path_factory.mktemp("models")
    paths = {}
    for name, n, channels, rules in (("m8", 8, 8, True), ("m6", 6, 8, True), ("bare8", 8, 8, False),
                                     ("wide8", 8, 16, True)):
        model = MaskablePPO(JiuPolicy, JiuVsBotEnv(board_size=n), n_steps=8, batch_size=8, device="cpu",
                            policy_kwargs=dict(channels=channels, layers=2))
        if rules:
            set_model_rules(model, "competitive", board_size=n)
        paths[name] = folder / f"{name}.zip"
        model.save(paths[name])
    model = MaskablePPO.load(paths["m8"], device="cpu")
    set_model_phase(model, "game")
    paths["game8"] = folder / "game8.zip"
    model.save(paths["game8"])
    paths["bad"] = folder / "bad.zip"
    paths["bad"].write_text("not a model")
    return paths


@pytest.mark.parametrize("name", ["train_maskable_ppo.py", "self_play.py"])
def test_overwrite_never_deletes_the_model_a_run_starts_from(name, sb3_models, tmp_path, capsys):
    mod = load(EXAMPLES / name, "scripts_" + name[:-3])
    (tmp_path / "model.zip").write_bytes(sb3_models["m8"].read_bytes())
    refused(lambda: mod.parse_args(["--quick", "--init", str(tmp_path / "model.zip"), "--out", str(tmp_path),
                                    "--overwrite"], check_out=True), capsys, "--init", "would replace")
    assert (tmp_path / "model.zip").read_bytes() == sb3_models["m8"].read_bytes()


@pytest.mark.parametrize("name", ["train_maskable_ppo.py", "self_play.py"])
def test_sb3_init_is_loaded_and_checked_before_the_run_starts(name, sb3_models, tmp_path, capsys):
    """An --init of other rules, not a model, (self_play) of another board, (train_maskable_ppo) of another
    network: an argument error naming --init, nothing written."""
    mod = load(EXAMPLES / name, "scripts_" + name[:-3])
    out = tmp_path / "run"
    cases = [(["--init", sb3_models["m8"], "--rules", "ludii8"], ("--init", "--rules ludii8", "fly_threshold=8")),
             (["--init", sb3_models["bad"]], ("--init", "not a readable MaskablePPO model"))]
    if name == "self_play.py":
        cases.append((["--init", sb3_models["m6"]], ("--init", "6x6", "--board-size 8")))
    else:
        cases.append((["--init", sb3_models["wide8"]], ("--init", "--channels 16 (here: 8)")))
    for argv, words in cases:
        refused(lambda: mod.parse_args(["--quick", *map(str, argv), "--out", str(out)], check_out=True), capsys,
                *words)  # main's first step
        assert not out.exists()
    # a model of these rules: of this board, any board with train_maskable_ppo's board-size curriculum
    assert mod.parse_args(["--quick", "--init", str(sb3_models["m8"])]).init == str(sb3_models["m8"])
    assert mod.parse_args(["--quick", "--init", str(sb3_models["bare8"])]).init  # records no rules: board only
    if name == "train_maskable_ppo.py":
        assert mod.parse_args(["--quick", "--init", str(sb3_models["m6"])]).board_size == 8


@pytest.mark.parametrize("init", ["", "m8", "bare8"])
def test_self_play_records_the_runs_rules_in_its_model(init, sb3_models):
    from stable_baselines3.common.env_util import make_vec_env

    from jiu_env import JiuSelfPlayEnv, Rules
    from jiu_env.sb3 import model_phase, model_rules

    mod = load(EXAMPLES / "self_play.py", "scripts_self_play")
    args = mod.parse_args(["--quick", "--init", str(sb3_models[init]) if init else ""])
    venv = make_vec_env(JiuSelfPlayEnv, n_envs=1, env_kwargs=dict(board_size=8, max_battle_turns=60))
    model = mod.build_model(args, venv)
    assert model_rules(model) == Rules.make("competitive", board_size=8, max_battle_turns=60)  # the run's limit
    assert model_phase(model) == "battle"
    venv.close()


def test_more_battles_keep_a_whole_game_models_phase(sb3_models):
    """A whole-game --init trained on battles only stays a whole-game model (declared "battle", jiu eval would
    place its stones at random and drop the placement it learnt); a battle model's run on whole games is one."""
    from jiu_env.sb3 import run_phase

    for init, start, phase in (("game8", "battle", "game"), ("m8", "battle", "battle"), ("", "battle", "battle"),
                               ("m8", "placement", "game"), ("game8", "placement", "game")):
        assert run_phase(start, str(sb3_models[init]) if init else "") == phase, (init, start)


@pytest.mark.parametrize("argv, words", [
    (["--quick", "--promote-at", "x"], "--promote-at"),
    (["--start", "foo"], "argument --start"),
    (["--vec-env", "foo"], "argument --vec-env"),
    (["--adjudicate", "foo"], "argument --adjudicate"),
    (["--quick", "--eval-games", "0"], "--eval-games 0"),
    (["--quick", "--curriculum", "random,gredy", "--promote-at", "0.5"], "--curriculum"),
    (["--board-size", "2"], "--board-size"),
    (["--init", "no/such.zip"], "--init no/such.zip: no such model file"),
    (["--keep-old", "1.0"], "--keep-old 1.0"),
    (["--keep-old", "0.95"], "--keep-old 0.95"),  # rounds to 8 eighths: the current stage never played
    (["--keep-old", "0.01"], "--keep-old 0.01"),  # rounds to 0 eighths (was played as 1/8)
    (["--quick", "--batch-size", "1"], "--batch-size 1"),
    (["--quick", "--n-envs", "1", "--n-steps", "1"], "--n-steps 1 x --n-envs 1"),
    (["--quick", "--n-envs", "1", "--n-steps", "65", "--batch-size", "64"], "a last minibatch of one step"),
    (["--quick", "--seed", "-1"], "--seed -1"),
])
def test_train_maskable_ppo_bad_flags(argv, words, capsys):
    mod = load(EXAMPLES / "train_maskable_ppo.py", "scripts_train_maskable_ppo")
    refused(lambda: mod.parse_args(argv), capsys, words)


def test_train_maskable_ppo_keep_old_in_eighths():
    mod = load(EXAMPLES / "train_maskable_ppo.py", "scripts_train_maskable_ppo")
    for share in (0.0, 0.125, 0.3, 0.875):
        assert mod.parse_args(["--quick", "--keep-old", str(share)]).keep_old == share
    assert "eighths" in mod.HELP["keep_old"]


def test_train_maskable_ppo_quick_promotes_at_once_for_any_curriculum():
    mod = load(EXAMPLES / "train_maskable_ppo.py", "scripts_train_maskable_ppo")
    assert mod.parse_args(["--quick", "--curriculum", "random"]).promote_at == ""
    assert mod.parse_args(["--quick"]).promote_at == "0.0,0.0"


def test_train_maskable_ppo_default_thresholds_fit_any_curriculum():
    """Without --promote-at a curriculum of any length runs (as before the check), with the default thresholds."""
    mod = load(EXAMPLES / "train_maskable_ppo.py", "scripts_train_maskable_ppo")
    assert mod.parse_args([]).promote_at == "0.7,0.5"
    assert mod.parse_args(["--curriculum", "greedy"]).promote_at == ""
    assert mod.parse_args(["--curriculum", "random,greedy"]).promote_at == "0.7"
    assert mod.parse_args(["--curriculum", "random,greedy,pattern,greedy"]).promote_at == "0.7,0.5,0.5"


@pytest.mark.parametrize("argv, words", [
    (["--latest-prob", "nan"], "--latest-prob nan"),
    (["--eval-games", "0"], "--eval-games 0"),
    (["--vec-env", "foo"], "argument --vec-env"),
    (["--start", "foo"], "argument --start"),
    (["--quick", "--ladder", "random,nosuch"], "--ladder"),
    (["--quick", "--batch-size", "1"], "--batch-size 1"),
    (["--quick", "--n-envs", "1", "--n-steps", "1"], "--n-steps 1 x --n-envs 1"),
    (["--quick", "--n-envs", "1", "--n-steps", "65", "--batch-size", "64"], "a last minibatch of one step"),
    (["--quick", "--seed", "-1"], "--seed -1"),
])
def test_self_play_bad_flags(argv, words, capsys):
    mod = load(EXAMPLES / "self_play.py", "scripts_self_play")
    refused(lambda: mod.parse_args(argv), capsys, words)


# ------------------------------------------------------------------ examples: tianshou
@pytest.fixture(scope="module")
def tianshou_ppo():
    pytest.importorskip("tianshou")
    return load(EXAMPLES / "tianshou_ppo.py", "scripts_tianshou_ppo")


@pytest.fixture(scope="module")
def tianshou_dqn():
    pytest.importorskip("tianshou")
    return load(EXAMPLES / "tianshou_dqn.py", "scripts_tianshou_dqn")


@pytest.mark.parametrize("argv, words", [
    (["--train-batch", "0"], "--train-batch 0"),
    (["--adjudicate", "foo"], "argument --adjudicate"),
    (["--board-size", "2"], "--board-size"),
    (["--lr", "nan"], "--lr nan"),
    (["--opponents", ","], "--opponents"),
    (["--quick", "--eval-bots", "random,gredy"], "--eval-bots"),
    (["--capture-reward=-inf"], "--capture-reward -inf: must be a finite number"),
    (["--keep-prev", "1"], "--keep-prev 1.0: must be < 1"),
    (["--train-batch", "100", "--minibatch", "101"], "--minibatch 101: must be at most --train-batch 100"),
])
def test_tianshou_ppo_bad_flags(tianshou_ppo, argv, words, capsys):
    refused(lambda: tianshou_ppo.parse_args(argv), capsys, words)


@pytest.mark.parametrize("argv, words", [
    (["--eval-games", "0"], "--eval-games 0"),
    (["--adjudicate", "foo"], "argument --adjudicate"),
    (["--start", "foo"], "argument --start"),
    (["--eps-start", "2"], "--eps-start"),
    (["--capture-reward", "inf"], "--capture-reward inf: must be a finite number"),
    (["--keep-prev", "1"], "--keep-prev 1.0: must be < 1"),
])
def test_tianshou_dqn_bad_flags(tianshou_dqn, argv, words, capsys):
    refused(lambda: tianshou_dqn.parse_args(argv), capsys, words)


def test_tianshou_dqn_quick_keeps_the_flags_given(tianshou_dqn):
    a = tianshou_dqn.parse_args(["--quick", "--board-size", "8", "--eval-games", "40"])  # given at their defaults
    assert (a.board_size, a.eval_games) == (8, 40)
    assert tianshou_dqn.parse_args(["--quick", "--board", "8"]).board_size == 8  # an abbreviation is given too
    assert tianshou_dqn.parse_args(["--quick"]).board_size == 6


@pytest.mark.parametrize("which", ["tianshou_ppo", "tianshou_dqn"])
def test_tianshou_resume_without_a_checkpoint_is_an_argument_error(which, request, tmp_path, capsys):
    mod = request.getfixturevalue(which)
    out = tmp_path / "none"
    refused(lambda: mod.main(["--quick", "--resume", "--out", str(out)]), capsys, "--resume", "checkpoint.pt")
    assert not out.exists()  # nothing written (no command.txt) by a run that does not start


@pytest.mark.parametrize("which", ["tianshou_ppo", "tianshou_dqn"])
def test_tianshou_new_run_refuses_an_out_with_a_checkpoint(which, request, tmp_path, capsys):
    import torch

    mod = request.getfixturevalue(which)
    ckpt = tmp_path / "checkpoint.pt"
    ckpt.write_bytes(b"a previous run's checkpoint")
    refused(lambda: mod.main(["--quick", "--out", str(tmp_path)]), capsys, "holds a previous run", "--resume")
    assert ckpt.read_bytes() == b"a previous run's checkpoint"
    if which == "tianshou_ppo":  # the train() API refuses too
        with pytest.raises(FileExistsError):
            mod.train(mod.parse_args(["--quick", "--out", str(tmp_path)]))
    # --resume of a checkpoint of another network is refused, naming the flag that differs
    a = mod.parse_args(["--quick"])
    config = dict(board_size=a.board_size, channels=a.channels + 1, layers=a.layers,
                  max_battle_turns=a.max_battle_turns)
    if which == "tianshou_ppo":
        config.update(rules="competitive", value_hidden=a.value_hidden)
    torch.save({"config": config}, ckpt)
    refused(lambda: mod.main(["--quick", "--resume", "--out", str(tmp_path)]), capsys, "--channels")


@pytest.mark.parametrize("which", ["tianshou_ppo", "tianshou_dqn"])
def test_tianshou_resume_keeps_the_runs_curriculum(which, request, tmp_path, capsys):
    """A resume with other --opponents (shorter: the rung would be past its end; as long: silently another
    curriculum) is refused naming --opponents, by main and by train."""
    import dataclasses

    import torch

    mod = request.getfixturevalue(which)
    a = mod.parse_args(["--quick", "--opponents", "random,greedy", "--out", str(tmp_path)])
    config = dict(board_size=a.board_size, channels=a.channels, layers=a.layers, max_battle_turns=a.max_battle_turns)
    if which == "tianshou_ppo":
        config.update(rules="competitive", value_hidden=a.value_hidden)
        data = dict(config=config, args=dataclasses.asdict(a), state=dict(rung=1))
    else:
        data = dict(config=config, args=dataclasses.asdict(a), counters=dict(stage=1))
    torch.save(data, tmp_path / "checkpoint.pt")
    for other in ("random", "greedy,random"):
        argv = ["--quick", "--resume", "--opponents", other, "--out", str(tmp_path)]
        refused(lambda: mod.main(argv), capsys, "--opponents", "'random,greedy'", "keeps its curriculum")
        with pytest.raises(ValueError, match="--opponents"):
            mod.train(mod.parse_args(argv))
    assert mod.out_problem(mod.parse_args(["--quick", "--resume", "--opponents", "random, greedy",
                                           "--out", str(tmp_path)])) is None
    assert not (tmp_path / "command.txt").exists()


def test_tianshou_dqn_train_refuses_a_resume_without_a_checkpoint(tianshou_dqn, tmp_path):
    with pytest.raises(FileNotFoundError, match="checkpoint.pt"):
        tianshou_dqn.train(tianshou_dqn.parse_args(["--quick", "--resume", "--out", str(tmp_path / "none")]))


def test_tianshou_ppo_resume_adds_its_command_line(tianshou_ppo, tmp_path):
    tianshou_ppo.write_command(str(tmp_path), append=False)
    tianshou_ppo.write_command(str(tmp_path), append=True)
    assert len((tmp_path / "command.txt").read_text().splitlines()) == 2
    tianshou_ppo.write_command(str(tmp_path), append=False)  # a new run's replaces the file
    assert len((tmp_path / "command.txt").read_text().splitlines()) == 1


# ------------------------------------------------------------------ examples: rllib
def rllib_ppo():
    return load(EXAMPLES / "rllib_ppo.py", "scripts_rllib_ppo")


@pytest.mark.parametrize("argv, words", [
    (["--opponents", ","], "--opponents"),
    (["--adjudicate", "foo"], "argument --adjudicate"),
    (["--self-play", "2"], "--self-play"),
    (["--board-size", "2"], "--board-size"),
    (["--capture-reward", "inf"], "--capture-reward inf: must be a finite number"),
    (["--keep-prev", "1"], "--keep-prev 1.0: must be < 1"),
    (["--train-batch", "100", "--minibatch", "500"], "--minibatch 500: must be at most --train-batch 100"),
    (["--quick", "--train-batch", "32"], "--minibatch 64: must be at most --train-batch 32"),  # QUICK's minibatch
])
def test_rllib_ppo_bad_flags(argv, words, capsys):
    mod = rllib_ppo()
    refused(lambda: mod.parse_args(argv), capsys, words)


def test_rllib_ppo_checks_out_before_ray_starts(tmp_path, capsys):
    mod = rllib_ppo()
    out = tmp_path / "none"
    refused(lambda: mod.main(["--quick", "--resume", "--out", str(out)]), capsys, "--resume", "state.json")
    assert not out.exists()  # no command.txt from a resume that cannot start
    (tmp_path / "state.json").write_text("{}")
    refused(lambda: mod.main(["--quick", "--out", str(tmp_path)]), capsys, "holds a previous run", "--resume")
    assert (tmp_path / "state.json").read_text() == "{}"
    mod.write_command(str(tmp_path), append=False)
    mod.write_command(str(tmp_path), append=True)  # a resumed run adds its line
    assert len((tmp_path / "command.txt").read_text().splitlines()) == 2


def test_rllib_ppo_resume_keeps_the_runs_curriculum(tmp_path, capsys):
    import dataclasses

    mod = rllib_ppo()
    a = mod.parse_args(["--quick", "--opponents", "random,greedy", "--out", str(tmp_path)])
    (tmp_path / "checkpoint").mkdir()
    (tmp_path / "state.json").write_text(json.dumps(dict(rung=1, args=dataclasses.asdict(a))))
    for other in ("random", "greedy,random"):
        argv = ["--quick", "--resume", "--opponents", other, "--out", str(tmp_path)]
        refused(lambda: mod.main(argv), capsys, "--opponents", "'random,greedy'", "keeps its curriculum")
        if importlib.util.find_spec("ray"):
            with pytest.raises(ValueError, match="--opponents"):
                mod.train(mod.parse_args(argv))  # before Ray starts
    assert mod.out_problem(mod.parse_args(["--quick", "--resume", "--opponents", "random,greedy",
                                           "--out", str(tmp_path)])) is None
    assert not (tmp_path / "command.txt").exists()


def rllib_self_play():
    return load(EXAMPLES / "rllib_self_play.py", "scripts_rllib_self_play")


@pytest.mark.parametrize("argv, words", [
    (["--train-batch", "100", "--minibatch", "500"], "--minibatch 500: must be at most --train-batch 100"),
    (["--quick", "--train-batch", "32"], "--minibatch 64: must be at most --train-batch 32"),
])
def test_rllib_self_play_bad_flags(argv, words, tmp_path, capsys):
    mod = rllib_self_play()
    refused(lambda: mod.parse_args([*argv, "--checkpoint", str(tmp_path / "ckpt")]), capsys, words)  # before Ray


def test_rllib_self_play_refuses_a_previous_checkpoint(tmp_path, capsys):
    """Never overwritten without --overwrite (checked before Ray starts); --overwrite replaces only a checkpoint."""
    mod = rllib_self_play()
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    assert mod.parse_args(["--quick", "--checkpoint", str(ckpt)]).checkpoint == str(ckpt)  # empty: fine
    (ckpt / "rllib_checkpoint.json").write_text("{}")
    refused(lambda: mod.parse_args(["--quick", "--checkpoint", str(ckpt)]), capsys, f"--checkpoint {ckpt}",
            "--overwrite")
    assert (ckpt / "rllib_checkpoint.json").read_text() == "{}"
    assert mod.parse_args(["--quick", "--checkpoint", str(ckpt), "--overwrite"]).overwrite
    other = tmp_path / "notes"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    refused(lambda: mod.parse_args(["--quick", "--checkpoint", str(other), "--overwrite"]), capsys,
            f"--checkpoint {other}", "not an RLlib checkpoint")
    refused(lambda: mod.parse_args(["--quick", "--checkpoint", str(other / "notes.txt")]), capsys, "not a folder")
    assert (other / "notes.txt").read_text() == "mine"


def test_rllib_self_play_replaces_a_checkpoint_whole(tmp_path):
    """--overwrite: the new checkpoint is saved beside the old one, then takes its place (no file of the old one
    left in it, nothing left beside it)."""
    mod = rllib_self_play()

    class Algo:  # what save() uses of an RLlib Algorithm
        def __init__(self, tag):
            self.tag = tag

        def save(self, path):
            pathlib.Path(path, "rllib_checkpoint.json").write_text(self.tag)

    ckpt = tmp_path / "ckpt"
    assert mod.save(Algo("first"), str(ckpt)) == str(ckpt)
    (ckpt / "league_9").mkdir()  # a file of the first run only
    mod.save(Algo("second"), str(ckpt))
    assert sorted(p.name for p in ckpt.iterdir()) == ["rllib_checkpoint.json"]
    assert (ckpt / "rllib_checkpoint.json").read_text() == "second"
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt"]


def test_rllib_self_play_quick_keeps_the_flags_given(tmp_path):
    mod = rllib_self_play()
    ckpt = ["--checkpoint", str(tmp_path / "ckpt")]  # not the default, which a run of the example may hold
    a = mod.parse_args(["--quick", "--board-size", "8", "--eval-games", "20", *ckpt])
    assert (a.board_size, a.eval_games) == (8, 20)
    assert mod.parse_args(["--quick", *ckpt]).board_size == 6


# ------------------------------------------------------------------ examples: alphazero, demo, play
def alphazero():
    pytest.importorskip("torch")
    return load(EXAMPLES / "alphazero.py", "scripts_alphazero")


@pytest.mark.parametrize("argv, words", [
    (["--phase", "foo"], "argument --phase"),
    (["--eval-parallel", "0"], "--eval-parallel 0"),
    (["--board-size", "3"], "--board-size"),
])
def test_alphazero_bad_flags(argv, words, capsys):
    mod = alphazero()
    refused(lambda: mod.parse_args(argv), capsys, words)


def test_alphazero_quick_keeps_the_flags_given():
    mod = alphazero()
    assert mod.parse_args(["--quick", "--board", "8"]).board_size == 8  # an abbreviation
    assert mod.parse_args(["--quick", "--eval-games=3"]).eval_games == 3
    assert mod.parse_args(["--quick"]).board_size == 6


def test_alphazero_evaluate_checks_the_checkpoint_and_its_rules(tmp_path, capsys):
    mod = alphazero()
    refused(lambda: mod.main(["--evaluate", str(tmp_path / "missing.pt")]), capsys, "--evaluate", "missing.pt")
    shipped = ROOT / "jiu_env" / "data" / "alphazero_jiu8.pt"  # an 8x8 competitive checkpoint
    refused(lambda: mod.main(["--evaluate", str(shipped), "--board-size", "6"]), capsys, "--board-size 6", "8")
    refused(lambda: mod.main(["--evaluate", str(shipped), "--profile", "traditional"]), capsys, "--profile")


def test_alphazero_refuses_a_previous_runs_checkpoint(tmp_path, capsys):
    mod = alphazero()
    ckpt = tmp_path / "q.pt"
    ckpt.write_bytes(b"a previous run")
    refused(lambda: mod.main(["--quick", "--checkpoint", str(ckpt)]), capsys, "--checkpoint", "--overwrite")
    assert ckpt.read_bytes() == b"a previous run"
    refused(lambda: mod.main(["--quick", "--init", str(tmp_path / "none.pt")]), capsys, "--init")


@pytest.mark.parametrize("argv, words", [(["--board-size", "3"], "--board-size 3"), (["--seed", "-1"], "--seed -1")])
def test_demo_game_bad_flags(argv, words, capsys):
    mod = load(EXAMPLES / "demo_game.py", "scripts_demo_game")
    refused(lambda: mod.main(argv), capsys, words)


@pytest.mark.parametrize("argv, words", [
    (["--watch", "nosuch"], "--watch nosuch"),
    (["--watch", "random", "--games", "-2"], "--games -2"),
    (["--games", "3"], "--games applies to --watch only"),
])
def test_play_against_model_bad_flags(argv, words, capsys):
    mod = load(EXAMPLES / "play_against_model.py", "scripts_play_against_model")
    refused(lambda: mod.main(argv), capsys, words)


# ------------------------------------------------------------------ baselines' scripts
def test_harvest_keeps_the_previous_harvest_until_the_new_one_is_whole(tmp_path):
    harvest = LEARNED / "jiu14-g12-experiment" / "harvest.py"
    out = tmp_path / "out"
    out.mkdir()
    (out / "chunk-00000.npz").write_text("old chunk")
    (out / "manifest.json").write_text("{}")
    (out / "notes.txt").write_text("kept")
    empty = write_games(tmp_path / "empty", [])
    r = script(harvest, out, empty, tmp_path / "typo")  # a misspelt input folder
    assert r.returncode == 2 and "typo" in r.stderr and "Traceback" not in r.stderr
    assert (out / "chunk-00000.npz").read_text() == "old chunk" and (out / "manifest.json").read_text() == "{}"
    r = script(harvest, out, f"{empty}:x")
    assert r.returncode == 2 and "whole number" in r.stderr
    r = script(harvest, out, empty)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "notes.txt"]  # the old chunk went with it
    assert json.loads((out / "manifest.json").read_text())["chunks"] == {}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary folder left


def gauntlet_games():
    """NAME "p" against two players, game numbers restarting per pair (as in a gauntlet's games.jsonl)."""
    out = []
    for other, score in (("a", 1.0), ("b", 0.0)):
        for k in range(3):
            out.append({"id": f"p|{other}|{k}", "pair": ["p", other], "game": k, "white": "p", "black": other,
                        "seed": 100 + k, "score_white": score, "record": {}})
    return out


def test_paired_refuses_a_gauntlet_without_opponent(tmp_path, capsys):
    paired = load(LEARNED / "jiu14-soft1-experiment" / "paired.py", "scripts_paired")
    folder = write_games(tmp_path / "g", gauntlet_games())
    with pytest.raises(ValueError, match="OPPONENT"):
        paired.scores(folder, "p")
    assert len(paired.scores(folder, "p", "a")) == 3
    refused(lambda: paired.main(["p", str(folder), str(folder)]), capsys, "OPPONENT")
    refused(lambda: paired.main(["p", str(folder), str(tmp_path / "missing")]), capsys, "missing")


def test_regret_arguments(tmp_path, capsys):
    regret = load(LEARNED / "jiu14-g9-experiment" / "regret.py", "scripts_regret")
    folder = write_games(tmp_path / "g", gauntlet_games())
    spec = "alphabeta:depth=1,root_margin=300"
    refused(lambda: regret.main([]), capsys, "required")
    refused(lambda: regret.main(["--decisions", "foo", str(folder), "2", "1", "0", spec, "r=random"]), capsys,
            "--decisions")
    refused(lambda: regret.main(["--player", "q", str(folder), "2", "1", "0", spec, "r=random"]), capsys,
            "not q's", "--player")
    refused(lambda: regret.main([str(folder), "2", "1", "0", spec, "random"]), capsys, "NAME=SPEC")


def test_lead_arguments(tmp_path, capsys):
    lead = load(LEARNED / "jiu14-g7" / "lead.py", "scripts_lead")
    folder = write_games(tmp_path / "g", gauntlet_games())
    refused(lambda: lead.main([str(folder), "p", "x"]), capsys, "invalid int value")
    refused(lambda: lead.main([str(folder), "nosuch"]), capsys, "no game of nosuch")


def test_endgame_takes_the_player_name(tmp_path):
    endgame = LEARNED / "jiu14-g8-experiment" / "endgame.py"
    folder = write_games(tmp_path / "g", gauntlet_games())
    net = ROOT / "jiu_env" / "data" / "policy_jiu14.pt"
    r = script(endgame, folder, net, 0, 2, "q")
    assert r.returncode == 2 and "not q's" in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------ jiu bench, jiu warm
def test_bench_games_without_a_games_section_is_an_error(tmp_path, capsys):
    from jiu_env.cli import main

    assert main(["bench", "--quick", "--only", "kernel", "--games", "3", "--out", str(tmp_path / "b")]) == 2
    out, err = capsys.readouterr()
    assert "jiu bench: error: --games 3" in err and "batched" in err and "[kernel]" not in out
    assert not (tmp_path / "b").exists()


def test_bench_records_the_command_as_given(tmp_path, monkeypatch, capsys):
    from jiu_env import benchmark
    from jiu_env.cli import main

    real = benchmark.run_benchmarks
    seen = {}

    def measure_nothing(sections, quick=False, games=64, echo=True, note=""):
        seen.update(sections=list(sections), games=games)
        return real([], quick=quick, games=games, echo=False, note=note)

    monkeypatch.setattr(benchmark, "run_benchmarks", measure_nothing)
    out = tmp_path / "b"
    assert main(["bench", "--quick", "--only", "batched", "--games", "3", "--note", "a b", "--out", str(out)]) == 0
    assert seen == {"sections": ["batched"], "games": 3}
    command = json.loads((out / "results.json").read_text())["command"]
    assert command == f"jiu bench --quick --only batched --games 3 --out {out} --note 'a b'"
    assert main(["bench", "--quick", "--out", str(out)]) == 0 and seen["games"] == benchmark.DEFAULT_GAMES


def test_warm_fails_when_every_bot_was_skipped_everywhere(monkeypatch, capsys):
    from jiu_env import warmup
    from jiu_env.cli import main

    def skip_all(bots=None, board_sizes=(8,), rules="competitive", note=None, envs=True, workers=1):
        rep = warmup.WarmupReport(bots=list(bots), board_sizes=list(board_sizes))
        for spec in bots:
            for n in board_sizes:
                rep.skipped[f"{spec} on {n}x{n}"] = "ValueError: a network of another board size"
        return rep

    monkeypatch.setattr(warmup, "warm_up", skip_all)
    assert main(["warm", "random", "--board-size", "6", "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert "jiu warm: error:" in err and "6x6" in err and "nothing" in err


def test_warm_rules_error_names_the_flag(capsys):
    from jiu_env.cli import main

    assert main(["warm", "--rules", "nosuch"]) == 2
    assert "jiu warm: error: --rules: unknown rules profile 'nosuch'" in capsys.readouterr().err
