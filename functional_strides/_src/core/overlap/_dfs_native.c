/* The bounded depth-first search of dfs.py beside this file, and the fast paths of overlap.py
 * around it, as a CPython extension module.
 *
 * Same search, same order of candidates, same step count, so the same answers as the Python
 * code (functional_strides._src.core.overlap.dfs.search_python, overlap._quick_pair_python and
 * overlap._quick_internal); the tests compare them on random equations and layouts. It exists
 * for speed: a step is a few machine instructions instead of an interpreted loop's, and a query
 * is one call that reads the layouts' tuples directly (benchmarks/bench_overlap.py measures
 * both against the Python search and NumPy's solver).
 *
 * Arithmetic is in int64. Every entry point checks, in floating point and before any integer
 * product, that coefficients are below COEF_LIMIT and every sum of products below 2**61, and
 * answers STATUS_TOO_LARGE (-2) otherwise (or when a value is not an int64), leaving the query
 * to Python integers: no product or sum overflows. The one product of two residues (each
 * below a coefficient) is taken in 128 bits where the compiler has them, so coefficients up
 * to 2**61 stay compiled; elsewhere COEF_LIMIT is 2**31 and the product fits in int64.
 *
 * A search without a step budget may run for a long time (the problem is NP-hard): a search
 * of RELEASE_FROM steps or more runs with the GIL released, so that other Python threads run
 * meanwhile, and every CHECK_EVERY steps it takes the GIL back to poll for signals, so that
 * Ctrl-C (or an alarm whose handler raises) interrupts it with the handler's exception
 * (STATUS_INTERRUPTED). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef int64_t i64;

#define STATUS_FOUND 1
#define STATUS_NONE 0
#define STATUS_OUT_OF_STEPS (-1)
#define STATUS_TOO_LARGE (-2)
#define STATUS_INTERRUPTED (-3) /* a signal handler raised: the exception is set */

#define CHECK_EVERY ((i64)1 << 20) /* steps between two polls for signals */
#define RELEASE_FROM ((i64)1 << 16) /* budgets from which the search releases the GIL */
#if defined(__SIZEOF_INT128__)
#define COEF_LIMIT ((i64)1 << 61)
#else
#define COEF_LIMIT ((i64)1 << 31)
#endif
#define SPAN_LIMIT 2305843009213693952.0 /* 2**61 */
#define STACK_WORDS 2048                 /* per-call scratch on the stack up to this many int64 */

#define ABS64(v) ((v) < 0 ? -(v) : (v))

/* Python's floor modulo for m > 0. */
static inline i64 pymod(i64 a, i64 m) {
    i64 r = a % m;
    return r < 0 ? r + m : r;
}

