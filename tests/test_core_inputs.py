"""Bad input to the core's public functions: a clear TypeError / ValueError naming the argument, state untouched.

One test (or a few) per defect of the core-inputs review: vocab, symmetry, notation, observation, the game
loop, rules, state helpers and rendering.  Valid input keeps its old results (checked alongside).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from jiu_env import kernel as K
from jiu_env import notation as N
from jiu_env import render as RD
from jiu_env import state as ST
from jiu_env import symmetry as S
from jiu_env import vocab as V
from jiu_env.game import GameResult, play_game
from jiu_env.observation import NUM_PLANES, observe, write_observation
from jiu_env.outcome import Outcome
from jiu_env.rules import Rules, max_min_stones
from jiu_env.validate import InvalidStateError

R6 = Rules.make("competitive", board_size=6)


def _battle(n=6, seed=3):
    s = Rules.make("competitive", board_size=n).new_state()
    K.random_placement(s, seed)
    return s


# ------------------------------------------------------------------ 1. vocab's numba helpers
@pytest.mark.parametrize("name", ["num_actions", "opponent", "point_row", "point_col", "landing", "square_corner"])
def test_vocab_numba_helpers_stay_kernel_helpers_and_say_they_are_unchecked(name):
    f = getattr(V, name)
    assert hasattr(f, "py_func") and getattr(K, name) is f  # still the @njit function the kernel imports
    assert "unchecked" in f.__doc__.lower(), f.__doc__
    assert "unchecked kernel helpers" in V.__doc__


def test_vocab_numba_helpers_keep_their_results():
    assert V.num_actions(8) == 641 and V.opponent(V.WHITE) == V.BLACK and V.opponent(V.BLACK) == V.WHITE
    assert V.landing(9, 1, 1, 8) == 10 and V.landing(7, 1, 1, 8) == -1 and V.square_corner(9, 0, 8) == 0


# ------------------------------------------------------------------ 2. symmetry's caches
@pytest.mark.parametrize("bad", [1.0, True, np.float64(1), "1"])
def test_symmetry_cache_does_not_accept_what_the_check_refuses(bad):
    assert S.compose(1, 2) == S.compose(np.int64(1), 2)  # fill the cache with the valid key first
    assert S.inverse(1) == 3
    with pytest.raises((TypeError, ValueError), match="symmetry"):
        S.compose(bad, 2)
    with pytest.raises((TypeError, ValueError), match="symmetry"):
        S.compose(2, bad)
    with pytest.raises((TypeError, ValueError), match="symmetry"):
        S.inverse(bad)


def test_placement_symmetries_cache_does_not_accept_a_float_size():
    assert S.placement_symmetries(8) == S.placement_symmetries(np.int64(8)) == (0, 2, 6, 7)
    with pytest.raises(TypeError, match="n must be an int"):
        S.placement_symmetries(8.0)


# ------------------------------------------------------------------ 3. symmetry's board size
SIZE_TAKERS = [
    lambda n: S.point_map(0, n), lambda n: S.action_map(0, n), lambda n: S.direction_map(1, n),
    lambda n: S.transform_point(3, 1, n), lambda n: S.transform_action(3, 1, n), lambda n: S.placement_symmetries(n),
    lambda n: S.transform_policy(np.zeros(641), 1, n),
]


@pytest.mark.parametrize("take", SIZE_TAKERS)
@pytest.mark.parametrize("bad", [8.9, 8.0, "8", True, np.bool_(True), None])
def test_symmetry_board_size_must_be_an_int(take, bad):
    with pytest.raises(TypeError, match="n must be an int"):
        take(bad)


@pytest.mark.parametrize("take", SIZE_TAKERS)
@pytest.mark.parametrize("bad", [3, 21, -8])
def test_symmetry_board_size_out_of_range(take, bad):
    with pytest.raises(ValueError, match="n must be an int in 4..20"):
        take(bad)


def test_symmetry_accepts_numpy_sizes_and_direction_map_docstring_is_true():
    assert S.transform_point(7, 1, np.int32(8)) == S.transform_point(7, 1, 8) == 0
    assert "independent of n" not in S.direction_map.__doc__
    assert S.direction_map(1, 4).tolist() == S.direction_map(1, 20).tolist() == [3, 0, 1, 2]
    with pytest.raises(ValueError):
        S.direction_map(1, 3)


# ------------------------------------------------------------------ 4. observation's colour
@pytest.mark.parametrize("bad", [1.0, np.array([1]), np.array(1), True, np.bool_(True), "white", None])
def test_observation_colour_must_be_an_int(bad):
    s = _battle()
    obs = np.full((6, 6, NUM_PLANES), 7.0, np.float32)
    mask = np.full(V.num_actions(6), 7, np.int8)
    with pytest.raises(TypeError, match="me must be an int"):
        write_observation(s, bad, obs)
    with pytest.raises(TypeError, match="me must be an int"):
        observe(s, bad, True, obs, mask)
    assert (obs == 7.0).all() and (mask == 7).all()
    with pytest.raises(ValueError, match="me must be"):
        write_observation(s, 3, obs)


def test_observation_takes_numpy_colours_as_before():
    s = _battle()
    a, b = np.empty((6, 6, NUM_PLANES), np.float32), np.empty((6, 6, NUM_PLANES), np.float32)
    write_observation(s, 1, a)
    write_observation(s, np.int32(1), b)
    assert np.array_equal(a, b)
    write_observation(s, s[V.H_TO_MOVE], b)  # an np.int64 straight from the state
    write_observation(s, int(s[V.H_TO_MOVE]), a)
    assert np.array_equal(a, b)


# ------------------------------------------------------------------ 5. play_game's counts
@pytest.mark.parametrize("name", ["max_decisions", "random_opening"])
@pytest.mark.parametrize("bad", [True, 2.5, "3", [3]])
def test_play_game_counts_must_be_ints(name, bad):
    with pytest.raises(TypeError, match=name):
        play_game(R6, "random", "random", seed=1, **{name: bad})


def test_play_game_random_opening_none_is_a_type_error_and_negative_a_value_error():
    with pytest.raises(TypeError, match="random_opening"):
        play_game(R6, "random", "random", seed=1, random_opening=None)
    with pytest.raises(ValueError, match="random_opening"):
        play_game(R6, "random", "random", seed=1, random_opening=-1)
    with pytest.raises(ValueError, match="max_decisions"):
        play_game(R6, "random", "random", seed=1, max_decisions=-1)


def test_play_game_numpy_counts_play_as_ints():
    a = play_game(R6, "random", "random", seed=2, max_decisions=np.int64(40), random_opening=np.int32(5))
    b = play_game(R6, "random", "random", seed=2, max_decisions=40, random_opening=5)
    assert a.actions == b.actions and a.decisions == 40


# ------------------------------------------------------------------ 6. random_opening against start
def test_random_opening_with_a_battle_start_is_refused():
    with pytest.raises(ValueError, match="random_opening=3 .*start='battle'"):
        play_game(R6, "random", "random", seed=1, start="battle", random_opening=3)
    g = play_game(R6, "random", "random", seed=1, start="battle", random_opening=0)  # still allowed
    assert g.actions[0] >= R6.num_points  # the placement was drawn, not played


def test_random_opening_with_a_start_state_past_the_placement_is_refused():
    s = _battle()
    with pytest.raises(ValueError, match="random_opening=2 .*past the placement"):
        play_game(R6, "random", "random", seed=1, start=s, random_opening=2)
    assert play_game(R6, "random", "random", seed=1, start=s).decisions > 0


def test_random_opening_beyond_the_placement_still_draws_all_of_it():
    """Kept on purpose: tournaments give random_opening up to 100,000 and read it back as the whole placement."""
    g = play_game(R6, "random", "random", seed=1, opening_seed=4, random_opening=5000, max_decisions=40)
    h = play_game(R6, "random", "random", seed=1, opening_seed=4, random_opening=R6.num_points, max_decisions=40)
    assert g.actions == h.actions and sum(g.moves_by.values()) == 40 - R6.num_points


# ------------------------------------------------------------------ 7. everything checked before the players
class CountingPlayer:
    """A bot-protocol player that counts its restarts."""

    def __init__(self):
        self.restarts = 0

    def restart(self, seed=None):
        self.restarts += 1

    def step(self, state):
        buf = np.empty(V.num_actions(int(state[V.H_N])), np.int64)
        K.legal_actions(state, buf)
        return int(buf[0])


@pytest.mark.parametrize("kwargs,error,words", [
    (dict(start="middle"), ValueError, "start"),
    (dict(start=_battle().astype(np.int32)), TypeError, "np.int64"),
    (dict(start=Rules.make(board_size=8).new_state()), ValueError, "board size"),
    (dict(seed=-1), ValueError, "seed must be an int >= 0, not -1"),
    (dict(seed=True), TypeError, "seed"),
    (dict(seed=1.5), TypeError, "seed"),
    (dict(seed="3"), TypeError, "seed"),
    (dict(opening_seed=-2), ValueError, "opening_seed must be an int >= 0, not -2"),
    (dict(opening_seed=np.bool_(True)), TypeError, "opening_seed"),
    (dict(opening_seed=2.0), TypeError, "opening_seed"),
    (dict(max_decisions=2.5), TypeError, "max_decisions"),
    (dict(start="battle", random_opening=2), ValueError, "random_opening"),
    (dict(on_illegal="ignore"), ValueError, "on_illegal"),
    (dict(record="no"), TypeError, "^record must be True or False, not str 'no'$"),
    (dict(players=["a", "b"]), TypeError, r"^players must be a dict or None, not list \['a', 'b'\]$"),
    (dict(meta=5), TypeError, "^meta must be a dict or None, not int 5$"),
])
def test_play_game_checks_everything_before_restarting_the_players(kwargs, error, words):
    white, black = CountingPlayer(), CountingPlayer()
    with pytest.raises(error, match=words):
        play_game(R6, white, black, **kwargs)
    assert white.restarts == 0 and black.restarts == 0


def test_play_game_valid_seeds_restart_the_players_as_before():
    white, black = CountingPlayer(), CountingPlayer()
    g = play_game(R6, white, black, seed=np.uint32(3), opening_seed=np.int64(5), random_opening=4, max_decisions=10)
    assert white.restarts == 1 and black.restarts == 1 and g.decisions == 10
    h = play_game(R6, "random", "random", seed=3, opening_seed=5, random_opening=4, max_decisions=10)
    assert g.actions[:4] == h.actions[:4]  # the same seeds draw the same opening


def test_a_game_from_a_position_is_not_recorded_as_one_from_placement():
    # position_state counts 0 decisions too: a record of its moves alone would not replay from an empty board
    board = np.zeros((6, 6), np.int64)
    board[0, :], board[5, :] = V.WHITE, V.BLACK
    battle = ST.position_state(R6, board, to_move="white")
    g = play_game(R6, "greedy", "greedy", seed=1, start=battle, max_decisions=6)
    with pytest.raises(ValueError, match="placement"):
        g.record
    g = play_game(R6, "greedy", "greedy", seed=1, start=R6.new_state(), max_decisions=6)
    assert g.record.actions == g.actions  # a new game given as a state is one from placement


# ------------------------------------------------------------------ 8. Rules.make's profile
@pytest.mark.parametrize("bad", [{"board_size": 8}, None, 3, ["ludii8"]])
def test_rules_profile_in_a_dict_must_be_a_str(bad):
    with pytest.raises(TypeError, match="'profile' must be a str"):
        Rules.make({"profile": bad})
    with pytest.raises(ValueError, match="unknown rules profile"):
        Rules.make({"profile": "ludii9"})
    assert Rules.make({"profile": "ludii8"}) == Rules.make("ludii8")


# ------------------------------------------------------------------ 9. notation
@pytest.mark.parametrize("bad", [True, np.bool_(False), 1.0, "3", None])
def test_point_to_str_takes_integer_points_only(bad):
    with pytest.raises(TypeError, match="a point is an int"):
        N.point_to_str(bad, 8)


def test_str_to_point_refuses_a_non_str_with_a_type_error():
    with pytest.raises(TypeError, match="must be a str"):
        N.str_to_point(5, 8)
    with pytest.raises(TypeError, match="must be a str"):
        N.str_to_point(b"a0", 8)


@pytest.mark.parametrize("bad", [5.0, "5", True, None, 1.5])
def test_action_to_str_refuses_non_integers_as_symmetry_does(bad):
    with pytest.raises(TypeError, match="action must be an integer"):
        N.action_to_str(bad, 8)
    with pytest.raises(TypeError):
        S.transform_action(bad, 0, 8)


def test_notation_takes_numpy_integers_everywhere():
    for n in (np.int64(8), np.int32(8), np.uint8(8)):
        assert N.point_to_str(np.int64(9), n) == N.point_to_str(9, 8) == "b1"
        assert N.action_to_str(np.int16(9), n) == "b1"
        assert N.str_to_action("b1", n) == 9 and N.str_to_point("b1", n) == 9


@pytest.mark.parametrize("bad", ["8", 8.0, True, None])
def test_notation_board_size_type_is_a_type_error(bad):
    for call in (lambda: N.point_to_str(0, bad), lambda: N.str_to_point("a0", bad),
                 lambda: N.action_to_str(0, bad), lambda: N.str_to_action("a0", bad)):
        with pytest.raises(TypeError, match="board_size must be an int"):
            call()


def test_one_board_size_check_for_notation_and_symmetry():
    assert N.check_board_size is S.check_board_size


# ------------------------------------------------------------------ 10. board_hash
def test_board_hash_checks_board_and_side():
    s = _battle(8)
    board = s[V.HDR:V.HDR + 64]
    assert S.board_hash(board, V.BLACK) == S.board_hash(board.tolist(), np.int64(V.BLACK))
    assert S.board_hash(board, s[V.H_TO_MOVE]) == s[V.H_HASH]
    assert S.board_hash(board.astype(float), V.WHITE) == S.board_hash(board, V.WHITE)
    with pytest.raises(TypeError, match="to_move"):
        S.board_hash(board, "black")
    for bad in (7, 0, True, 1.0, None):
        with pytest.raises((TypeError, ValueError), match="to_move"):
            S.board_hash(board, bad)
    with pytest.raises(ValueError, match="board values"):
        S.board_hash([-1] * 64, V.WHITE)
    with pytest.raises(ValueError, match="board values"):
        S.board_hash([0.7] * 64, V.WHITE)
    with pytest.raises(ValueError, match="board values"):
        S.board_hash([3] * 64, V.WHITE)
    with pytest.raises(TypeError, match="board values"):
        S.board_hash([True] * 64, V.WHITE)
    with pytest.raises(ValueError, match="flat array"):
        S.board_hash([0] * 63, V.WHITE)
    with pytest.raises(ValueError, match="flat array"):
        S.board_hash(np.zeros((8, 8), int), V.WHITE)


def test_transform_state_still_rehashes():
    s = _battle(8)
    for g in range(8):
        t = S.transform_state(s, g)
        assert S.board_hash(t[V.HDR:V.HDR + 64], t[V.H_TO_MOVE]) == t[V.H_HASH]


# ------------------------------------------------------------------ 11. position_state's rules
def _position(n=8):
    b = np.zeros((n, n), int)
    b[0, :5] = V.WHITE
    b[n - 1, :5] = V.BLACK
    return b


def test_position_state_takes_what_rules_make_takes():
    b = _position()
    want = ST.position_state(Rules.make("competitive", board_size=8), b)
    assert np.array_equal(ST.position_state({"board_size": 8}, b), want)
    assert np.array_equal(ST.position_state("ludii8", b), ST.position_state(Rules.make("ludii8"), b))
    with pytest.raises(TypeError, match="rules must be"):
        ST.position_state(8, b)
    with pytest.raises(ValueError, match="unknown rules profile"):
        ST.position_state("ludii9", b)


# ------------------------------------------------------------------ 12. rendering and state helpers validate
CHECKED = [RD.render_ansi, RD.render_rgb, RD.status_lines, RD.status_fields, ST.game_info, ST.winner_name,
           ST.end_reason_name]


@pytest.mark.parametrize("f", CHECKED, ids=lambda f: f.__name__)
def test_state_readers_refuse_bad_states(f):
    s = _battle()
    bad_fields = [(V.H_PHASE, 7), (V.H_PHASE, -1), (V.H_TO_MOVE, 9), (V.H_TO_MOVE, -1), (V.H_SUB, -3), (V.H_SUB, 4)]
    if f is not ST.game_info:  # game_info (every env step) checks only the fields it reads: see its docstring
        bad_fields += [(V.H_WINNER, 11), (V.H_END_REASON, 9), (V.H_N, 3), (V.H_LAST_ACTION, 10**6)]
    for field, value in bad_fields:
        bad = s.copy()
        bad[field] = value
        with pytest.raises(InvalidStateError):
            f(bad)
    with pytest.raises(TypeError, match="kernel state"):
        f(s.tolist())
    with pytest.raises(TypeError, match="kernel state"):
        f(s.astype(np.int32))


@pytest.mark.parametrize("f", CHECKED, ids=lambda f: f.__name__)
def test_state_readers_read_good_states_as_before(f):
    s = _battle()
    f(s)
    g = play_game(R6, "random", "random", seed=5)
    f(g.state)
    assert ST.winner_name(g.state) == ST.game_info(g.state)["winner"] == g.outcome.winner_name


# ------------------------------------------------------------------ 13. a hand-made GameResult
def _result(**changes):
    g = play_game(R6, "random", "random", seed=1, record=False)
    fields = {f.name: getattr(g, f.name) for f in dataclasses.fields(g)}
    fields.update(outcome=None)
    fields.update(changes)
    return GameResult(**fields)


def test_hand_made_game_result_checks_winner_and_derived_fields():
    g = _result()  # a consistent one is accepted
    assert g.outcome == play_game(R6, "random", "random", seed=1, record=False).outcome
    with pytest.raises(ValueError, match="winner must be"):
        _result(winner="nonsense")
    with pytest.raises(TypeError, match="winner must be"):
        _result(winner=1)
    with pytest.raises(ValueError, match="result=7"):
        _result(result=7)
    with pytest.raises(ValueError, match="score_white=3.0"):
        _result(score_white=3.0)
    with pytest.raises(ValueError, match="truncated"):
        _result(truncated=not g.truncated)
    other = "white" if g.winner == "black" else "black"
    with pytest.raises(ValueError):
        _result(winner=other)
    with pytest.raises(ValueError, match="winner"):
        dataclasses.replace(g, winner="draw")  # with the outcome given, winner must still fit it


# ------------------------------------------------------------------ 14. max_min_stones
@pytest.mark.parametrize("bad,error", [(True, TypeError), (8.5, TypeError), ("8", TypeError), (None, TypeError),
                                       (100, ValueError), (3, ValueError)])
def test_max_min_stones_checks_the_board_size(bad, error):
    with pytest.raises(error, match="board_size"):
        max_min_stones(bad)


def test_max_min_stones_values():
    assert max_min_stones(8) == max_min_stones(np.int64(8)) == 31 and max_min_stones(14) == 97


# ------------------------------------------------------------------ 15. start-state layout first, colour_name
def test_an_int32_start_state_is_reported_as_such():
    s = R6.new_state().astype(np.int32)
    with pytest.raises(TypeError, match="1-D np.int64 array, not a 1-D int32 array"):
        play_game(R6, "random", "random", seed=1, start=s)


@pytest.mark.parametrize("bad,error", [(True, ValueError), (1.0, ValueError), (np.bool_(True), ValueError),
                                       (7, ValueError), (0, ValueError), ("white", TypeError), (None, ValueError)])
def test_colour_name_checks_as_outcome_does(bad, error):
    with pytest.raises(error, match="colour"):
        V.colour_name(bad)


def test_colour_name_values():
    assert V.colour_name(V.WHITE) == "white" and V.colour_name(np.int64(V.BLACK)) == "black"


# ------------------------------------------------------------------ positions (header and board) render
def test_a_records_positions_render_as_its_states_do_and_bad_ones_are_named():
    rec = play_game({"board_size": 6}, "random", "random", seed=3, max_decisions=60).record
    for pos, full in zip(rec.positions(), rec.states()):
        assert RD.render_ansi(pos) == RD.render_ansi(full)  # what `jiu replay` shows
        assert RD.status_fields(pos) == RD.status_fields(full)
        assert np.array_equal(RD.render_rgb(pos, cell=24), RD.render_rgb(full, cell=24))
    pos = rec.positions()[-1]
    for field, value, words in ((V.H_PHASE, 9, "H_PHASE is 9"), (V.H_TO_MOVE, 0, "H_TO_MOVE is 0"),
                                (V.H_LAST_TO, 36, "H_LAST_TO is 36")):
        bad = pos.copy()
        bad[field] = value
        with pytest.raises(InvalidStateError, match=f"not a valid position: header field {words}"):
            RD.render_ansi(bad)
    bad = pos.copy()
    bad[V.HDR + 5] = 3
    with pytest.raises(InvalidStateError, match="point 5 holds 3"):
        RD.render_ansi(bad)
    with pytest.raises(InvalidStateError):  # neither a whole state nor a position
        RD.render_ansi(pos[:-1])


# ------------------------------------------------------------------ 16. one integer check
@pytest.mark.parametrize("args, kwargs, message", [
    (("n", 0, 1, 3), {}, "n must be an int in 1..3, not 0"),
    (("n", 4, 1, 3), {}, "n must be an int in 1..3, not 4"),
    (("n", -1, 0), {}, "n must be an int >= 0, not -1"),
    (("n", 9, None, 8), {}, "n must be an int <= 8, not 9"),
    (("workers", 0, 1), dict(or_none=True, note="(None for all cores)"),
     "workers must be an int >= 1 or None (None for all cores), not 0"),
])
def test_check_int_names_the_setting_and_its_range(args, kwargs, message):
    from jiu_env.validate import check_int

    with pytest.raises(ValueError) as err:
        check_int(*args, **kwargs)
    assert str(err.value) == message


@pytest.mark.parametrize("bad", [True, np.bool_(False), 2.0, np.float64(2.0), "2", None, [2]])
def test_check_int_refuses_what_is_not_an_integer_with_a_type_error(bad):
    from jiu_env.validate import check_int

    with pytest.raises(TypeError) as err:
        check_int("n", bad, 1, 3)
    assert str(err.value) == f"n must be an int in 1..3, not {type(bad).__name__} {bad!r}"


def test_check_int_returns_a_python_int_and_none_where_allowed():
    from jiu_env.validate import check_int

    for value in (2, np.int8(2), np.uint64(2)):
        n = check_int("n", value, 1, 3)
        assert n == 2 and type(n) is int
    assert check_int("n", None, 1, or_none=True) is None
    assert check_int("n", 10 ** 30) == 10 ** 30  # no bound: any integer


@pytest.mark.parametrize("call, name", [
    (lambda v: N.check_board_size(v), "board_size"),
    (lambda v: play_game(R6, CountingPlayer(), CountingPlayer(), seed=v), "seed"),
    (lambda v: Outcome(V.WHITE, "no_move", battle_turns=v, decisions=3), "battle_turns"),
    (lambda v: RD.check_render_options({"cell": v}), "render option 'cell'"),
])
def test_the_cores_integer_settings_share_the_one_check(call, name):
    # the same message shape, a TypeError for a float, a ValueError for a negative value
    with pytest.raises(TypeError, match=f"^{name} must be an int.*, not float 8.5$"):
        call(8.5)
    with pytest.raises(ValueError, match=f"^{name} must be an int.*, not -8$"):
        call(-8)
