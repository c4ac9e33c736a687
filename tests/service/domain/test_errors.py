"""The errors' vocabulary (service/domain/errors.py): what the domain raises, with no web in it."""

from __future__ import annotations

import subprocess
import sys

from service.domain.errors import ApiError, internal_error, to_api_error


def test_the_vocabulary_imports_no_aiohttp() -> None:
    # The domain modules raise ApiError: importing it must not bring in the web's machinery.
    code = ("import sys, service.domain.errors; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'aiohttp'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_a_failure_nobody_foresaw_is_a_500_that_may_be_tried_again() -> None:
    plain, named = internal_error(), internal_error("0123abcd")
    assert (plain.status, plain.code, plain.message) == (500, "unavailable",
                                                         "internal error; try again")
    assert named.message == "internal error (incident 0123abcd); try again"
    assert named.status == 500


def test_an_api_error_is_its_own_contract_error() -> None:
    err = ApiError("conflict", "stale", {"seq": 3})
    assert to_api_error(err) is err and err.status == 409
    assert to_api_error(RuntimeError("a bug")) is None  # left to internal_error()
