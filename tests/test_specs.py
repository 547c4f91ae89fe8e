"""The one player-spec parser (jiu_env.specs): its parse, and the three readers that use it agreeing.

make_player builds from the parse, builtin_specs (the numba warm-up) lists its built-in bots and
rewrite_spec (the Ray backend's file shipping) rewrites its file tokens; for a table of specs each
reader's answer is checked against the one parse tree, so that a reader with a grammar of its own
would show up here.
"""

from __future__ import annotations

import pathlib

import pytest

from jiu_env.bots.composite import MixPlayer, PhasePlayer
from jiu_env.evaluation.backends import rewrite_spec
from jiu_env.players import make_player, player_spec
from jiu_env.specs import parse_player_spec, parse_spec
from jiu_env.warmup import builtin_specs

# spec -> (form, the built-in bot leaves, the file tokens rewrite_spec offers)
TABLE = {
    "random": ("bot", ["random"], []),
    " alphabeta:depth=2 ": ("bot", ["alphabeta:depth=2"], ["2"]),
    "alphazero:nets/a:b,c.pt": ("bot", ["alphazero:nets/a:b,c.pt"], ["nets/a:b,c.pt"]),
    "alphazero:checkpoint=n.pt,sims=8": ("bot", ["alphazero:checkpoint=n.pt,sims=8"], ["n.pt", "8"]),
    "mix:0.5:greedy": ("mix", ["greedy"], []),
    "mix:0.25:phases:random+mix:0.5:alphabeta:depth=1": ("mix", ["random", "alphabeta:depth=1"], ["1"]),
    "phases:random+sb3:models/m:1.zip": ("phases", ["random"], ["models/m:1.zip"]),
    "phases:mix:0.1:greedy+phases:random+pattern": ("phases", ["greedy", "random", "pattern"], []),
    "sb3:C:/models/ppo.zip": ("kind", [], ["C:/models/ppo.zip"]),
    "rllib:ckpt/dir:module=learner": ("kind", [], ["ckpt/dir"]),
    "mypkg.players:Bot:depth=2": ("module", [], []),
    "my/file.py:Bot": ("module", [], ["my/file.py"]),
    "C:/bots/file.py:Bot:depth=2": ("module", [], ["C:/bots/file.py"]),  # a ':' in a file's path
    "mix:0.5:d:x/file.py:Bot": ("mix", [], ["d:x/file.py"]),
    "randm": ("unknown", [], []),
}


def _leaves(parsed):
    if parsed.form == "bot":
        return [parsed.text]
    return [leaf for part in parsed.parts for leaf in _leaves(part)]


@pytest.mark.parametrize("spec", sorted(TABLE))
def test_readers_agree_with_the_parse(spec):
    form, bots, files = TABLE[spec]
    parsed = player_spec(spec)
    assert parsed.form == form
    assert _leaves(parsed) == bots == builtin_specs(spec)
    seen: list[str] = []
    rewritten = rewrite_spec(spec, lambda t: seen.append(t) or t)
    assert rewritten == spec.strip()  # an identity rewrite gives the spec back
    assert seen == files


def test_make_player_builds_the_parse_tree():
    """The player make_player builds has the shape of the parse: mix -> MixPlayer(inner), phases -> PhasePlayer."""

    def shape(p):
        if isinstance(p, MixPlayer):
            return ("mix", shape(p.inner))
        if isinstance(p, PhasePlayer):
            return ("phases", shape(p.placement), shape(p.battle))
        return type(p).__name__

    def expected(parsed):
        if parsed.form == "mix":
            return ("mix", expected(parsed.parts[0]))
        if parsed.form == "phases":
            return ("phases", *(expected(x) for x in parsed.parts))
        return type(make_player(parsed.text, seed=0)).__name__

    for spec in ("mix:0.25:phases:random+mix:0.5:alphabeta:depth=1", "phases:mix:0.1:greedy+phases:random+pattern"):
        assert shape(make_player(spec, seed=0)) == expected(player_spec(spec))


def test_rewrite_maps_the_tokens():
    out = rewrite_spec("mix:0.5:phases:alphazero:a.pt+rllib:d:module=m", str.upper, lambda d: "DIR/" + d)
    assert out == "mix:0.5:phases:alphazero:A.PT+rllib:DIR/d:module=m"


