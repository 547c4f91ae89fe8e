"""jiu_env.benchmark's entry point checks its arguments before the first section runs (no timing here)."""

from __future__ import annotations

import pytest

from jiu_env import benchmark as B


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(sections="kernel"), TypeError, r"sections must be a list of section names .* write \['kernel'\]"),
    (dict(sections=["kernel", "nosuch"]), ValueError, "unknown section"),
    (dict(games=0), ValueError, "^games must be an int >= 1, not 0$"),
    (dict(games=True), TypeError, "^games must be an int >= 1, not bool True$"),
    (dict(quick="yes"), TypeError, "^quick must be True or False"),
])
def test_run_benchmarks_refuses_bad_arguments_before_any_section_runs(kwargs, error, words, monkeypatch):
    ran = []
    monkeypatch.setattr(B, "BENCHES", {name: (lambda t, cfg, name=name: ran.append(name)) for name in B.SECTIONS})
    with pytest.raises(error, match=words):
        B.run_benchmarks(**{"sections": ["kernel", "batched"], **kwargs}, echo=False)
    assert ran == []


def test_run_benchmarks_runs_the_chosen_sections_in_order(monkeypatch):
    ran = []
    monkeypatch.setattr(B, "BENCHES", {name: (lambda t, cfg, name=name: ran.append((name, cfg["games"])))
                                       for name in B.SECTIONS})
    B.run_benchmarks(("vector", "kernel"), quick=True, games=8, echo=False)
    assert ran == [("kernel", 8), ("vector", 8)]
