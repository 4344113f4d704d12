"""tfres.units: sizes, durations and percentages, both ways."""

from __future__ import annotations

import pytest

from tfres.units import (
    format_bytes,
    format_percent,
    format_seconds,
    parse_seconds,
    parse_size,
    parse_size_or_percent,
)

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8GiB", 8 * 1024**3),
        ("1.5GiB", 1610612736),
        ("512 MB", 512 * 1000**2),
        ("512mib", 512 * 1024**2),
        ("2G", 2 * 1000**3),
        ("1024", 1024),
        ("  7 KiB ", 7 * 1024),
        ("1e3", 1000),
        (1024, 1024),
        (2.5, 2),  # rounds to whole bytes (2.5 -> 2, banker's rounding)
        ("0", 0),
        ("1TiB", 1024**4),
    ],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["", "abc", "8 GiBs", "-1GiB", "1..2G", "inf", True, "1 PB"])
def test_parse_size_rejects_with_the_value_in_the_message(bad):
    with pytest.raises(ValueError) as info:
        parse_size(bad)
    assert repr(bad) in str(info.value) or str(bad) in str(info.value)


def test_parse_size_or_percent():
    total = 16 * 1024**3
    assert parse_size_or_percent("50%", total_bytes=total) == 8 * 1024**3
    assert parse_size_or_percent(" 12.5 % ", total_bytes=800) == 100
    assert parse_size_or_percent("2GiB", total_bytes=total) == 2 * 1024**3
    with pytest.raises(ValueError, match="percentage"):
        parse_size_or_percent("x%", total_bytes=total)
    with pytest.raises(ValueError):
        parse_size_or_percent("-5%", total_bytes=total)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.1", 0.1),
        ("100ms", 0.1),
        ("2s", 2.0),
        ("5min", 300.0),
        ("1h", 3600.0),
        (3, 3.0),
        ("250us", 250e-6),
    ],
)
def test_parse_seconds(text, expected):
    assert parse_seconds(text) == pytest.approx(expected)


@pytest.mark.parametrize("bad", ["", "fast", "3 days", "nan", False])
def test_parse_seconds_rejects(bad):
    with pytest.raises(ValueError):
        parse_seconds(bad)


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (None, "n/a"),
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (8 * 1024**3, "8.0 GiB"),
        (1536 * 1024**2, "1.5 GiB"),
        (-2048, "-2.0 KiB"),
        (5 * 1024**5, "5120.0 TiB"),
    ],
)
def test_format_bytes(n, text):
    assert format_bytes(n) == text


def test_format_bytes_round_trips_through_parse_size():
    for n in (1024, 3 * 1024**2, 7 * 1024**3):
        assert parse_size(format_bytes(n).replace(" ", "")) == n


@pytest.mark.parametrize(
    ("s", "text"),
    [(None, "n/a"), (0.85, "850 ms"), (12.34, "12.3 s"), (245, "4m 05s"), (7380, "2h 03m")],
)
def test_format_seconds(s, text):
    assert format_seconds(s) == text


def test_format_percent():
    assert format_percent(None) == "n/a"
    assert format_percent(42.4) == "42%"
    assert format_percent(0) == "0%"


def test_format_cpu_list_writes_ranges_like_taskset() -> None:
    from tfres.units import format_cpu_list

    assert format_cpu_list([0, 1, 2, 5]) == "0-2,5"
    assert format_cpu_list((0, 2, 3, 4, 7, 8)) == "0,2-4,7-8"
    assert format_cpu_list([3]) == "3"
    assert format_cpu_list([]) == "" and format_cpu_list(None) == ""
