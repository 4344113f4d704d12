"""tfres.backends.tf: TensorFlow facts without starting the runtime (real TF, in subprocesses:
whether the runtime has started is process-wide state, so isolation is the point)."""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest

from tfres.backends import tf as backend

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel

PROBE = textwrap.dedent(
    """
    import json, sys
    from tfres.backends import tf as b
    out = {"before_import": b.runtime_started(), "imported_early": b.tensorflow_imported()}
    light = b.tensorflow_facts(import_tensorflow=False)
    out["light"] = light
    out["imported_after_light"] = b.tensorflow_imported()
    full = b.tensorflow_facts(import_tensorflow=True)
    out["full"] = full
    out["after_facts"] = b.runtime_started()
    import tensorflow as tf
    out["real_build_info"] = dict(tf.sysconfig.get_build_info())
    out["real_devices"] = [d.name for d in tf.config.list_physical_devices()]
    # the whole point: device settings can still be changed after the facts were read
    tf.config.threading.set_intra_op_parallelism_threads(1)
    out["setter_worked"] = True
    out["after_setter"] = b.runtime_started()
    out["threads_after_setter"] = b.thread_settings()
    tf.constant(1.0)
    out["after_tensor"] = b.runtime_started()
    print(json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def probe(python):  # module-scoped: one TensorFlow start for every test here
    return _run(python, PROBE)


@pytest.fixture(scope="module")
def python():
    import sys

    return sys.executable


def _run(python: str, script: str, env_extra: dict[str, str] | None = None) -> dict:
    import os

    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env_extra or {})}
    proc = subprocess.run(
        [python, "-c", script], capture_output=True, text=True, timeout=180, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_light_facts_import_nothing(probe):
    assert probe["before_import"] is False and probe["imported_early"] is False
    light = probe["light"]
    assert probe["imported_after_light"] is False
    assert light["installed"] is True
    assert light["physical_devices"] is None and "not imported" in light["devices_reason"]
    # the build-info file read as data says exactly what TensorFlow says
    assert light["build_info"] == probe["real_build_info"]


def test_full_facts_do_not_start_the_runtime(probe):
    full = probe["full"]
    assert probe["after_facts"] is False
    assert full["runtime_started"] is False
    assert probe["setter_worked"] is True and probe["after_setter"] is False
    assert probe["after_tensor"] is True


def test_full_facts_values(probe):
    full = probe["full"]
    assert full["version"].startswith("2.")
    assert full["build_info"] == probe["real_build_info"]
    assert [d["name"] for d in full["physical_devices"]] == probe["real_devices"]
    assert full["distribution"] in backend.TF_DISTRIBUTIONS
    assert full["intra_op_threads"] == 0 and full["inter_op_threads"] == 0  # TF defaults
    assert full["intra_op_threads_effective"] >= 1
    if not full["build_info"].get("is_cuda_build"):
        assert "cuda_version" not in full["build_info"]  # absent, not an error
    # after the setter, the configured value is what tfres reports
    assert probe["threads_after_setter"]["intra_op_threads"] == 1
    assert probe["threads_after_setter"]["intra_op_threads_effective"] == 1


def test_tensorflow_missing_says_so(python):
    script = textwrap.dedent(
        """
        import json, sys
        sys.modules["tensorflow"] = None   # as if TensorFlow were not installed
        from tfres.backends import tf as b
        print(json.dumps({"facts": b.tensorflow_facts(), "started": b.runtime_started()}))
        """
    )
    out = _run(python, script)
    assert out["facts"]["installed"] is False
    assert "pip install" in out["facts"]["reason"]
    assert out["started"] is False


def test_onednn_setting_names_a_bad_value(monkeypatch):
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "x")
    assert "0 or 1" in backend.onednn_setting()


def test_onednn_default_names_the_cpu_flags_tensorflow_checks(monkeypatch):
    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS", raising=False)
    monkeypatch.setattr(backend, "_cpu_flags", lambda: {"avx2", "fma"})
    monkeypatch.setattr(backend.sys, "platform", "linux")
    monkeypatch.setattr(backend.platform, "machine", lambda: "x86_64")
    words = backend._onednn_default_words()
    assert "none of avx512_vnni" in words and "off" in words
    monkeypatch.setattr(backend, "_cpu_flags", lambda: {"avx2", "avx512_vnni"})
    assert "has avx512_vnni" in backend._onednn_default_words()


def test_thread_env_overrides(monkeypatch):
    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "3")
    monkeypatch.setenv("TF_NUM_INTEROP_THREADS", "junk")
    threads = backend.thread_settings(usable_cpus=8)
    assert threads["intra_op_threads_effective"] == 3
    assert threads["inter_op_threads_effective"] in (8, threads["inter_op_threads"])


def test_cuda_libraries_names_the_sonames():
    libs = backend.cuda_libraries({"cuda_version": "12.5.1", "cudnn_version": "9"})
    assert set(libs) == {"libcudart.so.12", "libcudnn.so.9"}


@pytest.mark.parametrize("onednn", ["1", "0"])
def test_sampler_running_while_tensorflow_imports_does_not_deadlock(
    python: str, onednn: str
) -> None:
    """A sampler started before ``import tensorflow`` reads the allocator only once TF is
    fully imported; looking at a half-imported TF from its thread used to deadlock. Where
    TensorFlow keeps no CPU allocator statistics (oneDNN off), the record says so instead.
    The child gets ``TF_ENABLE_ONEDNN_OPTS`` both ways, so both paths run on any CPU."""
    code = (
        "import json, time\n"
        "from tfres.sampler.sampler import Sampler\n"
        "from tfres.backends.tf import onednn_enabled\n"
        "with Sampler(0.005) as s:\n"
        "    import tensorflow as tf\n"
        "    tf.ones((64, 64))\n"
        "    time.sleep(0.1)\n"
        "try:\n"
        "    tf.config.experimental.get_memory_info('CPU:0')\n"
        "    stats = True\n"
        "except ValueError:\n"
        "    stats = False\n"
        "print(json.dumps({'devices': sorted(s.samples[-1].tf_memory), 'notes': s.notes,\n"
        "                  'stats': stats, 'onednn': onednn_enabled()}))\n"
    )
    out = _run(python, code, {"TF_ENABLE_ONEDNN_OPTS": onednn})
    if onednn == "1":  # TensorFlow's CPU statistics are on with oneDNN on every CPU
        assert out["onednn"] is True and out["stats"] is True
    if out["stats"]:
        assert "CPU:0" in out["devices"]
    else:
        assert "CPU:0" not in out["devices"]
        assert any("no allocator statistics for CPU:0" in n for n in out["notes"])
    if out["onednn"] is False:  # TensorFlow 2.21 keeps CPU statistics with oneDNN only
        assert out["stats"] is False


@pytest.mark.parametrize("value", ["0", "1"])
def test_onednn_is_read_from_tensorflow_not_assumed(python: str, value: str) -> None:
    code = (
        "import json\n"
        "from tfres.backends import tf as b\n"
        "before = b.onednn_setting()\n"
        "import tensorflow\n"
        "from tensorflow.python.util import _pywrap_util_port as port\n"
        "print(json.dumps({'before': before, 'after': b.onednn_setting(),\n"
        "                  'read': b.onednn_enabled(), 'tf': port.IsMklEnabled()}))\n"
    )
    out = _run(python, code, {"TF_ENABLE_ONEDNN_OPTS": value})
    assert out["before"].startswith("not read") and f"OPTS={value}" in out["before"]
    assert out["read"] is out["tf"]
    assert out["after"].startswith("on" if out["tf"] else "off")
    assert "read from TensorFlow" in out["after"]
