"""``jiu train``: the whole learning pipeline in one resumable command.

Stages, each in its own folder of the run directory and each resumable:

1. ``data/``: engine games labelled by a fresh search at every decision
   (:mod:`jiu_env.learn.data`), in chunks with a manifest;
2. ``net/``: the policy-value network trained on them
   (:mod:`jiu_env.learn.train`), with ``curve.csv`` and the checkpoint
   ``net/net.pt`` that ``policy:PATH`` and ``alphazero:PATH`` load.

Generations beyond the teacher (each its own run directory, each stage
resumable):

3. ``--stage selfplay --net LAST.pt``: ``selfplay/``, the last network
   playing itself with PUCT search, leaves of many games batched into one
   forward pass (:mod:`jiu_env.learn.selfplay`);
4. ``--stage train --init LAST.pt --data OLD_DATA``: the next network on
   the new self-play data mixed with the old data, starting from the last
   weights;
5. ``--stage gate --against LAST.pt``: a match of the new network against
   the last one, stopped by SPRT (``gate/``); the generation is kept only
   if the test accepts that it is stronger.

Beyond imitation by the games' results:

6. ``--stage rl --init NET.pt --opponent SPEC``: ``rl/``, PPO on the
   network's own games against a fixed opponent, resumable after every
   iteration (:mod:`jiu_env.learn.rl`).

Stop it at any point (Ctrl-C, a killed job) and run the same command again:
finished chunks and the last saved training state are kept, nothing is done
twice.  ``--quick`` runs the whole pipeline on 6x6 in well under a minute.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from typing import Any

from ..options import rules_flags
from ..rules import Rules
from ..evaluation.backends import GameFailed
from .data import ChunkFailed
from .train import POLICY_TARGETS, PRECISIONS

#: ``--quick``: a 6x6 run of every stage in well under a minute.
QUICK = dict(board_size=6, teacher="alphabeta:depth=1,tt_bits=14", games=8, chunk_games=2, steps=150, channels=16,
             blocks=1, batch=64, eval_every=50, save_every=50, random_opening=4, sims=8,
             iterations=2, iteration_games=8, concurrent=4, minibatch=64)
#: The stages of :func:`run_pipeline` (``--stage``).
STAGES = ("all", "data", "train", "selfplay", "gate", "rl")
#: ``--teacher``: the engine that labels the data.
TEACHER = "alphabeta:depth=2,tt_bits=18"
#: The learning rate of ``--stage train`` and of ``--stage rl`` (fine-tuning moves the weights far less).
LR = {"train": 2e-3, "rl": 2e-5}
#: ``--random-opening`` of the data, self-play and gate stages, and of ``--stage rl``.
OPENING = {"data": 8, "rl": 4}


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the flags of ``jiu train`` to ``p`` (defined here, next to what reads them, not in the CLI)."""
    p.add_argument("out", metavar="DIR", help="run directory (created; an existing one is resumed)")
    p.add_argument("--quick", action="store_true",
                   help="a 6x6 run of the whole pipeline in well under a minute (overrides the sizes below; an "
                        "explicit --teacher, --random-opening or board size is kept)")
    p.add_argument("--stage", choices=STAGES, default="all",
                   help="all: data then train; or one stage: data (engine games), train, selfplay (the network "
                        "--net plays itself with search into DIR/selfplay), gate (a match of --net against "
                        "--against, stopped by SPRT), rl (PPO of --init on its own games against --opponent, "
                        "into DIR/rl) (default: all)")
    p.add_argument("--net", metavar="CHECKPOINT",
                   help="selfplay: the network that plays; gate: the new network (default DIR/net/net.pt)")
    p.add_argument("--against", metavar="CHECKPOINT", help="gate: the network it must beat (the last generation)")
    p.add_argument("--init", metavar="CHECKPOINT",
                   help="train: start from these weights (the last generation) instead of random ones; a "
                        "network of the same width and fewer blocks starts a deeper one (new blocks pass their "
                        "input through unchanged until trained); rl: the network that learns (default "
                        "DIR/net/net.pt)")
    p.add_argument("--opponent", default="alphabeta:depth=1",
                   help="rl: the bot spec the network plays (default %(default)s)")
    p.add_argument("--iterations", type=int, default=50,
                   help="rl: stop when this many iterations are done in all (default 50)")
    p.add_argument("--iteration-games", type=int, default=96, help="rl: games an iteration (default 96)")
    p.add_argument("--placement-net", metavar="CHECKPOINT",
                   help="rl: a fixed network that places by argmax (default: the initial network)")
    p.add_argument("--temperature", type=float, default=0.25,
                   help="rl: the network samples its battle moves from softmax(logits / T) (default 0.25)")
    p.add_argument("--streams", type=int, default=2,
                   help="rl: an iteration's games are split into this many streams, the unit of work of a process "
                        "(the games depend on it, not on --workers; default 2)")
    p.add_argument("--concurrent", type=int, default=16,
                   help="rl: games a stream plays at once, one batched forward pass for their decisions "
                        "(default 16)")
    p.add_argument("--minibatch", type=int, default=512, help="rl: decisions per PPO step (default 512)")
    p.add_argument("--sims", type=int, default=32, help="selfplay: simulations per decision (default 32)")
    p.add_argument("--adjudicate-turns", type=int, default=0,
                   help="selfplay: a game still going after this many battle turns is scored by the stone "
                        "difference (default 0: played to the end)")
    p.add_argument("--gate-player", default="policy:checkpoint={net}",
                   help="gate: the player spec of each network, {net} standing for its checkpoint "
                        "(default %(default)s)")
    p.add_argument("--sprt", nargs=2, type=float, default=[0.0, 20.0], metavar=("ELO0", "ELO1"),
                   help="gate: SPRT hypotheses, the new network is ELO0 vs ELO1 Elo stronger (default 0 20)")
    p.add_argument("--teacher", help=f"the engine that labels every decision (default {TEACHER}; --quick: "
                                     f"{QUICK['teacher']})")
    p.add_argument("--games", type=int, default=1000,
                   help="data: engine games to generate; selfplay: self-play games; gate: the most games of the "
                        "match (the SPRT stops it as soon as it decides) (default 1000; --quick: 8)")
    p.add_argument("--chunk-games", type=int, default=8, help="games per data chunk (default 8)")
    p.add_argument("--random-opening", type=int, metavar="K",
                   help="random placements that open each game: data and selfplay, k drawn from 0..K a game; gate "
                        "and rl, exactly K (default 8; rl: 4; --quick: 4)")
    p.add_argument("--explore", type=float, default=0.05,
                   help="share of battle moves replaced by a random move (labels stay the teacher's; default 0.05)")
    p.add_argument("--players", nargs=2, metavar=("A", "B"),
                   help="data: the games are played by these two bot specs (A white in even games, colours "
                        "swapped in odd ones) and only labelled by the teacher (DAgger: the teacher's labels on "
                        "the positions a learner reaches; default: the teacher plays)")
    p.add_argument("--soft", type=float, default=0.0, metavar="T",
                   help="data: soft labels, the teacher's best root moves weighted exp((score - best) / T), T in "
                        "centistones; needs a teacher reporting root scores, e.g. --teacher "
                        "alphabeta:depth=2,tt_bits=18,root_margin=240; a phases teacher gets soft labels in the "
                        "phase whose engine reports them, the move alone in the other (default 0: the teacher's "
                        "move alone)")
    p.add_argument("--seed", type=int, default=0, help="seed of the games and of the training (default 0)")
    p.add_argument("--workers", type=int, default=1,
                   help="processes that play (data and selfplay chunks, gate games, rl streams; with --backend ray "
                        "the CPUs of a private Ray instance) and that replay the data into positions for train "
                        "(default 1)")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="where data chunks are played: local processes or Ray tasks (default local)")
    p.add_argument("--address", metavar="HOST:PORT",
                   help="Ray cluster to play data chunks on (with --backend ray; default: a private instance here)")
    p.add_argument("--data", action="append", metavar="DIR", default=[],
                   help="another data directory (made by jiu train under the same rules) to train on as well "
                        "(repeatable)")
    p.add_argument("--placement-data", action="append", metavar="DIR", default=[],
                   help="train: take the placement positions from these data directories (repeatable) and only "
                        "the battle positions from the others (the run's own and --data): each phase learns "
                        "its own teacher's labels")
    p.add_argument("--steps", type=int, default=20_000, help="training steps (default 20000)")
    p.add_argument("--batch", type=int, default=256, help="positions per training step (default 256)")
    p.add_argument("--channels", type=int, default=32, help="network width (default 32)")
    p.add_argument("--blocks", type=int, default=3, help="residual blocks (default 3)")
    p.add_argument("--features", choices=("planes", "tactics"), default="planes",
                   help="the network's input: planes (the 21 observation planes) or tactics (those and what each "
                        "move of either side takes at once; jiu_env.bots.features) (default planes)")
    p.add_argument("--policy-target", choices=POLICY_TARGETS, default="soft",
                   help="train: the policy learns each position's stored distribution (self-play visits, soft "
                        "labels) where the data has one (soft), the labelled move alone (move), or the "
                        "distribution in battle and the move in placement (soft-battle) (default soft)")
    p.add_argument("--sharpen", type=float, default=1.0, metavar="K",
                   help="train: raise every soft target to the power K and renormalise (a soft label of temperature "
                        "T learns as one of T / K; self-play visits as N ** K) (default 1: as stored)")
    p.add_argument("--decision-weight", type=_decision_weight, action="append", metavar="KIND=W",
                   help="train: weigh the policy loss of one kind of decision (placement, move, chain, drop, "
                        "capture) by W, the others by 1; repeat for more kinds (default: all 1)")
    p.add_argument("--precision", choices=PRECISIONS, default="fp32",
                   help="train: the arithmetic of the training step, fp32 or bf16 (autocast to bfloat16; faster on "
                        "CPUs with AVX512-BF16 and on GPUs, slower elsewhere; weights stay float32) (default fp32)")
    p.add_argument("--lr", type=float, help="peak learning rate (default 0.002; rl: 0.00002)")
    p.add_argument("--result-weight", type=float, default=0.5,
                   help="weight of the game result in battle positions' value target (the rest: the search value; "
                        "default 0.5)")
    p.add_argument("--placement-result-weight", type=float, default=1.0,
                   help="weight of the game result in placement positions' value target (default 1.0)")
    p.add_argument("--eval-every", type=int, default=500, help="steps between validation rows of the curve")
    p.add_argument("--save-every", type=int, default=500, help="steps between saved training states")
    p.add_argument("--threads", type=int, default=1, help="torch threads for training (default 1)")
    p.add_argument("--device", default="cpu", help="torch device for training (default cpu; e.g. cuda)")
    p.add_argument("--max-steps-now", type=int, metavar="K",
                   help="train at most K steps in this call, then stop (resume later)")


