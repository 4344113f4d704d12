#!/bin/bash
# tfres's GPU paths on a real NVIDIA GPU, in one call (docs/benchmarks/gpu.md has the results).
#
#     bash benchmarks/gpu/device_check.sh                    # every part; $OUT/gpu_check.tgz
#     PARTS="run probe" bash benchmarks/gpu/device_check.sh  # some of them
#     python benchmarks/gpu/compare.py gpu_check.tgz         # then, anywhere: the tables
#
# Parts: run (the phased PyTorch program under tfres run, nvidia-smi beside it), cvd (which
# GPUs are read under CUDA_VISIBLE_DEVICES and --gpus), probe (how NVML's utilization reads
# duty-cycled loads), copy (a program that only copies), holder (env and doctor while
# another process holds 20 GiB), overhead (benchmarks/overhead.py, short). The machine's
# description, env, doctor and the cost of one NVML reading always run. OVERHEAD_ARGS
# replaces overhead.py's "--repeats 3 --seconds 5".
#
# Needs: an NVIDIA driver, python3 with torch (the workload), tfres's dependencies (wheels in
# .whl/ are installed to /tmp/site first when present). TensorFlow is not needed: this checks
# the parts that must work for any Python program.
set -u
OUT=${OUT:-/tmp/tfres-gpu-check}
PARTS=${PARTS:-run cvd probe copy holder overhead}
D=$OUT/gpu_check
mkdir -p "$D"
if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1 TZ=UTC
TFRES=(python3 -m tfres)
step() { echo "== $(date +%T) $*"; }
want() { [[ " $PARTS " == *" $1 "* ]]; }

step machine
{ nvidia-smi; nvidia-smi -q; uname -r; nproc; python3 -V
  python3 -c "import torch, pynvml, psutil; print('torch', torch.__version__, 'psutil', psutil.__version__)"
  python3 -m pip show nvidia-ml-py 2>/dev/null | head -2; } > "$D/machine.txt" 2>&1

step "env and doctor, idle GPU"
"${TFRES[@]}" env --json --no-tensorflow > "$D/env.json" 2> "$D/env.err"; echo "env rc=$?"
"${TFRES[@]}" doctor --json > "$D/doctor.json" 2> "$D/doctor.err"; echo "doctor rc=$?"

step "one NVML reading: its cost, and each call's"
python3 - > "$D/nvml_timing.txt" 2>&1 <<'PY'
import os, statistics, time
import pynvml
from tfres.backends.nvml_reader import GpuReader
reader = GpuReader()
reader.read(pids={os.getpid()})
times = []
for _ in range(40):
    t0 = time.perf_counter(); sample = reader.read(pids={os.getpid()}); times.append(time.perf_counter() - t0)
print("GpuReader.read ms: median %.2f max %.2f" % (1e3 * statistics.median(times), 1e3 * max(times)))
print(sample)
print("notes", reader.notes, "gpm unavailable", reader._gpm.unavailable)
reader.close()
h = pynvml.nvmlDeviceGetHandleByIndex(0)
def gpm_pair():
    s = pynvml.nvmlGpmSampleAlloc(); pynvml.nvmlGpmSampleGet(h, s); pynvml.nvmlGpmSampleFree(s)
calls = {
    "utilization": lambda: pynvml.nvmlDeviceGetUtilizationRates(h),
    "util_samples": lambda: len(pynvml.nvmlDeviceGetSamples(h, 1, 0)[1]),
    # what the reader asks: only the samples newer than the newest it has seen
    "util_samples_new": lambda: len(pynvml.nvmlDeviceGetSamples(h, 1, recent)[1]),
    "memory_v2": lambda: pynvml.nvmlDeviceGetMemoryInfo(h, version=pynvml.nvmlMemory_v2),
    "power": lambda: pynvml.nvmlDeviceGetPowerUsage(h),
    "temperature": lambda: pynvml.nvmlDeviceGetTemperature(h, 0),
    "sm_clock": lambda: pynvml.nvmlDeviceGetClockInfo(h, 1),
    "clock_reasons": lambda: pynvml.nvmlDeviceGetCurrentClocksEventReasons(h),
    "pcie_rx": lambda: pynvml.nvmlDeviceGetPcieThroughput(h, 1),
    "processes": lambda: pynvml.nvmlDeviceGetComputeRunningProcesses(h),
    "gpm_sample": gpm_pair,
}
recent = max(int(x.timeStamp) for x in pynvml.nvmlDeviceGetSamples(h, 1, 0)[1]) - 400_000
for name, call in calls.items():
    ts = []
    for _ in range(10):
        t0 = time.perf_counter()
        try:
            value = call()
        except Exception as err:
            value = "%s: %s" % (type(err).__name__, err)
        ts.append(time.perf_counter() - t0)
    print("%-14s median %7.3f ms  %s" % (name, 1e3 * statistics.median(ts), str(value)[:120]))
