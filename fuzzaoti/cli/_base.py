"""What every ``fuzzaoti`` command shares: the group, its one-line errors, common options."""

from __future__ import annotations

import os
import sys

import click

from fuzzaoti.compile.canaries import CANARIES
from fuzzaoti.errors import FuzzaotiError, one_line

DEFAULT_CORPUS = "fuzzaoti.db"
EXIT_USAGE = 2

corpus_option = click.option("--corpus", "corpus_path", default=DEFAULT_CORPUS, show_default=True,
                             type=click.Path(dir_okay=False), help="The SQLite corpus file.")


known_option = click.option(
    "--known", "known_file", default=None, type=click.Path(exists=True, dir_okay=False),
    help="Known-bug list: signature globs already reported upstream (matching findings become "
         "'known', not 'new').  [default: fuzzaoti-known.txt beside the corpus, if any]")


max_bytes_option = click.option(
    "--max-bytes", type=click.IntRange(min=1), default=None,
    help="Refuse a run that would hold more bytes than this, before anything is allocated.  "
         "[default: half the device's free memory]")

#: an error line is cut here: a message may quote a file's contents
MAX_ERROR_CHARS = 400


def error_line(text: str) -> str:
    """``error: `` and the first line of ``text``, at most ``MAX_ERROR_CHARS`` characters (a
    worker's error carries its traceback on the lines below)."""
    return one_line(f"error: {(text.strip().splitlines() or [''])[0]}", MAX_ERROR_CHARS)


class OneLineErrors(click.Group):
    """Print usage and input errors as one ``error: ...`` line and exit 2, never a traceback."""

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(130)
        except click.ClickException as exc:
            click.echo(error_line(exc.format_message()), err=True)
            sys.exit(EXIT_USAGE)
        except FuzzaotiError as exc:
            click.echo(error_line(str(exc)), err=True)
            sys.exit(EXIT_USAGE)


@click.group(cls=OneLineErrors)
@click.version_option(package_name="fuzzaoti")
def main() -> None:
    """Property-based differential fuzzing of PyTorch AOTInductor against eager."""
    _hypothesis_files_out_of_the_working_directory()


def _hypothesis_files_out_of_the_working_directory() -> None:
    """Hypothesis keeps files under ``./.hypothesis`` (the constants it reads from the source of
    the programs' strategies, when fuzzaoti is a checkout), so a campaign started in a PyTorch
    checkout would leave that folder there. A command keeps them in the user's cache instead,
    unless ``HYPOTHESIS_STORAGE_DIRECTORY`` names a place; the corpus is a campaign's example
    database, not these files."""
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = os.path.join(cache, "fuzzaoti", "hypothesis")


CANARY_HELP = "Inject a canary miscompilation into the workers: " + "; ".join(
    f"{c.name} ({c.summary})" for c in CANARIES.values())


def require_cuda() -> None:
    import torch

    if not torch.cuda.is_available():
        raise click.UsageError(f"--device cuda, but torch {torch.__version__} sees no CUDA device")
