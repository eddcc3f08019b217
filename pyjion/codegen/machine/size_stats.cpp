#include "machine/size_stats.h"

namespace pyjion::size_stats {

namespace {
Table g_totals;   // compiles run with the GIL held: no lock needed
}

void add(const Table &one_compile)
{
    for (std::size_t i = 0; i < g_totals.size(); i++) {
        g_totals[i].instructions += one_compile[i].instructions;
        g_totals[i].hot_bytes += one_compile[i].hot_bytes;
        g_totals[i].cold_bytes += one_compile[i].cold_bytes;
    }
}

Table totals() { return g_totals; }

}  // namespace pyjion::size_stats
