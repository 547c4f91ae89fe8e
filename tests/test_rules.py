"""One or more tests per rule of docs/rules.md §1-§7, on hand-built positions.

Positions are written as rows of ``.ox`` (see conftest); points in notation
(``c2`` = row c = 2, column 2).  Unless a test is about them, flying, the
single-jump ban, min_stones, repetition and the turn limit are switched off
(``plain_env``), so that each test sees only the rule it checks.
"""

import numpy as np
import pytest

import jiu_env
from jiu_env import Rules
from jiu_env import kernel as K
from jiu_env.notation import action_to_str

from conftest import (
    BLACK, EMPTY, PLAIN, WHITE, A, act, board_from_text, board_of, check_bookkeeping,
    kernel_legal, legal_str, make_env, plain_env, pt,
)


def ends_of(n):
    c0 = (n - 1) // 2
    return c0 * n + c0, (c0 + 1) * n + c0 + 1


def mask_of(env, agent):
    return env.observe(agent)["action_mask"]


def count(env, colour):
    return int(env.state[K.H_COUNT + colour])


# ================================================================ §1 board
@pytest.mark.parametrize("n", range(4, 21))
def test_board_size_action_count_and_diagonal_ends(n):
    e = jiu_env.raw_env(board_size=n)
    e.reset()
    assert e.action_space("white").n == 10 * n * n + 1
    c0 = (n - 1) // 2
    assert K.diagonal_ends(n) == (c0 * n + c0, (c0 + 1) * n + c0 + 1)
    assert e.board.shape == (n, n)


def test_standard_board_is_14_with_1961_actions_and_ends_g6_h7():
    e = jiu_env.raw_env()
    e.reset()
    assert e.board_size == 14 and e.rules.num_actions == 1961
    assert set(e.legal_actions()) == {6 * 14 + 6, 7 * 14 + 7}
    assert {e.action_to_str(a) for a in e.legal_actions()} == {"g6", "h7"}


# ============================================================ §2 placement
@pytest.mark.parametrize("n", range(4, 21))
def test_white_places_first_on_a_diagonal_end(n):
    e = jiu_env.raw_env(board_size=n)
    e.reset()
    assert e.phase == "placement" and e.agent_selection == "white"
    assert set(e.legal_actions()) == set(ends_of(n))
    # no other point, and no non-POINT action, is legal for the first stone
    ok = [a for a in range(10 * n * n + 1) if K.is_legal(e.state, a)]
    assert set(ok) == set(ends_of(n))


@pytest.mark.parametrize("n", [4, 5, 8, 13, 14, 20])
@pytest.mark.parametrize("choice", [0, 1])
def test_black_first_stone_goes_on_the_other_end(n, choice):
    e = jiu_env.raw_env(board_size=n)
    e.reset()
    ends = ends_of(n)
    e.step(ends[choice])
    assert e.agent_selection == "black"
    assert list(e.legal_actions()) == [ends[1 - choice]]
    assert [a for a in range(10 * n * n + 1) if K.is_legal(e.state, a)] == [ends[1 - choice]]
    e.step(ends[1 - choice])
    # from the third stone on, any empty point
    assert e.agent_selection == "white"
    assert set(e.legal_actions()) == set(range(n * n)) - set(ends)


