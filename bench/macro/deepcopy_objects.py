"""copy.deepcopy of nested data: dicts of lists of tuples, objects with
__dict__ and __slots__, dataclasses, shared and cyclic references. Result: a
walk over the copy's contents."""
import copy
import dataclasses


@dataclasses.dataclass
class Point:
    x: float
    y: float
    tags: list


class Node:
    def __init__(self, name, children):
        self.name = name
        self.children = children
        self.parent = None


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b


def make_data(n):
    shared = ["shared", 1, 2.0]
    nodes = []
    for i in range(n):
        node = Node("n%d" % i, [Point(i, -i, ["p", i]), Slotted(i, (i, str(i)))])
        node.parent = nodes[-1] if nodes else None
        nodes.append(node)
    return {"nodes": nodes, "shared": [shared] * 20, "table": {i: (i, [i] * 3, {"k": i}) for i in range(n)},
            "frozen": frozenset(range(50)), "text": ["abc" * (i % 5) for i in range(n)]}


def walk(value, seen):
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, dict):
        return 1 + sum(walk(k, seen) + walk(v, seen) for k, v in value.items())
    if isinstance(value, (list, tuple, frozenset)):
        return 1 + sum(walk(v, seen) for v in value)
    if isinstance(value, Node):
        return 1 + walk(value.children, seen) + walk(value.parent, seen)
    if isinstance(value, Point):
        return 1 + walk(value.tags, seen)
    if isinstance(value, Slotted):
        return 1 + walk(value.b, seen)
    return 1


def run():
    data = make_data(250)
    total = 0
    for _ in range(18):
        clone = copy.deepcopy(data)
        total += walk(clone, set())
    return total


if __name__ == "__main__":
    import sys
    sys.setrecursionlimit(10000)
    print(run())
