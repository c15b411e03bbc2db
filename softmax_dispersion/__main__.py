"""``python -m softmax_dispersion``: the same as the ``softmax-dispersion`` command."""

from softmax_dispersion.cli import main

raise SystemExit(main())
