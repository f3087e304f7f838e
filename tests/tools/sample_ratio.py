"""Whether two sample counts show a known ratio of work, allowing for sampling's own noise.

A profile's samples are a binomial draw: with n samples and a true share p of one function, its count varies by
sqrt(n p (1 - p)). Fixed bounds on a/b failed now and then on a loaded CI machine, where the target got few
samples; the band here widens as n shrinks (3.5 standard deviations, a false failure in about 2,000 checks, plus
0.02 for what the spin loops do not measure exactly: call overhead, the sorter's own work), and too few samples
to judge is a failure of its own."""
import math


def about_ratio(a, b, ratio=3.0, min_samples=60):
    """(ok, why): a and b are the samples of the heavier and the lighter function, expected about ratio:1."""
    n = a + b
    if n < min_samples:
        return False, "only %d samples of the two (%d needed to judge a ratio)" % (n, min_samples)
    share = 1.0 / (1.0 + ratio)  # the lighter one's expected share
    band = 3.5 * math.sqrt(share * (1 - share) / n) + 0.02
    seen = b / n
    ok = a > 0 and b > 0 and abs(seen - share) <= band
    return ok, "%d:%d is a share of %.3f for the lighter, %.3f +- %.3f expected" % (a, b, seen, share, band)
