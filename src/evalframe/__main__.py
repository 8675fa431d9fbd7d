"""``python -m evalframe`` runs the command line."""

import sys

from evalframe.cli import main

sys.exit(main())
