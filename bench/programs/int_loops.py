"""Integer loops: the hot functions (collatz_steps, gcd_sum) use nothing but
local variables, constants, integer arithmetic (BINARY_OP), comparisons and
while loops: no calls, no globals, no for/range, no containers. This is the
subset the first compiler tier handles, so it shows the best case for the JIT.

Result: (total Collatz steps below LIMIT, sum of gcd(i, j) over a square).
"""

COLLATZ_LIMIT = 7000
GCD_SIDE = 320


def collatz_steps(limit):
    total = 0
    longest = 0
    i = 1
    while i < limit:
        x = i
        steps = 0
        while x != 1:
            if x % 2 == 0:
                x = x // 2
            else:
                x = 3 * x + 1
            steps += 1
        total += steps
        if steps > longest:
            longest = steps
        i += 1
    return total * 1000 + longest


def gcd_sum(side):
    total = 0
    i = 1
    while i <= side:
        j = 1
        while j <= side:
            a = i
            b = j
            while b != 0:
                t = a % b
                a = b
                b = t
            total += a
            j += 1
        i += 1
    return total


def run():
    return (collatz_steps(COLLATZ_LIMIT), gcd_sum(GCD_SIDE))
