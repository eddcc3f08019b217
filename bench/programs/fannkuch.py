"""Fannkuch-redux: for every permutation of 1..N, count how many prefix
reversals ("pancake flips") it takes until 1 is in front.

Stresses: list slicing and slice assignment, integer loops, list indexing,
permutation generation by rotation. Result: (checksum, max flips).
"""

N = 8


def fannkuch(n):
    perm1 = list(range(n))
    count = [0] * n
    max_flips = 0
    checksum = 0
    sign = 1
    r = n
    while True:
        while r != 1:
            count[r - 1] = r
            r -= 1
        if perm1[0] != 0:
            perm = perm1[:]
            flips = 0
            k = perm[0]
            while k:
                perm[:k + 1] = perm[k::-1]
                flips += 1
                k = perm[0]
            if flips > max_flips:
                max_flips = flips
            checksum += flips if sign == 1 else -flips
        # next permutation (rotate the first r+1 elements)
        while True:
            if r == n:
                return checksum, max_flips
            first = perm1[0]
            i = 0
            while i < r:
                perm1[i] = perm1[i + 1]
                i += 1
            perm1[r] = first
            count[r] -= 1
            if count[r] > 0:
                break
            r += 1
        sign = -sign


def run():
    return fannkuch(N)
