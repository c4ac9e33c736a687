"""Shared value types: the wire's time format."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from protocol.fields import parse_rfc3339, rfc3339


def test_times_are_rfc_3339_utc_in_milliseconds() -> None:
    moment = datetime(2026, 3, 1, 13, 0, 0, 123456, tzinfo=timezone(timedelta(hours=1)))
    assert rfc3339(moment) == "2026-03-01T12:00:00.123Z"
    assert rfc3339(datetime(2026, 3, 1, tzinfo=UTC)) == "2026-03-01T00:00:00.000Z"


def test_moments_of_one_second_and_of_the_next_each_read_as_their_own() -> None:
    # The text up to the second is reused within a second: the milliseconds are each moment's,
    # and a second before 1970 (a negative timestamp) is not taken for its neighbour.
    for start in (datetime(2026, 3, 1, 23, 59, 59, 998000, tzinfo=UTC),
                  datetime(1969, 12, 31, 23, 59, 58, 500000, tzinfo=UTC)):
        for step in range(3000):
            moment = start + timedelta(microseconds=step * 1337)
            expected = moment.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"
            assert rfc3339(moment) == expected


def test_a_naive_time_is_refused() -> None:
    with pytest.raises(ValueError, match="naive"):
        rfc3339(datetime(2026, 3, 1))


def test_a_time_reads_back_as_the_moment_it_was() -> None:
    moment = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)
    assert parse_rfc3339(rfc3339(moment)) == moment
    assert parse_rfc3339("2026-03-01T12:00:00.123Z").tzinfo is not None
