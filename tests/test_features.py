"""The learned players' input planes (jiu_env.bots.features): what the tactics planes say, their
symmetries, and the networks, data and players that use them."""

from __future__ import annotations

import numpy as np
import pytest

from jiu_env import Rules, make_bot, play_game
from jiu_env import kernel as K
from jiu_env import vocab as V
from jiu_env.bots.features import (FEATURE_PLANES, GAIN_CAP, NUM_TACTIC_PLANES, TACTIC_KINDS, check_features,
                                   net_input, transform_input, transform_tactics)
from jiu_env.observation import NUM_PLANES, write_observation
from jiu_env.symmetry import symmetries_for, transform_observation, transform_state

R6 = Rules.make("competitive", board_size=6)


def _positions(rules, games=3, seed=0, every=5):
    """States met in seeded random games, both phases."""
    rng = np.random.default_rng(seed)
    buf = np.empty(K.num_actions(rules.board_size), np.int64)
    out = []
    for _ in range(games):
        s = rules.new_state()
        k = 0
        while s[V.H_PHASE] != V.PH_OVER and k < 400:
            if k % every == 0:
                out.append(s.copy())
            m = K.legal_actions(s, buf)
            K.apply_action(s, int(buf[rng.integers(m)]))
            k += 1
    return out


def observe(s, me):
    out = np.empty((int(s[V.H_N]), int(s[V.H_N]), NUM_PLANES), np.float32)
    write_observation(s, me, out)
    return out


