"""The demo's bundled program: integer and float kernels written with local
variables, arithmetic, comparisons and loops, driven by a small caller."""


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def longest_collatz(limit):
    best = 0
    best_n = 1
    n = 1
    while n < limit:
        s = collatz_steps(n)
        if s > best:
            best = s
            best_n = n
        n += 1
    return best_n


def integrate(a, b, steps):
    # Midpoint rule for x**3 - 2*x + 1 on [a, b].
    width = (b - a) / steps
    total = 0.0
    i = 0
    while i < steps:
        x = a + (i + 0.5) * width
        total += x * x * x - 2.0 * x + 1.0
        i += 1
    return total * width


def gcd(a, b):
    while b:
        a, b = b, a % b
    return a


def gcd_sum(limit):
    total = 0
    a = 1
    while a < limit:
        b = 1
        while b < limit:
            total += gcd(a, b)
            b += 7
        a += 3
    return total


def main():
    return (longest_collatz(30000), round(integrate(0.0, 2.0, 200000), 6), gcd_sum(600))