def test_placement_alternates_and_captures_nothing():
    # N=4: White builds a square in the corner during placement; nothing happens.
    n = 4
    order = ["b1", "c2", "a0", "d3", "a1", "d2", "b0",  # white square a0 a1 b0 b1 complete here
             "d0", "a2", "d1", "a3", "c3", "b2", "c0", "b3", "c1"]
    e = jiu_env.raw_env(board_size=n)
    e.reset()
    prev = e.board.copy()
    for i, t in enumerate(order):
        colour = WHITE if i % 2 == 0 else BLACK
        assert e.agent_selection == ("white" if colour == WHITE else "black")
        assert e.phase == "placement"
        # only POINT actions on empty points (the first two: the ends)
        legal = kernel_legal(e.state)
        assert all(a < n * n and prev.ravel()[a] == EMPTY for a in legal)
        for a in range(n * n, 10 * n * n + 1):
            assert not K.is_legal(e.state, a)
        act(e, t)
        now = e.board
        if i < n * n - 1:
            diff = np.argwhere(now != prev)
            assert len(diff) == 1 and now[tuple(diff[0])] == colour  # one stone added, none moved
            assert e.subphase is None and e.pending_captures == 0
            assert e.stone_counts == {"white": (i + 2) // 2, "black": (i + 1) // 2}
            check_bookkeeping(e.state)
        prev = now
    # board full: both diagonal ends emptied, battle starts with Black to move
    assert e.phase == "battle" and e.subphase == "move"
    assert e.agent_selection == "black"
    a, b = ends_of(n)
    assert e.board.ravel()[a] == EMPTY and e.board.ravel()[b] == EMPTY
    assert e.stone_counts == {"white": 7, "black": 7}
    assert int(e.state[K.H_REP_COUNT]) == 1  # the first battle position is occurrence 1
    assert e.battle_turns == 0
    check_bookkeeping(e.state)


@pytest.mark.parametrize("n", range(4, 21))
def test_full_board_removes_ends_and_black_moves_first(n):
    # odd N: White places the last stone; even N: Black does.  Black opens the battle either way.
    s = Rules.make(board_size=n).new_state()
    K.random_placement(s, 1000 + n)
    a, b = ends_of(n)
    board = board_of(s).ravel()
    assert board[a] == EMPTY and board[b] == EMPTY
    assert int(s[K.H_TO_MOVE]) == BLACK
    assert int(s[K.H_PHASE]) in (K.PH_BATTLE, K.PH_OVER)
    p = n * n
    assert int(s[K.H_COUNT + WHITE]) == (p + 1) // 2 - 1
    assert int(s[K.H_COUNT + BLACK]) == p // 2 - 1
    assert int(s[K.H_PLACED]) == p
    check_bookkeeping(s)


def test_both_end_stones_are_removed_whichever_end_white_chose():
    n = 4
    for first in (5, 10):
        e = jiu_env.raw_env(board_size=n)
        e.reset()
        e.step(first)
        e.step(15 - first)
        rest = [p for p in range(16) if p not in (5, 10)]
        for p in rest:
            e.step(p)
        assert e.board.ravel()[5] == EMPTY and e.board.ravel()[10] == EMPTY
        assert e.stone_counts == {"white": 7, "black": 7}


# ============================================================ §3 the move
STEP_BOARD = """
......
......
..x...
......
......
.....o
"""


@pytest.mark.parametrize("d,target", [(0, "b2"), (1, "c3"), (2, "d2"), (3, "c1")])
def test_step_in_each_direction(d, target):
    n = 6
    e = plain_env(STEP_BOARD)
    assert legal_str(e) == {"c2-b2", "c2-c3", "c2-d2", "c2-c1"}
    a = n * n + d * n * n + pt("c2", n)  # docs/rules.md §7: STEP = P + d*P + p
    assert action_to_str(a, n) == f"c2-{target}"
    e.step(a)
    assert e.board.ravel()[pt(target, n)] == BLACK and e.board.ravel()[pt("c2", n)] == EMPTY
    assert e.agent_selection == "white" and e.battle_turns == 1
    check_bookkeeping(e.state)


def test_step_only_to_empty_neighbours_on_the_board():
    e = plain_env("""
        x.o...
        xx....
        o.....
        ......
        ......
        ......
    """)
    got = legal_str(e)
    assert "a0-a1" in got and "b1-a1" in got and "b1-b2" in got and "b1-c1" in got
    assert not ({"a0-b0", "b0-b1", "b1-b0", "b0-c0"} & got)  # occupied targets
    assert "b0xd0" in got  # jump over the white stone at c0
    steps = {t for t in got if "-" in t}
    assert steps == {"a0-a1", "b1-a1", "b1-b2", "b1-c1"}  # nothing off the board, no White stone


JUMP_BOARD = """
......
..o...
..xo..
......
......
......
"""


def test_jump_lands_two_away_and_removes_the_jumped_stone():
    n = 6
    e = plain_env(JUMP_BOARD)
    assert legal_str(e) == {"c2-d2", "c2-c1", "c2xa2", "c2xc4"}
    act(e, "c2xc4")
    b = e.board
    assert b[2, 4] == BLACK and b[2, 3] == EMPTY and b[2, 2] == EMPTY
    assert e.stone_counts == {"white": 1, "black": 1}
    assert e.agent_selection == "white"  # no further jump: the chain ended by itself
    assert A("c2xc4", n) == 5 * 36 + 1 * 36 + pt("c2", n)  # §7: JUMP = 5P + d*P + p
    check_bookkeeping(e.state)


def test_no_jump_over_own_stone_empty_point_or_onto_a_stone_or_off_board():
    e = plain_env("""
        ......
        .xx.o.
        ....ox
        ......
        .x.x..
        ....o.
    """)
    got = legal_str(e)
    # b1 over its own b2: no; b2 over the empty b3: no; c5 over c4 onto c3: yes;
    # c5 to the right would leave the board.
    assert {t for t in got if "x" in t} == {"c5xc3"}
    e2 = plain_env("""
        ......
        ..xoo.
        ......
        ......
        ......
        .....x
    """)
    assert "b2xb4" not in legal_str(e2)  # landing point occupied


# Black d0 jumps d1 to d2; from d2 it may turn up over c2 or go on over d3;
# b2 then b3 -> b4, where the chain ends by itself.  g5xg3 is another black jump.
CHAIN_BOARD = """
.......
...o...
..o....
xo.o...
.......
.......
....ox.
"""


def test_jumping_is_never_compulsory():
    e = plain_env(CHAIN_BOARD)
    got = legal_str(e)
    assert {"d0xd2", "g5xg3"} <= got
    assert {"d0-e0", "d0-c0", "g5-f5", "g5-g6"} <= got


def test_chain_may_turn_and_may_stop():
    n = 7
    e = plain_env(CHAIN_BOARD)
    act(e, "d0xd2")
    assert e.subphase == "chain" and e.agent_selection == "black"
    assert e.board[3, 1] == EMPTY and count(e, WHITE) == 4  # the jumped stone is gone at once
    assert legal_str(e) == {"d2xb2", "d2xd4", "stop"}  # turn up, straight on, or stop
    assert int(e.state[K.H_CHAIN]) == pt("d2", n)
    # chain: no step, no other stone's jump, no POINT, no LIFT
    for t in ("g5xg3", "d2-e2", "d2", "^d2", "d2-d1"):
        assert not K.is_legal(e.state, A(t, n))
    act(e, "d2xb2")
    assert legal_str(e) == {"b2xb4", "stop"}
    act(e, "b2xb4")
    # b4: no further jump -> the chain ended by itself and the turn passed
    assert e.agent_selection == "white" and e.subphase == "move" and e.battle_turns == 1
    assert count(e, WHITE) == 2


def test_stop_ends_the_turn_on_the_landing_point():
    e = plain_env(CHAIN_BOARD)
    act(e, "d0xd2", "stop")
    assert e.agent_selection == "white" and e.battle_turns == 1
    assert e.board[3, 2] == BLACK and count(e, WHITE) == 4
    assert int(e.state[K.H_LAST_TO]) == pt("d2", 7) and int(e.state[K.H_LAST_FROM]) == pt("d0", 7)


def test_chain_may_not_stop_when_option_off():
    e = plain_env(CHAIN_BOARD, chain_may_stop=False)
    act(e, "d0xd2")
    assert legal_str(e) == {"d2xb2", "d2xd4"}
    assert not K.is_legal(e.state, 10 * 49)
    act(e, "d2xd4")
    # d4: no further jump, so the chain ends by itself even without STOP
    assert e.agent_selection == "white" and e.battle_turns == 1


def test_stop_is_illegal_outside_a_chain():
    e = plain_env(CHAIN_BOARD)
    assert not K.is_legal(e.state, 10 * 49)
    assert "stop" not in legal_str(e)


# -------------------------------------------------------- square captures
# c2 is the point the moved stone reaches.  Each case keeps some of the eight
# black neighbours of c2 and names k, the number of complete black 2x2 squares
# through c2 (the same layout seen by a step and by a fly).
SQUARE_CASES = {
    0: ["b1", "b2", "d3"],
    1: ["b1", "b2", "c1"],
    2: ["b1", "b2", "b3", "c1", "c3"],
    3: ["b1", "b2", "b3", "c1", "c3", "d1", "d2"],
    4: ["b1", "b2", "b3", "c1", "c3", "d1", "d2", "d3"],
}
WHITE_FAR = ["a5", "a6", "b6", "f4", "g6"]


def _square_position(black, white, flyer="g0"):
    b = np.zeros((7, 7), np.int64)
    for t in black + [flyer]:
        b.ravel()[pt(t, 7)] = BLACK
    for t in white:
        b.ravel()[pt(t, 7)] = WHITE
    return b


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4])
def test_square_count_k_by_flying_into_the_point(k):
    n = 7
    black = SQUARE_CASES[k]
    e = plain_env(_square_position(black, WHITE_FAR), fly_threshold=10)
    act(e, "^g0", "c2")
    assert e.board[2, 2] == BLACK and e.board[6, 0] == EMPTY
    assert K.squares_at(e.state, pt("c2", n), BLACK) == k
    if k == 0:
        assert e.agent_selection == "white" and e.subphase == "move"
        return
    assert e.subphase == "capture" and e.pending_captures == k and e.agent_selection == "black"
    # any enemy stone, nothing else
    assert legal_str(e) == set(WHITE_FAR)
    for i, t in enumerate(WHITE_FAR[:k]):
        assert e.agent_selection == "black"
        act(e, t)
        if i < k - 1:
            assert e.pending_captures == k - 1 - i
    assert e.agent_selection == "white" and e.subphase == "move" and e.battle_turns == 1
    assert count(e, WHITE) == 5 - k


def test_step_completing_two_squares_captures_two():
    # the double square (2x3 block) formed by a step
    e = plain_env("""
        .......
        .xxx...
        .x.x...
        ..x....
        .......
        ....o.o
        .....oo
    """)
    act(e, "d2-c2")
    assert e.subphase == "capture" and e.pending_captures == 2
    act(e, "f4", "g5")
    assert e.agent_selection == "white" and count(e, WHITE) == 2


def test_step_completing_one_square_and_step_completing_none():
    board = """
        ......
        .xx...
        .x....
        ..x...
        ......
        ....oo
    """
    e = plain_env(board)
    act(e, "d2-c2")
    assert e.subphase == "capture" and e.pending_captures == 1
    e = plain_env(board)
    act(e, "d2-d3")
    assert e.agent_selection == "white" and e.subphase == "move"


def test_only_own_squares_count():
    # the moved black stone completes a 2x2 of mixed colours: nothing
    e = plain_env("""
        ......
        .ox...
        .x....
        ..x...
        ......
        ....oo
    """)
    act(e, "d2-c2")
    assert e.agent_selection == "white" and e.subphase == "move"


def test_square_not_containing_the_moved_stone_does_not_count():
    # Black moves a stone next to (but not into) an existing black square.
    e = plain_env("""
        ......
        .xx...
        .xx...
        ....x.
        ......
        ....oo
    """)
    act(e, "d4-c4")
    assert e.agent_selection == "white" and e.subphase == "move"


@pytest.mark.parametrize("white_left", [1, 2, 3])
def test_fewer_enemy_stones_than_squares_removes_them_all(white_left):
    white = ["a6", "g6", "g4"][:white_left]
    e = plain_env(_square_position(SQUARE_CASES[4], white), fly_threshold=10)
    act(e, "^g0", "c2")
    assert e.pending_captures == white_left  # capped at the enemy stones left
    for t in white:
        act(e, t)
    # White has no stone left: it cannot move and loses at the start of its turn
    assert e.phase == "over" and e.winner == "black"
    assert e.infos["white"]["end_reason"] == "no_move"
    assert e.rewards == {"white": -1.0, "black": 1.0}


def test_square_captures_may_take_stones_inside_enemy_squares():
    # White has a complete square a4 a5 b4 b5; its stones are not protected.
    e = plain_env("""
        ....oo
        .xx.oo
        .x....
        ..x...
        ......
        o.....
    """)
    act(e, "d2-c2")
    assert legal_str(e) == {"a4", "a5", "b4", "b5", "f0"}
    act(e, "b4")
    assert e.board[1, 4] == EMPTY and e.agent_selection == "white"


# Black c1 jumps c2 and lands on c3, which would complete the black square
# c3 c4 d3 d4; from c3 the chain may go on over b3 to a3.
INTERMEDIATE_BOARD = """
.......
...o...
.xo.x..
...xx..
.......
.......
....ooo
"""


