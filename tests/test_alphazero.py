"""The AlphaZero-style agent: PUCT search, network layout, checkpoints, bot, training example."""

import importlib.util
import json
import pathlib

import numpy as np
import pytest

from jiu_env import kernel as K
from jiu_env import symmetry as S
from jiu_env.bots.alphazero import PUCT, pick_action, terminal_value
from jiu_env.bots.search_tree import T_VISITS
from jiu_env.state import position_state
from jiu_env.notation import str_to_action
from jiu_env.observation import NUM_PLANES, write_observation
from jiu_env.rules import Rules

from conftest import board_from_text

ROOT = pathlib.Path(__file__).resolve().parents[1]


def legal(state):
    buf = np.empty(10 * int(state[K.H_P]) + 1, np.int64)
    return buf[:K.legal_actions(state, buf)].copy()


def uniform(obs):
    """An evaluator knowing nothing: equal logits, value 0."""
    n = obs.shape[1]
    return np.zeros((len(obs), 10 * n * n + 1), np.float32), np.zeros(len(obs), np.float32)


def search_one(state, sims, evaluate=uniform):
    n = int(state[K.H_N])
    return PUCT(evaluate, n, state.size, 1, sims).search([state])[0]


# ------------------------------------------------------------------ search
PLAIN = dict(fly_threshold=0, single_jump_ban="none")


@pytest.mark.parametrize("text,win", [
    # a jump that leaves White 3 stones (< min_stones) wins at once
    ("""o.o..
        ....x
        .x..x
        .o...
        x...o""", "c1xe1"),
    # a step completing a square, then the square capture (Black decides twice) wins
    ("""o.o.o
        .....
        xx...
        x....
        .x..o""", "e1-d1"),
])
def test_search_finds_the_winning_move(text, win):
    rules = Rules.make("competitive", board_size=5, **PLAIN)
    s = position_state(rules, board_from_text(text), "black")
    acts, visits, value = search_one(s, 200)
    assert sorted(acts.tolist()) == sorted(legal(s).tolist())
    assert visits.sum() == 200
    assert acts[np.argmax(visits)] == str_to_action(win, 5)
    assert value > 0.5  # the root value is the mover's (Black's) point of view


def test_search_avoids_a_losing_move():
    """White to move: b0-b1 and e2-e3 let Black jump White below 4 stones; search avoids them."""
    rules = Rules.make("competitive", board_size=5, **PLAIN)
    s = position_state(rules, board_from_text("""
        ..o..
        o...x
        .x...
        ....x
        o.o.x"""), "white")
    acts, visits, _ = search_one(s, 300)
    bad = []  # every White move after which Black wins at once, by brute force
    for a in legal(s):
        t = s.copy()
        K.apply_action(t, int(a))
        for b in legal(t):
            u = t.copy()
            K.apply_action(u, int(b))
            if u[K.H_WINNER] == K.BLACK:
                bad.append(int(a))
                break
    assert sorted(bad) == sorted(str_to_action(x, 5) for x in ("b0-b1", "e2-e3"))
    assert int(acts[np.argmax(visits)]) not in bad
    for a in bad:
        assert visits[list(acts).index(a)] < visits.max() / 2


def test_terminal_value_and_adjudication():
    rules = Rules.make("competitive", board_size=5, **PLAIN)
    s = position_state(rules, board_from_text("""
        ooooo
        o....
        .....
        ...xx
        ...xx"""), "black")
    assert terminal_value(s, 0, 4.0) == (False, 0.0)
    s[K.H_TURNS] = 10
    assert terminal_value(s, 10, 4.0) == (True, 0.5)  # 6 white - 4 black stones, margin 4
    assert terminal_value(s, 10, 1.0) == (True, 1.0)
    assert terminal_value(s, 11, 4.0) == (False, 0.0)
    s[K.H_PHASE], s[K.H_WINNER] = K.PH_OVER, K.BLACK
    assert terminal_value(s, 0, 4.0) == (True, -1.0)


