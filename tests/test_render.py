"""The RGB image: coordinate labels that match the notation, the status strip, the options and their errors."""

import importlib.util
import io
import pathlib

import numpy as np
import pytest

import jiu_env
from jiu_env import kernel as K
from jiu_env.envs.single_agent import JiuVsBotEnv
from jiu_env.notation import point_to_str
from jiu_env.render import (COORDS_MIN_CELL, FONT, GLYPH_H, GLYPH_W, MAX_CELL, MIN_CELL, RENDER_DEFAULTS, _INK, _STRIP,
                            _status_layout, check_render_options, draw_text, render_rgb, status_fields, status_lines,
                            text_scale, text_width)
from jiu_env.rules import Rules
from jiu_env.vocab import MAX_N, MIN_N

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _state(n=14, placed=True, seed=3):
    s = Rules.make("competitive", board_size=n).new_state()
    if placed:
        K.random_placement(s, seed)
    return s


def _random_game_states(n=6, seed=0, limit=3000):
    """Every state of a seeded random game on an n x n board, the final one included."""
    rng = np.random.default_rng(seed)
    s = Rules.make("competitive", board_size=n).new_state()
    mask = np.zeros(10 * n * n + 1, np.int8)
    out = [s.copy()]
    while s[K.H_PHASE] != K.PH_OVER and len(out) < limit:
        K.legal_mask(s, mask)
        K.apply_action(s, int(rng.choice(np.flatnonzero(mask))))
        out.append(s.copy())
    return out


def _reach(cell):
    """How far from its point a stone's marker ring reaches (render_rgb: radius 0.42 cell + 3)."""
    return int(np.ceil(cell * 0.42 + 3))


def _glyph(ch, scale):
    g = FONT[ch]
    rows, cols = np.flatnonzero(g.any(1)), np.flatnonzero(g.any(0))
    return np.kron(g[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1], np.ones((scale, scale), bool))


def _ink_crop(region):
    """The ink pixels of an image region, cropped to their bounding box (None without ink)."""
    ink = (region == _INK).all(axis=2)
    if not ink.any():
        return None
    rows, cols = np.flatnonzero(ink.any(1)), np.flatnonzero(ink.any(0))
    return ink[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]


# ------------------------------------------------------------------ shape
@pytest.mark.parametrize("n", range(MIN_N, MAX_N + 1))
def test_shape_and_dtype_every_board_size(n):
    s = _state(n)
    img = render_rgb(s)
    w = 32 * (n + 1)
    strip, _ = _status_layout(n, 32)
    assert img.dtype == np.uint8 and img.shape == (w + strip, w, 3)
    assert strip > 0 and strip % 2 == 0 and w % 2 == 0
    assert render_rgb(s, status=False).shape == (w, w, 3)
    assert render_rgb(s, cell=24, coords=False, status=False).shape == (24 * (n + 1),) * 2 + (3,)


def test_frames_of_a_game_keep_one_shape():
    shapes = {render_rgb(s).shape for s in _random_game_states(6, seed=1)[::7]}
    assert len(shapes) == 1


# ------------------------------------------------------------------ coordinates
@pytest.mark.parametrize("cell", [24, 32, 40, 64])
def test_coords_change_only_the_margins(cell):
    n = 14
    s = _state(n)
    on, off = render_rgb(s, cell=cell, status=False), render_rgb(s, cell=cell, coords=False, status=False)
    diff = (on != off).any(axis=2)
    size = cell * (n + 1)
    inner = slice(cell - _reach(cell), size - cell + _reach(cell))
    assert not diff[inner, inner].any()  # the board and the stones are untouched
    band = cell - _reach(cell)
    for side in (diff[:band], diff[-band:], diff[:, :band], diff[:, -band:]):
        assert side.sum() > 5 * n  # labels along each of the four sides
    assert not (off[:band] == _INK).all(axis=2).any()  # without coords the margin has no ink


