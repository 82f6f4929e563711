"""The package's layout rules (scripts/check_layout.py): no import circle between fuzzaoti's
modules, lazy imports included, and no module over 400 lines or function over 60."""

import importlib.util
import os


def _checker():
    path = os.path.join(os.path.dirname(__file__), "..", "scripts", "check_layout.py")
    spec = importlib.util.spec_from_file_location("check_layout", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_import_circle_and_no_module_or_function_too_long():
    assert _checker().breaches(lazy=True) == []


def test_the_checker_sees_a_circle():
    # how the test above would fail: a two-module circle is reported as one
    assert _checker().cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_the_packages_re_export_by_plain_imports_every_name_they_list():
    # editors and type checkers follow a static import, not a module-level __getattr__
    import importlib

    for name in ("fuzzaoti.strategies", "fuzzaoti.corpus"):
        module = importlib.import_module(name)
        assert not hasattr(module, "__getattr__"), name
        assert module.__all__ and all(hasattr(module, attr) for attr in module.__all__), name
