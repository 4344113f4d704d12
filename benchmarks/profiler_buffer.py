"""What TensorFlow's profiler holds in memory over a window of Keras steps, and what stopping
it costs: why the default window also ends on the profiler's buffer (session 42).

For each kind of fit, in a fresh interpreter: 30 train steps, the profiler on over steps
5 to 5+N (``tf.profiler.experimental.start/stop``, as tfres's window), and at each step's
start the process's resident memory (``/proc/self/statm``, read by the window's own
``_tfres_window.rss_bytes``). It reports the memory's growth over the window (read just
before the stop) and a traced step (the mean, and the range between the steps' starts), the
seconds ``stop()`` took (collecting and writing the trace, inside the step after the
window), the window's median step over the median unprofiled step after it, and the stop's
seconds over what the traced steps ran above the unprofiled median (``stop_per_traced``).
Linux only (``/proc``).

    .venv/bin/python benchmarks/profiler_buffer.py      # lstm, mlp, generator, tfrecords
    .venv/bin/python benchmarks/profiler_buffer.py --kinds lstm --traced 4 --rounds 3

- ``lstm``: the stacked Keras LSTM of ``accuracy/unseen30/compute_lstm_energy.py`` (two
  LSTM(192) over 96 steps, an in-memory tf.data pipeline): a step of many small ops;
- ``mlp``: three Dense layers over an in-memory pipeline, a step of a few ops;
- ``generator``: the same MLP fed by ``from_generator`` (10 ms of Python a batch);
- ``tfrecords``: an MLP over 600 tiny TFRecord files (1-3 records each), interleaved, each
  record parsed by a serial ``map`` of string ops (split, bigrams, hashing, a bag of words):
  the kind of fit whose default window cost above 2% (sets 95 and 100).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = ("lstm", "mlp", "generator", "tfrecords")
FIRST, STEPS = 5, 30


def _child(kind: str, traced: int) -> dict:
    """One fit of ``kind`` with the profiler over ``traced`` steps; its readings."""
    import time

    import keras
    import numpy as np
    import tensorflow as tf

    # the reader the window's buffer rule uses, loaded as the child loads it
    sys.path.insert(0, str(HERE.parent / "src" / "tfres" / "devices" / "inject"))
    from _tfres_window import rss_bytes as rss

    if kind == "lstm":
        sys.path.insert(0, str(HERE / "accuracy" / "unseen30"))
        import compute_lstm_energy as energy

        x, y = energy.make_data(np.random.default_rng(0))
        data, model = energy.make_dataset(x, y), energy.build_model()
    elif kind == "tfrecords":
        data, model = _tfrecords_fit(tf, keras, np)
    else:
        rng = np.random.default_rng(0)
        if kind == "mlp":
            x = rng.normal(size=(64 * 200, 32)).astype("float32")
            data = tf.data.Dataset.from_tensor_slices((x, x[:, :1])).batch(64).repeat()
        else:

            def batches():
                while True:
                    end = time.perf_counter() + 0.01
                    while time.perf_counter() < end:  # the batch's Python
                        pass
                    x = rng.normal(size=(64, 32)).astype("float32")
                    yield x, x[:, :1]

            spec = (tf.TensorSpec((64, 32), tf.float32), tf.TensorSpec((64, 1), tf.float32))
            data = tf.data.Dataset.from_generator(batches, output_signature=spec)
        model = keras.Sequential(
            [keras.Input((32,)), keras.layers.Dense(256, activation="relu")]
            + [keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1)]
        )
        model.compile("adam", "mse")

    logdir = tempfile.mkdtemp(prefix="profiler_buffer_")
    resident, times, stop_seconds, held = [], [], [], []

    class Window(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            if batch == FIRST + traced:
                held.append(rss() - resident[FIRST])
                start = time.perf_counter()
                tf.profiler.experimental.stop()
                stop_seconds.append(time.perf_counter() - start)
            resident.append(rss())  # after a stop: the buffer is let go at the stop
            if batch == FIRST:
                tf.profiler.experimental.start(logdir)
            self.began = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            times.append(time.perf_counter() - self.began)

    model.fit(data, epochs=1, steps_per_epoch=STEPS, callbacks=[Window()], verbose=0)
    inside = resident[FIRST : FIRST + traced]
    grown = [b - a for a, b in zip(inside, inside[1:], strict=False)]
    window = times[FIRST : FIRST + traced]
    after = times[FIRST + traced + 1 :]
    unprofiled = statistics.median(after)
    above = sum(t - unprofiled for t in window)
    return {
        "kind": kind,
        "traced": traced,
        "mb_per_traced_step": held[0] / traced / 1e6,
        "mb_per_step_range": [min(grown, default=0) / 1e6, max(grown, default=0) / 1e6],
        "buffer_mb": held[0] / 1e6,
        "stop_seconds": stop_seconds[0],
        "window_over_unprofiled": statistics.median(window) / unprofiled,
        "unprofiled_step_ms": unprofiled * 1000,
        "traced_above_seconds": above,
        "stop_per_traced": stop_seconds[0] / above if above > 0 else None,
    }


def _tfrecords_fit(tf, keras, np):
    """A pipeline over 600 tiny TFRecord files with a serial string parse, and its MLP."""
    folder = tempfile.mkdtemp(prefix="profiler_buffer_records_")
    atexit.register(shutil.rmtree, folder, True)
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    for shard in range(600):
        with tf.io.TFRecordWriter(os.path.join(folder, f"{shard:04d}.tfrecord")) as out:
            for _ in range(rng.integers(1, 4)):
                note = " ".join(rng.choice(words, rng.integers(8, 30)))
                feature = {
                    "note": tf.train.Feature(bytes_list=tf.train.BytesList(value=[note.encode()])),
                    "vitals": tf.train.Feature(
                        float_list=tf.train.FloatList(value=rng.normal(size=8))
                    ),
                    "label": tf.train.Feature(float_list=tf.train.FloatList(value=[rng.random()])),
                }
                example = tf.train.Example(features=tf.train.Features(feature=feature))
                out.write(example.SerializeToString())
    spec = {
        "note": tf.io.FixedLenFeature([], tf.string),
        "vitals": tf.io.FixedLenFeature([8], tf.float32),
        "label": tf.io.FixedLenFeature([1], tf.float32),
    }

    def parse(record):
        ex = tf.io.parse_single_example(record, spec)
        tokens = tf.strings.split(tf.strings.lower(ex["note"]))
        pairs = tf.strings.ngrams(tokens, 2, separator="_")
        ids = tf.concat([tf.strings.to_hash_bucket_fast(t, 92) for t in (tokens, pairs)], 0)
        bag = tf.math.bincount(tf.cast(ids, tf.int32), minlength=92, maxlength=92)
        return tf.concat([ex["vitals"], tf.cast(bag, tf.float32)], 0), ex["label"]

    files = tf.data.Dataset.list_files(os.path.join(folder, "*.tfrecord"), seed=1)
    records = files.interleave(tf.data.TFRecordDataset, cycle_length=4)
    data = records.map(parse).repeat().batch(64).prefetch(1)
    model = keras.Sequential(
        [keras.Input((100,)), keras.layers.Dense(768, activation="relu")]
        + [keras.layers.Dense(768, activation="relu"), keras.layers.Dense(1)]
    )
    model.compile("adam", "mse")
    return data, model


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated: %(default)s")
    parser.add_argument("--traced", type=int, default=10, help="steps traced (default 10)")
    parser.add_argument("--rounds", type=int, default=1, help="fresh runs of each kind")
    parser.add_argument("--json", type=Path, help="write the readings here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.traced)))
        return 0
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not 1 <= args.traced <= STEPS - FIRST - 3:
        print(f"profiler_buffer.py: kinds are {', '.join(KINDS)}; --traced 1-22", file=sys.stderr)
        return 2
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    rows = []
    for _ in range(args.rounds):
        for kind in kinds:  # in turns, each in a fresh interpreter
            cmd = [sys.executable, __file__, "--child", kind, "--traced", str(args.traced)]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if out.returncode != 0:
                last = (out.stderr.strip().splitlines() or ["no output"])[-1]
                print(f"profiler_buffer.py: the {kind} fit failed: {last}", file=sys.stderr)
                return 1
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = rows[-1]
            print(
                f"{kind:10} {r['traced']} traced: {r['mb_per_traced_step']:7.2f} MB a step "
                f"({r['mb_per_step_range'][0]:.1f}-{r['mb_per_step_range'][1]:.1f}), "
                f"{r['buffer_mb']:7.1f} MB in all, stop {r['stop_seconds']:.3f} s, "
                f"window/unprofiled {r['window_over_unprofiled']:.2f} "
                f"(unprofiled step {r['unprofiled_step_ms']:.1f} ms), "
                f"stop per traced second above {r['stop_per_traced'] or float('nan'):.2f}",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
