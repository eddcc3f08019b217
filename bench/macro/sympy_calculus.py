"""Symbolic algebra with sympy: expansion, factoring, series, derivatives,
integrals, simplification and solving. Result: the printed results' lengths
and a checksum of their text."""
import zlib

import sympy as sp

x, y, z = sp.symbols("x y z")


def run():
    results = [
        sp.expand((x + y + z + 1) ** 6),
        sp.factor(x ** 6 - y ** 6),
        sp.factor(x ** 4 + 4 * x ** 3 * y + 6 * x ** 2 * y ** 2 + 4 * x * y ** 3 + y ** 4),
        sp.series(sp.sin(x) * sp.exp(x), x, 0, 8),
        sp.series(sp.log(1 + x) / (1 - x), x, 0, 6),
        sp.diff(sp.sin(x * y) * sp.exp(x ** 2), x, 3),
        sp.integrate(x ** 3 * sp.sin(x), x),
        sp.integrate(1 / (x ** 2 + 3 * x + 2), x),
        sp.simplify(sp.sin(x) ** 2 + sp.cos(x) ** 2 + (x ** 2 - 1) / (x - 1)),
        sp.solve(x ** 3 - 6 * x ** 2 + 11 * x - 6, x),
        sp.apart((3 * x + 5) / ((x + 1) * (x + 2) ** 2), x),
        sp.Matrix([[x, 1, 0], [1, y, 1], [0, 1, z]]).det(),
    ]
    text = "\n".join(str(r) for r in results)
    return len(text), zlib.crc32(text.encode())


if __name__ == "__main__":
    print(run())
