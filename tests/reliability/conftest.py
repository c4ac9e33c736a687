"""Fixtures of the reliability tests: every test here also checks the service's log.

``service_log`` (autouse) records every log record of the process while a test
runs; at the end no record may be at ERROR or above (an unhandled exception in a
handler, a task that died, a "this cannot happen"): a fault the service survived
must leave no traceback behind. The fuzzing tests go further and allow no
traceback at any level (``service_log.assert_no_tracebacks()``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.deploy.test_deploy_files import nginx_in_front_of  # noqa: F401 - shared fixture
from tests.reliability.helpers import LogWatch


@pytest.fixture(autouse=True)
def service_log() -> Iterator[LogWatch]:
    with LogWatch() as watch:
        yield watch
    watch.assert_no_errors()
