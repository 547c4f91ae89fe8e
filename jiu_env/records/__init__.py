"""Game records: an exact JSON format and two text notations of real Jiu records.

* :mod:`.game_record`: JSON records (``docs/records.md``) hold everything needed
  to replay a game exactly: format name and version, the rules options, the
  seed, the players, the start (a new game or a battle position), the list of
  kernel actions and the result.  :class:`GameRecord` reads, writes, replays
  and checks them.
* :mod:`.competition`: the competition notation (FlameChess / CCGC style) of
  tournament records, :func:`to_competition` / :func:`from_competition`.
* :mod:`.jiuchess`: the CSV notation of the jiuchess human-game data set
  (``Stage[1]: W(G,7);...``), :func:`to_jiuchess` / :func:`from_jiuchess`.
* :func:`load_record` reads any of them from a file and detects the format.
* :mod:`.formats`: the format table every reader and writer goes through (one
  :class:`~jiu_env.records.formats.RecordFormat` row a format; a new format registers its row).

Text imports are strict (the first irregularity raises :class:`RecordError`
naming the entry) or lenient (irregularities are listed in
:attr:`GameRecord.issues` and the game is rebuilt as far as the record allows).
All formats replay through one loop (:mod:`.replay`).
"""

from .competition import RESULT_WORDS, from_competition, to_competition
from .errors import ChooseGame, Irregularity, NotARecord, RecordError, RulesMismatch
from .game_record import (
    COLOUR_NAMES, END_REASONS, FORMAT, VERSION, WINNER_NAMES, GameRecord, result_of, result_text,
)
from .jiuchess import from_jiuchess, to_jiuchess
from .loading import detect_format, load_record
from .replay import turn_entries

__all__ = [
    "ChooseGame", "NotARecord", "RulesMismatch",
    "FORMAT", "VERSION", "GameRecord", "RecordError", "Irregularity", "result_of", "result_text",
    "load_record", "detect_format", "to_competition", "from_competition", "to_jiuchess", "from_jiuchess",
    "turn_entries",
]
