"""A Keras training whose memory grows every batch, for benchmarks/budget.py.

    python benchmarks/budget_workload.py --mode plain --grow-to-bytes 2e9 --report r.json

It trains a small model while holding on to a little more memory after every batch (as a
leak or an in-memory cache would), paced to ``--rate-mib-per-second``, until the process
holds ``--grow-to-bytes`` (then it ends on its own). Modes:

- ``plain``: nothing stops it (what happens without tfres);
- ``sigterm``: run under ``tfres run --memory-budget``: on SIGTERM it saves a checkpoint at
  the next batch end and exits, as a training script that handles SIGTERM does;
- ``callback``: ``tfres.callbacks.MemoryBudget(--budget-bytes, checkpoint_path=...)`` ends
  it in-process.

At exit it writes ``--report`` (JSON): its peak RSS as the kernel counts it (``ru_maxrss``),
how it ended, the checkpoint written and the error if any.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def current_rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=("plain", "sigterm", "callback"), required=True)
    p.add_argument("--grow-to-bytes", type=float, required=True)
    p.add_argument("--budget-bytes", type=int, default=None)
    p.add_argument("--rate-mib-per-second", type=float, default=150.0)
    p.add_argument("--checkpoint", default=None)
    p.add_argument("--report", required=True)
    p.add_argument("--calibrate", action="store_true", help="no growth: report the baseline")
    args = p.parse_args()

    import keras
    import numpy as np

    report: dict = {"mode": args.mode, "ended": "finished", "checkpoint": None, "error": None}
    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    x = np.random.rand(20000, 32).astype("float32")
    y = np.random.rand(20000, 1).astype("float32")
    hog: list = []
    asked_to_stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: asked_to_stop.append(signum))

    def save(path: str) -> str:
        tmp = os.path.join(os.path.dirname(path) or ".", f".tmp-{os.getpid()}.keras")
        model.save(tmp)
        os.replace(tmp, path)
        return path

    class Grow(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.t0 = time.monotonic()
            self.base = current_rss_bytes()

        def on_train_batch_end(self, batch, logs=None):
            if asked_to_stop:  # tfres run sent SIGTERM: save and stop at this batch end
                if args.checkpoint:
                    report["checkpoint"] = save(args.checkpoint)
                report["ended"] = "sigterm"
                self.model.stop_training = True
                return
            if args.calibrate:
                if batch >= 30:
                    self.model.stop_training = True
                return
            if current_rss_bytes() >= args.grow_to_bytes:
                report["ended"] = "grew to the target"
                self.model.stop_training = True
                return
            want = args.rate_mib_per_second * 2**20 * (time.monotonic() - self.t0)
            while len(hog) * 2**20 < want:
                hog.append(np.ones(2**20 // 8))  # 1 MiB, touched
            time.sleep(0.002)

    callbacks: list = [Grow()]
    if args.mode == "callback":
        import tfres

        callbacks.append(
            tfres.callbacks.MemoryBudget(args.budget_bytes, checkpoint_path=args.checkpoint)
        )
    try:
        model.fit(x, y, batch_size=32, epochs=1000, verbose=0, callbacks=callbacks)
    except Exception as err:  # BudgetExceededError in callback mode
        report["ended"] = type(err).__name__
        report["error"] = str(err)
        report["used_bytes"] = getattr(err, "used_bytes", None)
        if args.checkpoint and os.path.exists(args.checkpoint):
            report["checkpoint"] = args.checkpoint
    report["peak_rss_bytes"] = peak_rss_bytes()
    report["held_mib"] = len(hog)
    with open(args.report, "w") as fh:
        json.dump(report, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
