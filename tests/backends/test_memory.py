"""backends/memory.py against psutil and the process's own allocation."""

from __future__ import annotations

import psutil

from tfres.backends.memory import available_memory_bytes, peak_rss_bytes


def test_available_memory_is_what_psutil_reads_within_noise() -> None:
    ours, theirs = available_memory_bytes(), psutil.virtual_memory().available
    assert abs(ours - theirs) < 256 << 20


def test_peak_rss_is_bytes_and_grows_past_a_new_allocation() -> None:
    before = peak_rss_bytes()
    assert before is not None and before >= psutil.Process().memory_info().rss * 0.5
    block = bytearray(before + (64 << 20))  # more than the peak so far, touched by zeroing
    after = peak_rss_bytes()
    assert after is not None and after >= before + (64 << 20)
    del block
