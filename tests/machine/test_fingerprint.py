"""tfres.machine.fingerprint: sections, secrets never captured, and a cheap ``import tfres``."""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest

from fakes import FakeGpu
from tfres.machine.fingerprint import Fingerprint, capture_env, fingerprint, is_secret_name

SECTIONS = ("host", "cpu", "memory", "gpus", "tensorflow", "numpy", "blas", "env", "load")


@pytest.fixture(scope="module")
def fp() -> Fingerprint:
    return fingerprint(load_window_seconds=0.05)


def test_sections_present_and_say_how_they_were_read(fp):
    d = fp.to_dict()
    for name in SECTIONS:
        assert name in d, name
    for name in ("host", "cpu", "memory", "tensorflow", "numpy", "load"):
        assert d[name].get("source"), name
        assert "error" not in d[name], d[name].get("error")
    assert d["gpus_source"] and d["env_source"] and d["blas_source"]
    assert isinstance(d["gpus"], list) and isinstance(d["blas"], list)
    if not d["gpus"]:
        assert d["gpus_reason"]  # empty always comes with the reason
    cpu = d["cpu"]
    for key in (
        "model",
        "physical_cores",
        "logical_cores",
        "frequency_mhz",
        "isa_flags",
        "affinity",
        "cgroup_version",
        "cgroup_cpu_quota_cores",
        "usable_cores",
    ):
        assert key in cpu, key
    assert set(cpu["isa_flags"]) == {"avx2", "avx512f", "fma"}
    for key in (
        "total_bytes",
        "available_bytes",
        "swap_total_bytes",
        "swap_used_bytes",
        "cgroup_memory_limit_bytes",
    ):
        assert key in d["memory"], key
    for key in ("hostname", "os", "kernel", "python", "platform", "machine", "in_container"):
        assert key in d["host"], key
    assert {"installed", "version", "build_info", "physical_devices", "onednn"} <= set(
        d["tensorflow"]
    )
    assert d["took_seconds"] >= 0 and d["taken_at"].endswith("Z")
    json.dumps(d, allow_nan=False)  # strict JSON, ready for a record


def test_round_trip_and_unknown_keys(fp):
    d = fp.to_dict()
    d["a_future_section"] = {"x": 1}
    back = Fingerprint.from_dict(d)
    assert back.to_dict() == d
    assert back.extra == {"a_future_section": {"x": 1}}
    assert back.hostname == fp.host["hostname"]
    old = Fingerprint.from_dict({"host": {"hostname": "old"}})  # an older, smaller fingerprint
    assert old.gpus == [] and old.cpu == {} and old.hostname == "old"


def test_secret_looking_variables_are_never_captured(monkeypatch):
    secrets = {
        "TF_API_TOKEN": "t1",
        "CUDA_SECRET": "t2",
        "OMP_PASSWORD": "t3",
        "XLA_AUTH_HEADER": "t4",
        "NCCL_private_key": "t5",
        "TF_SESSION_COOKIE": "t6",
        "MKL_CREDENTIALS": "t7",
        "HF_TOKEN": "t8",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1"]}}')
    monkeypatch.setenv("NCCL_SOCKET_URL", "https://alice:hunter2@example.org/x")
    monkeypatch.setenv("UNRELATED_VAR", "1")
    env = fingerprint(tensorflow=False, processes=False, gpus=False).env
    for name in secrets:
        assert name not in env
    text = json.dumps(env)
    for value in secrets.values():
        assert f'"{value}"' not in text
    assert "hunter2" not in text and "***@example.org" in env["NCCL_SOCKET_URL"]
    assert env["OMP_NUM_THREADS"] == "3"
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert env["TF_CONFIG"].startswith("{")
    assert "UNRELATED_VAR" not in env


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("TF_API_TOKEN", True),
        ("my_key", True),
        ("PASSWD", True),
        ("TF_NUM_INTRAOP_THREADS", False),
        ("CUDA_VISIBLE_DEVICES", False),
        ("XLA_FLAGS", False),
    ],
)
def test_is_secret_name(name, secret):
    assert is_secret_name(name) is secret