def test_squares_are_counted_at_the_final_point_only():
    n = 7
    e = plain_env(INTERMEDIATE_BOARD)
    act(e, "c1xc3")
    assert e.subphase == "chain"
    assert K.squares_at(e.state, pt("c3", n), BLACK) == 1  # a square through the landing point...
    act(e, "c3xa3")
    # ...but the chain went on: the final point a3 has no square, nothing is captured
    assert e.agent_selection == "white" and e.subphase == "move"
    assert count(e, WHITE) == 3


def test_stopping_on_the_square_point_counts_it():
    e = plain_env(INTERMEDIATE_BOARD)
    act(e, "c1xc3", "stop")
    assert e.subphase == "capture" and e.pending_captures == 1 and e.agent_selection == "black"


def test_chain_ending_on_its_origin_counts_no_square():
    # c2 sits in the black square b1 b2 c1 c2 and jumps round a loop of four
    # white stones back onto c2.
    n = 7
    e = plain_env("""
        .......
        .xx....
        .xxo...
        ..o.o..
        ...o...
        .......
        ....ooo
    """)
    act(e, "c2xc4", "c4xe4", "e4xe2", "e2xc2")
    assert e.board[2, 2] == BLACK
    assert K.squares_at(e.state, pt("c2", n), BLACK) == 1
    assert e.agent_selection == "white" and e.subphase == "move"  # final point == origin: k = 0
    assert count(e, WHITE) == 3 and count(e, BLACK) == 4


def test_shuttle_re_forming_a_square_counts_every_time():
    # 褡裢: c2 steps out of the square b1 b2 c1 c2 and back in, twice.
    e = plain_env("""
        ....oo
        .xx...
        .xx...
        ......
        ......
        .....o
    """)
    act(e, "c2-d2")  # out: no square at d2
    assert e.agent_selection == "white"
    act(e, "f5-f4", "d2-c2")  # back in: the square counts
    assert e.subphase == "capture" and e.pending_captures == 1
    act(e, "a4", "f4-f5", "c2-d2", "f5-f4", "d2-c2")  # and again
    assert e.subphase == "capture" and e.pending_captures == 1
    act(e, "a5")
    assert e.agent_selection == "white" and count(e, WHITE) == 1 and e.battle_turns == 7


# ================================================================ §4 flying
FLY_BOARD = """
......
.x....
......
...x..
......
o...oo
"""


@pytest.mark.parametrize("threshold,flying", [(1, False), (2, True), (3, True), (0, False)])
def test_flying_eligibility_at_most_threshold(threshold, flying):
    e = make_env(FLY_BOARD, fly_threshold=threshold, single_jump_ban="none", min_stones=0)
    assert bool(e.state[K.H_FLY_NOW]) == flying
    lifts = {t for t in legal_str(e) if t.startswith("^")}
    assert lifts == ({"^b1", "^d3"} if flying else set())
    # a flyer keeps its steps
    assert {"b1-a1", "d3-d4"} <= legal_str(e)


def test_default_fly_threshold_is_board_size():
    n = 6
    # 6 black stones fly on a 6x6 board, 7 do not
    six = "xxx...\nxxx...\n......\n......\n......\n.....o"
    seven = "xxx...\nxxxx..\n......\n......\n......\n.....o"
    e6 = make_env(six, min_stones=0)
    e7 = make_env(seven, min_stones=0)
    assert e6.rules.fly_threshold == n
    assert e6.state[K.H_FLY_NOW] == 1 and e7.state[K.H_FLY_NOW] == 0


def test_lift_then_drop_anywhere_empty_but_its_own_point():
    n = 6
    e = plain_env(FLY_BOARD, fly_threshold=2)
    before = e.board.copy()
    act(e, "^b1")
    assert e.subphase == "drop" and e.agent_selection == "black"
    assert (e.board == before).all()  # the lifted stone stays on b1 until it lands
    assert e.stone_counts == {"white": 3, "black": 2}
    empties = {action_to_str(p, n) for p in range(n * n) if before.ravel()[p] == EMPTY}
    assert legal_str(e) == empties
    assert not K.is_legal(e.state, pt("b1", n))  # not onto its own point
    assert not K.is_legal(e.state, pt("f0", n))  # not onto a stone
    for t in ("b1-a1", "^d3", "stop", "d3-d4"):
        assert not K.is_legal(e.state, A(t, n))
    act(e, "e0")
    assert e.board[1, 1] == EMPTY and e.board[4, 0] == BLACK
    assert e.agent_selection == "white" and e.battle_turns == 1
    assert int(e.state[K.H_LAST_FROM]) == pt("b1", n) and int(e.state[K.H_LAST_TO]) == pt("e0", n)
    check_bookkeeping(e.state)


def test_flyer_keeps_jumps():
    e = plain_env("""
        ......
        .xo...
        ......
        ......
        ......
        .....o
    """, fly_threshold=3)
    assert {"b1xb3", "^b1", "b1-a1"} <= legal_str(e)


def test_flying_counts_as_a_move():
    # Black a0 is walled in (no step, both jumps land on stones); flying frees it.
    board = """
        xoo...
        o.....
        o.....
        ......
        ......
        ......
    """
    e = plain_env(board)
    assert e.phase == "over" and e.winner == "white"
    assert e.infos["black"]["end_reason"] == "no_move"
    e = plain_env(board, fly_threshold=1)
    assert e.phase == "battle" and legal_str(e) == {"^a0"}


def test_flying_and_ban_decided_at_turn_start():
    # vs_flyer: Black (not flying) faces White with threshold+1 stones: no ban at
    # the start of Black's turn.  Its first jump brings White to the threshold
    # (White now flies), yet Black may still stop: the ban is fixed for the turn.
    e = make_env("""
        xxxxx...
        ........
        ........
        ........
        ..xo.o..
        .....o..
        ........
        ......oo
    """, fly_threshold=4, single_jump_ban="vs_flyer", min_stones=0)
    assert e.state[K.H_FLY_NOW] == 0 and e.state[K.H_BAN_NOW] == 0
    assert count(e, WHITE) == 5
    act(e, "e2xe4")
    assert count(e, WHITE) == 4 and e.subphase == "chain"
    assert "stop" in legal_str(e)
    act(e, "stop")
    # White's turn: now flying-eligible
    assert e.agent_selection == "white" and e.state[K.H_FLY_NOW] == 1
    assert any(t.startswith("^") for t in legal_str(e))
    act(e, "h7-g7")
    # Black's next turn: White flies, Black does not -> the ban binds now
    assert e.agent_selection == "black" and e.state[K.H_BAN_NOW] == 1


# ---------------------------------------------------- the single-jump ban
# Black to move.  a0xa2 is a single jump (nothing to jump from a2); h0xh2 can
# go on h2xf2 and then f2xd2.  Fillers adjust the counts without adding jumps.
BAN_BLACK_BASE = ["a0", "h0", "c4", "c5"]
BAN_BLACK_MORE = ["c6", "c7", "b4", "b5"]
BAN_WHITE_BASE = ["a1", "h1", "g2", "e2"]
BAN_WHITE_MORE = ["e4", "e5", "e6", "e7"]


def _ban_env(black_flies, white_flies, mode, **extra):
    b = np.zeros((8, 8), np.int64)
    for t in BAN_BLACK_BASE + ([] if black_flies else BAN_BLACK_MORE):
        b.ravel()[pt(t, 8)] = BLACK
    for t in BAN_WHITE_BASE + ([] if white_flies else BAN_WHITE_MORE):
        b.ravel()[pt(t, 8)] = WHITE
    return make_env(b, "black", fly_threshold=5, single_jump_ban=mode, min_stones=0, **extra)


BAN_EXPECTED = {  # (mover flying, opponent flying) -> ban applies
    "none": {(True, True): False, (True, False): False, (False, True): False, (False, False): False},
    "vs_flyer": {(True, True): False, (True, False): False, (False, True): True, (False, False): False},
    "flyer": {(True, True): True, (True, False): True, (False, True): False, (False, False): False},
    "both": {(True, True): True, (True, False): True, (False, True): True, (False, False): False},
}


