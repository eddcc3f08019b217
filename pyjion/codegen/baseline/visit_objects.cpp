// Visitors: calls, containers, subscripts, unary operators, iteration, formatting and pattern matching.
//
// Most of these opcodes call a runtime helper (objrt, runtime_objects.h: its
// convention on references is written there).
#include "baseline/compiler.h"

#include "codegen_api.h"
#include "cpython/interp_state.h"
#include "front/opcodes.h"
#include "runtime/arg_binding.h"
#include "runtime/call_cache.h"
#include "baseline/direct_call_emit.h"
#include "runtime/direct_call.h"
#include "runtime/runtime_objects.h"
#include "runtime/runtime.h"
#include "runtime/runtime_slots.h"
#include "baseline/specialize.h"

namespace pyjion {

using namespace asmjit;

namespace {

// CPython 3.11's list iterator (Objects/listobject.c, not in any header).
struct ListIterLayout {
    PyObject_HEAD
    Py_ssize_t it_index;
    PyListObject *it_seq;   // NULL once exhausted
};

// CPython 3.11's range iterator (Objects/rangeobject.c, not in any header):
// the next value is start + index * step while index < len.
struct RangeIterLayout {
    PyObject_HEAD
    long index;
    long start;
    long step;
    long len;
};

// rcx = the index `obj` when it is an exact int in [0, 2**30) (the list and
// tuple fast paths of the subscripts), else a jump to `fail`. Clobbers rax.
void small_index(Compiler &c, const x86::Gp &obj, const Label &fail)
{
    guard_type(c, obj, &PyLong_Type, fail);
    load_small_int(c, obj, x86::rcx, fail);
    c.as().test(x86::rcx, x86::rcx);
    c.as().js(fail);
}

// After a helper that consumed `consumed` values and returned a new reference
// (or NULL) in rax: model the inputs gone, take the error exit on NULL, push.
void push_result(Compiler &c, int consumed)
{
    c.drop(consumed);
    c.jump_if_error_zero(x86::rax, c.depth());
    c.push(x86::rax);
}

// After a helper that consumed `consumed` values and returned an int status
// in eax: model the inputs gone, take the error exit when negative.
void check_status(Compiler &c, int consumed)
{
    c.drop(consumed);
    c.jump_if_error_negative(x86::eax, c.depth());
}

}  // namespace

// ---- calls ---------------------------------------------------------------------

void Compiler::visit_PUSH_NULL(const Instr &)
{
    em_.as().xor_(x86::eax, x86::eax);
    push(x86::rax);
}

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
        if (ins.oparg == 1 && names_append(code_)) {
            // [list.append, list, item] in warm code, with room in the list:
            // the append itself (PRECALL_NO_KW_LIST_APPEND, _PyList_AppendTakeRef),
            // out of line so that other calls' code stays compact.
            Label not_append = a.newLabel();
            uint64_t *warmup = warmup_;
            Label append = em_.cold([base, warmup, not_append, called](Emitter &e) {
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

// ---- building containers -------------------------------------------------------

namespace {
template <auto Fn>
void build_from_slots(Compiler &c, int n_slots, int count)
{
    c.set_prev_instr();
    c.em().call<Fn>(Lea(c.em().stack(c.depth() - n_slots)), count);
    push_result(c, n_slots);
}
}  // namespace

#define BUILD(fn, n_slots, count) build_from_slots<&objrt::fn>(*this, n_slots, count)

void Compiler::visit_BUILD_TUPLE(const Instr &ins) { BUILD(build_tuple, ins.oparg, ins.oparg); }
void Compiler::visit_BUILD_LIST(const Instr &ins) { BUILD(build_list, ins.oparg, ins.oparg); }
void Compiler::visit_BUILD_SET(const Instr &ins) { BUILD(build_set, ins.oparg, ins.oparg); }
void Compiler::visit_BUILD_MAP(const Instr &ins) { BUILD(build_map, 2 * ins.oparg, ins.oparg); }
void Compiler::visit_BUILD_CONST_KEY_MAP(const Instr &ins) { BUILD(build_const_key_map, ins.oparg + 1, ins.oparg); }
void Compiler::visit_BUILD_STRING(const Instr &ins) { BUILD(build_string, ins.oparg, ins.oparg); }

#undef BUILD

void Compiler::visit_BUILD_SLICE(const Instr &ins)
{
    if (ins.oparg != 2 && ins.oparg != 3) unsupported(ins);
    em_.set_prev_instr(ins.index);
    int base = depth_ - ins.oparg;
    if (ins.oparg == 3) {
        em_.call<&objrt::build_slice>(em_.stack(base), em_.stack(base + 1), em_.stack(base + 2));
    } else {
        em_.call<&objrt::build_slice>(em_.stack(base), em_.stack(base + 1), nullptr);
    }
    push_result(*this, ins.oparg);
}

// LIST_APPEND, SET_ADD: pop a value, add it to the container oparg below.
void Compiler::visit_LIST_APPEND(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::list_append>(em_.stack(depth_ - 1 - ins.oparg), top(0));
    check_status(*this, 1);
}

void Compiler::visit_SET_ADD(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::set_add>(em_.stack(depth_ - 1 - ins.oparg), top(0));
    check_status(*this, 1);
}

void Compiler::visit_MAP_ADD(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::map_add>(em_.stack(depth_ - 2 - ins.oparg), top(1), top(0));
    check_status(*this, 2);
}

void Compiler::visit_LIST_EXTEND(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::list_extend>(em_.stack(depth_ - 1 - ins.oparg), top(0));
    check_status(*this, 1);
}

void Compiler::visit_SET_UPDATE(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::set_update>(em_.stack(depth_ - 1 - ins.oparg), top(0));
    check_status(*this, 1);
}

void Compiler::visit_DICT_UPDATE(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::dict_update>(em_.stack(depth_ - 1 - ins.oparg), top(0));
    check_status(*this, 1);
}

// DICT_MERGE: like DICT_UPDATE, but duplicate keys are an error naming the
// function being called (two slots below the dict).
void Compiler::visit_DICT_MERGE(const Instr &ins)
{
    int dict_slot = depth_ - 1 - ins.oparg;
    if (dict_slot - 2 < 0) unsupported(ins);
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::dict_merge>(em_.stack(dict_slot), top(0), em_.stack(dict_slot - 2));
    check_status(*this, 1);
}

void Compiler::visit_LIST_TO_TUPLE(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::list_to_tuple>(top(0));
    push_result(*this, 1);
}

// ---- unpacking -------------------------------------------------------------------

void Compiler::visit_UNPACK_SEQUENCE(const Instr &ins)
{
    auto &a = em_.as();
    int n = ins.oparg;
    em_.set_prev_instr(ins.index);
    Label slow = a.newLabel(), done = a.newLabel();
    if (n <= 8) {
        // An exact tuple or list of the right length: its items, last one
        // deepest, as ceval's UNPACK_SEQUENCE_TUPLE/LIST do.
        Label is_list = a.newLabel(), have_items = a.newLabel();
        a.mov(x86::rdi, top(0));
        a.mov(x86::rax, x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)));
        a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyVarObject, ob_size)), n);
        a.jne(slow);
        em_.load_address(x86::rcx, &PyTuple_Type);
        a.cmp(x86::rax, x86::rcx);
        a.jne(is_list);
        a.lea(x86::rsi, x86::ptr(x86::rdi, offsetof(PyTupleObject, ob_item)));
        a.jmp(have_items);
        a.bind(is_list);
        em_.load_address(x86::rcx, &PyList_Type);
        a.cmp(x86::rax, x86::rcx);
        a.jne(slow);
        a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(PyListObject, ob_item)));
        a.bind(have_items);
        for (int i = 0; i < n; i++) {
            a.mov(x86::rax, x86::qword_ptr(x86::rsi, (n - 1 - i) * 8));
            em_.incref(x86::rax);
            a.mov(em_.stack(depth_ - 1 + i), x86::rax);
        }
        em_.decref(x86::rdi);
        a.jmp(done);
    }
    a.bind(slow);
    em_.call<&objrt::unpack>(top(0), n, -1, Lea(em_.stack(depth_ - 1 + n)));
    check_status(*this, 1);
    grow(n);
    a.bind(done);
}

