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

writes OUT/chunk-*.npz and OUT/manifest.json (overwriting a previous harvest in OUT).
"""
from __future__ import annotations

import io
import json
import pathlib
import sys

import numpy as np

from jiu_env import Rules
from jiu_env import kernel as K
from jiu_env import vocab as V
from jiu_env.learn.data import DATA_FORMAT, NO_VALUE, chunk_name, store_chunk, write_manifest

TEACHERS = ("alphabeta:time=1", "alphabeta:time=0.5")
# placement: the shipped network's moves (g7, shipped when these games were played), whose placement
# scores 75% against alphabeta:time=1's; they keep the placement head where it is
PLACEMENT_TEACHERS = ("policy",)
CHUNK_GAMES = 16


def battle_engine(spec: str) -> str:
    """The spec that plays a side's battle: ``Y`` of ``phases:X+Y``, else the spec itself."""
    return spec.split("+", 1)[1] if spec.startswith("phases:") else spec


def placement_engine(spec: str) -> str:
    """The spec that plays a side's placement: ``X`` of ``phases:X+Y``, else the spec itself."""
    return spec[len("phases:"):].split("+", 1)[0] if spec.startswith("phases:") else spec


def harvest_game(g: dict, rules: Rules) -> dict | None:
    """The game's actions with the teacher sides' decisions labelled; None if no side is a teacher."""
    teach = {(side, V.PH_BATTLE): battle_engine(g[f"{name}_spec"]) in TEACHERS
             for side, name in ((V.WHITE, "white"), (V.BLACK, "black"))}
    teach.update({(side, V.PH_PLACEMENT): placement_engine(g[f"{name}_spec"]) in PLACEMENT_TEACHERS
                  for side, name in ((V.WHITE, "white"), (V.BLACK, "black"))})
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
            "result": int(K.result_for_white(s)), "end_reason": int(s[V.H_END_REASON]),
            "battle_turns": int(s[V.H_TURNS])}


def write_chunk(out: pathlib.Path, index: int, games: list[dict]) -> dict:
    offsets = np.cumsum([0] + [len(g["actions"]) for g in games]).astype(np.int64)
    labels = np.concatenate([np.array(g["labels"], np.int32) for g in games])
    arrays = {
        "seed": np.array([g["seed"] for g in games], np.int64),
        "offsets": offsets,
        "actions": np.concatenate([np.array(g["actions"], np.int32) for g in games]),
        "labels": labels,
        "values": np.where(labels >= 0, NO_VALUE, 0).astype(np.int32),
        "result": np.array([g["result"] for g in games], np.int8),
        "end_reason": np.array([g["end_reason"] for g in games], np.int8),
        "battle_turns": np.array([g["battle_turns"] for g in games], np.int32),
    }
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return store_chunk(out, index, buf.getvalue())


def main(out_dir: str, folders: list[str]) -> None:
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("chunk-*.npz"):
        old.unlink()
    rules = Rules.make("competitive", board_size=14)
    games, sources = [], {}
    for arg in folders:
        folder, _, limit = arg.partition(":")
        n = 0
        lines = [json.loads(line) for line in (pathlib.Path(folder) / "games.jsonl").read_text().splitlines()]
        for g in lines:  # in the file's order
            if (limit and g["game"] >= int(limit)) or Rules.make(dict(g["record"]["rules"])) != rules:
                continue
            h = harvest_game(g, rules)
            if h is not None:
                games.append(h)
                n += 1
        sources[folder] = n
    chunks = {}
    for i in range(0, len(games), CHUNK_GAMES):
        chunks[chunk_name(i // CHUNK_GAMES)] = write_chunk(out, i // CHUNK_GAMES, games[i:i + CHUNK_GAMES])
    config = {"kind": "records", "rules": rules.to_dict(), "sources": sources,
              "teacher": "moves played by " + " / ".join(TEACHERS) + " (battle), " + " / ".join(PLACEMENT_TEACHERS)
                         + " (placement)"}
    write_manifest(out, {"format": DATA_FORMAT, "config": config, "chunks": chunks})
    labelled = sum(c["labelled"] for c in chunks.values())
    print(f"{len(games)} games, {labelled} labelled decisions from {sources} -> {out}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
