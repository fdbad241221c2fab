"""``python -m daemon.cli``: the ``hexvoice`` command without installing it."""

import sys

from daemon.cli.main import main

sys.exit(main())
