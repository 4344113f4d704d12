"""The ``tfres run --live`` terminal dashboard (rich), refreshed twice a second.

It shows per-core CPU bars, memory and swap, each GPU's utilization and memory, the watched
tree's CPU and RSS, the elapsed time and the latest mark, and, in a panel below, the last
lines the command printed. The command's output goes through pipes so the dashboard never
garbles it: where our stdout/stderr is the terminal the dashboard draws on, its lines are
shown in the panel and replayed in full (up to ``replay_lines``) once the dashboard closes
(when both are the terminal they share one pipe, so the lines keep the order they were
printed in); where it is a file or a pipe, the output is passed straight through as it comes.
"""

from __future__ import annotations

import codecs
import os
import sys
import threading
from collections import deque
from collections.abc import Sequence
from typing import IO, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tfres.backends.proc import swap_total_bytes
from tfres.timeline import Sample
from tfres.units import format_bytes, format_seconds

__all__ = ["ChildOutput", "LiveDashboard", "render_dashboard"]

#: width of the dashboard, in columns (tables stay within 100)
MAX_WIDTH = 100


class ChildOutput:
    """Reads a child's stdout and stderr pipes on threads: a ring of the last lines for the
    panel, the whole output (up to ``replay_lines``) to replay later, or straight through.
    """

    def __init__(self, *, panel_lines: int = 200, replay_lines: int = 10_000) -> None:
        self.lines: deque[tuple[str, str]] = deque(maxlen=panel_lines)
        self._replay: deque[tuple[str, bytes]] = deque(maxlen=replay_lines)
        self.dropped = 0
        self._partial: dict[str, str] = {"stdout": "", "stderr": ""}
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def follow(self, name: str, pipe: IO[bytes], passthrough: IO[bytes] | None) -> None:
        """Start reading ``pipe``; with ``passthrough`` its bytes are written there at once."""
        thread = threading.Thread(
            target=self._pump, args=(name, pipe, passthrough), name=f"tfres-{name}", daemon=True
        )
        thread.start()
        self._threads.append(thread)

    def _pump(self, name: str, pipe: IO[bytes], passthrough: IO[bytes] | None) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        fd = pipe.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            if passthrough is not None:
                try:
                    passthrough.write(chunk)
                    passthrough.flush()
                except (OSError, ValueError):
                    passthrough = None
            else:
                with self._lock:
                    if len(self._replay) == self._replay.maxlen:
                        self.dropped += 1
                    self._replay.append((name, chunk))
            self._add_text(name, decoder.decode(chunk))
        rest = decoder.decode(b"", final=True)
        with self._lock:
            unfinished = bool(self._partial[name] or rest)
        if unfinished:
            self._add_text(name, rest + "\n")
        pipe.close()

    def _add_text(self, name: str, text: str) -> None:
        with self._lock:
            partial = self._partial[name] + text.replace("\r\n", "\n")
            *done, rest = partial.split("\n")
            for line in done:
                line = line.rsplit("\r", 1)[-1]  # a progress bar redrawn with \r: its last state
                self.lines.append((name, line))
            self._partial[name] = rest

    def last_lines(self, n: int) -> list[tuple[str, str]]:
        """The last ``n`` lines (stream name, text), the line being written included."""
        with self._lock:
            lines = list(self.lines)[-n:]
            for name in ("stdout", "stderr"):
                current = self._partial[name].rsplit("\r", 1)[-1]
                if current:
                    lines.append((name, current))
            return lines[-n:]

    def join(self, timeout: float = 2.0) -> None:
        """Wait for the pipes to close (a grandchild may keep them open: not forever)."""
        for thread in self._threads:
            thread.join(timeout)

    def replay(self, stdout: IO[bytes], stderr: IO[bytes]) -> None:
        """Write the buffered output to our own streams, in the order it came."""
        with self._lock:
            chunks = list(self._replay)
            self._replay.clear()
        if self.dropped:
            note = f"tfres: the first {self.dropped} chunks of output were not kept\n"
            stderr.write(note.encode())
        for name, chunk in chunks:
            target = stdout if name == "stdout" else stderr
            target.write(chunk)
        stdout.flush()
        stderr.flush()


