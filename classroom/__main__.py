"""``python -m classroom``: see ``classroom.main``."""

import sys

from classroom import main

sys.exit(main())
