"""The ``--live`` dashboard: rendered from samples, and run for real in a pseudo-terminal."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time

from rich.console import Console

from tfres.timeline import GpuSample, Sample
from tfres.watch.live import ChildOutput, render_dashboard

ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]|\x1b[()][A-Z0-9]")


def text_of(renderable, width: int = 100) -> str:
    console = Console(width=width, record=True, file=open(os.devnull, "w"), color_system=None)
    console.print(renderable)
    return console.export_text()


def test_dashboard_shows_cores_memory_tree_gpus_and_output():
    sample = Sample(
        t_seconds=12.0,
        cpu_percent=55.0,
        cpu_per_core_percent=(10.0, 100.0, 50.0, 0.0),
        memory_used_bytes=6 * 2**30,
        memory_available_bytes=2 * 2**30,
        swap_used_bytes=2**30,
        process_cpu_percent=180.0,
        process_cpu_share_percent=45.0,
        process_count=3,
        process_threads=40,
        process_rss_bytes=3 * 2**30,
        gpus=(
            GpuSample(
                index=0,
                util_percent=93.0,
                memory_used_bytes=30 * 2**30,
                memory_total_bytes=40 * 2**30,
                power_watts=250.0,
            ),
            GpuSample(index=1, util_percent=None, memory_used_bytes=None),
        ),
        tf_memory={"CPU:0": {"current_bytes": 2**20, "peak_bytes": 2**21}},
    )
    text = text_of(
        render_dashboard(
            sample,
            title="python train.py",
            elapsed_seconds=75.0,
            latest_mark="epoch 2",
            swap_total_bytes=4 * 2**30,
            output=[("stdout", "Epoch 2/3"), ("stderr", "a warning")],
        )
    )
    assert "python train.py" in text and "1m 15s" in text and "epoch 2" in text
    assert " 100%" in text and "  3 " in text  # four core bars, the last is core 3
    assert "6.0 GiB of 8.0 GiB" in text  # memory used of total
    assert "1.0 GiB of 4.0 GiB" in text  # swap
    assert "1.80 cores busy" in text and "RSS 3.0 GiB, 3 processes, 40 threads" in text
    assert "GPU0" in text and "93%" in text and "30.0 GiB of 40.0 GiB" in text and "250 W" in text
    assert "GPU1" in text and "n/a" in text  # unreadable, not 0
    assert "Epoch 2/3" in text and "a warning" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_dashboard_before_the_first_sample():
    text = text_of(render_dashboard(None, title="x", elapsed_seconds=0.0))
    assert "waiting for the first sample" in text and "(no output yet)" in text


def test_child_output_keeps_lines_and_the_last_state_of_a_progress_bar():
    out = ChildOutput(panel_lines=3)
    out._add_text("stdout", "one\ntw")
    out._add_text("stdout", "o\n10%\r50%\r100%\nfour")
    assert out.last_lines(3) == [("stdout", "two"), ("stdout", "100%"), ("stdout", "four")]
    assert len(out.last_lines(10)) == 4  # three kept whole lines and the one being written


def run_in_terminal(argv: list[str], *, cols: int = 100, rows: int = 40, timeout: float = 60):
    """Run ``argv`` with a pseudo-terminal as its terminal; returns (status, all output)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(cols), LINES=str(rows))
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True, env=env
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the terminal closed: everyone exited
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            elif proc.poll() is not None:
                break
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return proc.wait(), b"".join(chunks).decode("utf-8", "replace")


def test_live_run_in_a_terminal_shows_dashboard_and_output_without_garbling(python):
    child = (
        "import sys, time\n"
        "for i in range(3):\n"
        "    print(f'child step {i} done'); time.sleep(0.4)\n"
        "print('child warning on stderr', file=sys.stderr)\n"
        "print('child last line'); time.sleep(3.0)  # several redraws, even on a loaded CI\n"
    )
    status, screen = run_in_terminal(
        [
            sys.executable,
            "-m",
            "tfres",
            "run",
            "--live",
            "--interval",
            "0.2",
            "--",
            python,
            "-c",
            child,
        ]
    )
    assert status == 0
    frames = ANSI.sub("", screen).split("tfres run --live")[1:]
    assert len(frames) >= 3  # redrawn about twice a second
    # while it ran, one frame held the dashboard and the command's last line in its panel
    live_frames = [f for f in frames if "command output" in f and "Memory" in f and "CPU" in f]
    assert any("│ child last line" in f for f in live_frames)
    # after the dashboard closed, the output is replayed whole and in order
    tail = ANSI.sub("", screen).rsplit("╯", 1)[-1]
    lines = [ln.strip() for ln in tail.splitlines() if ln.strip()]
    replay = [ln for ln in lines if ln.startswith("child")]
    assert replay == [
        "child step 0 done",
        "child step 1 done",
        "child step 2 done",
        "child warning on stderr",
        "child last line",
    ]
    assert "tfres run" in tail and "ok (exit 0)" in tail  # then tfres's summary


def test_live_output_goes_straight_through_when_not_a_terminal(python, tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "tfres",
            "run",
            "--live",
            "--no-store",
            "--",
            python,
            "-c",
            "print('plain'); print('two')",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "plain\ntwo\n"