def _bar(percent: float | None, width: int) -> Text:
    if percent is None:
        return Text("·" * width, style="dim")
    filled = max(0, min(width, round(percent / 100.0 * width)))
    style = "green" if percent < 60 else "yellow" if percent < 90 else "red"
    return Text("█" * filled, style=style) + Text("░" * (width - filled), style="dim")


def _pct(value: float | None) -> str:
    return "  n/a" if value is None else f"{value:4.0f}%"


def render_dashboard(
    sample: Sample | None,
    *,
    title: str,
    elapsed_seconds: float,
    latest_mark: str | None = None,
    swap_total_bytes: int | None = None,
    output: Sequence[tuple[str, str]] = (),
    output_lines: int = 8,
    width: int = MAX_WIDTH,
) -> RenderableType:
    """The dashboard for one sample: a pure function, so it is easy to test and to reuse."""
    head = Text.assemble(
        (title, "bold"),
        "  ",
        ("elapsed ", "dim"),
        format_seconds(elapsed_seconds),
        "  ",
        ("latest mark ", "dim"),
        latest_mark or "-",
    )
    rows: list[RenderableType] = [head]
    if sample is None:
        rows.append(Text("waiting for the first sample...", style="dim"))
    else:
        rows.extend(_resource_rows(sample, swap_total_bytes, width))
    body = Panel(Group(*rows), title="tfres run --live", title_align="left", width=width)
    lines = Text()
    shown = list(output)[-output_lines:]
    for i, (name, line) in enumerate(shown):
        style = "red" if name == "stderr" else ""
        lines.append(line[: width - 4], style=style)
        if i < len(shown) - 1:
            lines.append("\n")
    if not shown:
        lines = Text("(no output yet)", style="dim")
    out_panel = Panel(lines, title="command output (last lines)", title_align="left", width=width)
    return Group(body, out_panel)


