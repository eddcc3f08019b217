"""N-queens: enumerate every placement of N non-attacking queens.

Two solvers that must agree: a recursive generator that backtracks with sets
of occupied columns and diagonals, and a brute force that filters all column
permutations (themselves produced by a recursive generator) with set sizes.
Stresses: generators, yield from, set add/remove/membership, tuples.
Result: (number of solutions, checksum of the solutions).
"""

N_BACKTRACK = 9
N_PERMUTE = 8


def placements(n, row, cols, up, down):
    if row == n:
        yield ()
        return
    for c in range(n):
        if c in cols or (row + c) in up or (row - c) in down:
            continue
        cols.add(c)
        up.add(row + c)
        down.add(row - c)
        for rest in placements(n, row + 1, cols, up, down):
            yield (c,) + rest
        cols.remove(c)
        up.remove(row + c)
        down.remove(row - c)


def permutations(items):
    if len(items) <= 1:
        yield tuple(items)
        return
    for i in range(len(items)):
        head = items[i]
        rest = items[:i] + items[i + 1:]
        for tail in permutations(rest):
            yield (head,) + tail


def brute_force(n):
    for perm in permutations(list(range(n))):
        if len({q + i for i, q in enumerate(perm)}) == n and \
           len({q - i for i, q in enumerate(perm)}) == n:
            yield perm


def checksum(solutions):
    total = 0
    for sol in solutions:
        weight = 1
        for q in sol:
            total += weight * q
            weight = weight * 3 % 1009
    return total


def run():
    a = list(placements(N_BACKTRACK, 0, set(), set(), set()))
    b = list(brute_force(N_PERMUTE))
    c = list(placements(N_PERMUTE, 0, set(), set(), set()))
    if sorted(b) != c:
        raise AssertionError("the two n-queens solvers disagree")
    return (len(a), checksum(a), len(b), checksum(b))
