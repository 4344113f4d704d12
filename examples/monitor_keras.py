"""Record CPU and memory while a Keras model trains, then print what tfres found.

    python examples/monitor_keras.py
    tfres report 1          # the saved record, with its findings
"""

from __future__ import annotations

import numpy as np

import tfres


def main() -> None:
    import keras

    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 100)).astype("float32")
    y = rng.normal(size=(2000, 1)).astype("float32")

    with tfres.monitor(label="example: monitor_keras") as m:
        model = keras.Sequential(
            [keras.Input((100,)), keras.layers.Dense(64), keras.layers.Dense(1)]
        )
        model.compile(optimizer="adam", loss="mse")
        # one phase per epoch, one step entry per batch, attached to the monitor above
        model.fit(x, y, epochs=2, batch_size=64, verbose=0,
                  callbacks=[tfres.callbacks.ResourceMonitor(monitor=m)])
        m.mark("training done")

    record = m.record
    peak_rss = max(s.process_rss_bytes or 0 for s in record.samples)
    print(f"{len(record.samples)} samples, {len(record.steps)} steps, "
          f"peak RSS {peak_rss / 2**20:.0f} MiB, status {record.status}")
    for finding in tfres.diagnose(record):
        print(f"[{finding.severity}] {finding.title}")


if __name__ == "__main__":
    main()
