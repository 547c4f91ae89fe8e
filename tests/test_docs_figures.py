"""The speed figures of the docs are the kept ``jiu bench`` output's, written by benchmarks/update_docs_figures.py.

No benchmark runs here: the marked figures of README.md, docs/*.md and benchmarks/*.md are compared with
the ``results.json`` files kept in the repository, and the script's rules (markers, formats, errors) are
checked on small pages of their own.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def figs():
    name = "update_docs_figures"
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(name, None)


def test_every_marked_figure_matches_its_kept_bench_output(figs):
    wrong = [f"{m.where()}: shows {m.text!r}, kept output says {want!r}" for m, want in figs.differences()]
    assert not wrong, ("figures differ from the kept jiu bench output; run python benchmarks/update_docs_figures.py "
                       "after a new jiu bench run:\n" + "\n".join(wrong))


def test_the_docs_speed_figures_are_marked(figs):
    """The figures the docs quote from jiu bench are generated, not typed (bots.md's search speeds, above all)."""
    rows = {(m.path.name, m.attrs.get("row"), m.attrs.get("field", "value"))
            for p in figs.pages() for m in figs.find_markers(p)}
    assert ("bots.md", "alpha-beta search", "per_cpu_s") in rows
    assert ("bots.md", "mcts search", "per_cpu_s") in rows
    assert ("performance.md", "batched runner, all cores", "ratio") in rows
    kept = json.loads((ROOT / figs.DEFAULT_RESULTS).read_text())
    assert kept["machine"]["cpu"] and kept["load_start"] is not None and kept["code"]["commit"]
    assert "610,000 nodes/s" not in (ROOT / "docs" / "bots.md").read_text()


PAGE = ('alpha-beta <!-- bench row="alpha-beta search" field=per_cpu_s format=sig2 -->{ab}<!-- /bench --> nodes '
        'per CPU-s, <!-- bench row="alpha-beta search" field=ratio format=x2 -->0.94x<!-- /bench --> the first '
        'release\'s engine, <!-- bench row="mcts search" over="kernel random games, 1 core" format=f2 -->'
        '0.50<!-- /bench --> of the kernel, on <!-- bench meta=date format=day -->2026-01-02<!-- /bench -->\n')
RESULTS = {"date": "2026-01-02 03:04 UTC", "load_start": 6.36, "machine": {"cpu": "Some CPU"}, "rows": [
    {"name": "kernel random games, 1 core", "value": 1_000_000.0, "per_cpu_s": 2_000_000.0, "ratio": None},
    {"name": "alpha-beta search", "value": 180_580.3, "per_cpu_s": 371_483.5, "ratio": 0.9418},
    {"name": "mcts search", "value": 500_000.0, "per_cpu_s": 600_000.0, "ratio": None},
]}


@pytest.fixture
def tree(tmp_path, figs):
    """A repository of one page and one kept results.json; returns (root, page)."""
    kept = tmp_path / figs.DEFAULT_RESULTS
    kept.parent.mkdir(parents=True)
    kept.write_text(json.dumps(RESULTS))
    page = tmp_path / "page.md"
    page.write_text(PAGE.format(ab="370,000"))
    return tmp_path, page


def test_a_matching_page_passes(figs, tree):
    root, page = tree
    assert figs.differences(root, [page]) == []


def test_a_typed_figure_that_differs_fails_and_update_rewrites_it(figs, tree):
    root, page = tree
    page.write_text(PAGE.format(ab="610,000"))
    diff = figs.differences(root, [page])
    assert [(m.attrs["row"], m.text, want) for m, want in diff] == [("alpha-beta search", "610,000", "370,000")]
    assert diff[0][0].line == 1
    figs.update(root, [page])
    assert page.read_text() == PAGE.format(ab="370,000")
    assert figs.differences(root, [page]) == []


def test_a_new_bench_run_makes_the_page_stale(figs, tree):
    root, page = tree
    new = json.loads(json.dumps(RESULTS))
    new["rows"][1]["per_cpu_s"] = 612_345.0
    new["date"] = "2026-02-03 00:00 UTC"
    (root / figs.DEFAULT_RESULTS).write_text(json.dumps(new))
    assert sorted(want for _, want in figs.differences(root, [page])) == ["2026-02-03", "610,000"]


def test_a_marker_can_name_another_kept_output(figs, tree):
    root, page = tree
    other = root / "old" / "results.json"
    other.parent.mkdir()
    other.write_text(json.dumps({**RESULTS, "rows": [{**RESULTS["rows"][1], "per_cpu_s": 640_158.0}]}))
    page.write_text('<!-- bench file=old/results.json row="alpha-beta search" field=per_cpu_s format=k -->'
                    '640k<!-- /bench -->')
    assert figs.differences(root, [page]) == []


@pytest.mark.parametrize("value, form, text", [
    (371_483.5, "int", "371,484"), (371_483.5, "sig2", "370,000"), (371_483.5, "sig3", "371,000"),
    (371_483.5, "k", "371k"), (1_567_118.5, "M", "1.57M"), (0.9418, "x2", "0.94x"), (1.8870, "x1", "1.9x"),
    (6.36, "f1", "6.4"), (0.2370, "f2", "0.24"), (0.9418, "pct", "94%"), (0.0201, "sig2", "0.02"),
    ("2026-11-26 04:21 UTC", "day", "2026-11-26"), ("Intel(R) Xeon(R)", "text", "Intel(R) Xeon(R)"),
])
def test_formats(figs, value, form, text):
    assert figs.fmt(value, form) == text


@pytest.mark.parametrize("marker, message", [
    ('<!-- bench row="alpha-beta search" colour=red -->1<!-- /bench -->', "attribute 'colour=red'"),
    ('<!-- bench format=int -->1<!-- /bench -->', "exactly one of row=... or meta=..."),
    ('<!-- bench row="alpha-beta search" format=roman -->1<!-- /bench -->', "unknown format 'roman'"),
    ('<!-- bench row="alpha-beta search" field=median -->1<!-- /bench -->', "unknown field 'median'"),
    ('<!-- bench meta=weather -->1<!-- /bench -->', "unknown meta 'weather'"),
    ('<!-- bench row="alpha-beta search" -->1', "without its closing <!-- /bench -->"),
    ('<!-- bench row="beta-alpha search" -->1<!-- /bench -->', "has no row 'beta-alpha search' (rows: "),
    ('<!-- bench file=nowhere.json row="alpha-beta search" -->1<!-- /bench -->', "nowhere.json does not exist"),
    ('<!-- bench row="kernel random games, 1 core" field=ratio -->1<!-- /bench -->', "has no ratio"),
])
def test_bad_markers_say_what_is_wrong_and_where(figs, tree, marker, message):
    root, page = tree
    page.write_text("text\n" + marker + "\n")
    with pytest.raises(ValueError, match="page.md:2") as e:
        figs.differences(root, [page])
    assert message in str(e.value)


def test_check_exit_codes(figs, tree, monkeypatch, capsys):
    root, page = tree
    monkeypatch.setattr(figs, "ROOT", root)
    monkeypatch.setattr(figs, "pages", lambda root=root: [page])
    assert figs.main(["--check"]) == 0
    page.write_text(PAGE.format(ab="610,000"))
    assert figs.main(["--check"]) == 1 and "'610,000' differs, kept output says '370,000'" in capsys.readouterr().out
    assert figs.main([]) == 0 and figs.main(["--check"]) == 0
    page.write_text('<!-- bench row="nothing" -->1<!-- /bench -->')
    assert figs.main(["--check"]) == 2 and "has no row 'nothing'" in capsys.readouterr().err



# ------------------------------------------------------------------ match results
MATCH = {"players": {
    "az": {"games": 188, "wins": 144, "draws": 1, "losses": 43,
           "as_white": {"games": 94, "wins": 59, "draws": 0, "losses": 35},
           "as_black": {"games": 94, "wins": 85, "draws": 1, "losses": 8}},
    "ab": {"games": 188, "wins": 43, "draws": 1, "losses": 144}},
    "elo": {"ratings": {"az": {"elo": 102.9, "lower": 73.7, "upper": 132.1}}}}
MATCH_PAGE = "".join(f'<!-- match file=m/results.json player=az figure={fig} -->{{{fig}}}<!-- /match -->\n'
                     for fig in ("games", "wdl", "score", "interval", "white", "black", "elo", "elo_ci"))
MATCH_TEXT = dict(games="188", wdl="144-1-43", score="76.9%", interval="70.9 .. 82.9", white="59-0-35",
                  black="85-1-8", elo="+103", elo_ci="29")


@pytest.fixture
def match_tree(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "results.json").write_text(json.dumps(MATCH))
    page = tmp_path / "page.md"
    page.write_text(MATCH_PAGE.format(**MATCH_TEXT))
    return tmp_path, page


def test_match_figures_come_from_the_tournament_result(figs, match_tree):
    root, page = match_tree
    assert figs.differences(root, [page]) == []
    more = json.loads(json.dumps(MATCH))  # the tournament resumed: 2 more games, one won, one lost
    more["players"]["az"].update(games=190, wins=145, losses=44)
    (root / "m" / "results.json").write_text(json.dumps(more))
    assert {m.attrs["figure"]: want for m, want in figs.differences(root, [page])} == {
        "games": "190", "wdl": "145-1-44", "score": "76.6%", "interval": "70.6 .. 82.6"}
    figs.update(root, [page])
    assert figs.differences(root, [page]) == [] and "145-1-44" in page.read_text()


def test_score_interval_is_the_normal_approximation_over_game_scores(figs):
    p, lo, hi = figs.score_interval(144, 1, 43)
    scores = [1.0] * 144 + [0.5] + [0.0] * 43
    sd = (sum((x - p) ** 2 for x in scores) / len(scores)) ** 0.5
    assert p == pytest.approx(sum(scores) / len(scores))
    assert (lo, hi) == pytest.approx((p - 1.96 * sd / len(scores) ** 0.5, p + 1.96 * sd / len(scores) ** 0.5))
    assert figs.score_interval(10, 0, 0) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="no games"):
        figs.score_interval(0, 0, 0)