def test_judge_battle():
    from jiu_env.bots.alphazero import judge_battle, node_value

    rules = Rules.make("competitive", board_size=6)
    strong = position_state(rules, board_from_text("""
        oooooo
        oooooo
        oo....
        ......
        ....xx
        ....xx"""), "black")
    v = judge_battle(strong, 20, 4.0, 3)
    assert v == judge_battle(strong, 20, 4.0, 3)  # seeded by the position
    assert 0.5 < v <= 1.0
    assert node_value(strong, 0, 4.0, 20, 3) == (True, v)
    assert node_value(strong, 0, 4.0, 0, 3) == (False, 0.0)
    s = rules.new_state()
    assert node_value(s, 0, 4.0, 20, 3) == (False, 0.0)  # placement nodes are searched on


def test_dirichlet_noise_and_many_trees():
    rules = Rules.make("competitive", board_size=6)
    states = []
    for k in range(3):
        s = rules.new_state()
        K.random_placement(s, k)
        states.append(s)
    states.append(rules.new_state())
    search = PUCT(uniform, 6, states[0].size, 5, 16)
    out = search.search(states, np.random.default_rng(0), 0.3, 0.25)
    assert len(out) == 4
    for s, (acts, visits, _) in zip(states, out):
        assert sorted(acts.tolist()) == sorted(legal(s).tolist()) and visits.sum() == 16
    pri = search.root_priors(0)
    assert abs(pri.sum() - 1) < 1e-9 and pri.std() > 0  # uniform priors were mixed with noise
    with pytest.raises(ValueError):
        search.search(states * 2)


def test_pick_action():
    rng = np.random.default_rng(0)
    acts = np.array([7, 8, 9])
    assert pick_action(acts, np.array([1, 5, 2]), 0.0, rng) == 8
    draws = [pick_action(acts, np.array([1, 0, 3]), 1.0, rng) for _ in range(400)]
    assert 8 not in draws and 50 < draws.count(7) < 150


# ------------------------------------------------------------------ network, checkpoints, bot
torch = pytest.importorskip("torch")

from jiu_env.bots import make_bot  # noqa: E402
from jiu_env.bots.alphazero import AlphaZeroBot, build_net, load_checkpoint, make_evaluator, save_checkpoint  # noqa: E402


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    torch.manual_seed(0)
    net = build_net(channels=8, blocks=1)
    path = tmp_path_factory.mktemp("az") / "tiny.pt"
    save_checkpoint(path, net, Rules.make("competitive", board_size=5), meta={"note": "untrained"})
    return path


@pytest.mark.parametrize("n", (5, 8, 14))
def test_network_layout(n):
    net = build_net(channels=8, blocks=1)
    p_ = n * n
    with torch.no_grad():
        net.policy.weight.zero_()
        net.policy.bias.zero_()
        net.policy.bias[6] = 5.0  # channel 6 = JUMP direction 1
        net.stop.weight.zero_()
        net.stop.bias.fill_(-5.0)
    logits, v = make_evaluator(net)(np.random.default_rng(n).random((3, n, n, NUM_PLANES), np.float32))
    assert logits.shape == (3, 10 * p_ + 1) and v.shape == (3,)
    assert np.all((-1 <= v) & (v <= 1))
    top = np.flatnonzero(logits[0] == logits[0].max())
    assert top.min() == 6 * p_ and top.max() == 7 * p_ - 1  # JUMP right of every point
    assert logits[0, 10 * p_] == pytest.approx(-5.0)


def test_checkpoint_round_trip(tiny_checkpoint):
    net, data = load_checkpoint(tiny_checkpoint)
    assert data["rules"]["board_size"] == 5 and data["meta"]["note"] == "untrained"
    assert tiny_checkpoint.stat().st_size < 200_000
    x = np.random.default_rng(1).random((2, 5, 5, NUM_PLANES), np.float32)
    torch.manual_seed(0)
    ref = build_net(channels=8, blocks=1)
    a, b = make_evaluator(ref)(x), make_evaluator(net)(x)
    assert np.allclose(a[0], b[0]) and np.allclose(a[1], b[1])
    bad = tiny_checkpoint.parent / "bad.pt"
    torch.save({"format": "other"}, bad)
    with pytest.raises(ValueError):
        load_checkpoint(bad)


