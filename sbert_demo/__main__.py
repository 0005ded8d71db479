"""``python -m sbert_demo``: see :mod:`sbert_demo.cli`."""

import sys

from .cli import main

sys.exit(main())