def _decision_weight(text: str) -> tuple[str, float]:
    """``KIND=W`` of ``--decision-weight`` as ``(kind, weight)``; a usage error names what is wrong
    (the kinds and bounds are :class:`TrainConfig`'s own check)."""
    from .dataset import DECISION_KINDS
    from .train import check_decision_weight

    kind, sep, w = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KIND=W with KIND one of {', '.join(DECISION_KINDS)}, not {text!r}")
    try:
        weight = float(w)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the weight of {kind} must be a number, not {w!r}") from None
    try:
        check_decision_weight(kind, weight)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return kind, weight


def settings(args: argparse.Namespace, rules: Rules) -> dict[str, Any]:
    """The run's settings from the command line and its rules.

    ``--quick`` replaces the sizes (games, steps, network, ...); a teacher or
    a ``--random-opening`` given on the command line is kept (only their
    defaults are the quick run's).
    """
    q = QUICK if args.quick else {}
    pick = (lambda k, v: q.get(k, v))
    given = {k: getattr(args, k) for k in ("teacher", "random_opening") if getattr(args, k) is not None}
    opening = {k: given.get("random_opening", pick("random_opening", v)) for k, v in OPENING.items()}
    lr = {k: args.lr if args.lr is not None else v for k, v in LR.items()}
    kinds = [k for k, _ in args.decision_weight or ()]
    twice = sorted({k for k in kinds if kinds.count(k) > 1})
    if twice:
        raise ValueError(f"--decision-weight names {', '.join(twice)} more than once (one weight a kind)")
    return {
        "rules": rules.to_dict(),
        "teacher": given.get("teacher", pick("teacher", TEACHER)), "games": pick("games", args.games),
        "chunk_games": pick("chunk_games", args.chunk_games), "random_opening": opening["data"],
        "explore": args.explore, "seed": args.seed, "players": list(args.players or ()), "soft": args.soft,
        "train": {"steps": pick("steps", args.steps), "batch": pick("batch", args.batch),
                  "channels": pick("channels", args.channels), "blocks": pick("blocks", args.blocks),
                  "features": args.features, "policy_target": args.policy_target,
                  "sharpen": args.sharpen, "decision_weight": dict(args.decision_weight or ()),
                  "precision": args.precision, "lr": lr["train"], "result_weight": args.result_weight,
                  "placement_result_weight": args.placement_result_weight, "eval_every": pick("eval_every", args.eval_every),
                  "save_every": pick("save_every", args.save_every), "seed": args.seed},
        "init": args.init,
        "selfplay": {"net": args.net, "sims": pick("sims", args.sims), "adjudicate_turns": args.adjudicate_turns},
        "gate": {"net": args.net, "against": args.against, "player": args.gate_player, "sprt": list(args.sprt)},
        "rl": {"placement": args.placement_net, "opponent": args.opponent, "iterations": pick("iterations", args.iterations),
               "games": pick("iteration_games", args.iteration_games), "streams": args.streams,
               "concurrent": pick("concurrent", args.concurrent), "minibatch": pick("minibatch", args.minibatch),
               "temperature": args.temperature, "lr": lr["rl"], "random_opening": opening["rl"]},
    }


