"""Quarantine: programs that would trip a compile-failing bug already found are checked alone or set aside."""

from click.testing import CliRunner

from fuzzaoti import compat
from fuzzaoti.cli import main
from fuzzaoti.corpus import Corpus
from fuzzaoti.corpus.finding import Finding
from fuzzaoti.corpus.known_bugs import builtin_entries
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program
from fuzzaoti.corpus.quarantine import Quarantine, Trigger, features, finding_trigger, known_triggers


def _program(op_args, shape=("d",), configs=()):
    return Program(dims=(DimSpec("d", 2, 64, 8),), inputs=(InputSpec("x", "float32", shape),),
                   nodes=tuple(Node(f"t{k}", op, (f"t{k - 1}" if k else "x",), attrs)
                               for k, (op, attrs) in enumerate(op_args)),
                   outputs=(f"t{len(op_args) - 1}",), configs=configs).validate()


RELU = _program([("relu", ())])
ARANGE = _program([("arange_index", (("mult", 2**31 + 7), ("offset", 0))), ("relu", ())])
ARANGE_DERIVED = _program([("arange_index", (("mult", 2**31 + 7), ("offset", 0)))], shape=("d+1",),
                          configs=(("max_autotune", True),))


def test_features_are_ops_derived_dims_wide_literals_and_truthy_configs():
    assert features(RELU) == {"relu"}
    assert features(ARANGE) == {"arange_index", "int64-literal", "relu"}
    assert features(ARANGE_DERIVED) == {"arange_index", "int64-literal", "derived-dim", "config:max_autotune"}
    # a multiplier int32 holds (only its products overflow) is no int64 literal
    assert features(_program([("arange_index", (("mult", 1_000_000_007), ("offset", 0)))])) == {"arange_index"}


def test_a_dim_without_a_finite_max_in_export_is_an_unbounded_dim():
    def dim(max_, kind):
        return Program(dims=(DimSpec("d", 2, max_, 8, kind),), inputs=(InputSpec("x", "int8", ("d",)),),
                       nodes=(Node("t0", "abs", ("x",), ()),), outputs=("t0",)).validate()

    assert "unbounded-dim" in features(dim(None, "range"))
    assert "unbounded-dim" in features(dim(2**34, "auto"))  # its max only bounds the sizes fuzzaoti feeds
    assert "unbounded-dim" in features(dim(2**34, "dynamic"))
    assert "unbounded-dim" not in features(dim(2**33, "range"))  # the seeds' workaround


def test_a_program_is_quarantined_when_it_has_every_feature_of_a_trigger():
    q = Quarantine([Trigger(frozenset({"arange_index", "derived-dim"}), "x")], rate=0.0)
    assert q.trigger_of(ARANGE_DERIVED) is not None
    assert q.trigger_of(ARANGE) is None  # no derived dim
    assert q.trigger_of(RELU) is None


def test_sort_fills_the_batch_with_clean_programs_and_sets_the_rest_aside():
    q = Quarantine([Trigger(frozenset({"arange_index"}), "x")], rate=0.0)
    chosen, alone, set_aside = q.sort([ARANGE, RELU, ARANGE_DERIVED, RELU, RELU], size=2)
    assert chosen == [1, 3] and alone == [] and set_aside == 2
    everything = Quarantine(q.triggers, rate=1.0).sort([ARANGE, RELU, ARANGE_DERIVED], size=3)
    assert everything == ([0, 1, 2], [0, 2], 0)


def test_the_rate_keeps_about_that_share_of_quarantined_programs():
    q = Quarantine([Trigger(frozenset({"arange_index"}), "x")], rate=0.25)
    programs = [_program([("arange_index", (("mult", 2**31 + k), ("offset", 0)))]) for k in range(400)]
    kept = sum(map(q.keeps, programs))
    assert 60 <= kept <= 140
    assert [q.keeps(p) for p in programs] == [q.keeps(p) for p in programs]  # by hash: the same every time


def test_a_trigger_that_a_present_one_covers_adds_nothing():
    q = Quarantine([Trigger(frozenset({"arange_index"}), "x")])
    assert not q.add(Trigger(frozenset({"arange_index", "relu"}), "y"))
    assert q.add(Trigger(frozenset({"relu"}), "z"))
    assert not q.add(None)


def test_only_batch_failing_findings_on_the_campaigns_device_give_triggers():
    row = {"id": 3, "signature": "compile/exception/x", "status": "new", "device": "cuda", "canary": "",
           "stage": "compile", "symptom": "exception",
           "program": ARANGE.to_json(), "shrunk_program": _program([("arange_index", (("mult", 2**31), ("offset", 0)))]).to_json()}

    def trigger(device="cuda", **changes):
        return finding_trigger(Finding.from_row({**row, **changes}), device)

    assert trigger() == Trigger(frozenset({"arange_index", "int64-literal"}), "finding 3")  # the shrunk program's
    assert trigger("cpu") is None
    assert trigger(canary="bmm-batch-rotate") is None
    assert trigger(stage="compare", symptom="mismatch") is None  # fails no batch
    assert trigger(stage="export") is None  # pinned member by member
    assert trigger(stage="eager", symptom="crash") is not None
    unbounded = Program.from_dict({**ARANGE.to_dict(), "dims": [{"name": "d", "min": 2, "max": None, "hint": 8}]})
    assert "unbounded-dim" in features(unbounded)
    assert trigger(shrunk_program=unbounded.to_json()).features == {"arange_index", "int64-literal", "relu"}


