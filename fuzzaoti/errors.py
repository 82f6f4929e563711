"""The exceptions fuzzaoti raises for misuse and bad input.

Library code raises these; only the CLI turns them into a one-line message and exit code 2.

    FuzzaotiError
    ├── InvalidProgram      a Program (or its JSON) breaks the schema or refers to unknown names
    ├── InvalidArgument     a strategy or API was called with arguments that cannot work
    ├── CorpusError         a corpus file is missing, is not a corpus, or is from a newer schema
    │   └── UnknownFinding  no finding with that id
    ├── UnknownName         an unknown backend, device or canary name
    ├── KnownListError      a user's known-bug list cannot be read or parsed
    ├── Unsupported         the installed torch cannot do what was asked (a canary, a config)
    ├── OverBudget          a run handed in would hold more bytes than the device's budget
    └── WorkerDied          a worker process could not even start (a broken install, a canary
                            this torch lacks): nothing can be checked here
"""

import reprlib


def one_line(text: str, limit: int) -> str:
    """``text`` with its white space folded into one line of at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def short_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` as one line of at most ``limit`` characters: an error message may quote
    what a user's file holds (a name of a megabyte, a list nested a thousand deep)."""
    short = reprlib.Repr()  # (keyword arguments only from Python 3.12)
    short.maxlevel, short.maxstring, short.maxother, short.maxlong = 3, limit, limit, limit
    return one_line(short.repr(value), limit)


class FuzzaotiError(Exception):
    """Base of every error that is the user's input rather than a fuzzaoti bug."""


class InvalidProgram(FuzzaotiError):
    """A Program or its JSON form is malformed."""


class InvalidArgument(FuzzaotiError):
    """A function was called with arguments that cannot work together."""


class CorpusError(FuzzaotiError):
    """The corpus file cannot be used as asked."""


class UnknownFinding(CorpusError):
    """No finding has the given id."""


class UnknownName(FuzzaotiError):
    """A name (backend, device, canary) is not in its registry."""


class KnownListError(FuzzaotiError):
    """A known-bug list file is missing or has a line that is not a signature pattern."""


class Unsupported(FuzzaotiError):
    """The installed torch lacks something the request needs."""


class OverBudget(FuzzaotiError):
    """A run of a program file or a stored finding is bigger than one checked run may be."""


class WorkerDied(FuzzaotiError):
    """A worker could not start (its message says why: the canary's error, how it exited)."""
