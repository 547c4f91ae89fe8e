"""The ``jiu`` command line: tournaments, playing a bot in the terminal, replaying records.

Run ``jiu --help`` or ``jiu <command> --help``.  Every sub-command is one
entry of :data:`COMMANDS`; :func:`main` takes the argument list, so the
commands can be driven from Python (``main(["eval", "--quick"])``).

Each command lives in a module of this package named after it (``eval``,
``play``, ``replay``, ``export``, ``bench``, ``warm``, ``train``): its
arguments (``_NAME_args``) and what it runs (``cmd_NAME``); what they share
(argparse types, the rules flags, error printing) is in ``common``.  This
module only builds the parser and dispatches; ``python -m jiu_env.cli`` runs
:func:`main` (``__main__.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, Sequence

from .bench import _bench_args, cmd_bench
from .common import _add_rules_args, _rules_from_args, int_at_least, writable_dir, writable_file
from .eval import CI_TARGET, QUICK_GAMES, QUICK_OPENING, QUICK_PLAYERS, SPRT_GAMES, _eval_args, cmd_eval
from .export import _export_args, cmd_export
from .play import PLAY_HELP, _play_args, cmd_play
from .replay import _replay_args, cmd_replay
from .train import _train_args, cmd_train
from .warm import _warm_args, cmd_warm

# name -> (help, example, add the arguments, run): the sub-commands of ``jiu``
Command = tuple[str, str, Callable[[argparse.ArgumentParser], Any], Callable[[argparse.Namespace], int]]
COMMANDS: dict[str, Command] = {
    "eval": ("tournament between bots / models with Elo ratings and reports",
             "jiu eval random greedy alphabeta:depth=2 --games 20 --out results\n"
             "  jiu eval --quick\n"
             "  jiu eval --quick --backend ray --address HEAD:6379\n"
             "  jiu eval --config ladder --out baselines/results",
             _eval_args, cmd_eval),
    "play": ("play a bot in the terminal (moves in notation or by number; undo, hint, save)",
             "jiu play --bot alphabeta:depth=2 --colour black --start battle",
             _play_args, cmd_play),
    "replay": ("step through a saved game (Enter next, b back, q quit; --all prints everything)",
               "jiu replay game.json\n  jiu replay results/games.jsonl --game 'random|greedy|0' --all",
               _replay_args, cmd_replay),
    "export": ("write every game of a games.jsonl or of record files, one file per game, as JSON, competition "
               "notation or jiuchess CSV, with event, date, players, result and rules headers",
               "jiu export results/games.jsonl --format competition --out results/games",
               _export_args, cmd_export),
    "bench": ("performance benchmark: kernel, batched runner, envs and search, side by side with peers",
              "jiu bench --quick --out /tmp/bench",
              _bench_args, cmd_bench),
    "warm": ("compile the bots' numba code into the on-disk cache (once per machine, image or cluster node)",
             "jiu warm\n  jiu warm greedy alphabeta:depth=2 --board-size 14",
             _warm_args, cmd_warm),
    "train": ("learn a policy-value network from the engines: labelled engine games, then training (resumable)",
              "jiu train runs/jiu14 --games 1000 --steps 20000\n  jiu train /tmp/quick --quick\n"
              "  jiu train runs/rl --stage rl --init runs/jiu14/net/net.pt --opponent alphabeta:depth=1 --iterations 50",
              _train_args, cmd_train),
}


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of ``jiu`` with every sub-command."""
    lines = ["examples (jiu COMMAND --help for every option):"]
    for name, (_, example, _, _) in COMMANDS.items():
        lines += ["  " + ex.strip() for ex in example.splitlines()]
    parser = argparse.ArgumentParser(
        prog="jiu",
        description="Jiu (久棋), the Tibetan board game: evaluation, play and replay tools.",
        epilog="\n".join(lines),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"jiu_env {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (hlp, example, add_args, _) in COMMANDS.items():
        p = sub.add_parser(name, help=hlp, description=hlp, epilog="example:\n  " + example,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        add_args(p)
    return parser


#: The exit status when the reader of the output has gone: 128 + SIGPIPE, what a shell reports for a Unix tool
#: (``seq``, ``cat``) stopped by a pipe closed early, so that ``set -o pipefail`` sees a run cut short.
EXIT_OUTPUT_CLOSED: int = 141


def _output_closed() -> int:
    """The reader of stdout has gone (``jiu replay g.json --all | head -1``): stop quietly, without a traceback.

    Python's docs (signal, "Note on SIGPIPE") recommend pointing stdout at
    devnull: the interpreter flushes stdout once more on exit, and that flush
    would fail again, printing "Exception ignored ... BrokenPipeError".
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # a stdout with no file descriptor (io.StringIO): nothing to flush there
        pass
    return EXIT_OUTPUT_CLOSED


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``jiu`` command; returns the exit status (:data:`EXIT_OUTPUT_CLOSED` when the reader
    of the output went away before the command was done)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 0
    args._argv = argv
    try:
        return COMMANDS[args.command][3](args)
    except BrokenPipeError:
        if not _stdout_gone():  # another pipe (a worker's): an error of the command, not its reader leaving
            raise
        return _output_closed()


def _stdout_gone() -> bool:
    """Whether stdout's reader has gone (a pipe whose read end is closed reports POLLERR); True where that
    cannot be asked (no poll, no file descriptor): the broken pipe is then taken for stdout's, as before."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return True


__all__ = ["main", "build_parser", "COMMANDS"]
