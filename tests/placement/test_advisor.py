from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tfres.placement.advisor import (
    CLEAR_RATIO,
    DeviceTiming,
    PlacementAdvice,
    _resolve_devices,
    _verdict,
    advise_placement,
    summarize_placement,
)

# One fresh process splits the CPU into two logical devices (only possible before the
# TensorFlow runtime starts), asks for advice and times the same functions directly.
CHECKS = textwrap.dedent(
    """
    import json, statistics, time
    import numpy as np
    import tfres
    from tfres.backends.tf_placement import ensure_logical_cpus
    ensure_logical_cpus(2)
    import tensorflow as tf

    x = np.random.default_rng(0).standard_normal((96, 96)).astype("float32")

    @tf.function
    def model(x):
        y = tf.matmul(x, x)
        with tf.device("CPU:0"):   # pinned by hand: off the target when run on CPU:1
            y = tf.nn.relu(y)
        return tf.reduce_sum(y, axis=0) + 1.0

    def slow_on_cpu0(x):
        # costs 30 ms more on CPU:0: an obvious winner to check the verdict against
        if tf.constant(0.0).device.endswith("CPU:0"):
            time.sleep(0.03)
        return tf.matmul(x, x)

    def direct(fn, device, n=5):
        times = []
        for i in range(n + 1):
            t = time.perf_counter()
            with tf.device(device):
                out = fn(tf.constant(x))
            np.asarray(out)
            if i:
                times.append(time.perf_counter() - t)
        return statistics.median(times)

    out = {}
    out["plain"] = tfres.advise_placement(model, x, repeats=5).to_dict()
    out["clear"] = tfres.advise_placement(slow_on_cpu0, x, repeats=5, placement_log=False).to_dict()
    out["direct"] = {d: direct(slow_on_cpu0, d) for d in ("CPU:0", "CPU:1")}
    out["only1"] = tfres.advise_placement(model, x, devices="CPU:1", repeats=2).to_dict()
    def broken(x):
        raise RuntimeError("boom")
    try:
        tfres.advise_placement(broken, x, repeats=1)
    except tfres.TfresError as err:
        out["broken"] = str(err)
    print("RESULT " + json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def checks(tmp_path_factory):
    script = tmp_path_factory.mktemp("placement") / "checks.py"
    script.write_text(CHECKS)
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def test_each_logical_device_is_timed_with_transfers_apart(checks):
    advice = PlacementAdvice.from_dict(checks["plain"])
    assert [t.device for t in advice.timings] == ["CPU:0", "CPU:1"]
    for t in advice.timings:
        assert t.repeats == 5
        assert t.error is None
        assert t.transfer_in_seconds > 0 and t.compute_seconds > 0 and t.transfer_out_seconds >= 0
        assert t.total_min_seconds <= t.total_seconds <= t.total_max_seconds
        # transfers are timed apart from compute: the compute part alone is below the total
        assert t.compute_seconds < t.total_max_seconds
    # the verdict is the device with the lowest median
    fastest = min(advice.timings, key=lambda t: t.total_seconds)
    assert advice.best_device == fastest.device


def test_placement_log_lists_ops_on_the_device_they_were_pinned_to(checks):
    advice = PlacementAdvice.from_dict(checks["plain"])
    by_target = {p.target: p for p in advice.placements}
    assert set(by_target) == {"CPU:0", "CPU:1"}
    on0 = {(o.op_type, o.device) for o in by_target["CPU:0"].ops}
    assert ("MatMul", "CPU:0") in on0 and ("Relu", "CPU:0") in on0
    on1 = by_target["CPU:1"]
    assert any(o.op_type == "MatMul" and o.device == "CPU:1" and not o.off_target for o in on1.ops)
    # relu was pinned to CPU:0 by hand inside the function: flagged off the target
    assert "Relu" in on1.off_target
    assert on1.copies >= 1
    assert by_target["CPU:0"].off_target == ()
    assert on1.fell_back == ()  # "fell back to the CPU" is for functions meant for a GPU


def test_clear_winner_agrees_with_direct_timing(checks):
    advice = PlacementAdvice.from_dict(checks["clear"])
    direct = checks["direct"]
    assert advice.clear
    assert advice.best_device == min(direct, key=direct.get) == "CPU:1"
    assert advice.speedup >= CLEAR_RATIO
    assert advice.verdict.startswith("run on CPU:1:")
    assert advice.placements == ()


def test_one_device_and_failures(checks):
    only = PlacementAdvice.from_dict(checks["only1"])
    assert [t.device for t in only.timings] == ["CPU:1"]
    assert only.verdict.startswith("only CPU:1 was timed")
    assert "failed on every device" in checks["broken"] and "boom" in checks["broken"]


def test_verdict_rules_without_tensorflow():
    a = DeviceTiming("CPU:0", 0.001, 0.002, 0.0, 0.003, 0.003, 0.003, 4)
    b = DeviceTiming("GPU:0", 0.004, 0.0005, 0.001, 0.0055, 0.0055, 0.0055, 4)
    totals = {"CPU:0": [0.003] * 4, "GPU:0": [0.0055] * 4}
    speedup, clear, text = _verdict([a, b], totals)
    assert clear and speedup == pytest.approx(0.0055 / 0.003)
    assert "whose 5.0 ms of transfer outweighs its faster compute" in text
    near = DeviceTiming("GPU:0", 0.0, 0.00305, 0.0, 0.00305, 0.003, 0.0031, 4)
    speedup, clear, text = _verdict([a, near], {"CPU:0": [0.003] * 4, "GPU:0": [0.00305] * 4})
    assert not clear and text.startswith("no clear winner")


def test_bad_arguments():
    with pytest.raises(ValueError, match="callable"):
        advise_placement(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="repeats"):
        advise_placement(print, repeats=0)
    with pytest.raises(ValueError, match="warmup"):
        advise_placement(print, warmup=-1)
    from tfres.errors import NoGpuError

    with pytest.raises(NoGpuError, match="GPU:0"):
        _resolve_devices("GPU:0", ["CPU:0", "CPU:1"])
    with pytest.raises(ValueError, match="visible: CPU:0"):
        _resolve_devices(["CPU:4"], ["CPU:0"])
    with pytest.raises(ValueError, match="cannot read device"):
        _resolve_devices(["banana"], ["CPU:0"])
    assert _resolve_devices("/device:cpu:1, CPU:0", ["CPU:0", "CPU:1"]) == ["CPU:1", "CPU:0"]


def test_ops_that_fell_back_to_the_cpu_inside_a_gpu_function_are_flagged():
    # as TensorFlow reports a GPU function with a string op (no GPU kernel) placed on the CPU
    ops = [
        ("_Arg", "CPU:0"),
        ("_Send", "CPU:0"),
        ("_Recv", "GPU:0"),
        ("MatMul", "GPU:0"),
        ("Relu", "GPU:0"),
        ("Relu", "GPU:0"),
        ("AsString", "CPU:0"),
        ("_Retval", "GPU:0"),
    ]
    log = summarize_placement(ops, "GPU:0")
    assert log.fell_back == ("AsString",)
    assert log.off_target == ("AsString",)
    assert log.copies == 1
    rows = {(o.op_type, o.device): o.count for o in log.ops}
    assert rows == {("AsString", "CPU:0"): 1, ("MatMul", "GPU:0"): 1, ("Relu", "GPU:0"): 2}
    # the same op on another CPU is off the pinned device but no GPU fallback
    cpu = summarize_placement([("MatMul", "CPU:1"), ("Relu", "CPU:0")], "CPU:1")
    assert cpu.fell_back == () and cpu.off_target == ("Relu",)
