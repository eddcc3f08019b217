"""The standard library's statistics module on floats, Fractions and
Decimals: means, medians, variances, quantiles, correlation, regression and
NormalDist. Result: the values, rounded."""
import random
import statistics
from decimal import Decimal
from fractions import Fraction


def run():
    rng = random.Random(42)
    floats = [rng.gauss(10, 3) for _ in range(20000)]
    other = [f * 0.5 + rng.random() for f in floats]
    fracs = [Fraction(rng.randint(1, 1000), rng.randint(1, 50)) for _ in range(3000)]
    decs = [Decimal(rng.randint(1, 10 ** 6)) / 100 for _ in range(3000)]
    out = [statistics.mean(floats), statistics.fmean(floats), statistics.median(floats),
           statistics.stdev(floats), statistics.pvariance(floats), statistics.geometric_mean(other[:500]),
           statistics.harmonic_mean(other[:500]), *statistics.quantiles(floats, n=10),
           statistics.correlation(floats, other), *statistics.linear_regression(floats, other),
           statistics.mean(fracs), statistics.variance(fracs), statistics.median_grouped(fracs),
           statistics.mean(decs), statistics.stdev(decs), statistics.mode([round(f) for f in floats])]
    nd = statistics.NormalDist.from_samples(floats)
    out += [nd.cdf(12), nd.inv_cdf(0.9), nd.overlap(statistics.NormalDist(11, 2))]
    return [round(float(v), 9) for v in out]


if __name__ == "__main__":
    print(run())