def data_config(s: dict[str, Any]) -> Any:
    """The :class:`~jiu_env.learn.data.DataConfig` of the data stage of settings ``s``."""
    from .data import DataConfig

    return DataConfig(teacher=s["teacher"], rules=s["rules"], seed=s["seed"], chunk_games=s["chunk_games"],
                      random_opening=s["random_opening"], explore=s["explore"], players=tuple(s.get("players") or ()),
                      soft=s.get("soft", 0.0))


def _train_dirs(out: pathlib.Path, extra_data=()) -> list[Any]:
    """The data directories the train stage trains on: the run's own (those with a manifest) and ``--data``."""
    from .data import MANIFEST

    return [d for d in (out / "data", out / "selfplay") if (d / MANIFEST).exists()] + list(extra_data)


def _train_key(dirs: list[Any], place_dirs: list[Any]) -> str:
    """The data key (:func:`~jiu_env.learn.dataset.data_key`) a training on ``dirs`` and ``place_dirs`` keeps in
    its state: a resumed training refuses other data."""
    from .dataset import data_key

    return data_key([*dirs, *place_dirs]) + "+placement" + str(len(place_dirs)) if place_dirs else data_key(dirs)


def run_pipeline(out: str | pathlib.Path, s: dict[str, Any], stage: str = "all", workers: int = 1, extra_data=(),
                 placement_data=(),
                 threads: int = 1, device: str = "cpu", max_steps_now: int | None = None,
                 progress: bool = True, backend: str = "local", address: str | None = None,
                 rules_given: bool = False) -> dict[str, Any]:
    """Run (or resume) the stages of the pipeline with settings ``s`` (see :func:`settings`) in ``out``.

    Every setting the stage uses is checked before anything is written or
    played (:func:`check_run`): a misspelt flag of the training stage does
    not wait for the data stage to finish.  ``rules_given``: ``s["rules"]``
    was asked for on the command line (see :func:`check_run`).
    """
    from .data import generate

    out = pathlib.Path(out)
    cfg = data_config(s)
    check_run(out, s, stage, workers=workers, extra_data=extra_data, placement_data=placement_data, threads=threads,
              device=device, max_steps_now=max_steps_now, backend=backend, address=address, rules_given=rules_given)
    report: dict[str, Any] = {"dir": str(out)}
    if stage in ("all", "data"):  # generate checks the teacher and players before it writes anything
        t0 = time.process_time()
        manifest = generate(out / "data", cfg, s["games"], workers=workers, progress=progress, backend=backend,
                            address=address)
        chunks = manifest["chunks"].values()
        report["data"] = {"games": sum(c["games"] for c in chunks), "labelled": sum(c["labelled"] for c in chunks),
                          "cpu_seconds": round(sum(c["cpu_seconds"] or 0.0 for c in chunks), 1),
                          "cpu_seconds_now": round(time.process_time() - t0, 1)}
    out.mkdir(parents=True, exist_ok=True)
    if stage == "selfplay":
        from .selfplay import SelfPlayConfig

        sp = s["selfplay"]
        net = pathlib.Path(sp["net"] or out / "net" / "net.pt")
        scfg = SelfPlayConfig.for_net(net, rules=s["rules"], seed=s["seed"], chunk_games=s["chunk_games"],
                                      sims=sp["sims"], random_opening=s["random_opening"],
                                      adjudicate_turns=sp["adjudicate_turns"])
        t0 = time.process_time()
        manifest = generate(out / "selfplay", scfg, s["games"], workers=workers, progress=progress, backend=backend,
                            address=address)
        chunks = manifest["chunks"].values()
        report["selfplay"] = {"games": sum(c["games"] for c in chunks), "labelled": sum(c["labelled"] for c in chunks),
                              "cpu_seconds": round(sum(c["cpu_seconds"] or 0.0 for c in chunks), 1),
                              "cpu_seconds_now": round(time.process_time() - t0, 1), "net": str(net)}
    if stage in ("all", "train"):
        from .data import read_manifest
        from .dataset import concat_positions, load_positions
        from .train import NET, TrainConfig, train

        dirs = _train_dirs(out, extra_data)
        if not dirs:
            raise FileNotFoundError(f"nothing to train on: no {out / 'data'} or {out / 'selfplay'} and no --data")
        tcfg = TrainConfig(**s["train"])
        place_dirs = list(placement_data)
        data, rules = load_positions(dirs, features=tcfg.features, workers=workers,
                                     phase="battle" if place_dirs else "both")
        key = _train_key(dirs, place_dirs)

        def teacher_of(d: pathlib.Path) -> str:  # who labelled a data run (self-play: its network's search)
            c = (read_manifest(d) or {}).get("config") or {}
            if c.get("kind") == "selfplay":
                return f"selfplay:{c.get('net')},sims={c.get('sims')}"
            return str(c.get("teacher"))

        # the teachers of the data trained on, not this command's --teacher (a run that trains on --data
        # made none of it)
        meta: dict[str, Any] = {"teacher": teacher_of(dirs[0]), "data": [str(d) for d in dirs],
                                "teachers": [teacher_of(d) for d in dirs]}
        if place_dirs:  # placement positions from other runs (another teacher's labels)
            place, place_rules = load_positions(place_dirs, features=tcfg.features, workers=workers, phase="placement")
            if place_rules != rules:
                raise ValueError(f"--placement-data {place_dirs[0]} was made under other rules than {dirs[0]}")
            data = concat_positions([data, place])
            meta["placement_data"] = [str(d) for d in place_dirs]
            meta["placement_teachers"] = [teacher_of(d) for d in place_dirs]
        init = s.get("init")
        # the games of the data runs (their manifests): a game seed alone would count an engine game and a
        # self-play game of the same --seed and index as one
        meta["data_games"] = sum(int(c["games"]) for d in [*dirs, *place_dirs]
                                 for c in ((read_manifest(d) or {}).get("chunks") or {}).values())
        row = train(data, rules, out / "net", tcfg, device=device, threads=threads, progress=progress,
                    stop_after=max_steps_now, init=init, data_key=key, meta=meta)
        report["train"] = {"data_positions": len(data), "checkpoint": str(out / "net" / NET), **row}
    if stage == "gate":
        report["gate"] = gate(out, s, workers=workers, progress=progress, backend=backend, address=address)
    if stage == "rl":
        from .rl import RLConfig, run_rl

        r = s["rl"]
        rcfg = RLConfig.for_nets(s.get("init") or out / "net" / "net.pt", r["placement"], opponent=r["opponent"],
                                 rules=s["rules"], seed=s["seed"], games=r["games"], streams=r["streams"],
                                 concurrent=r["concurrent"], random_opening=r["random_opening"],
                                 temperature=r["temperature"], lr=r["lr"], minibatch=r["minibatch"],
                                 precision=s["train"]["precision"])
        t0 = time.process_time()
        rows = run_rl(out / "rl", rcfg, r["iterations"], workers=workers, threads=threads, progress=progress,
                      backend=backend, address=address)
        report["rl"] = {"checkpoint": str(out / "rl" / "net.pt"), "iterations": len(rows),
                        "cpu_seconds_now": round(time.process_time() - t0, 1), **(rows[-1] if rows else {})}
    return report


