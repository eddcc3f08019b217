"""DeltaBlue: an incremental dataflow constraint solver (Freeman-Benson,
Maloney and Borning), exercised by its two classic workloads: a long chain of
equality constraints and a "projection" of scale/offset constraints.

Stresses: deep OO (class hierarchy with overridden methods, super()), list
queues, attribute-heavy code, identity comparisons. The workloads assert their
own answers; run() also returns a checksum of the values they computed.
"""

CHAIN = 100
PROJECTION = 100
EDITS = 100
REPEAT = 24


class Strength:
    def __init__(self, rank, name):
        self.rank = rank          # 0 is strongest
        self.name = name

    def stronger_than(self, other):
        return self.rank < other.rank

    def weaker_than(self, other):
        return self.rank > other.rank

    def weaker_of(self, other):
        return self if self.rank > other.rank else other

    def next_weaker(self):
        return NEXT_WEAKER[self.rank]

    def __repr__(self):
        return "Strength(%s)" % self.name


REQUIRED = Strength(0, "required")
STRONG_PREFERRED = Strength(1, "strongPreferred")
PREFERRED = Strength(2, "preferred")
STRONG_DEFAULT = Strength(3, "strongDefault")
NORMAL = Strength(4, "normal")
WEAK_DEFAULT = Strength(5, "weakDefault")
WEAKEST = Strength(6, "weakest")
NEXT_WEAKER = [WEAKEST, WEAKEST, STRONG_PREFERRED, NORMAL, WEAK_DEFAULT, WEAKEST, WEAKEST]

# direction of a binary constraint
NONE = 0
FORWARD = 1
BACKWARD = 2


class Variable:
    def __init__(self, name, value=0):
        self.name = name
        self.value = value
        self.constraints = []
        self.determined_by = None
        self.mark = 0
        self.walk_strength = WEAKEST
        self.stay = True

    def attach(self, c):
        self.constraints.append(c)

    def detach(self, c):
        self.constraints.remove(c)
        if self.determined_by is c:
            self.determined_by = None


class Constraint:
    def __init__(self, planner, strength):
        self.planner = planner
        self.strength = strength

    def install(self):
        self.add_to_graph()
        self.planner.incremental_add(self)

    def satisfy(self, mark):
        """Try to satisfy this constraint; return the constraint it overrode."""
        self.choose_method(mark)
        if not self.is_satisfied():
            if self.strength is REQUIRED:
                raise RuntimeError("could not satisfy a required constraint")
            return None
        self.mark_inputs(mark)
        out = self.output()
        overridden = out.determined_by
        if overridden is not None:
            overridden.mark_unsatisfied()
        out.determined_by = self
        if not self.planner.add_propagate(self, mark):
            raise RuntimeError("cycle encountered")
        out.mark = mark
        return overridden

    def destroy(self):
        if self.is_satisfied():
            self.planner.incremental_remove(self)
        else:
            self.remove_from_graph()

    def is_input(self):
        return False


class UnaryConstraint(Constraint):
    def __init__(self, planner, var, strength):
        Constraint.__init__(self, planner, strength)
        self.var = var
        self.satisfied = False
        self.install()

    def add_to_graph(self):
        self.var.attach(self)
        self.satisfied = False

    def choose_method(self, mark):
        self.satisfied = (self.var.mark != mark and
                          self.strength.stronger_than(self.var.walk_strength))

    def is_satisfied(self):
        return self.satisfied

    def mark_inputs(self, mark):
        pass

    def output(self):
        return self.var

    def recalculate(self):
        self.var.walk_strength = self.strength
        self.var.stay = not self.is_input()
        if self.var.stay:
            self.execute()

    def mark_unsatisfied(self):
        self.satisfied = False

    def inputs_known(self, mark):
        return True

    def remove_from_graph(self):
        self.var.detach(self)
        self.satisfied = False


class StayConstraint(UnaryConstraint):
    def execute(self):
        pass


class EditConstraint(UnaryConstraint):
    def is_input(self):
        return True

    def execute(self):
        pass


class BinaryConstraint(Constraint):
    def __init__(self, planner, a, b, strength):
        Constraint.__init__(self, planner, strength)
        self.a = a
        self.b = b
        self.direction = NONE
        self.install()

    def choose_method(self, mark):
        a, b, s = self.a, self.b, self.strength
        if a.mark == mark:
            if b.mark != mark and s.stronger_than(b.walk_strength):
                self.direction = FORWARD
            else:
                self.direction = NONE
            return
        if b.mark == mark:
            if a.mark != mark and s.stronger_than(a.walk_strength):
                self.direction = BACKWARD
            else:
                self.direction = NONE
            return
        if a.walk_strength.weaker_than(b.walk_strength):
            self.direction = BACKWARD if s.stronger_than(a.walk_strength) else NONE
        else:
            self.direction = FORWARD if s.stronger_than(b.walk_strength) else BACKWARD

    def add_to_graph(self):
        self.a.attach(self)
        self.b.attach(self)
        self.direction = NONE

    def is_satisfied(self):
        return self.direction != NONE

    def mark_inputs(self, mark):
        self.input().mark = mark

    def input(self):
        return self.a if self.direction == FORWARD else self.b

    def output(self):
        return self.b if self.direction == FORWARD else self.a

    def recalculate(self):
        src = self.input()
        out = self.output()
        out.walk_strength = self.strength.weaker_of(src.walk_strength)
        out.stay = src.stay
        if out.stay:
            self.execute()

    def mark_unsatisfied(self):
        self.direction = NONE

    def inputs_known(self, mark):
        src = self.input()
        return src.mark == mark or src.stay or src.determined_by is None

    def remove_from_graph(self):
        self.a.detach(self)
        self.b.detach(self)
        self.direction = NONE


