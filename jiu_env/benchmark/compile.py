"""Section ``compile``: import, first ``reset()`` and first ``step()`` in fresh interpreters, cold and warm cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .timing import Table


_PROBE = r"""
import json, time
t0 = time.perf_counter()
import jiu_env
t1 = time.perf_counter()
env = jiu_env.env()
env.reset(seed=0)
t2 = time.perf_counter()
obs, r, term, trunc, info = env.last()
env.step(env.action_space(env.agent_selection).sample(obs["action_mask"]))
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "reset": t2 - t1, "step": t3 - t2}))
"""


def _probe(cache_dir=None):
    envv = dict(os.environ)
    if cache_dir is not None:
        envv["NUMBA_CACHE_DIR"] = str(cache_dir)
    root = Path(__file__).resolve().parents[2]  # the checkout (or site-packages): jiu_env/benchmark/ is two down
    out = subprocess.run([sys.executable, "-c", _PROBE], env=envv, cwd=root, capture_output=True, text=True,
                         timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "probe failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_compile(t: Table, cfg: dict[str, Any]) -> None:
    """Section ``compile``: import, first ``reset()`` and first ``step()`` in fresh interpreters, cold and warm."""
    if cfg["quick"]:
        # The package's own cache (warmed by this process) stands in for a warm cache.
        import jiu_env

        jiu_env.env().reset(seed=0)
        warm = _probe()
        note = "--quick: cold cache not measured"
    else:
        with tempfile.TemporaryDirectory(prefix="jiu-numba-") as d:
            cold = _probe(d)
            warm = _probe(d)
        t.add("compile", "compile, cold cache: import", cold["import"], "s")
        t.add("compile", "compile, cold cache: first reset()", cold["reset"], "s")
        t.add("compile", "compile, cold cache: first step()", cold["step"], "s")
        note = "fresh interpreter, NUMBA_CACHE_DIR filled by the cold run"
    t.add("compile", "compile, warm cache: import", warm["import"], "s", note=note)
    t.add("compile", "compile, warm cache: first reset()", warm["reset"], "s", note=note)
    t.add("compile", "compile, warm cache: first step()", warm["step"], "s", note=note)