static i64 gcd64(i64 a, i64 b) {
    while (b) {
        i64 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* (a * b) mod m for 0 <= a, b < m (m below COEF_LIMIT: the product fits in the type used). */
static inline i64 mulmod(i64 a, i64 b, i64 m) {
#if defined(__SIZEOF_INT128__)
    return (i64)((unsigned __int128)a * (unsigned __int128)b % (unsigned __int128)m);
#else
    return a * b % m;
#endif
}

/* a**-1 mod m for gcd(a, m) == 1, m > 1 (extended Euclid). */
static i64 inverse64(i64 a, i64 m) {
    i64 r0 = m, r1 = pymod(a, m), t0 = 0, t1 = 1;
    while (r1) {
        i64 q = r0 / r1, t;
        t = r0 - q * r1; r0 = r1; r1 = t;
        t = t0 - q * t1; t0 = t1; t1 = t;
    }
    return pymod(t0, m);
}

/* Scratch of `words` int64: on the stack when small (every layout of rank <= 50), else on the heap. */
typedef struct {
    i64 stack[STACK_WORDS];
    i64 *data;
} work_t;

static i64 *work_get(work_t *w, Py_ssize_t words) {
    w->data = NULL;
    if (words <= STACK_WORDS) return w->stack;
    w->data = PyMem_Malloc(sizeof(i64) * (size_t)words);
    if (!w->data) PyErr_NoMemory();
    return w->data;
}

static void work_free(work_t *w) { PyMem_Free(w->data); }

/* sum s_k x_k == b, 0 <= x_k <= u_k (s_k > 0, n >= 1, b >= 0 else no solution), x != avoid
 * when avoid is not NULL. 1 with a solution in x (caller's order), 0 when none, -1 when
 * budget steps did not decide, -3 when a signal handler raised (the exception is set). ws: 11 * n int64 of scratch. The order of unknowns (largest
 * coefficient first, a stable sort), of levels (last unknown first) and of candidates
 * (largest first) is that of _dfs.search_python; one step per level entered. */
/* PyErr_CheckSignals with the GIL: taken back for the call when the search released it (*ts
 * not NULL), released again after. */
static int poll_signals(PyThreadState **ts) {
    if (*ts == NULL) return PyErr_CheckSignals();
    PyEval_RestoreThread(*ts);
    int status = PyErr_CheckSignals();
    *ts = PyEval_SaveThread();
    return status;
}

static int dfs_locked(Py_ssize_t n, const i64 *s_in, const i64 *u_in, const i64 *avoid, i64 *x, i64 b,
                      i64 budget, i64 *ws, PyThreadState **ts);

/* The search below; from RELEASE_FROM steps of budget (or none: budget < 0), without the GIL. */
static int dfs(Py_ssize_t n, const i64 *s_in, const i64 *u_in, const i64 *avoid, i64 *x, i64 b,
               i64 budget, i64 *ws) {
    PyThreadState *ts = NULL;
    if (budget >= 0 && budget < RELEASE_FROM) return dfs_locked(n, s_in, u_in, avoid, x, b, budget, ws, &ts);
    ts = PyEval_SaveThread();
    int status = dfs_locked(n, s_in, u_in, avoid, x, b, budget, ws, &ts);
    PyEval_RestoreThread(ts);
    return status;
}

static int dfs_locked(Py_ssize_t n, const i64 *s_in, const i64 *u_in, const i64 *avoid, i64 *x, i64 b,
                      i64 budget, i64 *ws, PyThreadState **ts) {
    if (b < 0) return STATUS_NONE;
    i64 *order = ws, *ss = ws + n, *uu = ws + 2 * n, *av = ws + 3 * n, *gcds = ws + 4 * n;
    i64 *reach = ws + 5 * n, *periods = ws + 6 * n, *firsts = ws + 7 * n, *targets = ws + 8 * n;
    i64 *inverses = ws + 9 * n, *spans = ws + 10 * n; /* spans[j]: the most unknowns 0..j reach */
    for (Py_ssize_t i = 0; i < n; i++) { /* stable insertion sort, decreasing coefficient */
        Py_ssize_t k = i;
        while (k > 0 && s_in[order[k - 1]] < s_in[i]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        i64 k = order[i];
        ss[i] = s_in[k];
        uu[i] = u_in[k] < b / ss[i] ? u_in[k] : b / ss[i];
        av[i] = avoid ? avoid[k] : 0;
    }
    gcds[0] = ss[0]; reach[0] = uu[0]; periods[0] = 1; inverses[0] = 0;
    for (Py_ssize_t j = 1; j < n; j++) {
        i64 g = gcd64(gcds[j - 1], ss[j]);
        reach[j] = (reach[j - 1] * gcds[j - 1] + ss[j] * uu[j]) / g;
        periods[j] = gcds[j - 1] / g;
        inverses[j] = periods[j] > 1 ? inverse64(ss[j] / g, periods[j]) : 0;
        gcds[j] = g;
    }
    for (Py_ssize_t j = 0; j < n; j++) spans[j] = gcds[j] * reach[j];
    i64 steps = budget, cur = b;
    Py_ssize_t j = n - 1;
    for (;;) {
        /* enter level j with right-hand side cur (>= 0); descend while a candidate exists */
        if (--steps < 0) return STATUS_OUT_OF_STEPS;
        if ((steps & (CHECK_EVERY - 1)) == 0 && poll_signals(ts) < 0) return STATUS_INTERRUPTED;
        int descended = 0;
        if (j == 0) {
            i64 q = cur / ss[0];
            if (cur - q * ss[0] == 0 && q <= uu[0]) {
                x[0] = q;
                int ok = 1;
                if (avoid) {
                    ok = 0;
                    for (Py_ssize_t i = 0; i < n; i++)
                        if (x[i] != av[i]) { ok = 1; break; }
                }
                if (ok) {
                    for (Py_ssize_t i = 0; i < n; i++) firsts[order[i]] = x[i]; /* caller's order */
                    memcpy(x, firsts, sizeof(i64) * (size_t)n);
                    return STATUS_FOUND;
                }
            }
        } else if (gcds[j] == 1 || cur % gcds[j] == 0) {
            i64 sj = ss[j], period = periods[j], below = spans[j - 1];
            i64 xj = uu[j] < cur / sj ? uu[j] : cur / sj;
            if (period > 1) {
                i64 residue = mulmod((cur / gcds[j]) % period, inverses[j], period);
                xj -= pymod(xj - residue, period);
            }
            i64 first = cur <= below ? 0 : (cur - below + sj - 1) / sj;
            if (xj >= first) {
                x[j] = xj; firsts[j] = first; targets[j] = cur;
                cur -= sj * xj;
                j--;
                descended = 1;
            }
        }
        if (descended) continue;
        /* backtrack: the next candidate of the nearest level above that has one */
        for (;;) {
            j++;
            if (j == n) return STATUS_NONE;
            i64 xj = x[j] - periods[j];
            if (xj >= firsts[j]) {
                x[j] = xj;
                cur = targets[j] - ss[j] * xj;
                j--;
                break;
            }
        }
    }
}

/* Reads an int64 from a Python integer; 0 with *ok cleared when it is not one, or too wide. */
static inline i64 read_i64(PyObject *o, int *ok) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        *ok = 0;
        return 0;
    }
    return (i64)v;
}

static PyObject *tuple_of(const i64 *v, Py_ssize_t n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyLong_FromLongLong(v[i]);
        if (!item) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, item);
    }
    return t;
}