def check_run(out: str | pathlib.Path, s: dict[str, Any], stage: str = "all", workers: int = 1, extra_data=(),
              placement_data=(), threads: int = 1, device: str = "cpu", max_steps_now: int | None = None,
              backend: str = "local", address: str | None = None, rules_given: bool = False) -> None:
    """Refuse the settings of :func:`run_pipeline` that ``stage`` would fail on, before anything is written.

    ValueError (FileNotFoundError for a missing file or data directory)
    naming the setting.  The training stage's settings, its ``--init`` (its
    shape and rules) and its data directories (their rules), and whether a
    training state already in ``out`` would resume with them, are checked
    here too, so that with ``stage="all"`` a typo costs seconds, not the
    data stage.  ``rules_given``: ``s["rules"]`` was asked for on the
    command line; ``stage="train"``, which trains under the rules of its
    data, then refuses data made under other rules rather than ignore them.
    """
    from ..evaluation.backends import check_backend
    from .params import check_int

    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}, not {stage!r}")
    out = pathlib.Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is not a directory (the run directory)")
    check_int("workers", workers, 1, 1024)
    check_int("threads", threads, 1, 1024)
    if max_steps_now is not None:
        check_int("max_steps_now", max_steps_now, 1, 10 ** 9)
    check_backend(backend, address)
    if stage in ("all", "train"):
        from .data import read_manifest
        from .train import TrainConfig

        TrainConfig(**s["train"])
        init = s.get("init")
        if init is not None and not pathlib.Path(init).is_file():
            raise FileNotFoundError(f"--init checkpoint {init} not found")
        seen = {(out / d).resolve(): f"{out / d} (the run's own)" for d in ("data", "selfplay")}
        for flag, dirs in (("--data", extra_data), ("--placement-data", placement_data)):
            for d in dirs:
                if read_manifest(d) is None:
                    raise FileNotFoundError(f"{flag} {d}: no manifest there, not a training-data directory")
                key = pathlib.Path(d).resolve()
                if key in seen:
                    raise ValueError(f"{flag} {d} is {seen[key]} given again: its positions would count twice")
                seen[key] = f"{flag} {d}"
        import torch

        try:
            dev = torch.device(device)
        except (RuntimeError, TypeError) as e:
            raise ValueError(f"--device {device!r} is not a torch device (cpu, cuda, cuda:1, mps...): {e}") from None
        problem = device_problem(dev)
        if problem:  # found now, not after the data stage has run for hours
            raise ValueError(f"--device {device}: {problem}")
        _check_training_inputs(out, s, stage, TrainConfig(**s["train"]), extra_data, placement_data, rules_given)
    if stage == "gate":
        gate_template(s["gate"]["player"])


