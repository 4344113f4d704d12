"""``tfres batch-size script.py:build_model``: the largest batch size that fits a budget."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tfres.batchsize.finder import Trial, find_batch_size, isolated_reference
from tfres.cli._common import add_json_option, console, positive_int_arg, print_json
from tfres.units import format_bytes, format_seconds

DESCRIPTION = """\
Find the largest batch size whose training steps fit a memory budget, and the one with the
best throughput. Each trial trains a few real steps (train_on_batch) at one batch size in a
process of its own, so trials do not leak memory into each other and one that runs out of
memory takes nothing down. At most 8 trials: grow, then aim with a line through the peak
memory measured, then bisect. A size fits when its peak memory (the trial process's peak
RSS, or TensorFlow's GPU allocator peak on a GPU) stays within --margin of the budget.

MODEL is 'script.py:function' or 'package.module:function' returning a compiled Keras model.
--data names a function returning (x, y); by default the script's make_data().
"""

EPILOG = """\
examples:
  tfres batch-size train.py:build_model
  tfres batch-size train.py:build_model --data train.py:make_data --budget 10%
  tfres batch-size train.py:build_model --budget 2GiB --max-batch-size 1024 --json
  tfres batch-size mypkg.models:build --data mypkg.data:load --device gpu --budget 20GiB
"""


def _margin_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a fraction like 0.9 (got {text!r})") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"--margin must be above 0 and at most 1 (got {text!r})")
    return value


def _trials_arg(text: str) -> int:
    value = positive_int_arg(text)
    if value > 8:
        raise argparse.ArgumentTypeError(f"--max-trials is at most 8 (got {text!r})")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "batch-size",
        help="find the largest batch size that fits a memory budget",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", metavar="MODEL", help="script.py:build_model or module:function")
    p.add_argument(
        "--data", metavar="REF", default=None, help="function returning (x, y) (default: make_data)"
    )
    p.add_argument(
        "--budget",
        metavar="SIZE|PCT",
        default=None,
        help="memory budget: 10%%, 2GiB (default: the memory available now)",
    )
    p.add_argument("--max-batch-size", type=positive_int_arg, default=4096, metavar="N")
    p.add_argument("--min-batch-size", type=positive_int_arg, default=1, metavar="N")
    p.add_argument(
        "--start", type=positive_int_arg, default=32, metavar="N", help="first size (default: 32)"
    )
    p.add_argument(
        "--steps", type=positive_int_arg, default=5, metavar="N", help="timed steps per trial"
    )
    p.add_argument(
        "--margin", type=_margin_arg, default=0.9, help="share of the budget a size may use"
    )
    p.add_argument("--max-trials", type=_trials_arg, default=8, metavar="N", help="at most 8")
    p.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto")
    add_json_option(p)
    p.set_defaults(func=cmd_batch_size)


def _default_data(model: str) -> str:
    target, _, _ = model.rpartition(":")
    if not target:
        raise ValueError(f"MODEL must be 'script.py:function' or 'module:function' (got {model!r})")
    return f"{target}:make_data"


def cmd_batch_size(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    # checked before the slow import: a missing file, a name it does not define, or a script
    # that does not compile (its file and line); the model first, its file is the one named
    isolated_reference(args.model, "MODEL")
    data = args.data or _default_data(args.model)
    try:
        isolated_reference(data, "--data")
    except ValueError as err:
        if args.data is None:
            raise ValueError(
                f"{err}; give --data script.py:make_data (a function returning (x, y))"
            ) from None
        raise
    err_console = console(stderr=True)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(bar_width=20),
        TextColumn("trial {task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    )
    task = progress.add_task("starting", total=args.max_trials)

    def on_start(number: int, batch_size: int) -> None:
        progress.update(task, description=f"batch size {batch_size}")

    def on_end(trial: Trial) -> None:
        progress.advance(task)
        progress.console.print(
            f"  batch size {trial.batch_size:>6}: {trial.status}, peak "
            f"{format_bytes(trial.peak_bytes)}"
        )

    with progress:
        result = find_batch_size(
            args.model,
            data,
            budget=args.budget,
            max_batch_size=args.max_batch_size,
            min_batch_size=args.min_batch_size,
            start_batch_size=args.start,
            steps_per_trial=args.steps,
            margin=args.margin,
            max_trials=args.max_trials,
            device=args.device,
            on_trial_start=on_start,
            on_trial_end=on_end,
        )
    if args.json:
        print_json(result.to_dict())
        return 0
    _render(result, Path(args.model.rpartition(":")[0]).name)
    return 0 if result.largest_batch_size is not None else 1


def _render(result: Any, name: str) -> None:
    from rich.table import Table

    out = console()
    memory = "GPU allocator peak" if result.device == "gpu" else "peak RSS"
    table = Table(
        title=f"batch sizes for {name} (budget {format_bytes(result.budget_bytes)}, "
        f"margin {result.margin:.0%})",
        title_justify="left",
    )
    for col, justify in (
        ("#", "right"),
        ("batch size", "right"),
        ("result", "left"),
        (memory, "right"),
        ("samples/s", "right"),
        ("took", "right"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for i, t in enumerate(result.trials, 1):
        rate = f"{t.samples_per_second:,.0f}" if t.samples_per_second else "-"
        style = "green" if t.fits else "red"
        table.add_row(
            str(i),
            str(t.batch_size),
            f"[{style}]{t.status}[/]",
            format_bytes(t.peak_bytes),
            rate,
            format_seconds(t.seconds),
        )
    out.print(table)
    if result.largest_batch_size is None:
        out.print(f"[red]nothing fits[/]: {result.stopped_because}")
        return
    out.print(f"largest that fits:  [bold]{result.largest_batch_size}[/]")
    out.print(f"best throughput:    [bold]{result.best_throughput_batch_size}[/]")
    out.print(f"search:             {result.stopped_because}, {len(result.trials)} trials")
