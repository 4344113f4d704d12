"""tfres.backends.nvml against a scripted fake NVML that raises the real pynvml errors."""

from __future__ import annotations

import os

import psutil
import pynvml
import pytest

from fakes import FakeGpu, GiB
from tfres.backends import nvml, nvml_reader
from tfres.backends.cuda_order import visible_indices
from tfres.backends.nvml_reader import GpuReader


def test_inventory_maps_every_value(fake_nvml):
    me = os.getpid()
    fake_nvml.gpus = [
        FakeGpu(
            name="NVIDIA H100 80GB HBM3",
            uuid="GPU-aaaa",
            memory_total_bytes=80 * GiB,
            memory_used_bytes=3 * GiB,
            util_percent=71,
            compute_capability=(9, 0),
            processes=[(me, 512 * 1024**2)],
        ),
        FakeGpu(name="NVIDIA T4", uuid="GPU-bbbb", mig_mode=None, compute_capability=(7, 5)),
    ]
    fake_nvml.driver_version = "535.104.05"
    fake_nvml.cuda_driver_version = 12020
    gpus, reason = nvml.gpu_inventory()
    assert reason is None
    assert [g["index"] for g in gpus] == [0, 1]
    first, second = gpus
    assert first["name"] == "NVIDIA H100 80GB HBM3"
    assert first["uuid"] == "GPU-aaaa"
    assert first["memory_total_bytes"] == 80 * GiB
    assert first["memory_used_bytes"] == 3 * GiB
    assert first["driver_version"] == "535.104.05"
    assert first["cuda_driver_version"] == "12.2"
    assert first["compute_capability"] == "9.0"
    assert first["mig_mode"] is False
    assert first["util_percent"] == 71.0
    my_name = psutil.Process(me).name()
    assert first["processes"] == [{"pid": me, "name": my_name, "used_memory_bytes": 512 * 1024**2}]
    # a GPU without MIG support has mig_mode None, not False
    assert second["mig_mode"] is None
    assert second["compute_capability"] == "7.5"
    assert second["processes"] == []


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (pynvml.NVMLError_LibraryNotFound, "libnvidia-ml.so"),
        (pynvml.NVMLError_DriverNotLoaded, "not loaded"),
        (pynvml.NVMLError_NoPermission, "permission"),
    ],
)
def test_no_driver_gives_empty_list_and_reason(fake_nvml, error, words):
    fake_nvml.init_error = error
    gpus, reason = nvml.gpu_inventory()
    assert gpus == []
    assert reason is not None and words in reason
    reader = GpuReader()
    assert not reader.available
    assert reader.read({os.getpid()}) == []
    assert words in (reader.reason or "")
    # init is tried once and the answer cached
    assert fake_nvml.init_count == 1


def test_zero_gpus_is_a_reason_too(fake_nvml):
    fake_nvml.gpus = []
    gpus, reason = nvml.gpu_inventory()
    assert gpus == [] and "no GPU" in (reason or "")


def test_reader_converts_units_and_decodes_throttle(fake_nvml):
    me = os.getpid()
    fake_nvml.gpus = [
        FakeGpu(
            util_percent=[10, 90],
            power_milliwatts=250_500,
            temperature_celsius=71,
            sm_clock_mhz=1980,
            throttle_bitmask=0x4 | 0x20,
            pcie_rx_kilobytes_per_second=1000,
            pcie_tx_kilobytes_per_second=3,
            processes=[(me, 1 * GiB), (me + 10_000_000, 5 * GiB)],
        )
    ]
    reader = GpuReader()
    assert reader.available and reader.indices == [0]
    first = reader.read({me})[0]
    second = reader.read({me})[0]
    assert (first.util_percent, second.util_percent) == (10.0, 90.0)
    assert first.power_watts == pytest.approx(250.5)
    assert first.temperature_celsius == 71
    assert first.sm_clock_mhz == 1980
    assert first.throttle_reasons == ("sw_power_cap", "sw_thermal_slowdown")
    assert first.pcie_rx_bytes_per_second == 1000 * 1024
    assert first.pcie_tx_bytes_per_second == 3 * 1024
    assert first.memory_total_bytes == 40 * GiB
    assert first.process_memory_used_bytes == 1 * GiB
    assert first.process_memory_note is None
    assert reader.notes == []


