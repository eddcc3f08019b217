"""Float loops: the hot functions (mandelbrot, integrate) use nothing but local
variables, constants, float/int arithmetic (BINARY_OP), comparisons and while
loops: no calls, no globals, no for/range, no containers. Together with
int_loops these are the kernels the first compiler subset compiles whole.

Result: (total escape iterations over the grid, Simpson integral of a
polynomial-over-polynomial function).
"""

SIZE = 100
MAX_ITER = 40
INTERVALS = 120000


def mandelbrot(width, height, max_iter):
    total = 0
    y = 0
    while y < height:
        ci = y * 2.0 / height - 1.0
        x = 0
        while x < width:
            cr = x * 3.0 / width - 2.0
            zr = 0.0
            zi = 0.0
            n = 0
            while n < max_iter:
                zr2 = zr * zr
                zi2 = zi * zi
                if zr2 + zi2 > 4.0:
                    break
                zi = 2.0 * zr * zi + ci
                zr = zr2 - zi2 + cr
                n += 1
            total += n
            x += 1
        y += 1
    return total


def integrate(a, b, intervals):
    # Simpson's rule for f(x) = (x^3 - 2x + 1) / (x^2 + 1) on [a, b]
    h = (b - a) / intervals
    acc = 0.0
    k = 0
    while k <= intervals:
        x = a + k * h
        fx = (x * x * x - 2.0 * x + 1.0) / (x * x + 1.0)
        if k == 0 or k == intervals:
            w = 1.0
        elif k % 2 == 1:
            w = 4.0
        else:
            w = 2.0
        acc += w * fx
        k += 1
    return acc * h / 3.0


def run():
    return (mandelbrot(SIZE, SIZE, MAX_ITER), integrate(0.0, 3.0, INTERVALS))