@pytest.mark.parametrize("mode", ["none", "vs_flyer", "flyer", "both"])
@pytest.mark.parametrize("mover_flies,opp_flies", [(True, True), (True, False), (False, True), (False, False)])
def test_single_jump_ban_modes(mode, mover_flies, opp_flies):
    ban = BAN_EXPECTED[mode][(mover_flies, opp_flies)]
    e = _ban_env(mover_flies, opp_flies, mode)
    assert bool(e.state[K.H_FLY_NOW]) == mover_flies
    assert bool(e.state[K.H_BAN_NOW]) == ban
    got = legal_str(e)
    assert "h0xh2" in got  # a jump that can take a second stone is always legal
    assert ("a0xa2" in got) == (not ban)  # a lone single jump only without the ban
    assert "a0-b0" in got  # steps are never banned
    act(e, "h0xh2")
    assert e.subphase == "chain"
    assert ("stop" in legal_str(e)) == (not ban)  # no stop after the first jump under the ban
    act(e, "h2xf2")
    assert "stop" in legal_str(e)  # after two jumps the chain may stop again
    act(e, "stop")
    assert e.agent_selection == "white" and count(e, WHITE) == (4 if opp_flies else 8) - 2


@pytest.mark.parametrize("mode", ["vs_flyer", "both"])
def test_ban_with_chain_may_stop_off(mode):
    e = _ban_env(False, True, mode, chain_may_stop=False)
    act(e, "h0xh2")
    assert legal_str(e) == {"h2xf2"}
    act(e, "h2xf2")
    assert legal_str(e) == {"f2xd2"}


# Black is walled in except b0xd0, a single jump.  White has 11 stones, Black 12.
ONLY_SINGLE_JUMP = """
xxxxxx
xxxxxx
oooooo
.ooooo
......
......
"""


@pytest.mark.parametrize("mode,loses", [("none", False), ("vs_flyer", True), ("flyer", False), ("both", True)])
def test_no_move_when_the_only_jump_is_banned(mode, loses):
    e = make_env(ONLY_SINGLE_JUMP, fly_threshold=11, single_jump_ban=mode, min_stones=4)
    if loses:
        assert e.phase == "over" and e.winner == "white"
        assert e.infos["black"]["end_reason"] == "no_move"
        assert e.rewards == {"white": 1.0, "black": -1.0}
    else:
        assert e.phase == "battle" and legal_str(e) == {"b0xd0"}


# Black has more stones (9) than there are empty points (4); c0xc2 is a lone single jump.
CROWDED = """
xxxx
xxxx
xo..
.o.o
"""


@pytest.mark.parametrize("mode,banned", [("none", False), ("vs_flyer", True), ("flyer", False), ("both", True)])
def test_ban_on_a_crowded_board(mode, banned):
    e = make_env(CROWDED, fly_threshold=3, single_jump_ban=mode, min_stones=0)
    assert bool(e.state[K.H_BAN_NOW]) == banned
    got = legal_str(e)
    assert ("c0xc2" in got) == (not banned)
    assert {"c0-d0", "b2-c2", "b3-c3"} <= got


# ========================================================= §5 end of game
def test_too_few_stones_mid_chain():
    # White has exactly 4; the first jump of a possible chain leaves 3: Black wins at once.
    e = make_env("""
        .......
        ...o...
        ..o....
        xo.o...
        .......
        .......
        xxxx...
    """, fly_threshold=0, single_jump_ban="none")
    assert "d2xb2" not in legal_str(e)
    assert count(e, WHITE) == 4
    act(e, "d0xd2")  # d2xb2 would be available, but the game is already over
    assert e.phase == "over" and e.winner == "black"
    assert e.infos["white"]["end_reason"] == "too_few_stones"
    assert e.battle_turns == 0  # a turn cut short by the loss is not counted
    assert e.rewards == {"white": -1.0, "black": 1.0}
    assert kernel_legal(e.state) == []


def test_too_few_stones_between_captures():
    # k = 4 against five White stones with min_stones = 4: the second removal ends it.
    e = plain_env(_square_position(SQUARE_CASES[4], WHITE_FAR), fly_threshold=10, min_stones=4)
    act(e, "^g0", "c2", "a5")
    assert e.phase == "battle" and e.pending_captures == 3
    act(e, "a6")
    assert e.phase == "over" and e.winner == "black" and e.pending_captures == 0
    assert e.infos["black"]["end_reason"] == "too_few_stones"
    assert e.battle_turns == 0


# Black 4 stones, White 3; c2xc4 leaves White with 2.
JUMP4_BOARD = """
.....o
..o...
..xo..
......
......
xxx...
"""


@pytest.mark.parametrize("min_stones,over", [(0, False), (1, False), (2, False), (3, True)])
def test_min_stones_values(min_stones, over):
    e = make_env(JUMP4_BOARD, fly_threshold=0, single_jump_ban="none", min_stones=min_stones)
    assert e.phase == "battle"
    act(e, "c2xc4")
    assert (e.phase == "over") == over
    if over:
        assert e.winner == "black" and e.infos["black"]["end_reason"] == "too_few_stones"
    else:
        assert e.agent_selection == "white"


def test_min_stones_zero_plays_down_to_zero():
    e = plain_env("""
        ......
        ..o...
        ..x...
        ......
        ......
        ......
    """)
    act(e, "c2xa2")
    assert e.phase == "over" and e.winner == "black"
    assert e.infos["white"]["end_reason"] == "no_move" and count(e, WHITE) == 0


@pytest.mark.parametrize("to_move", ["black", "white"])
def test_too_few_stones_at_reset(to_move):
    # White has 3 stones: whoever is to move, White loses at once.
    e = make_env("""
        ......
        .o.o..
        ......
        ...o..
        xx....
        xx....
    """, to_move=to_move)
    assert e.phase == "over" and e.winner == "black"
    assert e.infos["white"]["end_reason"] == "too_few_stones"
    assert e.terminations == {"white": True, "black": True}
    assert mask_of(e, "white").sum() == 0 and mask_of(e, "black").sum() == 0


# Black blocked: the only empty point d3 is walled by White, whose stones also
# cover every jump.  Black 11, White 4.
BLOCKED = """
xxxx
xxxo
xxxo
xoo.
"""


def test_no_move_loses():
    e = plain_env(BLOCKED)
    assert e.phase == "over" and e.winner == "white"
    assert e.infos["black"]["end_reason"] == "no_move"


def test_too_few_stones_is_checked_before_no_move():
    e = plain_env(BLOCKED, min_stones=5)
    assert e.phase == "over" and e.winner == "black"
    assert e.infos["black"]["end_reason"] == "too_few_stones"


def test_no_move_after_a_move():
    # White's step b1-b0 closes Black's last exit (both jumps land on stones).
    e = plain_env("""
        xoo.
        .o..
        o...
        ....
    """, to_move="white")
    assert e.phase == "battle"
    act(e, "b1-b0")
    assert e.phase == "over" and e.winner == "white" and e.infos["white"]["end_reason"] == "no_move"
    assert e.battle_turns == 1


SHUTTLE = """
x.....
......
......
......
......
.....o
"""
SHUTTLE_CYCLE = ["a0-a1", "f5-f4", "a1-a0", "f4-f5"]


@pytest.mark.parametrize("r,draw_at", [(2, 4), (3, 8), (5, 16)])
def test_repetition_draw_on_rth_occurrence_counting_the_reset_position(r, draw_at):
    e = plain_env(SHUTTLE, repetition_draw=r)
    assert int(e.state[K.H_REP_COUNT]) == 1
    turns = 0
    while e.phase != "over":
        act(e, SHUTTLE_CYCLE[turns % 4])
        turns += 1
        if turns % 4 == 0 and e.phase != "over":
            assert int(e.state[K.H_REP_COUNT]) == turns // 4 + 1
    assert turns == draw_at
    assert e.winner == "draw" and e.infos["white"]["end_reason"] == "repetition"
    assert e.rewards == {"white": 0.0, "black": 0.0}
    assert e.terminations == {"white": True, "black": True}
    assert e.truncations == {"white": False, "black": False}


def test_repetition_zero_never_draws():
    e = plain_env(SHUTTLE, repetition_draw=0)
    for t in range(200):
        act(e, SHUTTLE_CYCLE[t % 4])
    assert e.phase == "battle" and e.battle_turns == 200