def test_not_supported_fields_are_none(fake_nvml):
    fake_nvml.gpus = [
        FakeGpu(
            not_supported={
                "nvmlDeviceGetPowerUsage",
                "nvmlDeviceGetPcieThroughput",
                "nvmlDeviceGetCurrentClocksEventReasons",
            }
        )
    ]
    sample = GpuReader().read(())[0]
    assert sample.power_watts is None
    assert sample.pcie_rx_bytes_per_second is None and sample.pcie_tx_bytes_per_second is None
    assert sample.throttle_reasons == ()
    assert sample.util_percent == 35.0  # the rest is still read


def test_mig_makes_process_memory_none_with_note(fake_nvml):
    me = os.getpid()
    fake_nvml.gpus = [FakeGpu(mig_mode=True, processes=[(me, GiB)])]
    sample = GpuReader().read({me})[0]
    assert sample.process_memory_used_bytes is None
    assert "MIG" in (sample.process_memory_note or "")
    gpus, _ = nvml.gpu_inventory()
    assert gpus[0]["mig_mode"] is True


def test_process_memory_in_another_pid_namespace(fake_nvml):
    # pids that do not exist here: the GPU processes live in another PID namespace
    fake_nvml.gpus = [FakeGpu(processes=[(2**22 + 11, GiB), (2**22 + 12, GiB)])]
    sample = GpuReader().read({os.getpid()})[0]
    assert sample.process_memory_used_bytes is None
    assert "PID namespace" in (sample.process_memory_note or "")


def test_process_memory_zero_when_watched_process_holds_none(fake_nvml):
    fake_nvml.gpus = [FakeGpu(processes=[(1, GiB)])]  # pid 1 exists here but is not watched
    sample = GpuReader().read({os.getpid()})[0]
    assert sample.process_memory_used_bytes == 0
    assert sample.process_memory_note is None


def test_nvml_failing_mid_run_never_raises(fake_nvml):
    reader = GpuReader()
    ok = reader.read(())[0]
    assert ok.util_percent == 35.0
    fake_nvml.fail_now(pynvml.NVMLError_GpuIsLost)
    broken = reader.read(())[0]
    assert broken.index == 0
    assert broken.util_percent is None and broken.memory_used_bytes is None
    assert any("fallen off the bus" in n for n in reader.notes)
    assert len(reader.notes) == 1  # the same failure is noted once, not per field or read
    reader.read(())
    assert len(reader.notes) == 1
    fake_nvml.heal()
    assert reader.read(())[0].util_percent == 35.0


def test_fail_from_call_n(fake_nvml):
    fake_nvml.fail_from(3, pynvml.NVMLError_Unknown)
    # calls: device count, driver version, then the CUDA driver version fails and all after it
    gpus, reason = nvml.gpu_inventory()
    assert reason is None
    (gpu,) = gpus
    assert gpu["driver_version"] == "550.54.15"
    assert gpu["cuda_driver_version"] is None
    assert gpu["name"] is None and gpu["memory_total_bytes"] is None
    assert "NVML error" in gpu["error"]
    assert set(gpu) >= {"index", "uuid", "mig_mode", "processes", "util_percent"}


