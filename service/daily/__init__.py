"""Daily challenges: one deal per variant per UTC date, attempts and leaderboards.

``create_app`` adds :data:`routes`, runs :func:`setup` at start-up (the
service, its GameService hook and its background task) and :func:`shutdown`
when the app stops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from service.auth import load_secret
from service.daily.challenge import Day, Seeds
from service.daily.deals import DailyDeals
from service.daily.rest import routes
from service.daily.service import DailyService
from service.store.daily import DailyStore
from service.store.solver import SolverStore

if TYPE_CHECKING:
    from service.app import Context

__all__ = ["DailyDeals", "DailyService", "Day", "Seeds", "routes", "setup", "shutdown"]


async def setup(ctx: Context) -> None:
    """Start-up extension: make the service, hook it to final games, start its tasks
    (choosing the deals ahead, ranking the days that end)."""
    settings = ctx.settings
    seeds = Seeds(load_secret(settings.daily_secret, settings.data_dir, "daily_secret"))
    deals = DailyDeals(settings, ctx.clock, SolverStore(ctx.redis), seeds, ctx.pool, ctx.solutions)
    service = DailyService(settings, ctx.clock, ctx.games, DailyStore(ctx.redis), deals)
    ctx.extensions["daily"] = service
    ctx.games.on_final.append(service.on_final)
    deals.start()
    service.start()


async def shutdown(app: web.Application) -> None:
    """Stop the background task before the store closes."""
    from service.app import SLOT

    ctx = app[SLOT].ctx
    service = ctx.extensions.get("daily") if ctx is not None else None
    if isinstance(service, DailyService):
        await service.deals.stop()
        await service.stop()
