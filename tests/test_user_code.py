from __future__ import annotations

import subprocess
import sys

import pytest

from tfres.user_code import UserCodeError, check_reference, load_callable


def test_load_callable(tmp_path):
    script = tmp_path / "m.py"
    script.write_text("def f():\n    return 7\nX = 3\n")
    assert load_callable(f"{script}:f")() == 7
    with pytest.raises(ValueError, match="has no 'g'"):
        load_callable(f"{script}:g")
    with pytest.raises(ValueError, match="not a function"):
        load_callable(f"{script}:X")
    with pytest.raises(ValueError, match="does not exist"):
        load_callable(f"{tmp_path}/nope.py:f")
    with pytest.raises(ValueError, match="write it like"):
        load_callable("no_colon")
    assert load_callable("os.path:join") is __import__("os").path.join


def test_check_reference_needs_no_import(tmp_path):
    script = tmp_path / "never_imported.py"
    script.write_text("raise SystemExit('imported!')\n")
    check_reference(f"{script}:f")  # the form and the file are checked, nothing runs
    with pytest.raises(ValueError, match="does not exist"):
        check_reference(f"{tmp_path}/missing.py:f")


def test_a_function_importing_a_sibling_when_called_finds_it(tmp_path):
    (tmp_path / "sibling_of_script.py").write_text("VALUE = 41\n")
    (tmp_path / "script.py").write_text(
        "def build():\n    import sibling_of_script\n    return sibling_of_script.VALUE + 1\n"
    )
    assert load_callable(f"{tmp_path / 'script.py'}:build")() == 42


def test_a_syntax_error_names_the_file_and_line(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("x = 1\nprint(\n")
    for check in (check_reference, load_callable):
        with pytest.raises(UserCodeError, match=r"bad\.py, line \d: SyntaxError: .*never closed"):
            check(f"{script}:f")


def test_an_exception_at_import_names_the_line_of_the_script(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("x = 1\ny = 1 / 0\ndef f():\n    pass\n")
    check_reference(f"{script}:f")  # compiles: nothing runs
    with pytest.raises(UserCodeError, match=r"boom\.py, line 2: ZeroDivisionError"):
        load_callable(f"{script}:f")


def test_a_module_that_imports_a_missing_package_names_its_line(tmp_path, monkeypatch):
    (tmp_path / "needs_missing.py").write_text("import no_such_package_tfres\ndef f(): pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UserCodeError, match=r"needs_missing\.py, line 1: ModuleNotFoundError"):
        load_callable("needs_missing:f")
    with pytest.raises(ValueError, match="cannot import module 'no_such_module_tfres'"):
        load_callable("no_such_module_tfres:f")


@pytest.mark.parametrize("command", ["batch-size", "placement"])
def test_cli_reports_a_syntax_error_in_one_line_exit_1(tmp_path, command):
    script = tmp_path / "bad.py"
    script.write_text("def f(:\n    pass\n")
    proc = subprocess.run(
        [sys.executable, "-m", "tfres", command, f"{script}:f"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tfres: error: "), proc.stderr
    assert f"{script}, line 1: SyntaxError" in lines[0] and "internal error" not in lines[0]