void Compiler::visit_UNPACK_EX(const Instr &ins)
{
    int before = ins.oparg & 0xff, after = ins.oparg >> 8;
    int total = before + 1 + after;
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::unpack>(top(0), before, after, Lea(em_.stack(depth_ - 1 + total)));
    check_status(*this, 1);
    grow(total);
}

// ---- subscripts --------------------------------------------------------------------

// BINARY_SUBSCR. Fast path (what the interpreter's BINARY_SUBSCR_LIST_INT /
// _TUPLE_INT specialisations do): an exact list or tuple indexed by an exact
// int in range [0, 2**30) that is below the length, inline only for the
// containers the site has seen (subscr_paths). Everything else, including
// negative indexes, goes to the generic slot helper.
void Compiler::visit_BINARY_SUBSCR(const Instr &ins)
{
    auto &a = em_.as();
    SubscrPaths paths = subscr_paths(*this);
    if (!paths.list && !paths.tuple) {
        slot_call(2, callee<&slots::get_item>());
        return;
    }
    Label slow = a.newLabel(), got = a.newLabel(), done = a.newLabel();
    Label not_list = paths.tuple ? a.newLabel() : slow;
    int depth = depth_;
    a.mov(x86::rdi, top(1));   // container
    a.mov(x86::rsi, top(0));   // index
    small_index(*this, x86::rsi, slow);
    if (paths.list) {
        em_.load_address(x86::rax, &PyList_Type);
        a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rax);
        a.jne(not_list);
        a.cmp(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(PyVarObject, ob_size)));
        a.jae(slow);
        a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(PyListObject, ob_item)));
        a.mov(x86::rax, x86::qword_ptr(x86::rdx, x86::rcx, 3));
        if (paths.tuple) a.jmp(got);
    }
    if (paths.tuple) {
        a.bind(not_list);
        em_.load_address(x86::rax, &PyTuple_Type);
        a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rax);
        a.jne(slow);
        a.cmp(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(PyVarObject, ob_size)));
        a.jae(slow);
        a.mov(x86::rax, x86::qword_ptr(x86::rdi, x86::rcx, 3, offsetof(PyTupleObject, ob_item)));
    }
    a.bind(got);
    em_.incref(x86::rax);
    a.mov(x86::r14, x86::rax);
    a.mov(x86::r15, x86::rsi);
    em_.set_prev_instr(ins.index);   // the container may die here
    em_.decref(x86::rdi);
    em_.decref(x86::r15);
    drop(2);
    push(x86::r14);

    em_.out_of_line([&] {   // dicts, slices, other containers
        a.bind(slow);
        depth_ = depth;
        slot_call(2, callee<&slots::get_item>());
        a.jmp(done);
    });
    a.bind(done);
}

