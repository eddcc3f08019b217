// pybind11 bindings of the code generator: the Python-visible CompiledCode and
// compile(), and the C capsule through which the hook (pyjion._eval) compiles.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "runtime/attr_cache.h"
#include "front/bytecode.h"
#include "front/site_profile.h"
#include "opt/type_infer.h"
#include "cpython/frame_layout.h"
#include "runtime/unboxed.h"
#include "machine/code_heap.h"
#include "compile.h"
#include "machine/size_stats.h"
#include "codegen_api.h"
#include "runtime/direct_call.h"
#include "runtime/runtime.h"
#include "machine/perf_map.h"

namespace py = pybind11;
using pyjion::CompileError;
using pyjion::CompiledCode;

namespace {

// config(dump_asm=...): where each compile's assembly listing goes.
bool g_dump_asm = false;
std::string g_dump_asm_path;

int capsule_compile(PyObject *code, const PyjionCompileOptions *options, PyjionCompileResult *out)
{
    out->entry = nullptr;
    out->owner = nullptr;
    out->reason = nullptr;
    out->code_size = 0;
    out->instructions = 0;
    out->osr_entry = nullptr;
    out->tier = 0;
    const char *problem = nullptr;
    std::string text;
    try {
        if (!PyCode_Check(code)) {
            throw CompileError{PYJION_RESULT_COMPILER_ERROR, "not a code object"};
        }
        pyjion::CompileOptions opts;
        opts.debug = options != nullptr && options->debug;
        opts.max_instructions = options != nullptr ? options->max_instructions : 0;
        if (options != nullptr && options->compact_above >= 0) opts.compact_above = options->compact_above;
        opts.opt = options != nullptr && options->opt != 0;
        opts.opt_always = options != nullptr && options->opt == 2;
        opts.hot = options != nullptr && options->hot != 0;
        opts.arg_types = options != nullptr ? options->arg_types : 0;
        opts.resume_anywhere = options != nullptr && options->fallback != 0;
        opts.dump_asm = g_dump_asm ? &g_dump_asm_path : nullptr;
        std::unique_ptr<CompiledCode> compiled = pyjion::compile_code(reinterpret_cast<PyCodeObject *>(code), opts);
        out->entry = reinterpret_cast<PyjionEntry>(compiled->entry());
        out->code_size = static_cast<Py_ssize_t>(compiled->size());
        out->instructions = static_cast<Py_ssize_t>(compiled->marks().size());
        out->osr_entry = reinterpret_cast<PyjionEntry>(compiled->osr_entry());
        out->tier = compiled->exit_counts() != nullptr ? 2 : 1;
        py::object owner = py::cast(std::move(compiled));
        out->owner = owner.release().ptr();
        out->result = PYJION_RESULT_SUCCESS;
        return 0;
    } catch (const CompileError &e) {
        out->result = e.result;
        text = e.what;
    } catch (py::error_already_set &e) {
        out->result = PYJION_RESULT_COMPILER_ERROR;
        text = std::string("internal compiler error: ") + e.what();
    } catch (const std::exception &e) {
        out->result = PYJION_RESULT_COMPILER_ERROR;
        text = std::string("internal compiler error: ") + e.what();
    } catch (...) {
        out->result = PYJION_RESULT_COMPILER_ERROR;
        problem = "internal compiler error";
    }
    out->entry = nullptr;
    out->reason = PyUnicode_FromString(problem ? problem : text.c_str());
    if (out->reason == nullptr) return -1;
    return 0;
}

int capsule_osr_header(PyObject *owner, int unit, int *depth)
{
    try {
        const CompiledCode &code = py::handle(owner).cast<const CompiledCode &>();
        const pyjion::OsrLoop *loop = code.loop_around(unit);
        if (loop == nullptr) return -1;
        *depth = loop->depth;
        return loop->header;
    } catch (...) {
        PyErr_Clear();   // not a CompiledCode
        return -1;
    }
}

PyjionCodegenAPI api = {PYJION_CODEGEN_API_VERSION, capsule_compile, &pyjion::direct::hook_state,
                        capsule_osr_header, pyjion::direct::vectorcall};

}  // namespace

