"""Action notation: exact round-trips over the whole action space, and clear parse errors."""

import pytest

from jiu_env.notation import action_to_str, point_to_str, str_to_action, str_to_point

SIZES = [4, 5, 8, 11, 14, 19, 20]


@pytest.mark.parametrize("n", SIZES)
def test_every_action_round_trips(n):
    texts = set()
    for a in range(10 * n * n + 1):
        t = action_to_str(a, n)
        assert str_to_action(t, n) == a, t
        assert str_to_action(t.upper(), n) == a and str_to_action(f"  {t.lower()} ", n) == a
        texts.add(t)
    assert len(texts) == 10 * n * n + 1  # one distinct text per action


@pytest.mark.parametrize("n", SIZES)
def test_every_point_round_trips(n):
    names = [point_to_str(p, n) for p in range(n * n)]
    assert len(set(names)) == n * n
    assert all(str_to_point(t, n) == p for p, t in enumerate(names))


@pytest.mark.parametrize("n", SIZES)
def test_forms_follow_the_encoding(n):
    P = n * n
    last = "abcdefghijklmnopqrst"[n - 1] + "0123456789ABCDEFGHIJ"[n - 1]
    assert action_to_str(0, n) == "a0" and action_to_str(P - 1, n) == last
    assert action_to_str(10 * P, n) == "stop"
    p = 1 * n + 1  # b1
    assert action_to_str(P + 0 * P + p, n) == "b1-a1"  # up
    assert action_to_str(P + 1 * P + p, n) == "b1-b2"  # right
    assert action_to_str(P + 2 * P + p, n) == "b1-c1"  # down
    assert action_to_str(P + 3 * P + p, n) == "b1-b0"  # left
    assert action_to_str(5 * P + 1 * P + p, n) == "b1xb3"
    assert action_to_str(5 * P + 2 * P + p, n) == "b1xd1"
    assert action_to_str(5 * P + 0 * P + p, n) == "jump:b1:u"  # lands off the board
    assert action_to_str(9 * P + p, n) == "^b1"
    assert action_to_str(P + 0 * P + 0, n) == "step:a0:u"


def test_standard_board_examples():
    n = 14
    assert str_to_action("g6", n) == 6 * 14 + 6
    assert str_to_action("g6-g7", n) == 196 + 1 * 196 + 90
    assert str_to_action("g6xg8", n) == 5 * 196 + 1 * 196 + 90
    assert str_to_action("^g6", n) == 9 * 196 + 90
    assert str_to_action("STOP", n) == 1960
    assert point_to_str(13 * 14 + 13, n) == "nD"
    assert str_to_action("nd", n) == 195
    assert action_to_str(str_to_action("G6XG8", n), n) == "g6xg8"


# (text, words the message must contain, the piece of text it must quote)
BAD_TEXT = [
    ("", "not", ""), ("   ", "not", "   "), ("g", "not", "g"), ("g66", "not", "g66"), ("hello", "not", "hello"),
    ("z0", "row", "z0"), ("e0", "row", "e0"), ("a4", "column", "a4"), ("a!", "column", "a!"),
    ("a0-a2", "orthogonal neighbour", "a0-a2"), ("a0-b1", "orthogonal neighbour", "a0-b1"),
    ("a0-a0", "orthogonal neighbour", "a0-a0"),
    ("a0xa1", "two points away", "a0xa1"), ("a0xb1", "two points away", "a0xb1"), ("a0xc2", "two points away", "a0xc2"),
    ("^", "not a point", ""), ("^z9", "row", "z9"), ("^a0a", "not a point", "a0a"),
    ("step:a0", "step:<point>", "step:a0"), ("step:a0:q", "step:<point>", "step:a0:q"),
    ("jump:a0:u:x", "step:<point>", "jump:a0:u:x"),
    ("step:z0:u", "row", "z0"), ("a0=a1", "not an action", "a0=a1"), ("a0-e0", "row", "e0"),
]


@pytest.mark.parametrize("text,words,quoted", BAD_TEXT)
def test_parse_errors_are_clear_value_errors(text, words, quoted):
    with pytest.raises(ValueError) as ei:
        str_to_action(text, 4)
    msg = str(ei.value)
    assert words in msg and repr(quoted) in msg


@pytest.mark.parametrize("bad", [None, 5, b"a0", ["a0"]])
def test_non_string_notation_is_a_type_error(bad):
    with pytest.raises(TypeError):
        str_to_action(bad, 8)


@pytest.mark.parametrize("n", [3, 21, 0])
def test_bad_board_size(n):
    with pytest.raises(ValueError, match="board_size"):
        str_to_action("a0", n)
    with pytest.raises(ValueError, match="board_size"):
        action_to_str(0, n)


@pytest.mark.parametrize("n", ["8", 8.0, True, None])
def test_board_size_of_the_wrong_type(n):  # a TypeError, as everywhere (a ValueError before)
    with pytest.raises(TypeError, match="board_size"):
        str_to_action("a0", n)
    with pytest.raises(TypeError, match="board_size"):
        action_to_str(0, n)


@pytest.mark.parametrize("a", [-1, 161, 10**9])
def test_action_out_of_range(a):
    with pytest.raises(ValueError, match="out of range"):
        action_to_str(a, 4)


@pytest.mark.parametrize("a", [1.5, "3", None])
def test_action_not_an_integer(a):
    with pytest.raises((TypeError, ValueError)):
        action_to_str(a, 4)


def test_point_errors():
    with pytest.raises(ValueError, match="off"):
        point_to_str(16, 4)
    with pytest.raises(ValueError, match="off"):
        point_to_str(-1, 4)
    with pytest.raises(ValueError, match="not a point"):
        str_to_point("a", 4)
