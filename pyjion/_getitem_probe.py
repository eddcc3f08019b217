"""What pyjion._eval._probe_inline_getitem runs once per process (imported
from its cached bytecode: compiling this source at every start-up cost more
than a millisecond): a loop that makes the interpreter specialise
BINARY_SUBSCR for a class with a Python __getitem__."""


class Probe:
    def __getitem__(self, i):
        return i


def run(probe):
    for _ in range(64):
        probe[0]