static int is_tuple_pair(PyObject *shape, PyObject *strides) {
    return PyTuple_CheckExact(shape) && PyTuple_CheckExact(strides) &&
           PyTuple_GET_SIZE(shape) == PyTuple_GET_SIZE(strides);
}

static int read_budget(PyObject *o, i64 *budget) {
    int ok = 1;
    *budget = read_i64(o, &ok);
    if (!ok || *budget < 0) {
        PyErr_SetString(PyExc_ValueError, "budget: a non-negative int64 is expected");
        return 0;
    }
    return 1;
}

PyDoc_STRVAR(pair_doc,
"pair(a_shape, a_strides, a_offset, b_shape, b_strides, b_offset, budget, witness, /)\n--\n\n"
"Do layouts a and b (tuples of ints, offsets ints; strides in elements, any sign) share a\n"
"storage index: the fast paths and bounded search of _overlap._quick_pair_python, in one call.\n"
"Returns 0 (none shared), -1 (budget steps did not decide), -2 (a value too large for int64\n"
"arithmetic, or not an int: use Python integers), 1 (shared; with witness, the pair\n"
"(x, y) of coordinates of a and b with a(*x) == b(*y) instead).");

static PyObject *pair(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "pair() takes 8 positional arguments");
        return NULL;
    }
    PyObject *a_shape = args[0], *a_strides = args[1], *b_shape = args[3], *b_strides = args[4];
    i64 budget;
    if (!read_budget(args[6], &budget)) return NULL;
    int witness = PyObject_IsTrue(args[7]);
    if (witness < 0) return NULL;
    if (!is_tuple_pair(a_shape, a_strides) || !is_tuple_pair(b_shape, b_strides))
        return PyLong_FromLong(STATUS_TOO_LARGE);
    Py_ssize_t na = PyTuple_GET_SIZE(a_shape), nb = PyTuple_GET_SIZE(b_shape), m = na + nb;
    int ok = 1;
    i64 a_offset = read_i64(args[2], &ok), b_offset = read_i64(args[5], &ok);
    if (!ok || fabs((double)b_offset - (double)a_offset) >= SPAN_LIMIT)
        return PyLong_FromLong(STATUS_TOO_LARGE);
    work_t w;
    i64 *buf = work_get(&w, 18 * m);
    if (!buf) return NULL;
    /* coef, bound, dims (a flipped dim d is stored as -1 - d), out, x, then 11 m of search space */
    i64 *coef = buf, *bound = buf + m, *dims = buf + 2 * m, *out = buf + 3 * m, *x = buf + 4 * m;
    i64 *extents = buf + 5 * m, *steps = buf + 6 * m; /* the raw layouts, read once */
    int status = STATUS_NONE;
    PyObject *result = NULL;
    for (Py_ssize_t d = 0; d < m && ok; d++) {
        int from_a = d < na;
        extents[d] = read_i64(PyTuple_GET_ITEM(from_a ? a_shape : b_shape, from_a ? d : d - na), &ok);
        steps[d] = read_i64(PyTuple_GET_ITEM(from_a ? a_strides : b_strides, from_a ? d : d - na), &ok);
    }
    if (!ok) {
        status = STATUS_TOO_LARGE;
        goto done;
    }
    i64 rhs = b_offset - a_offset, total = 0;
    double span = 0.0; /* the same sums in floating point: guards the int64 arithmetic */
    Py_ssize_t k = 0;
    for (Py_ssize_t d = 0; d < m; d++) {
        i64 n = extents[d], s = d < na ? steps[d] : -steps[d];
        out[d] = 0;
        if (n == 0) {
            status = STATUS_NONE;  /* an empty layout shares nothing */
            goto done;
        }
        if (n > 1 && s != 0) {
            span += fabs((double)s) * (double)(n - 1);
            if (s >= COEF_LIMIT || s <= -COEF_LIMIT || span >= SPAN_LIMIT) {
                status = STATUS_TOO_LARGE; /* checked before any product that could overflow */
                goto done;
            }
            if (s < 0) {
                rhs -= s * (n - 1);
                s = -s;
                dims[k] = -1 - d;
            } else {
                dims[k] = d;
            }
            coef[k] = s;
            bound[k] = n - 1;
            total += s * (n - 1);
            k++;
        }
    }
    if (rhs < 0 || rhs > total) {
        status = STATUS_NONE;  /* disjoint index ranges */
        goto done;
    }
    if (k == 0) {
        status = rhs == 0 ? STATUS_FOUND : STATUS_NONE;
        goto done;
    }
    if (na == nb && a_offset == b_offset) { /* equal layouts: the first element (out is zeros) */
        int same = 1;
        for (Py_ssize_t d = 0; d < na && same; d++)
            same = extents[d] == extents[na + d] && steps[d] == steps[na + d];
        if (same) {
            status = STATUS_FOUND;
            goto done;
        }
    }
    int mirror = total - rhs < rhs;
    status = dfs(k, coef, bound, NULL, x, mirror ? total - rhs : rhs, budget, buf + 7 * m);
    if (status == STATUS_FOUND) {
        for (Py_ssize_t i = 0; i < k; i++) {
            i64 v = mirror ? bound[i] - x[i] : x[i];
            if (dims[i] < 0)
                out[-1 - dims[i]] = bound[i] - v;
            else
                out[dims[i]] = v;
        }
    }
