#include "front/exception_table.h"

#include "front/bytecode.h"
#include "codegen_api.h"

namespace pyjion {

namespace {
// Numbers are stored big-end first in 6-bit groups; bit 6 says another group
// follows, bit 7 marks the first byte of an entry.
int read_varint(const unsigned char *&p, const unsigned char *end)
{
    if (p >= end) throw CompileError{PYJION_RESULT_COMPILER_ERROR, "truncated exception table"};
    unsigned char byte = *p++;
    int value = byte & 63;
    while (byte & 64) {
        if (p >= end) throw CompileError{PYJION_RESULT_COMPILER_ERROR, "truncated exception table"};
        byte = *p++;
        value = (value << 6) | (byte & 63);
    }
    return value;
}
}  // namespace

ExceptionTable::ExceptionTable(PyCodeObject *code)
{
    const auto *p = reinterpret_cast<const unsigned char *>(PyBytes_AS_STRING(code->co_exceptiontable));
    const auto *end = p + PyBytes_GET_SIZE(code->co_exceptiontable);
    while (p < end) {
        ExceptionEntry e;
        e.start = read_varint(p, end);
        e.end = e.start + read_varint(p, end);
        e.handler = read_varint(p, end);
        int depth_and_lasti = read_varint(p, end);
        e.level = depth_and_lasti >> 1;
        e.lasti = depth_and_lasti & 1;
        entries_.push_back(e);
    }
}

const ExceptionEntry *ExceptionTable::find(int unit) const
{
    // Entries are sorted by start and do not overlap.
    for (const ExceptionEntry &e : entries_) {
        if (unit < e.start) return nullptr;
        if (unit < e.end) return &e;
    }
    return nullptr;
}

}  // namespace pyjion
