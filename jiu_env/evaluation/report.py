"""Tournament reports: JSON, CSV, Markdown, a terminal table and a PNG plot.

Files written by :func:`write_reports` into the output folder:

- ``results.json`` — the whole summary (config, per-pair and per-player
  figures, Elo fit, and the SPRT of a match run with one);
- ``ratings.csv`` and ``pairs.csv`` — the two tables;
- ``results.md`` — the tables in Markdown with the settings (and, with an
  opening suite, each opening's moves and results by colour);
- ``results.png`` — ratings with their intervals, and the pairwise score matrix
  (needs matplotlib, the ``eval`` extra; skipped with a note without it).
"""

from __future__ import annotations

import csv
import io
import json
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ..fileio import atomic_write_bytes, atomic_write_text

if TYPE_CHECKING:
    from .summary import TournamentResult


def _ratings_rows(summary):
    """Rows for the ratings table, best first."""
    elo = summary.get("elo") or {}
    r = elo.get("ratings") or {}
    rows = []
    for name, p in summary["players"].items():
        e = r.get(name)
        rows.append({
            "player": name,
            "spec": p["spec"],
            "elo": e["elo"] if e else None,
            "lower": e["lower"] if e else None,
            "upper": e["upper"] if e else None,
            "se": e["se"] if e else None,
            "games": p["games"], "wins": p["wins"], "draws": p["draws"], "losses": p["losses"],
            "score": p["score"],
            "white_wdl": f"{p['as_white']['wins']}-{p['as_white']['draws']}-{p['as_white']['losses']}",
            "black_wdl": f"{p['as_black']['wins']}-{p['as_black']['draws']}-{p['as_black']['losses']}",
            "avg_decision_ms": p["avg_decision_ms"],
        })
    rows.sort(key=lambda x: (-(x["elo"] if x["elo"] is not None else -1e9), -(x["score"] or 0), x["player"]))
    return rows


def _fmt(x, spec="{:.0f}", none="-"):
    return none if x is None else spec.format(x)


def _interval(row):
    if row["elo"] is None:
        return "-"
    lo, hi = row["elo"] - row["lower"], row["upper"] - row["elo"]
    if abs(lo - hi) < 0.5:
        return f"±{hi:.0f}"
    return f"-{lo:.0f}/+{hi:.0f}"


def ratings_table(summary: dict[str, Any], markdown: bool = False) -> str:
    """The ratings table as text (aligned columns) or Markdown."""
    cols = ["#", "player", "Elo", "95% CI", "games", "W-D-L", "score", "as White", "as Black", "ms/decision", "spec"]
    conf = (summary.get("elo") or {}).get("confidence", 0.95)
    cols[3] = f"{conf * 100:.0f}% CI"
    body = []
    for i, r in enumerate(_ratings_rows(summary), start=1):
        body.append([
            str(i), r["player"], _fmt(r["elo"]), _interval(r), str(r["games"]),
            f"{r['wins']}-{r['draws']}-{r['losses']}", _fmt(r["score"], "{:.1%}"),
            r["white_wdl"], r["black_wdl"], _fmt(r["avg_decision_ms"], "{:.2f}"), r["spec"],
        ])
    return _table(cols, body, markdown)


def pairs_table(summary: dict[str, Any], markdown: bool = False) -> str:
    """Per-pair results from the first player's view (W-D-L overall and by colour)."""
    cols = ["A", "B", "games", "A W-D-L", "A score", "A as White", "A as Black", "avg turns", "truncated"]
    body = []
    for p in summary["pairs"]:
        aw, ab = p["a_as_white"], p["a_as_black"]
        body.append([
            p["a"], p["b"], str(p["games"]), f"{p['a_wins']}-{p['draws']}-{p['b_wins']}",
            _fmt(p["a_score"], "{:.1%}"), f"{aw['wins']}-{aw['draws']}-{aw['losses']}",
            f"{ab['wins']}-{ab['draws']}-{ab['losses']}", _fmt(p["avg_battle_turns"], "{:.0f}"), str(p["truncated"]),
        ])
    return _table(cols, body, markdown)


