"""Training data from stored match records: the battle moves of a strong engine, labelled as it played them.

Every `jiu eval` folder keeps its games' records (`games.jsonl`, the actions from the first
placement).  A decision made by a side whose battle engine is one of TEACHERS (the spec itself,
or the battle part `Y` of `phases:X+Y`) is a label of that engine at no search cost: its move in
the game.  This script replays the records under their rules and writes the battle decisions
with a choice (more than one legal action) as a `jiu train` data run (`jiu_env.learn.data`'s
chunk and manifest format): label = the move played, no search value (`NO_VALUE`, so the value
head learns the game result there), every other decision unlabelled (the opening's random
placements too).  Placement decisions of a side whose placement is PLACEMENT_TEACHERS are
labelled the same way.  Records that do not
replay (an illegal action, other rules) stop the script with the game named.

    python harvest.py OUT FOLDER[:N] [FOLDER[:N] ...]

(``:N``: only the folder's games numbered below N (its first N games), e.g. of a match that was continued later.)

writes OUT/chunk-*.npz and OUT/manifest.json, replacing a previous harvest in OUT only once every input has
been read and the new one is written whole (into a temporary folder beside OUT, then swapped in): a missing
input folder or a record that does not replay leaves the previous harvest as it was.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import secrets
import shutil
import tempfile

import numpy as np

from jiu_env import Rules
from jiu_env import kernel as K
from jiu_env import vocab as V
from jiu_env.learn.data import DATA_FORMAT, NO_VALUE, chunk_name, pack_games, store_chunk, write_manifest
from jiu_env.players import player_spec

TEACHERS = ("alphabeta:time=1", "alphabeta:time=0.5")
# placement: the shipped network's moves (g7, shipped when these games were played), whose placement
# scores 75% against alphabeta:time=1's; they keep the placement head where it is
PLACEMENT_TEACHERS = ("policy",)
CHUNK_GAMES = 16


def phase_engines(spec: str) -> tuple[str, str]:
    """The specs that play a side's placement and battle: ``(X, Y)`` of ``phases:X+Y``, else the spec twice."""
    parsed = player_spec(spec)
    parts = parsed.parts if parsed.form == "phases" else ()
    return (parts[0].text, parts[1].text) if parts else (spec, spec)


def harvest_game(g: dict, rules: Rules) -> dict | None:
    """The game's actions with the teacher sides' decisions labelled; None if no side is a teacher."""
    teach = {}
    for side, name in ((V.WHITE, "white"), (V.BLACK, "black")):
        placement, battle = phase_engines(g[f"{name}_spec"])
        teach[side, V.PH_PLACEMENT] = placement in PLACEMENT_TEACHERS
        teach[side, V.PH_BATTLE] = battle in TEACHERS
    if not any(teach.values()):
        return None
    meta = g["record"].get("meta") or {}
    opening = int(meta.get("opening_plies", meta.get("random_opening", 0)))  # not the players' moves
    s = rules.new_state()
    buf = np.empty(rules.num_actions, np.int64)
    actions = [int(a) for a in g["record"]["actions"]]
    labels = []
    for i, a in enumerate(actions):
        k = K.legal_actions(s, buf)
        if a not in buf[:k]:
            raise ValueError(f"{g['id']}: action {a} at decision {i} is not legal")
        label = a if (i >= opening and k > 1 and teach.get((int(s[V.H_TO_MOVE]), int(s[V.H_PHASE])), False)) else -1
        labels.append(label)
        K.apply_action(s, a)
    if s[V.H_PHASE] != V.PH_OVER:
        raise ValueError(f"{g['id']}: the record ends before the game does")
    return {"seed": int(g["seed"]), "actions": actions, "labels": labels,
            "values": [NO_VALUE if label >= 0 else 0 for label in labels],
            "result": int(K.result_for_white(s)), "end_reason": int(s[V.H_END_REASON]),
            "battle_turns": int(s[V.H_TURNS])}


def parse_inputs(p: argparse.ArgumentParser, folders: list[str]) -> list[tuple[str, int | None]]:
    """``(folder, N or None)`` of each FOLDER[:N], every folder checked to hold a games.jsonl (p.error if not)."""
    out = []
    for arg in folders:
        folder, colon, limit = arg.partition(":")
        if colon and not limit.isdigit():
            p.error(f"{arg}: N of FOLDER:N must be a whole number >= 0, not {limit!r}")
        if not (pathlib.Path(folder) / "games.jsonl").is_file():
            p.error(f"{arg}: no {pathlib.Path(folder) / 'games.jsonl'} (a jiu eval folder)")
        out.append((folder, int(limit) if colon else None))
    return out


def swap_in(tmp: pathlib.Path, out: pathlib.Path) -> None:
    """Make the finished harvest ``tmp`` the folder ``out``; files of ``out`` that are no harvest's are kept."""
    if not out.exists():
        os.rename(tmp, out)
        return
    old = pathlib.Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    os.rename(out, old / out.name)
    os.rename(tmp, out)
    for f in (old / out.name).iterdir():  # anything besides the previous chunks and manifest stays in OUT
        if not (f.name == "manifest.json" or (f.name.startswith("chunk-") and f.name.endswith(".npz"))):
            os.rename(f, out / f.name)
    shutil.rmtree(old)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                usage="python harvest.py OUT FOLDER[:N] [FOLDER[:N] ...]")
    p.add_argument("out", help="the data run folder written (chunk-*.npz, manifest.json)")
    p.add_argument("folders", nargs="+", metavar="FOLDER[:N]",
                   help="a jiu eval folder (its games.jsonl); :N: only its games numbered below N")
    args = p.parse_args(argv)
    out = pathlib.Path(args.out).resolve()
    if out.exists() and not out.is_dir():
        p.error(f"OUT {args.out} is not a folder")
    inputs = parse_inputs(p, args.folders)  # every input checked before anything is read or written
    rules = Rules.make("competitive", board_size=14)
    games, sources = [], {}
    for folder, limit in inputs:
        n = 0
        lines = [json.loads(line) for line in (pathlib.Path(folder) / "games.jsonl").read_text().splitlines()]
        for g in lines:  # in the file's order
            if (limit is not None and g["game"] >= limit) or Rules.make(dict(g["record"]["rules"])) != rules:
                continue
            try:
                h = harvest_game(g, rules)
            except ValueError as e:
                p.error(f"{folder}: {e}")
            if h is not None:
                games.append(h)
                n += 1
        sources[folder] = n
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.new-{secrets.token_hex(4)}"
    tmp.mkdir()  # beside OUT (the same file system), with the mode a new OUT would have
    try:
        chunks = {}
        for i in range(0, len(games), CHUNK_GAMES):
            chunks[chunk_name(i // CHUNK_GAMES)] = store_chunk(tmp, i // CHUNK_GAMES,
                                                               pack_games(games[i:i + CHUNK_GAMES]))
        config = {"kind": "records", "rules": rules.to_dict(), "sources": sources,
                  "teacher": "moves played by " + " / ".join(TEACHERS) + " (battle), "
                             + " / ".join(PLACEMENT_TEACHERS) + " (placement)"}
        write_manifest(tmp, {"format": DATA_FORMAT, "config": config, "chunks": chunks})
        swap_in(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    labelled = sum(c["labelled"] for c in chunks.values())
    print(f"{len(games)} games, {labelled} labelled decisions from {sources} -> {args.out}")


if __name__ == "__main__":
    main()
