import os

import numpy as np
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("default")


def fp_ints(fps: np.ndarray) -> list[int]:
    """Fingerprint array as Python ints (128-bit: low word first)."""
    if fps.ndim == 1:
        return [int(x) for x in fps]
    return [int(r[0]) | (int(r[1]) << 64) for r in fps]
