"""The profiler's call tree (pyjion.calltree) and its flame-graph exports (pyjion.flamegraph).

Each program runs in a fresh interpreter with pyjion.enable(profile=True), with the JIT off and
forced at threshold 0: the tree's paths and call counts must be the program's, and per function
its calls must add up to the flat profile's (the same calls, counted twice over)."""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = r'''
import threading
def leaf(n):
    s = 0
    for i in range(n):
        s += i
    return s
def a():
    return leaf(300) + leaf(300)
def b():
    return leaf(900)
def main():
    for _ in range(20):
        a()
        b()
def down(k):
    return 0 if k == 0 else 1 + down(k - 1)
'''

HARNESS = r'''
import json, sys, threading
import pyjion, pyjion.calltree
mode, depth, nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
g = {"__name__": "prog"}
exec(compile(open(sys.argv[4]).read(), "prog.py", "exec"), g)
pyjion.config(tree_depth=depth, tree_nodes=nodes)
pyjion.enable(profile=True, threshold=0, jit=(mode == "jit"))
g["main"]()
g["down"](40)
t = threading.Thread(target=g["main"])
t.start(); t.join()
pyjion.disable()
data = pyjion._eval.call_tree()
flat = pyjion.stats()["functions"]
def dump(node):
    return {"name": list(node.name), "calls": node.calls, "total": node.total_time,
            "own": node.own_time, "children": [dump(c) for c in node.children]}
roots = pyjion.calltree.call_tree(data)
print(json.dumps({"roots": [dump(r) for r in roots], "folded": data["folded"], "raw_nodes": len(data["nodes"]),
                  "raw_calls": sum(n[3] for n in data["nodes"]), "flat_calls": sum(v["calls"] for v in flat.values()),
                  "flat": {k[2]: v["calls"] for k, v in flat.items() if k[0] == "prog.py"},
                  "text": pyjion.calltree.format_tree(roots, min_percent=0)}))
'''


