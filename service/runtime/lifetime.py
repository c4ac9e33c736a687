"""Child processes die with their parent.

A service killed with SIGKILL runs no cleanup, so its children (the embedded
store, the ``--workers`` children, the solver's worker processes) would live on
as orphans, holding ports, files and CPU. On Linux a child asks the kernel to
signal it when its parent dies (``PR_SET_PDEATHSIG``); elsewhere this does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
from typing import Any

_PR_SET_PDEATHSIG = 1

_prctl: Any = None
if sys.platform.startswith("linux"):
    with contextlib.suppress(OSError, AttributeError):
        _prctl = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True).prctl


def die_with_parent(parent_pid: int, sig: int = signal.SIGTERM) -> bool:
    """In a child of ``parent_pid``: be sent ``sig`` when the parent dies.

    False when the parent is already gone (it died before the request could be
    made, so no signal will come): the caller should exit. Safe between fork and
    exec (no allocation beyond the call itself).
    """
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, sig)
    return os.getppid() == parent_pid