PY
head -3 "$D/nvml_timing.txt"

if want run; then
    step "the phased PyTorch program under tfres run; nvidia-smi reads beside it"
    nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used,power.draw,temperature.gpu,clocks.sm \
        --format=csv,noheader,nounits -lms 200 > "$D/smi.csv" 2>&1 &
    SMI=$!
    ( while :; do printf '%s\n' "$(date +%s.%N)"; nvidia-smi --query-compute-apps=pid,used_memory \
          --format=csv,noheader,nounits; sleep 0.5; done ) > "$D/apps.txt" 2>&1 &
    APPS=$!
    ( sleep 10; python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:9464/metrics').read().decode())" ) \
        > "$D/metrics.txt" 2>&1 &
    "${TFRES[@]}" run --no-store --interval 0.2 --out "$D/run.json" --prometheus 9464 \
        -- python3 benchmarks/gpu/torch_phases.py "$D/truth.json" 2> "$D/run.err"
    echo "run rc=$?"
    kill $SMI $APPS 2>/dev/null
    "${TFRES[@]}" show "$D/run.json" > "$D/show.txt" 2>&1
fi

if want cvd; then
    step "which GPUs tfres reads under CUDA_VISIBLE_DEVICES, and --gpus"
    UUID=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
    i=0
    for cvd in "$UUID" 0 1 "" -1 unset; do
        i=$((i + 1))
        if [ "$cvd" = unset ]; then env -u CUDA_VISIBLE_DEVICES "${TFRES[@]}" run --no-store \
                --no-instrument --out "$D/cvd_$i.json" -- sleep 1 2> "$D/cvd_$i.err"
        else CUDA_VISIBLE_DEVICES="$cvd" "${TFRES[@]}" run --no-store --no-instrument \
                --out "$D/cvd_$i.json" -- sleep 1 2> "$D/cvd_$i.err"; fi
        echo "CUDA_VISIBLE_DEVICES=$cvd rc=$?" | tee -a "$D/cvd.txt"
    done
    "${TFRES[@]}" run --no-store --gpus 3 -- true > "$D/gpus3.txt" 2>&1; echo "--gpus 3 rc=$?" >> "$D/gpus3.txt"
fi

if want probe; then
    step "how NVML's utilization reads duty-cycled loads (benchmarks/gpu/util_probe.py)"
    python3 benchmarks/gpu/util_probe.py "$D/probe.json" 2>&1 | tee "$D/probe.md"
fi

if want copy; then
    step "a program that only copies host to device, under tfres run"
    "${TFRES[@]}" run --no-store --out "$D/copy.json" -- python3 -c "
import time, torch
host = torch.ones(1 << 30, dtype=torch.uint8).pin_memory()
target = torch.empty_like(host, device='cuda')
end = time.time() + 6
while time.time() < end:
    target.copy_(host, non_blocking=True)
    torch.cuda.synchronize()
" 2> "$D/copy.err"; echo "copy rc=$?"
    "${TFRES[@]}" show "$D/copy.json" > "$D/copy_show.txt" 2>&1
    grep -A4 "^findings" "$D/copy_show.txt"
fi

if want holder; then
    step "env and doctor while another process holds 20 GiB of the GPU"
    python3 -c "import torch, time; x = torch.empty(20 << 30, dtype=torch.uint8, device='cuda').fill_(1); print('holder', __import__('os').getpid(), flush=True); time.sleep(14)" \
        > "$D/holder.txt" 2>&1 &
    HOLDER=$!
    sleep 7
    "${TFRES[@]}" doctor --json > "$D/doctor_busy.json" 2> "$D/doctor_busy.err"; echo "doctor (busy) rc=$?"
    "${TFRES[@]}" env --json --no-tensorflow > "$D/env_busy.json" 2> "$D/env_busy.err"
    wait $HOLDER
fi

if want overhead; then
    step "what watching costs with NVML read (benchmarks/overhead.py, short)"
    python3 benchmarks/overhead.py ${OVERHEAD_ARGS:---repeats 3 --seconds 5} --no-fit \
        > "$D/overhead.md" 2>&1
    cat "$D/overhead.md"
fi

tar -C "$OUT" -czf "$OUT/gpu_check.tgz" gpu_check && rm -rf "$D"
step done
