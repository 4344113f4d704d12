"""``tfres run``: real child processes, real signals, a real store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tfres.cli import main
from tfres.record import Record
from tfres.store import Store
from tfres.watch.command import watch


def tfres(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tfres", *args],
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


def only_record(store_path: Path) -> Record:
    with Store(store_path) as s:
        runs = s.runs()
        assert len(runs) == 1, runs
        return s.get(runs[0].id)


def wait_for(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.02)


def run_in_terminal(python: str, child: str) -> tuple[subprocess.Popen[bytes], int]:
    """``tfres run -- python -c CHILD`` as a shell's job in a new session whose controlling
    terminal is a fresh pseudo-terminal; returns the process and the terminal's master fd."""
    import fcntl
    import termios

    master, slave = os.openpty()

    def controlling_tty() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(
        [sys.executable, "-m", "tfres", "run", "--", python, "-c", child],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        preexec_fn=controlling_tty,
    )
    os.close(slave)
    return proc, master


def test_exit_status_passes_through_and_the_run_is_saved(store_path, python):
    out = tfres("run", "--label", "three", "--", python, "-c", "print('hi'); raise SystemExit(3)")
    assert out.returncode == 3
    assert out.stdout == "hi\n"  # the command's stdout stays clean: tfres writes to stderr
    record = only_record(store_path)
    assert record.kind == "run" and record.label == "three"
    assert record.status == "failed" and record.exit_code == 3  # docs/record-format.md
    assert "status 3" in record.end_reason
    assert record.command[-1] == "print('hi'); raise SystemExit(3)"


def test_success_is_ok(store_path, tmp_path, python):
    out_file = tmp_path / "r.json"
    out = tfres("run", "--interval", "50ms", "--out", str(out_file), "--", python, "-c", "pass")
    assert out.returncode == 0, out.stderr
    record = only_record(store_path)
    assert record.status == "ok" and record.exit_code == 0
    assert record.interval_seconds == 0.05
    assert out_file.exists()
    assert "saved" in out.stderr


def test_a_crash_by_signal_is_recorded_as_partial(store_path, python):
    out = tfres("run", "--", python, "-c", "import os; os.kill(os.getpid(), 9)")
    assert out.returncode == 128 + 9
    record = only_record(store_path)
    assert record.status == "partial"
    assert record.signal == "SIGKILL" and record.exit_code is None


def test_sigterm_to_tfres_reaches_the_command(store_path, tmp_path, python):
    ready, got = tmp_path / "ready", tmp_path / "got"
    child = (
        "import pathlib, signal, sys, time\n"
        f"def bye(n, f): pathlib.Path({str(got)!r}).write_text('TERM'); sys.exit(7)\n"
        "signal.signal(signal.SIGTERM, bye)\n"
        f"pathlib.Path({str(ready)!r}).write_text('')\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfres", "run", "--", python, "-c", child],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    wait_for(ready)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 7
    assert got.read_text() == "TERM"
    record = only_record(store_path)
    assert record.status == "partial" and record.exit_code == 7
    assert "SIGTERM (passed on to the command)" in record.end_reason


