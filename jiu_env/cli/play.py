"""``jiu play``: play a bot in the terminal (moves in notation or by number; undo, hint, save)."""

from __future__ import annotations

import argparse
import os
from typing import Callable

import numpy as np

from .. import kernel as K

from .. import vocab as V
from ..vocab import COLOUR_NAMES, SUBPHASE_NAMES, opponent
from ..notation import action_to_str, str_to_action
from ..render import render_ansi
from ..state import explain_illegal
from ..validate import check_action_value
from .common import _add_rules_args, _err, _rules_from_args, int_at_least, writable_file


PLAY_HELP = """commands:
  <move>        a move in notation: g6 (place / drop / capture), g6-g7 (step),
                g6xg8 (jump), ^g6 (lift a stone to fly), stop (end a jump chain)
  <number>      the legal move with that number (see 'moves')
  moves         list the legal moves with their numbers
  undo          take back your last decision (and the bot's replies)
  hint          ask the hint bot for a move
  save FILE     save the game: a JSON record; competition notation for .txt
                or .jiu, a jiuchess CSV file for .csv, one JSON line for .jsonl
  board         show the board again
  quit          leave (also Ctrl-D, Ctrl-C)"""


def _play_args(p):
    p.add_argument("--bot", default="greedy", metavar="SPEC",
                   help="the opponent: any player spec accepted by jiu eval (default greedy, or random if "
                        "greedy is not available)")
    p.add_argument("--colour", "--color", default="white", choices=["white", "black"],
                   help="your colour (White places first; Black moves first in the battle)")
    p.add_argument("--hint-bot", metavar="SPEC", help="bot asked by 'hint' (default: the opponent's spec)")
    _add_rules_args(p)
    p.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the bot and of --start battle")
    p.add_argument("--start", default="placement", choices=["placement", "battle"],
                   help="'battle' fills the board with random (seeded) placements first")
    p.add_argument("--save", metavar="FILE",
                   help="save the game to FILE (in the format of 'save FILE') when it ends, when you leave if it "
                        "changed since, and when the bot fails")
    p.add_argument("--gui", action="store_true", help="also show the board in a pygame window")


def _default_bot(spec_given):
    if spec_given != "greedy":
        return spec_given
    from ..bots import bot_class

    try:
        bot_class("greedy")
        return "greedy"
    except ImportError:
        return "random"


class _Game:
    """A game with full history, so that any decision can be taken back."""

    def __init__(self, rules):
        self.rules = rules
        self.state = rules.new_state()
        self.history = []  # (state before, who decided: "you" / "bot" / "setup", action)

    def apply(self, a, who):
        self.history.append((self.state.copy(), who, int(a)))
        K.apply_action(self.state, int(a))

    def undo_to_last(self, who):
        for i in range(len(self.history) - 1, -1, -1):
            if self.history[i][1] == who:
                self.state = self.history[i][0].copy()
                taken = self.history[i][2]
                del self.history[i:]
                return taken
        return None

    def actions(self):
        return [h[2] for h in self.history]

    def legal(self):
        buf = np.empty(self.rules.num_actions, np.int64)
        k = K.legal_actions(self.state, buf)
        return np.sort(buf[:k])


