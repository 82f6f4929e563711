"""``python -m fuzzaoti.cli``: the ``fuzzaoti`` command (workers' tests run it so)."""

from fuzzaoti.cli import main

main()
