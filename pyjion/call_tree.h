/* The profiler's call tree: time and calls per call path, not only per
 * function (profiler.h keeps the flat profile, cProfile's). A node is one
 * path from a thread's root: its code object, its parent, its children.
 *
 * Bounded: paths deeper than max_depth and paths that find the tree full
 * (max_nodes; threads' roots are made regardless) are charged to their
 * deepest recorded ancestor's node, and counted in `folded`. A node's total time is added only by its outermost
 * active call, as cProfile does per function, so a path folded into itself
 * (deep recursion) is not counted twice. Each thread has its own root
 * (its own clock line). Nodes are addressed by index: the array grows.
 *
 * Called with the GIL held; plain C, used by the hook (_eval.pyx). */
#ifndef PYJION_CALL_TREE_H
#define PYJION_CALL_TREE_H

#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "cstack_guard.h"   /* PYJ_TLS */

#define PYJ_TREE_NONE UINT32_MAX

typedef struct {
    PyObject *code;           /* strong reference; NULL for a thread's root */
    unsigned long thread;     /* the thread of a root node */
    uint32_t parent, first_child, next_sibling, depth;
    uint32_t active;          /* calls of this path on the stack now */
    /* 1 + the index of the edge parent's code -> this code in this code's
     * profile (record.h), found once per path; 0: not yet. */
    uint32_t edge;
    uint64_t calls, total_ticks, own_ticks;
} PyjTreeNode;

typedef struct {
    PyjTreeNode *nodes;
    uint32_t n, cap;
    uint32_t max_nodes, max_depth;
    uint64_t folded;          /* calls charged to an ancestor (tree full or too deep) */
    uint64_t generation;      /* the stats generation the nodes belong to */
} PyjTree;

static PyjTree pyj_tree = {NULL, 0, 0, 200000, 256, 0, 0};

/* The calling thread's root node in the current generation. */
static PYJ_TLS uint32_t pyj_tree_thread_root = PYJ_TREE_NONE;
static PYJ_TLS uint64_t pyj_tree_thread_generation;

static inline uint32_t pyj_tree_add(uint32_t parent, PyObject *code, unsigned long thread)
{
    PyjTree *t = &pyj_tree;
    if (t->n >= t->max_nodes && code != NULL) return PYJ_TREE_NONE;   /* a thread's root is always made */
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 1024;
        PyjTreeNode *grown = (PyjTreeNode *)PyMem_RawRealloc(t->nodes, cap * sizeof(PyjTreeNode));
        if (grown == NULL) return PYJ_TREE_NONE;
        t->nodes = grown;
        t->cap = cap;
    }
    uint32_t i = t->n++;
    PyjTreeNode *node = &t->nodes[i];
    memset(node, 0, sizeof(*node));
    Py_XINCREF(code);
    node->code = code;
    node->thread = thread;
    node->parent = parent;
    node->first_child = node->next_sibling = PYJ_TREE_NONE;
    if (parent != PYJ_TREE_NONE) {
        PyjTreeNode *p = &t->nodes[parent];
        node->depth = p->depth + 1;
        node->next_sibling = p->first_child;
        p->first_child = i;
    }
    return i;
}

static inline uint32_t pyj_tree_root(uint64_t generation)
{
    if (pyj_tree_thread_root == PYJ_TREE_NONE || pyj_tree_thread_generation != generation) {
        pyj_tree.generation = generation;
        pyj_tree_thread_root = pyj_tree_add(PYJ_TREE_NONE, NULL, PyThread_get_thread_ident());
        pyj_tree_thread_generation = generation;
    }
    return pyj_tree_thread_root;
}

/* The node for a call of `code` under `parent` (PYJ_TREE_NONE: the thread's
 * root), made if new; the parent itself where the path cannot grow. A child
 * found is moved to the front of its siblings: a loop calls the same few. */
/* (always inlined: on the profiler's hot path, which has two callers, profiler.h) */
static inline __attribute__((always_inline)) uint32_t pyj_tree_enter(uint32_t parent, PyObject *code,
                                                                      uint64_t generation)
{
    PyjTree *t = &pyj_tree;
    if (parent == PYJ_TREE_NONE) {
        parent = pyj_tree_root(generation);
        if (parent == PYJ_TREE_NONE) return PYJ_TREE_NONE;
    }
    PyjTreeNode *p = &t->nodes[parent];
    uint32_t prev = PYJ_TREE_NONE;
    for (uint32_t c = p->first_child; c != PYJ_TREE_NONE; prev = c, c = t->nodes[c].next_sibling) {
        if (t->nodes[c].code != code) continue;
        if (prev != PYJ_TREE_NONE) {
            t->nodes[prev].next_sibling = t->nodes[c].next_sibling;
            t->nodes[c].next_sibling = p->first_child;
            p->first_child = c;
        }
        return c;
    }
    uint32_t child = p->depth < t->max_depth ? pyj_tree_add(parent, code, 0) : PYJ_TREE_NONE;
    if (child == PYJ_TREE_NONE) {
        t->folded++;
        return parent;
    }
    return child;
}

static inline void pyj_tree_begin(uint32_t node)
{
    if (node != PYJ_TREE_NONE) pyj_tree.nodes[node].active++;
}

static inline void pyj_tree_end(uint32_t node, uint64_t total, uint64_t own)
{
    if (node == PYJ_TREE_NONE) return;
    PyjTreeNode *n = &pyj_tree.nodes[node];
    if (--n->active == 0) n->total_ticks += total;
    n->own_ticks += own;
    n->calls++;
}

/* Forgets every node (reset_stats); calls still running from before keep
 * their old indices but never touch the tree again (their generation). */
static inline void pyj_tree_clear(void)
{
    PyjTree *t = &pyj_tree;
    for (uint32_t i = 0; i < t->n; i++) Py_XDECREF(t->nodes[i].code);
    PyMem_RawFree(t->nodes);
    t->nodes = NULL;
    t->n = t->cap = 0;
    t->folded = 0;
}

#endif