def sprt_table(summary: dict[str, Any], markdown: bool = False) -> str:
    """The SPRT of a two-player match: hypotheses, pairs, pentanomial counts, LLR, bounds and decision.

    The pentanomial counts are the pairs in which A scored 0, ½, 1, 1½ and 2
    points; ``games_after_decision`` (games that finished while the deciding
    pairs were played, stored but not counted) and ``games_not_counted``
    (an undecided test: stored games beyond the first incomplete pair) are
    noted when there are any.
    """
    t = summary.get("sprt")
    if not t:
        return ""
    cols = ["A", "B", "H0", "H1", "alpha", "beta", "pairs", "pentanomial 0-½-1-1½-2", "LLR", "bounds", "decision"]
    body = [[
        t["a"], t["b"], f"{t['elo0']:+g} Elo", f"{t['elo1']:+g} Elo", f"{t['alpha']:g}", f"{t['beta']:g}",
        f"{t['pairs']}/{t['max_pairs']}", "-".join(str(c) for c in t["pentanomial"]), f"{t['llr']:.3f}",
        f"[{t['lower']:.3f}, {t['upper']:.3f}]", t["decision"],
    ]]
    text = _table(cols, body, markdown)
    extra = t.get("games_after_decision")
    if extra:
        text += ("\n\n" if markdown else "\n") + (f"{extra} more game{'s' if extra != 1 else ''} finished after "
                                                   "the deciding pair (stored, not counted)")
    later = t.get("games_not_counted")
    if later:
        text += ("\n\n" if markdown else "\n") + (
            f"{later} more stored game{'s' if later != 1 else ''} not counted: pair {t['pairs']} (games "
            f"{2 * t['pairs']} and {2 * t['pairs'] + 1}) is not complete, and only the pairs before the first "
            "incomplete one count")
    return text


def _table(cols, body, markdown):
    if markdown:
        out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in body]
        return "\n".join(out)
    widths = [max(len(c), *(len(r[i]) for r in body)) if body else len(c) for i, c in enumerate(cols)]
    line = lambda row: "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip()  # noqa: E731
    return "\n".join([line(cols), line(["-" * w for w in widths])] + [line(r) for r in body])


def settings_text(summary: dict[str, Any]) -> str:
    """One paragraph with the settings that define the tournament."""
    c = summary["config"]
    rules = c["rules"]
    elo = summary.get("elo") or {}
    anchor = elo.get("anchor")
    anchor_txt = ("mean rating = 0" if anchor == "mean" else f"{anchor} = 0" if anchor is not None else
                  "none yet (no games to rate)" if not summary.get("games") else "none (the Elo fit was not possible)")
    opening = f", {c['random_opening']} random opening placements" if c["random_opening"] else ""
    suite = c.get("openings")
    if suite:
        opening = (f", openings from {suite['source']} ({len(suite['openings'])} openings, each game pair one "
                   "opening with colours swapped)")
    tc = summary.get("tc")
    if tc:
        untimed = f" (not reaching {', '.join(tc['untimed'])}: no time budget)" if tc["untimed"] else ""
        opening += f"; time control {tc['seconds']:g} s per turn{untimed}"
    unrated = f"; not rated: {', '.join(c['unrated'])}" if c.get("unrated") else ""
    return (f"rules: {rules['profile']} {rules['board_size']}x{rules['board_size']}; {c['mode'].replace('_', ' ')}, "
            f"{c['games']} games per pair (colours alternate), seed {c['seed']}{opening}; "
            f"{summary['games']}/{summary['scheduled']} games played; "
            f"Elo: maximum likelihood with {elo.get('prior_draws', c['prior_draws']):g} virtual draws per pair, "
            f"anchor {anchor_txt}, intervals {elo.get('method', c['intervals'])}{unrated}")


def openings_table(summary: dict[str, Any], markdown: bool = False) -> str:
    """Per opening of the suite: its moves and the games played from it, by result (empty without a suite)."""
    t = summary.get("openings")
    if not t:
        return ""
    cols = ["#", "opening", "moves", "games", "White wins", "draws", "Black wins"]
    body = [[str(r["index"] + 1), r["name"], r["moves"] if r["start"] == "placement" else f"(position) {r['moves']}",
             str(r["games"]), str(r["white_wins"]), str(r["draws"]), str(r["black_wins"])]
            for r in t["per_opening"]]
    return _table(cols, body, markdown)


def markdown_report(summary: dict[str, Any], command: str | None = None, image: bool = True) -> str:
    """The Markdown report (``results.md``)."""
    out = [f"# {summary['title']}", "", settings_text(summary) + ".", ""]
    if command:
        out += ["Regenerate with:", "", f"    {command}", ""]
    elo = summary.get("elo")
    if elo and "error" in elo:
        out += [f"Elo fit not possible: {elo['error']}", ""]
    out += ["## Ratings", "", ratings_table(summary, markdown=True), ""]
    out += ["## Pairs", "", pairs_table(summary, markdown=True), ""]
    if summary.get("sprt"):
        out += ["## SPRT", "", sprt_table(summary, markdown=True), ""]
    if summary.get("openings"):
        out += [f"## Openings ({summary['openings']['source']})", "", openings_table(summary, markdown=True), ""]
    bc = summary["by_colour"]
    out += [f"White won {bc['white_wins']}, Black won {bc['black_wins']}, {bc['draws']} drawn or undecided.", ""]
    if image:  # results.png beside it (not drawn without matplotlib)
        out += ["![ratings and pairwise scores](results.png)", ""]
    return "\n".join(out)


