"""Naive doubly recursive Fibonacci.

Stresses: Python-to-Python calls (frame push/pop), LOAD_GLOBAL of the function
itself, small-int arithmetic, comparisons. Result: int.
"""

N = 29


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def run():
    return fib(N)