done:
    if (status == STATUS_INTERRUPTED) {
        result = NULL;
    } else if (status == STATUS_FOUND && witness) {
        PyObject *xa = tuple_of(out, na), *yb = xa ? tuple_of(out + na, nb) : NULL;
        result = yb ? PyTuple_Pack(2, xa, yb) : NULL;
        Py_XDECREF(xa);
        Py_XDECREF(yb);
    } else {
        result = PyLong_FromLong(status);
    }
    work_free(&w);
    return result;
}

PyDoc_STRVAR(internal_doc,
"internal(shape, strides, budget, /)\n--\n\n"
"Does one layout (tuples of ints; strides in elements, any sign) address a storage index\n"
"twice: the fast paths and bounded search of _overlap._internal_witness, in one call.\n"
"Returns 0 (every element has its own index), -1 (budget steps did not decide), -2 (a value\n"
"too large for int64 arithmetic, or not an int), or a tuple c of ints, c != 0,\n"
"|c[d]| < shape[d], sum(c[d] * strides[d]) == 0.");

static PyObject *internal(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "internal() takes 3 positional arguments");
        return NULL;
    }
    PyObject *shape = args[0], *strides = args[1];
    i64 budget;
    if (!read_budget(args[2], &budget)) return NULL;
    if (!is_tuple_pair(shape, strides)) return PyLong_FromLong(STATUS_TOO_LARGE);
    Py_ssize_t n = PyTuple_GET_SIZE(shape);
    work_t w;
    i64 *buf = work_get(&w, 19 * n);
    if (!buf) return NULL;
    /* extents, steps, out, live, coef, bound, centre, x (k <= n entries each), 11 n of search space */
    i64 *extents = buf, *steps = buf + n, *out = buf + 2 * n, *live = buf + 3 * n;
    i64 *coef = buf + 4 * n, *bound = buf + 5 * n, *centre = buf + 6 * n, *x = buf + 7 * n;
    int ok = 1, status = STATUS_NONE;
    PyObject *result = NULL;
    for (Py_ssize_t d = 0; d < n && ok; d++) {
        extents[d] = read_i64(PyTuple_GET_ITEM(shape, d), &ok);
        steps[d] = read_i64(PyTuple_GET_ITEM(strides, d), &ok);
    }
    if (!ok) {
        status = STATUS_TOO_LARGE;
        goto done;
    }
    for (Py_ssize_t d = 0; d < n; d++) {
        out[d] = 0;
        if (extents[d] == 0) goto done; /* empty: checked on every dim before any answer */
    }
    Py_ssize_t k = 0;
    double span = 0.0;
    for (Py_ssize_t d = 0; d < n; d++) {
        if (extents[d] > 1) {
            if (steps[d] == 0) { /* a zero stride: coordinates 0 and 1 of that dim */
                out[d] = 1;
                status = STATUS_FOUND;
                goto done;
            }
            span += 2.0 * fabs((double)steps[d]) * (double)(extents[d] - 1);
            if (steps[d] >= COEF_LIMIT || steps[d] <= -COEF_LIMIT || span >= SPAN_LIMIT) {
                status = STATUS_TOO_LARGE;
                goto done;
            }
            live[k++] = d;
        }
    }
    for (Py_ssize_t i = 0; i < k; i++) { /* live dims by |stride| (stable): nested strides never collide */
        i64 d = live[i];
        Py_ssize_t j = i;
        while (j > 0 && ABS64(steps[coef[j - 1]]) > ABS64(steps[d])) {
            coef[j] = coef[j - 1];
            j--;
        }
        coef[j] = d;
    }
    i64 reach = 0;
    int nested = 1;
    for (Py_ssize_t i = 0; i < k; i++) {
        i64 s = ABS64(steps[coef[i]]);
        if (s <= reach) {
            nested = 0;
            break;
        }
        reach += (extents[coef[i]] - 1) * s;
    }
    if (nested) goto done;
    /* sum |s| x == sum |s| (n - 1), 0 <= x <= 2 (n - 1), x != n - 1; then c = +-(x - (n - 1)) */
    i64 target = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        i64 d = live[i];
        coef[i] = ABS64(steps[d]);
        centre[i] = extents[d] - 1;
        bound[i] = 2 * centre[i];
        target += coef[i] * centre[i];
    }
    status = dfs(k, coef, bound, centre, x, target, budget, buf + 8 * n);
    if (status == STATUS_FOUND)
        for (Py_ssize_t i = 0; i < k; i++) {
            i64 d = live[i];
            out[d] = steps[d] > 0 ? x[i] - centre[i] : centre[i] - x[i];
        }
