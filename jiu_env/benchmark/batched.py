"""Section ``batched``: the batched runner (:mod:`jiu_env.batch`) on one thread and on all cores."""

from __future__ import annotations

from typing import Any, cast

from .kernel import process_ceiling
from .timing import Table, _fmt, best_rate


def bench_batched(t: Table, cfg: dict[str, Any]) -> None:
    """Section ``batched``: the batched runner on one thread and on all cores, against separate kernel processes."""
    import numba

    from jiu_env.batch import BatchRunner, derive_seeds, sample_masked

    base = t.get("kernel random games, 1 core")
    threads = cast(Any, numba.config).NUMBA_NUM_THREADS  # numba.config sets it at import time, unseen by mypy
    previous = numba.get_num_threads()
    b = cfg["games"]
    runner = BatchRunner(b, seed=1)
    runner.reset()
    runner.play_random(10)  # compile / load

    def rate_with(nthreads):
        numba.set_num_threads(nthreads)
        try:
            return best_rate(lambda: runner.play_random(200), cfg["time"], cfg["repeats"])
        finally:
            numba.set_num_threads(previous)

    one = rate_with(1)
    allc = rate_with(threads)
    kr = None if not base else one / base
    t.add("batched", "batched runner, 1 core", one, "decisions/s", kr, "kernel 1 core" if kr else None,
          note=f"BatchRunner({b}).play_random, no observations")
    t.add("batched", "batched runner, all cores", allc, "decisions/s",
          None if not base else allc / base, "kernel 1 core" if base else None,
          note=f"{threads} threads; {allc / one:.2f}x the runner on 1 thread")
    if threads > 1:
        ceiling, rates = process_ceiling(threads, cfg["time"])
        t.add("batched", f"kernel in {threads} separate processes", ceiling, "decisions/s",
              None if not base else ceiling / base, "kernel 1 core" if base else None,
              note=f"the machine's ceiling: {threads} independent interpreters at once "
                   f"({', '.join(_fmt(r) for r in rates)}); the runner reaches {allc / ceiling:.2f}x of it")

    obs, masks = runner.reset()
    rng = derive_seeds(2, b)
    state = {"masks": masks}

    def step():
        _, m, _, _, _ = runner.step(sample_masked(state["masks"], rng))
        state["masks"] = m
        return b

    step()
    for label, nthreads in (("1 core", 1), ("all cores", threads)):
        numba.set_num_threads(nthreads)
        try:
            rate = best_rate(step, cfg["time"], cfg["repeats"])
        finally:
            numba.set_num_threads(previous)
        t.add("batched", f"batched runner step() with obs + masks, {label}", rate, "decisions/s",
              None if not base else rate / base, "kernel 1 core" if base else None,
              note=f"{b} games, {nthreads} thread(s), one Python call per batch step, random legal actions")