def test_throttle_bits_match_the_real_nvml_constants():
    names = {
        "gpu_idle": "GpuIdle",
        "applications_clocks_setting": "ApplicationsClocksSetting",
        "sw_power_cap": "SwPowerCap",
        "hw_slowdown": "HwSlowdown",
        "sync_boost": "SyncBoost",
        "sw_thermal_slowdown": "SwThermalSlowdown",
        "hw_thermal_slowdown": "HwThermalSlowdown",
        "hw_power_brake_slowdown": "HwPowerBrakeSlowdown",
        "display_clock_setting": "DisplayClockSetting",
    }
    for bit, name in nvml.THROTTLE_REASONS:
        assert getattr(pynvml, "nvmlClocksThrottleReason" + names[name]) == bit
    assert nvml_reader._NVML_TEMPERATURE_GPU == pynvml.NVML_TEMPERATURE_GPU
    assert nvml_reader._NVML_CLOCK_SM == pynvml.NVML_CLOCK_SM
    assert nvml_reader._NVML_PCIE_UTIL_RX_BYTES == pynvml.NVML_PCIE_UTIL_RX_BYTES
    assert nvml_reader._NVML_PCIE_UTIL_TX_BYTES == pynvml.NVML_PCIE_UTIL_TX_BYTES


def test_visible_indices(fake_nvml):
    fake_nvml.gpus = [FakeGpu(uuid=u) for u in ("GPU-aaaa-1", "GPU-bbbb-2", "GPU-cccc")]
    assert visible_indices(3, env=None) == [0, 1, 2] or "CUDA_VISIBLE_DEVICES" in os.environ
    assert visible_indices(3, env="2,0") == [2, 0]
    assert visible_indices(3, env="") == []
    assert visible_indices(3, env="-1") == []
    assert visible_indices(3, env="1,7,2") == [1]  # CUDA stops at the first bad entry
    assert visible_indices(3, env="GPU-bbbb,GPU-cccc") == [1, 2]


def test_real_pynvml_here_does_not_crash():
    """On this machine the real NVML either works or says why it does not."""
    nvml.reset()
    try:
        gpus, reason = nvml.gpu_inventory()
    finally:
        nvml.reset()
    assert (gpus and reason is None) or (gpus == [] and reason)


# -- NVML as real drivers behave ---------------------------------------------------------------
def test_the_fake_mirrors_the_real_bindings():
    """Every NVML function the fake scripts exists in the real nvidia-ml-py, and the real
    unversioned process listing is the one wrapped to raise NVMLLibraryMismatchError."""
    import inspect

    from fakes import FakeNVML

    scripted = [n for n, _ in inspect.getmembers(FakeNVML) if n.startswith("nvml")]
    assert scripted and all(hasattr(pynvml, n) for n in scripted)
    assert hasattr(pynvml.nvmlDeviceGetComputeRunningProcesses, "__wrapped__")
    assert not issubclass(pynvml.NVMLLibraryMismatchError, pynvml.NVMLError)


def test_a_driver_without_the_v3_process_symbols_keeps_every_gpu(fake_nvml):
    me = os.getpid()
    fake_nvml.gpus = [FakeGpu(processes=[(me, 300 * 2**20)]), FakeGpu(uuid="GPU-b")]
    fake_nvml.missing = {"nvmlDeviceGetComputeRunningProcesses_v3"}
    gpus, reason = nvml.gpu_inventory()
    assert reason is None and len(gpus) == 2  # not "NVML could not be read"
    assert gpus[0]["processes"][0]["pid"] == me  # listed through the _v2 symbol
    sample = GpuReader().read({me})[0]
    assert sample.process_memory_used_bytes == 300 * 2**20
    assert sample.util_percent == 35.0


def test_a_driver_older_than_535_gives_throttle_reasons_by_their_old_name(fake_nvml):
    fake_nvml.gpus = [FakeGpu(throttle_bitmask=[0x20, 0x20])]
    fake_nvml.missing = {"nvmlDeviceGetCurrentClocksEventReasons"}
    reader = GpuReader()
    assert reader.read(())[0].throttle_reasons == ("sw_thermal_slowdown",)
    assert reader.read(())[0].throttle_reasons == ("sw_thermal_slowdown",)
    # the missing name was asked once, then never again
    assert fake_nvml.calls.count("nvmlDeviceGetCurrentClocksEventReasons") == 1
    assert not reader.notes