@pytest.mark.parametrize("n", [4, 6, 14, 20])
@pytest.mark.parametrize("cell", [COORDS_MIN_CELL, 31, 36, 48, 100])
def test_labels_are_the_notation_of_each_row_and_column(n, cell):
    # a last move ending in the corner a0 puts its marker ring as close to the labels as it gets
    s = _state(n)
    s[K.H_LAST_TO] = 0
    img = render_rgb(s, cell=cell, status=False)
    sc, band, size = text_scale(cell), cell - _reach(cell), cell * (n + 1)
    for i in range(n):
        mid = cell + i * cell
        row_name = point_to_str(i * n, n)[0]  # what a user types for the points of row i
        col_name = point_to_str(i, n)[1]
        lo, hi = mid - cell // 2 + 1, mid + cell // 2
        for region, ch in ((img[lo:hi, :band], row_name), (img[lo:hi, size - band:], row_name),
                           (img[:band, lo:hi], col_name), (img[size - band:, lo:hi], col_name)):
            assert np.array_equal(_ink_crop(region), _glyph(ch, sc)), (n, cell, i, ch)


def test_corner_labels_stay_clear_of_the_ring_at_every_cell():
    s = _state(4)
    s[K.H_LAST_TO] = 0  # the ring round a0, next to the labels a and 0
    for cell in range(COORDS_MIN_CELL, MAX_CELL + 1):
        img = render_rgb(s, cell=cell, status=False)
        band, lo, hi = cell - _reach(cell), cell // 2 + 1, cell + cell // 2
        assert np.array_equal(_ink_crop(img[lo:hi, :band]), _glyph("a", text_scale(cell))), cell
        assert np.array_equal(_ink_crop(img[:band, lo:hi]), _glyph("0", text_scale(cell))), cell


def test_coords_need_room():
    s = _state(6)
    render_rgb(s, cell=COORDS_MIN_CELL)
    render_rgb(s, cell=MIN_CELL, coords=False)
    with pytest.raises(ValueError, match="coordinate labels need cell >= 24"):
        render_rgb(s, cell=COORDS_MIN_CELL - 1)


# ------------------------------------------------------------------ status strip
def _expected_strip(s, cell):
    """The strip drawn from the status texts at the layout's places (what render_rgb must show)."""
    n = int(s[K.H_N])
    height, places = _status_layout(n, cell)
    strip = np.empty((height, cell * (n + 1), 3), np.uint8)
    strip[:] = _STRIP
    texts = status_fields(s)
    for field, x, y, width in places:
        draw_text(strip[:, x:x + width], 0, y, texts[field], text_scale(cell))
    return strip


def test_status_strip_shows_the_status_texts_through_a_game():
    seen = set()
    for s in _random_game_states(6, seed=2):
        phase, side, stones = status_fields(s)
        w, b = int(s[K.H_COUNT + K.WHITE]), int(s[K.H_COUNT + K.BLACK])
        assert stones == f"white {w}  black {b}"
        ph = int(s[K.H_PHASE])
        if ph == K.PH_OVER:
            assert phase.startswith("game over: ") and side.startswith("(")
            assert phase[len("game over: "):] in status_lines(s)[0]
            key = "over"
        else:
            mover = ("white", "black")[int(s[K.H_TO_MOVE]) - 1]
            assert side.startswith(f"to move: {mover}") and f"to move: {mover}" in status_lines(s)[0]
            assert phase.split()[0] == ("placement", "battle")[ph]
            key = phase.split(":")[-1].split()[0] if ph == K.PH_BATTLE else "placement"
        if key not in seen:  # one full comparison per kind of state
            seen.add(key)
            img = render_rgb(s)
            assert np.array_equal(img[7 * 32:], _expected_strip(s, 32)), key
    assert {"placement", "move", "over"} <= seen


