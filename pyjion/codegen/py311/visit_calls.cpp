// CPython 3.11's calls: PRECALL, KW_NAMES and CALL ([NULL, callable, args]
// or [method, self, args]), with the C-call caches and direct calls, and
// CALL_FUNCTION_EX, MAKE_FUNCTION (its 3.11 operand).
#include "baseline/compiler.h"

#include "codegen_api.h"
#include "cpython/interp_state.h"
#include "front/opcodes.h"
#include "runtime/runtime.h"
#include "runtime/runtime_slots.h"
#include "baseline/specialize.h"
#include "baseline/visit_util.h"
#include "runtime/arg_binding.h"
#include "runtime/call_cache.h"
#include "baseline/direct_call_emit.h"
#include "runtime/direct_call.h"
#include "runtime/profiled_call.h"
#include "runtime/runtime_objects.h"

namespace pyjion {

using namespace asmjit;
using visit::push_result;
using visit::check_status;

// [NULL, bound method, args] -> [function, self, args], as the interpreter's
// PRECALL does; the call itself happens in CALL. PRECALL's stack effect is
// -oparg (the arguments are counted as consumed here), CALL's is -1.
void Compiler::visit_PRECALL(const Instr &ins)
{
    auto &a = em_.as();
    int base = depth_ - ins.oparg - 2;
    int unit = ins.index;
    if (compact_site() && quickened_opcode(unit) == PRECALL_PYFUNC) {
        // Only plain functions were called here: no bound method to unpack
        // inline (one that comes takes CALL's generic path, which calls it
        // as it is).
        drop(ins.oparg);
        return;
    }
    Label done = a.newLabel();
    Label unpack = em_.cold([this, base, unit, done](Emitter &e) {
        e.set_prev_instr(unit);
        e.call<&objrt::precall_unpack_method>(Lea(e.stack(base)));
        e.as().jmp(done);
    });
    a.cmp(em_.stack(base), 0);
    a.jne(done);
    a.mov(x86::rax, em_.stack(base + 1));
    em_.load_address(x86::rcx, &PyMethod_Type);
    a.cmp(x86::qword_ptr(x86::rax, offsetof(PyObject, ob_type)), x86::rcx);
    a.je(unpack);
    a.bind(done);
    drop(ins.oparg);
}

// KW_NAMES only names a constant; CALL finds it (see kw_names_for).
void Compiler::visit_KW_NAMES(const Instr &ins)
{
    if (ins.oparg < 0 || ins.oparg >= PyTuple_GET_SIZE(code_->co_consts) ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(code_->co_consts, ins.oparg))) {
        unsupported(ins);
    }
}

// At a CALL without keyword names, [NULL, callable, args...] or [descriptor,
// self, args...] from slot `base`: when the callable is the one `site` holds
// (for the same slot arrangement), the cached call, with its result (or NULL)
// in rax when the code falls through; anything else goes to `miss`.
// `method_likely`: the arrangement the slot's producer suggests (see
// method_slot_likely); the other one is checked out of line.
static void emit_cached_c_call(Compiler &c, int base, CallCache *site, const Label &miss, bool method_likely)
{
    auto &a = c.as();
    auto &em = c.em();
    Label other = a.newLabel(), go = a.newLabel();
    // rax = the callable found; rsi = the arguments if it and the slot
    // arrangement are the cached ones.
    auto match = [&](bool in_method_slot) {
        if (!in_method_slot) a.mov(x86::rax, em.stack(base + 1));
        a.cmp(x86::rax, x86::qword_ptr(x86::r11, offsetof(CallCache, callable)));
        a.jne(miss);
        a.cmp(x86::dword_ptr(x86::r11, offsetof(CallCache, is_meth)), 0);
        if (in_method_slot) a.je(miss); else a.jne(miss);
        a.lea(x86::rsi, em.stack(base + (in_method_slot ? 1 : 2)));
    };
    em.load_address(x86::r11, site);
    a.mov(x86::rax, em.stack(base));
    a.test(x86::rax, x86::rax);
    if (method_likely) a.jz(other); else a.jnz(other);
    match(method_likely);
    em.out_of_line([&] {
        a.bind(other);
        match(!method_likely);
        a.jmp(go);
    });
    a.bind(go);
    a.mov(x86::rdi, x86::r11);
    a.mov(x86::rdx, Emitter::tstate);
    a.lea(x86::rcx, Emitter::frame_address());
    a.call(x86::qword_ptr(x86::r11, offsetof(CallCache, call)));
}

