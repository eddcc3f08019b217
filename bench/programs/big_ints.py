"""Big-int loops: integer arithmetic whose values pass 2**30 (two or more
30-bit digits in CPython, off the interpreter's one-digit fast paths) but
stay within 64 bits: a linear congruential generator, a polynomial hash
modulo a prime above 2**32, and sums of squares and cubes.

Result: (the generator's sum, the hash, the two power sums).
"""

LCG_STEPS = 300000
HASH_STEPS = 300000
SUM_LIMIT = 60000


def lcg_sum(seed, steps):
    # Park and Miller's minimal standard generator: x stays below 2**31,
    # x * 48271 below 2**47, the sum below steps * 2**31.
    x = seed
    total = 0
    for _ in range(steps):
        x = (x * 48271) % 2147483647
        total += x
    return total


def poly_hash(steps):
    # h below the modulus (about 2**32), h * 1000003 below 2**52
    h = 0
    i = 0
    while i < steps:
        h = (h * 1000003 + i) % 4294967311
        i += 1
    return h


def power_sums(limit):
    # the sum of cubes below 60000 is about 3.2e18: within 2**63
    squares = 0
    cubes = 0
    for i in range(1, limit):
        sq = i * i
        squares += sq
        cubes += sq * i
    return squares, cubes


def run():
    return (lcg_sum(12345, LCG_STEPS), poly_hash(HASH_STEPS), power_sums(SUM_LIMIT))