def test_status_strip_changes_with_side_to_move_and_phase():
    s0 = Rules.make("competitive", board_size=14).new_state()
    s1 = s0.copy()
    mask = np.zeros(10 * 14 * 14 + 1, np.int8)
    K.legal_mask(s1, mask)
    K.apply_action(s1, int(np.flatnonzero(mask)[0]))
    battle = _state(14)
    size = 32 * 15
    _, places = _status_layout(14, 32)
    assert len({y for _, _, y, _ in places}) == 1  # one row under a 14x14 board at the default cell
    strips = [render_rgb(s)[size:] for s in (s0, s1, battle)]
    assert status_fields(s0)[1] == "to move: white" and status_fields(s1)[1] == "to move: black"
    assert status_fields(battle)[0] == "battle turn 1: move"
    # White placed a stone: the count and side to move change, so do those pixels and nothing else's
    (_, x1, _, w1), (_, x2, _, w2), (_, x3, _, w3) = sorted(places)
    changed = (strips[0] != strips[1]).any(axis=(0, 2))
    assert changed[x1:x1 + w1].any() and changed[x2:x2 + w2].any() and changed[x3:x3 + w3].any()
    assert not changed[:x1].any()
    # each field shows exactly its text
    for s, strip in zip((s0, s1, battle), strips):
        for (field, x, y, width), text in zip(sorted(places), status_fields(s)):
            sc = text_scale(32)
            region = strip[y:y + GLYPH_H * sc, x:x + width]
            drawn = np.empty_like(region)
            drawn[:] = _STRIP
            draw_text(drawn, 0, 0, text, sc)
            assert np.array_equal(region, drawn), text
    assert render_rgb(s0, status=False).shape[0] == size


def test_status_rows_follow_the_width():
    assert len({y for _, _, y, _ in _status_layout(6, 32)[1]}) == 3
    assert len({y for _, _, y, _ in _status_layout(8, 32)[1]}) == 2
    assert len({y for _, _, y, _ in _status_layout(14, 32)[1]}) == 1
    for n in range(MIN_N, MAX_N + 1):  # fields never overlap, and stay inside the image
        for cell in (MIN_CELL, 32, 40, MAX_CELL):
            _, places = _status_layout(n, cell)
            by_row: dict[int, list[tuple[int, int]]] = {}
            for _, x, y, width in places:
                assert x >= 0 and width > 0 and x + width <= cell * (n + 1)
                by_row.setdefault(y, []).append((x, width))
            for row in by_row.values():
                row.sort()
                assert all(a + wa <= b for (a, wa), (b, _) in zip(row, row[1:]))


# ------------------------------------------------------------------ font
def test_font_has_every_label_and_status_character():
    letters = set(jiu_env.notation.ROWS) | set(jiu_env.notation.COLS)
    assert letters <= set(FONT)
    for s in _random_game_states(6, seed=4)[::5]:
        assert set("".join(status_fields(s))) <= set(FONT)
    glyphs = [g.tobytes() for ch, g in FONT.items()]
    assert len(set(glyphs)) == len(glyphs)  # no two characters look the same
    assert all(g.shape == (GLYPH_H, GLYPH_W) for g in FONT.values())


def test_draw_text_clips_and_refuses_unknown_characters():
    img = np.zeros((10, 20, 3), np.uint8)
    draw_text(img, 15, -3, "abc", 1, colour=(255, 255, 255))  # partly outside: clipped, no error
    assert img.any()
    assert text_width("ab", 2) == 22
    with pytest.raises(ValueError, match=r"no glyph for \['#'\]"):
        draw_text(img, 0, 0, "a#b")
    with pytest.raises(ValueError, match="scale"):
        draw_text(img, 0, 0, "a", 0)


