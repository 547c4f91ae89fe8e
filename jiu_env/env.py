"""Former home of the PettingZoo AEC env: it lives in :mod:`jiu_env.envs.aec` (deprecated: this path keeps working for this release and warns on import).

``jiu_env.env`` itself is the factory function (the package keeps it from
being replaced by this module); ``from jiu_env.env import raw_env`` and the
other names below still work.
"""

import warnings

warnings.warn("the module jiu_env.env is deprecated: import from jiu_env.envs.aec (jiu_env.env, the factory "
              "function, stays)", DeprecationWarning, stacklevel=2)

from .envs.aec import AGENTS, RESET_OPTIONS, ActionTypeWrapper, env, raw_env  # noqa: F401
from .state import (COLOUR, end_reason_name, explain_illegal, game_info,  # noqa: F401  (re-exported, as before)
                    position_state, winner_name)

__all__ = ["env", "raw_env", "ActionTypeWrapper", "AGENTS", "RESET_OPTIONS", "COLOUR", "end_reason_name",
           "explain_illegal", "game_info", "position_state", "winner_name"]
