"""The run's metadata (machine, code, load) and the Markdown page of the results."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any, cast

import numpy as np

from .timing import _fmt


def machine_info() -> dict[str, Any]:
    """What the figures were measured on."""
    import numba

    info = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numba": numba.__version__,
        "numpy": np.__version__,
        "cpu_count": os.cpu_count(),
        "numba_threads": cast(Any, numba.config).NUMBA_NUM_THREADS,  # set at import time, unseen by mypy
        "cpu": platform.processor() or "",
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info


def code_info() -> dict[str, Any]:
    """Which code was measured: the package version and, in a git checkout, the commit (and whether edited).

    Figures kept in the repository are quoted by the docs; the commit says which engine they describe.
    """
    from jiu_env import __version__

    info: dict[str, Any] = {"jiu_env": __version__, "commit": None, "modified": None}
    root = Path(__file__).resolve().parents[2]  # the checkout (or site-packages): jiu_env/benchmark/ is two down
    if (root / ".git").exists():
        try:
            head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
            diff = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "jiu_env"],
                                  cwd=root, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return info
        if head.returncode == 0:
            info["commit"] = head.stdout.strip()
            info["modified"] = bool(diff.stdout.strip()) if diff.returncode == 0 else None
    return info


def _load():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def _code_line(code: dict[str, Any] | None) -> list[str]:
    if not code:
        return []
    line = f"Code: jiu_env {code['jiu_env']}"
    if code.get("commit"):
        line += f", commit {code['commit'][:12]}" + (" with local changes to jiu_env/" if code.get("modified") else "")
    return [line + "."]


def to_markdown(result: dict[str, Any]) -> str:
    """The results as a Markdown page."""
    m = result["machine"]
    lines = [
        "# jiu_env benchmark results",
        "",
        f"Measured {result['date']} with `{result['command']}`.",
        "",
        f"Machine: {m['cpu']}, {m['cpu_count']} cores, numba {m['numba']} ({m['numba_threads']} threads), "
        f"numpy {m['numpy']}, Python {m['python']}, {m['platform']}.",
        *_code_line(result.get("code")),
        f"Load average (1 min) at start / end: {result['load_start']} / {result['load_end']}.",
    ]
    if result.get("note"):
        lines += ["", result["note"]]
    lines += ["", "| section | measurement | value | unit | per CPU-second | ratio | target | note |",
              "|---|---|---:|---|---:|---|---|---|"]
    for r in result["rows"]:
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}x {r['ratio_to']}"
        tgt = "" if "target" not in r else f"{r['target']}: {'met' if r['met'] else '**missed**'}"
        cpu = _fmt(r.get("per_cpu_s")) if r.get("per_cpu_s") else ""
        lines.append(f"| {r['section']} | {r['name']} | {_fmt(r['value'])} | {r['unit']} | {cpu} | {ratio} | {tgt} | {r['note']} |")
    lines += ["", "Values are wall-clock rates, the best of several repeats.  \"Per CPU-second\" divides the "
              "same work by the CPU time of the benchmark process (all its threads): on a machine shared with "
              "other work it shows what the code does when it gets a core.  Ratios \"Jiu aec / this\" are "
              "Jiu's AEC steps/s divided by the other game's.", ""]
    return "\n".join(lines)
