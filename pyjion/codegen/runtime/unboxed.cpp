#include "runtime/unboxed.h"

#include <cmath>
#include <cstring>

#include "code_extra.h"
#include "codegen_api.h"
#include "cpython/frame_layout.h"
#include "runtime/direct_call.h"
#include "runtime/runtime.h"

namespace pyjion::unboxed {

uint64_t g_exits[kExitKinds];

const char *exit_name(int kind)
{
    switch (kind) {
    case kExitGuardInt: return "guard_int";
    case kExitGuardFloat: return "guard_float";
    case kExitIntOverflow: return "int_overflow";
    case kExitZeroDivisor: return "zero_divisor";
    case kExitNotRangeIter: return "not_range_iter";
    case kExitTracing: return "tracing";
    case kExitOsrTypes: return "osr_types";
    case kExitNotList: return "not_list";
    case kExitArgTypes: return "arg_types";
    case kExitFloatPow: return "float_pow";
    default: return "?";
    }
}

int long_to_int64(PyObject *v, int64_t *out)
{
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow != 0 || (value == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    *out = value;
    return 0;
}

int apply_moves(_PyInterpreterFrame *frame, char *shadow, const SlotMove *moves, int n)
{
    int status = 0;
    for (int i = 0; i < n; i++) {
        const SlotMove &m = moves[i];
        PyObject **slot = &frame->localsplus[m.slot];
        char *raw = shadow + m.shadow;
        switch (m.op) {
        case kBoxInt:
        case kBoxFloat: {
            PyObject *boxed;
            if (m.local && *slot != nullptr) {
                if (m.op == kBoxFloat && spare_box(*slot)) {
                    std::memcpy(&reinterpret_cast<PyFloatObject *>(*slot)->ob_fval, raw, sizeof(double));
                    break;
                }
                Py_CLEAR(*slot);   // an exact float: its deallocation runs no code
            }
            if (m.op == kBoxInt) {
                int64_t v;
                std::memcpy(&v, raw, sizeof v);
                boxed = PyLong_FromLongLong(v);
            } else {
                double d;
                std::memcpy(&d, raw, sizeof d);
                boxed = PyFloat_FromDouble(d);
            }
            if (boxed == nullptr) {
                status = -1;          // MemoryError stays set
                boxed = Py_NewRef(Py_None);
            }
            *slot = boxed;
            break;
        }
        case kCopyBox:
            *slot = Py_NewRef(frame->localsplus[m.shadow]);
            break;
        case kUnboxInt:
        case kUnboxFloat: {
            PyObject *v = *slot;
            if (m.op == kUnboxInt) {
                int64_t value = 0;
                long_to_int64(v, &value);   // the tier's types say it fits
                std::memcpy(raw, &value, sizeof value);
            } else {
                double d = PyFloat_AS_DOUBLE(v);
                std::memcpy(raw, &d, sizeof d);
            }
            if (m.local && m.op == kUnboxFloat && spare_box(v)) break;   // kept as the spare
            if (m.local) *slot = nullptr;
            Py_DECREF(v);   // an exact int or float: its deallocation runs no code
            break;
        }
        case kCheckInt: case kCheckFloat: case kCheckRangeIter:
            break;
        case kRelease: {
            PyObject *v = *slot;
            if (m.local) *slot = nullptr;
            Py_XDECREF(v);
            break;
        }
        }
    }
    return status;
}

int float_pow(double base, double exp, double *out)
{
    if (!(base > 0.0) || !std::isfinite(base) || !std::isfinite(exp)) return -1;
    double r = std::pow(base, exp);
    if (!std::isfinite(r)) return -1;   // overflow
    *out = r;
    return 0;
}

namespace {
// What the hook's record of the frame's code tells machine code, or nullptr.
PyjionCodeView *code_view(_PyInterpreterFrame *frame)
{
    Py_ssize_t index = direct::hook_state.record_index;
    return index >= 0 ? static_cast<PyjionCodeView *>(pyj_code_extra(layout::frame_code(frame), index)) : nullptr;
}
}  // namespace

PyObject *resume_fallback(PyThreadState *ts, _PyInterpreterFrame *frame)
{
    PyjionCodeView *view = code_view(frame);
    if (view != nullptr && view->fallback_resume != nullptr && !layout::tracing_active(ts, layout::frame_code(frame))) {
        // The unit of the next instruction to run: the frame as the
        // interpreter has it before that instruction.
        return view->fallback_resume(ts, frame, layout::frame_resume_unit(frame));
    }
    return rt::pyj_rt_interpret(ts, frame, 0);
}

void retire(_PyInterpreterFrame *frame)
{
    PyjionCodeView *view = code_view(frame);
    if (view == nullptr || (view->state != PYJION_CODE_COMPILED && view->state != PYJION_CODE_PROFILING)) return;
    view->flags |= PYJION_CODE_NO_OPT;
    view->state = PYJION_CODE_PROFILING;   // the hook compiles baseline code at the next call
}

int enter_loop(_PyInterpreterFrame *frame, char *shadow, const SlotMove *moves, int n)
{
    for (int i = 0; i < n; i++) {
        PyObject *v = frame->localsplus[moves[i].slot];
        int64_t ignored;
        bool ok = false;
        switch (moves[i].op) {
        case kUnboxInt: case kCheckInt: ok = v != nullptr && PyLong_CheckExact(v) && long_to_int64(v, &ignored) == 0; break;
        case kUnboxFloat: case kCheckFloat: ok = v != nullptr && PyFloat_CheckExact(v); break;
        case kCheckRangeIter: ok = v != nullptr && Py_TYPE(v) == &PyRangeIter_Type; break;
        default: break;
        }
        if (!ok) return -1;
    }
    return apply_moves(frame, shadow, moves, n);
}

}  // namespace pyjion::unboxed
