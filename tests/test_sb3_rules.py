"""An sb3: model file knows the rules it was trained on: jiu eval plays it on them and refuses others."""

import json
import zipfile

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

from jiu_env import JiuVsBotEnv  # noqa: E402
from jiu_env.cli import main  # noqa: E402
from jiu_env.players import (  # noqa: E402
    make_player, rules_mismatch, sb3_file_phase, sb3_file_rules, sb3_spec_rules, whole_game_spec,
)
from jiu_env.rules import Rules  # noqa: E402
from jiu_env.sb3 import JiuPolicy, ModelPlayer, model_phase, model_rules, set_model_phase, set_model_rules  # noqa: E402

RULES6 = dict(board_size=6, fly_threshold=0, max_battle_turns=60)


def tiny_model(board_size=6, seed=0):
    env = JiuVsBotEnv(board_size=board_size, start="battle", max_battle_turns=60)
    return MaskablePPO(JiuPolicy, env, n_steps=16, batch_size=16, seed=seed, device="cpu",
                       policy_kwargs=dict(channels=4, layers=1))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("sb3rules")
    model = tiny_model()
    model.save(d / "bare.zip")  # no rules recorded: the board size is all that is known
    assert set_model_rules(model, **RULES6) == Rules.make(**RULES6).to_dict()
    model.save(d / "m6.zip")
    assert set_model_phase(model, "battle") == "battle"  # learned the battle only: whole games from random placements
    model.save(d / "battle.zip")
    set_model_phase(model, "game")
    model.save(d / "game.zip")
    return d


def test_rules_travel_in_the_zip(files):
    r = sb3_file_rules(files / "m6.zip")
    assert r == Rules.make(**RULES6)
    assert sb3_file_rules(files / "m6") == r  # ".zip" may be left out
    assert model_rules(str(files / "m6.zip")) == r
    assert model_rules(MaskablePPO.load(files / "m6.zip", device="cpu")) == r
    assert sb3_file_rules(files / "bare.zip") is None
    with zipfile.ZipFile(files / "m6.zip") as z:
        assert json.loads(z.read("data"))["jiu_rules"]["fly_threshold"] == 0


def test_set_model_rules_refuses_another_board_size():
    with pytest.raises(ValueError, match=r"6x6 board.*board_size=8"):
        set_model_rules(tiny_model(), board_size=8)


def test_unreadable_files_are_named(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="bad.zip"):
        sb3_file_rules(bad)
    with pytest.raises(FileNotFoundError, match="missing"):
        sb3_file_rules(tmp_path / "missing.zip")
    odd = tmp_path / "odd.zip"
    with zipfile.ZipFile(odd, "w") as z:
        z.writestr("data", json.dumps({"jiu_rules": {"board_size": 99}}))
    with pytest.raises(ValueError, match="odd.zip.*not valid rules"):
        sb3_file_rules(odd)


def test_rules_mismatch_ignores_only_the_turn_limit_history_and_profile_name():
    base = Rules.make(**RULES6)
    assert rules_mismatch(base, base.replace(max_battle_turns=1000, history_size=300)) == []
    diff = rules_mismatch(base, Rules.make(board_size=8, max_battle_turns=60))
    assert any(d.startswith("board_size=6 (here: 8)") for d in diff)
    assert any(d.startswith("fly_threshold=0 (here: 8)") for d in diff)


def test_model_player_refuses_a_game_of_other_rules(files):
    player = make_player(f"sb3:{files / 'm6.zip'}", seed=0)
    assert player.rules == Rules.make(**RULES6)
    ok = Rules.make(**dict(RULES6, max_battle_turns=1000)).new_state()  # another turn limit: fine
    assert 0 <= player.step(ok) < ok.size
    other = Rules.make(board_size=6, max_battle_turns=60).new_state()  # flying allowed: other rules
    with pytest.raises(ValueError, match=r"m6.zip was trained on other rules.*fly_threshold=0 \(here: 6\)"):
        player.step(other)
    bare = make_player(f"sb3:{files / 'bare.zip'}", seed=0)
    assert bare.rules is None and 0 <= bare.step(other) < other.size  # nothing recorded: only the size is checked
    with pytest.raises(ValueError, match=r"6x6 board"):
        ModelPlayer(bare.sb3_policy, rules=dict(board_size=8))