done:
    if (status == STATUS_INTERRUPTED)
        result = NULL;
    else
        result = status == STATUS_FOUND ? tuple_of(out, n) : PyLong_FromLong(status);
    work_free(&w);
    return result;
}

/* Reads a sequence of int64 into v; 0 with *ok cleared when an item is not one. */
static void read_sequence(PyObject *fast, i64 *v, int *ok) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; i < n && *ok; i++) v[i] = read_i64(items[i], ok);
}

PyDoc_STRVAR(search_doc,
"search(s, u, b, budget, avoid, /)\n--\n\n"
"_dfs.search_python for sum s_k x_k == b, 0 <= x_k <= u_k (s, u: sequences of ints, s_k > 0,\n"
"u_k >= 0; avoid: None or one solution not to return). Returns a list x, None (no solution),\n"
"False (budget steps did not decide) or -2 (a value too large for int64 arithmetic: coefficients\n"
"of 2**61 and more (2**31 where the compiler has no 128-bit integers) or |b| + sum s_k u_k of\n"
"2**61 and more; use search_python). A signal handler that raises interrupts the search.");

static PyObject *search(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "search() takes 5 positional arguments");
        return NULL;
    }
    i64 budget;
    if (!read_budget(args[3], &budget)) return NULL;
    PyObject *s_fast = PySequence_Fast(args[0], "s: a sequence of ints is expected");
    PyObject *u_fast = s_fast ? PySequence_Fast(args[1], "u: a sequence of ints is expected") : NULL;
    PyObject *av_fast = NULL, *result = NULL;
    if (!u_fast) goto fail;
    if (args[4] != Py_None && !(av_fast = PySequence_Fast(args[4], "avoid: None or a sequence of ints")))
        goto fail;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(s_fast);
    if (n < 1 || PySequence_Fast_GET_SIZE(u_fast) != n || (av_fast && PySequence_Fast_GET_SIZE(av_fast) != n)) {
        PyErr_SetString(PyExc_ValueError, "search: s, u (and avoid) must have one entry per unknown, n >= 1");
        goto fail;
    }
    work_t w;
    i64 *buf = work_get(&w, 15 * n);
    if (!buf) goto fail;
    i64 *s = buf, *u = buf + n, *av = av_fast ? buf + 2 * n : NULL, *x = buf + 3 * n, *ws = buf + 4 * n;
    int ok = 1;
    read_sequence(s_fast, s, &ok);
    read_sequence(u_fast, u, &ok);
    if (av) read_sequence(av_fast, av, &ok);
    int b_ok = 1;
    i64 b = read_i64(args[2], &b_ok);
    double span = fabs((double)b);
    for (Py_ssize_t i = 0; i < n && ok; i++) {
        if (s[i] <= 0 || u[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "search: coefficients must be > 0 and bounds >= 0");
            work_free(&w);
            goto fail;
        }
        span += (double)s[i] * (double)u[i];
        ok = s[i] < COEF_LIMIT;
    }
    if (!ok || !b_ok || span >= SPAN_LIMIT) {
        result = PyLong_FromLong(STATUS_TOO_LARGE);
    } else {
        int status = dfs(n, s, u, av, x, b, budget, ws);
        if (status == STATUS_INTERRUPTED) {
            result = NULL;
        } else if (status == STATUS_FOUND) {
            result = PyList_New(n);
            for (Py_ssize_t i = 0; result && i < n; i++) {
                PyObject *item = PyLong_FromLongLong(x[i]);
                if (!item) Py_CLEAR(result);
                else PyList_SET_ITEM(result, i, item);
            }
        } else {
            result = Py_NewRef(status == STATUS_NONE ? Py_None : Py_False);
        }
    }
    work_free(&w);
fail:
    Py_XDECREF(s_fast);
    Py_XDECREF(u_fast);
    Py_XDECREF(av_fast);
    return result;
}

static PyMethodDef methods[] = {
    {"pair", (PyCFunction)(void (*)(void))pair, METH_FASTCALL, pair_doc},
    {"internal", (PyCFunction)(void (*)(void))internal, METH_FASTCALL, internal_doc},
    {"search", (PyCFunction)(void (*)(void))search, METH_FASTCALL, search_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_dfs_native",
    "The bounded depth-first search of functional_strides._src.core.overlap.dfs and the overlap fast paths, compiled.",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__dfs_native(void) { return PyModule_Create(&module); }
