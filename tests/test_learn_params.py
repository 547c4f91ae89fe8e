"""The learning configs' range checks (:mod:`jiu_env.learn.params`): one message shape, every bad kind refused."""

import json
import math
from dataclasses import asdict

import numpy as np
import pytest

from jiu_env import validate
from jiu_env.learn.data import DataConfig
from jiu_env.learn.params import check_fields, check_int, check_number
from jiu_env.learn.selfplay import SelfPlayConfig
from jiu_env.learn.train import TrainConfig


def test_check_int_and_number_accept_and_return_values_in_range():
    assert check_int("n", 3, 1, 3) == 3 and check_int("n", 1, 1, 3) == 1
    assert check_number("x", 1, 0, 1) == 1.0 and isinstance(check_number("x", 1, 0, 1), float)
    assert check_number("x", 0.5, 0, 1, lo_open=True) == 0.5


def test_check_int_is_the_librarys_one_integer_check_and_takes_numpy_integers():
    assert check_int is validate.check_int
    n = check_int("n", np.int16(2), 1, 3)
    assert n == 2 and type(n) is int


@pytest.mark.parametrize("value", [0, 4, -1])
def test_check_int_refuses_out_of_range(value):
    with pytest.raises(ValueError) as err:
        check_int("n", value, 1, 3)
    assert str(err.value) == f"n must be an int in 1..3, not {value!r}"


@pytest.mark.parametrize("value", [True, np.bool_(True), 2.0, "2", None])
def test_check_int_refuses_what_is_not_an_integer_with_a_type_error(value):
    with pytest.raises(TypeError) as err:
        check_int("n", value, 1, 3)
    assert str(err.value) == f"n must be an int in 1..3, not {type(value).__name__} {value!r}"


@pytest.mark.parametrize("value", [-0.1, 1.5, math.nan, math.inf, -math.inf])
def test_check_number_refuses(value):
    with pytest.raises(ValueError) as err:
        check_number("x", value, 0, 1)
    assert str(err.value) == f"x must be a number in 0..1, not {value!r}"


@pytest.mark.parametrize("value", [True, "0.5", None, np.int64(1)])
def test_check_number_refuses_what_json_would_not_write_back_with_a_type_error(value):
    with pytest.raises(TypeError) as err:
        check_number("x", value, 0, 1)
    assert str(err.value) == f"x must be a number in 0..1, not {type(value).__name__} {value!r}"


def test_open_lower_bound_is_named_and_refused():
    with pytest.raises(ValueError) as err:
        check_number("lr", 0, 0, 1, lo_open=True)
    assert str(err.value) == "lr must be a number > 0 and <= 1, not 0"


def test_check_fields_names_the_first_bad_attribute():
    class C:
        a, b, x = 1, 9, 0.5

    check_fields(C, ints={"a": (0, 1), "b": (0, 9)}, numbers={"x": (0, 1)})
    with pytest.raises(ValueError, match="^b must be an int in 0..8, not 9$"):
        check_fields(C, ints={"a": (0, 1), "b": (0, 8)})
    with pytest.raises(ValueError, match="^x must be a number in 0..0.25, not 0.5$"):
        check_fields(C, numbers={"x": (0, 0.25)})


SP = dict(net="net.pt", net_sha256="0" * 64)


@pytest.mark.parametrize("make, field, bad, words", [
    (DataConfig, "seed", -1, "seed must be an int in 0.."),
    (DataConfig, "chunk_games", 0, "chunk_games must be an int in 1..10000, not 0"),
    (DataConfig, "random_opening", True, "random_opening must be an int in 0..64, not bool True"),
    (DataConfig, "explore", math.nan, "explore must be a number in 0..1, not nan"),
    (DataConfig, "soft", -1.0, "soft (a temperature in centistones) must be a number in 0..100000, not -1.0"),
    (lambda **kw: SelfPlayConfig(**SP, **kw), "sims", 0, "sims must be an int in 1..100000, not 0"),
    (lambda **kw: SelfPlayConfig(**SP, **kw), "dirichlet_eps", 1.5, "dirichlet_eps must be a number in 0..1, not 1.5"),
    (TrainConfig, "blocks", 1.0, "blocks must be an int in 0..64, not float 1.0"),
    (TrainConfig, "lr", math.inf, "lr must be a number > 0 and <= 10, not inf"),
])
def test_learning_configs_refuse_out_of_range_fields_by_name(make, field, bad, words):
    make()  # the defaults pass
    with pytest.raises(TypeError if isinstance(bad, (bool, float)) and "must be an int" in words else ValueError) as err:
        make(**{field: bad})
    assert words in str(err.value)


def test_a_numpy_integer_field_is_stored_as_an_int_so_the_config_writes_as_json():
    cfg = DataConfig(seed=np.int64(7), chunk_games=np.int32(3))
    assert type(cfg.seed) is int and type(cfg.chunk_games) is int
    assert json.loads(json.dumps(asdict(cfg)))["seed"] == 7
