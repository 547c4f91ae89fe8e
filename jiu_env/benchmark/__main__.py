"""``python -m jiu_env.benchmark``: the same command as ``jiu bench``."""

import sys

from . import main

sys.exit(main())
