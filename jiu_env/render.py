"""Rendering of a kernel state: ANSI text, an RGB image (numpy only) and a pygame window."""

from collections.abc import Mapping

import numpy as np

from . import vocab as V
from .notation import COLS, ROWS, action_to_str
from .validate import check_int, check_position

from .vocab import COLOUR_NAMES, END_REASON_NAMES, SUBPHASE_NAMES


def status_lines(s):
    """Human-readable status of a state: phase, side to move, counts, last action, result.

    ``s`` is a kernel state or a position (its header and board, as
    :meth:`~jiu_env.records.GameRecord.positions` keeps them), checked by
    :func:`~jiu_env.validate.check_position`, as by every public function
    here: a bad one raises TypeError / InvalidStateError.
    """
    check_position(s)
    return _status_lines(s)


def _status_lines(s):
    """:func:`status_lines` of a checked state."""
    n = int(s[V.H_N])
    ph = int(s[V.H_PHASE])
    lines = []
    w, b = int(s[V.H_COUNT + V.WHITE]), int(s[V.H_COUNT + V.BLACK])
    if ph == V.PH_PLACEMENT:
        lines.append(f"placement  {int(s[V.H_PLACED])}/{n * n} placed   to move: {COLOUR_NAMES[int(s[V.H_TO_MOVE])]}")
    elif ph == V.PH_BATTLE:
        sub = SUBPHASE_NAMES[int(s[V.H_SUB])]
        extra = f"   pending captures: {int(s[V.H_PENDING])}" if s[V.H_SUB] == V.SUB_CAPTURE else ""
        fly = "   (flying)" if s[V.H_FLY_NOW] else ""
        lines.append(f"battle turn {int(s[V.H_TURNS]) + 1}   {sub}   to move: {COLOUR_NAMES[int(s[V.H_TO_MOVE])]}{fly}{extra}")
    else:
        win = int(s[V.H_WINNER])
        reason = END_REASON_NAMES[int(s[V.H_END_REASON])].replace("_", " ")
        if win in (V.WHITE, V.BLACK):
            lines.append(f"game over: {COLOUR_NAMES[win]} wins ({reason}) after {int(s[V.H_TURNS])} battle turns")
        elif win == V.DRAW:
            lines.append(f"game over: draw ({reason}) after {int(s[V.H_TURNS])} battle turns")
        else:
            lines.append(f"game over: undecided ({reason}) after {int(s[V.H_TURNS])} battle turns")
    last = int(s[V.H_LAST_ACTION])
    lines.append(f"stones  white (o): {w}   black (x): {b}   last action: {action_to_str(last, n) if last >= 0 else '-'}")
    return lines


def render_ansi(s):
    """The board with coordinates (rows a.., columns 0..) and the status lines.

    ``o`` white, ``x`` black, ``.`` empty; the chaining or lifted stone is
    upper-case, and the last move's final point is marked with ``<``.
    ``s``: a state or a position, checked (:func:`~jiu_env.validate.check_position`).
    """
    check_position(s)
    n = int(s[V.H_N])
    board = s[V.HDR:V.HDR + n * n]
    special = -1
    if s[V.H_PHASE] == V.PH_BATTLE:
        special = int(s[V.H_CHAIN]) if s[V.H_CHAIN] >= 0 else int(s[V.H_LIFT])
    last_to = int(s[V.H_LAST_TO])
    out = ["   " + " ".join(COLS[:n])]
    for r in range(n):
        row = ""
        for c in range(n):
            p = r * n + c
            ch = ".ox"[int(board[p])]
            row += (ch.upper() if p == special else ch) + ("<" if p == last_to else " ")
        out.append(f" {ROWS[r]} {row.rstrip()}")
    out.extend(_status_lines(s))
    return "\n".join(out)


_BG = np.array([222, 184, 135], np.uint8)
_LINE = np.array([60, 40, 20], np.uint8)
_STRIP = np.array([205, 164, 112], np.uint8)  # background of the status strip under the board
_INK = np.array([40, 26, 12], np.uint8)  # labels and status text