def test_repetition_is_of_board_and_side_to_move():
    # By flying, Black cycles in 3 turns and White in 2: after 5 turns the board
    # is back but White is to move, a different position.
    e = plain_env(SHUTTLE, fly_threshold=6, repetition_draw=2)
    plan = [("^a0", "a2"), ("^f5", "f3"), ("^a2", "a4"), ("^f3", "f5"), ("^a4", "a0")]
    start = e.board.copy()
    for lift, drop in plan:
        act(e, lift, drop)
    assert (e.board == start).all() and e.agent_selection == "white"
    assert e.phase == "battle" and int(e.state[K.H_REP_COUNT]) == 1
    # Four more turns bring back (board, White to move): its second occurrence.
    for lift, drop in [("^f5", "f3"), ("^a0", "a2"), ("^f3", "f5"), ("^a2", "a0")]:
        act(e, lift, drop)
    assert (e.board == start).all() and e.phase == "over" and e.winner == "draw"


@pytest.mark.parametrize("limit", [1, 2, 7])
def test_turn_limit_is_a_truncation_with_zero_rewards(limit):
    e = make_env(SHUTTLE, wrapped=True, **{**PLAIN, "max_battle_turns": limit})
    raw = e.unwrapped
    for t in range(limit):
        assert raw.phase == "battle"
        act(e, SHUTTLE_CYCLE[t % 4])
    assert raw.phase == "over" and raw.winner is None and raw.battle_turns == limit
    assert raw.truncations == {"white": True, "black": True}
    assert raw.terminations == {"white": False, "black": False}
    assert raw.infos["white"]["end_reason"] == "turn_limit"
    for agent in e.agent_iter():
        _, reward, term, trunc, _ = e.last()
        assert reward == 0.0 and trunc and not term
        e.step(None)


def test_turn_limit_zero_disables():
    e = plain_env(SHUTTLE, max_battle_turns=0)
    for t in range(300):
        act(e, SHUTTLE_CYCLE[t % 4])
    assert e.phase == "battle" and e.battle_turns == 300


def test_repetition_is_checked_before_the_turn_limit():
    e = plain_env(SHUTTLE, repetition_draw=2, max_battle_turns=4)
    act(e, *SHUTTLE_CYCLE)
    assert e.phase == "over" and e.winner == "draw" and e.infos["white"]["end_reason"] == "repetition"
    assert e.truncations["white"] is False


def test_turns_count_only_when_the_turn_passes():
    e = plain_env(CHAIN_BOARD)
    act(e, "d0xd2")
    assert e.battle_turns == 0
    act(e, "d2xb2")
    assert e.battle_turns == 0
    act(e, "b2xb4")
    assert e.battle_turns == 1


def test_results_win_loss_through_the_wrapped_env():
    e = make_env(JUMP4_BOARD, wrapped=True, fly_threshold=0, single_jump_ban="none", min_stones=3)
    act(e, "c2xc4")
    seen = {}
    for agent in e.agent_iter():
        _, reward, term, trunc, _ = e.last()
        seen[agent] = reward
        assert term and not trunc
        e.step(None)
    assert seen == {"white": -1.0, "black": 1.0}


def test_mask_zero_for_the_other_agent_and_after_the_end():
    e = plain_env(JUMP4_BOARD, min_stones=3)
    assert mask_of(e, "black").sum() == len(kernel_legal(e.state)) > 0
    assert mask_of(e, "white").sum() == 0
    act(e, "f0-e0")
    assert mask_of(e, "black").sum() == 0 and mask_of(e, "white").sum() == len(kernel_legal(e.state)) > 0
    act(e, "a5-a4", "c2xc4")  # White drops to 2 < 3
    assert e.phase == "over"
    assert mask_of(e, "black").sum() == 0 and mask_of(e, "white").sum() == 0
    assert kernel_legal(e.state) == []
    assert not any(K.is_legal(e.state, a) for a in range(10 * 36 + 1))


# ============================================================ §6 options
def test_profile_values():
    c = Rules.make("competitive")
    assert (c.board_size, c.fly_threshold, c.single_jump_ban, c.min_stones, c.chain_may_stop,
            c.repetition_draw, c.max_battle_turns) == (14, 14, "vs_flyer", 4, True, 3, 1000)
    t = Rules.make("traditional")
    assert (t.board_size, t.fly_threshold, t.single_jump_ban, t.min_stones, t.chain_may_stop,
            t.repetition_draw, t.max_battle_turns) == (14, 14, "none", 4, True, 3, 1000)
    l8 = Rules.make("ludii8")
    assert (l8.board_size, l8.fly_threshold, l8.single_jump_ban, l8.min_stones, l8.chain_may_stop,
            l8.repetition_draw, l8.max_battle_turns) == (8, 7, "flyer", 4, True, 3, 1000)
    assert jiu_env.raw_env().rules == c


@pytest.mark.parametrize("n", [4, 5, 11, 20])
def test_profile_fly_threshold_follows_board_size(n):
    assert Rules.make("competitive", board_size=n).fly_threshold == n
    assert Rules.make("traditional", board_size=n).fly_threshold == n
    assert Rules.make("ludii8", board_size=n).fly_threshold == n - 1
    assert Rules.make("competitive", board_size=n, fly_threshold=2).fly_threshold == 2


def test_ludii8_flies_below_eight():
    seven = """
        xxxxxxx.
        ........
        ........
        ........
        ........
        ........
        ........
        ....oooo
    """
    eight = seven.replace("xxxxxxx.", "xxxxxxxx")
    e7 = make_env(seven, profile="ludii8")
    e8 = make_env(eight, profile="ludii8")
    assert e7.state[K.H_FLY_NOW] == 1 and e8.state[K.H_FLY_NOW] == 0
    # ludii8's ban applies to the flying mover
    assert e7.state[K.H_BAN_NOW] == 1 and e8.state[K.H_BAN_NOW] == 0


def test_traditional_has_no_ban():
    e = _ban_env(False, True, "none")
    e2 = make_env(e.board, "black", profile="traditional", board_size=8, fly_threshold=5, min_stones=0)
    assert e2.state[K.H_BAN_NOW] == 0 and "a0xa2" in legal_str(e2)
    e3 = make_env(e.board, "black", profile="competitive", board_size=8, fly_threshold=5, min_stones=0)
    assert e3.state[K.H_BAN_NOW] == 1 and "a0xa2" not in legal_str(e3)


@pytest.mark.parametrize("bad", [
    dict(board_size=3), dict(board_size=21), dict(fly_threshold=-1), dict(single_jump_ban="sometimes"),
    dict(min_stones=-1), dict(repetition_draw=-1), dict(max_battle_turns=-1), dict(chain_may_stop="yes"),
    dict(fly_treshold=4),
])
def test_unknown_or_out_of_range_options_are_errors(bad):
    with pytest.raises((ValueError, TypeError)) as ei:
        Rules.make("competitive", **bad)
    assert next(iter(bad)) in str(ei.value)


def test_hostile_rules_options_name_the_problem():
    for bad in (["none"], {"none": 1}, ("none",)):
        with pytest.raises(ValueError, match="single_jump_ban.*is not one of"):
            Rules.make("competitive", single_jump_ban=bad)
    with pytest.raises(ValueError, match="profile"):
        Rules(profile=["x"])
    # min_stones above the stones each side has after placement would decide every game at turn 0
    for n in (4, 5, 6, 14):
        top = n * n // 2 - 1
        assert Rules.make("competitive", board_size=n, min_stones=top).min_stones == top
        with pytest.raises(ValueError, match="min_stones.*battle turn 0"):
            Rules.make("competitive", board_size=n, min_stones=top + 1)
    # the largest allowed value still gives a battle: nobody loses before a capture
    r = Rules.make("competitive", board_size=6, min_stones=17)
    s = r.new_state()
    K.random_placement(s, 3)
    assert s[K.H_PHASE] == K.PH_BATTLE


def test_position_state_matches_env_reset():
    b = board_from_text(JUMP_BOARD)
    r = Rules.make(board_size=6, **PLAIN)
    s = jiu_env.position_state(r, b, "black")
    e = plain_env(JUMP_BOARD)
    assert (s == e.state).all()


