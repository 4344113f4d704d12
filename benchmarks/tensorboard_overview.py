"""Does TensorBoard's profile overview measure Keras 3 steps in a `tfres run --profile` trace?

TensorBoard's profile plugin (the `xprof` package) builds its overview page from the trace's
step markers. Keras 3 marks its steps without the flag the overview looks for, so a trace
taken around `model.fit` by hand reports "No step time measured". `tfres run --profile A:B`
wraps each train step in a marker that has it. This script checks both with the plugin's own
converter (`xprof.convert.raw_to_tool_data.xspace_to_tool_data(..., "overview_page")`):

1. `plain.py`: a generator-fed Keras fit profiled with `tf.profiler.experimental.start/stop`
   by the script itself, no tfres;
2. `train.py`: the same fit with no profiling code, run as `tfres run --profile 10:20`.

xprof pins its own protobuf, so it lives in a virtual environment of its own:

    python3 -m venv /tmp/xprof && /tmp/xprof/bin/pip install xprof
    python benchmarks/tensorboard_overview.py --xprof-python /tmp/xprof/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_MODEL = """
import time
import numpy as np
import keras

def gen():
    rng = np.random.default_rng(0)
    while True:
        time.sleep(0.01)  # the input: 10 ms a batch
        x = rng.random((64, 32), dtype=np.float32)
        yield x, x[:, :1]

model = keras.Sequential(
    [keras.Input((32,)), keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1)]
)
model.compile("adam", "mse")
"""
TRAIN = _MODEL + "model.fit(gen(), steps_per_epoch=40, epochs=1, verbose=0)\n"
PLAIN = (
    _MODEL
    + """import tensorflow as tf
model.fit(gen(), steps_per_epoch=5, epochs=1, verbose=0)
tf.profiler.experimental.start("profile")
model.fit(gen(), steps_per_epoch=11, epochs=1, verbose=0)
tf.profiler.experimental.stop()
"""
)
#: run with the xprof interpreter: the overview page's step-time summary of one trace folder
_CONVERT = """
import glob, json, re, sys
from xprof.convert import raw_to_tool_data
paths = glob.glob(sys.argv[1] + "/plugins/profile/*/*.xplane.pb")
data, _ = raw_to_tool_data.xspace_to_tool_data(paths, "overview_page", {})
text = data.decode() if isinstance(data, bytes) else str(data)
def field(name):
    m = re.search(name + r'\\\\?"\\s*:\\s*\\\\?"([^"\\\\]*)', text)
    return m.group(1) if m else None
print(json.dumps({
    "traces": len(paths),
    "steptime_ms_average": field("steptime_ms_average"),
    "no_step_time_measured": "No step time measured" in text,
    "steps": sorted(set(re.findall(r'train \\d+', text))),
}))
"""


def overview(xprof_python: str, folder: Path) -> dict:
    try:
        out = subprocess.run(
            [xprof_python, "-c", _CONVERT, str(folder)], capture_output=True, text=True
        )
    except OSError as err:
        raise SystemExit(f"--xprof-python {xprof_python!r} cannot run: {err}") from None
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(
            f"--xprof-python {xprof_python!r} could not convert {folder} ({last}); "
            "it needs xprof: python3 -m venv /tmp/xprof && /tmp/xprof/bin/pip install xprof"
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--xprof-python", required=True, help="a Python that can import xprof")
    args = parser.parse_args()
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    with tempfile.TemporaryDirectory(prefix="tfres-tb-") as tmp:
        work = Path(tmp)
        (work / "train.py").write_text(TRAIN)
        (work / "plain.py").write_text(PLAIN)
        subprocess.run([sys.executable, "plain.py"], cwd=work, env=env, check=True)
        subprocess.run(
            [sys.executable, "-m", "tfres", "run", "--no-store", "--profile", "10:20",
             "--profile-dir", "tfres-profile", "--out", "record.json", "--",
             sys.executable, "train.py"],
            cwd=work, env=env, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        rows = {
            "Keras fit profiled by hand (no tfres)": overview(args.xprof_python, work / "profile"),
            "tfres run --profile 10:20": overview(args.xprof_python, work / "tfres-profile"),
        }
        record = json.loads((work / "record.json").read_text())
    print("| trace | step time average (overview page) | 'No step time measured' | steps |")
    print("|---|---|---|---|")
    for name, r in rows.items():
        steps = ", ".join(r["steps"][:3]) + (" ..." if len(r["steps"]) > 3 else "")
        measured = r["no_step_time_measured"]
        print(f"| {name} | {r['steptime_ms_average']} ms | {measured} | {steps} |")
    summary = (record.get("extra", {}).get("profile") or {}).get("summary") or {}
    if summary.get("steps"):
        mean_ms = 1000 * summary["duration_seconds"] / summary["steps"]
        share = summary["input_seconds"] / summary["duration_seconds"]
        print(
            f"\ntfres's own reading of the same trace: {summary['steps']} steps, "
            f"{mean_ms:.1f} ms a step on average, input {100 * share:.0f}% of it"
        )
    tfres_row = rows["tfres run --profile 10:20"]
    ok = not tfres_row["no_step_time_measured"] and float(tfres_row["steptime_ms_average"] or 0) > 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