# A 5x7 bitmap font for the labels and the status strip, so that the core needs no imaging library:
# each glyph is seven rows of five pixels ("1" ink).  Lower-case letters with descenders are squashed
# into the seven rows, as on character LCDs.  It holds the letters of the notation's coordinates (rows
# a..t, columns 0..9 and A..J), the rest of the alphabet, and the punctuation of the status strip.
_FONT_ROWS = {
    " ": "00000 00000 00000 00000 00000 00000 00000",
    "0": "01110 10001 10011 10101 11001 10001 01110",
    "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111",
    "3": "11111 00010 00100 00010 00001 10001 01110",
    "4": "00010 00110 01010 10010 11111 00010 00010",
    "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110",
    "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110",
    "9": "01110 10001 10001 01111 00001 00010 01100",
    "A": "01110 10001 10001 10001 11111 10001 10001",
    "B": "11110 10001 10001 11110 10001 10001 11110",
    "C": "01110 10001 10000 10000 10000 10001 01110",
    "D": "11100 10010 10001 10001 10001 10010 11100",
    "E": "11111 10000 10000 11110 10000 10000 11111",
    "F": "11111 10000 10000 11110 10000 10000 10000",
    "G": "01110 10001 10000 10111 10001 10001 01111",
    "H": "10001 10001 10001 11111 10001 10001 10001",
    "I": "01110 00100 00100 00100 00100 00100 01110",
    "J": "00111 00010 00010 00010 00010 10010 01100",
    "K": "10001 10010 10100 11000 10100 10010 10001",
    "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001",
    "N": "10001 10001 11001 10101 10011 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110",
    "P": "11110 10001 10001 11110 10000 10000 10000",
    "Q": "01110 10001 10001 10001 10101 10010 01101",
    "R": "11110 10001 10001 11110 10100 10010 10001",
    "S": "01111 10000 10000 01110 00001 00001 11110",
    "T": "11111 00100 00100 00100 00100 00100 00100",
    "U": "10001 10001 10001 10001 10001 10001 01110",
    "V": "10001 10001 10001 10001 10001 01010 00100",
    "W": "10001 10001 10001 10101 10101 10101 01010",
    "X": "10001 10001 01010 00100 01010 10001 10001",
    "Y": "10001 10001 10001 01010 00100 00100 00100",
    "Z": "11111 00001 00010 00100 01000 10000 11111",
    "a": "00000 00000 01110 00001 01111 10001 01111",
    "b": "10000 10000 10110 11001 10001 10001 11110",
    "c": "00000 00000 01110 10000 10000 10001 01110",
    "d": "00001 00001 01101 10011 10001 10001 01111",
    "e": "00000 00000 01110 10001 11111 10000 01110",
    "f": "00110 01001 01000 11100 01000 01000 01000",
    "g": "00000 01111 10001 10001 01111 00001 01110",
    "h": "10000 10000 10110 11001 10001 10001 10001",
    "i": "00100 00000 01100 00100 00100 00100 01110",
    "j": "00010 00000 00110 00010 00010 10010 01100",
    "k": "10000 10000 10010 10100 11000 10100 10010",
    "l": "01100 00100 00100 00100 00100 00100 01110",
    "m": "00000 00000 11010 10101 10101 10001 10001",
    "n": "00000 00000 10110 11001 10001 10001 10001",
    "o": "00000 00000 01110 10001 10001 10001 01110",
    "p": "00000 00000 11110 10001 11110 10000 10000",
    "q": "00000 00000 01101 10011 01111 00001 00001",
    "r": "00000 00000 10110 11001 10000 10000 10000",
    "s": "00000 00000 01110 10000 01110 00001 11110",
    "t": "01000 01000 11100 01000 01000 01001 00110",
    "u": "00000 00000 10001 10001 10001 10011 01101",
    "v": "00000 00000 10001 10001 10001 01010 00100",
    "w": "00000 00000 10001 10001 10101 10101 01010",
    "x": "00000 00000 10001 01010 00100 01010 10001",
    "y": "00000 00000 10001 10001 01111 00001 01110",
    "z": "00000 00000 11111 00010 00100 01000 11111",
    ":": "00000 01100 01100 00000 01100 01100 00000",
    "/": "00000 00001 00010 00100 01000 10000 00000",
    ",": "00000 00000 00000 00000 01100 00100 01000",
    ".": "00000 00000 00000 00000 00000 01100 01100",
    "(": "00010 00100 01000 01000 01000 00100 00010",
    ")": "01000 00100 00010 00010 00010 00100 01000",
    "-": "00000 00000 00000 11111 00000 00000 00000",
    "^": "00100 01010 10001 00000 00000 00000 00000",
}
GLYPH_W, GLYPH_H = 5, 7
#: character -> (7, 5) bool array of its pixels
FONT: dict[str, np.ndarray] = {
    ch: np.array([[b == "1" for b in row] for row in rows.split()], bool) for ch, rows in _FONT_ROWS.items()
}

