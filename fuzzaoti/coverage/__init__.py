"""Compiler coverage: which lines of ``torch/_inductor`` a campaign's compiles ran (``record``,
in the worker that compiles and in the campaign that stores them) and what they add up to
(``report``: per file, over the campaign's time, one campaign against another)."""
