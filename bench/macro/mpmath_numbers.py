"""Arbitrary-precision numerics with mpmath (pure Python, no gmpy): special
functions, quadrature, root finding, series sums and a matrix solve at 30, 40 and 50
digits. Result: the values as strings."""
import mpmath


def run():
    mp = mpmath.mp
    out = []
    try:
        for digits in (30, 40, 50):
            mp.dps = digits
            out.extend(compute())
        return [mpmath.nstr(v, 25) for v in out]
    finally:
        mp.dps = 15


def compute():
    out = [mpmath.zeta(3), mpmath.gamma(mpmath.mpf("0.3")), mpmath.besselj(2, 7.5),
           mpmath.quad(lambda t: mpmath.exp(-t * t), [0, mpmath.inf]),
           mpmath.quad(lambda t: mpmath.sin(t) / t, [1, 10]),
           mpmath.findroot(lambda t: mpmath.cos(t) - t, 1),
           mpmath.nsum(lambda k: 1 / k ** 3, [1, mpmath.inf]),
           mpmath.polyroots([1, 0, -2, 1], maxsteps=100)[0],
           mpmath.ellipk(mpmath.mpf("0.7")), mpmath.erf(mpmath.mpf("1.5"))]
    a = mpmath.matrix([[1 + i + j * j for j in range(8)] for i in range(8)]) + mpmath.eye(8) * 30
    b = mpmath.matrix([i - 3 for i in range(8)])
    out.extend(mpmath.lu_solve(a, b))
    return out


if __name__ == "__main__":
    print(run())