def _decision_states(n=5, seed=0):
    """States of every decision type: placement (first stone, later), move, chain, drop, capture."""
    rules = Rules.make("competitive", board_size=n, max_battle_turns=200)
    rng = np.random.default_rng(seed)
    found = {}
    s = rules.new_state()
    found["first"] = s.copy()
    K.apply_action(s, int(legal(s)[0]))
    K.apply_action(s, int(legal(s)[0]))
    found["placement"] = s.copy()
    for k in range(40):
        s = rules.new_state()
        K.random_placement(s, seed * 100 + k)
        while s[K.H_PHASE] == K.PH_BATTLE:
            key = ("move", "chain", "drop", "capture")[int(s[K.H_SUB])]
            found.setdefault(key, s.copy())
            K.apply_action(s, int(rng.choice(legal(s))))
        if len(found) == 6:
            break
    assert len(found) == 6, sorted(found)
    return found


def test_bot_plays_legal_actions_for_every_decision_type(tiny_checkpoint):
    bot = make_bot(f"alphazero:checkpoint={tiny_checkpoint},sims=8", seed=3)
    assert isinstance(bot, AlphaZeroBot)
    for name, s in _decision_states().items():
        before = s.copy()
        a = bot.step(s)
        assert K.is_legal(s, a), name
        assert np.array_equal(before, s)
    with pytest.raises(ValueError):
        make_bot(f"alphazero:checkpoint={tiny_checkpoint},depth=2")
    with pytest.raises(FileNotFoundError):
        AlphaZeroBot(checkpoint=tiny_checkpoint.parent / "missing.pt")


def test_a_huge_sims_budget_gets_a_tree_of_at_most_max_nodes(monkeypatch, tiny_checkpoint):
    """sims up to MAX_SIMS: the tree is capped (here at a small MAX_NODES), not sized sims * points."""
    from jiu_env.bots import alphazero as AZ
    from jiu_env.bots.base import MAX_SIMS
    from jiu_env.bots.search import MAX_DEPTH

    monkeypatch.setattr(AZ, "MAX_NODES", 3000)
    bot = make_bot(f"alphazero:checkpoint={tiny_checkpoint},sims={MAX_SIMS},time=0.3", seed=1)
    s = _decision_states()["placement"]
    assert K.is_legal(s, bot.step(s))
    search = bot._search.searcher
    assert search.max_nodes == 3000 and search.path.shape[1] == MAX_DEPTH
    assert 0 < search.nodes() <= 3000
    small = PUCT(uniform, 5, s.size, 1, 10).searcher  # a small budget keeps its exact size
    assert small.max_nodes == 12 * 25 + K.num_actions(5) + 1 and small.path.shape[1] == 12


def test_bot_runs_on_the_14x14_board(tiny_checkpoint):
    """The network has no size-dependent layer: a 5x5 checkpoint plays 14x14 positions when told to."""
    bot = AlphaZeroBot(checkpoint=tiny_checkpoint, sims=4, seed=0, any_size=True)
    s = Rules.make("competitive").new_state()
    for _ in range(3):
        a = bot.step(s)
        assert K.is_legal(s, a)
        K.apply_action(s, a)
    K.random_placement(s, 5)
    assert K.is_legal(s, bot.step(s))


def test_bot_plays_a_whole_game(tiny_checkpoint):
    from jiu_env.bots.match import play_game

    rules = Rules.make("competitive", board_size=5, max_battle_turns=12)
    from jiu_env.outcome import outcome_of

    g = play_game(rules, AlphaZeroBot(checkpoint=tiny_checkpoint, sims=4), "random", seed=2)
    assert g.outcome == outcome_of(g.state)  # the rules ended it (no forfeit, no stop)
    assert g.battle_turns <= 12  # max_battle_turns at the latest
    assert g.decisions > 23  # every placement and some battle


