"""Profile-likelihood intervals (issue 35): ``summary(ci="profile")`` for all 11
parameters of a 100,000 x 10 logistic fit against one fit; target <= 20.

Medians of ``--repeats`` (fit, profile) pairs, interleaved in one process so that the
load of a shared machine falls on both alike; ``--quick``: 20,000 x 10.

    python bench/bench_profile.py [--quick] [--repeats 3]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import make_logistic_data  # noqa: E402

from problin import LogisticRegression  # noqa: E402

TARGET = 20.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n = 20_000 if args.quick else 100_000
    X, y = make_logistic_data(n, 10)[:2]
    fits, profiles = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        model = LogisticRegression(alpha=0.0).fit(X, y)
        fits.append(time.perf_counter() - start)
        start = time.perf_counter()
        model.summary(ci="profile", X=X, y=y)
        profiles.append(time.perf_counter() - start)
    ratio = statistics.median(profiles) / statistics.median(fits)
    print(f"N={n}, D=10: fit {statistics.median(fits):.3f} s "
          f"[{min(fits):.3f}, {max(fits):.3f}], profile (11 parameters) "
          f"{statistics.median(profiles):.3f} s [{min(profiles):.3f}, {max(profiles):.3f}]: "
          f"{ratio:.1f}x (target <= {TARGET:g}) {'met' if ratio <= TARGET else 'NOT met'}")


if __name__ == "__main__":
    main()
