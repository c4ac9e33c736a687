"""Shared value types: the wire's time format."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from protocol.fields import parse_rfc3339, rfc3339


def test_times_are_rfc_3339_utc_in_milliseconds() -> None:
    moment = datetime(2026, 3, 1, 13, 0, 0, 123456, tzinfo=timezone(timedelta(hours=1)))
    assert rfc3339(moment) == "2026-03-01T12:00:00.123Z"
    assert rfc3339(datetime(2026, 3, 1, tzinfo=UTC)) == "2026-03-01T00:00:00.000Z"


def test_a_naive_time_is_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        rfc3339(datetime(2026, 3, 1))


def test_a_time_reads_back_as_the_moment_it_was() -> None:
    moment = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)
    assert parse_rfc3339(rfc3339(moment)) == moment
    assert parse_rfc3339("2026-03-01T12:00:00.123Z").tzinfo is not None