class EqualityConstraint(BinaryConstraint):
    def execute(self):
        self.output().value = self.input().value


class ScaleConstraint(BinaryConstraint):
    """b = a * scale + offset (or solved for a when running backwards)."""

    def __init__(self, planner, a, scale, offset, b, strength):
        self.scale = scale
        self.offset = offset
        BinaryConstraint.__init__(self, planner, a, b, strength)

    def add_to_graph(self):
        super().add_to_graph()
        self.scale.attach(self)
        self.offset.attach(self)

    def remove_from_graph(self):
        super().remove_from_graph()
        self.scale.detach(self)
        self.offset.detach(self)

    def mark_inputs(self, mark):
        super().mark_inputs(mark)
        self.scale.mark = mark
        self.offset.mark = mark

    def execute(self):
        if self.direction == FORWARD:
            self.b.value = self.a.value * self.scale.value + self.offset.value
        else:
            self.a.value = (self.b.value - self.offset.value) // self.scale.value

    def recalculate(self):
        src = self.input()
        out = self.output()
        out.walk_strength = self.strength.weaker_of(src.walk_strength)
        out.stay = src.stay and self.scale.stay and self.offset.stay
        if out.stay:
            self.execute()


class Plan:
    def __init__(self):
        self.steps = []

    def add(self, c):
        self.steps.append(c)

    def execute(self):
        for c in self.steps:
            c.execute()


class Planner:
    def __init__(self):
        self.current_mark = 0

    def new_mark(self):
        self.current_mark += 1
        return self.current_mark

    def incremental_add(self, c):
        mark = self.new_mark()
        overridden = c.satisfy(mark)
        while overridden is not None:
            overridden = overridden.satisfy(mark)

    def incremental_remove(self, c):
        out = c.output()
        c.mark_unsatisfied()
        c.remove_from_graph()
        unsatisfied = self.remove_propagate_from(out)
        strength = REQUIRED
        while True:
            for u in unsatisfied:
                if u.strength is strength:
                    self.incremental_add(u)
            strength = strength.next_weaker()
            if strength is WEAKEST:
                break

    def make_plan(self, sources):
        mark = self.new_mark()
        plan = Plan()
        todo = list(sources)
        while todo:
            c = todo.pop(0)
            out = c.output()
            if out.mark != mark and c.inputs_known(mark):
                plan.add(c)
                out.mark = mark
                self.add_consumers(out, todo)
        return plan

    def plan_from(self, constraints):
        return self.make_plan([c for c in constraints if c.is_input() and c.is_satisfied()])

    def add_propagate(self, c, mark):
        todo = [c]
        while todo:
            d = todo.pop(0)
            if d.output().mark == mark:
                self.incremental_remove(c)
                return False
            d.recalculate()
            self.add_consumers(d.output(), todo)
        return True

    def remove_propagate_from(self, out):
        out.determined_by = None
        out.walk_strength = WEAKEST
        out.stay = True
        unsatisfied = []
        todo = [out]
        while todo:
            v = todo.pop(0)
            for c in v.constraints:
                if not c.is_satisfied():
                    unsatisfied.append(c)
            determining = v.determined_by
            for c in v.constraints:
                if c is not determining and c.is_satisfied():
                    c.recalculate()
                    todo.append(c.output())
        return unsatisfied

    def add_consumers(self, v, todo):
        determining = v.determined_by
        for c in v.constraints:
            if c is not determining and c.is_satisfied():
                todo.append(c)


def chain_test(n):
    """first = v1 = ... = last; editing first must propagate to last."""
    planner = Planner()
    chain = [Variable("v%d" % i) for i in range(n + 1)]
    for i in range(n):
        EqualityConstraint(planner, chain[i], chain[i + 1], REQUIRED)
    first, last = chain[0], chain[-1]
    StayConstraint(planner, last, STRONG_DEFAULT)
    edit = EditConstraint(planner, first, PREFERRED)
    plan = planner.plan_from([edit])
    total = 0
    for i in range(EDITS):
        first.value = i
        plan.execute()
        if last.value != i:
            raise AssertionError("chain test failed: %r != %r" % (last.value, i))
        total += last.value
    edit.destroy()
    return total


def change(planner, var, value):
    edit = EditConstraint(planner, var, PREFERRED)
    plan = planner.plan_from([edit])
    for _ in range(10):
        var.value = value
        plan.execute()
    edit.destroy()


def projection_test(n):
    """dst_i = src_i * scale + offset for every i; edit both ends."""
    planner = Planner()
    scale = Variable("scale", 10)
    offset = Variable("offset", 1000)
    src = dst = None
    dests = []
    for i in range(n):
        src = Variable("src%d" % i, i)
        dst = Variable("dst%d" % i, i)
        dests.append(dst)
        StayConstraint(planner, src, NORMAL)
        ScaleConstraint(planner, src, scale, offset, dst, REQUIRED)
    change(planner, src, 17)
    if dst.value != 1170:
        raise AssertionError("projection 1 failed: %r" % dst.value)
    change(planner, dst, 1050)
    if src.value != 5:
        raise AssertionError("projection 2 failed: %r" % src.value)
    change(planner, scale, 5)
    for i in range(n - 1):
        if dests[i].value != i * 5 + 1000:
            raise AssertionError("projection 3 failed at %d" % i)
    change(planner, offset, 2000)
    for i in range(n - 1):
        if dests[i].value != i * 5 + 2000:
            raise AssertionError("projection 4 failed at %d" % i)
    return sum(d.value for d in dests) + src.value + planner.current_mark


def run():
    out = []
    for _ in range(REPEAT):
        out.append((chain_test(CHAIN), projection_test(PROJECTION)))
    return out
