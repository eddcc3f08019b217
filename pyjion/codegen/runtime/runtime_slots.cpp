#include "runtime/runtime_slots.h"
#include "runtime/cpython_api.h"

#include "front/opcodes.h"
#include "runtime/runtime.h"

#include <cstring>

namespace pyjion {
namespace slots {

namespace {

inline int finish(PyObject **sp, PyObject *result, PyThreadState *ts)
{
    if (result == nullptr) return -1;
    sp[0] = result;
    // __add__, __getitem__ & co. may have turned tracing on (the current
    // frame is the compiled one)
    return layout::tracing_active(ts, layout::frame_code(layout::current_frame(ts)));
}

template <PyObject *(*F)(PyObject *, PyObject *)>
int binary(PyObject **sp, PyThreadState *ts)
{
    PyObject *left = sp[0], *right = sp[1];
    PyObject *result = F(left, right);
    Py_DECREF(left);
    Py_DECREF(right);
    return finish(sp, result, ts);
}

struct Entry {
    BinaryHelper fn;
    const char *name;
};

#define NB(fn) Entry{&binary<fn>, "slots::binary<" #fn ">"}
// In the NB_* order of CPython 3.11 (opcode._nb_ops).
const Entry kBinary[] = {
    NB(PyNumber_Add), NB(PyNumber_And), NB(PyNumber_FloorDivide), NB(PyNumber_Lshift),
    NB(PyNumber_MatrixMultiply), NB(PyNumber_Multiply), NB(PyNumber_Remainder), NB(PyNumber_Or),
    NB(rt::pyj_rt_power), NB(PyNumber_Rshift), NB(PyNumber_Subtract), NB(PyNumber_TrueDivide),
    NB(PyNumber_Xor), NB(PyNumber_InPlaceAdd), NB(PyNumber_InPlaceAnd), NB(PyNumber_InPlaceFloorDivide),
    NB(PyNumber_InPlaceLshift), NB(PyNumber_InPlaceMatrixMultiply), NB(PyNumber_InPlaceMultiply),
    NB(PyNumber_InPlaceRemainder), NB(PyNumber_InPlaceOr), NB(rt::pyj_rt_inplace_power),
    NB(PyNumber_InPlaceRshift), NB(PyNumber_InPlaceSubtract), NB(PyNumber_InPlaceTrueDivide),
    NB(PyNumber_InPlaceXor),
};
#undef NB
static_assert(sizeof(kBinary) / sizeof(kBinary[0]) == NB_INPLACE_XOR + 1, "BINARY_OP table out of step");

}  // namespace

BinaryHelper binary_helper(int nb, const char **name)
{
    if (nb < 0 || nb > NB_INPLACE_XOR) return nullptr;
    *name = kBinary[nb].name;
    return kBinary[nb].fn;
}

namespace {
// container[sub] for an exact list, tuple or str indexed by an exact int of
// one digit within its length (negative counts from the end), without
// PyObject_GetItem's index conversion. False where the generic path must
// answer (other types, an IndexError to raise).
bool sequence_item(PyObject *container, PyObject *sub, PyObject **result)
{
    Py_ssize_t i;
    if (!layout::one_digit_int(sub, &i)) return false;
    PyTypeObject *type = Py_TYPE(container);
    if (type != &PyList_Type && type != &PyTuple_Type && type != &PyUnicode_Type) return false;
    Py_ssize_t n = type == &PyUnicode_Type ? PyUnicode_GET_LENGTH(container) : Py_SIZE(container);
    if (i < 0) i += n;
    if (i < 0 || i >= n) return false;
    if (type == &PyList_Type) {
        *result = Py_NewRef(PyList_GET_ITEM(container, i));
    } else if (type == &PyTuple_Type) {
        *result = Py_NewRef(PyTuple_GET_ITEM(container, i));
    } else {
        *result = PyUnicode_FromOrdinal(PyUnicode_READ_CHAR(container, i));
    }
    return true;
}
}  // namespace

int get_item(PyObject **sp, PyThreadState *ts)
{
    PyObject *container = sp[0], *sub = sp[1];
    PyObject *result;
    if (sequence_item(container, sub, &result)) {
        // an item, or PyUnicode_FromOrdinal's MemoryError
    } else if (PyDict_CheckExact(container)) {
        result = PyDict_GetItemWithError(container, sub);
        if (result != nullptr) {
            Py_INCREF(result);
        } else if (!PyErr_Occurred()) {
            _PyErr_SetKeyError(sub);
        }
    } else {
        result = PyObject_GetItem(container, sub);
    }
    Py_DECREF(container);
    Py_DECREF(sub);
    return finish(sp, result, ts);
}

namespace {
// The comparison of sp[0] with sp[1], both released (as ceval does).
PyObject *compare_consume(PyObject **sp, int op)
{
    PyObject *left = sp[0], *right = sp[1];
    PyObject *result = PyObject_RichCompare(left, right, op);
    Py_DECREF(left);
    Py_DECREF(right);
    return result;
}
}  // namespace

int str_equal(PyObject *a, PyObject *b)
{
    if (a == b) return 1;
#if PY_VERSION_HEX < 0x030C0000
    if (!PyUnicode_IS_READY(a) || !PyUnicode_IS_READY(b)) return -1;
#endif
    Py_ssize_t n = PyUnicode_GET_LENGTH(a);
    int kind = PyUnicode_KIND(a);
    if (n != PyUnicode_GET_LENGTH(b) || kind != static_cast<int>(PyUnicode_KIND(b))) return 0;
    return memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), static_cast<size_t>(n) * kind) == 0;
}

int compare(PyObject **sp, PyThreadState *ts, int op) { return finish(sp, compare_consume(sp, op), ts); }

int truth_consume(PyObject *value)
{
    int truth = PyObject_IsTrue(value);   // True and False by identity first
    Py_DECREF(value);
    return truth;
}

int compare_truth(PyObject **sp, int op, PyThreadState *ts)
{
    PyObject *result = compare_consume(sp, op);
    int truth = result == nullptr ? -1 : truth_consume(result);
#if PY_VERSION_HEX >= 0x030D0000
    // __lt__ & co. (or the result's __bool__) may have turned tracing on
    if (truth >= 0 && layout::tracing_active(ts, layout::frame_code(layout::current_frame(ts)))) truth += 2;
#else
    (void)ts;
#endif
    return truth;
}

}  // namespace slots
}  // namespace pyjion