def _gains(s):
    """The tactics planes recomputed in plain Python: each legal action's gain for its mover."""
    n = int(s[V.H_N])
    p_ = n * n
    out = np.zeros((n, n, NUM_TACTIC_PLANES), np.float32)

    def fill(state, base):
        c = int(state[V.H_TO_MOVE])
        o = V.opponent(c)
        buf = np.empty(K.num_actions(n), np.int64)
        for a in buf[:K.legal_actions_unchecked(state, buf)]:  # the opponent's turn in placement is no real state
            kind = int(a) // p_
            if kind >= V.A_STOP:
                continue
            child = state.copy()
            K.apply_action_unchecked(child, int(a))
            if state[V.H_PHASE] == V.PH_PLACEMENT:
                g = K.squares_at(child, int(a), c)
            elif child[V.H_PHASE] == V.PH_OVER:
                g = GAIN_CAP if child[V.H_WINNER] == c else 0
            else:
                g = int(state[V.H_COUNT + o] - child[V.H_COUNT + o])
                if child[V.H_TO_MOVE] == c and child[V.H_SUB] == V.SUB_CAPTURE:
                    g += int(child[V.H_PENDING])
            p = int(a) - kind * p_
            out[p // n, p % n, base + kind] = min(g, GAIN_CAP) / GAIN_CAP

    fill(s, 0)
    other = s.copy()
    if s[V.H_PHASE] == V.PH_PLACEMENT:
        other[V.H_TO_MOVE] = V.opponent(int(s[V.H_TO_MOVE]))
    elif s[V.H_SUB] in (V.SUB_MOVE, V.SUB_CAPTURE):
        K.pass_turn_unchecked(other)
        if other[V.H_PHASE] != V.PH_BATTLE or other[V.H_TO_MOVE] == s[V.H_TO_MOVE]:
            return out
    else:
        return out
    fill(other, TACTIC_KINDS)
    return out


def test_planes_feature_set_is_the_observation():
    for s in _positions(R6, games=1, every=9):
        assert np.array_equal(net_input(s), observe(s, int(s[V.H_TO_MOVE])))


def test_tactics_planes_equal_each_moves_gain_for_both_sides():
    seen_battle_gain = seen_threat = seen_squares = False
    for s in _positions(R6, games=4, every=3):
        x = net_input(s, "tactics")
        assert x.shape == (6, 6, FEATURE_PLANES["tactics"]) and x.dtype == np.float32
        assert np.array_equal(x[..., :NUM_PLANES], observe(s, int(s[V.H_TO_MOVE])))
        want = _gains(s)
        assert np.array_equal(x[..., NUM_PLANES:], want)
        assert x.min() >= 0 and x.max() <= 1
        mine, theirs = want[..., :TACTIC_KINDS], want[..., TACTIC_KINDS:]
        if s[V.H_PHASE] == V.PH_PLACEMENT:
            seen_squares |= bool(mine.any())
        else:
            seen_battle_gain |= bool(mine[..., V.A_JUMP:V.A_LIFT].any() or mine[..., V.A_STEP:V.A_JUMP].any())
            seen_threat |= bool(theirs.any())
    assert seen_battle_gain and seen_threat and seen_squares  # the random games met each case


def test_every_legal_jump_shows_at_least_the_stone_it_takes():
    """Read the other way: a jump always takes a stone, so its plane is never empty at its point."""
    n = 6
    p_ = n * n
    buf = np.empty(K.num_actions(n), np.int64)
    jumps = 0
    for s in _positions(R6, games=6, every=1, seed=3):
        if s[V.H_PHASE] != V.PH_BATTLE or s[V.H_SUB] not in (V.SUB_MOVE, V.SUB_CHAIN):
            continue
        x = net_input(s, "tactics")
        for a in buf[:K.legal_actions(s, buf)]:
            kind, p = divmod(int(a), p_)
            if V.A_JUMP <= kind < V.A_LIFT:
                assert x[p // n, p % n, NUM_PLANES + kind] >= 1 / GAIN_CAP
                jumps += 1
    assert jumps > 10


@pytest.mark.parametrize("board_size", [6, 8])
def test_symmetries_map_the_tactics_planes_exactly(board_size):
    """The tactics of a mapped position are the mapped tactics (kinds move with the directions), and
    the one-gather transform_input agrees with the plane-by-plane one."""
    rules = Rules.make("competitive", board_size=board_size)
    checked = 0
    for s in _positions(rules, games=2, every=7, seed=board_size):
        x = net_input(s, "tactics")
        for g in symmetries_for(s):
            y = net_input(transform_state(s, g), "tactics")
            assert np.array_equal(y[..., NUM_PLANES:], transform_tactics(x[..., NUM_PLANES:], g))
            t = transform_input(x, g)
            assert np.array_equal(t[..., NUM_PLANES:], y[..., NUM_PLANES:])
            assert np.array_equal(t[..., :NUM_PLANES], transform_observation(x[..., :NUM_PLANES], g))
            checked += 1
    assert checked > 20


def test_bad_feature_sets_and_shapes_are_refused():
    s = R6.new_state()
    for bad in ("tactic", "", None, ["tactics"]):
        with pytest.raises(ValueError, match="feature set"):
            check_features(bad)
    with pytest.raises(ValueError, match="feature set"):
        net_input(s, "nope")
    with pytest.raises(ValueError, match="tactics planes"):
        transform_tactics(np.zeros((6, 6, 7), np.float32), 1)
    with pytest.raises(ValueError, match="channels"):
        transform_input(np.zeros((6, 6, 30), np.float32), 1)
    bad = s.copy()
    bad[V.H_N] = 99
    with pytest.raises(ValueError):
        net_input(bad, "tactics")


torch = pytest.importorskip("torch")


def test_networks_name_their_feature_set_and_older_checkpoints_read_the_observation(tmp_path):
    from jiu_env.bots.network import build_net, load_checkpoint, make_evaluator, net_features, save_checkpoint

    net = build_net(8, 1, features="tactics")
    assert net.config["in_planes"] == FEATURE_PLANES["tactics"] and net_features(net) == "tactics"
    assert make_evaluator(net).features == "tactics"
    with pytest.raises(ValueError, match="does not match"):
        build_net(8, 1, in_planes=NUM_PLANES, features="tactics")
    with pytest.raises(ValueError, match="feature set"):
        build_net(8, 1, features="bogus")
    save_checkpoint(tmp_path / "t.pt", net, R6)
    twin, data = load_checkpoint(tmp_path / "t.pt")
    assert data["config"]["features"] == "tactics" and net_features(twin) == "tactics"
    # a checkpoint written before feature sets had names: config without "features"
    old = build_net(8, 1)
    save_checkpoint(tmp_path / "old.pt", old, R6)
    raw = torch.load(tmp_path / "old.pt", weights_only=True)
    del raw["config"]["features"]
    torch.save(raw, tmp_path / "old.pt")
    back, _ = load_checkpoint(tmp_path / "old.pt")
    assert net_features(back) == "planes" and back.config["in_planes"] == NUM_PLANES


@pytest.fixture(scope="module")
def tactics6(tmp_path_factory):
    from jiu_env.learn.data import DataConfig, generate

    root = tmp_path_factory.mktemp("tactics6")
    cfg = DataConfig(teacher="alphabeta:depth=1,tt_bits=12", rules=R6.to_dict(), chunk_games=2, random_opening=3,
                     seed=5)
    generate(root / "data", cfg, 4, progress=False)
    return root


def test_positions_replay_the_same_with_workers_and_train_a_tactics_network(tactics6):
    from jiu_env.learn.dataset import PLANE_SCALE, load_positions
    from jiu_env.learn.train import TrainConfig, train

    one, rules = load_positions([tactics6 / "data"], features="tactics")
    two, _ = load_positions([tactics6 / "data"], features="tactics", workers=2)
    plain, _ = load_positions([tactics6 / "data"])
    assert one.planes.shape[-1] == FEATURE_PLANES["tactics"] and plain.planes.shape[-1] == NUM_PLANES
    for f in ("planes", "action", "value", "result", "placement", "game"):
        assert np.array_equal(getattr(one, f), getattr(two, f)), f
    assert np.array_equal(one.planes[..., :NUM_PLANES], plain.planes)
    assert set(np.unique(one.planes[..., NUM_PLANES:])) <= {round(PLANE_SCALE * k / GAIN_CAP) for k in range(5)}

    with pytest.raises(ValueError, match="feature set"):
        TrainConfig(features="tactic")
    with pytest.raises(ValueError, match="input planes"):
        train(plain, rules, tactics6 / "wrong", TrainConfig(channels=4, blocks=1, batch=8, steps=2, features="tactics"),
              progress=False)
    cfg = TrainConfig(channels=8, blocks=1, batch=16, steps=6, eval_every=3, save_every=3, features="tactics")
    train(one, rules, tactics6 / "net", cfg, progress=False)
    net_path = tactics6 / "net" / "net.pt"
    g = play_game(rules, make_bot(f"policy:{net_path}", seed=1), "random", seed=3)
    assert g.battle_turns > 0  # played into the battle (play_game raises on an illegal action)
    az = make_bot(f"alphazero:checkpoint={net_path},sims=6", seed=1)
    g = play_game(rules, az, "random", seed=4)
    assert g.battle_turns > 0  # played into the battle (play_game raises on an illegal action)
    # a planes network cannot start a tactics run
    plain_cfg = TrainConfig(channels=8, blocks=1, batch=16, steps=3, eval_every=3, save_every=3)
    train(plain, rules, tactics6 / "plain", plain_cfg, progress=False)
    with pytest.raises(ValueError, match="cannot start this run"):
        train(one, rules, tactics6 / "from-plain", cfg, progress=False, init=tactics6 / "plain" / "net.pt")