PYBIND11_MODULE(_codegen, m)
{
    m.doc() = "pyjion's code generator: CPython bytecode (3.11, 3.13) to x86-64 machine code with AsmJit";

    py::class_<CompiledCode>(m, "CompiledCode", "Machine code of one compiled code object.")
        .def_property_readonly("address", [](const CompiledCode &c) { return reinterpret_cast<uintptr_t>(c.entry()); })
        .def_property_readonly("size", &CompiledCode::size)
        .def_property_readonly("osr_loops", [](const CompiledCode &c) {
            py::list out;
            for (const auto &l : c.loops()) out.append(py::make_tuple(l.header * 2, l.end * 2, l.depth));
            return out;
        }, "[(header byte offset, last backward jump's byte offset, stack depth)] the OSR entry can enter")
        .def_property_readonly("code", [](const CompiledCode &c) {
            return py::bytes(static_cast<const char *>(c.entry()), c.size());
        })
        .def_property_readonly("boundaries", [](const CompiledCode &c) {
            py::list out;
            for (const auto &m : c.marks()) {
                out.append(py::make_tuple(m.native_offset, m.bytecode_offset, pyjion::opcode_name(m.opcode), m.oparg));
            }
            return out;
        }, "[(native offset, bytecode offset, opcode name, oparg)] at each bytecode boundary")
        .def_property_readonly("tier", [](const CompiledCode &c) { return c.exit_counts() != nullptr ? 2 : 1; },
                               "1: baseline code; 2: the optimising tier (unboxed ints and floats)")
        .def_property_readonly("exits", [](const CompiledCode &c) {
            py::dict out;
            if (const uint64_t *counts = c.exit_counts()) {
                for (int k = 0; k < pyjion::unboxed::kExitKinds; k++) {
                    if (counts[k] != 0) out[py::str(pyjion::unboxed::exit_name(k))] = counts[k];
                }
            }
            return out;
        }, "{exit name: times taken} of the optimising tier's side exits in this code")
        .def_property_readonly("calls", [](const CompiledCode &c) {
            py::list out;
            for (const auto &call : c.calls()) out.append(py::make_tuple(call.native_offset, call.name));
            return out;
        }, "[(native offset after the call, callee name)]");

    m.def("compile", [](py::object code, bool debug, int max_instructions, bool opt, unsigned arg_types) {
        if (!PyCode_Check(code.ptr())) throw py::type_error("compile() expects a code object");
        PyjionCompileOptions options{debug ? 1 : 0, max_instructions, -1, opt ? 2 : 0, 0, arg_types};
        PyjionCompileResult out;
        if (capsule_compile(code.ptr(), &options, &out) < 0) throw py::error_already_set();
        if (out.owner == nullptr) {
            py::str reason = py::reinterpret_steal<py::str>(out.reason);
            throw py::value_error(std::string("cannot compile: ") + std::string(reason));
        }
        return py::reinterpret_steal<py::object>(out.owner);
    }, py::arg("code"), py::arg("debug") = false, py::arg("max_instructions") = 0, py::arg("opt") = true,
       py::arg("arg_types") = 0,
       "Compiles a code object (without installing it); raises ValueError with the reason if it cannot. "
       "arg_types: PyjionCompileOptions.arg_types (2 bits per argument: 1 int, 2 float).");

    m.def("exit_counts", []() {
        py::dict out;
        for (int k = 0; k < pyjion::unboxed::kExitKinds; k++) {
            out[py::str(pyjion::unboxed::exit_name(k))] = pyjion::unboxed::g_exits[k];
        }
        return out;
    }, "{exit name: times taken} of the optimising tier's side exits, all code, since start-up.");

    m.def("site_profiles", [](py::object code) {
        if (!PyCode_Check(code.ptr())) throw py::type_error("site_profiles() expects a code object");
        auto *co = reinterpret_cast<PyCodeObject *>(code.ptr());
        py::list out;
        try {
            pyjion::Bytecode bytecode(co);
            for (const auto &p : pyjion::site_profiles(co, bytecode)) {
                out.append(py::make_tuple(p.unit * 2, pyjion::opcode_name(p.opcode), pyjion::quickened_name(p.quickened),
                                          pyjion::site_state_name(p.state), pyjion::seen_type_name(p.type)));
            }
        } catch (const pyjion::CompileError &e) {
            throw py::value_error("cannot decode: " + e.what);
        }
        return out;
    }, py::arg("code"),
       "[(bytecode offset, opcode, quickened opcode, state, type)] per profiled site: what CPython's "
       "specialising interpreter learnt there (front/site_profile.h).");

    m.def("infer_types", [](py::object code, unsigned arg_types) {
        if (!PyCode_Check(code.ptr())) throw py::type_error("infer_types() expects a code object");
        auto *co = reinterpret_cast<PyCodeObject *>(code.ptr());
        try {
            pyjion::Bytecode bytecode(co);
            // as the compiler decides: code the interpreter ran (3.11: warm,
            // quickened; 3.13: its RESUME checked) or a profile of arguments
            bool profiled = pyjion::layout::interpreter_specialised(co) || arg_types != 0;
            pyjion::opt::TypeInference types(co, bytecode, profiled, arg_types);
            return types.describe();
        } catch (const pyjion::CompileError &e) {
            throw py::value_error("cannot decode: " + e.what);
        }
    }, py::arg("code"), py::arg("arg_types") = 0,
       "The optimising tier's types before each instruction and its decision there, one line per "
       "instruction (opt/type_infer.h): offset, opcode, decision, typed locals, [stack].");

    m.def("frame_states", [](py::object code, bool debug) {
        if (!PyCode_Check(code.ptr())) throw py::type_error("frame_states() expects a code object");
        asmjit::CodeHolder holder;
        holder.init(asmjit::Environment::host());
        pyjion::CompileOptions options;
        options.debug = debug;
        options.record_states = true;
        py::list out;
        try {
            pyjion::Compiler compiler(reinterpret_cast<PyCodeObject *>(code.ptr()), holder, options);
            compiler.compile();
            const auto &marks = compiler.boundaries();
            const auto &states = compiler.recorded_states();
            for (size_t k = 0; k < marks.size() && k < states.size(); k++) {
                py::object state = states[k].empty() ? py::object(py::none()) : py::object(py::str(states[k]));
                out.append(py::make_tuple(marks[k].bytecode_offset, pyjion::opcode_name(marks[k].opcode), state));
            }
        } catch (const CompileError &e) {
            throw py::value_error("cannot compile: " + e.what);
        }
        return out;
    }, py::arg("code"), py::arg("debug") = true,
       "Compiles a code object (the machine code is dropped) and returns, for each instruction, "
       "(byte offset, opcode name, the frame model the compiler established at its boundary, as "
       "FrameState::describe() gives it: \"depth=N locals=[...] stack=[...]\"; None where it established "
       "none: unreachable, or implemented by the instruction before). debug: the compile-time checks "
       "of CompileOptions::debug too. Raises ValueError with the reason if it cannot compile.");

    m.def("debug_slot_problem", [](const std::string &kind, py::object value, bool null, py::object code,
                                   py::object type) {
        using pyjion::model::SlotKind;
        SlotKind k;
        PyCodeObject *co = PyCode_Check(code.ptr()) ? reinterpret_cast<PyCodeObject *>(code.ptr()) : nullptr;
        if (kind == "obj") {
            k = SlotKind::boxed();
        } else if (kind == "obj?") {
            k = SlotKind::boxed_or_null();
        } else if (kind == "null") {
            k = SlotKind::null();
        } else if (kind.rfind("const#", 0) == 0 && kind.size() > 6 &&
                   kind.find_first_not_of("0123456789", 6) == std::string::npos) {
            if (co == nullptr) throw py::type_error("a const# kind needs the code object as `code`");
            k = SlotKind::constant(static_cast<uint32_t>(std::stoul(kind.substr(6))));
        } else if (kind == "type") {
            if (!PyType_Check(type.ptr())) throw py::type_error("the type kind needs a type as `type`");
            k = SlotKind::known_type(reinterpret_cast<PyTypeObject *>(type.ptr()));
        } else {
            throw py::value_error("unknown slot kind " + kind);
        }
        const char *problem = pyjion::rt::debug_slot_problem(null ? nullptr : value.ptr(), k, co);
        return problem ? py::object(py::str(problem)) : py::object(py::none());
    }, py::arg("kind"), py::arg("value") = py::none(), py::kw_only(), py::arg("null") = false,
       py::arg("code") = py::none(), py::arg("type") = py::none(),
       "The debug check's test of one frame slot (config(debug=True)): what is wrong with a slot that "
       "holds `value` (NULL with null=True) where the model says `kind` (\"obj\", \"obj?\", \"null\", "
       "\"const#N\" of `code`'s co_consts, \"type\" exactly `type`), or None if nothing.");

    m.def("set_dump_asm", [](py::object path) {
        if (path.is_none()) {
            g_dump_asm = false;
            g_dump_asm_path.clear();
        } else {
            g_dump_asm_path = py::str(path);
            g_dump_asm = true;
        }
    }, py::arg("path"),
       "Writes the assembly listing of every later compile to `path` (appended; \"-\": stderr); None: stop.");
    m.def("get_dump_asm", []() -> py::object {
        if (!g_dump_asm) return py::none();
        return py::str(g_dump_asm_path);
    });

    m.def("set_perf_map", [](bool on) { pyjion::perf_map::set_enabled(on); }, py::arg("on"),
          "Appends every later block of machine code to /tmp/perf-<pid>.map (Linux perf's format) while on.");
    m.def("get_perf_map", []() -> py::object {
        if (!pyjion::perf_map::enabled()) return py::none();
        return py::str(pyjion::perf_map::path());
    }, "The perf map this process writes, or None when off.");

    m.def("code_heap_stats", []() {
        pyjion::code_heap::Stats s = pyjion::code_heap::stats();
        py::dict out;
        out["live_bytes"] = s.live_bytes;
        out["mapped_bytes"] = s.mapped_bytes;
        out["allocations"] = s.allocations;
        out["arenas"] = s.arenas;
        return out;
    }, "The code heap: {live_bytes (allocated blocks), mapped_bytes (all arenas), allocations, arenas}.");

    m.def("code_size_by_opcode", []() {
        pyjion::size_stats::Table t = pyjion::size_stats::totals();
        py::dict out;
        for (int i = 0; i <= pyjion::size_stats::kFrameBucket; i++) {
            if (t[i].instructions == 0 && t[i].hot_bytes == 0 && t[i].cold_bytes == 0) continue;
            const char *name = i == pyjion::size_stats::kFrameBucket ? "(frame)" : pyjion::opcode_name(i);
            out[py::str(name)] = py::make_tuple(t[i].instructions, t[i].hot_bytes, t[i].cold_bytes);
        }
        return out;
    }, "Machine code made so far, per opcode: {name: (instructions, hot bytes, cold bytes)}; "
       "'(frame)' is the prologue, epilogue, OSR entry, shared exits and the tracing checks between instructions.");

    m.def("vectorcall_calls", []() { return pyjion::direct::vectorcall_calls(); },
          "Calls of Python functions that pyjion's vectorcall made itself (frame pushed here) so far.");
    m.def("attr_load_misses", []() { return pyjion::rtn::load_misses(); },
          "LOAD_ATTR / LOAD_METHOD lookups compiled code left to the generic path so far (cache misses).");

    m.def("attr_fill_attempts", []() { return pyjion::rtn::fill_attempts(); },
          "Attribute-cache fills attempted after misses so far (an uncacheable site backs off).");

    api.cpython_vectorcall = pyjion::direct::function_vectorcall();
    m.attr("_C_API") = py::capsule(&api, "pyjion._codegen._C_API");
}
