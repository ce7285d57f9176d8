"""``python -m simhash_nb``: the ``simhash-nb`` command."""

import sys

from .cli import console_main

sys.exit(console_main())
