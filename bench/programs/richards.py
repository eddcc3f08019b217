"""Richards: Martin Richards' operating-system scheduler simulation.

Six tasks (idle, worker, two handlers, two devices) exchange packets through a
priority scheduler. Stresses: method calls, attribute reads and writes,
polymorphic dispatch through a task object, small integer bit operations,
linked lists built from objects. Result: (packets queued, times a task held),
which for 1000 idle iterations must be (2322, 928) per run of the scheduler.
"""

IDLE_COUNT = 1000
REPEAT = 30

ID_IDLE = 0
ID_WORKER = 1
ID_HANDLER_A = 2
ID_HANDLER_B = 3
ID_DEVICE_A = 4
ID_DEVICE_B = 5
TASK_SLOTS = 6

KIND_DEVICE = 0
KIND_WORK = 1

PAYLOAD = 4

# task state bits
RUNNING = 0
RUNNABLE = 1
SUSPENDED = 2
HELD = 4
SUSPENDED_RUNNABLE = SUSPENDED | RUNNABLE
ALL_BUT_HELD = ~HELD


class Packet:
    def __init__(self, link, owner, kind):
        self.link = link
        self.owner = owner
        self.kind = kind
        self.datum = 0
        self.payload = [0] * PAYLOAD

    def append_to(self, queue):
        """Put this packet at the end of queue; return the queue's head."""
        self.link = None
        if queue is None:
            return self
        node = queue
        while node.link is not None:
            node = node.link
        node.link = self
        return queue


class ControlBlock:
    def __init__(self, link, ident, priority, queue, task):
        self.link = link
        self.ident = ident
        self.priority = priority
        self.queue = queue
        self.task = task
        self.state = SUSPENDED if queue is None else SUSPENDED_RUNNABLE

    def blocked(self):
        return (self.state & HELD) != 0 or self.state == SUSPENDED

    def step(self):
        if self.state == SUSPENDED_RUNNABLE:
            packet = self.queue
            self.queue = packet.link
            self.state = RUNNING if self.queue is None else RUNNABLE
        else:
            packet = None
        return self.task.step(packet)

    def deliver(self, sender, packet):
        """Queue packet here; return the block that should run next."""
        if self.queue is None:
            self.queue = packet
            self.state |= RUNNABLE
            if self.priority > sender.priority:
                return self
        else:
            self.queue = packet.append_to(self.queue)
        return sender


class Scheduler:
    def __init__(self):
        self.queued = 0
        self.held = 0
        self.slots = [None] * TASK_SLOTS
        self.chain = None
        self.current = None
        self.current_id = None

    def add(self, ident, priority, queue, task):
        block = ControlBlock(self.chain, ident, priority, queue, task)
        self.chain = block
        self.current = block
        self.slots[ident] = block
        return block

    def run(self):
        block = self.chain
        while block is not None:
            if block.blocked():
                block = block.link
            else:
                self.current = block
                self.current_id = block.ident
                block = block.step()

    def release(self, ident):
        block = self.slots[ident]
        if block is None:
            return block
        block.state &= ALL_BUT_HELD
        if block.priority > self.current.priority:
            return block
        return self.current

    def hold_current(self):
        self.held += 1
        self.current.state |= HELD
        return self.current.link

    def suspend_current(self):
        self.current.state |= SUSPENDED
        return self.current

    def send(self, packet):
        target = self.slots[packet.owner]
        if target is None:
            return target
        self.queued += 1
        packet.link = None
        packet.owner = self.current_id
        return target.deliver(self.current, packet)


class IdleTask:
    def __init__(self, sched, seed, count):
        self.sched = sched
        self.seed = seed
        self.count = count

    def step(self, packet):
        self.count -= 1
        if self.count == 0:
            return self.sched.hold_current()
        if self.seed & 1 == 0:
            self.seed >>= 1
            return self.sched.release(ID_DEVICE_A)
        self.seed = (self.seed >> 1) ^ 0xD008
        return self.sched.release(ID_DEVICE_B)


class DeviceTask:
    def __init__(self, sched):
        self.sched = sched
        self.pending = None

    def step(self, packet):
        if packet is None:
            if self.pending is None:
                return self.sched.suspend_current()
            out = self.pending
            self.pending = None
            return self.sched.send(out)
        self.pending = packet
        return self.sched.hold_current()


class WorkerTask:
    def __init__(self, sched, destination):
        self.sched = sched
        self.destination = destination
        self.letter = 0

    def step(self, packet):
        if packet is None:
            return self.sched.suspend_current()
        if self.destination == ID_HANDLER_A:
            self.destination = ID_HANDLER_B
        else:
            self.destination = ID_HANDLER_A
        packet.owner = self.destination
        packet.datum = 0
        for i in range(PAYLOAD):
            self.letter += 1
            if self.letter > 26:
                self.letter = 1
            packet.payload[i] = self.letter
        return self.sched.send(packet)


class HandlerTask:
    def __init__(self, sched):
        self.sched = sched
        self.work = None
        self.devices = None

    def step(self, packet):
        if packet is not None:
            if packet.kind == KIND_WORK:
                self.work = packet.append_to(self.work)
            else:
                self.devices = packet.append_to(self.devices)
        if self.work is not None:
            index = self.work.datum
            if index < PAYLOAD:
                if self.devices is not None:
                    dev = self.devices
                    self.devices = dev.link
                    dev.datum = self.work.payload[index]
                    self.work.datum = index + 1
                    return self.sched.send(dev)
            else:
                done = self.work
                self.work = done.link
                return self.sched.send(done)
        return self.sched.suspend_current()


def simulate(idle_count):
    s = Scheduler()
    s.add(ID_IDLE, 0, None, IdleTask(s, 1, idle_count)).state = RUNNING

    q = Packet(Packet(None, ID_WORKER, KIND_WORK), ID_WORKER, KIND_WORK)
    s.add(ID_WORKER, 1000, q, WorkerTask(s, ID_HANDLER_A))

    q = None
    for _ in range(3):
        q = Packet(q, ID_DEVICE_A, KIND_DEVICE)
    s.add(ID_HANDLER_A, 2000, q, HandlerTask(s))

    q = None
    for _ in range(3):
        q = Packet(q, ID_DEVICE_B, KIND_DEVICE)
    s.add(ID_HANDLER_B, 3000, q, HandlerTask(s))

    s.add(ID_DEVICE_A, 4000, None, DeviceTask(s))
    s.add(ID_DEVICE_B, 5000, None, DeviceTask(s))
    s.run()
    return s.queued, s.held


def run():
    results = [simulate(IDLE_COUNT) for _ in range(REPEAT)]
    if results[0] != (2322, 928):
        raise AssertionError("richards computed %r, expected (2322, 928)" % (results[0],))
    return results
