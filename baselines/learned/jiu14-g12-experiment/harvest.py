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

import json
import pathlib
import sys

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
        chunks[chunk_name(i // CHUNK_GAMES)] = store_chunk(out, i // CHUNK_GAMES, pack_games(games[i:i + CHUNK_GAMES]))
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
