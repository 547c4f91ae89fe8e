"""``jiu train``: learn a policy-value network from the engines (:mod:`jiu_env.learn.pipeline`, which defines
its flags; the rules flags are the common ones)."""

from __future__ import annotations

import argparse

from .common import _add_rules_args, _err, _rules_from_args, writable_dir


def _train_args(p):
    from ..learn import pipeline

    pipeline.add_arguments(p)
    _add_rules_args(p)


def cmd_train(args: argparse.Namespace) -> int:
    from ..learn import pipeline

    why = writable_dir(args.out, "DIR")
    if why:
        return _err(f"train: {why}")
    given = args.board_size is not None or any(r.partition("=")[0].strip() == "board_size" for r in args.rule or [])
    if args.quick and not given:  # --quick is a 6x6 run unless a board size is given
        args.board_size = pipeline.QUICK["board_size"]
    return pipeline.run(args, _rules_from_args(args))
