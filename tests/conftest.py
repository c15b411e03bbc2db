"""The test suite's one hypothesis profile, loaded for every test."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# Exact and certified arithmetic has long-tailed run times (a precision ladder may climb),
# so no per-example deadline; each test sets how many examples it draws.
settings.register_profile(
    "softmax-dispersion",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("softmax-dispersion")
