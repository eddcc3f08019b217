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
#include "baseline/visit_util.h"

namespace pyjion {

using namespace asmjit;
using visit::push_result;
using visit::check_status;

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

}  // namespace

// ---- calls ---------------------------------------------------------------------

void Compiler::visit_PUSH_NULL(const Instr &)
{
    em_.as().xor_(x86::eax, x86::eax);
    push(x86::rax);
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
    // The callable: [NULL, callable, args, dict] (3.11) or [callable, NULL, args, dict].
    constexpr int kCallableBelowDict = PY_VERSION_HEX >= 0x030D0000 ? 3 : 2;
    int dict_slot = depth_ - 1 - ins.oparg;
    if (dict_slot - kCallableBelowDict < 0) unsupported(ins);
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::dict_merge>(em_.stack(dict_slot), top(0), em_.stack(dict_slot - kCallableBelowDict));
    check_status(*this, 1);
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

// BINARY_SUBSCR. Fast paths (what the interpreter's BINARY_SUBSCR_LIST_INT /
// _TUPLE_INT / _STR_INT specialisations do): an exact list, tuple or str
// indexed by an exact int in range [0, 2**30) that is below the length (for
// a str: compact ASCII text, the result the interpreter's own one-character
// string), inline only for the containers the site has seen (subscr_paths).
// Everything else, including negative indexes, goes to the generic slot
// helper.
void Compiler::visit_BINARY_SUBSCR(const Instr &ins)
{
    auto &a = em_.as();
    SubscrPaths paths = subscr_paths(*this);
    if (!paths.list && !paths.tuple && !paths.str) {
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
    if (paths.str) {
        const uint32_t ascii = pyj_compact_ascii_state();
        em_.load_address(x86::rax, &PyUnicode_Type);
        a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rax);
        a.jne(slow);
        a.mov(x86::eax, x86::dword_ptr(x86::rdi, offsetof(PyASCIIObject, state)));
        a.and_(x86::eax, ascii);
        a.cmp(x86::eax, ascii);
        a.jne(slow);
        a.cmp(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(PyASCIIObject, length)));
        a.jae(slow);
        a.movzx(x86::eax, x86::byte_ptr(x86::rdi, x86::rcx, 0, sizeof(PyASCIIObject)));
        a.imul(x86::rax, x86::rax, static_cast<int32_t>(pyj_ascii_char_size()));
        em_.load_address(x86::rdx, pyj_ascii_chars());
        a.add(x86::rax, x86::rdx);
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

#define UNARY(fn) visit::unary<&fn>(*this)
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
    // Exhausted: the iterator popped, on at the target (3.13: past the END_FOR
    // and POP_TOP there, as the interpreter jumps).
#if PY_VERSION_HEX >= 0x030D0000
    int end_for = bytecode_.instr_at(ins.target);
    if (end_for < 0 || bytecode_.instrs()[end_for].opcode != END_FOR ||
        bytecode_.instr_at(ins.target + 1) < 0 || bytecode_.instrs()[end_for + 1].opcode != POP_TOP ||
        bytecode_.instr_at(ins.target + 2) < 0) {
        unsupported(ins);
    }
    Label exit_loop = label_for(ins.target + 2);
#else
    Label exit_loop = label_for(ins.target);
#endif
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
    if constexpr (layout::kRangeIterHasIndex) {
        // 3.11: start + index * step while index < len
        a.mov(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, index)));
        a.cmp(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, len)));
        a.jge(generic);   // exhausted: the generic call ends the loop
        a.mov(x86::rax, x86::rcx);
        a.imul(x86::rax, x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, step)));
        a.add(x86::rax, x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, start)));
        a.inc(x86::rcx);
        a.mov(x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, index)), x86::rcx);
        a.mov(x86::rdi, x86::rax);
    } else {
        // 3.12+: start itself advances by step while len counts down
        a.cmp(x86::qword_ptr(x86::rdi, layout::kRangeIterLen), 0);
        a.jle(generic);
        a.mov(x86::rax, x86::qword_ptr(x86::rdi, layout::kRangeIterStart));
        a.mov(x86::rcx, x86::rax);
        a.add(x86::rcx, x86::qword_ptr(x86::rdi, layout::kRangeIterStep));
        a.mov(x86::qword_ptr(x86::rdi, layout::kRangeIterStart), x86::rcx);
        a.dec(x86::qword_ptr(x86::rdi, layout::kRangeIterLen));
        a.mov(x86::rdi, x86::rax);
    }
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
