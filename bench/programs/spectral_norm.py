"""Spectral norm of the infinite matrix A(i, j) = 1 / ((i+j)(i+j+1)/2 + i + 1),
estimated with the power method on an N x N truncation.

Stresses: a small function called in the innermost loop (call overhead),
float division, list building with comprehensions. Result: float.
"""

N = 110
ITERATIONS = 10


def a_entry(i, j):
    s = i + j
    return 1.0 / (s * (s + 1) // 2 + i + 1)


def mul_a(v):
    n = len(v)
    out = []
    for i in range(n):
        acc = 0.0
        for j in range(n):
            acc += a_entry(i, j) * v[j]
        out.append(acc)
    return out


def mul_at(v):
    n = len(v)
    out = []
    for i in range(n):
        acc = 0.0
        for j in range(n):
            acc += a_entry(j, i) * v[j]
        out.append(acc)
    return out


def mul_ata(v):
    return mul_at(mul_a(v))


def run():
    u = [1.0] * N
    v = u
    for _ in range(ITERATIONS):
        v = mul_ata(u)
        u = mul_ata(v)
    vbv = 0.0
    vv = 0.0
    for ue, ve in zip(u, v):
        vbv += ue * ve
        vv += ve * ve
    return (vbv / vv) ** 0.5