#: the size limits of :func:`render_rgb`'s ``cell`` (pixels between neighbouring lines); the coordinate
#: labels need ``COORDS_MIN_CELL``: below it they would run into the stones of the edge lines.
MIN_CELL, MAX_CELL, COORDS_MIN_CELL = 8, 256, 24
#: what :func:`render_rgb` draws unless told otherwise (and what an env's ``render_options`` start from)
RENDER_DEFAULTS: dict[str, object] = {"cell": 32, "coords": True, "status": True}


def text_scale(cell: int) -> int:
    """How many pixels square each font pixel is drawn with ``cell``: 1 up to 35, then about ``cell / 24``.

    The labels grow with the board but always fit between the image edge and
    the marker ring of an edge stone (tests/test_render.py checks every cell).
    """
    return max(1, (cell + 12) // 24)


def text_width(text: str, scale: int = 1) -> int:
    """Width in pixels of ``text`` drawn by :func:`draw_text` (one blank pixel column between glyphs)."""
    return max(0, (len(text) * (GLYPH_W + 1) - 1) * scale)


def draw_text(img: np.ndarray, x: int, y: int, text: str, scale: int = 1, colour=_INK) -> None:
    """Draw ``text`` into ``img`` (H, W, 3) with its top-left corner at column ``x``, row ``y``.

    Each font pixel becomes a ``scale`` x ``scale`` square.  What falls
    outside ``img`` is clipped (pass a view to clip to a region).  A character
    without a glyph in :data:`FONT` is a ValueError naming it, so a new word in
    a status line cannot silently render as blanks.
    """
    missing = sorted(set(text) - set(FONT))
    if missing:
        raise ValueError(f"no glyph for {missing} in the render font; it has {''.join(sorted(FONT))!r}")
    check_int("scale", scale, 1)
    h, w = img.shape[:2]
    step = (GLYPH_W + 1) * scale
    for i, ch in enumerate(text):
        if ch == " ":
            continue
        mask = np.kron(FONT[ch], np.ones((scale, scale), bool))
        gx, gy = x + i * step, y
        x0, y0 = max(gx, 0), max(gy, 0)
        x1, y1 = min(gx + mask.shape[1], w), min(gy + mask.shape[0], h)
        if x0 >= x1 or y0 >= y1:
            continue
        img[y0:y1, x0:x1][mask[y0 - gy:y1 - gy, x0 - gx:x1 - gx]] = colour


def status_fields(s) -> tuple[str, str, str]:
    """The facts of :func:`status_lines` that the image's status strip shows, as three short texts.

    ``(phase, side, stones)``: the phase (``"placement 17/196"``, ``"battle
    turn 12: move"``, ``"battle turn 12: capture 2"``, ``"game over: white
    wins"``), the side to move (``"to move: black"``, with ``", flying"`` when
    it flies) or, once the game is over, the reason (``"(repetition)"``), and
    the stone counts (``"white 20  black 18"``).  Short, so that they fit
    under a small board.  ``s``: a state or a position, checked (:func:`~jiu_env.validate.check_position`).
    """
    check_position(s)
    return _status_fields(s)


def _status_fields(s) -> tuple[str, str, str]:
    """:func:`status_fields` of a checked state."""
    n = int(s[V.H_N])
    ph = int(s[V.H_PHASE])
    w, b = int(s[V.H_COUNT + V.WHITE]), int(s[V.H_COUNT + V.BLACK])
    mover = COLOUR_NAMES[int(s[V.H_TO_MOVE])]
    if ph == V.PH_PLACEMENT:
        phase, side = f"placement {int(s[V.H_PLACED])}/{n * n}", f"to move: {mover}"
    elif ph == V.PH_BATTLE:
        phase = f"battle turn {int(s[V.H_TURNS]) + 1}: {SUBPHASE_NAMES[int(s[V.H_SUB])]}"
        if s[V.H_SUB] == V.SUB_CAPTURE:
            phase += f" {int(s[V.H_PENDING])}"
        side = f"to move: {mover}" + (", flying" if s[V.H_FLY_NOW] else "")
    else:
        win = int(s[V.H_WINNER])
        result = f"{COLOUR_NAMES[win]} wins" if win in (V.WHITE, V.BLACK) else "draw" if win == V.DRAW else "undecided"
        phase = f"game over: {result}"
        side = "(" + END_REASON_NAMES[int(s[V.H_END_REASON])].replace("_", " ") + ")"
    return phase, side, f"white {w}  black {b}"


def _field_budgets(n: int) -> tuple[int, int, int]:
    """Characters reserved for each of :func:`status_fields` on an ``n`` x ``n`` board (battle turns up to 9999).

    The strip's layout depends on these alone, not on the texts of the moment,
    so every frame of a game has the same size and the fields do not jump.
    """
    p = n * n
    most = (p + 1) // 2
    phase = max(len(f"placement {p}/{p}"), len(f"battle turn 9999: capture {most}"), len("game over: white wins"))
    side = max(len("to move: white, flying"), len("(too few stones)"))
    return phase, side, len(f"white {most}  black {most}")


def _status_layout(n: int, cell: int) -> tuple[int, list[tuple[int, int, int, int]]]:
    """``(strip height, [(field, x, y, width in px), ...])`` of the status strip under an ``n`` x ``n`` board.

    The fields are packed left to right into as few rows as the image width
    allows (one row under a 14x14 board at the default cell, three under 6x6).
    A text longer than its field is cut at the field's edge.
    """
    sc = text_scale(cell)
    width = cell * (n + 1)
    x0, gap, row_h = 4 * sc, 3 * (GLYPH_W + 1) * sc, (GLYPH_H + 4) * sc
    rows: list[list[tuple[int, int]]] = [[]]
    x = x0
    for field, chars in enumerate(_field_budgets(n)):
        px = chars * (GLYPH_W + 1) * sc
        if rows[-1] and x + px > width - x0:
            rows.append([])
            x = x0
        rows[-1].append((field, x))
        x += px + gap
    place = []
    for i, row in enumerate(rows):
        for j, (field, x) in enumerate(row):
            end = row[j + 1][1] - gap if j + 1 < len(row) else width - x0
            place.append((field, x, 4 * sc + i * row_h, end - x))
    height = 4 * sc + len(rows) * row_h
    return height + height % 2, place  # even: video encoders want even sizes


def check_render_options(options=None, **more):
    """The full, checked settings of :func:`render_rgb` from ``options`` (a dict or None) and keywords.

    Keys: ``cell`` (int, pixels between lines, ``MIN_CELL``..``MAX_CELL``),
    ``coords`` (bool: the notation's row letters and column digits on the
    margins; needs ``cell >= COORDS_MIN_CELL``) and ``status`` (bool: the
    status strip under the board).  Missing keys take
    :data:`RENDER_DEFAULTS`.  An unknown key, a value of the wrong type or out
    of range raises (TypeError / ValueError naming it), so that a typo does
    not silently give the default picture.
    """
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise TypeError(f"render options must be a dict, not {type(options).__name__}")
    given = {**options, **more}
    unknown = sorted(map(str, set(given) - set(RENDER_DEFAULTS)))
    if unknown:
        raise ValueError(f"unknown render option(s) {unknown}; valid: {list(RENDER_DEFAULTS)}")
    out = {**RENDER_DEFAULTS, **given}
    cell = out["cell"]
    cell = check_int("render option 'cell'", cell, MIN_CELL, MAX_CELL, note="(pixels between lines)")
    for key in ("coords", "status"):
        if not isinstance(out[key], (bool, np.bool_)):
            raise TypeError(f"render option {key!r} must be True or False, not {out[key]!r}")
        out[key] = bool(out[key])
    if out["coords"] and cell < COORDS_MIN_CELL:
        raise ValueError(f"coordinate labels need cell >= {COORDS_MIN_CELL} (room between the image edge and the "
                         f"stones), not {cell}; pass a larger cell or coords=False")
    out["cell"] = int(cell)
    return out


def render_rgb(s, cell=32, coords=True, status=True):
    """An RGB image (H, W, 3) uint8 of the board, drawn with numpy alone.

    ``cell`` is the distance between lines in pixels; the image is
    ``W = cell * (N + 1)`` wide.  ``coords`` writes the notation's coordinates
    on the four margins (rows ``a``.. down the sides, columns ``0``..``9``,
    ``A``.. along the top and bottom), the names a player types.  ``status``
    adds a strip under the board with the phase, the side to move and the
    stone counts (:func:`status_fields`); its height depends on ``N`` and
    ``cell`` only, so every frame of a game has the same shape.  Without it
    the image is square.  Bad values raise (:func:`check_render_options`);
    ``s``: a state or a position, checked (:func:`~jiu_env.validate.check_position`).
    """
    check_position(s)
    opts = check_render_options(cell=cell, coords=coords, status=status)
    cell = opts["cell"]
    n = int(s[V.H_N])
    margin = cell
    size = margin * 2 + cell * (n - 1)
    strip_h, fields = _status_layout(n, cell) if opts["status"] else (0, [])
    img = np.empty((size + strip_h, size, 3), np.uint8)
    img[:size] = _BG
    img[size:] = _STRIP
    lo, hi = margin, margin + cell * (n - 1)
    for i in range(n):
        x = margin + i * cell
        img[lo:hi + 1, x] = _LINE
        img[x, lo:hi + 1] = _LINE
    c0 = (n - 1) // 2
    for t in range(cell + 1):  # the diagonal of the centre square
        y = margin + c0 * cell + t
        img[y, margin + c0 * cell + t] = _LINE
    sc = text_scale(cell)
    if opts["coords"]:
        # centred in the free band between the image edge and the reach of an edge stone's marker ring
        edge = (cell - int(cell * 0.42) - 4) // 2
        gw, gh = GLYPH_W * sc, GLYPH_H * sc
        for i in range(n):
            mid = margin + i * cell
            for x in (edge - gw // 2, size - 1 - edge - gw // 2):
                draw_text(img, x, mid - gh // 2, ROWS[i], sc)
            for y in (edge - gh // 2, size - 1 - edge - gh // 2):
                draw_text(img, mid - gw // 2, y, COLS[i], sc)
    texts = _status_fields(s)
    for field, x, y, width in fields:
        draw_text(img[size:, x:x + width], 0, y, texts[field], sc)
    h = cell // 2
    yy, xx = np.mgrid[-h:h + 1, -h:h + 1]  # not -cell // 2, which is one more than h for an odd cell
    dist = np.sqrt(yy * yy + xx * xx)
    rad = cell * 0.42
    disc = dist <= rad
    rim = (dist <= rad) & (dist > rad - 2)
    ring = (dist <= rad + 3) & (dist > rad + 0.5)
    board = s[V.HDR:V.HDR + n * n]
    special = -1
    if s[V.H_PHASE] == V.PH_BATTLE:
        special = int(s[V.H_CHAIN]) if s[V.H_CHAIN] >= 0 else int(s[V.H_LIFT])
    last_to = int(s[V.H_LAST_TO])
    for p in range(n * n):
        r, c = divmod(p, n)
        y, x = margin + r * cell, margin + c * cell
        patch = img[y - h:y + h + 1, x - h:x + h + 1]
        v = int(board[p])
        if v:
            patch[disc] = (245, 245, 245) if v == V.WHITE else (20, 20, 20)
            patch[rim] = (90, 90, 90)
        if p == special:
            patch[ring] = (220, 30, 30)
        elif p == last_to:
            patch[ring] = (30, 90, 220)
    return img


class PygameWindow:
    """A window that shows RGB frames; pygame is an optional dependency."""

    def __init__(self, caption="Jiu"):
        try:
            import pygame
        except ImportError as e:  # pragma: no cover - depends on the install
            from gymnasium.error import DependencyNotInstalled

            raise DependencyNotInstalled(
                "render_mode='human' needs pygame: pip install -e '.[render]' (in a checkout of the repository)"
            ) from e
        self.pygame = pygame
        self.caption = caption
        self.screen = None
        self.clock = pygame.time.Clock()

    def show(self, img, fps):
        pg = self.pygame
        if self.screen is None:
            pg.display.init()
            pg.display.set_caption(self.caption)
            self.screen = pg.display.set_mode((img.shape[1], img.shape[0]))
        surf = pg.surfarray.make_surface(np.ascontiguousarray(img.swapaxes(0, 1)))
        self.screen.blit(surf, (0, 0))
        pg.event.pump()
        pg.display.update()
        self.clock.tick(fps)

    def close(self):
        if self.screen is not None:
            self.pygame.display.quit()
            self.screen = None