def _moves_listing(legal, n):
    items = [f"{i}:{action_to_str(a, n)}" for i, a in enumerate(legal, start=1)]
    width = max(len(x) for x in items) + 2 if items else 0
    per_line = max(1, 78 // max(width, 1))
    return "\n".join("".join(x.ljust(width) for x in items[i:i + per_line]).rstrip()
                     for i in range(0, len(items), per_line))


def _save_game(game, path, players, seed, forfeit=None):
    from ..records import GameRecord

    from ..records.export import today

    meta = {"source": "jiu play", "event": "jiu play", "date": today()}
    if forfeit is not None:  # as play_game records a forfeit: the record's outcome then names the winner
        meta["forfeit"] = forfeit
    rec = GameRecord.from_actions(game.rules, game.actions(), players=players, seed=seed, meta=meta)
    rec.save(path)


class _BotFailed(Exception):
    """A bot that raised, or chose what is not a legal action (``forfeit``: ``{"colour", "action"}``, as
    :func:`jiu_env.play_game` records an illegal choice)."""

    def __init__(self, why, forfeit=None):
        super().__init__(why)
        self.forfeit = forfeit


def _bot_action(bot, state, rules):
    """The bot's action in ``state``, checked as :func:`jiu_env.play_game` checks it: an integer (not
    14.9, which int() would make 14, nor None) that is legal here; :class:`_BotFailed` otherwise, and
    when the bot raises (any bot, a user's class too: its failure must not lose the person's game)."""
    try:
        choice = bot.step(state.copy())
    except Exception as e:
        raise _BotFailed(" ".join(f"{type(e).__name__}: {e}".split())) from None  # on one line
    colour = COLOUR_NAMES[int(state[V.H_TO_MOVE])]
    try:
        a = check_action_value(choice)
    except (TypeError, ValueError, OverflowError):
        raise _BotFailed(f"it chose what is not an integer action: {choice!r:.80}",
                         {"colour": colour, "action": -1}) from None
    if not 0 <= a < rules.num_actions:
        raise _BotFailed(f"it chose the action {a}, out of range 0..{rules.num_actions - 1}",
                         {"colour": colour, "action": a})
    if not K.is_legal(state, a):
        raise _BotFailed(f"it chose the illegal action {action_to_str(a, rules.board_size)} ({a}): "
                         f"{explain_illegal(state, a)}", {"colour": colour, "action": a})
    return a


def cmd_play(args: argparse.Namespace, inp: Callable[[str], str] = input) -> int:
    from ..players import make_player, sb3_spec_rules

    rules = _rules_from_args(args)
    n = rules.board_size
    spec = _default_bot(args.bot)
    hint_spec = spec if args.hint_bot is None else args.hint_bot  # '' is a bad spec, not "the default"
    try:
        bot = make_player(spec, seed=args.seed)
        hint_bot = make_player(hint_spec, seed=args.seed + 1)
        sb3_spec_rules([spec, hint_spec], rules)  # a model of other rules is refused now, not mid-game
    except (ValueError, TypeError, ImportError, OSError) as e:
        return _err(f"play: {e}")
    why = args.save and writable_file(args.save, "--save")
    if why:
        return _err(f"play: {why}")
    me = V.WHITE if args.colour == "white" else V.BLACK
    players = {"white": "human", "black": spec} if me == V.WHITE else {"white": spec, "black": "human"}
    game = _Game(rules)
    if args.start == "battle":
        rng = np.random.default_rng(args.seed)
        buf = np.empty(rules.num_actions, np.int64)
        while game.state[V.H_PHASE] == V.PH_PLACEMENT:
            k = K.legal_actions(game.state, buf)
            game.apply(int(buf[rng.integers(k)]), "setup")
    window = None
    if args.gui:
        try:
            from ..render import PygameWindow

            window = PygameWindow("Jiu")
        except Exception as e:  # no pygame / no display: the terminal still works
            print(f"(no window: {e})")
            window = None

    def show():
        print()
        print(render_ansi(game.state))
        if window is not None:
            from ..render import render_rgb

            try:
                window.show(render_rgb(game.state), 30)
            except Exception as e:
                print(f"(window closed: {e})")

    def save_flag(forfeit=None):
        """Write the game to --save unless that file holds it as it is already; why not, or None."""
        nonlocal saved
        here = (os.path.realpath(args.save), list(game.actions()))
        if saved == here and forfeit is None:
            return None
        try:
            _save_game(game, args.save, players, args.seed, forfeit)
        except (OSError, ValueError) as e:  # ValueError: text that cannot be encoded, a record not expressible
            return f"could not save (the file that was there is unchanged): {e}"
        saved = here
        print(f"saved to {args.save}")
        return None

    def close():
        if window is not None:
            window.close()

    print(f"You play {args.colour} against {spec}. Type 'help' for the commands.")
    show()
    saved = None  # (path, actions) last written by `save FILE` or --save: --save skips only that exact save
    ended = None  # the actions of the finished game last saved to --save (saved once when the game ends)
    interrupted = False
    while True:
        s = game.state
        over = s[V.H_PHASE] == V.PH_OVER
        if not over and s[V.H_TO_MOVE] != me:
            made = []
            while s[V.H_PHASE] != V.PH_OVER and s[V.H_TO_MOVE] != me:
                try:
                    a = _bot_action(bot, s, rules)
                except _BotFailed as e:  # the game so far is kept (--save), and the error is one line
                    why = save_flag(e.forfeit) if args.save else None
                    kept = "" if not args.save else (f"; {why}" if why else f"; the game is saved to {args.save}")
                    close()
                    return _err(f"play: the bot ({spec}) failed: {e}{kept}", 1)
                except KeyboardInterrupt:  # Ctrl-C while the bot thinks: leave as 'quit' does, saving
                    interrupted = True
                    break
                game.apply(a, "bot")
                s = game.state
                made.append(action_to_str(a, n))
            if made:
                print(f"\n{COLOUR_NAMES[opponent(me)]} ({spec}) plays: {', '.join(made)}")
                show()
            if interrupted:
                print("\n(interrupted)")
                break
            continue
        if over and args.save and ended != game.actions():  # saved when it ends, not only when you leave
            ended = list(game.actions())
            why = save_flag()
            if why:
                print(why)
        legal = game.legal()
        if over:
            prompt = "game over - undo, save FILE or quit> "
        else:
            sub = "placement" if s[V.H_PHASE] == V.PH_PLACEMENT else SUBPHASE_NAMES[int(s[V.H_SUB])]
            hint_list = f"{len(legal)} legal moves" + (": " + " ".join(action_to_str(a, n) for a in legal)
                                                       if len(legal) <= 12 else ", 'moves' lists them")
            print(f"{hint_list}")
            prompt = f"{COLOUR_NAMES[me]} ({sub})> "
        try:
            line = inp(prompt)
        except EOFError:
            line = "quit"
        except KeyboardInterrupt:  # Ctrl-C at the prompt: leave as 'quit' does (--save keeps the game)
            print()
            line = "quit"
        text = line.strip()
        if not text:
            continue
        word, _, rest = text.partition(" ")
        word = word.lower()
        if word in ("quit", "q", "exit"):
            break
        if word in ("help", "?", "h"):
            print(PLAY_HELP)
            continue
        if word == "board":
            show()
            continue
        if word == "moves":
            print(_moves_listing(legal, n) if len(legal) else "no legal moves: the game is over")
            continue
        if word == "save":
            path = rest.strip()
            if not path:
                print("save needs a file name: save FILE")
                continue
            try:
                _save_game(game, path, players, args.seed)
                saved = (os.path.realpath(path), list(game.actions()))
                print(f"saved to {path}")
            except (OSError, ValueError) as e:  # ValueError: text that cannot be encoded, a record not expressible
                print(f"could not save (the file that was there is unchanged): {e}")
            continue
        if word == "undo":
            taken = game.undo_to_last("you")
            if taken is None:
                print("nothing to undo")
            else:
                print(f"took back {action_to_str(taken, n)}")
                show()
            continue
        if word == "hint":
            if over:
                print("the game is over")
                continue
            try:
                a = _bot_action(hint_bot, s, rules)
            except _BotFailed as e:  # only advice: the game goes on
                print(f"hint bot failed: {e}")
                continue
            print(f"hint: {action_to_str(a, n)}")
            continue
        if over:
            print(f"{text!r}: the game is over; undo, save FILE or quit")
            continue
        if text.isascii() and text.isdigit():  # '²'.isdigit() is True too, and int('²') fails
            i = int(text) if len(text) <= 9 else 10 ** 9  # int() refuses over 4300 digits
            if not 1 <= i <= len(legal):
                print(f"{i} is not a move number: choose 1..{len(legal)} ('moves' lists them)")
                continue
            a = int(legal[i - 1])
        else:
            try:
                a = str_to_action(text, n)
            except ValueError as e:
                print(f"not understood: {e}. Type 'help' for the commands.")
                continue
        if not K.is_legal(s, a):
            print(f"illegal: {action_to_str(a, n)} - {explain_illegal(s, a)}. Try again ('moves' lists the legal ones).")
            continue
        game.apply(a, "you")
        if game.state[V.H_PHASE] == V.PH_OVER or game.state[V.H_TO_MOVE] == me:
            show()
    why = save_flag() if args.save else None
    close()
    if why:
        return _err(f"play: {why}", 1)
    print("bye")
    return 0
