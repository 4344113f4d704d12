"""tfres.configure() and child_environment(): validation in-process, TensorFlow in children.

The TensorFlow runtime starts once per process, so the real checks run in one subprocess
that prints JSON; the injected configuration is checked in a real child that never imports
tfres.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tfres.devices.child_env import CONFIG_ENV, INJECT_DIR, child_environment
from tfres.devices.configure import Applied, configure
from tfres.errors import NoGpuError

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel

# -- validation: no TensorFlow needed ---------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"intra_op_threads": -1}, "intra_op_threads must be >= 0 (got -1)"),
        ({"inter_op_threads": 2.5}, "inter_op_threads must be a whole number (got 2.5)"),
        ({"logical_cpus": 0}, "logical_cpus must be >= 1 (got 0)"),
        ({"gpu_memory_limit_bytes": "abc"}, "cannot read size 'abc'"),
        ({"gpu_memory_limit_bytes": "100KiB"}, "at least 1 MiB (got '100KiB')"),
        ({"gpu_memory_limit_bytes": {"CPU:0": "1GiB"}}, "tfres.limit_memory"),
        ({"gpu_memory_limit_bytes": {"disk": "1GiB"}}, "GPU indices like 0 or 'GPU:0'"),
        ({"visible_gpus": "0,1"}, "list of GPU indices like [0, 1] (got '0,1')"),
        ({"visible_gpus": [-1]}, "GPU indices >= 0 (got [-1])"),
        ({"log_device_placement": "yes"}, "True or False (got 'yes')"),
    ],
)
def test_bad_values_raise_one_line_showing_the_value(kwargs: dict, words: str) -> None:
    with pytest.raises(ValueError) as info:
        configure(**kwargs)
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_nothing_asked_applies_nothing_and_imports_no_tensorflow() -> None:
    code = "import sys, tfres; a = tfres.configure(); print(a.applied, 'tensorflow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["{}", "False"]


def test_applied_round_trips_through_dict() -> None:
    a = Applied(applied={"logical_cpus": 2}, skipped={"gpu_memory_growth": "no GPU"})
    assert Applied.from_dict(json.loads(json.dumps(a.to_dict()))) == a
    assert "gpu_memory_growth: skipped: no GPU" in a.lines()


# -- configure() with real TensorFlow, in one child process -----------------------------

CONFIGURE_SCRIPT = textwrap.dedent(
    """
    import json, tfres
    from tfres.errors import TooLateError, NoGpuError
    out = {}
    first = tfres.configure(logical_cpus=3, intra_op_threads=2, inter_op_threads=1,
                            gpu_memory_growth=True, log_device_placement=False)
    out["first"] = first.to_dict()
    import tensorflow as tf
    out["logical"] = [d.name for d in tf.config.list_logical_devices("CPU")]   # starts it
    out["threads"] = [tf.config.threading.get_intra_op_parallelism_threads(),
                      tf.config.threading.get_inter_op_parallelism_threads()]
    out["equal"] = tfres.configure(logical_cpus=3, intra_op_threads=2).to_dict()
    try:
        tfres.configure(inter_op_threads=4)
    except TooLateError as err:
        out["late"] = str(err)
    out["placement_after_start"] = tfres.configure(log_device_placement=True).to_dict()
    import keras
    keras.layers.Dense(1)
    try:
        tfres.configure(logical_cpus=5)
    except TooLateError as err:
        out["late_keras"] = str(err)
    try:
        tfres.configure(visible_gpus=[0])
    except NoGpuError as err:
        out["no_gpu"] = str(err)
    print("JSON" + json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def configured() -> dict:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    env.pop("TF_NUM_INTEROP_THREADS", None)
    run = subprocess.run(
        [sys.executable, "-c", CONFIGURE_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    line = next((x for x in run.stdout.splitlines() if x.startswith("JSON")), None)
    assert line is not None, run.stderr[-2000:]
    return json.loads(line[4:])


def test_configure_applies_logical_cpus_and_threads(configured: dict) -> None:
    first = configured["first"]
    assert first["applied"] == {"intra_op_threads": 2, "inter_op_threads": 1, "logical_cpus": 3}
    assert first["unchanged"] == {"log_device_placement": False}
    assert first["runtime_started"] is False
    assert [n.rsplit(":", 1)[-1] for n in configured["logical"]] == ["0", "1", "2"]
    assert configured["threads"] == [2, 1]


def test_no_gpu_skips_gpu_settings_with_the_reason(configured: dict) -> None:
    assert configured["first"]["skipped"] == {"gpu_memory_growth": "no GPU visible to TensorFlow"}
    assert "visible_gpus=[0]" in configured["no_gpu"]
    assert "tfres doctor" in configured["no_gpu"]


def test_asking_for_the_current_value_after_start_is_fine(configured: dict) -> None:
    equal = configured["equal"]
    assert equal["applied"] == {}
    assert equal["unchanged"] == {"logical_cpus": 3, "intra_op_threads": 2}
    assert equal["runtime_started"] is True
    # log_device_placement can change at any time
    assert configured["placement_after_start"]["applied"] == {"log_device_placement": True}


def test_too_late_names_the_setting_the_cause_and_the_fix(configured: dict) -> None:
    late = configured["late"]
    assert "inter_op_threads=4 (now 1)" in late
    assert "runtime already started" in late
    assert "a tensor was created or the logical devices were listed" in late
    assert "call tfres.configure() first thing" in late
    assert "restart the Python process" in late
    assert "a Keras model or layer was built" in configured["late_keras"]
    assert "logical_cpus=5 (now 3)" in configured["late_keras"]


# -- child_environment() -------------------------------------------------------------------


def test_environment_variables_where_tensorflow_reads_them() -> None:
    env, lines = child_environment(
        gpu_memory_growth=True, intra_op_threads=2, inter_op_threads=3, visible_gpus=[], env={}
    )
    assert env == {
        "CUDA_VISIBLE_DEVICES": "-1",
        "TF_FORCE_GPU_ALLOW_GROWTH": "true",
        "TF_NUM_INTRAOP_THREADS": "2",
        "TF_NUM_INTEROP_THREADS": "3",
        "OMP_NUM_THREADS": "2",
    }
    assert any("TF_FORCE_GPU_ALLOW_GROWTH=true" in line for line in lines)
    # a user's own OMP_NUM_THREADS is left alone
    env, _ = child_environment(intra_op_threads=2, env={"OMP_NUM_THREADS": "7"})
    assert "OMP_NUM_THREADS" not in env


def test_memory_limit_is_injected_and_pythonpath_chained() -> None:
    env, lines = child_environment(
        gpu_memory_limit_bytes={0: "4GiB"}, gpu_memory_growth=[1], env={"PYTHONPATH": "/x"}
    )
    assert json.loads(env[CONFIG_ENV]) == {
        "gpu_memory_growth": {"1": True},
        "gpu_memory_limit_bytes": {"0": 4 * 2**30},
    }
    assert env["PYTHONPATH"] == f"{INJECT_DIR}{os.pathsep}/x"
    assert any("GPU 0 4.0 GiB" in line and "injected" in line for line in lines)
    assert any("sitecustomize.py" in line for line in lines)
    env, lines = child_environment(gpu_memory_limit_bytes="4GiB", env={})
    assert json.loads(env[CONFIG_ENV]) == {"gpu_memory_limit_bytes": {"*": 4 * 2**30}}
    assert any("every GPU 4.0 GiB" in line for line in lines)


def test_growth_up_to_a_limit_and_conflicting_per_gpu_requests() -> None:
    # the issue's own example: --gpu-growth --gpu-memory-limit 4GiB
    env, _ = child_environment(gpu_memory_growth=True, gpu_memory_limit_bytes="4GiB", env={})
    assert env["TF_FORCE_GPU_ALLOW_GROWTH"] == "true"
    assert json.loads(env[CONFIG_ENV])["gpu_memory_limit_bytes"] == {"*": 4 * 2**30}
    with pytest.raises(ValueError, match="GPU 1 has both memory growth and a memory limit"):
        child_environment(gpu_memory_growth=[1], gpu_memory_limit_bytes={1: "4GiB"}, env={})
    with pytest.raises(ValueError, match="use growth on every GPU"):
        child_environment(gpu_memory_growth=[0], gpu_memory_limit_bytes="4GiB", env={})


def test_visible_gpus_map_through_our_cuda_visible_devices() -> None:
    env, _ = child_environment(visible_gpus=[1], env={"CUDA_VISIBLE_DEVICES": "3,5"})
    assert env["CUDA_VISIBLE_DEVICES"] == "5"
    with pytest.raises(NoGpuError, match=r"names GPU 2 but CUDA_VISIBLE_DEVICES='3,5' leaves 2"):
        child_environment(visible_gpus=[2], env={"CUDA_VISIBLE_DEVICES": "3,5"})


def test_visible_gpus_checked_against_nvml(fake_nvml) -> None:
    env, _ = child_environment(visible_gpus=[0], env={})
    assert env["CUDA_VISIBLE_DEVICES"] == "0"
    with pytest.raises(NoGpuError, match="names GPU 3 but NVML sees 1"):
        child_environment(visible_gpus=[3], env={})


def test_child_that_never_imports_tfres_gets_the_injected_settings(tmp_path: Path) -> None:
    other = tmp_path / "site"
    other.mkdir()
    (other / "sitecustomize.py").write_text(
        "import os\nos.environ['OTHER_SITECUSTOMIZE'] = 'ran'\n"
    )
    env, _ = child_environment(
        logical_cpus=2,
        log_device_placement=True,
        intra_op_threads=1,
        env={"PYTHONPATH": str(other)},
    )
    code = textwrap.dedent(
        """
        import json, os, sys
        before = "tensorflow" in sys.modules
        import tensorflow as tf
        print("JSON" + json.dumps({
            "tf_before_import": before,
            "tfres_loaded": any(m == "tfres" or m.startswith("tfres.") for m in sys.modules),
            "cpus": len(tf.config.list_logical_devices("CPU")),
            "placement": tf.debugging.get_log_device_placement(),
            "intra": os.environ.get("TF_NUM_INTRAOP_THREADS"),
            "other": os.environ.get("OTHER_SITECUSTOMIZE"),
        }))
        """
    )
    child_env = {**os.environ, **env, "TF_CPP_MIN_LOG_LEVEL": "3"}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env, timeout=120
    )
    line = next((x for x in run.stdout.splitlines() if x.startswith("JSON")), None)
    assert line is not None, run.stderr[-2000:]
    got = json.loads(line[4:])
    assert got == {
        "tf_before_import": False,
        "tfres_loaded": False,
        "cpus": 2,
        "placement": True,
        "intra": "1",
        "other": "ran",
    }


def test_injection_costs_nothing_to_a_child_without_tensorflow() -> None:
    env, _ = child_environment(logical_cpus=2, env={})
    code = "import sys; print('tensorflow' in sys.modules, type(sys.meta_path[0]).__name__)"
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env}
    )
    assert run.stdout.split() == ["False", "TensorflowHook"]
    assert run.stderr == ""


def _own_argv(queue) -> None:  # a pool worker's start: sent back as it is
    queue.put(list(sys.orig_argv))


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_process_pools_workers_are_told_from_programs(method: str) -> None:
    """The command lines multiprocessing starts its workers with (read from real ones) are
    pool workers for the hook; this test's own interpreter and a plain script are not."""
    import multiprocessing

    context = multiprocessing.get_context(method)
    queue = context.Queue()
    worker = context.Process(target=_own_argv, args=(queue,))
    worker.start()
    argv = queue.get(timeout=60)
    worker.join(60)
    tracker = [sys.executable, "-c", "from multiprocessing.resource_tracker import main;main(5)"]
    cases = [argv, tracker, list(sys.orig_argv), [sys.executable, "train.py", "-c", "x"]]
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import sitecustomize as s; "
        "print(json.dumps([s.pool_worker(a) for a in json.loads(sys.argv[2])]))"
    )
    env = {k: v for k, v in os.environ.items() if k != "TFRES_INSTRUMENT"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(INJECT_DIR), json.dumps(cases)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    assert json.loads(out) == [True, True, False, False]
