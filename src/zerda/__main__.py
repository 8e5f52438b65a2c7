"""``python -m zerda`` runs the ``zerda`` command."""

from zerda._entry import main

main()
