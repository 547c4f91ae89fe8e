"""Section ``kernel``: random full games in the numba kernel on one core, and the machine's ceiling.

:func:`process_ceiling` runs the same one-core loop in several independent
interpreters at once: the most any parallel runner of this code can reach on
the machine (the ``batched`` section compares the batched runner with it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import IO, Any, Callable

from .timing import Table, best_rate


def kernel_games(seed: int = 0) -> Callable[[], int]:
    """The one-core kernel loop: a function that plays two random full games (14x14, competitive) per call,
    each with a new seed, and returns their decisions.  The kernel is compiled / loaded here."""
    from jiu_env import Rules, kernel as K

    template = Rules.make("competitive").new_state()
    K.random_games(template, 1, 0)
    last = [seed]

    def run():
        last[0] += 1
        return K.random_games(template, 2, last[0])

    return run


def bench_kernel(t: Table, cfg: dict[str, Any]) -> None:
    """Section ``kernel``: random full games in the numba kernel on one core, the ceiling of every shell."""
    rate = best_rate(kernel_games(), cfg["time"], cfg["repeats"])
    t.add("kernel", "kernel random games, 1 core", rate, "decisions/s",
          note="K.random_games, 14x14 competitive, full games from placement")


_KERNEL_WORKER = r"""
import json, sys
from jiu_env.benchmark import best_rate, kernel_games
run = kernel_games(int(sys.argv[2]))
print("ready", flush=True)
sys.stdin.readline()
print(json.dumps(float(best_rate(run, float(sys.argv[1]), 1))), flush=True)
"""


def _pipes(p: subprocess.Popen[str]) -> tuple[IO[str], IO[str]]:
    """``p.stdin`` and ``p.stdout`` of a process started with both as pipes (typed Optional by subprocess)."""
    if p.stdin is None or p.stdout is None:
        raise RuntimeError("the worker process was started without stdin/stdout pipes")
    return p.stdin, p.stdout


def process_ceiling(processes: int, seconds: float) -> tuple[float, list[float]]:
    """Summed decisions/s of ``processes`` independent interpreters running the 1-core kernel loop at once.

    Nothing is shared between them but the hardware, so this is the most any
    parallel runner of this code can reach on the machine (cores that share a
    physical core or a memory bus show up here, not in the runner).
    """
    root = Path(__file__).resolve().parents[2]  # the checkout (or site-packages): jiu_env/benchmark/ is two down
    procs = [subprocess.Popen([sys.executable, "-c", _KERNEL_WORKER, str(seconds), str(1000 * i)], cwd=root,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for i in range(processes)]
    pipes = [_pipes(p) for p in procs]
    try:
        for _, stdout in pipes:
            if stdout.readline().strip() != "ready":
                raise RuntimeError("kernel worker process failed to start")
        for stdin, _ in pipes:  # start together
            stdin.write("go\n")
            stdin.flush()
        rates = [float(json.loads(stdout.readline())) for _, stdout in pipes]
    except BaseException:
        for p in procs:
            p.kill()
        raise
    finally:
        for p, (stdin, _) in zip(procs, pipes):
            stdin.close()
            p.wait()
    return sum(rates), rates
