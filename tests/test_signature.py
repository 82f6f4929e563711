from fuzzaoti.check.outcome import Outcome
from fuzzaoti.check.signature import same_bug, signature


def test_volatile_parts_do_not_split_one_bug():
    a = Outcome("compile", "exception", "AssertionError: s0 < u12 for buf3 in /tmp/a/b.py line 33 at 0xdeadbeef")
    b = Outcome("compile", "exception", "AssertionError: s7 < u2 for buf11 in /home/x.py line 9 at 0x1234")
    assert signature(a) == signature(b)


def test_different_bugs_differ():
    assert signature(Outcome("run", "exception", "RuntimeError: index out of range")) != signature(
        Outcome("run", "exception", "RuntimeError: CUDA error: misaligned address"))
    assert signature(Outcome("run", "crash", "worker died")) != signature(Outcome("load", "crash", "worker died"))


def test_mismatch_signature_says_how_and_which_core_ops(bmm_index_program):
    o = Outcome("compare", "mismatch", "3 of 10 wrong", verdict={"output": 0, "reason": "values"})
    assert signature(o) == "compare/mismatch/values"
    assert signature(o, bmm_index_program) == "compare/mismatch/values via bmm+index_select"


def test_shrinking_may_drop_core_ops_of_a_wrong_result():
    assert same_bug("compare/mismatch/values via bmm", "compare/mismatch/values via bmm+index_select")
    assert not same_bug("compare/mismatch/nonfinite via bmm", "compare/mismatch/values via bmm")


def test_crash_uses_the_telling_stderr_line():
    o = Outcome("run", "crash", "worker died with signal SIGSEGV",
                stderr="loading...\nSegmentation fault (core dumped) at 0x7f00\n")
    assert signature(o) == "run/crash/Segmentation fault (core dumped) at ADDR"


def test_an_uncaught_cpp_exception_is_named_by_its_message_not_its_frames():
    # an exception thrown in an OpenMP region ends the process; the frames under it name only the
    # exception's constructor, the same for every such bug (an index_fill bound and a scatter's)
    def aborted(what):
        return Outcome("run", "crash", "worker died with signal SIGABRT", stderr=(
            "terminate called after throwing an instance of 'c10::Error'\n"
            f"  what():  {what}\nException raised from cpp_fused_index_fill_0 at /tmp/k.cpp:48\n"
            "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x9d (0x7f19 in /x/libc10.so)\n"))

    assert signature(aborted("index out of bounds: 0 <= tmp7 < 74L")) == signature(
        aborted("index out of bounds: 0 <= tmp3 < 9L")) == "run/crash/uncaught C++ exception: index out of bounds: N <= tmpN < N"
    assert signature(aborted("index out of bounds: 0 <= tmp7 < 74L")) != signature(aborted("negative dimension -1"))


def test_a_frame_refines_a_target_stored_without_one():
    bare = "compile/exception/InductorError: AssertionError:"
    framed = bare + " @ tiling_utils.py:get_pw_red_splits"
    assert same_bug(framed, bare)
    assert same_bug(framed, framed)
    assert not same_bug(bare + " @ scheduler.py:fuse", framed)
    assert not same_bug("compile/exception/InductorError: KeyError:", bare)


def test_a_cpp_compile_error_is_named_by_the_compiler_message():
    message = ("InductorError: CppCompileError: C++ compile error\n\nCommand:\ng++ /tmp/x/c.cpp\n\nOutput:\n"
               "/tmp/torchinductor_root/ab/c.wrapper.cpp:841:22: error: ‘s24’ was not declared in this scope\n")
    sig = signature(Outcome("compile", "exception", message))
    assert sig == "compile/exception/InductorError: CppCompileError: C++ compile error: 'SYM' was not declared in this scope"
    other = message.replace("s24", "s77").replace("841:22", "12:3")
    assert signature(Outcome("compile", "exception", other)) == sig
    # g++ 12 in a C locale on one machine, g++ 13 in a UTF-8 one guessing a name on another
    c_locale = message.replace("‘", "'").replace("’", "'")
    guessing = message.replace("this scope\n", "this scope; did you mean ‘s23’?\n")
    assert signature(Outcome("compile", "exception", c_locale)) == signature(
        Outcome("compile", "exception", guessing)) == sig