// The code names an attribute `append` (co_names): only then can a CALL find
// list.append's descriptor in its method slot, which only LOAD_METHOD puts
// there (so the append path is not emitted at the other one-argument calls).
static bool names_append(PyCodeObject *code)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(code->co_names); i++) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(code->co_names, i), "append") == 0) return true;
    }
    return false;
}

// While the profiler runs (it may have stopped since the compile), the
// inline append of code compiled while profiling counts a call of
// list.append (`key`: its profiler entry) with PyjionHookState.c_call_count,
// or leaves it to the timed C call where the hook counts none. Reloads the
// list (rdi) and its size (rcx), which the count clobbers.
static void emit_append_count(Emitter &e, int base, void *key, const Label &not_append)
{
    auto &a = e.as();
    Label counted = a.newLabel();
    e.load_address(x86::rax, &direct::hook_state);
    a.cmp(x86::dword_ptr(x86::rax, offsetof(PyjionHookState, profiling)), 0);
    a.je(counted);
    a.mov(x86::rax, x86::qword_ptr(x86::rax, offsetof(PyjionHookState, c_call_count)));
    a.test(x86::rax, x86::rax);
    a.jz(not_append);
    e.load_address(x86::rdi, key);
    a.call(x86::rax);
    a.mov(x86::rdi, e.stack(base + 1));
    a.mov(x86::rcx, x86::qword_ptr(x86::rdi, layout::kVarSize));
    a.bind(counted);
}

// Whether the slot below a CALL's callable (slot `base`) most likely holds a
// method rather than NULL: by the instruction that pushed it, found by going
// back through the straight-line code before the call (LOAD_METHOD: likely a
// method; LOAD_GLOBAL's or PUSH_NULL's NULL, or not found: likely NULL). Only
// the code layout depends on it: both arrangements are tested at run time.
bool Compiler::method_slot_likely(int base) const
{
    const auto &instrs = bytecode_.instrs();
    for (int j = bytecode_.instr_at(cur_->start) - 1; j >= 0; j--) {
        const Instr &prev = instrs[j];
        if (prev.depth < 0) return false;
        // LOAD_METHOD replaces the object in slot `base` with [method or NULL, self]
        if (prev.opcode == LOAD_METHOD && prev.depth == base + 1) return true;
        if (prev.depth <= base) return false;   // LOAD_GLOBAL's NULL, PUSH_NULL, ...
        if (bytecode_.is_jump_target(prev.start)) return false;
    }
    return false;
}

