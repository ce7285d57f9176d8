"""``python -m simhash_nb``: the ``simhash-nb`` command."""

import sys

from .cli import main

sys.exit(main())
