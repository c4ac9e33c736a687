"""Daily challenges: one deal per variant per UTC date, attempts and leaderboards.

``create_app`` makes the :class:`DailyService` (a field of the Context), adds the
routes of :mod:`service.web.daily` and runs its background tasks (choosing the
deals ahead, ranking the days that end) while the app runs.
"""

from __future__ import annotations

from service.domain.daily.challenge import Day, Seeds
from service.domain.daily.deals import DailyDeals
from service.domain.daily.service import DailyService

__all__ = ["DailyDeals", "DailyService", "Day", "Seeds"]
