"""The peak estimate's inputs: the CPU's identity and the clock, read from /proc and /sys."""

from __future__ import annotations

from pathlib import Path

from tfres.backends.cpu_peak import ClockReading, cpu_identity, max_clock, parse_cpuinfo

SAMPLES = Path(__file__).parent / "cpuinfo"


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def test_amd_block_gives_vendor_family_model_and_flags() -> None:
    cpu = parse_cpuinfo(sample("amd_epyc_zen3_vm.txt"), arch="x86_64", cores=2.0)
    assert (cpu.vendor, cpu.family, cpu.model) == ("AuthenticAMD", 25, 1)
    assert {"avx2", "fma"} <= cpu.flags and "avx512f" not in cpu.flags
    assert cpu.arm_part is None and cpu.cores == 2.0


def test_intel_block_has_avx512() -> None:
    cpu = parse_cpuinfo(sample("intel_xeon_cascadelake_vm.txt"), arch="x86_64")
    assert (cpu.vendor, cpu.family, cpu.model) == ("GenuineIntel", 6, 85)
    assert {"avx512f", "fma"} <= cpu.flags
    assert cpu.model_name == "Intel Xeon Processor (Cascadelake)"


def test_arm_block_gives_implementer_and_part_in_hex() -> None:
    cpu = parse_cpuinfo(sample("arm_neoverse_n1.txt"), arch="aarch64")
    assert (cpu.arm_implementer, cpu.arm_part) == (0x41, 0xD0C)
    assert "asimd" in cpu.flags and cpu.vendor is None and cpu.family is None


def test_clock_prefers_cpufreq_max_over_cpuinfo_mhz(tmp_path: Path) -> None:
    for cpu, khz in (("cpu0", "3500000\n"), ("cpu1", "3700000\n")):
        (tmp_path / cpu / "cpufreq").mkdir(parents=True)
        (tmp_path / cpu / "cpufreq" / "cpuinfo_max_freq").write_text(khz)
    reading = max_clock(cpufreq_dir=tmp_path, cpuinfo_text=sample("amd_epyc_zen3_vm.txt"))
    assert reading == ClockReading(3700.0, "cpufreq cpuinfo_max_freq")


def test_clock_falls_back_to_the_largest_cpuinfo_mhz(tmp_path: Path) -> None:
    text = "processor: 0\ncpu MHz: 2445.426\n\nprocessor: 1\ncpu MHz: 2500.0\n"
    assert max_clock(cpufreq_dir=tmp_path, cpuinfo_text=text) == ClockReading(
        2500.0, "/proc/cpuinfo cpu MHz"
    )


def test_no_clock_anywhere_is_none_not_a_guess(tmp_path: Path) -> None:
    assert max_clock(cpufreq_dir=tmp_path, cpuinfo_text=sample("arm_neoverse_n1.txt")) is None


def test_this_machine_is_read() -> None:
    cpu = cpu_identity()
    assert cpu.arch
    if Path("/proc/cpuinfo").exists():
        assert cpu.flags  # x86 "flags" or ARM "Features"
        assert cpu.cores is None or cpu.cores >= 1
    reading = max_clock()
    if reading is not None:  # many ARM VMs report none
        assert reading.mhz > 100 and reading.source