def _quarantining(device, torch_version, profile="small"):
    return {t.source for t in known_triggers(builtin_entries(), device, torch_version, profile)}


def test_builtin_known_bugs_quarantine_only_where_they_say():
    on_cuda = _quarantining("cuda", "2.11.0+cu130")
    on_cpu = _quarantining("cpu", "2.11.0")
    assert "inductor-triton-int32-index-coefficient.json" in on_cuda - on_cpu
    assert "aoti-derived-dim-item-check-undeclared-symbol.json" in on_cuda & on_cpu
    # a bug that needs sizes no small program has (batch > 65535) lists no trigger
    assert "aoti-triton-bmm-batch-over-65535.json" not in on_cuda
    # a bug fixed in torch 2.13 quarantines its programs only on older torch
    assert "inductor-tiling-derived-dim-assert.json" in on_cuda
    for newer in ("2.13.0", "2.15.0+cu130", "2.14.0.dev20261201+cu130"):
        assert "inductor-tiling-derived-dim-assert.json" not in _quarantining("cuda", newer)
    # a wrong value on a GPU costs the worker; only the large profile runs an unbounded dim past 2**31
    unbounded = "aoti-unbounded-dim-int32-indexing-from-hint.json"
    assert unbounded in _quarantining("cuda", "2.11.0+cu130", "large")
    assert unbounded not in _quarantining("cuda", "2.11.0+cu130", "small")
    assert unbounded not in _quarantining("cpu", "2.11.0", "large")


def test_a_builtin_entry_with_triggers_has_one_its_own_program_meets():
    # triggers name features of the bug's programs (one entry may list sibling ops), not others
    for entry in builtin_entries():
        have = features(Program.from_dict(entry.program), dtypes=True)
        if entry.quarantine:
            assert any(t <= have for t in entry.quarantine.features), (entry.name, sorted(have))


def test_torch_release_parses_local_and_dev_versions():
    assert compat.release("2.11.0+cu130") == (2, 11)
    assert compat.release("2.15.0.dev20261201") == (2, 15)
    assert compat.release("2.13.0") == (2, 13)


def _campaign(tmp_path, rate):
    db = str(tmp_path / f"rate{rate}.db")
    result = CliRunner().invoke(main, ["fuzz", "--backend", "fake", "--max-batches", "6", "--batch-size", "8",
                                       "--shrink-minutes", "0.3", "--no-triage", "--seed", "4",
                                       "--quarantine-rate", str(rate), "--corpus", db], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    with Corpus.open(db) as corpus:
        (campaign,) = corpus.campaigns()
        (finding,) = [f for f in corpus.findings() if f.stage == "run"]
    return result.output, campaign, finding


def test_a_campaign_quarantines_the_programs_of_a_bug_it_found(tmp_path, fake_fault):
    fake_fault("cast:raise")  # every program with a cast (one in five) fails its whole compiled batch at run
    output, campaign, finding = _campaign(tmp_path, 0)
    (trigger,) = {n.op for n in finding.shrunk_case.program.nodes}  # shrunk to the cast alone: the trigger
    # (with what else the shrink had no time to drop under load: module-state, a config)
    lines = [line for line in output.splitlines() if "quarantine: programs with {" in line]
    assert lines and trigger in lines[0].split("{", 1)[1].split("}")[0].split(", "), output[-2000:]
    assert campaign.counts["quarantined"] > 0
    # with every quarantined program still checked (alone), the same bug keeps being hit
    _, unquarantined, hit_again = _campaign(tmp_path, 1)
    assert unquarantined.counts["quarantined"] == 0
    assert hit_again.hits > finding.hits


def test_programs_to_check_alone_are_named_by_their_place_in_the_batch():
    q = Quarantine([Trigger(frozenset({"arange_index"}), "x")], rate=0.5)
    variants = [_program([("arange_index", (("mult", 2**31 + k), ("offset", 0)))]) for k in range(40)]
    dropped = next(p for p in variants if not q.keeps(p))
    kept = next(p for p in variants if q.keeps(p))
    chosen, alone, set_aside = q.sort([dropped, RELU, kept], size=2)
    assert chosen == [1, 2] and set_aside == 1
    assert alone == [1]  # kept is the batch's second program (drawn third)


def test_a_known_entry_trigger_may_name_a_dtype_and_quarantines_only_programs_of_it():
    # the bf16 index_add proxy-executor bug fails whole batches on torch < 2.15: a trigger of
    # index_add alone would set aside every float32 index_add too
    from fuzzaoti.corpus.quarantine import Quarantine, Trigger
    from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values

    def index_add(dtype):
        return Program((DimSpec("d0", 2, 16, 4),),
                       (InputSpec("x0", dtype, ("d0", 3)), InputSpec("x1", "int64", (2,), Values("int", 0, "d0")),
                        InputSpec("x2", dtype, (2, 3))),
                       (Node("t0", "index_add", ("x0", "x1", "x2"), (("dim", 0),)),), ("t0",)).validate()

    q = Quarantine([Trigger(frozenset({"index_add", "dtype:bfloat16"}), "known")], 0.05)
    assert q.trigger_of(index_add("bfloat16")) is not None and q.trigger_of(index_add("float32")) is None
    assert "dtype:bfloat16" not in features(index_add("bfloat16"))  # (a finding's trigger names none)
