"""The one distance the numba kernels use: lower is better, ``-ip`` (metric 0) or squared L2 (metric 1)."""

from __future__ import annotations

import numba
import numpy as np


# fastmath lets the float32 sum vectorise; it may reorder additions, which only moves the last bits.
@numba.njit(cache=True, nogil=True, fastmath=True)
def distance(q, xb, j, metric):  # type: ignore[no-untyped-def]
    """Distance from vector ``q`` to row ``j`` of ``xb``."""
    s = np.float32(0.0)
    if metric == 0:
        for t in range(q.shape[0]):
            s += q[t] * xb[j, t]
        return -s
    for t in range(q.shape[0]):
        diff = q[t] - xb[j, t]
        s += diff * diff
    return s
