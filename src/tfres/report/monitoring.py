"""``tfres.monitor``, the public entry point: :func:`tfres.watch.monitor.monitor` with the
HTML report handed to MLflow.

The monitor sits below the report layer, so it cannot render the page itself; with
``mlflow=`` this wrapper gives it the renderer, and the MLflow run gets
``tfres/report.html`` beside ``tfres/record.json``, as ``tfres run --mlflow`` does.

    with tfres.monitor(label="exp1", mlflow="http://127.0.0.1:5000") as m:
        model.fit(x, y)
"""

from __future__ import annotations

import functools
from typing import Any

from tfres.record import Record
from tfres.report.html import render_html
from tfres.watch.monitor import Monitor
from tfres.watch.monitor import monitor as _monitor

__all__ = ["html_bytes", "monitor"]


def html_bytes(record: Record) -> bytes:
    """The HTML report of ``record`` (the same page as ``tfres report N --html``)."""
    return render_html(record).encode("utf-8")


@functools.wraps(_monitor)
def monitor(label: str | None = None, **options: Any) -> Monitor:
    options.setdefault("mlflow_html", html_bytes)
    return _monitor(label, **options)
