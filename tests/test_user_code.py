from __future__ import annotations

import pytest

from tfres.user_code import check_reference, load_callable


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
