"""`python -m lobby_display`: the same command line as `lobby-display`."""

from lobby_display.cli import main

raise SystemExit(main())
