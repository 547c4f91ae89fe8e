"""``jiu bench``: the performance benchmark (:mod:`jiu_env.benchmark`, which defines its flags)."""

from __future__ import annotations

import argparse

from .common import _err


def _bench_args(p):
    from .. import benchmark

    benchmark.add_arguments(p)


def cmd_bench(args: argparse.Namespace) -> int:
    from .. import benchmark

    try:
        return benchmark.run(args)
    except OSError as e:
        return _err(f"bench: {e}")