def test_bot_battle_engine(tiny_checkpoint, tmp_path):
    from jiu_env.bots.greedy import GreedyBot

    states = _decision_states()
    net, _ = load_checkpoint(tiny_checkpoint)
    placement_ckpt = tmp_path / "placement.pt"
    save_checkpoint(placement_ckpt, net, meta={"phase": "placement", "args": '{"judge_turns": 7, "adjudicate_margin": 5.0}'})
    pb = AlphaZeroBot(checkpoint=placement_ckpt, sims=8)
    assert pb.battle == "mcts:sims=8"
    search = pb._searcher(states["placement"])
    assert (search.judge_turns, search.adj_margin, search.judge_playouts) == (7, 5.0, 1)  # as in training
    gb = AlphaZeroBot(checkpoint=tiny_checkpoint, sims=8)
    assert gb.battle == "net" and gb._searcher(states["placement"]).judge_turns == 0
    bot = make_bot(f"alphazero:checkpoint={placement_ckpt},sims=8,battle=greedy", seed=1)
    for name in ("move", "chain", "drop", "capture"):
        s = states[name]
        bot.restart(4)
        ref = GreedyBot(seed=bot._battle_bot.seed)
        assert bot.step(s) == ref.step(s), name  # the battle is the greedy bot's
    assert K.is_legal(states["placement"], bot.step(states["placement"]))


def test_bot_is_reproducible(tiny_checkpoint):
    s = _decision_states()["move"]
    picks = [AlphaZeroBot(seed=7, checkpoint=tiny_checkpoint, sims=8, temperature=1.0).step(s) for _ in range(2)]
    assert picks[0] == picks[1]


