"""Rendering of records: :mod:`tfres.report.terminal` (rich) and :mod:`tfres.report.html`."""