void Compiler::visit_CALL(const Instr &ins)
{
    auto &a = em_.as();
    // The keyword names of this call: a KW_NAMES before its PRECALL (the
    // compiler emits KW_NAMES, PRECALL, CALL back to back).
    PyObject *kwnames = nullptr;
    int precall = ins.index;
    int k = bytecode_.instr_at(ins.start);
    for (int j = k - 1; j >= 0; j--) {
        int op = bytecode_.instrs()[j].opcode;
        if (op == PRECALL && precall == ins.index) precall = bytecode_.instrs()[j].index;
        if (op == PRECALL || op == NOP) continue;
        if (op == KW_NAMES) kwnames = PyTuple_GET_ITEM(code_->co_consts, bytecode_.instrs()[j].oparg);
        break;
    }
    if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) > ins.oparg) unsupported(ins);
    if (ins.oparg > 0xFFFF) unsupported(ins);   // objrt::call takes it in 16 bits
    // After PRECALL the model holds [.., NULL/method, callable/self]; the
    // arguments are still in the slots above.
    int base = depth_ - 2;
    int cache_unit = ins.next - 1;   // the last inline cache entry
    em_.set_prev_instr(ins.index);
    Label generic = a.newLabel(), called = a.newLabel();
    CallCache *site = nullptr;
    if (kwnames == nullptr) {
        site = new_site_data<CallCache>();
        site->precall_instr = reinterpret_cast<_Py_CODEUNIT *>(code_->co_code_adaptive) + precall;
        // Compiled while profiling, the append is counted as cProfile counts
        // it (a call of list.append): where the hook cannot count it without
        // timing it, it takes the timed C call.
        bool append_site = ins.oparg == 1 && names_append(code_);
        void *append_key = append_site ? prof::c_call_key(pyj_list_append_descr()) : nullptr;
        if (append_site && (!prof::on() || append_key != nullptr)) {
            // [list.append, list, item] in warm code, with room in the list:
            // the append itself (PRECALL_NO_KW_LIST_APPEND, _PyList_AppendTakeRef),
            // out of line so that other calls' code stays compact.
            Label not_append = a.newLabel();
            uint64_t *warmup = warmup_;
            Label append = em_.cold([base, warmup, not_append, called, append_key](Emitter &e) {
                auto &a = e.as();
                e.load_address(x86::rcx, warmup);
                a.cmp(x86::qword_ptr(x86::rcx), kWarmupDelay);
                a.jb(not_append);
                a.mov(x86::rdi, e.stack(base + 1));
                e.load_address(x86::rax, &PyList_Type);
                a.cmp(x86::qword_ptr(x86::rdi, layout::kObjectType), x86::rax);
                a.jne(not_append);
                a.mov(x86::rcx, x86::qword_ptr(x86::rdi, layout::kVarSize));
                a.cmp(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(PyListObject, allocated)));
                a.jge(not_append);
                if (append_key != nullptr) emit_append_count(e, base, append_key, not_append);
                a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(PyListObject, ob_item)));
                a.mov(x86::rax, e.stack(base + 2));   // the list takes the item's reference
                a.mov(x86::qword_ptr(x86::rdx, x86::rcx, 3), x86::rax);
                a.inc(x86::rcx);
                a.mov(x86::qword_ptr(x86::rdi, layout::kVarSize), x86::rcx);
                e.decref(x86::rdi);
                a.mov(x86::rdi, e.stack(base));
                e.decref_no_dealloc(x86::rdi);   // the descriptor: its class keeps it
                e.load_address(x86::rax, Py_None);
                e.incref(x86::rax);
                a.jmp(called);
            });
            em_.load_address(x86::rax, pyj_list_append_descr());
            a.cmp(em_.stack(base), x86::rax);
            a.je(append);
            a.bind(not_append);
        }
        int nargs = ins.oparg;
        int precall_op = quickened_opcode(precall);
        if (compact_site() && (precall_op == PRECALL_PYFUNC || precall_op == PRECALL_BOUND_METHOD)) {
            // Python functions were called here: the direct call (a call of
            // the shared stub) inline, the C-call cache out of line.
            bool method_likely = method_slot_likely(base);
            Label c_call = em_.cold([this, base, site, generic, called, method_likely](Emitter &) {
                emit_cached_c_call(*this, base, site, generic, method_likely);
                as().jmp(called);
            });
            emit_direct_call(*this, base, nargs, cache_unit, c_call, Label());
        } else {
            // The direct-call sequence is long: out of line, so that C calls'
            // code stays compact.
            Label direct = em_.cold([this, base, nargs, cache_unit, generic, called](Emitter &) {
                emit_direct_call(*this, base, nargs, cache_unit, generic, called);
            });
            emit_cached_c_call(*this, base, site, direct, method_slot_likely(base));
        }
    }
    auto generic_call = [&] {
        a.bind(generic);
        emit_load_warm(x86::esi);
        a.shl(x86::esi, 16);
        a.or_(x86::esi, ins.oparg);   // oparg_warm
        Lea args(em_.stack(base)), frame(Emitter::frame_address());
        Lea py_call_instr(x86::ptr(Emitter::first_instr, cache_unit * 2));
        if (kwnames != nullptr) {   // (kept alive by co_consts)
            em_.call<&objrt::call>(args, x86::esi, kwnames, frame, py_call_instr, Emitter::tstate);
        } else {
            em_.call<&objrt::call_at_site>(args, x86::esi, site, frame, py_call_instr, Emitter::tstate);
        }
    };
    if (kwnames == nullptr) {
        // Warm sites mostly hit the cache; the generic call is out of line.
        em_.out_of_line([&] {
            generic_call();
            a.jmp(called);
        });
    } else {
        generic_call();
    }
    a.bind(called);
    drop(2);
    // Error: the traceback entry names the unit prev_instr was left at (the
    // CALL, its last cache entry after a Python call, or the PRECALL after a
    // specialised C call); PRECALL and CALL share their handler.
    a.test(x86::rax, x86::rax);
    a.jz(error_exit_at(ins.index, depth_, Raise::Error, ins.index, false));
    push(x86::rax);
    eval_breaker_check();
}

void Compiler::visit_CALL_FUNCTION_EX(const Instr &ins)
{
    int has_kwargs = ins.oparg & 1;
    int n = 3 + has_kwargs;
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::call_function_ex>(Lea(em_.stack(depth_ - n)), has_kwargs);
    push_result(*this, n);
    eval_breaker_check();
}

void Compiler::visit_MAKE_FUNCTION(const Instr &ins)
{
    if (ins.oparg & ~0x0f) unsupported(ins);
    int n = 1;
    for (int bit = 0; bit < 4; bit++) n += (ins.oparg >> bit) & 1;
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::make_function>(Lea(Emitter::frame_address()), Lea(em_.stack(depth_ - n)), ins.oparg);
    push_result(*this, n);
}

}  // namespace pyjion
