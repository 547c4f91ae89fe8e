"""Former home of the single-agent envs: they live in :mod:`jiu_env.envs.single_agent` (this path keeps working)."""

from .envs.single_agent import (  # noqa: F401
    COLOURS, RESET_OPTIONS, CallableOpponent, JiuSelfPlayEnv, JiuVsBotEnv, as_opponent, check_action,
)

__all__ = ["JiuVsBotEnv", "JiuSelfPlayEnv", "as_opponent", "check_action", "CallableOpponent", "COLOURS", "RESET_OPTIONS"]
