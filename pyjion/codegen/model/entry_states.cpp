#include "model/entry_states.h"

#include <algorithm>

#include "codegen_api.h"
#include "front/opcodes.h"

namespace pyjion::model {

namespace {

[[noreturn]] void model_fault(const Instr &ins, const std::string &what)
{
    throw CompileError{PYJION_RESULT_STACK_EFFECT_FAULT, std::string("frame model: ") + opcode_name(ins.opcode) +
                                                             " at offset " + std::to_string(ins.offset()) + ": " +
                                                             what};
}

// Removes `pops` values from the top and pushes `pushes` fresh objects.
void pop_push(const Instr &ins, std::vector<SlotKind> &stack, int pops, int pushes)
{
    if (pops > (int)stack.size()) {
        model_fault(ins, "takes " + std::to_string(pops) + " values from a stack of " + std::to_string(stack.size()));
    }
    size_t kept = stack.size() - pops;
    stack.resize(kept);
    stack.resize(kept + pushes, SlotKind::boxed());
}

// Values taken from the top and objects pushed by the opcodes whose outputs
// are fresh objects (the interpreter's POP/TOP/PEEK and PUSH/SET_TOP, with
// the values it leaves in place, e.g. GET_LEN's container, not counted); -1:
// not such an opcode.
struct Effect {
    int pops, pushes;
};
Effect simple_effect(int opcode, int oparg, bool jump)
{
    (void)jump;   // (3.13's jumps have their fallthrough's effect)
    switch (opcode) {
    case NOP: case CACHE: case RESUME: case EXTENDED_ARG: case COPY_FREE_VARS: case MAKE_CELL:
    case SETUP_ANNOTATIONS: case DELETE_NAME: case DELETE_GLOBAL: case DELETE_FAST: case DELETE_DEREF:
    case JUMP_FORWARD: case JUMP_BACKWARD: case JUMP_BACKWARD_NO_INTERRUPT:
        return {0, 0};
    case LOAD_FAST: case LOAD_NAME: case LOAD_DEREF:
    case LOAD_BUILD_CLASS: case LOAD_ASSERTION_ERROR: case GET_LEN: case MATCH_MAPPING: case MATCH_SEQUENCE:
    case MATCH_KEYS: case WITH_EXCEPT_START: case GET_ANEXT: case IMPORT_FROM:
    case RETURN_GENERATOR:   // the value resuming the generator pushes (see stack_effect)
        return {0, 1};
    case POP_TOP: case STORE_FAST: case STORE_NAME: case STORE_GLOBAL: case STORE_DEREF: case DELETE_ATTR:
    case POP_EXCEPT: case RETURN_VALUE: case RERAISE:
    case LIST_APPEND: case SET_ADD: case LIST_EXTEND: case SET_UPDATE: case DICT_MERGE: case DICT_UPDATE:
        return {1, 0};
    case UNARY_NEGATIVE: case UNARY_NOT: case UNARY_INVERT: case GET_ITER:
    case GET_YIELD_FROM_ITER: case GET_AITER: case GET_AWAITABLE:
    case CHECK_EXC_MATCH:
    case YIELD_VALUE:   // the value out, the sent value in
        return {1, 1};
    case PUSH_EXC_INFO: case BEFORE_WITH: case BEFORE_ASYNC_WITH:
        return {1, 2};
    case STORE_ATTR: case DELETE_SUBSCR: case END_ASYNC_FOR: case MAP_ADD:
        return {2, 0};
    case BINARY_OP: case BINARY_SUBSCR: case COMPARE_OP: case IS_OP: case CONTAINS_OP: case IMPORT_NAME:
        return {2, 1};
    case CHECK_EG_MATCH:
        return {2, 2};
    case STORE_SUBSCR:
        return {3, 0};
    case MATCH_CLASS:
        return {3, 1};
    case BUILD_TUPLE: case BUILD_LIST: case BUILD_SET: case BUILD_STRING: case BUILD_SLICE:
        return {oparg, 1};
    case BUILD_MAP:
        return {2 * oparg, 1};
    case BUILD_CONST_KEY_MAP:
        return {oparg + 1, 1};
    case UNPACK_SEQUENCE:
        return {1, oparg};
    case UNPACK_EX:
        return {1, (oparg & 0xFF) + (oparg >> 8) + 1};
    case RAISE_VARARGS:
        return {oparg, 0};
    case CALL_FUNCTION_EX:   // NULL, callable, positional arguments[, keyword arguments]
        return {3 + (oparg & 1), 1};
#if PY_VERSION_HEX >= 0x030D0000
    case RETURN_CONST: case ENTER_EXECUTOR:
        return {0, 0};
    case LOAD_FAST_CHECK: case LOAD_LOCALS:
        return {0, 1};
    case LOAD_FAST_LOAD_FAST:
        return {0, 2};
    case END_FOR: case POP_JUMP_IF_FALSE: case POP_JUMP_IF_TRUE: case POP_JUMP_IF_NONE: case POP_JUMP_IF_NOT_NONE:
    case EXIT_INIT_CHECK:
        return {1, 0};
    case STORE_FAST_LOAD_FAST: case TO_BOOL: case FORMAT_SIMPLE: case CONVERT_VALUE: case CALL_INTRINSIC_1:
    case LOAD_FROM_DICT_OR_DEREF: case LOAD_FROM_DICT_OR_GLOBALS: case MAKE_FUNCTION:
        return {1, 1};
    case STORE_FAST_STORE_FAST:
        return {2, 0};
    case END_SEND: case FORMAT_WITH_SPEC: case CALL_INTRINSIC_2: case SET_FUNCTION_ATTRIBUTE:
        return {2, 1};
    case CLEANUP_THROW:   // [sub_iter, last_sent_val, exc] -> [None, value]
        return {3, 2};
    case BINARY_SLICE:
        return {3, 1};
    case STORE_SLICE:
        return {4, 0};
    case CALL:            // callable, self or NULL, arguments
        return {2 + oparg, 1};
    case CALL_KW:         // callable, self or NULL, arguments, the keywords' names
        return {3 + oparg, 1};
    case FOR_ITER:        // [iter] -> [iter, next]; exhausted: the jump lands on END_FOR
        return {0, 1};    // as if with [iter, next] (the interpreter skips END_FOR and the POP_TOP after)
    case SEND:            // [receiver, value] -> [receiver, yielded]; returned: [receiver, result] and the jump
        return {1, 1};
#else
    case KW_NAMES: case LOAD_CLOSURE: case LOAD_CLASSDEREF:
        return opcode == KW_NAMES ? Effect{0, 0} : Effect{0, 1};
    case PRINT_EXPR: case IMPORT_STAR:
    case POP_JUMP_FORWARD_IF_FALSE: case POP_JUMP_FORWARD_IF_TRUE: case POP_JUMP_BACKWARD_IF_FALSE:
    case POP_JUMP_BACKWARD_IF_TRUE: case POP_JUMP_FORWARD_IF_NONE: case POP_JUMP_FORWARD_IF_NOT_NONE:
    case POP_JUMP_BACKWARD_IF_NONE: case POP_JUMP_BACKWARD_IF_NOT_NONE:
        return {1, 0};
    case UNARY_POSITIVE: case LIST_TO_TUPLE: case ASYNC_GEN_WRAP: case LOAD_ATTR:
        return {1, 1};
    case PREP_RERAISE_STAR:
        return {2, 1};
    case MAKE_FUNCTION:   // the code object, and defaults, kwdefaults, annotations, closure as flagged
        return {1 + ((oparg & 1) != 0) + ((oparg & 2) != 0) + ((oparg & 4) != 0) + ((oparg & 8) != 0), 1};
    case FORMAT_VALUE:    // the value, and the format spec with FVS_HAVE_SPEC
        return {(oparg & 0x04) ? 2 : 1, 1};
    case CALL:            // [NULL or method, callable or self]: PRECALL counted the arguments
        return {2, 1};
    case FOR_ITER:        // [iter] -> [iter, next]; exhausted: [] and the jump
        return jump ? Effect{1, 0} : Effect{0, 1};
    case SEND:            // [receiver, value] -> [receiver, yielded]; returned: [result] and the jump
        return jump ? Effect{2, 1} : Effect{1, 1};
    case JUMP_IF_FALSE_OR_POP: case JUMP_IF_TRUE_OR_POP:   // the value stays on the jump
        return jump ? Effect{0, 0} : Effect{1, 0};
#endif
    default:
        return {-1, -1};
    }
}

}  // namespace

void apply_stack_effect(const Instr &ins, bool jump, std::vector<SlotKind> &stack)
{
    int before = (int)stack.size();
    auto need = [&](int n) {
        if (n > (int)stack.size()) {
            model_fault(ins, "needs " + std::to_string(n) + " values on a stack of " + std::to_string(stack.size()));
        }
    };
    switch (ins.opcode) {
    case PUSH_NULL:
        stack.push_back(SlotKind::null());
        break;
    case LOAD_CONST:
        stack.push_back(SlotKind::constant(static_cast<uint32_t>(ins.oparg)));
        break;
#if PY_VERSION_HEX >= 0x030D0000
    case LOAD_GLOBAL:   // value[, NULL]
        stack.push_back(SlotKind::boxed());
        if (ins.oparg & 1) stack.push_back(SlotKind::null());
        break;
    case LOAD_ATTR:        // [owner] -> [attribute], or with the method bit [method, self] or [attribute, NULL]
    case LOAD_SUPER_ATTR:  // [global super, class, self] -> the same
        pop_push(ins, stack, ins.opcode == LOAD_ATTR ? 1 : 3, 1);
        if (ins.oparg & 1) stack.push_back(SlotKind::boxed_or_null());
        break;
    case LOAD_FAST_AND_CLEAR:   // a comprehension saves a local that may be unbound
        stack.push_back(SlotKind::boxed_or_null());
        break;
#else
    case LOAD_GLOBAL:   // [NULL,] value
        if (ins.oparg & 1) stack.push_back(SlotKind::null());
        stack.push_back(SlotKind::boxed());
        break;
    case LOAD_METHOD:   // [owner] -> [method, self] or [NULL, attribute]
        pop_push(ins, stack, 1, 0);
        stack.push_back(SlotKind::boxed_or_null());
        stack.push_back(SlotKind::boxed());
        break;
    case PRECALL: {
        // [NULL, bound method] may become [function, self]; CPython's stack
        // effect counts the arguments as taken here (they stay in their slots
        // for CALL, above the modelled depth).
        need(ins.oparg + 2);
        size_t base = stack.size() - ins.oparg - 2;
        SlotKind meth = stack[base], callable = stack[base + 1];
        stack.resize(base);
        if (meth.may_be_null()) {
            meth = join(meth, SlotKind::boxed());
            callable = join(callable, SlotKind::boxed());
        }
        stack.push_back(meth);
        stack.push_back(callable);
        break;
    }
#endif
    case COPY:
        if (ins.oparg < 1) model_fault(ins, "COPY 0");
        need(ins.oparg);
        stack.push_back(stack[stack.size() - ins.oparg]);
        break;
    case SWAP:
        if (ins.oparg < 1) model_fault(ins, "SWAP 0");
        need(ins.oparg);
        std::swap(stack.back(), stack[stack.size() - ins.oparg]);
        break;
    default: {
        Effect e = simple_effect(ins.opcode, ins.oparg, jump);
        if (e.pops < 0) model_fault(ins, "no modelled stack effect");
        pop_push(ins, stack, e.pops, e.pushes);
        break;
    }
    }
    int effect = stack_effect(ins.opcode, ins.oparg, jump);
    if ((int)stack.size() - before != effect) {
        model_fault(ins, std::string("modelled effect ") + std::to_string((int)stack.size() - before) + " on the " +
                             (jump ? "jump" : "fallthrough") + " != CPython's " + std::to_string(effect));
    }
}

EntryStates::EntryStates(const Bytecode &bytecode, const BoundLocals &bound, int nlocalsplus)
    : bound_(&bound), nlocals_(nlocalsplus)
{
    const auto &instrs = bytecode.instrs();
    start_.assign(instrs.size() + 1, 0);
    for (size_t k = 0; k < instrs.size(); k++) start_[k + 1] = start_[k] + std::max(0, instrs[k].depth);
    kinds_.assign(start_.back(), SlotKind::boxed_or_null());
    reached_.assign(instrs.size(), false);
    std::vector<int> work;
    std::vector<bool> queued(instrs.size(), false);
    // Where paths meet, each slot gets the join of what the paths bring.
    auto flow_into = [&](int k, const std::vector<SlotKind> &in, const Instr &from) {
        if (k < 0) return;
        if ((int)in.size() != instrs[k].depth) {
            model_fault(from, "reaches offset " + std::to_string(instrs[k].offset()) + " with " +
                                  std::to_string(in.size()) + " values; the decoder computed " +
                                  std::to_string(instrs[k].depth));
        }
        SlotKind *s = kinds_.data() + start_[k];
        bool changed = false;
        if (!reached_[k]) {
            reached_[k] = true;
            std::copy(in.begin(), in.end(), s);
            changed = true;
        } else {
            for (size_t i = 0; i < in.size(); i++) {
                SlotKind j = join(s[i], in[i]);
                if (j != s[i]) {
                    s[i] = j;
                    changed = true;
                }
            }
        }
        if (changed && !queued[k]) {
            queued[k] = true;
            work.push_back(k);
        }
    };
    if (instrs.empty()) return;
    flow_into(0, {}, instrs[0]);
    // Reused: no allocation per edge. (A jump to itself may join into the
    // state `in` copies while the successors are worked out: it only gets
    // more general, and k is queued again.)
    std::vector<SlotKind> in, out;
    while (!work.empty()) {
        int k = work.back();
        work.pop_back();
        queued[k] = false;
        const Instr &ins = instrs[k];
        in.assign(stack_at(k), stack_at(k) + depth_at(k));
        // An exception inside the instruction reaches its handler with the
        // stack unwound to the handler's level (slots below it untouched),
        // then the raising offset (an int) if lasti, then the exception.
        if (const ExceptionEntry *e = bytecode.exceptions().find(ins.index)) {
            out.assign(in.begin(), in.begin() + std::min<size_t>(in.size(), e->level));
            out.resize(e->level, SlotKind::boxed_or_null());   // (never: the stack is at least that deep)
            if (e->lasti) out.push_back(SlotKind::boxed());
            out.push_back(SlotKind::boxed());
            flow_into(bytecode.instr_at(e->handler), out, ins);
        }
        if (ins.target >= 0) {
            out = in;
            apply_stack_effect(ins, true, out);
            flow_into(bytecode.instr_at(ins.target), out, ins);
        }
        if (!ends_block(ins.opcode) && bytecode.instr_at(ins.next) >= 0) {
            out = in;
            apply_stack_effect(ins, false, out);
            flow_into(bytecode.instr_at(ins.next), out, ins);
        }
    }
    for (size_t k = 0; k < instrs.size(); k++) {
        if (reached_[k] != (instrs[k].depth >= 0)) {
            model_fault(instrs[k], reached_[k] ? "reached, but the decoder found it unreachable"
                                               : "unreached, but the decoder reached it");
        }
    }
}

void EntryStates::establish(int k, FrameState &state, int was) const
{
    if (!reached(k)) throw ModelError("frame model: no state for instruction " + std::to_string(k));
    state.set_stack(stack_at(k), depth_at(k));
    if (state.nlocals() != nlocals_) {
        state = FrameState(nlocals_);
        was = -1;
    }
    const uint64_t *bits = bound_->certain_bits(k);
    if (was >= 0 && nlocals_ > 0) {
        const uint64_t *had = bound_->certain_bits(was);
        if (had != nullptr && bits != nullptr && std::equal(bits, bits + (nlocals_ + 63) / 64, had)) return;
    }
    for (int i = 0; i < nlocals_; i++) {
        bool certain = bits != nullptr && ((bits[i / 64] >> (i % 64)) & 1);
        state.set_local(i, certain ? SlotKind::boxed() : SlotKind::boxed_or_null());
    }
}

}  // namespace pyjion::model
