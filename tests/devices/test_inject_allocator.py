"""TensorFlow's allocator read from inside a ``tfres run`` command by the start-up hook
(``_tfres_allocator``), with real TensorFlow on the CPU.

TensorFlow keeps CPU allocator statistics only with its oneDNN kernels on: each test runs
the child with ``TF_ENABLE_ONEDNN_OPTS`` set both ways (or set, for --no-instrument), so both
paths are checked on any CPU, whatever the test process has: no second pass is needed.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from tfres.devices.child_env import INJECT_DIR
from tfres.record import Record, load
from tfres.watch.allocator import NO_INSTRUMENT_NOTE

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = [pytest.mark.slow, pytest.mark.parallel]

# a tiny Keras model with a 4 MiB kernel (1024 x 1024 float32), trained for two epochs
TINY_KERAS = """
import numpy as np
import keras

model = keras.Sequential([keras.Input((1024,)), keras.layers.Dense(1024), keras.layers.Dense(1)])
model.compile("sgd", "mse")
x, y = np.ones((256, 1024), "float32"), np.ones((256, 1), "float32")
model.fit(x, y, epochs=2, batch_size=64, verbose=0)
"""


def _tfres_run(tmp_path: Path, python: str, onednn: str, *options: str) -> Record:
    pytest.importorskip("tensorflow")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(TINY_KERAS))
    out = tmp_path / "run.json"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS=onednn)
    env.pop("TFRES_STEPS_FILE", None)
    proc = subprocess.run(
        [python, "-m", "tfres", "run", "--no-store", "--out", str(out), *options, "--",
         python, str(script)],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return load(out)


@pytest.mark.parametrize("onednn", ["1", "0"])
def test_tfres_run_records_the_cpu_allocator_of_a_keras_script(
    tmp_path: Path, python: str, onednn: str
) -> None:
    record = _tfres_run(tmp_path, python, onednn)
    with_tf = [s for s in record.samples if s.tf_memory]
    unavailable = [n for n in record.notes if "no allocator statistics for CPU:0" in n]
    assert record.status == "ok" and record.exit_code == 0
    if onednn == "1":
        assert with_tf, f"no CPU:0 allocator readings; notes: {record.notes}"
        cpu = with_tf[-1].tf_memory["CPU:0"]
        assert cpu["peak_bytes"] >= 4 * 2**20  # the Dense kernel at least
        assert 0 < cpu["current_bytes"] <= cpu["peak_bytes"]
        assert not unavailable
        # readings start once the runtime is up, not at the command's start
        assert not record.samples[0].tf_memory
    else:
        assert not with_tf
        assert unavailable == [
            "TensorFlow keeps no allocator statistics for CPU:0 on this build/CPU (they need "
            "oneDNN, which is off (TF_ENABLE_ONEDNN_OPTS=0)): not available in this record"
        ]
        assert not any("failed" in n for n in record.notes)


def test_no_instrument_takes_no_readings_and_says_so(tmp_path: Path, python: str) -> None:
    record = _tfres_run(tmp_path, python, "1", "--no-instrument")
    assert not any(s.tf_memory for s in record.samples)
    assert NO_INSTRUMENT_NOTE in record.notes
    assert record.steps == [] and record.phases == []  # the child was left alone


# The child-side reader on its own, in a fresh interpreter: it reads nothing and starts
# nothing before the program starts the runtime, writes a reading only when it changed,
# and once more at exit.
READER = """
import json, sys
sys.path.insert(0, sys.argv[1])
import _tfres_allocator as A

class Events:  # what _tfres_instrument.Instrument gives the reader: a writer and notes
    def __init__(self):
        self.lines, self.notes = [], []
    def write(self, obj):
        self.lines.append(obj)
    @property
    def events(self):
        return self
    def note(self, text):
        self.notes.append(text)

import tensorflow as tf
out = Events()
reader = A.AllocatorReader(out)
reader.poll()
before = (len(out.lines), A.runtime_started())
tf.config.threading.set_intra_op_parallelism_threads(1)  # raises once the runtime is up
big = tf.ones((1024, 1024))  # the program starts the runtime: 4 MiB on CPU:0
reader.poll()
reader.poll()  # nothing changed: nothing written
after = len(out.lines)
reader.poll(final=True)
print(json.dumps({"before": before, "after": after, "lines": out.lines, "notes": out.notes}))
"""


@pytest.mark.parametrize("onednn", ["1", "0"])
def test_the_reader_never_starts_the_runtime(python: str, onednn: str) -> None:
    pytest.importorskip("tensorflow")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS=onednn)
    proc = subprocess.run(
        [python, "-c", READER, str(INJECT_DIR)], capture_output=True, text=True, timeout=300,
        env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["before"] == [0, False]  # polled before the runtime: no reading, none started
    if onednn == "1":
        assert out["after"] == 1 and len(out["lines"]) == 2  # one change, then the final
        line = out["lines"][0]
        assert line["event"] == "allocator" and line["pid"] > 0
        assert line["devices"]["CPU:0"]["current_bytes"] >= 4 * 2**20
        assert not out["notes"]
    else:
        assert out["lines"] == []  # CPU:0 has no statistics, and there is no GPU
        assert len(out["notes"]) == 1 and "oneDNN, which is off" in out["notes"][0]
