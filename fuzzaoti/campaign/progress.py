"""Progress of long work on the user's screen: on a terminal one status line rewritten in
place, elsewhere (a log, a batch job's output) plain lines, less often."""

from __future__ import annotations

import sys

import click


class Display:
    """Progress on a terminal: one status line rewritten in place; elsewhere plain lines."""

    def __init__(self) -> None:
        self.live = sys.stdout.isatty()
        self.every = 1.0 if self.live else 10.0
        self.pending = False

    def __call__(self, line: str) -> None:
        if self.live and line.startswith("["):
            click.echo("\r\x1b[K" + line, nl=False)
            self.pending = True
            return
        self.close()
        click.echo(line)

    def close(self) -> None:
        if self.pending:
            click.echo("")
            self.pending = False
