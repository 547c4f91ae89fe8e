"""Rendering of a kernel state: ANSI text, an RGB image (numpy only) and a pygame window."""

import numpy as np

from . import kernel as K
from .notation import COLS, ROWS, action_to_str

from .vocab import COLOUR_NAMES, END_REASON_NAMES, SUBPHASE_NAMES


def status_lines(s):
    """Human-readable status of a state: phase, side to move, counts, last action, result."""
    n = int(s[K.H_N])
    ph = int(s[K.H_PHASE])
    lines = []
    w, b = int(s[K.H_COUNT + K.WHITE]), int(s[K.H_COUNT + K.BLACK])
    if ph == K.PH_PLACEMENT:
        lines.append(f"placement  {int(s[K.H_PLACED])}/{n * n} placed   to move: {COLOUR_NAMES[int(s[K.H_TO_MOVE])]}")
    elif ph == K.PH_BATTLE:
        sub = SUBPHASE_NAMES[int(s[K.H_SUB])]
        extra = f"   pending captures: {int(s[K.H_PENDING])}" if s[K.H_SUB] == K.SUB_CAPTURE else ""
        fly = "   (flying)" if s[K.H_FLY_NOW] else ""
        lines.append(f"battle turn {int(s[K.H_TURNS]) + 1}   {sub}   to move: {COLOUR_NAMES[int(s[K.H_TO_MOVE])]}{fly}{extra}")
    else:
        win = int(s[K.H_WINNER])
        reason = END_REASON_NAMES[int(s[K.H_END_REASON])].replace("_", " ")
        if win in (K.WHITE, K.BLACK):
            lines.append(f"game over: {COLOUR_NAMES[win]} wins ({reason}) after {int(s[K.H_TURNS])} battle turns")
        elif win == K.DRAW:
            lines.append(f"game over: draw ({reason}) after {int(s[K.H_TURNS])} battle turns")
        else:
            lines.append(f"game over: undecided ({reason}) after {int(s[K.H_TURNS])} battle turns")
    last = int(s[K.H_LAST_ACTION])
    lines.append(f"stones  white (o): {w}   black (x): {b}   last action: {action_to_str(last, n) if last >= 0 else '-'}")
    return lines


def render_ansi(s):
    """The board with coordinates (rows a.., columns 0..) and the status lines.

    ``o`` white, ``x`` black, ``.`` empty; the chaining or lifted stone is
    upper-case, and the last move's final point is marked with ``<``.
    """
    n = int(s[K.H_N])
    board = s[K.HDR:K.HDR + n * n]
    special = -1
    if s[K.H_PHASE] == K.PH_BATTLE:
        special = int(s[K.H_CHAIN]) if s[K.H_CHAIN] >= 0 else int(s[K.H_LIFT])
    last_to = int(s[K.H_LAST_TO])
    out = ["   " + " ".join(COLS[:n])]
    for r in range(n):
        row = ""
        for c in range(n):
            p = r * n + c
            ch = ".ox"[int(board[p])]
            row += (ch.upper() if p == special else ch) + ("<" if p == last_to else " ")
        out.append(f" {ROWS[r]} {row.rstrip()}")
    out.extend(status_lines(s))
    return "\n".join(out)


_BG = np.array([222, 184, 135], np.uint8)
_LINE = np.array([60, 40, 20], np.uint8)


def render_rgb(s, cell=32):
    """An RGB image (H, W, 3) uint8 of the board, drawn with numpy alone."""
    n = int(s[K.H_N])
    margin = cell
    size = margin * 2 + cell * (n - 1)
    img = np.empty((size, size, 3), np.uint8)
    img[:] = _BG
    lo, hi = margin, margin + cell * (n - 1)
    for i in range(n):
        x = margin + i * cell
        img[lo:hi + 1, x] = _LINE
        img[x, lo:hi + 1] = _LINE
    c0 = (n - 1) // 2
    for t in range(cell + 1):  # the diagonal of the centre square
        y = margin + c0 * cell + t
        img[y, margin + c0 * cell + t] = _LINE
    yy, xx = np.mgrid[-cell // 2:cell // 2 + 1, -cell // 2:cell // 2 + 1]
    dist = np.sqrt(yy * yy + xx * xx)
    rad = cell * 0.42
    disc = dist <= rad
    rim = (dist <= rad) & (dist > rad - 2)
    ring = (dist <= rad + 3) & (dist > rad + 0.5)
    board = s[K.HDR:K.HDR + n * n]
    special = -1
    if s[K.H_PHASE] == K.PH_BATTLE:
        special = int(s[K.H_CHAIN]) if s[K.H_CHAIN] >= 0 else int(s[K.H_LIFT])
    last_to = int(s[K.H_LAST_TO])
    h = cell // 2
    for p in range(n * n):
        r, c = divmod(p, n)
        y, x = margin + r * cell, margin + c * cell
        patch = img[y - h:y + h + 1, x - h:x + h + 1]
        v = int(board[p])
        if v:
            patch[disc] = (245, 245, 245) if v == K.WHITE else (20, 20, 20)
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
