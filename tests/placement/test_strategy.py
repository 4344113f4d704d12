from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tfres.placement.strategy import read_tf_config

GOOD = {
    "cluster": {"worker": ["127.0.0.1:1234", "127.0.0.1:1235"]},
    "task": {"type": "worker", "index": 1},
}


def test_read_tf_config_accepts_a_good_one_and_ignores_unset(monkeypatch):
    assert read_tf_config(json.dumps(GOOD)) == GOOD
    monkeypatch.delenv("TF_CONFIG", raising=False)
    assert read_tf_config() is None
    assert read_tf_config("  ") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"cluster": ', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"task": {"type": "worker", "index": 0}}', 'no "cluster"'),
        (
            '{"cluster": {"worker": ["nohostport"]}, "task": {"type": "worker", "index": 0}}',
            "host:port",
        ),
        ('{"cluster": {"worker": ["a:1"]}}', 'no "task"'),
        (
            '{"cluster": {"worker": ["a:1"]}, "task": {"type": "chief", "index": 0}}',
            "not in its cluster",
        ),
        (
            '{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 1}}',
            "out of range",
        ),
    ],
)
def test_bad_tf_config_is_one_clear_line(text, message):
    with pytest.raises(ValueError, match=message) as info:
        read_tf_config(text)
    assert "\n" not in str(info.value)


# One fresh process with two logical CPUs (set before the runtime starts) checks each choice
# and trains one real step under the mirrored one.
CHECKS = textwrap.dedent(
    """
    import json, os
    import tfres
    from tfres.backends.tf_placement import ensure_logical_cpus
    ensure_logical_cpus(2)
    import tensorflow as tf

    out = {}
    for key, devices in (("auto", None), ("one", ["CPU:1"]), ("mirrored", "CPU:0,CPU:1")):
        out[key] = tfres.strategy(devices=devices).to_dict()
    choice = tfres.strategy(devices=["CPU:0", "CPU:1"])
    s = choice.strategy
    with s.scope():
        w = tf.Variable(tf.ones((4, 1)))

    @tf.function
    def step(x):
        def replica(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(x @ w)
            g = tape.gradient(loss, w)
            return g, tf.distribute.get_replica_context().all_reduce("sum", g)
        return s.run(replica, args=(x,))

    dist = s.experimental_distribute_dataset(tf.data.Dataset.from_tensors(tf.ones((8, 4))))
    batch = next(iter(dist))
    local, summed = step(batch)
    out["replica_devices"] = [v.device[-5:] for v in s.experimental_local_results(batch)]
    out["variable_devices"] = [v.device[-5:] for v in w.values]
    out["local_sum"] = float(tf.reduce_sum(s.experimental_local_results(local)[0]))
    out["grad_sum"] = float(tf.reduce_sum(s.experimental_local_results(summed)[1]))
    for key, kwargs in (("missing", {"devices": ["CPU:5"]}), ("gpu", {"devices": ["GPU:0"]})):
        try:
            tfres.strategy(**kwargs)
        except Exception as err:
            out[key] = [type(err).__name__, str(err)]
    os.environ["TF_CONFIG"] = json.dumps(
        {"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker", "index": 0}})
    for key, kwargs in (("too_late", {}), ("with_devices", {"devices": ["CPU:0"]})):
        try:
            tfres.strategy(**kwargs)
        except Exception as err:
            out[key] = [type(err).__name__, str(err)]
    print("RESULT " + json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def checks(tmp_path_factory):
    script = tmp_path_factory.mktemp("strategy") / "checks.py"
    script.write_text(CHECKS)
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=180, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def test_default_strategy_when_nothing_is_asked_on_a_cpu_machine(checks):
    auto = checks["auto"]
    assert auto["kind"] == "default"
    assert auto["num_replicas"] == 1
    assert "no GPU visible" in auto["reason"]
    assert "2 logical CPUs share the same cores" in auto["reason"]


def test_one_device_and_mirrored_over_logical_cpus(checks):
    assert checks["one"]["kind"] == "one_device"
    assert checks["one"]["strategy"] == "OneDeviceStrategy"
    assert checks["one"]["devices"] == ["CPU:1"]
    mirrored = checks["mirrored"]
    assert mirrored["kind"] == "mirrored"
    assert mirrored["strategy"] == "MirroredStrategy"
    assert mirrored["devices"] == ["CPU:0", "CPU:1"]
    assert mirrored["num_replicas"] == 2
    assert "MirroredStrategy" in mirrored["reason"]
    # a real step ran on both replicas and the all-reduce summed their gradients: each
    # replica gets 4 of the 8 rows of ones, so d(sum(x @ w))/dw is 4 per weight (4 weights)
    assert checks["replica_devices"] == ["CPU:0", "CPU:1"]
    assert checks["variable_devices"] == ["CPU:0", "CPU:1"]
    assert checks["local_sum"] == pytest.approx(4 * 4)
    assert checks["grad_sum"] == pytest.approx(4 * 4 * 2)


def test_unknown_devices_and_tf_config_errors(checks):
    assert checks["missing"][0] == "ValueError" and "CPU:5" in checks["missing"][1]
    assert checks["gpu"][0] == "NoGpuError"
    # MultiWorkerMirroredStrategy is impossible once the runtime started: say so, with the fix
    assert checks["too_late"][0] == "TooLateError"
    assert "first thing" in checks["too_late"][1]
    assert checks["with_devices"][0] == "ValueError"
    assert "TF_CONFIG" in checks["with_devices"][1]
