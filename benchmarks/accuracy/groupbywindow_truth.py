"""Is ``unseen32/input_groupbywindow_ngrams_tickets``'s truth the cached batch's length?

Its truth trains on one cached batch (the pipeline's first), but ``group_by_window`` pads
each batch to its own length. This times the same ``fit`` on four cached batches of
different lengths (the first, the shortest, the median and the longest of 60), then on the
pipeline, with the script's own step timer. Nothing of tfres is imported.

    .venv/bin/python benchmarks/accuracy/groupbywindow_truth.py
"""

import importlib.util
from pathlib import Path

import numpy as np
import tensorflow as tf

SCRIPT = Path(__file__).resolve().parent / "unseen32" / "input_groupbywindow_ngrams_tickets.py"


def main() -> None:
    spec = importlib.util.spec_from_file_location("tickets", SCRIPT)
    g = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(g)
    texts, labels = g.make_texts(np.random.default_rng(32))
    ds = (
        tf.data.Dataset.from_tensor_slices((texts, labels))
        .shuffle(5000, seed=2)
        .repeat()
        .map(g.featurize)
        .group_by_window(key_func=g.key_fn, reduce_func=g.reduce_fn, window_size=g.BATCH)
        .prefetch(2)
    )
    it = iter(ds)
    batches = [next(it) for _ in range(60)]
    lengths = [int(b[0].shape[1]) for b in batches]
    median = np.median(lengths)
    print(f"padded lengths of 60 batches: {min(lengths)}-{max(lengths)}, median {median}")

    def ms_per_step(data, steps):
        timer = g.StepTimer()
        g.build_model().fit(data, steps_per_epoch=steps, epochs=2, callbacks=[timer], verbose=0)
        return timer.sec_per_step() * 1000

    order = np.argsort(lengths)
    picks = (("first", 0), ("shortest", order[0]), ("median", order[30]), ("longest", order[-1]))
    for name, i in picks:
        cached = tf.data.Dataset.from_tensors(batches[i]).repeat()
        print(f"cached {name} batch (length {lengths[i]}): {ms_per_step(cached, 60):.1f} ms/step")
    print(f"the pipeline: {ms_per_step(ds, 120):.1f} ms/step")


if __name__ == "__main__":
    main()