// STORE_SUBSCR: container[sub] = v with [v, container, sub] on the stack.
void Compiler::visit_STORE_SUBSCR(const Instr &ins)
{
    // TOS = index, TOS1 = container, TOS2 = value.
    auto &a = em_.as();
    Label slow = a.newLabel(), done = a.newLabel();
    em_.set_prev_instr(ins.index);
    // list[i] = v with a one-digit non-negative int in range (ceval's
    // STORE_SUBSCR_LIST_INT): the list takes the value's reference.
    a.mov(x86::rdi, top(1));
    a.mov(x86::rsi, top(0));
    em_.load_address(x86::rax, &PyList_Type);
    a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rax);
    a.jne(slow);
    small_index(*this, x86::rsi, slow);
    a.cmp(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(PyVarObject, ob_size)));
    a.jae(slow);
    a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(PyListObject, ob_item)));
    a.lea(x86::rdx, x86::ptr(x86::rdx, x86::rcx, 3));
    a.mov(x86::rax, top(2));
    a.mov(x86::r14, x86::qword_ptr(x86::rdx));   // the old item
    a.mov(x86::qword_ptr(x86::rdx), x86::rax);
    // Release the old item, the index, then the list, as ceval does (the
    // list pointer stays readable in its stack slot meanwhile).
    a.mov(x86::r15, x86::rsi);
    em_.decref(x86::r14);
    em_.decref(x86::r15);
    a.mov(x86::rdi, top(1));
    em_.decref(x86::rdi);

    em_.out_of_line([&] {   // dicts and every other container
        a.bind(slow);
        em_.call<&objrt::store_subscr>(top(1), top(0), top(2));
        check_status(*this, 3);
        a.jmp(done);
    });
    a.bind(done);
}