def _resource_rows(sample: Sample, swap_total: int | None, width: int) -> list[RenderableType]:
    rows: list[RenderableType] = []
    bar = 24
    cpu = sample.cpu_percent
    rows.append(Text.assemble(("CPU    ", "bold"), _bar(cpu, bar), _pct(cpu)))
    cores = sample.cpu_per_core_percent
    if cores:
        per_row = max(1, (width - 4) // 20)
        grid = Table.grid(padding=(0, 1))
        for _ in range(min(per_row, len(cores))):
            grid.add_column(no_wrap=True)
        cells = [
            Text.assemble((f"{i:>3} ", "dim"), _bar(v, 10), _pct(v)) for i, v in enumerate(cores)
        ]
        for start in range(0, len(cells), per_row):
            grid.add_row(*cells[start : start + per_row])
        rows.append(grid)
    used, avail = sample.memory_used_bytes, sample.memory_available_bytes
    total = used + avail if used is not None and avail is not None else None
    mem_pct = 100.0 * used / total if used is not None and total else None
    rows.append(
        Text.assemble(
            ("Memory ", "bold"),
            _bar(mem_pct, bar),
            _pct(mem_pct),
            f"  {format_bytes(used)} of {format_bytes(total)}",
        )
    )
    swap = sample.swap_used_bytes
    swap_pct = 100.0 * swap / swap_total if swap is not None and swap_total else None
    rows.append(
        Text.assemble(
            ("Swap   ", "bold"),
            _bar(swap_pct, bar),
            _pct(swap_pct),
            f"  {format_bytes(swap)} of {format_bytes(swap_total)}",
        )
    )
    share = sample.process_cpu_share_percent
    busy = sample.process_cpu_percent
    busy_cores = "n/a" if busy is None else f"{busy / 100:.2f}"
    rows.append(
        Text.assemble(
            ("Tree   ", "bold"),
            _bar(share, bar),
            _pct(share),
            f"  {busy_cores} cores busy, RSS {format_bytes(sample.process_rss_bytes)}, "
            f"{sample.process_count or 0} processes, {sample.process_threads or 0} threads",
        )
    )
    for gpu in sample.gpus:
        mem = gpu.memory_used_bytes
        mem_total = gpu.memory_total_bytes
        gpu_mem_pct = 100.0 * mem / mem_total if mem is not None and mem_total else None
        extra = []
        if gpu.power_watts is not None:
            extra.append(f"{gpu.power_watts:.0f} W")
        if gpu.temperature_celsius is not None:
            extra.append(f"{gpu.temperature_celsius:.0f} C")
        if gpu.throttle_reasons:
            extra.append("throttled: " + ",".join(gpu.throttle_reasons))
        rows.append(
            Text.assemble(
                (f"GPU{gpu.index:<3}", "bold"),
                _bar(gpu.util_percent, 12),
                _pct(gpu.util_percent),
                "  mem ",
                _bar(gpu_mem_pct, 12),
                f" {format_bytes(mem)} of {format_bytes(mem_total)}",
                ("  " + " ".join(extra)) if extra else "",
            )
        )
    if sample.tf_memory:
        parts = [
            f"{dev} {format_bytes(m.get('current_bytes'))}"
            f" (peak {format_bytes(m.get('peak_bytes'))})"
            for dev, m in sample.tf_memory.items()
        ]
        rows.append(Text.assemble(("TF     ", "bold"), "; ".join(parts)))
    return rows


class LiveDashboard:
    """The live view of a watched command; :func:`tfres.watch.command.watch` drives it."""

    def __init__(
        self, command: Sequence[str], *, interval: float = 0.1, console: Console | None = None
    ) -> None:
        self.title = " ".join(" ".join(command).split())[:60]
        self.interval = interval
        self.console = console or Console(stderr=True, highlight=False)
        self.output = ChildOutput()
        self._sampler: Any = None
        self._live: Live | None = None
        self._swap_total: int | None = None
        self._replay_to: dict[str, bool] = {}

    def one_terminal(self) -> bool:
        """Whether our stdout and stderr are both the terminal (then one pipe is enough)."""
        return _isatty(sys.stdout) and _isatty(sys.stderr)

    def attach(self, sampler: Any, proc: Any) -> None:
        """Follow ``sampler``'s samples and the output pipes of ``proc``."""

        self._sampler = sampler
        self._swap_total = swap_total_bytes()
        for name, pipe, ours in (
            ("stdout", proc.stdout, sys.stdout),
            ("stderr", proc.stderr, sys.stderr),
        ):
            if pipe is None:
                continue
            on_screen = _isatty(ours)
            self._replay_to[name] = on_screen
            self.output.follow(name, pipe, None if on_screen else _binary(ours))

    def render(self) -> RenderableType:
        sampler = self._sampler
        sample = sampler.latest if sampler is not None else None
        marks = sampler.marks if sampler is not None else []
        height = self.console.size.height
        return render_dashboard(
            sample,
            title=self.title,
            elapsed_seconds=sampler.elapsed() if sampler is not None else 0.0,
            latest_mark=marks[-1].label if marks else None,
            swap_total_bytes=self._swap_total,
            output=self.output.last_lines(50),
            output_lines=max(3, min(20, height - 16 - len(sample.gpus if sample else ()))),
            width=min(MAX_WIDTH, self.console.width),
        )

    def start(self) -> None:
        self._live = Live(
            get_renderable=self.render,
            console=self.console,
            refresh_per_second=2,
            transient=True,
            redirect_stdout=True,
            redirect_stderr=True,
        )
        self._live.start()

    def refresh(self) -> None:
        """Nothing to do: rich's own thread redraws twice a second."""

    def stop(self) -> None:
        """Close the dashboard, then replay what the command printed to the terminal."""
        self.output.join()
        if self._live is not None:
            self._live.stop()
            self._live = None
        if any(self._replay_to.values()):
            self.output.replay(_binary(sys.stdout), _binary(sys.stderr))


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _binary(stream: Any) -> Any:
    return getattr(stream, "buffer", stream)
