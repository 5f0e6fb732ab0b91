"""Command line: ``python -m games.engine replay FILE...`` and ``selfplay`` / ``bench``."""

from .cli import main

raise SystemExit(main())
