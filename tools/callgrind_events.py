"""callgrind's output as the project reads it: the event totals of a run, and
the estimated cycles that speed figures are counted in (Ir + 10 x L1 misses +
100 x last-level misses, from --cache-sim=yes)."""

EVENTS = ("Ir", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")


def totals(path):
    """{event: count} for EVENTS from a callgrind output file (0 for an event
    the run did not count, e.g. the cache events without --cache-sim)."""
    events = counts = None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith(("summary:", "totals:")):
                counts = [int(v) for v in line.split()[1:]]
    if events is None or counts is None:
        raise RuntimeError("no event totals in " + path)
    found = dict(zip(events, counts))
    return {e: found.get(e, 0) for e in EVENTS}


def estimated_cycles(counts):
    return (counts["Ir"] + 10 * (counts["I1mr"] + counts["D1mr"] + counts["D1mw"])
            + 100 * (counts["ILmr"] + counts["DLmr"] + counts["DLmw"]))