def _check_training_inputs(out: pathlib.Path, s: dict[str, Any], stage: str, cfg: Any, extra_data, placement_data,
                           rules_given: bool) -> None:
    """What the train stage would refuse once it reads its inputs, refused before the data stage plays a game.

    The rules of every data directory (the run's own data is made under
    ``s["rules"]`` with ``stage="all"``; ``stage="train"`` takes its first
    directory's), of ``--init`` and its shape; and a training state in
    ``out/net`` that would not resume on this data (``--games`` raised after
    it trained: the data stage would add chunks) or with these settings.
    """
    from .data import chunk_name, read_manifest
    from .dataset import rules_of_run
    from .train import STATE, check_resume, differences, init_network, read_state

    asked = Rules.make(dict(s["rules"]))
    if stage == "all":
        dirs = [out / "data"] + [d for d in _train_dirs(out, extra_data) if d != out / "data"]
        rules, source = asked, "this run's"
    else:
        dirs = _train_dirs(out, extra_data)
        if not dirs:
            raise FileNotFoundError(f"nothing to train on: no {out / 'data'} or {out / 'selfplay'} and no --data")
        rules, source = rules_of_run(dirs[0]), str(dirs[0])
        if rules_given and rules != asked:  # they would be ignored
            diff = differences(rules.to_dict(), asked.to_dict(), ("the data", "asked"))
            raise ValueError(f"--stage train trains under the rules of its data, and {dirs[0]} was made under other "
                             f"rules than the command line's ({diff}): drop --rules / --rule / --board-size, or "
                             "train on data made under those rules")
    for flag, ds in (("--data", extra_data), ("--placement-data", placement_data)):
        for d in ds:
            theirs = rules_of_run(d)
            if theirs != rules:
                raise ValueError(f"{flag} {d} was made under other rules than {source} "
                                 f"({differences(theirs.to_dict(), rules.to_dict(), ('there', 'here'))})")
    init = s.get("init")
    st = read_state(out / "net")
    if st is None:
        if init is not None:
            init_network(init, cfg, rules)  # its shape and rules
        return
    state = out / "net" / STATE
    check_resume(state, st, cfg, rules, init=init)
    if st.get("data_key") is None:  # (a state saved before its data was kept: the training does not check it)
        return
    if stage == "all":
        manifest = read_manifest(out / "data")
        have = (manifest or {}).get("chunks") or {}
        same = manifest is None or manifest["config"] == json.loads(json.dumps(data_config(s).to_dict()))
        new = [i for i in range(-(-s["games"] // s["chunk_games"])) if chunk_name(i) not in have]
        if same and new:  # (other settings: the data stage refuses them itself, before any game)
            games = sum(int(c["games"]) for c in have.values())
            raise ValueError(f"--games {s['games']} would add {len(new)} chunk(s) to the {games} games in "
                             f"{out / 'data'}, and {state}, trained on those, cannot resume on other data: keep "
                             f"--games {games} here, or train on more games in a new run directory (new games: "
                             f"another --seed, with --data {out / 'data'} to train on these too)")
        if manifest is None:  # the state trained on other data (this run has none yet)
            raise ValueError(f"{state} belongs to a run on other data than the games the data stage would make "
                             f"in {out / 'data'}; use another directory")
    check_resume(state, st, cfg, rules, data_key=_train_key(dirs, list(placement_data)))


def device_problem(dev: Any) -> str | None:
    """Why torch cannot train on ``dev`` here (a CPU-only build, a GPU index that is not there), or None."""
    import torch

    if dev.type == "cuda":
        if not torch.cuda.is_available():
            return ("this torch has no usable CUDA (a CPU-only build, or no GPU visible): train with "
                    "--device cpu, or install a CUDA build of torch")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            return f"there are {torch.cuda.device_count()} CUDA device(s) here (cuda:0 .. cuda:{torch.cuda.device_count() - 1})"
    elif dev.type == "mps" and not torch.backends.mps.is_available():
        return "this torch has no usable MPS backend (Apple GPUs only): train with --device cpu"
    return None


def gate_template(template: str) -> str:
    """``template`` if it is a player spec with ``{net}`` (where the checkpoint goes) and no other field."""
    import string

    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as e:
        raise ValueError(f"--gate-player {template!r} is not a template: {e} (write {{{{ and }}}} for braces)") from None
    if fields.count("net") < 1 or set(fields) != {"net"}:
        raise ValueError(f"--gate-player must contain {{net}} (where the checkpoint goes) and no other {{...}} "
                         f"field, not {template!r}")
    return template


def gate(out: pathlib.Path, s: dict[str, Any], workers: int = 1, progress: bool = True, backend: str = "local",
         address: str | None = None) -> dict[str, Any]:
    """A match of the new network against the last generation, stopped by SPRT (``DIR/gate/``).

    Colours alternate over game pairs with random openings; the run resumes
    like any ``jiu eval --out`` folder and gives the same decision on the same
    games.  ``accepted`` is true when the test accepts H1 (the new network is
    at least ``elo1`` stronger), false for H0, None while undecided at the
    games limit.
    """
    from ..evaluation.tournament import Player, TournamentConfig, run_tournament

    g = s["gate"]
    new = pathlib.Path(g["net"] or out / "net" / "net.pt").resolve()
    if not g["against"]:
        raise ValueError("the gate stage needs --against CHECKPOINT (the network to beat)")
    old = pathlib.Path(g["against"]).resolve()
    for path in (new, old):
        if not path.is_file():
            raise FileNotFoundError(f"checkpoint {path} not found")
    template = gate_template(g["player"])
    cfg = TournamentConfig(players=[Player("new", template.format(net=new)), Player("old", template.format(net=old))],
                           games=s["games"], rules=s["rules"], seed=s["seed"], random_opening=s["random_opening"],
                           anchor="old", title="generation gate",
                           sprt={"elo0": g["sprt"][0], "elo1": g["sprt"][1], "alpha": 0.05, "beta": 0.05})
    result = run_tournament(cfg, out_dir=str(out / "gate"), workers=workers, backend=backend, address=address,
                            progress=None, log=(lambda m: print(m, file=sys.stderr)) if progress else (lambda m: None))
    sprt = result.summary.get("sprt") or {}
    decision = sprt.get("decision")
    pair: dict[str, Any] = next(iter(result.summary.get("pairs", [])), {})
    return {"new": str(new), "old": str(old), "games": len(result.games), "sprt": sprt,
            "accepted": True if decision == "H1 accepted" else False if decision == "H0 accepted" else None,
            "pair": pair}


_EVERY = frozenset(STAGES)
_PLAYING = frozenset(("all", "data", "selfplay", "gate", "rl"))  # the stages that play games
_TRAINING = frozenset(("all", "train"))
#: The stages that read each flag of :func:`add_arguments` (by its ``dest``); a flag given to another stage would be
#: ignored, so :func:`stage_flag_problems` names it.
FLAG_STAGES: dict[str, frozenset[str]] = {
    "quick": _EVERY, "seed": _EVERY, "workers": _EVERY,
    "backend": _PLAYING, "address": _PLAYING, "random_opening": _PLAYING,
    "net": frozenset(("selfplay", "gate")), "against": frozenset(("gate",)),
    "gate_player": frozenset(("gate",)), "sprt": frozenset(("gate",)),
    "init": frozenset(("all", "train", "rl")),
    "games": frozenset(("all", "data", "selfplay", "gate")), "chunk_games": frozenset(("all", "data", "selfplay")),
    "teacher": frozenset(("all", "data")), "explore": frozenset(("all", "data")),
    "players": frozenset(("all", "data")), "soft": frozenset(("all", "data")),
    "sims": frozenset(("selfplay",)), "adjudicate_turns": frozenset(("selfplay",)),
    **{k: frozenset(("rl",)) for k in ("opponent", "iterations", "iteration_games", "placement_net", "temperature",
                                         "streams", "concurrent", "minibatch")},
    **{k: _TRAINING for k in ("data", "placement_data", "steps", "batch", "channels", "blocks", "features",
                              "policy_target", "sharpen", "decision_weight", "result_weight",
                              "placement_result_weight", "eval_every", "save_every", "device", "max_steps_now")},
    "lr": frozenset(("all", "train", "rl")), "precision": frozenset(("all", "train", "rl")),
    "threads": frozenset(("all", "train", "rl")),
}


def stage_flag_problems(args: argparse.Namespace) -> list[str]:
    """The flags given a value other than their default that ``args.stage`` does not read (each would be
    silently ignored), one message each."""
    p = argparse.ArgumentParser()
    add_arguments(p)
    defaults = vars(p.parse_args([str(args.out)]))
    out = []
    for dest, stages in FLAG_STAGES.items():
        if args.stage not in stages and getattr(args, dest, None) != defaults[dest]:
            flag = "--" + dest.replace("_", "-")
            out.append(f"{flag} is read by --stage {' / '.join(s for s in STAGES if s in stages)}, not --stage "
                       f"{args.stage}: it would be ignored")
    return out


def rules_flags_given(args: argparse.Namespace) -> bool:
    """Whether the command line asked for rules (:func:`jiu_env.options.rules_flags`, as every ``jiu``
    command reads them).  The board size ``--quick`` sets when none is given does not count: ``--quick --stage
    train`` trains on the data it is given, whatever its board size."""
    flags = rules_flags(args)
    if args.quick and getattr(args, "board_size", None) == QUICK["board_size"]:
        flags.remove("--board-size")
    return bool(flags)


def run(args: argparse.Namespace, rules: Rules) -> int:
    """``jiu train``: run or resume the pipeline under ``rules`` (the command line's, parsed by the CLI);
    prints a JSON report."""
    problems = stage_flag_problems(args)
    if problems:
        print(f"jiu train: error: {problems[0]}" + (f" (and {len(problems) - 1} more such flag"
                                                      f"{'s' if len(problems) > 2 else ''})" if len(problems) > 1
                                                      else ""), file=sys.stderr)
        return 2
    try:
        s = settings(args, rules)
    except (TypeError, ValueError) as e:
        print(f"jiu train: error: {e}", file=sys.stderr)
        return 2
    try:
        report = run_pipeline(args.out, s, args.stage, workers=args.workers, extra_data=args.data,
                              placement_data=args.placement_data, threads=args.threads,
                              device=args.device, max_steps_now=args.max_steps_now, backend=args.backend,
                              address=args.address, rules_given=rules_flags_given(args))
    except (ValueError, TypeError, OSError, ImportError) as e:  # OSError: a file not found, not writable, ...
        print(f"jiu train: error: {e}", file=sys.stderr)
        return 2
    except ChunkFailed as e:  # a game failed, not the command line: 1, as jiu eval's failed game
        print(f"jiu train: error: {e} (the chunks finished are stored: run the same command again to resume)",
              file=sys.stderr)
        return 1
    except GameFailed as e:  # a game of the gate (or of the rl stage's evaluation): named, not a traceback
        print(f"jiu train: error: {e} (run the same command again to resume)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"jiu train: stopped; run the same command again to resume from {args.out}", file=sys.stderr)
        return 130
    print(json.dumps(report, indent=1, default=str))
    return 0


__all__ = ["add_arguments", "run", "run_pipeline", "check_run", "gate_template", "settings", "stage_flag_problems",
           "FLAG_STAGES", "QUICK", "STAGES", "TEACHER"]
