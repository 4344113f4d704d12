"""``python -m tfres`` runs the command-line tool."""

from tfres.cli import main

raise SystemExit(main())
