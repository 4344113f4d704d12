from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# device names, placements and one-line errors: no time or CPU share is asserted
pytestmark = pytest.mark.parallel

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import tensorflow as tf

    @tf.function
    def predict(x):
        return tf.nn.relu(tf.matmul(x, x)) + 1.0

    def make_batch():
        return np.random.default_rng(0).standard_normal((64, 64)).astype("float32")
    """
)


def tfres(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfres", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


@pytest.fixture
def model_py(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(SCRIPT)
    return path


def test_json_on_two_logical_cpus(model_py):
    proc = tfres(
        "placement",
        f"{model_py}:predict",
        "--args",
        f"{model_py}:make_batch",
        "--logical-cpus",
        "2",
        "--repeats",
        "3",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    advice = json.loads(proc.stdout)
    assert [t["device"] for t in advice["timings"]] == ["CPU:0", "CPU:1"]
    assert advice["best_device"] in ("CPU:0", "CPU:1")
    assert all(t["repeats"] == 3 for t in advice["timings"])
    ops = {(o["op_type"], o["device"]) for p in advice["placements"] for o in p["ops"]}
    assert ("MatMul", "CPU:1") in ops and ("MatMul", "CPU:0") in ops


def test_tables_fit_100_columns(model_py):
    proc = tfres(
        "placement",
        "model.py:predict",
        "--args",
        "model.py:make_batch",
        "--devices",
        "CPU:0",
        "--repeats",
        "2",
        cwd=model_py.parent,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "transfer in" in out and "compute" in out and "transfer out" in out
    assert "only CPU:0 was timed" in out
    assert "where TensorFlow placed the ops" in out and "MatMul" in out
    assert max(len(line) for line in out.splitlines()) <= 100


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["missing.py:f"], 2, "does not exist"),
        (["{model}:predict", "--repeats", "0"], 2, "expected a number > 0"),
    ],
)
def test_bad_input_is_one_line(model_py, args, code, message):
    proc = tfres("placement", *[a.format(model=model_py) for a in args])
    assert proc.returncode == code, proc.stderr
    lines = [
        ln for ln in proc.stderr.splitlines() if ln.startswith(("tfres", "usage")) or "error" in ln
    ]
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert any(message in ln for ln in lines)
