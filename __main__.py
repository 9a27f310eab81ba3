"""``python -m kbx`` runs the command line."""

from kbx.cli.app import run

run()
