"""bench/macro_suite.py's bookkeeping: per-version result files and package
folders, the no-compile side's environment, the order of a round's runs,
option checks, merging part-suite runs and the generated table. Nothing
here runs a macro program."""
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "bench"))

import macro_suite  # noqa: E402  (puts tools/ on the path)
import macro_packages  # noqa: E402


def test_result_files_and_package_folders_per_version():
    assert macro_suite.result_paths("3.11") == (os.path.join(REPO, "bench", "MACRO.json"),
                                                 os.path.join(REPO, "bench", "MACRO.md"))
    assert macro_suite.result_paths("3.13") == (os.path.join(REPO, "bench", "MACRO-3.13.json"),
                                                 os.path.join(REPO, "bench", "MACRO-3.13.md"))
    assert macro_packages.site_dir((3, 11)) == os.path.join(REPO, "build", "macro", "site")
    assert macro_packages.site_dir((3, 13)) == os.path.join(REPO, "build", "macro", "site-3.13")
    assert macro_packages.SITE == macro_packages.site_dir(sys.version_info[:2])


def test_side_environments(monkeypatch):
    monkeypatch.setenv("PYJION_THRESHOLD", "7")          # the caller's PYJION* never leak into stock
    monkeypatch.setenv("PYTHONPATH", "/some/checkout")
    sides = macro_suite.side_envs({"PYJION_THRESHOLD": "50"}, no_compile=True)
    assert set(sides) == {"stock", "jit", "nocompile"}
    assert not [k for k in sides["stock"] if k.startswith("PYJION")]
    assert sides["jit"]["PYJION"] == "1" and sides["jit"]["PYJION_THRESHOLD"] == "50"
    assert "PYJION_JIT" not in sides["jit"]
    assert sides["nocompile"]["PYJION"] == "1" and sides["nocompile"]["PYJION_JIT"] == "0"
    assert sides["nocompile"]["PYJION_THRESHOLD"] == "50"
    for env in sides.values():
        assert env["PYTHONPATH"] == os.pathsep.join(["/some/checkout", macro_packages.SITE])
        assert env["PYTHONHASHSEED"] == "0"
    assert set(macro_suite.side_envs({}, no_compile=False)) == {"stock", "jit"}
    keys = macro_suite.side_keys({"PYJION_THRESHOLD": "50"})
    assert keys == {"jit": "PYJION=1 PYJION_THRESHOLD=50",
                    "nocompile": "PYJION=1 PYJION_JIT=0 PYJION_THRESHOLD=50"}
    assert macro_suite.is_no_compile(keys["nocompile"]) and not macro_suite.is_no_compile(keys["jit"])


def test_round_order_rotates():
    two = {"stock": {}, "jit": {}}
    assert [macro_suite.side_order(two, r) for r in range(3)] == [
        ("stock", "jit"), ("jit", "stock"), ("stock", "jit")]
    three = {"stock": {}, "jit": {}, "nocompile": {}}
    orders = [macro_suite.side_order(three, r) for r in range(3)]
    assert orders[0] == ("stock", "jit", "nocompile")
    # over three rounds each side runs first once, and after each other side once
    assert sorted(o[0] for o in orders) == ["jit", "nocompile", "stock"]
    assert sorted(o[2] for o in orders) == ["jit", "nocompile", "stock"]


def test_option_checks(capsys):
    args = macro_suite.parse_args(["cycles", "--no-compile", "--kinds", "whole",
                                   "--programs", "json_indent,sympy_calculus"])
    assert args.no_compile and args.kinds == ("whole",)
    assert args.programs == ["json_indent", "sympy_calculus"] and args.extra == {}
    assert macro_suite.parse_args(["cycles", "--kinds", "steady,whole"]).kinds == ("whole", "steady")
    assert macro_suite.parse_args(["whole"]).programs == macro_suite.all_programs()
    for bad in (["cycles", "--kinds", "wole"], ["cycles", "--kinds", ","],
                ["whole", "--programs", "no_such_program"],
                ["whole", "--jit-env", "PYJION_JIT=0"],          # --no-compile's own switch
                ["whole", "--jit-env", "NOEQUALS"]):
        with pytest.raises(SystemExit):
            macro_suite.parse_args(bad)
    assert "--kinds" in capsys.readouterr().err


def test_unsupported_programs_are_left_out_and_refused(monkeypatch):
    monkeypatch.setitem(macro_suite.UNSUPPORTED, macro_suite.VERSION, {"json_indent": "no wheel"})
    assert "json_indent" not in macro_suite.all_programs()
    assert "json_indent" in macro_suite.every_program()
    with pytest.raises(SystemExit):
        macro_suite.parse_args(["whole", "--programs", "json_indent"])