void Compiler::visit_DELETE_SUBSCR(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::delete_subscr>(top(1), top(0));
    check_status(*this, 2);
}

// ---- unary operators ---------------------------------------------------------------

namespace {
template <auto Fn>
void unary(Compiler &c)
{
    c.set_prev_instr();
    c.em().call<Fn>(c.top(0));
    push_result(c, 1);
}
}  // namespace

#define UNARY(fn) unary<&fn>(*this)
void Compiler::visit_UNARY_POSITIVE(const Instr &) { UNARY(objrt::consume1<PyNumber_Positive>); }
void Compiler::visit_UNARY_NEGATIVE(const Instr &) { UNARY(objrt::consume1<PyNumber_Negative>); }
void Compiler::visit_UNARY_INVERT(const Instr &) { UNARY(objrt::consume1<PyNumber_Invert>); }
void Compiler::visit_UNARY_NOT(const Instr &) { UNARY(objrt::unary_not); }
void Compiler::visit_GET_ITER(const Instr &) { UNARY(objrt::consume1<PyObject_GetIter>); }
#undef UNARY

// ---- iteration ---------------------------------------------------------------------

// FOR_ITER: [iter] -> [iter, next], or (exhausted) [] and a jump past the loop.
// tp_iternext is called directly through the iterator's type.
void Compiler::visit_FOR_ITER(const Instr &ins)
{
    auto &a = em_.as();
    int depth = depth_;
    int unit = ins.index;
    depth_ = depth - 1;
    Label exit_loop = label_for(ins.target);
    depth_ = depth;
    Label ended = em_.cold([this, depth, unit, exit_loop](Emitter &e) {
        auto &a = e.as();
        e.call<&objrt::for_iter_ended>();
        a.test(x86::eax, x86::eax);
        a.js(error_exit_at(unit, depth));
        a.mov(x86::rdi, e.stack(depth - 1));
        e.decref(x86::rdi);
        a.jmp(exit_loop);
    });
    Label generic = a.newLabel(), got = a.newLabel(), not_list = a.newLabel(), not_range = a.newLabel();
    em_.set_prev_instr(ins.index);
    a.mov(x86::rdi, top(0));
    // Fast path: a list iterator with an item left (listiter_next without the call).
    em_.load_address(x86::rcx, &PyListIter_Type);
    a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rcx);
    a.jne(not_list);
    a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(ListIterLayout, it_seq)));
    a.test(x86::rdx, x86::rdx);
    a.jz(generic);
    a.mov(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(ListIterLayout, it_index)));
    a.cmp(x86::rcx, x86::qword_ptr(x86::rdx, offsetof(PyVarObject, ob_size)));
    a.jge(generic);
    a.mov(x86::rax, x86::qword_ptr(x86::rdx, offsetof(PyListObject, ob_item)));
    a.mov(x86::rax, x86::qword_ptr(x86::rax, x86::rcx, 3));
    a.inc(x86::rcx);
    a.mov(x86::qword_ptr(x86::rdi, offsetof(ListIterLayout, it_index)), x86::rcx);
    em_.incref(x86::rax);
    a.jmp(got);
    // A range iterator with a value left (rangeiter_next without the call;
    // the interpreter's FOR_ITER_RANGE).
    a.bind(not_list);
    em_.load_address(x86::rcx, &PyRangeIter_Type);
    a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rcx);
    a.jne(not_range);
    a.mov(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, index)));
    a.cmp(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, len)));
    a.jge(generic);   // exhausted: the generic call ends the loop
    a.mov(x86::rax, x86::rcx);
    a.imul(x86::rax, x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, step)));
    a.add(x86::rax, x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, start)));
    a.inc(x86::rcx);
    a.mov(x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, index)), x86::rcx);
    a.mov(x86::rdi, x86::rax);
    Label not_small = a.newLabel();
    box_small_int(*this, x86::rdi, not_small, Label());   // falls through to `got`
    em_.out_of_line([&] {
        a.bind(not_small);
        em_.call<&PyLong_FromLong>(x86::rdi);
        a.test(x86::rax, x86::rax);
        a.jz(error_exit(depth));   // out of memory: the iterator stays for the unwinder
        a.jmp(got);
        // A generator: resumed without the hook when its code is compiled.
        a.bind(not_range);
        em_.load_address(x86::rcx, &PyGen_Type);
        a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rcx);
        a.jne(generic);
        em_.call<&direct::gen_next>(x86::rdi, Emitter::tstate);
        a.test(x86::rax, x86::rax);
        a.jz(ended);
        a.jmp(got);
        a.bind(generic);
        a.mov(x86::rdi, top(0));
        a.mov(x86::rax, x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)));
        a.call(x86::qword_ptr(x86::rax, offsetof(PyTypeObject, tp_iternext)));
        a.test(x86::rax, x86::rax);
        a.jz(ended);
        a.jmp(got);
    });
    a.bind(got);
    push(x86::rax);
}