def run_tree(tmp_path, mode, depth=256, nodes=200000):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    harness = tmp_path / "harness.py"
    harness.write_text(HARNESS)
    env = dict(os.environ)
    env.pop("PYJION", None)
    out = subprocess.run([sys.executable, str(harness), mode, str(depth), str(nodes), str(prog)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def find(node, *path):
    """The child path `path` (function names) below `node`."""
    for name in path:
        matches = [c for c in node["children"] if c["name"][2] == name]
        assert len(matches) == 1, (name, [c["name"][2] for c in node["children"]])
        node = matches[0]
    return node


def prog_calls(node, into):
    if node["name"][0] == "prog.py":
        into[node["name"][2]] = into.get(node["name"][2], 0) + node["calls"]
    for c in node["children"]:
        prog_calls(c, into)
    return into


@pytest.mark.parametrize("mode", ["interp", "jit"])
def test_paths_and_counts(tmp_path, mode):
    result = run_tree(tmp_path, mode)
    main_root = next(r for r in result["roots"] if any(c["name"][2] == "main" for c in r["children"]))
    main = find(main_root, "main")
    assert main["calls"] == 1
    # leaf is two paths: under a (2 calls each) and under b.
    assert find(main, "a")["calls"] == 20
    assert find(main, "a", "leaf")["calls"] == 40
    assert find(main, "b", "leaf")["calls"] == 20
    # Time nests: a path's total covers its children's, its own time is part of its total.
    for path in (("a",), ("b",), ("a", "leaf")):
        node = find(main, *path)
        assert node["own"] <= node["total"] + 1e-9
        assert sum(c["total"] for c in node["children"]) <= node["total"] + 1e-6
    # Recursion is a path per level.
    down = find(main_root, "down")
    depth = 0
    while down["children"]:
        down = down["children"][0]
        depth += 1
    assert depth == 40 and down["calls"] == 1
    # The worker thread has a root of its own, with main's paths again.
    others = [r for r in result["roots"] if r is not main_root]
    assert any(find(r, "Thread._bootstrap", "Thread._bootstrap_inner", "Thread.run", "main", "b", "leaf")["calls"] == 20
               for r in others)
    # Every call is in the tree once: per function, the tree's calls are the flat profile's.
    tree_calls = {}
    for root in result["roots"]:
        prog_calls(root, tree_calls)
    assert tree_calls == result["flat"]
    assert result["raw_calls"] == result["flat_calls"]
    assert result["folded"] == 0
    assert any("└─ leaf  prog.py:3" in line for line in result["text"])


def test_depth_bound_folds_into_the_deepest_node(tmp_path):
    result = run_tree(tmp_path, "interp", depth=6)
    main_root = next(r for r in result["roots"] if any(c["name"][2] == "down" for c in r["children"]))
    node = find(main_root, "down")
    levels = 1
    while node["children"]:
        node = node["children"][0]
        levels += 1
    # The root is depth 0: down(40)'s 41 calls stop growing the path at depth 6 ...
    assert levels == 6
    # ... and the deeper calls are charged to that node, counted as folded.
    assert node["calls"] == 41 - 5
    assert result["folded"] >= 41 - 6
    # Its total time is its outermost call's, not the sum over the nested ones.
    assert node["total"] <= find(main_root, "down")["total"] + 1e-6
    tree_calls = {}
    for root in result["roots"]:
        prog_calls(root, tree_calls)
    assert tree_calls == result["flat"]


def test_size_bound(tmp_path):
    result = run_tree(tmp_path, "jit", nodes=16)
    assert result["raw_nodes"] <= 16 + 1     # the worker thread's root is made regardless
    assert result["folded"] > 0
    assert result["raw_calls"] == result["flat_calls"]    # folded calls still count, at an ancestor


def test_reset_stats_empties_the_tree():
    import pyjion
    import pyjion.calltree

    def work():
        return sum(range(10))

    pyjion.enable(profile=True, jit=False)
    try:
        work()
    finally:
        pyjion.disable()
    assert pyjion._eval.call_tree()["nodes"]
    pyjion.reset_stats()
    assert pyjion._eval.call_tree()["nodes"] == []
    with pytest.raises(ValueError):
        pyjion.config(tree_depth=0)


SHARES = r'''
import json, sys
import pyjion, pyjion.calltree, pyjion.flamegraph
def body(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def heavy():
    return body(30000)
def light():
    return body(10000)
def main(rounds):
    for _ in range(rounds):
        heavy()
        light()
pyjion.enable(profile=True, threshold=0, jit=sys.argv[1] == "jit")
main(3)                   # compiles happen here, not in what is measured
docs = []
for _ in range(5):        # the profiler takes wall time: the median of 5 leaves out a preempted run
    pyjion.reset_stats()
    main(200 if sys.argv[1] != "jit" else 600)    # about 0.3 s either way
    docs.append(pyjion.flamegraph.speedscope(pyjion.calltree.call_tree()))
pyjion.disable()
print(json.dumps(docs))
'''


@pytest.mark.parametrize("mode", ["interp", "jit"])
def test_known_shares(tmp_path, mode):
    """heavy() does three times light()'s work through the same function: 75% / 25% of the
    time below main, as the speedscope export reports it."""
    prog = tmp_path / "shares.py"
    prog.write_text(SHARES)
    env = dict(os.environ)
    env.pop("PYJION", None)
    r = subprocess.run([sys.executable, str(prog), mode], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    shares = []
    for doc in json.loads(r.stdout):
        frames = doc["shared"]["frames"]
        (profile,) = doc["profiles"]
        by_path = {}
        for stack, weight in zip(profile["samples"], profile["weights"]):
            names = [frames[i]["name"] for i in stack]
            if "body" in names:
                caller = names[names.index("body") - 1]
                by_path[caller] = by_path.get(caller, 0.0) + weight
        shares.append(by_path["heavy"] / (by_path["heavy"] + by_path["light"]))
    assert abs(sorted(shares)[2] - 0.75) < 0.05, shares


def test_speedscope_document(tmp_path):
    import pyjion.calltree
    import pyjion.flamegraph
    data = {"nodes": [(None, 1, -1, 0, 0.0, 0.0),
                      (test_speedscope_document.__code__, 0, 0, 1, 3.0, 1.0),
                      (find.__code__, 0, 1, 2, 2.0, 2.0)]}
    doc = pyjion.flamegraph.speedscope(pyjion.calltree.call_tree(data), name="x")
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    names = [f["name"] for f in doc["shared"]["frames"]]
    assert names == ["test_speedscope_document", "find"]
    (p,) = doc["profiles"]
    assert p["type"] == "sampled" and p["unit"] == "seconds"
    assert p["samples"] == [[0], [0, 1]] and p["weights"] == [1.0, 2.0]
    assert p["endValue"] == 3.0


HOT = r'''
def hot_function():
    s = 0
    for i in range(400000):
        s += i % 7
    return s
def cold_function():
    s = 0
    for i in range(20000):
        s += i % 7
    return s
hot_function(); cold_function()
'''

ZOOM = r'''<script>
var g = document.querySelector('g.node[data-label^="cold_function"]');
g.dispatchEvent(new MouseEvent('click'));
var r = g.querySelector('rect');
document.body.dataset.zoomedWidth = Math.round(parseFloat(r.getAttribute('width')));
</script></body>'''


def test_flame_graph_html_in_a_browser(tmp_path):
    """The page renders in a real headless browser, names the hot function, zooms on a click,
    and logs no script error."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "chromium is installed by tools/setup_system.sh"
    prog = tmp_path / "hot.py"
    prog.write_text(HOT)
    page = tmp_path / "hot.html"
    env = dict(os.environ)
    env.pop("PYJION", None)
    r = subprocess.run([sys.executable, "-m", "pyjion", "-o", str(page), str(prog)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    assert "<script" in text and 'src="' not in text and "<link" not in text   # self-contained
    # The same page with a click on the first real block, to see that zooming works.
    zoomed = tmp_path / "zoomed.html"
    zoomed.write_text(text.replace("</body>", ZOOM, 1))
    for path in (page, zoomed):
        out = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                              "--v=0", "--user-data-dir=" + str(tmp_path / "chrome"), "--dump-dom",
                              "file://" + str(path)],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert 'data-ready="yes"' in out.stdout           # the page's script ran to its end
        assert "Uncaught" not in out.stderr, out.stderr[-2000:]
        assert "hottest function: hot_function" in out.stdout
        assert "cold_function" in out.stdout
    # The clicked block now fills the width (1200 less the half-pixel gap;
    # w * W / w in floating point may land a hair below, so rounding may give 1199).
    zoomed_width = re.search(r'data-zoomed-width="(\d+)"', out.stdout)
    assert zoomed_width and int(zoomed_width.group(1)) in (1199, 1200), out.stdout[-2000:]
