"""fuzzaoti's pytest plugin: a corpus, and the known bugs shipped in ``corpus/known/``, as a
regression suite (registered through the ``pytest11`` entry point: there once fuzzaoti is
installed; ``-p no:fuzzaoti`` turns it off).

    pytest --fuzzaoti-corpus c.db [--fuzzaoti-device cuda] [--fuzzaoti-record] [-n 4] [--junitxml r.xml]
    pytest --fuzzaoti-known

One item per finding (``finding-ID[title]``) and per known entry, marked with its device
(``gpu`` or ``cpu``), stage (``stage_run``...) and status (``status_new``...). An open finding is
a strict expected failure: it must still fail, so a fix shows as XPASS(strict), a failure of
the run. A fixed finding must pass: a regression fails the run. Each item checks its case alone
in a worker process apart, as ``fuzzaoti replay`` does; the items share that worker, replaced
after a case that crashed it or left it unfit for more. The rules are
``fuzzaoti.findings.regression``'s; this module is only pytest's side of them.

Without test paths on the command line, a run with these options collects only the corpus
(not the directory's own tests); with paths, both. Nothing here imports torch until an item
runs: the plugin is loaded by every pytest run wherever fuzzaoti is installed.
"""

from __future__ import annotations

import os

import pytest

_GROUP = "fuzzaoti"
_STATUS_KEY = "fuzzaoti_status"  # a report's user property: a status a run changed (or would)
_POOLS_KEY = pytest.StashKey[object]()  # the run's replay.SharedPools, made by its first item


class StillFails(Exception):
    """The expected failure of an open finding (``xfail(raises=StillFails, strict=True)``)."""


class SuiteFailure(Exception):
    """A finding or known entry that did not do what it must: a regression, a different failure."""


def pytest_addoption(parser: pytest.Parser) -> None:
    from fuzzaoti.compile.backends import CAMPAIGN_BACKENDS, DEVICES
    from fuzzaoti.compile.canaries import CANARIES

    group = parser.getgroup(_GROUP, "fuzzaoti: a corpus as a regression suite")
    group.addoption("--fuzzaoti-corpus", action="append", default=[], metavar="PATH",
                    help="collect one test per finding of this corpus (repeatable)")
    group.addoption("--fuzzaoti-known", action="store_true",
                    help="collect one test per known upstream bug shipped in fuzzaoti's corpus/known/")
    group.addoption("--fuzzaoti-device", choices=DEVICES, default=None,
                    help="only the findings and known bugs of this device (default: all; CUDA ones "
                         "skip where there is no GPU)")
    group.addoption("--fuzzaoti-inject", choices=sorted(CANARIES) + ["own"], default=None, metavar="CANARY",
                    help="replay corpus findings with this canary fault installed; 'own': each canary "
                         "finding under the canary it was found with")
    group.addoption("--fuzzaoti-record", action="store_true",
                    help="record each finding's result on this torch in the corpus and move its status "
                         "(a pass marks it fixed, a fixed one that fails is new again)")
    group.addoption("--fuzzaoti-backend", choices=CAMPAIGN_BACKENDS, default="aoti",
                    help="what compiles the cases (default aoti; fake is the test double)")
    group.addoption("--fuzzaoti-max-bytes", type=int, default=None, metavar="N",
                    help="skip an item whose runs would hold more bytes than this (default: half the "
                         "device's free memory), before anything is allocated")


def _active(config: pytest.Config) -> bool:
    return bool(config.getoption("fuzzaoti_corpus") or config.getoption("fuzzaoti_known"))


def pytest_configure(config: pytest.Config) -> None:
    from fuzzaoti.check.outcome import STAGES
    from fuzzaoti.corpus import FINDING_STATUSES

    markers = [("gpu", "needs a CUDA device"), ("cpu", "runs on the CPU"),
               ("fuzzaoti", "a fuzzaoti finding or known bug"), ("status_known_entry", "a corpus/known/ entry")]
    markers += [(f"stage_{stage}", f"a finding at the {stage} stage") for stage in STAGES]
    markers += [(f"status_{status}", f"a finding whose status is {status}") for status in FINDING_STATUSES]
    for name, text in markers:
        config.addinivalue_line("markers", f"{name}: {text}")
    if not _active(config):
        return
    from fuzzaoti.cli._base import EXIT_USAGE, error_line
    from fuzzaoti.corpus.store import check_corpus
    from fuzzaoti.errors import CorpusError

    for path in config.getoption("fuzzaoti_corpus"):
        try:
            check_corpus(path)  # every finding's program validated: a corpus may be someone else's
        except CorpusError as exc:  # one line and exit 2, as the CLI refuses it, before anything runs
            pytest.exit(error_line(f"--fuzzaoti-corpus: {exc}"), returncode=EXIT_USAGE)


def pytest_ignore_collect(collection_path, config: pytest.Config) -> bool | None:
    """With no test paths given, a fuzzaoti run collects the corpus alone."""
    if _active(config) and config.args_source != pytest.Config.ArgsSource.ARGS:
        return True
    return None


@pytest.hookimpl(tryfirst=True)  # before -k, -m and --lf filter the items
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list) -> None:
    if not _active(config):
        return
    suites = [SuiteCollector.from_parent(session, name=os.path.basename(path), nodeid=os.path.basename(path),
                                         source=os.path.abspath(path))
              for path in config.getoption("fuzzaoti_corpus")]
    if config.getoption("fuzzaoti_known"):
        suites.append(SuiteCollector.from_parent(session, name="fuzzaoti-known", nodeid="fuzzaoti-known", source=""))
    for suite in suites:  # as pytest collects a file: collect reports, item hooks, errors shown
        items.extend(session.genitems(suite))


