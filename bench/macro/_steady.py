"""One process of bench/macro_suite.py's steady-state measurement.

    python bench/macro/_steady.py <program.py> <warmup> <runs> [--callgrind]

Loads the program as a module, calls its run() `warmup` times, then `runs`
more times, timing each call with the process's CPU time; prints JSON with
the times and the repr of every result (the suite compares them with the
stock process's). With --callgrind the measured calls run inside
sys.call_tracing, the function callgrind is told to collect in
(--toggle-collect=_PyEval_CallTracing), so its counts are those of the
measured calls alone; call_tracing changes nothing else here (no tracer is
set)."""
import importlib.util
import json
import os
import sys
import time


def load(path):
    name = os.path.basename(path)[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main():
    path, warmup, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    callgrind = "--callgrind" in sys.argv[4:]
    module = load(path)
    results = [repr(module.run()) for _ in range(warmup)]
    times = []

    def measured():
        for _ in range(runs):
            start = time.process_time()
            value = module.run()
            times.append(time.process_time() - start)
            results.append(repr(value))

    if callgrind:
        sys.call_tracing(measured, ())
    else:
        measured()
    print(json.dumps({"times": times, "results": results}))


if __name__ == "__main__":
    main()
