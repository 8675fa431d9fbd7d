"""``python -m evalframe`` runs the command line."""

from evalframe.cli import run

run()