def test_a_kernel_that_did_not_compile_is_named_by_its_error_wherever_it_was_compiled():
    kernel = ("def triton_poi_fused_arange_index_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n"
              "    tmp0 = tl.load(in_ptr0 + (((2147483655*x0) % 2)), xmask)\n                                ^\n"
              "ValueError('Scalar 2147483655 is out of range for type int32')\n")
    in_a_worker = ("InductorError: RuntimeError: Failed to run autotuning code block: An exception occurred in a "
                   "subprocess:\n\nName=triton_poi_fused_arange_index_0\nTraceback (most recent call last):\n"
                   "  File \"/x/compile_tasks.py\", line 68, in _worker_compile_triton\n"
                   "triton.compiler.errors.CompilationError: at 7:32:\n" + kernel)
    in_process = "InductorError: RuntimeError: Failed to run autotuning code block: at 6:24:\n" + kernel
    expected = ("compile/exception/InductorError: RuntimeError: Failed to run autotuning code block: "
                "ValueError('Scalar N is out of range for type int32')")
    assert signature(Outcome("compile", "exception", in_a_worker)) == expected
    assert signature(Outcome("compile", "exception", in_process)) == expected
    other = in_process.replace("ValueError('Scalar 2147483655 is out of range for type int32')",
                               "IndexError('list index out of range')")
    assert signature(Outcome("compile", "exception", other)) != expected


def test_an_illegal_memory_access_while_running_names_the_programs_core_ops(bmm_index_program):
    fault = Outcome("run", "illegal_memory_access", "AcceleratorError: CUDA error: an illegal memory access")
    assert signature(fault) == "run/illegal_memory_access/AcceleratorError: CUDA error: an illegal memory access"
    assert signature(fault, bmm_index_program).endswith("an illegal memory access via bmm+index_select")
    assert same_bug(signature(fault, bmm_index_program), signature(fault))  # shrinking may drop ops
    at_compile = Outcome("compile", "illegal_memory_access", "InductorError: AcceleratorError: CUDA error: x")
    assert " via " not in signature(at_compile, bmm_index_program)  # (autotuning: the known entry's text)


def test_a_printed_set_of_names_signs_the_same_in_any_order():
    # Inductor prints a set (placeholders={...}) in the order of the process's hash seed: one
    # bug was three findings, 'FAILS differently' from itself on the triage ladder
    from fuzzaoti.check.signature import normalize

    first = normalize("AssertionError: n=copy_, n.args[0]=permute, placeholders={arg1_1, arg0_1}, graph=graph():")
    assert first == normalize("AssertionError: n=copy_, n.args[0]=permute, placeholders={arg0_1, arg1_1}, graph=graph():")


def test_an_exception_thrown_in_several_threads_at_once_has_one_signature_however_its_lines_interleave():
    # one OpenMP bounds check gave these three texts in six crashes of the same program
    def aborted(stderr):
        return signature(Outcome("run", "crash", "worker died with signal SIGABRT", stderr="W1207 warning\n" + stderr))

    lost = {aborted("terminate called after throwing an instance of 'c10::Error'\nterminate called recursively\n"),
            aborted("terminate called recursively\n"),
            aborted("terminate called after throwing an instance of 'terminate called recursively\n")}
    assert lost == {"run/crash/uncaught C++ exception in several threads (terminate called recursively: no message)"}
    interleaved = aborted("terminate called after throwing an instance of 'terminate called recursively\n"
                          "c10::Error'\n  what():  index out of bounds: 0 <= tmp7 < 74L\n")
    assert interleaved == "run/crash/uncaught C++ exception: index out of bounds: N <= tmpN < N"


def test_a_crash_that_lost_its_message_is_the_same_bug_as_one_that_printed_it_for_the_shrinker():
    lost = "run/crash/uncaught C++ exception in several threads (terminate called recursively: no message)"
    printed = "run/crash/uncaught C++ exception: index out of bounds: N <= tmpN < ksN"
    assert same_bug(lost, printed) and same_bug(printed, lost) and same_bug(lost, lost)
    assert not same_bug("run/crash/Segmentation fault (core dumped)", lost)
    assert not same_bug("compile/crash/uncaught C++ exception: x", lost)