def test_sigint_sent_to_tfres_alone_is_passed_on(store_path, tmp_path, python):
    ready = tmp_path / "ready"
    child = f"import pathlib, time; pathlib.Path({str(ready)!r}).write_text(''); time.sleep(60)"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfres", "run", "--", python, "-c", child],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # no terminal: tfres must pass SIGINT on itself
    )
    wait_for(ready)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130  # Python re-raises SIGINT on KeyboardInterrupt
    record = only_record(store_path)
    assert record.status == "partial" and record.signal == "SIGINT"
    assert "SIGINT (passed on to the command)" in record.end_reason


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_ctrl_c_at_the_terminal_ends_the_command_once(store_path, tmp_path, python):

    ready, count, fg = tmp_path / "ready", tmp_path / "count", tmp_path / "foreground"
    child = (
        "import os, pathlib, signal, sys, time\n"
        f"pathlib.Path({str(fg)!r}).write_text(str(os.tcgetpgrp(0) == os.getpgrp()))\n"
        "hits = []\n"
        "def on_int(n, f):\n"
        "    hits.append(n)\n"
        f"    pathlib.Path({str(count)!r}).write_text(str(len(hits)))\n"
        "signal.signal(signal.SIGINT, on_int)\n"
        f"pathlib.Path({str(ready)!r}).write_text('')\n"
        "while not hits: time.sleep(0.01)\n"
        "time.sleep(0.5)\n"  # a second, forwarded SIGINT would land here
        "sys.exit(5)\n"
    )
    proc, master = run_in_terminal(python, child)
    try:
        wait_for(ready)
        os.write(master, b"\x03")  # Ctrl-C: the terminal signals the foreground group
        proc.wait(timeout=60)
    finally:
        os.close(master)
    assert proc.returncode == 5
    assert fg.read_text() == "True"  # the command's group holds the terminal, as a shell's job
    assert count.read_text() == "1"  # the command got Ctrl-C once, not twice
    record = only_record(store_path)
    assert record.status == "failed" and record.exit_code == 5
    assert "passed on" not in record.end_reason  # tfres itself received nothing


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_sigint_sent_with_kill_in_the_foreground_is_passed_on(store_path, tmp_path, python):
    """tfres in a terminal's foreground, SIGINT from `kill` (not Ctrl-C): passed on once, and
    the record says so (issue 12, item 12)."""

    ready, count = tmp_path / "ready", tmp_path / "count"
    child = (
        "import pathlib, signal, sys, time\n"
        "hits = []\n"
        "def on_int(n, f):\n"
        "    hits.append(n)\n"
        f"    pathlib.Path({str(count)!r}).write_text(str(len(hits)))\n"
        "signal.signal(signal.SIGINT, on_int)\n"
        f"pathlib.Path({str(ready)!r}).write_text('')\n"
        "while not hits: time.sleep(0.01)\n"
        "time.sleep(0.3)\n"
        "sys.exit(6)\n"
    )
    proc, master = run_in_terminal(python, child)
    try:
        wait_for(ready)
        proc.send_signal(signal.SIGINT)  # kill -INT <tfres>
        proc.wait(timeout=60)
    finally:
        os.close(master)
    assert proc.returncode == 6 and count.read_text() == "1"
    record = only_record(store_path)
    assert "tfres received SIGINT (passed on to the command)" in record.end_reason


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_ctrl_z_stops_tfres_with_the_command_and_sigcont_resumes_both(store_path, tmp_path, python):
    """A shell sees its job (tfres) stopped when Ctrl-Z stops the command; fg/bg's SIGCONT to
    tfres continues the command too."""

    import psutil

    ready = tmp_path / "ready"
    child = (
        "import pathlib, sys, time\n"
        f"pathlib.Path({str(ready)!r}).write_text('')\n"
        "for _ in range(100): time.sleep(0.01)\n"
        "sys.exit(4)\n"
    )
    proc, master = run_in_terminal(python, child)
    try:
        wait_for(ready)
        os.write(master, b"\x1a")  # Ctrl-Z: the terminal stops the foreground group
        deadline = time.monotonic() + 20
        while psutil.Process(proc.pid).status() != psutil.STATUS_STOPPED:
            assert time.monotonic() < deadline, "tfres did not stop with its command"
            time.sleep(0.02)
        proc.send_signal(signal.SIGCONT)  # what the shell's fg or bg sends
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 4
    assert only_record(store_path).exit_code == 4


def test_unknown_command_is_one_line_and_127(store_path):
    out = tfres("run", "--", "no-such-command-xyz")
    assert out.returncode == 127
    assert out.stderr.strip() == "tfres: error: command not found: no-such-command-xyz"
    with Store(store_path) as s:
        assert s.runs() == []