// ---- identity, membership, stack shuffles -------------------------------------------

void Compiler::visit_IS_OP(const Instr &ins)
{
    auto &a = em_.as();
    a.mov(x86::r14, top(1));
    a.mov(x86::r15, top(0));
    em_.load_address(x86::rax, ins.oparg ? Py_False : Py_True);
    em_.load_address(x86::rcx, ins.oparg ? Py_True : Py_False);
    a.cmp(x86::r14, x86::r15);
    a.cmovne(x86::rax, x86::rcx);
    em_.incref(x86::rax);
    drop(2);
    push(x86::rax);   // over the left operand's slot; both operands are in r14/r15
    em_.set_prev_instr(ins.index);
    em_.decref(x86::r14);
    em_.decref(x86::r15);
}

void Compiler::visit_CONTAINS_OP(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::contains_op>(top(1), top(0), ins.oparg ? 1 : 0);
    push_result(*this, 2);
}

void Compiler::visit_COPY(const Instr &ins)
{
    if (ins.oparg < 1 || ins.oparg > depth_) unsupported(ins);
    em_.as().mov(x86::rax, em_.stack(depth_ - ins.oparg));
    em_.incref(x86::rax);
    push(x86::rax);
}

void Compiler::visit_SWAP(const Instr &ins)
{
    auto &a = em_.as();
    if (ins.oparg < 2 || ins.oparg > depth_) unsupported(ins);
    a.mov(x86::rax, top(0));
    a.mov(x86::rcx, em_.stack(depth_ - ins.oparg));
    a.mov(top(0), x86::rcx);
    a.mov(em_.stack(depth_ - ins.oparg), x86::rax);
}

// ---- formatting and lengths -----------------------------------------------------------

void Compiler::visit_FORMAT_VALUE(const Instr &ins)
{
    bool have_spec = (ins.oparg & 0x04) != 0;
    int conversion = ins.oparg & 0x03;
    em_.set_prev_instr(ins.index);
    if (have_spec) {
        em_.call<&objrt::format_value>(top(1), top(0), conversion);
    } else {
        em_.call<&objrt::format_value>(top(0), nullptr, conversion);
    }
    push_result(*this, have_spec ? 2 : 1);
}

void Compiler::visit_GET_LEN(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::get_len>(top(0));
    push_result(*this, 0);
}

// ---- pattern matching -------------------------------------------------------------

namespace {
void match_flag(Compiler &c, unsigned long flag)
{
    auto &a = c.as();
    a.mov(x86::rax, c.top(0));
    a.mov(x86::rax, x86::qword_ptr(x86::rax, offsetof(PyObject, ob_type)));
    a.mov(x86::rax, x86::qword_ptr(x86::rax, offsetof(PyTypeObject, tp_flags)));
    c.em().load_address(x86::rcx, Py_True);
    c.em().load_address(x86::rdx, Py_False);
    a.test(x86::rax, flag);
    a.cmovz(x86::rcx, x86::rdx);
    c.em().incref(x86::rcx);
    c.push(x86::rcx);
}
}  // namespace

void Compiler::visit_MATCH_MAPPING(const Instr &) { match_flag(*this, Py_TPFLAGS_MAPPING); }
void Compiler::visit_MATCH_SEQUENCE(const Instr &) { match_flag(*this, Py_TPFLAGS_SEQUENCE); }

void Compiler::visit_MATCH_KEYS(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::match_keys>(top(1), top(0));
    push_result(*this, 0);
}

void Compiler::visit_MATCH_CLASS(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::match_class>(top(2), top(1), top(0), ins.oparg);
    push_result(*this, 3);
}

}  // namespace pyjion
