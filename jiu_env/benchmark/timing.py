"""Timing primitives and the results table of ``jiu bench``: what every section measures with and writes to.

A figure is the best of a few repeats (:func:`best_rate`, the machine may be
shared), kept as a :class:`Rate` that also carries the CPU-time rate, and
each is one row of a :class:`Table`, which marks the rows that have a target
(:data:`TARGETS`) as met or missed.
"""

from __future__ import annotations

import time
from typing import Any, Callable

#: The figures with a target: row name -> (kind, target), kind ``value`` (the rate must reach the target),
#: ``ratio`` (the row's ratio must) or ``max`` (the value must stay under it).  Kept next to the table,
#: which checks each row it adds against them.
TARGETS = {
    "kernel random games, 1 core": ("value", 1_000_000),
    "batched runner, all cores": ("ratio", 1.8),
    "aec env, random play": ("ratio", 0.6),
    "alpha-beta search": ("value", 500_000),
    "mcts search": ("value", 2_000),
    "compile, warm cache: first reset()": ("max", 2.0),
}


class Rate(float):
    """Units per wall-clock second, with ``.cpu``: units per CPU-second of this process (all its threads)."""

    cpu: float

    def __new__(cls, wall: float, cpu: float) -> Rate:
        r = super().__new__(cls, wall)
        r.cpu = cpu
        return r


def best_rate(fn: Callable[[], float], min_time: float, repeats: int) -> Rate:
    """Best units/s over ``repeats`` runs; each run calls ``fn() -> units`` until ``min_time`` s have passed.

    Returns a :class:`Rate` (wall-clock rate of the best run, and its CPU-time rate).
    """
    best = Rate(0.0, 0.0)
    for _ in range(repeats):
        units: float = 0
        t0 = time.perf_counter()
        c0 = time.process_time()
        while True:
            units += fn()
            dt = time.perf_counter() - t0
            if dt >= min_time:
                break
        cpu = time.process_time() - c0
        if units / dt > best:
            best = Rate(units / dt, units / cpu if cpu > 0 else 0.0)
    return best


class Table:
    """Rows of (section, name, value, unit, ratio, ratio_to, note)."""

    def __init__(self, echo: bool = True) -> None:
        self.rows: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.echo = echo

    def add(self, section: str, name: str, value: float | None, unit: str, ratio: float | None = None,
            ratio_to: str | None = None, note: str = "") -> dict[str, Any]:
        row = {"section": section, "name": name, "value": None if value is None else float(value), "unit": unit,
               "per_cpu_s": getattr(value, "cpu", None), "ratio": ratio, "ratio_to": ratio_to, "note": note}
        kind_target = TARGETS.get(name)
        if kind_target is not None and value is not None:
            kind, target = kind_target
            got = ratio if kind == "ratio" else value
            row["target"] = (">= " if kind != "max" else "< ") + _fmt(target) + ("x" if kind == "ratio" else "")
            row["met"] = bool(got is not None and (got < target if kind == "max" else got >= target))
        self.rows.append(row)
        if self.echo:
            print(_text_row(row), flush=True)
        return row

    def skip(self, section: str, name: str, why: str) -> None:
        self.notes.append(f"{name}: skipped ({why})")
        self.rows.append({"section": section, "name": name, "value": None, "unit": "", "per_cpu_s": None,
                          "ratio": None, "ratio_to": None, "note": f"skipped: {why}"})
        if self.echo:
            print(f"  {name:<46} skipped: {why}", flush=True)

    def get(self, name: str) -> float | None:
        for r in self.rows:
            if r["name"] == name:
                return r["value"]
        return None


def _fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float) and abs(v) < 100:
        return f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"
    return f"{v:,.0f}"


def _text_row(r):
    ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}x {r['ratio_to']}"
    tgt = "" if "target" not in r else f"  [target {r['target']}: {'met' if r['met'] else 'MISSED'}]"
    cpu = "" if not r.get("per_cpu_s") else f" ({_fmt(r['per_cpu_s'])} per CPU-s)"
    return f"  {r['name']:<46} {_fmt(r['value']):>14} {r['unit']:<16} {ratio}{tgt}{cpu}"