def test_a_file_that_is_not_executable_is_126(tmp_path):
    script = tmp_path / "script.sh"
    script.write_text("echo hi\n")
    out = tfres("run", "--no-store", "--", str(script))
    assert out.returncode == 126
    assert "not executable" in out.stderr


@pytest.mark.parametrize("bad", ["0", "-5", "abc", "2h", "1e-9", "5ms"])
def test_bad_interval_is_one_clear_line_and_exit_2(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", f"--interval={bad}", "--", "true"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--interval" in err and "interval" in err
    assert "Traceback" not in err


def test_no_command_is_a_usage_error(capsys):
    assert main(["run"]) == 2
    assert "no command given" in capsys.readouterr().err


def test_the_whole_tree_is_watched(store_path, python):
    # the grandchild lives longer than the longest gap between scans for new processes (3 s)
    grandchild = "import time; x = bytearray(200 * 2**20); time.sleep(3.5)"
    child = (
        "import subprocess, sys\n"
        f"subprocess.run([sys.executable, '-c', {grandchild!r}], check=True)\n"
    )
    out = tfres("run", "--interval", "0.05", "--", python, "-c", child)
    assert out.returncode == 0, out.stderr
    record = only_record(store_path)
    assert max(s.process_count or 0 for s in record.samples) >= 2
    assert max(s.process_rss_bytes or 0 for s in record.samples) > 200 * 2**20


class RssLimit:
    """A watcher (the protocol of tfres.watch.Watcher) that stops the command above a size."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self.started: int | None = None
        self.stopped: Record | None = None

    def on_start(self, pid: int) -> None:
        self.started = pid

    def on_sample(self, sample) -> str | None:
        if (sample.process_rss_bytes or 0) > self.limit_bytes:
            return f"RSS {sample.process_rss_bytes} above {self.limit_bytes}"
        return None

    def on_stop(self, record: Record) -> None:
        self.stopped = record
        record.control["rss_limit_bytes"] = self.limit_bytes


def test_a_watcher_can_stop_the_command(python, store_path):
    limiter = RssLimit(100 * 2**20)
    code = "import time; x = bytearray(300 * 2**20); time.sleep(60)"
    t = time.monotonic()
    result = watch([python, "-c", code], interval=0.05, watchers=[limiter], grace_seconds=5)
    assert time.monotonic() - t < 30
    assert result.exit_status == 128 + signal.SIGTERM
    record = result.record
    assert limiter.started is not None and limiter.stopped is record
    assert record.status == "partial" and "above" in record.end_reason
    assert record.control["rss_limit_bytes"] == 100 * 2**20
    assert only_record(store_path).id == record.id


def test_steps_written_by_the_command_land_in_the_record(python):
    code = (
        "import time\n"
        "from tfres.watch.steps import timed\n"
        "for _ in timed(range(3), epoch=0):\n"
        "    time.sleep(0.02)\n"
    )
    result = watch([python, "-c", code], interval=0.05, store=False)
    assert result.exit_status == 0
    steps = result.record.steps
    assert [s["step"] for s in steps] == [0, 1, 2]
    assert all(0 <= s["t_seconds"] <= result.record.elapsed_seconds for s in steps)


def test_gpus_are_read_for_the_command(fake_nvml, python):
    result = watch(
        [python, "-c", "import time; time.sleep(0.3)"], interval=0.05, gpus=[0], store=False
    )
    with_gpu = [s for s in result.record.samples if s.gpus]
    assert with_gpu and with_gpu[-1].gpus[0].util_percent == 35.0
    assert with_gpu[-1].gpus[0].memory_total_bytes == 40 * 2**30


def test_a_gpu_index_nvml_lacks_is_one_line_before_the_command_starts(fake_nvml, tmp_path, capsys):
    marker = tmp_path / "ran"
    assert main(["run", "--no-store", "--gpus", "0,3", "--", "touch", str(marker)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "tfres: error: no GPU with index 3 here: NVML sees 1 GPU (index 0-0); "
        "nvidia-smi -L lists them"
    ]
    assert not marker.exists()


def test_gpus_by_index_without_nvml_run_with_a_note(fake_nvml, python):
    import pynvml

    fake_nvml.init_error = pynvml.NVMLError_LibraryNotFound
    result = watch([python, "-c", "pass"], interval=0.05, gpus=[0], store=False)
    assert result.exit_status == 0
    assert any(
        n.startswith("GPUs [0] not read: NVIDIA driver library") for n in result.record.notes
    )


@pytest.mark.parametrize("visible", ["", "-1"])
def test_cuda_visible_devices_that_hides_every_gpu_is_the_reason(
    fake_nvml, python, monkeypatch, visible
):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    result = watch([python, "-c", "pass"], interval=0.05, store=False)
    assert all(s.gpus == () for s in result.record.samples)
    assert result.record.extra["gpu_reason"] == (
        f"CUDA_VISIBLE_DEVICES={visible!r} leaves the command no GPU"
    )


def test_control_options_reach_the_command(python, store_path):
    # the child prints the two thread counts tfres set for TensorFlow
    code = (
        "import os; "
        "print(os.environ['TF_NUM_INTRAOP_THREADS'], os.environ['TF_NUM_INTEROP_THREADS'])"
    )
    out = tfres(
        "run",
        "--cpu-threads",
        "3",
        "--inter-op-threads",
        "2",
        "--job",
        "j",
        "--worker",
        "4",
        "--",
        python,
        "-c",
        code,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3", "2"]
    record = only_record(store_path)
    assert record.job == "j" and record.worker == 4
    assert record.control["devices"]  # how the settings were passed, in words


def test_a_signal_before_the_command_starts_is_held_for_it(python):
    """tfres installs its handlers before starting the command; a SIGTERM that lands in
    between is passed on as soon as the command exists, never lost."""
    from tfres.backends.signals import new_group_options
    from tfres.watch.supervisor import Supervisor

    sup = Supervisor(grace_seconds=1.0)
    sup.on_signal(signal.SIGTERM, None)  # no command yet
    proc = subprocess.Popen([python, "-c", "import time; time.sleep(30)"], **new_group_options())
    try:
        sup.attach(proc)
        assert proc.wait(timeout=20) == -signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
    assert sup.received == ["SIGTERM (passed on to the command)"]


def test_the_budget_asks_for_a_checkpoint_with_sigusr1(store_path, tmp_path, python):
    """--checkpoint: the command gets TFRES_CHECKPOINT and, before the budget, SIGUSR1 (the
    "stop at the next batch and save" request that tfres's Keras hook answers).

    The child grows by 1 MiB every 20 ms (at most 50 MiB/s), so the 90% reading that asks
    comes well before the reading that would stop it (the budget within 1.5 readings). At
    1 MiB every 5 ms, ~200 MiB/s on a fast CPU, both could fall on the same reading: tfres
    then rightly sends SIGTERM, as a tree that would pass the budget before it could save.
    """
    ckpt = tmp_path / "ckpt.keras"
    child = (
        "import os, pathlib, signal, sys, time\n"
        "asked = []\n"
        "signal.signal(signal.SIGUSR1, lambda n, f: asked.append(n))\n"
        "hog = []\n"
        "while not asked:\n"
        "    hog.append(b'x' * 2**20); time.sleep(0.02)\n"
        "pathlib.Path(os.environ['TFRES_CHECKPOINT']).write_text('saved')\n"
    )
    out = tfres(
        "run", "--memory-budget", "200MiB", "--checkpoint", str(ckpt), "--", python, "-c", child
    )
    assert out.returncode == 0, out.stderr
    assert ckpt.read_text() == "saved"
    record = only_record(store_path)
    budget = record.control["budget"]
    assert budget["asked_with"] == "SIGUSR1 (checkpoint)" and budget["checkpoint_written"]
    assert budget["peak_bytes"] <= 200 * 2**20 and not budget["killed"]
    assert record.status == "partial" and "memory budget 200.0 MiB" in record.end_reason