def test_sb3_spec_rules(files):
    m6 = f"sb3:{files / 'm6.zip'}"
    assert sb3_spec_rules(["random", m6]) == Rules.make(**RULES6)
    assert sb3_spec_rules(["random", f"sb3:{files / 'bare.zip'}"]) is None
    with pytest.raises(ValueError, match=r"board_size=6 \(here: 8\)"):
        sb3_spec_rules([m6], Rules.make(board_size=8).to_dict())
    # the argument as the factory takes it, stripped: a space after the ':' does not skip the check
    spaced = f"sb3: {files / 'm6.zip'}"
    assert sb3_spec_rules(["random", spaced]) == Rules.make(**RULES6)
    with pytest.raises(ValueError, match=r"board_size=6 \(here: 8\)"):
        sb3_spec_rules([spaced], Rules.make(board_size=8).to_dict())


def read_results(out):
    return json.loads((out / "results.json").read_text())


def test_jiu_eval_plays_the_model_on_its_rules_and_refuses_others(files, tmp_path, capsys):
    out = tmp_path / "default"
    rc = main(["eval", f"m=sb3:{files / 'm6.zip'}", "random", "--games", "2", "--workers", "1", "--no-progress",
               "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    rules = read_results(out)["config"]["rules"]
    assert rules["board_size"] == 6 and rules["fly_threshold"] == 0 and rules["max_battle_turns"] == 60
    rc = main(["eval", f"m=sb3:{files / 'm6.zip'}", "random", "--games", "2", "--workers", "1", "--no-progress",
               "--board-size", "8"])
    err = capsys.readouterr().err
    assert rc == 2 and "board_size=6 (here: 8)" in err and "m6.zip" in err
    # the same board with the turn limit changed is the model's game
    out2 = tmp_path / "turns"
    rc = main(["eval", f"m=sb3:{files / 'm6.zip'}", "random", "--games", "2", "--workers", "1", "--no-progress",
               "--rule", "board_size=6", "--rule", "fly_threshold=0", "--rule", "max_battle_turns=30",
               "--out", str(out2)])
    assert rc == 0, capsys.readouterr().err
    assert read_results(out2)["config"]["rules"]["max_battle_turns"] == 30


def test_a_model_without_rules_keeps_the_old_default(files, capsys):
    rc = main(["eval", f"m=sb3:{files / 'bare.zip'}", "random", "--games", "2", "--workers", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert rc != 0 and "6x6 board" in err  # the default 14x14 game, which the 6x6 model cannot play


def test_model_player_serves_the_bot_protocol_policy(files):
    """``bot.policy()`` is the PettingZoo-loop callable of every bot; the model's network must not hide it."""
    import numpy as np

    from jiu_env import kernel as K

    bot = make_player(f"sb3:{files / 'm6.zip'}")
    act = bot.policy()
    assert callable(act) and not hasattr(act, "set_training_mode")
    s = Rules.make(**RULES6).new_state()
    buf = np.empty(Rules.make(**RULES6).num_actions, np.int64)
    legal = set(buf[:K.legal_actions(s, buf)].tolist())
    assert bot.step(s) in legal
    assert isinstance(bot.sb3_policy, JiuPolicy)


# ------------------------------------------------------------ the phase a model learned
def test_the_declared_phase_survives_save_and_load(files):
    assert sb3_file_phase(files / "battle.zip") == "battle" and sb3_file_phase(files / "game") == "game"
    assert sb3_file_phase(files / "m6.zip") is None and model_phase(str(files / "bare.zip")) is None
    assert model_phase(MaskablePPO.load(files / "battle.zip", device="cpu")) == "battle"
    assert sb3_file_rules(files / "battle.zip") == Rules.make(**RULES6)  # the rules travel alongside
    with zipfile.ZipFile(files / "battle.zip") as z:
        assert json.loads(z.read("data"))["jiu_phase"] == "battle"
    with pytest.raises(ValueError, match="'battle'.*'game'.*not 'placement'"):
        set_model_phase(tiny_model(), "placement")


def test_a_bad_declared_phase_is_named(tmp_path):
    odd = tmp_path / "odd.zip"
    with zipfile.ZipFile(odd, "w") as z:
        z.writestr("data", json.dumps({"jiu_phase": "opening"}))
    with pytest.raises(ValueError, match="odd.zip.*not 'opening'"):
        sb3_file_phase(odd)


def test_a_battle_only_model_gets_random_placement(files):
    from jiu_env.bots import make_bot
    from jiu_env.bots.composite import PhasePlayer
    from jiu_env.bots.random_bot import RandomBot
    from jiu_env.game import play_game

    battle = f"sb3:{files / 'battle.zip'}"
    assert whole_game_spec(battle) == f"phases:random+{battle}"
    assert whole_game_spec(f"mix:0.5:{battle}") == f"mix:0.5:phases:random+{battle}"
    for spec in (f"sb3:{files / 'm6.zip'}", f"sb3:{files / 'game.zip'}", f"phases:greedy+{battle}", "random",
                 "sb3:missing.zip"):
        assert whole_game_spec(spec) == spec  # undeclared, whole-game, explicit phases: and missing: as given
    p = make_player(battle, seed=3)
    assert isinstance(p, PhasePlayer) and isinstance(p.placement, RandomBot) and isinstance(p.battle, ModelPlayer)
    assert isinstance(make_bot(battle), PhasePlayer)
    given = make_player(f"phases:greedy+{battle}", seed=3)  # an explicit phases: spec is used as given
    assert isinstance(given.battle, ModelPlayer) and not isinstance(given.placement, RandomBot)
    assert type(make_player(f"sb3:{files / 'm6.zip'}")) is ModelPlayer  # undeclared: plays as before
    assert type(make_player(f"sb3:{files / 'game.zip'}")) is ModelPlayer
    assert isinstance(make_player(MaskablePPO.load(files / "battle.zip", device="cpu"), seed=0), PhasePlayer)
    # seeded: the same games as the spelled-out spec
    rules = Rules.make(**RULES6)
    a = play_game(rules, make_player(battle, seed=5), "random", seed=1)
    b = play_game(rules, make_player(f"phases:random+{battle}", seed=5), "random", seed=1)
    c = play_game(rules, make_player(battle, seed=5), "random", seed=1)
    assert a.actions == b.actions == c.actions


def test_jiu_eval_says_a_battle_only_model_is_placed_at_random(files, tmp_path, capsys):
    out = tmp_path / "battle"
    rc = main(["eval", f"m=sb3:{files / 'battle.zip'}", "random", "--games", "2", "--workers", "1", "--no-progress",
               "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 0, err
    notes = [ln for ln in err.splitlines() if "battle only" in ln]
    assert len(notes) == 1 and notes[0].startswith("jiu eval: note: m: ") and "placed at random" in notes[0]
    played = f"phases:random+sb3:{files / 'battle.zip'}"
    assert played in notes[0]
    res = read_results(out)
    assert res["players"]["m"]["spec"] == played  # the results say how it played
    assert played in (out / "results.md").read_text()
    assert all(json.loads(ln)["white_spec"] in (played, "random") for ln in (out / "games.jsonl").open())
    for spec in (f"sb3:{files / 'm6.zip'}", f"phases:random+sb3:{files / 'battle.zip'}"):  # no note: as before / as given
        rc = main(["eval", f"m={spec}", "random", "--games", "2", "--workers", "1", "--no-progress",
                   "--rule", "board_size=6", "--rule", "fly_threshold=0", "--rule", "max_battle_turns=60"])
        err = capsys.readouterr().err
        assert rc == 0 and "battle only" not in err, err


def test_transfer_weights_moves_a_network_to_another_board_size(files):
    import torch

    from jiu_env.sb3 import evaluate, transfer_weights

    src = MaskablePPO.load(files / "m6.zip", device="cpu")
    dst = tiny_model(board_size=8, seed=1)  # other starting weights
    before = {k: v.clone() for k, v in dst.policy.state_dict().items()}
    moved = transfer_weights(files / "m6.zip", dst)  # a path or a model
    assert moved["parameters"] == sum(p.numel() for p in dst.policy.parameters())
    assert transfer_weights(src, dst)["tensors"] == moved["tensors"] == len(before)
    for k, v in src.policy.state_dict().items():
        assert torch.equal(dst.policy.state_dict()[k], v), k
    assert any(not torch.equal(before[k], v) for k, v in dst.policy.state_dict().items())
    assert model_rules(dst) is None  # only the network moves: the target's rules stay its own
    r = evaluate(dst, "random", n_games=2, seed=1, board_size=8, max_battle_turns=60)  # and it plays the larger board
    assert r["wins"] + r["draws"] + r["losses"] + r["undecided"] == 2 and r["forfeits"] == 0


def test_transfer_weights_refuses_another_network_and_leaves_the_target(files):
    import torch
    from stable_baselines3 import PPO

    from jiu_env.sb3 import transfer_weights

    dst = MaskablePPO(JiuPolicy, JiuVsBotEnv(board_size=8, start="battle", max_battle_turns=60), n_steps=16,
                      batch_size=16, seed=0, device="cpu", policy_kwargs=dict(channels=8, layers=1))
    before = {k: v.clone() for k, v in dst.policy.state_dict().items()}
    with pytest.raises(ValueError, match=r"channels=4 against 8"):
        transfer_weights(files / "m6.zip", dst)
    other = PPO("MlpPolicy", "CartPole-v1", device="cpu")
    with pytest.raises(ValueError, match=r"not a JiuPolicy"):
        transfer_weights(other, dst)
    assert all(torch.equal(before[k], v) for k, v in dst.policy.state_dict().items())


def test_a_model_player_from_a_spec_evaluates_on_one_torch_thread(files):
    import torch

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        make_player(f"sb3:{files / 'm6.zip'}", seed=0)  # what jiu eval builds: one game a core, one thread each
        assert torch.get_num_threads() == 1
        torch.set_num_threads(2)
        ModelPlayer.load(files / "m6.zip", threads=None)  # None leaves torch's setting
        assert torch.get_num_threads() == 2
        for bad, error in ((0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError)):
            with pytest.raises(error, match="^threads must be an int >= 1 or None, not "):
                ModelPlayer.load(files / "m6.zip", threads=bad)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)



def test_model_player_checks_its_inputs_and_snapshots_keep_its_rules():
    import numpy as np
    from gymnasium import spaces

    from jiu_env import vocab as V
    from jiu_env.envs.common import planes_space
    from jiu_env.sb3 import PolicySnapshot, SelfPlayCallback, evaluate

    pol = JiuPolicy(planes_space(6), spaces.Discrete(V.num_actions(6)), lambda _: 3e-4)
    p = ModelPlayer(pol, rules=Rules.make("competitive", board_size=6))
    with pytest.raises(ValueError, match="the mask has shape"):
        p.act(np.zeros((6, 6, 21), np.float32), [True])  # would broadcast to "every action is legal"
    with pytest.raises(ValueError, match="the observation has shape"):
        p.act(np.zeros((5, 5, 21), np.float32), np.ones(V.num_actions(6)))
    snap = PolicySnapshot(p)
    assert snap.rules == p.rules
    with pytest.raises(ValueError, match="min_stones"):
        snap.step(Rules.make("competitive", board_size=6, min_stones=2).new_state())
    pol17 = JiuPolicy(spaces.Box(0, 1, (6, 6, 17), np.float32), spaces.Discrete(V.num_actions(6)), lambda _: 3e-4)
    with pytest.raises(ValueError, match="not a Jiu model: its observations are"):
        ModelPlayer(pol17)
    for bad, error in ((0, ValueError), ("100", TypeError), (True, TypeError)):
        with pytest.raises(error, match=r"^every must be an int >= 1 \(timesteps between snapshots\), not "):
            SelfPlayCallback(every=bad)
    with pytest.raises(ValueError, match="n_games must be an int >= 1"):
        evaluate(p, "random", n_games=0, board_size=6)


def _bare_policy(seed=0, **sizes):
    import torch
    from gymnasium import spaces

    from jiu_env import vocab as V
    from jiu_env.envs.common import planes_space

    torch.manual_seed(seed)
    return JiuPolicy(planes_space(6), spaces.Discrete(V.num_actions(6)), lambda _: 3e-4,
                     **{"channels": 4, "layers": 1, **sizes})


def test_a_bare_policy_is_an_opponent_as_it_is_a_model():
    from jiu_env.sb3 import evaluate

    pol = _bare_policy()
    player = make_player(pol, seed=3)  # was a CallablePlayer that handed SB3 a kernel state
    assert isinstance(player, ModelPlayer) and player.sb3_policy is pol and not player.deterministic
    r = evaluate(tiny_model(), pol, n_games=2, board_size=6, max_battle_turns=20)
    assert r["forfeits"] == 0 and len(r["outcomes"]) == 2
    env = JiuVsBotEnv(board_size=6, start="battle", max_battle_turns=20, opponent=pol)
    env.reset(seed=0)


def test_a_bare_policy_is_an_opponent_of_the_rllib_env():
    pytest.importorskip("ray.rllib")
    from jiu_env.integrations.rllib import JiuMultiAgentEnv

    env = JiuMultiAgentEnv({"board_size": 6, "max_battle_turns": 20})
    env.set_opponent(_bare_policy())
    obs, _ = env.reset(seed=0)
    assert len(obs) == 1 and isinstance(env._bot, ModelPlayer)


def test_model_players_check_flags_and_seeds():
    from jiu_env.sb3 import PolicySnapshot, SelfPlayCallback, evaluate

    pol = _bare_policy()
    for text, flag in (("false", False), ("TRUE", True), ("0", False), (1, True)):
        assert ModelPlayer(pol, deterministic=text).deterministic is flag  # "false" played greedily
        assert PolicySnapshot(pol, deterministic=text).deterministic is flag
        assert SelfPlayCallback(at_start=text).at_start is flag
    for make in (lambda v: ModelPlayer(pol, deterministic=v), lambda v: PolicySnapshot(pol, deterministic=v),
                 lambda v: SelfPlayCallback(at_start=v),
                 lambda v: evaluate(pol, "random", n_games=1, deterministic=v, board_size=6)):
        for bad, error in (("no", ValueError), ("flase", ValueError), (2, ValueError), (0.5, TypeError),
                           ([], TypeError)):
            with pytest.raises(error, match=r"^(deterministic|at_start) must be true or false, not "):
                make(bad)
    player = ModelPlayer(pol)
    for bad, error in ((-1, ValueError), (1.5, TypeError), (True, TypeError), ("3", TypeError)):
        with pytest.raises(error, match=r"^seed must be an int >= 0 or None, not "):
            ModelPlayer(pol, seed=bad)
        with pytest.raises(error, match=r"^seed must be an int >= 0 or None, not "):
            PolicySnapshot(pol, seed=bad)
        with pytest.raises(error, match=r"^seed must be an int >= 0 or None, not "):
            player.restart(seed=bad)
        with pytest.raises(error, match=r"^seed must be an int >= 0, not "):
            evaluate(pol, "random", n_games=1, seed=bad, board_size=6)
    assert ModelPlayer(pol, seed=np.int64(4)).seed == 4


def test_evaluate_plays_the_deterministic_it_is_given_even_with_a_player():
    from jiu_env.sb3 import evaluate

    pol = _bare_policy(seed=1)
    kw = dict(n_games=4, seed=7, board_size=6, max_battle_turns=30)
    greedy = evaluate(pol, "random", deterministic=True, **kw)["outcomes"]
    sampling = ModelPlayer(pol, deterministic=False)
    assert evaluate(sampling, "random", deterministic=True, **kw)["outcomes"] == greedy  # was ignored: it sampled
    assert sampling.deterministic is False  # put back as it was built
    assert evaluate(sampling, "random", **kw)["outcomes"] == evaluate(pol, "random", deterministic=False, **kw)["outcomes"]
    assert evaluate(pol, "random", **kw)["outcomes"] == greedy  # a model plays greedily by default


def test_network_sizes_are_checked_before_anything_is_built():
    from jiu_env.envs.common import planes_space
    from jiu_env.sb3 import JiuCNN

    for sizes, error in ((dict(value_hidden=0), ValueError), (dict(value_hidden=True), TypeError),
                         (dict(value_hidden=2.5), TypeError), (dict(channels=8.9), TypeError),
                         (dict(layers=0), ValueError)):
        name = next(iter(sizes))
        with pytest.raises(error, match=f"^{name} must be an int >= 1, not "):
            _bare_policy(**sizes)
    for bad, error in ((8.9, TypeError), (True, TypeError), (0, ValueError), ("8", TypeError)):
        with pytest.raises(error, match=r"^features_dim must be an int >= 1 or None"):
            JiuCNN(planes_space(6), features_dim=bad)
    assert JiuCNN(planes_space(6), features_dim=np.int64(8)).features_dim == 8


def test_the_heads_refuse_the_features_of_another_board_size():
    import torch

    pol = _bare_policy()
    for head in (pol.action_net, pol.value_net):
        with pytest.raises(ValueError, match=r"of a 6x6 board expects \(B, 144\) features.*got \(1, 576\)"):
            head(torch.zeros(1, 4 * 12 * 12))  # view(-1, C, 6, 6) made 4 rows of it
    assert pol.action_net(torch.zeros(2, 144)).shape == (2, 361)


def test_a_model_saved_again_to_the_same_path_is_loaded_again(tmp_path):
    import torch

    path = tmp_path / "m.zip"
    first, second = tiny_model(seed=1), tiny_model(seed=2)
    first.save(path)
    a = ModelPlayer.load(path)
    assert ModelPlayer.load(path).sb3_policy is a.sb3_policy  # still cached while the file is the same
    old_key = a.version_key()
    second.save(path)
    b = ModelPlayer.load(path)
    assert b.version_key() != old_key and b.sb3_policy is not a.sb3_policy
    for name, value in second.policy.state_dict().items():  # the new file's weights, not the cached old ones
        assert torch.equal(b.sb3_policy.state_dict()[name], value)