class SuiteCollector(pytest.Collector):
    """One corpus's findings (or the known entries, ``source`` ""), as items."""

    def __init__(self, *, source: str, **kwargs):
        super().__init__(**kwargs)
        self.source = source  # the corpus's absolute path

    def collect(self):
        from fuzzaoti.findings.regression import finding_subject, known_subjects

        if self.source:
            from fuzzaoti.corpus import Corpus

            with Corpus.open(self.source) as corpus:
                subjects = [finding_subject(f) for f in corpus.findings()]
        else:
            subjects = known_subjects(_torch_version())
        device = self.config.getoption("fuzzaoti_device")
        return [SubjectItem.from_parent(self, name=s.name, subject=s) for s in subjects
                if device in (None, s.device)]


class SubjectItem(pytest.Item):
    """One finding or known entry, checked alone in a worker apart (shared with the run's other items)."""

    def __init__(self, *, subject, **kwargs):
        super().__init__(**kwargs)
        self.subject = subject
        self.add_marker("fuzzaoti")
        self.add_marker("gpu" if subject.device == "cuda" else "cpu")
        self.add_marker(f"stage_{subject.stage}")
        self.add_marker(f"status_{subject.status.replace('-', '_')}")
        if subject.expect == "fail":
            self.add_marker(pytest.mark.xfail(reason=subject.reason, raises=StillFails, strict=True))

    def runtest(self) -> None:
        from fuzzaoti.errors import OverBudget
        from fuzzaoti.findings import regression

        s, config = self.subject, self.config
        if s.expect == "unknown":
            pytest.skip(s.reason)
        if s.device == "cuda" and not _cuda_available():
            pytest.skip("needs a CUDA device (none here)")
        canary = self._canary()
        try:
            done, outcome = _check(config, s, config.getoption("fuzzaoti_backend"), canary,
                                   config.getoption("fuzzaoti_max_bytes"))
        except OverBudget as exc:  # refused before anything was allocated: this machine cannot hold it
            pytest.skip(str(exc))
        judged = regression.judge(s, outcome)
        if done is not None:
            self._note_status(judged, done)
        if judged.kind == regression.INVALID:
            pytest.skip(judged.text)
        if judged.kind == regression.AS_EXPECTED and s.expect == "fail":
            raise StillFails(judged.text)
        if judged.kind in (regression.REGRESSED, regression.FAILS_DIFFERENTLY):
            raise SuiteFailure(f"{s.name}: {judged.text}")
        # as expected (a pass), or FIXED: returning makes the strict xfail an XPASS, a failure

    def _canary(self) -> str | None:
        """The canary this finding replays under (``--fuzzaoti-inject``); known entries never have one."""
        inject, s = self.config.getoption("fuzzaoti_inject"), self.subject
        if s.finding is None or inject is None:
            return None
        return (s.canary or None) if inject == "own" else inject

    def _note_status(self, judged, done) -> None:
        """Record a finding's replay (``--fuzzaoti-record``) and keep any status change, or the
        change a recording run would make, for the summary at the end of the run. A replay under a
        canary says nothing about the installed torch, so it is never recorded."""
        from fuzzaoti.findings import regression

        f = done.finding
        if done.canary or judged.kind not in (regression.FIXED, regression.REGRESSED,
                                              regression.AS_EXPECTED):
            return
        from fuzzaoti.corpus import Corpus
        from fuzzaoti.findings.replay import settle

        if self.config.getoption("fuzzaoti_record"):
            with Corpus.open(self.parent.source) as corpus:
                change = settle(corpus, done)
            text = change.describe() if change else None
        elif judged.kind == regression.FIXED:
            text = f"finding {f.id} [{f.status}] passes on torch {done.versions['torch']}: fixed? " \
                   "(--fuzzaoti-record marks it fixed)"
        elif judged.kind == regression.REGRESSED:
            text = f"finding {f.id} [fixed] fails again on torch {done.versions['torch']}: a regression " \
                   "(--fuzzaoti-record marks it new)"
        else:
            text = None
        if text:
            self.user_properties.append((_STATUS_KEY, text))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (SuiteFailure, StillFails)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.parent.source or "fuzzaoti/corpus/known", None, self.name


def pytest_terminal_summary(terminalreporter) -> None:
    """The findings whose status this run changed (``--fuzzaoti-record``) or would change."""
    lines = [value for reports in terminalreporter.stats.values() for report in reports
             if getattr(report, "when", None) == "call"
             for key, value in getattr(report, "user_properties", ()) if key == _STATUS_KEY]
    if lines:
        terminalreporter.section("fuzzaoti: status changes")
        for line in lines:
            terminalreporter.line(line)


def _check(config: pytest.Config, subject, backend: str, canary: str | None, max_bytes: int | None):
    """``(replay, outcome)``: a finding replayed as ``fuzzaoti replay`` does it (its shrunk case,
    alone, in a worker apart); a known entry's case checked the same way, with no replay to
    record. The items of one run share their workers (``replay.SharedPools``)."""
    from fuzzaoti.findings.replay import SharedPools, check_alone, replay_finding

    pools = config.stash.setdefault(_POOLS_KEY, SharedPools())
    if subject.finding is not None:
        done = replay_finding(subject.finding, canary, backend, subject.device, max_bytes, pools)
        return done, done.outcome
    return None, check_alone(subject.case, subject.device, backend, canary, max_bytes, subject.name, pools)


def pytest_unconfigure(config: pytest.Config) -> None:
    pools = config.stash.get(_POOLS_KEY, None)
    if pools is not None:
        pools.close()


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _torch_version() -> str:
    from importlib.metadata import version

    return version("torch")