def test_parse_is_syntax_only():
    """The parser takes the names it knows from its caller and builds nothing."""
    p = parse_player_spec("foo:x=1", bots={"foo"}, kinds=())
    assert (p.form, p.name, p.params()) == ("bot", "foo", {"x": 1})
    assert parse_player_spec("foo:x=1", bots=(), kinds={"foo"}).form == "kind"
    assert parse_player_spec("foo:x=1", bots=(), kinds=()).form == "unknown"  # module:Class needs a class name
    with pytest.raises(TypeError, match="a player spec is a string"):
        parse_player_spec(3, (), ())  # type: ignore[arg-type]


def test_malformed_mix_and_phases_have_no_parts():
    for spec in ("mix:0.5", "phases:random", "mix"):
        assert player_spec(spec).parts == ()
        assert builtin_specs(spec) == []
        assert rewrite_spec(spec, lambda t: "X") == spec


@pytest.mark.parametrize("spec,message", [
    ("alphabeta:depth=1,depth=2", "parameter 'depth' is given twice in bot spec 'alphabeta:depth=1,depth=2'"),
    ("alphabeta:depth", "bad parameter 'depth' in bot spec 'alphabeta:depth': expected key=value"),
    ("alphabeta:dept=1", "unknown parameter(s) 'dept' (did you mean 'depth'?) for bot 'alphabeta'"),
    ("randm", "unknown player 'randm' (did you mean 'random'?)"),
    ("mix:0.5", "mix:0.5: expected mix:P:SPEC"),
    ("mix:x:greedy", "mix:x:greedy: 'x' is not a probability"),
    ("phases:random", "phases:random: expected phases:PLACEMENT_SPEC+BATTLE_SPEC"),
    ("phases:random+ ", "phases:random+: expected phases:PLACEMENT_SPEC+BATTLE_SPEC"),
    ("sb3:", "player spec 'sb3:': sb3: needs an argument"),
])
def test_refused_specs_keep_their_messages(spec, message):
    with pytest.raises(ValueError) as e:
        make_player(spec, seed=0)
    assert message in str(e.value)


def test_parse_spec_names_stay():
    """parse_spec / parse_value / REGISTRY / bot_class are still importable from jiu_env.bots."""
    from jiu_env import bots, players, specs

    assert bots.parse_spec is specs.parse_spec is parse_spec
    assert bots.parse_value is specs.parse_value
    assert bots.REGISTRY is players.REGISTRY and bots.bot_class is players.bot_class
    assert parse_spec("mcts:sims=20,c=1.4") == ("mcts", {"sims": 20, "c": 1.4})


def test_a_checkpoint_path_holding_a_spec_separator_is_explained_and_loads_as_a_keyword(tmp_path):
    import shutil

    from jiu_env.bots.network import SHIPPED

    eq, comma = tmp_path / "run=3.pt", tmp_path / "run3,best.pt"
    for path in (eq, comma):
        shutil.copy(SHIPPED[14], path)
    with pytest.raises(ValueError, match=r"reads as a path holding '='.*checkpoint=PATH"):
        make_player(f"policy:{eq}")
    with pytest.raises(ValueError, match=r"cannot hold a ','.*make_bot\(NAME, checkpoint=PATH\)"):
        make_player(f"policy:checkpoint={comma}")
    assert pathlib.Path(make_player(f"policy:checkpoint={eq}").checkpoint) == eq  # the ways the messages name
    assert pathlib.Path(make_player("policy", checkpoint=str(comma)).checkpoint) == comma


def test_the_deprecated_az_spelling_warns_where_users_see_it_and_is_not_offered():
    from jiu_env.bots.network import DATA_DIR

    with pytest.warns(FutureWarning, match="'az:PATH' is deprecated; use 'alphazero:PATH'"):  # shown by default
        bot = make_player(f"az:{DATA_DIR / 'alphazero_jiu8.pt'}")
    assert type(bot).__name__ == "AlphaZeroBot"
    with pytest.raises(ValueError, match="unknown player") as e:
        make_player("nosuch")
    assert "alphazero" in str(e.value) and "az:ARG" not in str(e.value)


def test_a_player_file_in_a_folder_with_a_colon_is_built(tmp_path):
    folder = tmp_path / "d:x"
    folder.mkdir()
    (folder / "mybot.py").write_text("import numpy as np\nfrom jiu_env.bots.base import Bot, legal_actions\n\n"
                                     "class MyBot(Bot):\n    def _choose(self, state):\n"
                                     "        return np.sort(legal_actions(state))[0]\n")
    parsed = player_spec(f"{folder}/mybot.py:MyBot")
    assert (parsed.form, parsed.name, parsed.cls) == ("module", f"{folder}/mybot.py", "MyBot")
    assert type(make_player(f"{folder}/mybot.py:MyBot", seed=1)).__name__ == "MyBot"
