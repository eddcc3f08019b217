"""Chaos game: iterate randomly chosen affine maps (an iterated function
system) and rasterise the orbit, for Barnsley's fern and a Sierpinski
triangle.

Stresses: small float objects, method calls, attribute access, weighted random
choice from a seeded generator (random.Random(seed).random, so the sequence is
fixed), list-of-lists indexing, min/max tracking. Result: per fractal, the
number of lit cells, a weighted cell checksum and the bounding box.
"""

import random

STEPS = 40000
GRID = 64
SEED = 20240611


class Point:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y


class Affine:
    def __init__(self, a, b, c, d, e, f, weight):
        self.a = a
        self.b = b
        self.c = c
        self.d = d
        self.e = e
        self.f = f
        self.weight = weight

    def apply(self, p):
        return Point(self.a * p.x + self.b * p.y + self.e,
                     self.c * p.x + self.d * p.y + self.f)


class Box:
    def __init__(self):
        self.lo_x = self.lo_y = float("inf")
        self.hi_x = self.hi_y = float("-inf")

    def include(self, p):
        if p.x < self.lo_x:
            self.lo_x = p.x
        if p.x > self.hi_x:
            self.hi_x = p.x
        if p.y < self.lo_y:
            self.lo_y = p.y
        if p.y > self.hi_y:
            self.hi_y = p.y

    def as_tuple(self):
        return (self.lo_x, self.lo_y, self.hi_x, self.hi_y)


class Game:
    def __init__(self, maps, rng, x0, y0, x1, y1):
        self.maps = maps
        self.rng = rng
        total = 0.0
        self.cumulative = []
        for m in maps:
            total += m.weight
            self.cumulative.append(total)
        self.total = total
        self.x0, self.y0, self.x1, self.y1 = x0, y0, x1, y1

    def pick(self):
        r = self.rng.random() * self.total
        i = 0
        for bound in self.cumulative:
            if r < bound:
                return self.maps[i]
            i += 1
        return self.maps[-1]

    def cell(self, p):
        gx = int((p.x - self.x0) / (self.x1 - self.x0) * GRID)
        gy = int((p.y - self.y0) / (self.y1 - self.y0) * GRID)
        if gx < 0:
            gx = 0
        elif gx >= GRID:
            gx = GRID - 1
        if gy < 0:
            gy = 0
        elif gy >= GRID:
            gy = GRID - 1
        return gx, gy

    def play(self, steps):
        grid = [[0] * GRID for _ in range(GRID)]
        box = Box()
        p = Point(0.0, 0.0)
        for n in range(steps):
            p = self.pick().apply(p)
            if n < 20:          # let the orbit settle onto the attractor
                continue
            box.include(p)
            gx, gy = self.cell(p)
            grid[gy][gx] += 1
        lit = 0
        check = 0
        for gy in range(GRID):
            row = grid[gy]
            for gx in range(GRID):
                if row[gx]:
                    lit += 1
                    check = (check * 31 + gx * GRID + gy + row[gx]) % 1000000007
        return lit, check, box.as_tuple()


def fern():
    return [
        Affine(0.0, 0.0, 0.0, 0.16, 0.0, 0.0, 0.01),
        Affine(0.85, 0.04, -0.04, 0.85, 0.0, 1.6, 0.85),
        Affine(0.2, -0.26, 0.23, 0.22, 0.0, 1.6, 0.07),
        Affine(-0.15, 0.28, 0.26, 0.24, 0.0, 0.44, 0.07),
    ]


def sierpinski():
    return [
        Affine(0.5, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0),
        Affine(0.5, 0.0, 0.0, 0.5, 0.5, 0.0, 1.0),
        Affine(0.5, 0.0, 0.0, 0.5, 0.25, 0.5, 1.0),
    ]


def run():
    rng = random.Random(SEED)
    a = Game(fern(), rng, -2.5, 0.0, 2.8, 10.0).play(STEPS)
    b = Game(sierpinski(), rng, 0.0, 0.0, 1.0, 1.0).play(STEPS)
    return a, b
