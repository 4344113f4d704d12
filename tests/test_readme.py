"""Every command in the README runs, top to bottom, as a new user would type it.

The commands share one store and one folder with the ``train.py`` and ``model.py`` the
README names, so ``tfres show 3`` shows the third run the README itself made. Only
``tfres bench --quick`` (20-60 s) is left to tests/cli/test_cli_bench.py, which runs exactly it.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

TRAIN_PY = textwrap.dedent(
    """
    import time
    import numpy as np

    def build_model():
        import keras
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        return model

    def make_data():
        rng = np.random.default_rng(0)
        x = rng.normal(size=(256, 8)).astype("float32")
        return x, rng.normal(size=(256, 1)).astype("float32")

    if __name__ == "__main__":
        data = [np.random.default_rng(1).normal(size=2**20) for _ in range(8)]  # ~64 MiB
        end = time.monotonic() + 0.6
        while time.monotonic() < end:
            sum(float(d[:1000].sum()) for d in data)
        print("trained")
    """
)

MODEL_PY = textwrap.dedent(
    """
    import numpy as np
    import tensorflow as tf

    @tf.function
    def predict(x):
        return tf.nn.relu(tf.matmul(x, x))

    def make_batch():
        return np.random.default_rng(0).standard_normal((64, 64)).astype("float32")
    """
)


def readme_commands() -> list[str]:
    """The ``tfres ...`` lines of the README's command-line block, comments dropped."""
    text = README.read_text()
    section = text.split("## The command line", 1)[1]
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    lines = [re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines()]
    return [line for line in lines if line.startswith("tfres ")]


def quick_start_commands() -> list[str]:
    block = README.read_text().split("## Quick start", 1)[1].split("```bash", 1)[1]
    block = block.split("```", 1)[0]
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def test_quick_start_is_two_commands_and_ci_runs_the_second_verbatim() -> None:
    first, second = quick_start_commands()
    assert first.endswith("tfres bench --quick")
    ci = (ROOT / ".ci" / "run").read_text()
    # a line of its own, its status kept: `COMMAND || status=$?`
    assert re.search(rf"^{re.escape(second)} \|\| status=\$\?$", ci, re.MULTILINE)
    assert ci.rstrip().endswith('exit "$status"')
    # and the first is what the bench CLI test runs
    bench_test = (ROOT / "tests" / "cli" / "test_cli_bench.py").read_text()
    assert re.search(r'"bench",\s*"--quick"', bench_test)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
@pytest.mark.timeout(900)  # a dozen TensorFlow processes in turn: a hang guard, not a speed check
def test_every_readme_command_runs(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN_PY)
    (tmp_path / "model.py").write_text(MODEL_PY)
    tfres = [sys.executable, "-m", "tfres"]
    ran = []
    for line in readme_commands():
        if line == "tfres bench --quick":
            continue  # tests/cli/test_cli_bench.py runs exactly this
        line = line.replace("--prometheus 9100", f"--prometheus {_free_port()}")
        line = line.replace(" python ", f" {shlex.quote(sys.executable)} ")
        argv, _, redirect = line.partition(">")
        args = shlex.split(argv)[1:]
        done = subprocess.run(
            [*tfres, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        # doctor exits 1 when a check fails on this machine; that is its documented contract
        allowed = (0, 1) if args[0] == "doctor" else (0,)
        assert done.returncode in allowed, f"{line}\n{done.stderr[-3000:]}"
        assert "Traceback" not in done.stderr, line
        if redirect:
            (tmp_path / redirect.strip()).write_text(done.stdout)
        ran.append(args[0])

    # what the commands promise, checked on what they left behind
    assert (tmp_path / "machine.json").stat().st_size > 0
    assert (tmp_path / "out" / "bench.html").exists()
    assert (tmp_path / "run3.html").exists()
    assert (tmp_path / "compare.html").exists()
    assert (tmp_path / "run3.csv").read_text().startswith("t_seconds")
    assert any((tmp_path / "logs" / "fit").rglob("events.out.tfevents.*"))
    assert {
        "env",
        "doctor",
        "bench",
        "run",
        "runs",
        "show",
        "report",
        "compare",
        "export",
        "batch-size",
        "placement",
    } <= set(ran)


def readme_python_block() -> str:
    """The README's Python API block, verbatim."""
    section = README.read_text().split("## The Python API", 1)[1]
    return section.split("```python", 1)[1].split("```", 1)[0]


@pytest.mark.slow
def test_the_readme_python_block_runs(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN_PY)
    (tmp_path / "model.py").write_text(MODEL_PY)
    script = readme_python_block() + textwrap.dedent(
        """
        # what the block promises, checked on what it left behind
        assert m.record.samples and m.record.phases, "monitor recorded nothing"
        assert result.max_batch_size >= 1
        assert advice is not None and choice is not None
        print("README block ran")
        """
    )
    env = {**os.environ, "TFRES_STORE": str(tmp_path / "s.sqlite"), "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "README block ran" in done.stdout