# ------------------------------------------------------------------ the training example
def _example():
    spec = importlib.util.spec_from_file_location("az_example", ROOT / "examples" / "alphazero.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_replay_augmentation_maps_policy_with_planes():
    ex = _example()
    rng = np.random.default_rng(0)
    for name, s in _decision_states(n=6, seed=1).items():
        n, na = 6, 10 * 36 + 1
        me = int(s[K.H_TO_MOVE])
        obs = np.empty((n, n, NUM_PLANES), np.float32)
        write_observation(s, me, obs)
        acts = legal(s)
        pi = np.zeros(na, np.float32)
        pi[acts] = rng.random(acts.size) + 0.01
        pi /= pi.sum()
        mask = np.zeros(na, bool)
        mask[acts] = True
        rep = ex.Replay(4, n, na)
        rep.add([obs], [pi], [mask], [0.5], [s[K.H_PHASE] == K.PH_PLACEMENT])
        outputs = set()
        for _ in range(8):
            o, p, m, z = rep.sample(4, rng, True)
            assert np.all(z == 0.5)
            for i in range(4):
                ok = [g for g in S.symmetries_for(s)
                      if np.array_equal(o[i], S.transform_observation(obs.astype(np.float16).astype(np.float32), g))
                      and np.allclose(p[i], S.transform_policy(pi.astype(np.float16).astype(np.float32), g, n))]
                assert ok, name
                t = S.transform_state(s, ok[0])
                assert np.array_equal(np.flatnonzero(m[i]), np.sort(legal(t))), name
                outputs.add(o[i].tobytes() + p[i].tobytes())
        assert len(outputs) > 1, name  # the positions were really transformed


def test_placement_self_play_records_only_placements():
    ex = _example()
    args = ex.parse_args(["--quick", "--board-size", "5", "--games", "3", "--league", ""])
    rules = Rules.make("competitive", board_size=5)
    net = build_net(channels=8, blocks=1)
    search = ex.make_search(make_evaluator(net), rules, args.games, args.sims, args)
    data, stats = ex.self_play(search, rules, args, np.random.default_rng(0))
    assert all(data["placement"]) and len(data["z"]) == 3 * 23  # 25 placements less the 2 forced ones
    assert stats["white"] + stats["black"] + stats["draw"] == 3
    assert all(-1 <= z <= 1 for z in data["z"])


def test_league_games_record_only_the_network_side():
    ex = _example()
    args = ex.parse_args(["--quick", "--board-size", "5", "--games", "8", "--league", "greedy random",
                          "--league-share", "0.5"])
    rules = Rules.make("competitive", board_size=5)
    net = build_net(channels=8, blocks=1)
    search = ex.make_search(make_evaluator(net), rules, args.games, args.sims, args)
    data, stats = ex.self_play(search, rules, args, np.random.default_rng(0))
    # games 0-3 against a bot, two per bot (the network White in even games, Black in odd ones), 4-7 self-play.
    # On 5x5 White places 12 stones after the forced centre one, Black 11 after its forced one.
    assert len(data["z"]) == 2 * (12 + 11) + 4 * 23
    assert set(stats) >= {"score_vs[greedy]", "score_vs[random]"}
    assert all(0.0 <= stats[f"score_vs[{b}]"] <= 1.0 for b in ("greedy", "random"))
    with pytest.raises(ValueError):
        ex.self_play(search, rules, ex.parse_args(["--quick", "--league", "nosuchbot"]), np.random.default_rng(0))


def test_bot_battle_judge_averages_battles():
    ex = _example()
    rules = Rules.make("competitive", board_size=6)
    s = rules.new_state()
    K.random_placement(s, 4)
    one = [ex.bot_battle(s, "random", 1000, 4.0, seed=9 + b) for b in range(3)]
    assert all(v in (-1.0, 0.0, 1.0) for v in one)  # played to the end: win, loss or draw
    assert ex.bot_battle(s, "random", 1000, 4.0, seed=9, battles=3) == pytest.approx(sum(one) / 3)


def test_bot_battle_judge():
    ex = _example()
    rules = Rules.make("competitive", board_size=6)
    s = rules.new_state()
    K.random_placement(s, 3)
    a = ex.bot_battle(s, "random", 6, 10.0, seed=5)
    assert a == ex.bot_battle(s, "random", 6, 10.0, seed=5) and -1 <= a <= 1
    assert s[K.H_TURNS] == 0  # the judged state is not modified
    strong = position_state(rules, board_from_text("""
        oooooo
        oooooo
        oo....
        ......
        ....xx
        ....xx"""), "black")
    assert ex.bot_battle(strong, "greedy", 10, 4.0, seed=1) > 0.5


def test_quick_run(tmp_path):
    ex = _example()
    ckpt = tmp_path / "q.pt"
    res = ex.main(["--quick", "--checkpoint", str(ckpt)])
    net, data = load_checkpoint(ckpt)
    assert data["meta"]["iterations"] == 1 and data["rules"]["board_size"] == 6
    assert data["meta"]["phase"] == "placement"
    log = ckpt.with_suffix(".log.jsonl").read_text().splitlines()
    assert len(log) == 1
    row = json.loads(log[0])
    assert row["match"]["wins"] + row["match"]["losses"] + row["match"]["draws"] == 2  # the in-training match
    assert "score_vs[greedy]" in row  # the quick run plays league games against greedy
    _, best = load_checkpoint(ckpt.with_suffix(".best.pt"))
    assert json.loads(best["meta"]["match"]) == row["match"]
    pytest.importorskip("matplotlib")
    assert (tmp_path / "q.curve.png").stat().st_size > 0
    assert res["wins"] + res["losses"] + res["draws"] == 1


def test_bot_searches_the_battle_with_its_battle_network(tiny_checkpoint, tmp_path):
    """battle_checkpoint: the search of a battle position runs on that network, placement stays the other's."""
    states = _decision_states()
    torch.manual_seed(1)
    other = tmp_path / "battle.pt"
    save_checkpoint(other, build_net(channels=8, blocks=1), Rules.make("competitive", board_size=5))
    pair = AlphaZeroBot(checkpoint=tiny_checkpoint, battle_checkpoint=str(other), sims=8)
    one = AlphaZeroBot(checkpoint=tiny_checkpoint, sims=8)
    alone = AlphaZeroBot(checkpoint=other, sims=8)
    assert one.battle_checkpoint is None and pair.battle_checkpoint == other
    for name, s in states.items():
        want = alone if s[K.H_PHASE] == K.PH_BATTLE else one
        assert K.is_legal(s, pair.step(s)), name
        want.step(s)
        search, ref = pair._searcher(s), want._searcher(s)
        np.testing.assert_array_equal(search.root_priors(), ref.root_priors(), err_msg=name)
    assert pair._battle_search is not None and pair._battle_search.evaluate is pair._battle_evaluate
    assert pair.version_key() != one.version_key() and "battle.pt" in repr(pair)
    none = make_bot(f"alphazero:checkpoint={tiny_checkpoint},battle_checkpoint=none,sims=4")
    assert none.battle_checkpoint is None and none.version_key() == one.version_key()
    with pytest.raises(ValueError, match="battle='greedy' gives the battle to another player"):
        make_bot(f"alphazero:checkpoint={tiny_checkpoint},battle_checkpoint={other},battle=greedy")
    with pytest.raises(ValueError, match="battle_checkpoint must be a path or 'none'"):
        AlphaZeroBot(checkpoint=tiny_checkpoint, battle_checkpoint="")
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        AlphaZeroBot(checkpoint=tiny_checkpoint, battle_checkpoint=tmp_path / "missing.pt")
    # a battle network of another board size is refused at the first position, not played
    save_checkpoint(tmp_path / "six.pt", build_net(channels=8, blocks=1), Rules.make("competitive", board_size=6))
    odd = AlphaZeroBot(checkpoint=tiny_checkpoint, battle_checkpoint=tmp_path / "six.pt", sims=4)
    with pytest.raises(ValueError, match="six.pt.*trained on"):
        odd.step(states["move"])


def test_default_bot_searches_the_14x14_battle_with_the_shipped_battle_network():
    """make_bot("alphazero") on 14x14: the shipped placement network for placement, the battle network for battle."""
    from jiu_env.bots.network import SHIPPED, SHIPPED_BATTLE

    bot = make_bot("alphazero:sims=2", seed=0)
    s = Rules.make("competitive").new_state()
    K.random_placement(s, 3)
    assert K.is_legal(s, bot.step(s))
    assert bot.checkpoint == SHIPPED[14] and bot.battle_checkpoint == SHIPPED_BATTLE[14]
    assert bot._battle_search is not None and bot._search is None  # only the battle was searched
    assert "policy_jiu14_battle.pt" in repr(bot)


def test_bot_batch_defaults_by_budget_and_is_checked(tiny_checkpoint):
    """batch: 8 leaves a forward pass on a clock, one with sims alone (the search seeded records were made with)."""
    s = _decision_states()["move"]
    assert AlphaZeroBot(seed=0, checkpoint=tiny_checkpoint, sims=20).batch == 1
    timed = AlphaZeroBot(seed=0, checkpoint=tiny_checkpoint, time=0.05)
    assert timed.batch == 8 and "batch=8" in repr(timed)
    bot = AlphaZeroBot(seed=0, checkpoint=tiny_checkpoint, sims=40, batch=4)
    assert K.is_legal(s, bot.step(s))
    search = bot._searcher(s)
    assert search.searcher.batch == 4 and search.trees[T_VISITS][0, 0] == 41  # no virtual visit left
    for bad in (0, 257, 2.5, True, "x"):
        with pytest.raises(ValueError, match="alphazero batch"):
            AlphaZeroBot(checkpoint=tiny_checkpoint, batch=bad)


# ------------------------------------------------------------------ a review of the bot (budgets, seeds, keys)
def test_pick_action_samples_at_small_temperatures():
    """visits ** (1/T) overflowed below T ~ 0.01 (NaN probabilities, the bot crashed at its first decision);
    the weights are the same, scaled by the largest; where they did not overflow the draws are unchanged."""
    acts = np.array([7, 8, 9])
    for t in (0.002, 1e-4):
        assert {pick_action(acts, np.array([300, 290, 1]), t, np.random.default_rng(k)) for k in range(50)} == {7}
    old = lambda v, t, rng: int(acts[rng.choice(3, p=v ** (1 / t) / (v ** (1 / t)).sum())])  # noqa: E731
    for t in (0.5, 1.0, 2.0):
        v = np.array([3.0, 5.0, 2.0])
        assert [pick_action(acts, v, t, np.random.default_rng(k)) for k in range(30)] == [
            old(v, t, np.random.default_rng(k)) for k in range(30)]


def test_placement_checkpoint_battles_on_its_budget_or_its_battle_network(tiny_checkpoint, tmp_path):
    """A placement network gives the battle to MCTS on the bot's budget (time was ignored: 4000 simulations
    whatever the clock); a battle_checkpoint named is searched (it was ignored, a missing one unnoticed)."""
    from jiu_env.bots.network import DEFAULT_CHECKPOINT

    assert make_bot("alphazero:time=0.02").battle == "mcts:sims=4000,time=0.02"
    assert make_bot("alphazero:time=0.1234567").battle == "mcts:sims=4000,time=0.1234567"  # not rounded
    assert make_bot("alphazero:sims=30").battle == "mcts:sims=30"
    bot = make_bot(f"alphazero:battle_checkpoint={DEFAULT_CHECKPOINT},sims=2")
    assert bot.battle == "net" and bot._battle_bot is None and bot._battle_evaluate is not None
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        make_bot(f"alphazero:battle_checkpoint={tmp_path / 'missing.pt'},sims=2")


def test_checkpoint_must_be_a_path_and_a_failed_bot_keeps_torchs_threads(tmp_path):
    for spec in ("alphazero:checkpoint=", "alphazero:checkpoint=0", "alphazero:checkpoint=7"):
        with pytest.raises(ValueError, match="alphazero checkpoint must be a path to a network file"):
            make_bot(spec)  # the first two played the shipped network, the third raised a TypeError
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with pytest.raises(FileNotFoundError):
            make_bot(f"alphazero:checkpoint={tmp_path / 'missing.pt'},threads=1")
        with pytest.raises(ValueError, match="seed must be an int >= 0"):
            AlphaZeroBot(seed=-1, threads=1, sims=2)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


def test_restart_plays_as_a_new_bot_after_a_change_of_board_size():
    """A bot that played 8x8 (a placement network, an MCTS battle player) then 14x14 drew its random
    numbers differently after restart(seed) from a bot built with that seed."""
    s8 = Rules.make("competitive", board_size=8).new_state()
    states = []
    s14 = Rules.make("competitive").new_state()
    rng = np.random.default_rng(1)
    for _ in range(4):
        states.append(s14.copy())
        K.apply_action(s14, int(rng.choice(legal(s14))))
    used = make_bot("alphazero:sims=8,temperature=1", seed=1)
    used.step(s8)
    used.step(states[0])
    used.restart(seed=1)
    fresh = make_bot("alphazero:sims=8,temperature=1", seed=1)
    assert [used.step(s.copy()) for s in states] == [fresh.step(s.copy()) for s in states]
    used.restart(seed=1)  # and back: the 14x14 network loaded, a game on 8x8
    fresh = make_bot("alphazero:sims=8,temperature=1", seed=1)
    assert [used.step(s8.copy()) for _ in range(3)] == [fresh.step(s8.copy()) for _ in range(3)]


def test_version_keys_hash_the_networks_and_code_that_play():
    """The default (by board size) alphazero hashes every shipped network (it hashed the one loaded: the 8x8
    one, whatever it would play on 14x14) and its battle player; a built-in bot hashes the bot modules it
    imports (alphabeta's evaluation lives in evaluation_fn.py, MCTS's loop in search.py)."""
    import os

    from jiu_env.bots.network import SHIPPED, SHIPPED_BATTLE
    from jiu_env.players import file_hash, player_version, source_files

    key = player_version(make_bot("alphazero:sims=2"))
    for path in (SHIPPED[14], SHIPPED_BATTLE[14]):
        assert file_hash(path) in key
    assert player_version(make_bot("mcts:sims=2")) in key  # the 8x8 network's battle player
    from jiu_env.bots.network import DEFAULT_CHECKPOINT

    own = player_version(make_bot(f"alphazero:checkpoint={DEFAULT_CHECKPOINT},sims=2"))  # one network, named
    assert file_hash(DEFAULT_CHECKPOINT) in own and file_hash(SHIPPED[14]) not in own
    names = {cls: [os.path.basename(p) for p in source_files(type(make_bot(cls)))] for cls in ("alphabeta", "mcts")}
    assert "evaluation_fn.py" in names["alphabeta"] and "search.py" in names["mcts"] and "leaves.py" in names["mcts"]
    assert player_version(make_bot("alphabeta")) != file_hash(source_files(type(make_bot("alphabeta")))[0])
    # a user's subclass runs the built-in's code: its key covers it
    from jiu_env.bots.policy import PolicyBot

    class Sub(PolicyBot):
        pass

    assert {"policy.py", "network.py", os.path.basename(__file__)} <= {os.path.basename(p) for p in source_files(Sub)}


def test_alphabeta_takes_numpy_integers_as_every_integer_parameter():
    bot = make_bot("alphabeta", depth=np.int64(2), place_depth=np.int32(1), tt_bits=np.int64(12))
    assert (bot.depth, bot.place_depth) == (2, 1) and type(bot.depth) is int
    for bad in (True, 2.5, 0, 65):
        with pytest.raises(ValueError, match="alphabeta depth must be an int >= 1 and <= 64"):
            make_bot("alphabeta", depth=bad)
