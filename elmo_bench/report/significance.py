"""The one-sided significance rule every paired bootstrap of the report uses, after Berg-Kirkpatrick et al. (2012).

Pure maths on resampled differences, kept apart from report/bootstrap.py (which resamples the recorded
per-example statistics) so that the rule is one small function any resampling scheme can share.
"""
from __future__ import annotations

import numpy as np


def p_value(deltas: np.ndarray, observed: float) -> float:
    """One-sided: share of resampled differences at least 2 x observed (add-one smoothed); 1.0 when the observed
    difference is not positive. ``deltas``: (resamples,)."""
    if observed <= 0:
        return 1.0
    return float((1 + np.sum(deltas >= 2 * observed)) / (len(deltas) + 1))