# ------------------------------------------- long-range repetition (§5.2.3)
def _cycle_moves():
    """Black walks a 6-cycle, White a 340-cycle (rows 3..19 of a 20x20 board).

    The start position (Black to move) comes back only every 2 * lcm(6, 340) =
    2040 turns: its occurrences are turn starts 0, 2040 and 4080.
    """
    n = 20
    black = [(0, 0), (0, 1), (0, 2), (1, 2), (1, 1), (1, 0)]
    white = [(r, 0) for r in range(3, 20)]
    for c in range(1, 20):
        rows = range(19, 3, -1) if c % 2 == 1 else range(4, 20)
        white += [(r, c) for r in rows]
    white += [(3, c) for c in range(19, 0, -1)]
    assert len(white) == len(set(white)) == 340
    for cyc in (black, white):
        for (r0, c0), (r1, c1) in zip(cyc, cyc[1:] + cyc[:1]):
            assert abs(r0 - r1) + abs(c0 - c1) == 1

    def step(a, b):
        d = {(-1, 0): 0, (0, 1): 1, (1, 0): 2, (0, -1): 3}[(b[0] - a[0], b[1] - a[1])]
        return n * n + d * n * n + a[0] * n + a[1]

    moves = []
    for k in range(2040):
        moves.append(step(black[k % 6], black[(k + 1) % 6]))
        moves.append(step(white[k % 340], white[(k + 1) % 340]))
    board = np.zeros((n, n), np.int64)
    board[black[0]] = BLACK
    board[white[0]] = WHITE
    return board, moves


def _play_cycle(max_battle_turns, **options):
    board, moves = _cycle_moves()
    r = Rules.make(board_size=20, **{**PLAIN, "repetition_draw": 3, "max_battle_turns": max_battle_turns, **options})
    s = jiu_env.position_state(r, board, "black")
    for t, a in enumerate(moves):
        assert s[K.H_PHASE] == K.PH_BATTLE, f"ended early at turn {t}"
        assert K.is_legal(s, a)
        K.apply_action(s, a)
    return s


def test_repetition_far_apart_is_seen_with_a_turn_limit():
    s = _play_cycle(5000)
    assert int(s[K.H_TURNS]) == 4080
    assert s[K.H_PHASE] == K.PH_OVER and s[K.H_WINNER] == K.DRAW and s[K.H_END_REASON] == K.END_REPETITION


def _cycle_last_turn(max_battle_turns, **options):
    """Play the cycle but its last turn; return the state and that turn's action."""
    board, moves = _cycle_moves()
    r = Rules.make(board_size=20, **{**PLAIN, "repetition_draw": 3, "max_battle_turns": max_battle_turns, **options})
    s = jiu_env.position_state(r, board, "black")
    for a in moves[:-1]:
        K.apply_action(s, a)
    assert s[K.H_PHASE] == K.PH_BATTLE
    return s, moves[-1]


def test_repetition_far_apart_is_missed_beyond_the_default_history():
    # documented limit: without a turn limit the history holds the last 2048 turn starts (history_size = 0),
    # so the third occurrence, 2040 turns after the second and 4080 after the first, is not seen
    s, last = _cycle_last_turn(0)
    assert int(s[K.H_CAP]) == 2048
    K.apply_action(s, last)
    assert s[K.H_PHASE] == K.PH_BATTLE and int(s[K.H_REP_COUNT]) == 2


@pytest.mark.parametrize("history_size", [4081, 5000])
def test_history_size_makes_a_far_repetition_seen_without_a_turn_limit(history_size):
    s = _play_cycle(0, history_size=history_size)
    assert int(s[K.H_CAP]) == history_size and int(s[K.H_TURNS]) == 4080
    assert s[K.H_PHASE] == K.PH_OVER and s[K.H_WINNER] == K.DRAW and s[K.H_END_REASON] == K.END_REPETITION


def test_history_size_smaller_than_the_cycle_misses_it():
    s, last = _cycle_last_turn(0, history_size=4080)  # the first occurrence has just left the ring
    K.apply_action(s, last)
    assert s[K.H_PHASE] == K.PH_BATTLE and int(s[K.H_REP_COUNT]) == 2


def test_history_size_defaults_and_exactness():
    assert Rules.make(max_battle_turns=0).history_capacity == 2048
    assert Rules.make(max_battle_turns=300).history_capacity == 301
    assert Rules.make(max_battle_turns=300).repetition_exact
    assert not Rules.make(max_battle_turns=0).repetition_exact
    assert not Rules.make(max_battle_turns=0, history_size=10 ** 6).repetition_exact
    assert not Rules.make(max_battle_turns=300, history_size=100).repetition_exact
    assert Rules.make(max_battle_turns=300, history_size=400).history_capacity == 400
    for r in (Rules.make(board_size=6, max_battle_turns=0, history_size=77), Rules.make(board_size=6)):
        assert r.new_state().size == K.HDR + 36 + r.history_capacity


# ===================================================== §9 other engines' options
# ------------------------------------------------------------- flyer_moves
FLYER_BOARD = """
......
.xo...
......
......
......
.....o
"""


def test_fly_only_flyer_may_only_fly():
    n = 6
    e = plain_env(FLYER_BOARD, fly_threshold=3, flyer_moves="fly_only")
    assert e.state[K.H_FLY_NOW] == 1
    assert legal_str(e) == {"^b1"}  # no b1xb3, no steps
    for t in ("b1xb3", "b1-a1", "b1-c1", "b1-b0"):
        assert not K.is_legal(e.state, A(t, n))
    from jiu_env.state import explain_illegal
    assert "fly_only" in explain_illegal(e.state, A("b1xb3", n))
    act(e, "^b1", "e4")
    assert e.board[4, 4] == BLACK and e.agent_selection == "white"
    check_bookkeeping(e.state)


def test_fly_only_leaves_a_side_that_does_not_fly_its_steps_and_jumps():
    # with flying off Black steps and jumps; White (2 stones) flies at threshold 2, and then may only fly
    e = plain_env(FLYER_BOARD, fly_threshold=0, flyer_moves="fly_only")
    assert e.state[K.H_FLY_NOW] == 0 and {"b1xb3", "b1-a1"} <= legal_str(e)
    e = plain_env(FLYER_BOARD, "white", fly_threshold=2, flyer_moves="fly_only")
    assert legal_str(e) == {"^b2", "^f5"}  # White flies: b2xb0 is not legal
    e = plain_env(FLYER_BOARD, "white", fly_threshold=1, flyer_moves="fly_only")
    assert "b2xb0" in legal_str(e) and not any(t.startswith("^") for t in legal_str(e))


def test_fly_only_flying_counts_as_a_move():
    # the walled-in a0 of test_flying_counts_as_a_move: with fly_only it still has a move
    board = """
        xoo...
        o.....
        o.....
        ......
        ......
        ......
    """
    e = plain_env(board, fly_threshold=1, flyer_moves="fly_only")
    assert e.phase == "battle" and legal_str(e) == {"^a0"}


def test_fly_only_observation_planes():
    from jiu_env.vocab import PL_ENEMY_FLYING, PL_OWN_FLYING
    e = plain_env(FLYER_BOARD, fly_threshold=3, flyer_moves="fly_only")
    obs = e.observe("black")
    assert obs["observation"][0, 0, PL_OWN_FLYING] == 1.0 and obs["observation"][0, 0, PL_ENEMY_FLYING] == 1.0
    assert {e.unwrapped.action_to_str(a) for a in np.flatnonzero(obs["action_mask"])} == {"^b1"}
    assert e.observe("white")["observation"][0, 0, PL_ENEMY_FLYING] == 1.0


def test_fly_only_with_the_ban_on_the_other_side():
    # vs_flyer: Black (not flying) faces a flying White that may only fly; Black's single jump is banned.
    e = make_env("""
        xo.o....
        xxxxxxxx
        xxxxxxxx
        ........
        ........
        ........
        ........
        ......oo
    """, board_size=8, fly_threshold=5, single_jump_ban="vs_flyer", min_stones=0, flyer_moves="fly_only")
    assert e.state[K.H_BAN_NOW] == 1 and "a0xa2" in legal_str(e)  # a0xa2xa4 takes two
    act(e, "a0xa2")
    assert "stop" not in legal_str(e)  # the ban: no stopping after one jump
    act(e, "a2xa4")
    assert e.agent_selection == "white" and e.state[K.H_FLY_NOW] == 1 and e.state[K.H_BAN_NOW] == 0
    assert legal_str(e) == {"^h6", "^h7"}


