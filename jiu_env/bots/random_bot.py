"""The uniform random opponent: every legal action equally likely, seeded."""

from .base import Bot, legal_actions


class RandomBot(Bot):
    """Picks uniformly among the legal actions of every decision (``make_bot("random")``).

    Chain continuations and STOP, fly drops and square-capture victims are all
    decisions of their own, so a random turn is a sequence of uniform choices.
    """

    name = "random"
    PARAMS = {}

    def _choose(self, state):
        acts = legal_actions(state)
        return acts[self.rng.integers(acts.size)]
