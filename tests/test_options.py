"""The table of rules options (jiu_env/options.py) drives Rules, the header, the state checks and the docs.

The recipe of docs/architecture.md ("How to add a rule option") is run as
written on a copy of the package: its code blocks are added there and a
fresh interpreter checks that Rules, new_state and the checks take the option.
"""

import dataclasses
import os
import re
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from jiu_env import Rules, kernel as K, vocab
from jiu_env.options import PROFILES, RULE_OPTION, RULE_OPTIONS, RuleOption, header_values, markdown_table
from jiu_env.rules import LATER_OPTIONS, rules_from_state
from jiu_env.validate import InvalidStateError, validate_state

ROOT = Path(__file__).resolve().parents[1]


def test_the_table_gives_the_header_layout_of_the_first_format():
    """The slots, HDR and the choice indices derived from the table are the layout states have always had."""
    slots = {o.name: o.slot for o in RULE_OPTIONS}
    assert slots == dict(board_size=0, fly_threshold=2, single_jump_ban=3, min_stones=4, chain_may_stop=5,
                         repetition_draw=6, max_battle_turns=7, flyer_moves=36, min_stones_check=37,
                         square_on_return=38, formations=39, history_size=8, ban_after_capture=13)
    assert (vocab.H_N, vocab.H_FLY, vocab.H_BAN, vocab.H_MIN, vocab.H_CHAIN_STOP, vocab.H_REP, vocab.H_MAXT,
            vocab.H_CAP, vocab.H_FLYER_MOVES, vocab.H_MIN_CHECK, vocab.H_SQ_RETURN, vocab.H_FORMATIONS,
            vocab.H_BAN_AFTER, vocab.HDR) == (0, 2, 3, 4, 5, 6, 7, 8, 36, 37, 38, 39, 13, 40)
    assert vocab.RULE_FIELDS == (0, 2, 3, 4, 5, 6, 7, 36, 37, 38, 39, 13)
    assert (vocab.BAN_NONE, vocab.BAN_VS_FLYER, vocab.BAN_FLYER, vocab.BAN_BOTH) == (0, 1, 2, 3)
    assert (vocab.FLYER_ALL, vocab.FLYER_FLY_ONLY, vocab.MIN_CHECK_DECISION, vocab.MIN_CHECK_TURN_END) == (0, 1, 0, 1)
    assert (vocab.MIN_N, vocab.MAX_N, vocab.DEFAULT_HISTORY) == (4, 20, 2048)
    for o in RULE_OPTIONS:
        assert getattr(vocab, o.field) == o.slot  # every row's header constant is in the vocabulary
    assert set(vocab.STATUS_FIELDS).isdisjoint(slots.values())
    assert sorted(set(vocab.STATUS_FIELDS) | set(slots.values()) | {vocab.H_COUNT}) == list(range(vocab.HDR))


def test_rules_fields_defaults_and_profiles_come_from_the_table():
    names = [f.name for f in dataclasses.fields(Rules)]
    assert names == [o.name for o in RULE_OPTIONS] + ["profile"]
    r = Rules()
    for o in RULE_OPTIONS:
        assert getattr(r, o.name) == o.profile_value("competitive", 14)
    assert LATER_OPTIONS == {o.name: o.default for o in RULE_OPTIONS if o.later}
    for p in PROFILES:
        for n in (6, 8, 14):
            r = Rules.make(p, board_size=n)
            assert r.options() == {o.name: o.profile_value(p, n) for o in RULE_OPTIONS} | {"board_size": n}
    assert Rules.make("ludii8").board_size == 8 and Rules.make("ludii8").fly_threshold == 7


@pytest.mark.parametrize("option", RULE_OPTIONS, ids=lambda o: o.name)
def test_rules_refuses_what_the_row_refuses(option: RuleOption):
    """Each option: a wrong type, a value past each end of its range, its hole: refused, naming the option."""
    bad: list = [None, [1]]
    if option.type is int:
        bad += [True, "3", option.lo - 1]
        top = option.upper(8)
        if top is not None:
            bad.append(top + 1)
        if option.hole is not None:
            bad.append(option.hole)
    elif option.type is str:
        bad += ["not-a-choice", 0]
    else:
        bad += [1, "yes"]
    for v in bad:
        with pytest.raises((TypeError, ValueError), match=repr(option.name)):
            Rules.make("competitive", board_size=8, **{option.name: v})