# -------------------------------------------------------- min_stones_check
def test_turn_end_plays_the_chain_to_the_end():
    # test_too_few_stones_mid_chain with turn_end: the chain goes on past White's fourth stone
    board = """
        .......
        ...o...
        ..o....
        xo.o...
        .......
        .......
        xxxx...
    """
    e = make_env(board, fly_threshold=0, single_jump_ban="none", min_stones_check="turn_end")
    act(e, "d0xd2")
    assert e.phase == "battle" and e.subphase == "chain" and count(e, WHITE) == 3
    act(e, "d2xb2")
    assert e.phase == "battle" and e.subphase == "chain" and count(e, WHITE) == 2
    act(e, "stop")
    # the turn is complete: at the start of White's turn White has 2 < 4 stones
    assert e.phase == "over" and e.winner == "black"
    assert e.infos["white"]["end_reason"] == "too_few_stones"
    assert e.battle_turns == 1  # the turn passed, so it counts


def test_turn_end_plays_every_square_capture():
    # test_too_few_stones_between_captures with turn_end: all four captures are made
    e = plain_env(_square_position(SQUARE_CASES[4], WHITE_FAR), fly_threshold=10, min_stones=4,
                  min_stones_check="turn_end")
    act(e, "^g0", "c2", "a5", "a6")
    assert e.phase == "battle" and e.pending_captures == 2 and count(e, WHITE) == 3
    act(e, "b6", "f4")
    assert e.phase == "over" and e.winner == "black" and count(e, WHITE) == 1
    assert e.infos["black"]["end_reason"] == "too_few_stones"
    assert e.battle_turns == 1


def test_turn_end_still_checks_at_the_start_of_every_turn():
    board = """
        xxxx..
        ......
        ......
        ......
        ......
        ...ooo
    """
    e = make_env(board, "white", min_stones=4, fly_threshold=0, min_stones_check="turn_end")
    assert e.phase == "over" and e.winner == "black" and e.infos["white"]["end_reason"] == "too_few_stones"


def test_turn_end_a_move_without_captures_ends_the_turn_normally():
    e = make_env(JUMP4_BOARD, min_stones=2, fly_threshold=0, single_jump_ban="none", min_stones_check="turn_end")
    act(e, "c2xc4")
    assert e.phase == "battle" and e.agent_selection == "white" and count(e, WHITE) == 2


# -------------------------------------------------------- square_on_return
LOOP_BOARD = """
.......
.xx....
.xxo...
..o.o..
...o...
.......
....ooo
"""


def test_square_on_return_counts_a_chain_back_on_its_origin():
    n = 7
    e = plain_env(LOOP_BOARD, square_on_return=True)
    act(e, "c2xc4", "c4xe4", "e4xe2", "e2xc2")
    assert e.board[2, 2] == BLACK
    assert e.subphase == "capture" and e.pending_captures == 1 and e.agent_selection == "black"
    act(e, "g6")
    assert e.agent_selection == "white" and count(e, WHITE) == 2
    assert int(e.state[K.H_LAST_FROM]) == int(e.state[K.H_LAST_TO]) == pt("c2", n)


def test_square_on_return_changes_nothing_else():
    # a step or a fly never ends on its origin; the shuttle counts as before
    e = plain_env(INTERMEDIATE_BOARD, square_on_return=True)
    act(e, "c1xc3", "c3xa3")
    assert e.agent_selection == "white" and count(e, WHITE) == 3


# --------------------------------------------------------------- formations
def _line_env(rows, flyer="g6", fly=False, **options):
    n = len(rows)
    b = board_from_text("\n".join(rows))
    kw = dict(fly_threshold=40 if fly else 0, formations=True)
    kw.update(options)
    return plain_env(b, **kw), n


# row a is black but for a6; the black stone on b6 can step in
ROW_A_ALMOST_BLACK = [
    "xxxxxx.",
    "......x",
    ".......",
    ".......",
    "o.o.o.o",
    ".......",
    "ooo....",
]


def test_formations_full_row_captures_two():
    # 枪: the step b6-a6 completes row a (all black): two captures, no square
    e, n = _line_env(ROW_A_ALMOST_BLACK)
    act(e, "b6-a6")
    assert K.squares_at(e.state, pt("a6", n), BLACK) == 0 and K.full_lines_at(e.state, pt("a6", n), BLACK) == 1
    assert e.subphase == "capture" and e.pending_captures == 2
    act(e, "e0", "e2")
    assert e.agent_selection == "white" and count(e, WHITE) == 5


def test_formations_off_by_default():
    e, n = _line_env(ROW_A_ALMOST_BLACK, formations=False)
    act(e, "b6-a6")
    assert e.agent_selection == "white" and count(e, WHITE) == 7


@pytest.mark.parametrize("squares", [1, 2])
def test_formations_line_and_squares_add_up(squares):
    # 煞: the step d3-d2 completes column 2 and one or two squares at d2: 3 or 4 captures
    n = 7
    e = plain_env(f"""
        ..x...o
        ..x....
        .xx....
        .x.x...
        {'.xx....' if squares == 2 else '..x....'}
        ..x...o
        ..x.ooo
    """, formations=True)
    act(e, "d3-d2")
    q = pt("d2", n)
    assert K.full_lines_at(e.state, q, BLACK) == 1 and K.squares_at(e.state, q, BLACK) == squares
    assert e.subphase == "capture" and e.pending_captures == 2 + squares


def _gate_board(row_full, col_full):
    """Black fills the eight neighbours of d3 and, optionally, row d and / or column 3 (d3 itself left
    empty), with a black stone on a0 to fly into d3; nine white stones far from it."""
    b = np.zeros((7, 7), np.int64)
    b[2:5, 2:5] = BLACK
    if row_full:
        b[3, :] = BLACK
    if col_full:
        b[:, 3] = BLACK
    b[3, 3] = EMPTY
    b[0, 0] = BLACK
    for r, c in ((6, 0), (6, 1), (6, 2), (6, 4), (6, 5), (6, 6), (5, 0), (5, 6), (0, 6)):
        b[r, c] = WHITE
    return b


@pytest.mark.parametrize("row_full,col_full,expect", [(False, False, 4), (True, False, 6), (True, True, 8)])
def test_formations_trident_and_cross(row_full, col_full, expect):
    # a four-gate alone: 4; 三叉黑铁 (a full line and a four-gate on it): 2 + 4 = 6; 恰 (a cross of two full
    # lines with the four-gate at the crossing): 2 + 2 + 4 = 8.  The flying stone lands in the gate.
    n = 7
    e = plain_env(_gate_board(row_full, col_full), fly_threshold=40, formations=True)
    act(e, "^a0", "d3")
    q = pt("d3", n)
    assert K.squares_at(e.state, q, BLACK) == 4 and K.full_lines_at(e.state, q, BLACK) == row_full + col_full
    assert e.subphase == "capture" and e.pending_captures == expect


def test_formations_are_capped_by_the_enemy_stones():
    e, n = _line_env([
        "xxxxxx.",
        "......x",
        ".......",
        ".......",
        ".......",
        ".......",
        "o......",
    ])
    act(e, "b6-a6")
    assert e.phase == "battle" and e.agent_selection == "black" and e.pending_captures == 1
    act(e, "g0")
    assert count(e, WHITE) == 0


def test_formations_need_the_move_to_end_on_the_line():
    # a full row elsewhere on the board is not counted: only lines through the final point
    e, n = _line_env([
        "xxxxxxx",
        ".......",
        "x......",
        ".......",
        "o.o.o.o",
        ".......",
        "ooo....",
    ])
    act(e, "c0-d0")
    assert e.agent_selection == "white" and count(e, WHITE) == 7


# ------------------------------------------------------- ban_after_capture
# 6x6 under the competitive rules (fly_threshold 6, the ban on the strong side: vs_flyer), White to move.
# White has 9 stones and Black 7: nobody flies and the ban does not bind at the turn start.  A jump of
# White takes Black down to 6, the flying threshold: JQ_Chess decides the ban again after the capture
# (docs/rules.md §10.6), so with ban_after_capture that jump must allow a second one.
LONE_JUMP_BOARD = """
    ox....
    ......
    xxx.oo
    xx..oo
    ....oo
    {row5}
"""
CHAIN_JUMP_BOARD = """
    x.....
    ......
    xxx.oo
    x...oo
    ..x.oo
    x.o.oo
"""


def _ban_after_state(text, on):
    from reference_model import RefGame

    r = Rules.make("competitive", board_size=6, ban_after_capture=on)
    s = jiu_env.position_state(r, board_from_text(text), "white")
    return r, s, RefGame.from_position(r, board_of(s), WHITE)


