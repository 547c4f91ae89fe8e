"""Former home of the single-agent envs: they live in :mod:`jiu_env.envs.single_agent`.

Deprecated: this path keeps working for this release and warns on import.
"""

import warnings

warnings.warn("jiu_env.single_agent is deprecated: import from jiu_env.envs.single_agent (or the root: "
              "jiu_env.JiuVsBotEnv, jiu_env.JiuSelfPlayEnv)", DeprecationWarning, stacklevel=2)

from .envs.single_agent import (  # noqa: F401
    COLOURS, RESET_OPTIONS, CallableOpponent, JiuSelfPlayEnv, JiuVsBotEnv, as_opponent, check_action,
)

__all__ = ["JiuVsBotEnv", "JiuSelfPlayEnv", "as_opponent", "check_action", "CallableOpponent", "COLOURS", "RESET_OPTIONS"]