@pytest.mark.parametrize("marker, message", [
    ('<!-- match file=m/results.json player=az -->1<!-- /match -->', "missing: figure"),
    ('<!-- match file=m/results.json player=az figure=median -->1<!-- /match -->', "unknown figure 'median'"),
    ('<!-- match file=m/results.json player=az figure=wdl row=x -->1<!-- /match -->', "attribute 'row=x'"),
    ('<!-- match file=m/results.json player=zz figure=wdl -->1<!-- /match -->', "has no player 'zz'"),
    ('<!-- match file=m/results.json player=ab figure=elo -->1<!-- /match -->', "no Elo rating of 'ab'"),
    ('<!-- match file=nowhere.json player=az figure=wdl -->1<!-- /match -->', "tournament result nowhere.json"),
    ('<!-- match file=m/results.json player=az figure=wdl -->1<!-- /bench -->', "without its closing <!-- /match"),
])
def test_bad_match_markers_say_what_is_wrong_and_where(figs, match_tree, marker, message):
    root, page = match_tree
    page.write_text("text\n" + marker + "\n")
    with pytest.raises(ValueError, match="page.md:2") as e:
        figs.differences(root, [page])
    assert message in str(e.value)


def test_the_docs_match_figures_are_marked(figs):
    """The published result of alphazero:time=1 against alphabeta:time=1 is generated from its folder, not typed."""
    folder = "baselines/learned/jiu14-g18-ppo/alphazero-b8-vs-alphabeta-t1/results.json"
    marked = {(m.path.relative_to(ROOT).as_posix(), m.attrs["figure"])
              for p in figs.pages() for m in figs.find_markers(p) if m.kind == "match" and m.attrs["file"] == folder}
    for page in ("README.md", "docs/learning.md", "baselines/learned/README.md",
                 "baselines/learned/jiu14-g18-ppo/README.md"):
        assert {(page, "score"), (page, "interval"), (page, "games")} <= marked, page
