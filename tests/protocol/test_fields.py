"""Shared value types: the wire's time format."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from protocol.fields import utc_timestamp


def test_times_are_rfc_3339_utc_in_milliseconds() -> None:
    moment = datetime(2026, 3, 1, 13, 0, 0, 123456, tzinfo=timezone(timedelta(hours=1)))
    assert utc_timestamp(moment) == "2026-03-01T12:00:00.123Z"
    assert utc_timestamp(datetime(2026, 3, 1, tzinfo=UTC)) == "2026-03-01T00:00:00.000Z"


def test_a_naive_time_is_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        utc_timestamp(datetime(2026, 3, 1))