def test_capture_env_prefixes_and_order():
    env = capture_env(
        {"XLA_FLAGS": "--x", "LD_LIBRARY_PATH": "/a", "KMP_AFFINITY": "c", "HOME": "/root"}
    )
    assert list(env) == ["KMP_AFFINITY", "LD_LIBRARY_PATH", "XLA_FLAGS"]


def test_gpus_from_nvml(fake_nvml):
    fake_nvml.gpus = [FakeGpu(name="NVIDIA L4"), FakeGpu(name="NVIDIA L4", uuid="GPU-2")]
    got = fingerprint(tensorflow=False, processes=False)
    assert [g["name"] for g in got.gpus] == ["NVIDIA L4", "NVIDIA L4"]
    assert got.gpus_reason is None


def test_no_driver_gives_empty_gpus_with_reason(fake_nvml):
    import pynvml

    fake_nvml.init_error = pynvml.NVMLError_DriverNotLoaded
    got = fingerprint(tensorflow=False, processes=False)
    assert got.gpus == [] and "not loaded" in got.gpus_reason


def test_skips_are_marked():
    got = fingerprint(tensorflow=False, processes=False, gpus=False)
    assert got.tensorflow.get("skipped") is True
    assert got.load.get("skipped") is True
    assert got.gpus == [] and "gpus=False" in got.gpus_reason


def test_import_tfres_imports_neither_tensorflow_nor_pynvml(python):
    script = textwrap.dedent(
        """
        import json, sys
        import tfres
        import tfres.cli, tfres.record, tfres.store, tfres.sampler
        from tfres import Record, Sampler, TfresError
        from tfres.machine.fingerprint import fingerprint
        first = {"tensorflow": "tensorflow" in sys.modules, "pynvml": "pynvml" in sys.modules}
        fp = fingerprint(processes=False)
        after = {"tensorflow": "tensorflow" in sys.modules}
        import tfres.machine.doctor, tfres.watch.monitor  # the modules behind the public functions
        callables = all(callable(f) for f in (tfres.fingerprint, tfres.doctor, tfres.monitor))
        print(json.dumps({"import": first, "fingerprint": after, "callables": callables,
                          "tf_installed": fp.tensorflow["installed"]}))
        """
    )
    proc = subprocess.run([python, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["import"] == {"tensorflow": False, "pynvml": False}
    # the default fingerprint reads TensorFlow's facts without importing it
    assert out["fingerprint"] == {"tensorflow": False}
    assert out["tf_installed"] is True
    # tfres.fingerprint() etc. stay the functions after their submodules are imported
    assert out["callables"] is True


def test_capture_env_keeps_only_the_tensorflow_variables_tfres_knows():
    config = (
        '{"cluster": {"worker": ["10.0.0.1:2222", "10.0.0.2:2222"], "ps": ["10.0.0.3:2222"]},'
        ' "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc", "token": "s3cr3t"}'
    )
    env = capture_env(
        {
            "TF_VAR_db_password": "hunter3",  # Terraform's, not TensorFlow's
            "TF_VAR_region": "eu-west-1",
            "TF_CLI_CONFIG_FILE": "/root/.terraformrc",
            "TF_CPP_MIN_LOG_LEVEL": "2",
            "TF_CONFIG": config,
        }
    )
    assert list(env) == ["TF_CONFIG", "TF_CPP_MIN_LOG_LEVEL"]
    assert json.loads(env["TF_CONFIG"]) == {
        "cluster": {"ps": 1, "worker": 2},
        "task": {"index": 1, "type": "worker"},
    }
    assert "10.0.0" not in env["TF_CONFIG"] and "s3cr3t" not in env["TF_CONFIG"]
    assert capture_env({"TF_CONFIG": "{not json"})["TF_CONFIG"] == "(not valid JSON)"
