"""``python -m jiu_env.cli``: the ``jiu`` command."""

import sys

from . import main

sys.exit(main())