def _stones(s, colour):
    return int(s[K.H_COUNT + colour])


@pytest.mark.parametrize("on", [False, True])
def test_ban_after_capture_refuses_a_lone_jump_to_the_flying_threshold(on):
    r, s, ref = _ban_after_state(LONE_JUMP_BOARD.format(row5="x...oo"), on)
    assert (_stones(s, WHITE), _stones(s, BLACK), int(s[K.H_BAN_NOW])) == (9, 7, 0)
    a = K.encode_jump(pt("a0", 6), 1, 36)  # a0 over a1 to a2, no second jump from there
    assert K.ban_applies(s, WHITE) is False and K.single_jump_banned(s, WHITE) is on
    mask = np.zeros(r.num_actions, np.int8)
    K.legal_mask(s, mask)
    assert bool(mask[a]) is K.is_legal(s, a) is (a in kernel_legal(s)) is (a in ref.legal()) is (not on)
    assert ref.legal() == set(kernel_legal(s))
    e = make_env(LONE_JUMP_BOARD.format(row5="x...oo"), "white", ban_after_capture=on)
    assert bool(mask_of(e, "white")[a]) is not on
    t = s.copy()
    if on:
        with pytest.raises(ValueError, match="ban_after_capture"):
            K.apply_action(t, a)
        assert (t == s).all()
    else:  # taken: Black is down to 6 and flies from its turn on
        K.apply_action(t, a)
        ref.apply(a)
        assert (_stones(t, BLACK), int(t[K.H_TO_MOVE]), int(t[K.H_FLY_NOW])) == (6, BLACK, 1)
        assert ref.legal() == set(kernel_legal(t))


def test_ban_after_capture_leaves_a_jump_that_stays_above_the_threshold():
    # one more black stone: the jump leaves 7, above the threshold, and stays legal with the option
    r, s, ref = _ban_after_state(LONE_JUMP_BOARD.format(row5="xx..oo"), True)
    a = K.encode_jump(0, 1, 36)
    assert _stones(s, BLACK) == 8 and not K.single_jump_banned(s, WHITE)
    assert K.is_legal(s, a) and a in ref.legal() and ref.legal() == set(kernel_legal(s))


@pytest.mark.parametrize("on", [False, True])
def test_ban_after_capture_keeps_the_chain_going(on):
    # f2 jumps e2 to d2 (Black down to 6), and d2 may jump c2 next: the first jump is legal either way;
    # with the option the chain may not stop after it (JQ_Chess refuses to finish a move with one capture)
    r, s, ref = _ban_after_state(CHAIN_JUMP_BOARD, on)
    assert (_stones(s, WHITE), _stones(s, BLACK), int(s[K.H_BAN_NOW])) == (9, 7, 0)
    first = K.encode_jump(pt("f2", 6), 0, 36)
    assert K.is_legal(s, first) and first in ref.legal()
    K.apply_action(s, first)
    ref.apply(first)
    stop = K.stop_action(36)
    assert s[K.H_SUB] == K.SUB_CHAIN and _stones(s, BLACK) == 6
    assert K.is_legal(s, stop) is (stop in ref.legal()) is (not on)
    assert ref.legal() == set(kernel_legal(s))
    second = K.encode_jump(pt("d2", 6), 0, 36)
    assert K.is_legal(s, second)
    if on:
        with pytest.raises(ValueError, match="chain may not stop"):
            K.apply_action(s.copy(), stop)
    K.apply_action(s, second)
    ref.apply(second)
    assert _stones(s, BLACK) == 5 and s[K.H_TO_MOVE] == BLACK and ref.legal() == set(kernel_legal(s))


def test_validate_state_takes_ban_after_capture_only_as_0_or_1():
    from reference_model import ref_from_state
    from jiu_env.rules import rules_from_state
    from jiu_env.validate import InvalidStateError, validate_state

    r, s, _ = _ban_after_state(LONE_JUMP_BOARD.format(row5="x...oo"), False)
    for v in (0, 1):
        t = s.copy()
        t[K.H_BAN_AFTER] = v
        validate_state(t)
        assert rules_from_state(t).ban_after_capture is bool(v) and ref_from_state(t).ban_after is bool(v)
        assert (K.encode_jump(0, 1, 36) in kernel_legal(t)) is (v == 0)
    for v in (2, -1, 1 << 40):
        t = s.copy()
        t[K.H_BAN_AFTER] = v
        with pytest.raises(InvalidStateError, match=r"H_BAN_AFTER=.* \(ban_after_capture\) is not in 0..1"):
            validate_state(t)
        with pytest.raises(ValueError, match="ban_after_capture"):
            ref_from_state(t)
    assert K.H_BAN_AFTER in K.RULE_FIELDS and K.H_BAN_AFTER < K.HDR


# ------------------------------------------------------------ the profile
def test_jqchess8_profile():
    r = Rules.make("jqchess8")
    assert (r.board_size, r.fly_threshold, r.single_jump_ban, r.min_stones, r.chain_may_stop, r.repetition_draw,
            r.flyer_moves, r.min_stones_check, r.square_on_return, r.formations, r.ban_after_capture) == (
        8, 8, "vs_flyer", 4, True, 3, "fly_only", "turn_end", True, False, True)
    assert Rules.make("jqchess8", board_size=10).fly_threshold == 10
    assert Rules.make(r.to_dict()) == r
    r2 = r.replace(square_on_return=False)
    assert Rules.make(r2.to_dict()) == r2 and r2.to_dict()["square_on_return"] is False
    # the option keeps the profile's value through to_dict (left out) and is listed where it differs
    assert "ban_after_capture" not in r.to_dict()
    r3 = r.replace(ban_after_capture=False)
    assert r3.to_dict()["ban_after_capture"] is False and Rules.make(r3.to_dict()) == r3
    assert Rules.make("competitive", ban_after_capture=True).to_dict()["ban_after_capture"] is True


def test_default_profiles_write_the_same_dict_as_before():
    # the later options are left out of to_dict() where they keep the profile's value
    for prof in ("competitive", "traditional", "ludii8"):
        d = Rules.make(prof).to_dict()
        assert set(d) == {"board_size", "fly_threshold", "single_jump_ban", "min_stones", "chain_may_stop",
                          "repetition_draw", "max_battle_turns", "profile"}
    assert Rules.make(formations=True).to_dict()["formations"] is True


@pytest.mark.parametrize("options", [
    dict(flyer_moves="fly_only"), dict(min_stones_check="turn_end"), dict(square_on_return=True),
    dict(formations=True), dict(history_size=5000, max_battle_turns=0), dict(ban_after_capture=True),
])
def test_options_are_stored_in_the_state(options):
    from jiu_env.rules import rules_from_state
    r = Rules.make("competitive", board_size=6, **options)
    assert rules_from_state(r.new_state()) == Rules(**{**r.to_dict(), "profile": "competitive"})


@pytest.mark.parametrize("bad", [
    dict(flyer_moves="walk_only"), dict(flyer_moves=1), dict(min_stones_check="never"),
    dict(square_on_return="yes"), dict(square_on_return=1), dict(formations=None), dict(history_size=-1),
    dict(history_size=1), dict(history_size=2.5), dict(history_size=10_000_000),
    dict(ban_after_capture=1), dict(ban_after_capture="yes"), dict(ban_after_capture=None),
])
def test_new_options_reject_bad_values(bad):
    with pytest.raises((ValueError, TypeError)) as ei:
        Rules.make("competitive", **bad)
    assert next(iter(bad)) in str(ei.value)


def test_a_new_board_size_re_derives_the_fly_threshold_from_a_rules_or_its_dict():
    from jiu_env.rules import Rules

    r8 = Rules.make("competitive", board_size=8)
    assert Rules.make(r8, board_size=14).fly_threshold == 14
    assert Rules.make(r8.to_dict(), board_size=14).fly_threshold == 14  # the dict holds fly_threshold=8
    custom = Rules.make("competitive", board_size=8, fly_threshold=5)
    assert Rules.make(custom, board_size=8).fly_threshold == 5  # the same size keeps the threshold set
    assert Rules.make(custom.to_dict(), board_size=8).fly_threshold == 5
    assert Rules.make(custom.to_dict(), board_size=10, fly_threshold=6).fly_threshold == 6
