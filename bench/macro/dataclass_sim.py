"""An object-oriented discrete-event simulation: dataclasses (ordered,
frozen), enums, properties, a heapq event queue and dict-based state, as
business-logic code is written. Result: the simulation's statistics."""
import dataclasses
import enum
import heapq
import random


class Kind(enum.Enum):
    ARRIVE = 1
    START = 2
    FINISH = 3


class Priority(enum.IntEnum):
    LOW = 0
    NORMAL = 1
    HIGH = 2


@dataclasses.dataclass(order=True)
class Event:
    time: float
    seq: int
    kind: Kind = dataclasses.field(compare=False)
    job: "Job" = dataclasses.field(compare=False)


@dataclasses.dataclass(frozen=True)
class Spec:
    name: str
    work: float
    priority: Priority


@dataclasses.dataclass
class Job:
    ident: int
    spec: Spec
    arrived: float
    started: float = -1.0
    finished: float = -1.0

    @property
    def waited(self):
        return self.started - self.arrived


class Shop:
    def __init__(self, workers, seed):
        self.rng = random.Random(seed)
        self.free = workers
        self.queue = []
        self.events = []
        self.seq = 0
        self.done = []
        self.by_priority = {p: 0 for p in Priority}

    def schedule(self, time, kind, job):
        self.seq += 1
        heapq.heappush(self.events, Event(time, self.seq, kind, job))

    def arrive(self, now, job):
        self.by_priority[job.spec.priority] += 1
        heapq.heappush(self.queue, (-job.spec.priority, job.ident, job))
        self.try_start(now)

    def try_start(self, now):
        while self.free and self.queue:
            _, _, job = heapq.heappop(self.queue)
            self.free -= 1
            job.started = now
            self.schedule(now + job.spec.work * self.rng.uniform(0.5, 1.5), Kind.FINISH, job)

    def finish(self, now, job):
        job.finished = now
        self.free += 1
        self.done.append(job)
        self.try_start(now)

    def run(self, jobs):
        specs = [Spec("s%d" % i, 1.0 + i % 4, Priority(i % 3)) for i in range(12)]
        t = 0.0
        for i in range(jobs):
            t += self.rng.expovariate(1.2)
            self.schedule(t, Kind.ARRIVE, Job(i, specs[i % len(specs)], t))
        handlers = {Kind.ARRIVE: self.arrive, Kind.FINISH: self.finish}
        while self.events:
            ev = heapq.heappop(self.events)
            handlers[ev.kind](ev.time, ev.job)
        waits = [j.waited for j in self.done]
        return (len(self.done), round(sum(waits) / len(waits), 6), round(max(waits), 6),
                {p.name: n for p, n in self.by_priority.items()},
                dataclasses.asdict(self.done[-1].spec)["name"])


def run():
    return [Shop(workers, seed).run(6000) for workers, seed in ((2, 1), (3, 2), (5, 3))]


if __name__ == "__main__":
    print(run())