def test_new_state_writes_every_option_into_its_slot():
    r = Rules.make("jqchess8", board_size=6, formations=True, repetition_draw=0, history_size=50, min_stones=2)
    s = r.new_state()
    assert r.header() == header_values(r.options())
    for o in RULE_OPTIONS:
        assert int(s[o.slot]) == o.header_value(r.options())
    assert s[K.H_CAP] == 50 and s.size == K.HDR + 36 + 50 and s[K.H_BAN] == K.BAN_VS_FLYER
    assert rules_from_state(s) == dataclasses.replace(r, profile="competitive")
    auto = Rules.make("competitive", board_size=6, max_battle_turns=7)
    assert auto.new_state()[K.H_CAP] == 8 == auto.history_capacity
    assert Rules.make("competitive", board_size=6, max_battle_turns=0).history_capacity == K.DEFAULT_HISTORY


def test_the_deprecated_positional_new_state_still_makes_the_same_state():
    r = Rules.make("jqchess8", board_size=8, square_on_return=False, history_size=9)
    with pytest.warns(DeprecationWarning, match="Rules.*new_state"):
        args = r.kernel_args()
    with pytest.warns(DeprecationWarning, match="kernel.new_state.*deprecated"):
        s = K.new_state(*args)
    assert np.array_equal(s, r.new_state())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        short = K.new_state(8, 8, K.BAN_VS_FLYER, 4, True, 3, 1000)  # the 7 positional arguments of old
    assert np.array_equal(short, Rules.make("competitive", board_size=8).new_state())


def test_new_state_from_wants_every_option_slot():
    h = Rules.make("competitive", board_size=6).header()
    del h[K.H_FORMATIONS]
    with pytest.raises(ValueError, match="missing.*H_FORMATIONS"):
        K.new_state_from(h)
    with pytest.raises(ValueError, match=r"unknown \[99\]"):
        K.new_state_from({**Rules().header(), 99: 1})


@pytest.mark.parametrize("option", [o for o in RULE_OPTIONS if not o.layout], ids=lambda o: o.name)
def test_validate_state_checks_each_option_slot_by_its_row(option: RuleOption):
    s = Rules.make("competitive", board_size=6).new_state()
    validate_state(s)
    top = option.upper(6)
    top = len(option.choices) - 1 if option.type is str else 1 if option.type is bool else top
    bad = [option.lo - 1] + ([] if top is None else [top + 1]) + ([] if option.hole is None else [option.hole])
    for v in bad:
        t = s.copy()
        t[option.slot] = v
        with pytest.raises(InvalidStateError, match=rf"{option.field}={v} \({option.name}"):
            validate_state(t)
        if top is not None:  # the edges of the range are fine
            for ok in (option.lo, top):
                t[option.slot] = ok
                if ok != option.hole:
                    validate_state(t)


def test_the_rules_docs_table_is_the_generated_one():
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    table = markdown_table()
    assert table in text, "docs/rules.md §6 must hold the table of jiu_env/options.py; paste:\n" + table


def test_num_actions_is_the_vocabularys():
    for n in (4, 8, 14, 20):
        assert Rules.make("competitive", board_size=n).num_actions == K.num_actions(n) == 10 * n * n + 1


# ------------------------------------------------------- the recipe, executed
def _recipe_blocks() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## How to add a rule option", 1)[1].split("\n## ", 1)[0]
    blocks = [textwrap.dedent(b) for b in re.findall(r"```py\n(.*?)```", section, re.S)]
    assert len(blocks) == 3, "the recipe shows the row, the Rules field and the kernel constant"
    return blocks


def _package_with_recipe(tmp_path: Path) -> Path:
    """A copy of jiu_env with the recipe's three code blocks added where its comments say."""
    row, field, kernel = _recipe_blocks()
    pkg = tmp_path / "jiu_env"
    shutil.copytree(ROOT / "jiu_env", pkg, ignore=shutil.ignore_patterns("__pycache__"))

    def insert(path: Path, before: str, block: str, indent: str) -> None:
        src = path.read_text(encoding="utf-8")
        assert src.count(before) == 1, (path, before)
        lines = "".join(indent + line.strip("\n").lstrip() + "\n" if line.strip() and not line.lstrip().startswith("#")
                        else "" for line in block.splitlines(keepends=True))
        path.write_text(src.replace(before, lines + before), encoding="utf-8")

    # the row: continuation lines keep their own indentation relative to the first
    src = (pkg / "options.py").read_text(encoding="utf-8")
    end = "\n)\n\n#: The rows by option name."
    assert src.count(end) == 1
    body = "".join(line + "\n" for line in row.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    (pkg / "options.py").write_text(src.replace(end, "\n" + body.rstrip("\n") + end), encoding="utf-8")
    insert(pkg / "rules.py", "    profile: str = PROFILES[0]\n", field, "    ")
    (pkg / "kernel.py").write_text((pkg / "kernel.py").read_text(encoding="utf-8") + "\n" + kernel, encoding="utf-8")
    return tmp_path


def _run_in(root: Path, code: str, timeout: int) -> str:
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("NUMBA_CACHE_DIR", None)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=root, env=env, capture_output=True,
                       text=True, timeout=timeout)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


