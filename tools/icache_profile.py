"""Where a program misses the level-1 instruction cache, with pyjion's machine
code named per code object: callgrind's cache simulation (valgrind
--tool=callgrind --cache-sim=yes) of one command, its unknown ("???") code
mapped to compiled functions through the perf map (PYJION_PERF_MAP=1, see
pyjion.config(perf_map=...)).

    python tools/icache_profile.py [--top 25] [--json out.json] -- python prog.py ...

Prints the totals (instructions, L1 instruction-cache misses; the share in
machine code of pyjion's and in the rest), then the functions with the most
misses. Counts are repeatable for the same build and input (callgrind
simulates; the machine's load does not matter), so the miss total is a
steady figure to compare one code-generation change with the next."""
import argparse
import bisect
import json
import os
import re
import subprocess
import sys
import tempfile

# callgrind_annotate's rows: "Ir (pct) I1mr (pct)  file:function [object]"
ROW = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+([\d,]+|\.)\s+(?:\([^)]*\)\s+)?(.*)$")
UNKNOWN = re.compile(r"^\?\?\?:0x([0-9a-fA-F]+)")


def read_perf_map(path):
    """[(start, end, name)] sorted by start; a later line for an address wins."""
    blocks = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split(" ", 2)
                if len(parts) == 3:
                    start, size = int(parts[0], 16), int(parts[1], 16)
                    blocks[start] = (start, start + size, parts[2])
    return sorted(blocks.values())


def name_of(address, blocks, starts):
    i = bisect.bisect_right(starts, address) - 1
    if i >= 0 and blocks[i][0] <= address < blocks[i][1]:
        return blocks[i][2]
    return None


def parse_annotate(text):
    """[(Ir, I1mr, function)] of every row callgrind_annotate printed."""
    rows = []
    in_table = False
    for line in text.splitlines():
        if "file:function" in line:
            in_table = True
            continue
        if not in_table:
            continue
        m = ROW.match(line)
        if not m:
            if rows and not line.strip():
                break
            continue
        ir = int(m.group(1).replace(",", ""))
        miss = 0 if m.group(2) == "." else int(m.group(2).replace(",", ""))
        rows.append((ir, miss, m.group(3).strip()))
    return rows


def profile(command, env=None):
    """Runs `command` under callgrind's cache simulation; returns the summary dict."""
    env = dict(os.environ if env is None else env)
    env["PYJION_PERF_MAP"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.%p")
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--cache-sim=yes",
                               "--callgrind-out-file=" + out] + command,
                              env=env, capture_output=True, text=True)
        files = [f for f in os.listdir(tmp) if f.startswith("callgrind.")]
        if not files:
            raise RuntimeError("callgrind wrote no profile:\n" + proc.stderr[-2000:])
        # the first process's (a command that forks writes one file per process)
        files.sort(key=lambda f: int(f.split(".")[1]))
        pid = int(files[0].split(".")[1])
        annotated = subprocess.run(["callgrind_annotate", "--threshold=100", "--show=Ir,I1mr",
                                    "--sort=I1mr", os.path.join(tmp, files[0])],
                                   capture_output=True, text=True, check=True).stdout
    map_path = "/tmp/perf-%d.map" % pid
    blocks = read_perf_map(map_path)
    if os.path.exists(map_path):
        os.unlink(map_path)
    starts = [b[0] for b in blocks]
    totals = {"ir": 0, "i1mr": 0, "jit_ir": 0, "jit_i1mr": 0, "unknown_ir": 0, "unknown_i1mr": 0}
    by_function = {}
    for ir, miss, function in parse_annotate(annotated):
        totals["ir"] += ir
        totals["i1mr"] += miss
        m = UNKNOWN.match(function)
        if m:
            name = name_of(int(m.group(1), 16), blocks, starts)
            if name is None:
                totals["unknown_ir"] += ir
                totals["unknown_i1mr"] += miss
                name = "??? (no map entry)"
            else:
                totals["jit_ir"] += ir
                totals["jit_i1mr"] += miss
            function = name
        else:
            function = re.sub(r"^.*?/Python-3\.\d+\.\d+/", "", function)
        entry = by_function.setdefault(function, [0, 0])
        entry[0] += ir
        entry[1] += miss
    return {"command": command, "returncode": proc.returncode, "totals": totals,
            "compiled_blocks": len(blocks),
            "functions": sorted(([f, ir, miss] for f, (ir, miss) in by_function.items()),
                                key=lambda r: -r[2])}


def report(summary, top):
    t = summary["totals"]

    def share(part, whole):
        return 100.0 * part / whole if whole else 0.0

    print("instructions      %15s" % format(t["ir"], ","))
    print("L1i misses        %15s  (%.2f per 1000 instructions)" % (format(t["i1mr"], ","),
                                                                      1000.0 * t["i1mr"] / max(t["ir"], 1)))
    print("in pyjion's code  %5.1f%% of instructions, %5.1f%% of misses (%d blocks in the map)"
          % (share(t["jit_ir"], t["ir"]), share(t["jit_i1mr"], t["i1mr"]), summary["compiled_blocks"]))
    if t["unknown_ir"]:
        print("unnamed code      %5.1f%% of instructions, %5.1f%% of misses"
              % (share(t["unknown_ir"], t["ir"]), share(t["unknown_i1mr"], t["i1mr"])))
    print()
    print("%14s %12s %9s  function" % ("instructions", "L1i misses", "per 1000"))
    for function, ir, miss in summary["functions"][:top]:
        print("%14s %12s %9.1f  %s" % (format(ir, ","), format(miss, ","), 1000.0 * miss / max(ir, 1),
                                        function[:110]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--json", help="also write the summary here")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    summary = profile(command)
    report(summary, args.top)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return summary["returncode"]


if __name__ == "__main__":
    sys.exit(main())