# ------------------------------------------------------------------ options and errors
@pytest.mark.parametrize("kwargs, error, match", [
    ({"cell": True}, TypeError, "'cell' must be an int"),
    ({"cell": 32.0}, TypeError, "'cell' must be an int"),
    ({"cell": MIN_CELL - 1, "coords": False}, ValueError, "'cell' must be an int in 8..256 \\(pixels between lines\\), not 7"),
    ({"cell": MAX_CELL + 1}, ValueError, "'cell' must be an int in 8..256"),
    ({"coords": "yes"}, TypeError, "'coords' must be True or False"),
    ({"status": 1}, TypeError, "'status' must be True or False"),
    ({"cell": 16}, ValueError, "coordinate labels need cell >= 24"),
])
def test_bad_values_raise(kwargs, error, match):
    with pytest.raises(error, match=match):
        render_rgb(_state(6), **kwargs)
    with pytest.raises(error, match=match):
        check_render_options(kwargs)
    with pytest.raises(error, match=match):
        jiu_env.env(render_mode="rgb_array", board_size=6, render_options=kwargs)
    with pytest.raises(error, match=match):
        JiuVsBotEnv(board_size=6, render_mode="rgb_array", render_options=kwargs)


def test_unknown_options_and_non_dicts_raise():
    valid = r"valid: \['cell', 'coords', 'status'\]"
    with pytest.raises(ValueError, match=r"unknown render option\(s\) \['cel'\]; " + valid):
        jiu_env.raw_env(render_options={"cel": 40})
    with pytest.raises(TypeError, match="render options must be a dict, not list"):
        JiuVsBotEnv(render_options=["coords"])
    assert check_render_options() == RENDER_DEFAULTS
    assert check_render_options({"cell": np.int64(40), "coords": np.bool_(False)}) == \
        {"cell": 40, "coords": False, "status": True}


def test_envs_render_with_their_options():
    opts = {"cell": 24, "coords": False, "status": False}
    e = jiu_env.env(render_mode="rgb_array", board_size=6, render_options=opts)
    e.reset(seed=1)
    e.step(int(np.flatnonzero(e.observe("white")["action_mask"])[0]))
    img = e.render()
    assert np.array_equal(img, render_rgb(e.unwrapped.state, **opts)) and img.shape == (168, 168, 3)
    g = JiuVsBotEnv(board_size=6, render_mode="rgb_array", render_options={"status": False})
    g.reset(seed=1)
    assert np.array_equal(g.render(), render_rgb(g.state, status=False))
    plain = JiuVsBotEnv(board_size=6, render_mode="rgb_array")
    plain.reset(seed=1)
    assert np.array_equal(plain.render(), render_rgb(plain.state))  # the defaults: coordinates and status on
    assert plain.render_options == RENDER_DEFAULTS


def test_check_env_with_the_render_check(monkeypatch):
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    # made through the registry, so that the checker also builds the env in its other render modes
    e = gymnasium.make("jiu_env/JiuVsBot-v0", board_size=6, render_mode="rgb_array", render_options={"cell": 40})
    check_env(e.unwrapped)


def test_pettingzoo_render_test_with_options(monkeypatch):
    from pettingzoo.test import render_test

    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    render_test(lambda render_mode=None: jiu_env.env(render_mode=render_mode, board_size=8,
                                                     render_options={"coords": False, "cell": 24}))


# ------------------------------------------------------------------ the README picture
def _make_board():
    spec = importlib.util.spec_from_file_location("make_board", ROOT / "docs" / "img" / "make_board.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_png_writer_round_trips():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.image as mpimg

    img = render_rgb(_random_game_states(6, seed=5)[60])
    data = _make_board().png_bytes(img)
    back = mpimg.imread(io.BytesIO(data), format="png")
    assert np.array_equal((back * 255).round().astype(np.uint8), img)
    with pytest.raises(ValueError, match="uint8"):
        _make_board().png_bytes(img.astype(np.float32))


def test_committed_board_picture_is_small_and_linked():
    png = ROOT / "docs" / "img" / "board14.png"
    assert png.stat().st_size < 100_000
    assert "](docs/img/board14.png)" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](img/board14.png)" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_committed_board_picture_regenerates(tmp_path):
    out = tmp_path / "board14.png"
    _make_board().main(["--out", str(out)])
    assert out.read_bytes() == (ROOT / "docs" / "img" / "board14.png").read_bytes()
