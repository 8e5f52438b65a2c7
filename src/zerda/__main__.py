"""``python -m zerda`` runs the ``zerda`` command."""

from zerda.cli import main

main()