def _two_models(fake_nvml):
    # NVML index 0 is the older T4 on bus 3B; index 1 the A100 on bus 86
    fake_nvml.gpus = [
        FakeGpu(name="NVIDIA T4", uuid="GPU-t4", compute_capability=(7, 5),
                pci_bus_id="00000000:3B:00.0"),
        FakeGpu(name="NVIDIA A100", uuid="GPU-a100", compute_capability=(8, 0),
                pci_bus_id="00000000:86:00.0"),
    ]  # fmt: skip


def test_cuda_visible_devices_counts_cuda_ordinals_not_nvml_indices(fake_nvml, monkeypatch):
    from tfres.backends import cuda_order

    _two_models(fake_nvml)
    monkeypatch.setattr(cuda_order, "_cuda_driver_order", lambda order: None)  # no libcuda
    # fastest first (CUDA's default): CUDA device 0 is the A100, NVML's index 1
    assert visible_indices(2, env="0", order="") == [1]
    order, how = cuda_order.cuda_order(2, "")
    assert order == [1, 0] and how.startswith("guessed")
    # bus order: CUDA device 0 is the T4 on bus 3B
    assert visible_indices(2, env="0", order="PCI_BUS_ID") == [0]
    # what the CUDA driver says wins over the guess (its bus ids: 4-digit domain)
    monkeypatch.setattr(
        cuda_order, "_cuda_driver_order", lambda order: ["0000:3b:00.0", "0000:86:00.0"]
    )
    assert cuda_order.cuda_order(2, "") == ([0, 1], "asked of the CUDA driver")