def cycles_row(ratio, commit):
    return {"stock": {}, "jit": {}, "cycles_ratio": ratio, "ir_ratio": ratio, "i1_miss_ratio": 1.0,
            "commit": commit}


def test_a_one_kind_cycles_run_keeps_the_other_kind():
    old = {"commit": "a", "programs": {"json_indent": {"whole": cycles_row(1.1, "a"),
                                                       "steady": cycles_row(1.2, "a")},
                                       "dataclass_sim": {"whole": cycles_row(1.3, "a")}}}
    new = {"commit": "b", "programs": {"json_indent": {"whole": cycles_row(0.9, "b")}}}
    merged = macro_suite.merge_result("cycles", old, new, ["json_indent"])
    row = merged["programs"]["json_indent"]
    assert row["whole"]["cycles_ratio"] == 0.9 and row["steady"]["cycles_ratio"] == 1.2
    assert merged["programs"]["dataclass_sim"]["whole"]["cycles_ratio"] == 1.3   # a part-suite run
    assert macro_suite.row_commits("cycles", merged) == ["a", "b"]
    # rows from before rows had a commit take their old section's
    old = {"commit": "a", "programs": {"json_indent": {"steady": dict(cycles_row(1.2, "a"))}}}
    del old["programs"]["json_indent"]["steady"]["commit"]
    merged = macro_suite.merge_result("cycles", old, new, ["json_indent"])
    assert macro_suite.row_commits("cycles", dict(merged, commit="b")) == ["a", "b"]
    # whole/steady rows are replaced whole
    old = {"commit": "a", "programs": {"json_indent": {"cpu_ratio": 1.0, "pairs": 9}}}
    new = {"commit": "b", "programs": {"json_indent": {"cpu_ratio": 0.8, "pairs": 5}}}
    assert macro_suite.merge_result("whole", old, new, ["json_indent"])["programs"] == new["programs"]


def test_table(tmp_path, monkeypatch):
    data = {"PYJION=1": {"cycles": {"commit": "b", "date": "d", "note": "n", "programs": {
                "json_indent": {"whole": cycles_row(0.98, "b")},
                "dataclass_sim": {"whole": cycles_row(1.2, "b")}}}},
            "PYJION=1 PYJION_JIT=0": {"cycles": {"commit": "b", "date": "d", "note": "n", "programs": {
                "json_indent": {"whole": cycles_row(0.995, "b")}}}}}
    path = tmp_path / "MACRO-3.13.md"
    macro_suite.render_md(json.loads(json.dumps(data)), "3.13", str(path))
    text = path.read_text()
    assert text.startswith("# Macro suite: library-heavy programs, stock CPython 3.13 vs pyjion")
    assert "`make bench-macro PYVER=3.13`" in text and "bench/MACRO-3.13.json" in text
    assert "| json_indent | - | - | - | - | - | 0.980x | - | - | - |" in text
    assert "Cycles, whole process: geomean %.3fx, lowest 0.980x; below 1.0x: json_indent." % (
        (0.98 * 1.2) ** 0.5) in text
    no_compile = text[text.index("`PYJION=1 PYJION_JIT=0`"):]
    assert "compiling nothing" in no_compile and "0.995x" in no_compile
    assert "warm-up machinery alone (cycles, whole process): 0.5% over the geomean, at most 0.5% " \
           "(json_indent); programs within 1%: json_indent." in no_compile
    monkeypatch.setitem(macro_suite.UNSUPPORTED, "3.13", {"genshi_templates": "its C speedups do not build"})
    macro_suite.render_md(data, "3.13", str(path))
    assert "- genshi_templates: its C speedups do not build" in path.read_text()
    assert "stdlib_text" in path.read_text()          # 3.13's note on results that differ from 3.11's


def test_report_mode_writes_the_table_from_the_json(tmp_path, monkeypatch):
    data = {"PYJION=1": {"whole": {"commit": "c", "date": "d", "note": "n", "programs": {
        "json_indent": {"pairs": 5, "stock_cpu_s": 0.1, "jit_cpu_s": 0.1, "cpu_ratio": 0.951,
                        "cpu_ratios": [], "rss_ratio": 1.1, "stock_rss_mb": 20.0, "commit": "c"}}}}}
    (tmp_path / "m.json").write_text(json.dumps(data))
    monkeypatch.setattr(macro_suite, "JSON_PATH", str(tmp_path / "m.json"))
    monkeypatch.setattr(macro_suite, "MD_PATH", str(tmp_path / "m.md"))
    assert macro_suite.main(["report"]) == 0
    text = (tmp_path / "m.md").read_text()
    assert "stock CPython %s vs pyjion" % macro_suite.VERSION in text
    assert "| json_indent | 0.100 | 0.951x | 1.100x |" in text
