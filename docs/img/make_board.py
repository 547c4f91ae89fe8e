"""Draw the board picture at the top of README.md and docs/index.md (docs/img/board14.png).

A seeded game between two built-in bots on the competitive 14x14 board, stopped
in the battle phase, drawn by ``jiu_env.render.render_rgb`` (coordinates and
status strip on) and written by the small PNG writer below, so that the
picture can be regenerated with the core install alone::

    python docs/img/make_board.py --out docs/img/board14.png

The same arguments give the same bytes (the game is seeded and the writer has
no timestamps), so the committed picture can be checked against a rerun.
"""

from __future__ import annotations

import argparse
import struct
import zlib

import numpy as np


def png_bytes(img: np.ndarray) -> bytes:
    """An (H, W, 3) uint8 image as PNG bytes (8-bit RGB, no interlace), with numpy and zlib alone.

    Each row is stored with the "Up" filter (the difference to the row above),
    which makes the flat areas of a board picture compress to almost nothing.
    """
    if not isinstance(img, np.ndarray) or img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) uint8 array, not {getattr(img, 'dtype', type(img))} "
                         f"{getattr(img, 'shape', '')}")
    h, w = img.shape[:2]
    rows = img.reshape(h, w * 3)
    up = np.empty_like(rows)
    up[0] = rows[0]
    up[1:] = rows[1:] - rows[:-1]  # uint8 arithmetic wraps modulo 256, as the filter is defined
    raw = np.hstack([np.full((h, 1), 2, np.uint8), up]).tobytes()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def board_picture(seed: int = 7, decisions: int = 260, cell: int = 40) -> np.ndarray:
    """The image of the game ``pattern`` (White) vs ``greedy`` (Black) after ``decisions`` decisions."""
    from jiu_env.game import play_game
    from jiu_env.render import render_rgb

    result = play_game("competitive", "pattern", "greedy", seed=seed, max_decisions=decisions, record=False)
    return render_rgb(result.state, cell=cell)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="docs/img/board14.png", help="PNG file to write (default %(default)s)")
    ap.add_argument("--seed", type=int, default=7, help="seed of the game (default %(default)s)")
    ap.add_argument("--decisions", type=int, default=260,
                    help="decisions played before the picture; 196 fill the board (default %(default)s)")
    ap.add_argument("--cell", type=int, default=40, help="pixels between lines (default %(default)s)")
    args = ap.parse_args(argv)
    data = png_bytes(board_picture(args.seed, args.decisions, args.cell))
    with open(args.out, "wb") as f:
        f.write(data)
    print(f"{args.out}: {len(data)} bytes")


if __name__ == "__main__":
    main()