def test_tensorflow_gpu_i_is_mapped_through_the_processes_environment(fake_nvml, monkeypatch):
    from tfres.backends import cuda_order

    _two_models(fake_nvml)
    monkeypatch.setattr(cuda_order, "_cuda_driver_order", lambda order: None)
    env = {"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    assert cuda_order.tf_gpu_indices(env) == [1]  # TF's GPU:0 is NVML's GPU 1
    assert cuda_order.tf_gpu_indices({}) == [1, 0]  # fastest first: the A100, then the T4
    # one GPU model: fastest first and bus order agree, no guess
    fake_nvml.gpus = [FakeGpu(pci_bus_id="00000000:86:00.0"), FakeGpu(uuid="GPU-2",
                      pci_bus_id="00000000:3B:00.0")]  # fmt: skip
    assert cuda_order.cuda_order(2, "") == ([1, 0], "one GPU model: fastest first is PCI bus order")


# -- readings measured against nvidia-smi on an H200 (docs/benchmarks/gpu.md) ------------------
def test_memory_used_leaves_out_the_drivers_reserve_as_nvidia_smi_does(fake_nvml):
    fake_nvml.gpus = [FakeGpu(memory_used_bytes=3 * GiB, memory_reserved_bytes=600 * 2**20)]
    gpus, _ = nvml.gpu_inventory()
    assert gpus[0]["memory_used_bytes"] == 3 * GiB
    assert GpuReader().read()[0].memory_used_bytes == 3 * GiB
    assert "nvmlDeviceGetMemoryInfo" not in fake_nvml.calls  # v2 answered: v1 never asked


def test_a_driver_without_memory_info_v2_gets_v1_and_is_not_asked_again(fake_nvml):
    fake_nvml.gpus = [FakeGpu(memory_used_bytes=3 * GiB, memory_reserved_bytes=600 * 2**20)]
    fake_nvml.missing = {"nvmlDeviceGetMemoryInfo_v2"}
    reader = GpuReader()
    for _ in range(3):
        assert reader.read()[0].memory_used_bytes == 3 * GiB + 600 * 2**20
    assert fake_nvml.calls.count("nvmlDeviceGetMemoryInfo_v2") == 1
    assert reader.notes == []


def test_pcie_throughput_is_read_at_most_once_a_second(fake_nvml):
    from fakes import FakeClock

    fake_nvml.gpus = [FakeGpu(pcie_rx_kilobytes_per_second=[100, 200, 300])]
    clock = FakeClock()
    reader = GpuReader(clock=clock)
    rx = []
    for _ in range(12):  # 1.2 s of readings every 0.1 s
        rx.append(reader.read()[0].pcie_rx_bytes_per_second)
        clock.advance(0.1)
    assert fake_nvml.calls.count("nvmlDeviceGetPcieThroughput") == 2 * 2  # rx and tx, twice
    assert rx == [100 * 1024.0] * 10 + [200 * 1024.0] * 2  # held between reads


def test_utilization_is_the_mean_of_the_drivers_samples_since_it_was_last_asked(fake_nvml):
    from fakes import FakeClock
    from tfres.backends.nvml_reader import UTIL_SAMPLES_EVERY_SECONDS

    assert UTIL_SAMPLES_EVERY_SECONDS == 0.25  # the periods below are three readings long
    buffer = [(1_000_000 + 200_000 * i, 5 * i) for i in range(20)]  # one per 200 ms
    fake_nvml.gpus = [
        FakeGpu(
            util_percent=0,  # the latest sample alone
            utilization_samples=[buffer[:10], buffer[:12], buffer[:14], buffer[:14]],
        )
    ]
    clock = FakeClock()
    reader = GpuReader(clock=clock)

    def period() -> list[float | None]:  # three readings 0.1 s apart
        out = []
        for _ in range(3):
            out.append(reader.read()[0].util_percent)
            clock.advance(0.1)
        return out

    # the buffer reaches back before the run: the first period reads the latest sample
    assert period() == [0.0] * 3
    assert period() == [52.5] * 3  # samples 10 and 11, held for the period
    assert period() == [62.5] * 3  # samples 12 and 13
    assert period() == [0.0] * 3  # nothing new (NotFound): the latest sample
    assert fake_nvml.calls.count("nvmlDeviceGetSamples") == 4  # once a period
    assert reader.notes == []


def test_a_driver_without_utilization_samples_gives_the_latest_and_is_not_asked_again(fake_nvml):
    fake_nvml.gpus = [FakeGpu(util_percent=[10, 20, 30])]  # utilization_samples: NotSupported
    reader = GpuReader()
    assert [reader.read()[0].util_percent for _ in range(3)] == [10.0, 20.0, 30.0]
    assert fake_nvml.calls.count("nvmlDeviceGetSamples") == 1
    assert reader.notes == []


def test_engine_and_sm_activity_come_from_the_performance_monitor(fake_nvml):
    # as on an H200 copying host to device: utilization near 100%, the compute engine idle
    fake_nvml.gpus = [
        FakeGpu(util_percent=97, engine_active_percent=[0.0, 48.8], sm_active_percent=[0.0, 39.7])
    ]
    reader = GpuReader()
    first = reader.read()[0]
    assert (first.engine_active_percent, first.sm_active_percent) == (None, None)  # no pair yet
    second = reader.read()[0]
    assert (second.util_percent, second.engine_active_percent) == (97.0, 0.0)
    assert reader.read()[0].sm_active_percent == 39.7
    assert len(fake_nvml.gpm_samples) == 1  # only the sample for the next reading is kept
    reader.close()
    assert fake_nvml.gpm_samples == {}  # and freed on close
    assert reader.read()[0].engine_active_percent is None


def test_a_gpu_without_a_performance_monitor_is_asked_once(fake_nvml):
    fake_nvml.gpus = [FakeGpu(), FakeGpu(uuid="GPU-h", engine_active_percent=50.0)]
    reader = GpuReader()
    for _ in range(3):
        older, hopper = reader.read()
    assert older.engine_active_percent is None and hopper.engine_active_percent == 50.0
    assert fake_nvml.calls.count("nvmlGpmQueryDeviceSupport") == 2  # once per GPU
    assert reader.notes == []


def test_gpm_failing_leaves_the_other_readings(fake_nvml):
    fake_nvml.gpus = [FakeGpu(engine_active_percent=50.0)]
    fake_nvml.missing = {"nvmlGpmSampleGet"}
    reader = GpuReader()
    for _ in range(2):
        sample = reader.read()[0]
    assert sample.engine_active_percent is None and sample.util_percent == 35.0
    assert fake_nvml.gpm_samples == {}  # the sample it could not fill was freed