def score_matrix(summary: dict[str, Any]) -> tuple[list[str], np.ndarray]:
    """(names, matrix) of row player's score against the column player (NaN where they did not meet)."""
    names = list(summary["players"])
    w = np.asarray(summary["wins_matrix"], float)
    d = np.asarray(summary["draws_matrix"], float)
    n = w + w.T + d
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.where(n > 0, (w + 0.5 * d) / n, np.nan)
    return names, m


def plot(summary: dict[str, Any], path: str | os.PathLike[str]) -> bool:
    """Save the ratings (with intervals) and the pairwise score matrix as one PNG; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [r for r in _ratings_rows(summary) if r["elo"] is not None]
    names, m = score_matrix(summary)
    k = len(names)
    fig, axes = plt.subplots(1, 2, figsize=(6 + 0.9 * k, 0.6 * k + 3), gridspec_kw={"width_ratios": [1, 1.2]})
    ax = axes[0]
    if rows:
        y = np.arange(len(rows))[::-1]
        elo = np.array([r["elo"] for r in rows])
        err = np.array([[r["elo"] - r["lower"] for r in rows], [r["upper"] - r["elo"] for r in rows]])
        ax.errorbar(elo, y, xerr=err, fmt="o", capsize=4, color="tab:blue")
        ax.set_yticks(y)
        ax.set_yticklabels([r["player"] for r in rows])
        ax.axvline(0, color="grey", lw=0.8, ls="--")
        conf = (summary.get("elo") or {}).get("confidence", 0.95)
        ax.set_xlabel(f"Elo ({conf * 100:.0f}% interval)")
    else:
        ax.text(0.5, 0.5, "no rating", ha="center", va="center")
    ax.set_title("Ratings")
    ax = axes[1]
    im = ax.imshow(np.ma.masked_invalid(m), vmin=0, vmax=1, cmap="RdYlGn")
    ax.set_xticks(range(k))
    ax.set_xticklabels(names, rotation=45, ha="right")
    ax.set_yticks(range(k))
    ax.set_yticklabels(names)
    for i in range(k):
        for j in range(k):
            if np.isfinite(m[i, j]):
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=8)
    ax.set_title("Score of row vs column")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.suptitle(summary["title"])
    fig.tight_layout()
    buf = io.BytesIO()
    try:  # the format of the file name, as savefig(path) would choose it; then one atomic replacement
        fig.savefig(buf, dpi=110, format=os.path.splitext(os.fspath(path))[1][1:].lower() or "png")
    finally:
        plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())
    return True


def write_reports(result: TournamentResult, out_dir: str | os.PathLike[str], command: str | None = None) -> bool:
    """Write results.json, ratings.csv, pairs.csv, results.md and results.png into ``out_dir``.

    Without matplotlib there is no results.png: the Markdown report does not
    link one, a results.png of an earlier run (which would show other
    results) is removed, and False is returned (the caller notes it)."""
    summary = result.summary
    if command:
        summary["command"] = command
    command = summary.get("command")
    os.makedirs(out_dir, exist_ok=True)
    # each file is made in full and then replaces the old one (atomic_write_text): a failure leaves it whole
    atomic_write_text(os.path.join(out_dir, "results.json"), json.dumps(summary, indent=1))
    rows = _ratings_rows(summary)
    with io.StringIO(newline="") as f:
        wr = csv.writer(f)
        keys = ["player", "spec", "elo", "se", "lower", "upper", "games", "wins", "draws", "losses", "score",
                "white_wdl", "black_wdl", "avg_decision_ms"]
        wr.writerow(keys)
        for r in rows:
            wr.writerow([r[k] if r[k] is not None else "" for k in keys])
        atomic_write_text(os.path.join(out_dir, "ratings.csv"), f.getvalue(), newline="")
    with io.StringIO(newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["a", "b", "games", "a_wins", "draws", "b_wins", "a_score", "a_white_w", "a_white_d", "a_white_l",
                     "a_black_w", "a_black_d", "a_black_l", "avg_battle_turns", "avg_decisions", "truncated", "forfeits"])
        for p in summary["pairs"]:
            aw, ab = p["a_as_white"], p["a_as_black"]
            wr.writerow([p["a"], p["b"], p["games"], p["a_wins"], p["draws"], p["b_wins"], p["a_score"],
                         aw["wins"], aw["draws"], aw["losses"], ab["wins"], ab["draws"], ab["losses"],
                         p["avg_battle_turns"], p["avg_decisions"], p["truncated"], p["forfeits"]])
        atomic_write_text(os.path.join(out_dir, "pairs.csv"), f.getvalue(), newline="")
    png = os.path.join(out_dir, "results.png")
    drawn = plot(summary, png)
    if not drawn and os.path.exists(png):
        os.remove(png)
    atomic_write_text(os.path.join(out_dir, "results.md"), markdown_report(summary, command, image=drawn) + "\n")
    return drawn


__all__ = ["ratings_table", "pairs_table", "sprt_table", "openings_table", "markdown_report", "settings_text", "plot", "write_reports", "score_matrix"]