_FAST = """
    import jiu_env, pytest
    from pathlib import Path
    assert Path(jiu_env.__file__).parent == Path.cwd() / "jiu_env", jiu_env.__file__
    from jiu_env import Rules, kernel as K, vocab
    from jiu_env import checks
    from jiu_env.options import markdown_table
    assert vocab.HDR == 41 and K.H_CHAIN_LIMIT == 40 and 40 in vocab.RULE_FIELDS
    r = Rules.make("competitive", board_size=6)
    assert r.chain_limit == 0 and "chain_limit" not in r.to_dict()
    assert Rules.make("traditional", board_size=6).chain_limit == 4
    r5 = Rules.make("competitive", board_size=6, chain_limit=5)
    assert r5.to_dict()["chain_limit"] == 5 and Rules.make(r5.to_dict()) == r5
    s = r5.new_state()
    assert s[40] == 5 and s.size == 41 + 36 + 1001 and s[K.H_TO_MOVE] == K.WHITE
    for bad in (-1, 37, "3", True):
        with pytest.raises((TypeError, ValueError), match="'chain_limit'"):
            Rules.make("competitive", board_size=6, chain_limit=bad)
    assert 40 in checks._OPT_SLOT.tolist() and checks._FIELD_NAMES[40] == "H_CHAIN_LIMIT"
    assert "| `chain_limit` | 0 … N² | 0 | 4 | 0 | 0 |" in markdown_table()
    print("ok")
"""

_SLOW = """
    import numpy as np, pytest
    from jiu_env import Rules, kernel as K
    from jiu_env.rules import rules_from_state
    from jiu_env.validate import InvalidStateError, validate_state
    r5 = Rules.make("competitive", board_size=6, chain_limit=5)
    s = r5.new_state()
    validate_state(s)
    assert rules_from_state(s).chain_limit == 5
    s[40] = 37
    with pytest.raises(InvalidStateError, match=r"H_CHAIN_LIMIT=37 \\(chain_limit"):
        validate_state(s)
    t = r5.new_state()
    K.random_placement(t, 1)
    validate_state(t)
    print("ok")
"""


def test_the_recipe_adds_an_option_to_rules_and_new_state(tmp_path):
    """docs/architecture.md's steps 1-3 on a copy: Rules, profiles, to_dict, new_state, the table (no numba compile)."""
    root = _package_with_recipe(tmp_path)
    assert _run_in(root, _FAST, timeout=120).strip() == "ok"


@pytest.mark.slow
def test_the_recipe_adds_an_option_to_the_state_checks(tmp_path):
    """The same copy through numba: validate_state checks the new slot, rules_from_state reads it (compiles the
    copy's kernel: minutes)."""
    root = _package_with_recipe(tmp_path)
    assert _run_in(root, _SLOW, timeout=1200).strip() == "ok"


def test_rules_flags_names_the_flags_given_in_order():
    """The one reading of a command line's rules flags (jiu eval, jiu train, jiu play...): a flag given its
    default's name counts, a flag the command lacks does not."""
    import argparse

    from jiu_env.options import rules_flags

    assert rules_flags(argparse.Namespace()) == []
    assert rules_flags(argparse.Namespace(rules=None, rule=None, board_size=None)) == []
    assert rules_flags(argparse.Namespace(rules="competitive", rule=[], board_size=None)) == ["--rules"]
    assert rules_flags(argparse.Namespace(rules=None, rule=["fly=0"], board_size=8)) == ["--rule", "--board-size"]
    assert rules_flags(argparse.Namespace(board_size=6, rules="ludii8", rule=["a=1"])) == [
        "--rules", "--rule", "--board-size"]


def test_rules_flags_for_reads_a_records_rules_field():
    from jiu_env.options import rules_flags_for

    assert rules_flags_for("competitive board_size=6 max_battle_turns=60") == "--board-size 6 --rule max_battle_turns=60"
    assert rules_flags_for("ludii8") == "--rules ludii8"
    assert rules_flags_for("competitive") == "no --rules/--rule/--board-size (the default rules)"
