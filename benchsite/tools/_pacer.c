/* benchsite-paced's event loop in C: requests sent on a fixed schedule over non-blocking sockets (epoll), each
 * reply read to its end, every outcome counted.
 *
 * Request i falls due at start + i / rate. It goes out at once on an idle kept-alive connection, or on a new
 * connection while fewer than `connections` are open; else it waits in line (FIFO) for the next one to come
 * free. Its send lag counts from its due time, whatever held it: the loop itself or a wait for one of its own
 * connections; its own lag only the loop's lateness in it, not a wait for the server: how late the loop sent it
 * where a connection stood free when it fell due, and, while it waited in line for one, every moment a reply stood
 * unread (from when its last bytes reached the
 * kernel, SO_TIMESTAMPNS, to when the loop read them): a connection stood free then, and a loop short of CPU left
 * it so. Its latency counts from its due time to the last byte of its reply, so a server's stall is
 * charged to every request it held up. The loop does no work per request beyond reading each reply's framing
 * (_http_reply.c): the Python side (paced_client.py) reads the arguments and makes the report from the arrays
 * this returns.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "_http_reply.h"

#define EVENTS 512

enum state { FREE, CONNECTING, IDLE, SENT };
enum failure { CONNECT, CLOSED, CUT_SHORT, NOT_HTTP, TIMEOUT, FAILURES };

struct conn {
    int fd;
    unsigned generation;  /* counts its connections: an event of one closed earlier in a batch is not its own */
    enum state state;
    long long due;  /* the due time of the request it carries (ns, monotonic) */
    struct reply reply;  /* what came of its reply so far */
};

struct loop {
    int epoll;
    struct sockaddr_storage address;
    socklen_t address_len;
    const char *request;
    Py_ssize_t request_len;
    int keepalive;
    long long start, count, timeout_ns;
    double interval_ns;
    struct conn *conns;
    int limit, open, peak_open;
    int *idle, idle_n;  /* connected kept-alive connections with nothing in flight (a stack) */
    int *free_slots, free_n;
    long long next;  /* the next request to fall due */
    long long line;  /* due requests waiting for a connection: always the `line` indices before `next` */
    long long outstanding;  /* due and not yet ended (waiting, or in flight) */
    long long *latencies, *lags, *own, answered, sent;
    long long stamped;  /* replies whose last bytes the kernel stamped (the rest came free when read) */
    long long unread, unread_to;  /* how long, in all, a reply stood unread (ns; overlaps counted once), and until */
    long long non_2xx, failed[FAILURES];
};

static volatile sig_atomic_t interrupted;  /* SIGINT or SIGTERM came: the loop ends at once */

static void on_signal(int number) { interrupted = number; }

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long due_at(struct loop *l, long long index) { return l->start + (long long)(index * l->interval_ns); }

static unsigned long long tag(struct conn *c, int slot) {
    return ((unsigned long long)c->generation << 32) | (unsigned)slot;
}

static void close_conn(struct loop *l, int slot) {
    struct conn *c = &l->conns[slot];
    if (c->fd >= 0) close(c->fd);  /* which takes it out of the epoll set too */
    c->generation++;
    c->fd = -1;
    c->state = FREE;
    l->open--;
    l->free_slots[l->free_n++] = slot;
}

/* A request ended at once or later, in failure: counted, its connection closed. */
static void fail(struct loop *l, int slot, enum failure why) {
    l->failed[why]++;
    close_conn(l, slot);
    l->outstanding--;
}

static void put_in_flight(struct loop *l, int slot, long long due) {
    struct conn *c = &l->conns[slot];
    c->due = due;
    c->state = SENT;
    reply_reset(&c->reply);
    if (send(c->fd, l->request, (size_t)l->request_len, MSG_NOSIGNAL) != l->request_len) fail(l, slot, CLOSED);
}

/* Put a due request in flight: on an idle kept-alive connection, or a new one (the caller made sure one of them
 * is possible). Its send lag counts from its due time; `own` is the loop's share of it. */
static void begin(struct loop *l, long long due, long long own, long long now) {
    l->lags[l->sent] = (now - due) / 1000;
    l->own[l->sent++] = (own < 0 ? 0 : own > now - due ? now - due : own) / 1000;
    if (l->idle_n > 0) {
        put_in_flight(l, l->idle[--l->idle_n], due);
        return;
    }
    int slot = l->free_slots[--l->free_n];
    struct conn *c = &l->conns[slot];
    l->open++;
    if (l->open > l->peak_open) l->peak_open = l->open;
    c->due = due;
    c->state = CONNECTING;
    reply_reset(&c->reply);
    c->fd = socket(l->address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (c->fd < 0 || (l->keepalive && setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) ||
        setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0 ||
        (connect(c->fd, (struct sockaddr *)&l->address, l->address_len) != 0 && errno != EINPROGRESS)) {
        fail(l, slot, CONNECT);
        return;
    }
    /* On the loopback the handshake is often over by now: the request goes at once, saving a wake-up and two
     * system calls a connection. Else it goes when the connection is writable. */
    struct epoll_event event = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = tag(c, slot)};
    if (send(c->fd, l->request, (size_t)l->request_len, MSG_NOSIGNAL) == l->request_len) {
        c->state = SENT;
    } else if (errno == EAGAIN || errno == ENOTCONN || errno == EINPROGRESS) {
        event.events = EPOLLOUT;
    } else {
        fail(l, slot, CONNECT);
        return;
    }
    if (epoll_ctl(l->epoll, EPOLL_CTL_ADD, c->fd, &event) != 0) fail(l, slot, CONNECT);
}

static int can_begin(struct loop *l) { return l->idle_n > 0 || l->open < l->limit; }

/* Connections came free: the requests waiting in line go out, the longest-waiting first (a loop, not a
 * recursion: a server refusing every connection frees a slot at each start). Each waiting one's `own` holds its
 * lateness when it fell due, less the unread time counted then: what was counted since is added. */
static void serve_line(struct loop *l, long long now) {
    while (l->line > 0 && can_begin(l)) {
        long long index = l->next - l->line;
        l->line--;
        begin(l, due_at(l, index), l->own[index] + l->unread, now);
    }
}

static void fall_due(struct loop *l, long long index, long long now) {
    long long due = due_at(l, index);
    l->outstanding++;
    if (l->line == 0 && can_begin(l)) {
        begin(l, due, now - due, now);
    } else {
        /* it waits for a connection the server holds: the loop's lateness in seeing it due delayed nothing; a
         * reply left unread while it waits does (a request waiting is always a later index than any sent) */
        l->own[index] = -l->unread;
        l->line++;
    }
}

/* The reply is complete (its last bytes reached the kernel at `arrived`): count it and the time it stood unread,
 * keep the connection idle or close it, serve the line. */
static void answered(struct loop *l, int slot, long long now, long long arrived) {
    struct conn *c = &l->conns[slot];
    long long from = arrived > l->unread_to ? arrived : l->unread_to;
    if (now > from) l->unread += now - from;
    if (now > l->unread_to) l->unread_to = now;
    l->latencies[l->answered++] = (now - c->due) / 1000;
    if (c->reply.status < 200 || c->reply.status > 299) l->non_2xx++;
    l->outstanding--;
    if (l->keepalive && c->reply.keep) {
        c->state = IDLE;
        l->idle[l->idle_n++] = slot;
    } else {
        close_conn(l, slot);
    }
    serve_line(l, now);
}

/* When the bytes just read reached the kernel (the newest of them: TCP stamps a read with its last segment's time),
 * on the loop's monotonic clock; `now` where the kernel gave no stamp. */
static long long arrival(struct loop *l, struct msghdr *message, long long now) {
    for (struct cmsghdr *m = CMSG_FIRSTHDR(message); m != NULL; m = CMSG_NXTHDR(message, m)) {
        if (m->cmsg_level != SOL_SOCKET || m->cmsg_type != SCM_TIMESTAMPNS) continue;
        struct timespec stamp, real;
        memcpy(&stamp, CMSG_DATA(m), sizeof stamp);
        clock_gettime(CLOCK_REALTIME, &real);
        long long ago = (real.tv_sec - stamp.tv_sec) * 1000000000LL + (real.tv_nsec - stamp.tv_nsec);
        l->stamped++;
        return ago > 0 ? now_ns() - ago : now;
    }
    return now;
}

static void readable(struct loop *l, int slot, long long now) {
    struct conn *c = &l->conns[slot];
    char buffer[65536];
    union {
        char space[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } control;
    struct iovec part = {.iov_base = buffer, .iov_len = sizeof buffer};
    struct msghdr message = {.msg_iov = &part, .msg_iovlen = 1, .msg_control = control.space,
                             .msg_controllen = sizeof control.space};
    ssize_t got = recvmsg(c->fd, &message, 0);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (c->state == IDLE) {  /* a kept-alive connection the server closed (or wrote to) while idle: dropped */
        for (int i = 0; i < l->idle_n; i++)
            if (l->idle[i] == slot) l->idle[i] = l->idle[--l->idle_n];
        close_conn(l, slot);
        return;
    }
    if (got == 0 && reply_ends_at_close(&c->reply)) {
        answered(l, slot, now, now);
        return;
    }
    if (got <= 0) {  /* closed, or reset: a reset ends no reply, even one read to its close */
        fail(l, slot, c->reply.received ? CUT_SHORT : CLOSED);
        return;
    }
    size_t used = 0;
    int fed = reply_feed(&c->reply, buffer, (size_t)got, l->keepalive, &used);
    if (fed == FED_BAD) {
        fail(l, slot, NOT_HTTP);
    } else if (fed == FED_DONE) {
        if (used < (size_t)got) c->reply.keep = 0;  /* bytes past its reply: the connection is not reused */
        long long arrived = arrival(l, &message, now);
        answered(l, slot, now, arrived < now ? arrived : now);
    }
}

static void event(struct loop *l, struct epoll_event *e, long long now) {
    int slot = (int)(e->data.u64 & 0xffffffffu);
    struct conn *c = &l->conns[slot];
    if (c->state == FREE || (unsigned)(e->data.u64 >> 32) != c->generation)
        return;  /* its connection was closed by an earlier event of the same batch */
    if (c->state == CONNECTING) {
        int error = 0;
        socklen_t len = sizeof error;
        struct epoll_event event = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = tag(c, slot)};
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0 ||
            epoll_ctl(l->epoll, EPOLL_CTL_MOD, c->fd, &event) != 0) {
            fail(l, slot, CONNECT);
            return;
        }
        put_in_flight(l, slot, c->due);
    } else {
        readable(l, slot, now);
    }
    serve_line(l, now);
}

static void expire(struct loop *l, long long now) {
    for (int slot = 0; slot < l->limit; slot++) {
        struct conn *c = &l->conns[slot];
        if ((c->state == SENT || c->state == CONNECTING) && now - c->due > l->timeout_ns) fail(l, slot, TIMEOUT);
    }
    serve_line(l, now);
}

/* The loop itself, without the GIL. Returns the elapsed ns, or -1 (errno set) where the kernel refuses what
 * it needs: epoll, epoll_pwait2 (Linux 5.11), a 1 ns timer slack. */
static long long run_loop(struct loop *l) {
    struct epoll_event events[EVENTS];
    struct timespec none = {0, 0};
    l->epoll = epoll_create1(EPOLL_CLOEXEC);
    if (l->epoll < 0) return -1;
    /* wake at the due time, not up to 50 µs after it; and ask once for epoll_pwait2, before any request */
    if (prctl(PR_SET_TIMERSLACK, 1UL) != 0 || epoll_pwait2(l->epoll, events, EVENTS, &none, NULL) < 0) {
        int error = errno;
        close(l->epoll);
        errno = error;
        return -1;
    }
    long long start = l->start = now_ns() + 20000000LL;
    long long last_check = start, end_by = start + (long long)(l->count * l->interval_ns) + 2 * l->timeout_ns;
    for (;;) {
        if (interrupted) break;
        long long now = now_ns();
        while (l->next < l->count && due_at(l, l->next) <= now) {
            l->next++;
            fall_due(l, l->next - 1, now);
        }
        if (l->next >= l->count && l->outstanding == 0) break;
        if (now - last_check > 10000000LL) {
            expire(l, now);
            last_check = now;
            if (l->next >= l->count && now > end_by) break;
        }
        long long wait = l->next < l->count ? due_at(l, l->next) - now : 10000000LL;
        if (wait > 10000000LL) wait = 10000000LL;
        struct timespec timeout = {.tv_sec = 0, .tv_nsec = wait > 0 ? wait : 0};
        int n = epoll_pwait2(l->epoll, events, EVENTS, &timeout, NULL);
        if (n < 0 && errno != EINTR) {
            int error = errno;
            close(l->epoll);
            errno = error;
            return -1;
        }
        /* One time for the batch: when the kernel said its replies were there, not when the loop came to each
         * (closing a connection costs microseconds, which the last of a long batch would otherwise be charged). */
        long long ready = now_ns();
        for (int i = 0; i < n; i++) event(l, &events[i], ready);
    }
    close(l->epoll);
    return now_ns() - start;
}

static PyObject *run(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwargs) {
    static char *names[] = {"family", "host", "port", "request", "rate", "count", "connections",
                            "keepalive", "timeout_s", NULL};
    int family, port, connections, keepalive;
    const char *host;
    Py_buffer request;
    double rate, timeout_s;
    long long count;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "isiy*dLipd", names, &family, &host, &port, &request, &rate,
                                     &count, &connections, &keepalive, &timeout_s))
        return NULL;
    struct loop l = {0};
    l.request = request.buf;
    l.request_len = request.len;
    if (family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&l.address;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((unsigned short)port);
        if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1) goto bad_address;
        l.address_len = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&l.address;
        a->sin_family = AF_INET;
        a->sin_port = htons((unsigned short)port);
        if (inet_pton(AF_INET, host, &a->sin_addr) != 1) goto bad_address;
        l.address_len = sizeof *a;
    }
    l.keepalive = keepalive;
    l.count = count;
    l.interval_ns = 1e9 / rate;
    l.timeout_ns = (long long)(timeout_s * 1e9);
    l.limit = connections;
    l.conns = PyMem_Calloc((size_t)connections, sizeof *l.conns);
    l.idle = PyMem_Calloc((size_t)connections, sizeof *l.idle);
    l.free_slots = PyMem_Calloc((size_t)connections, sizeof *l.free_slots);
    l.latencies = PyMem_Calloc((size_t)count, sizeof *l.latencies);
    l.lags = PyMem_Calloc((size_t)count, sizeof *l.lags);
    l.own = PyMem_Calloc((size_t)count, sizeof *l.own);
    PyObject *result = NULL;
    if (!l.conns || !l.idle || !l.free_slots || !l.latencies || !l.lags || !l.own) {
        PyErr_NoMemory();
        goto done;
    }
    for (int slot = connections - 1; slot >= 0; slot--) {
        l.conns[slot].fd = -1;
        l.free_slots[l.free_n++] = slot;
    }
    long long elapsed;
    struct sigaction ending = {.sa_handler = on_signal}, was_int, was_term;
    interrupted = 0;
    if (sigaction(SIGINT, &ending, &was_int) != 0 || sigaction(SIGTERM, &ending, &was_term) != 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    elapsed = run_loop(&l);
    Py_END_ALLOW_THREADS
    int loop_errno = errno;
    if (sigaction(SIGINT, &was_int, NULL) != 0 || sigaction(SIGTERM, &was_term, NULL) != 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        goto done;
    }
    errno = loop_errno;
    if (interrupted) {
        for (int slot = 0; slot < connections; slot++)
            if (l.conns[slot].fd >= 0) close(l.conns[slot].fd);
        PyErr_SetNone(PyExc_KeyboardInterrupt);
        goto done;
    }
    if (elapsed < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        goto done;
    }
    l.failed[TIMEOUT] += l.outstanding;  /* never answered within the run's last timeout */
    for (int slot = 0; slot < connections; slot++)
        if (l.conns[slot].fd >= 0) close(l.conns[slot].fd);
    result = Py_BuildValue(
        "{s:y#,s:y#,s:y#,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:i,s:L}", "latencies_us", (char *)l.latencies,
        (Py_ssize_t)(l.answered * (long long)sizeof(long long)), "lags_us", (char *)l.lags,
        (Py_ssize_t)(l.sent * (long long)sizeof(long long)), "own_lags_us", (char *)l.own,
        (Py_ssize_t)(l.sent * (long long)sizeof(long long)), "elapsed_ns", elapsed, "scheduled", l.count,
        "non_2xx", l.non_2xx, "connect_errors", l.failed[CONNECT], "closed", l.failed[CLOSED], "cut_short",
        l.failed[CUT_SHORT], "not_http", l.failed[NOT_HTTP], "timeouts", l.failed[TIMEOUT], "peak_open",
        l.peak_open, "stamped", l.stamped);
    goto done;
bad_address:
    PyErr_Format(PyExc_ValueError, "%s is not a numeric address", host);
    PyBuffer_Release(&request);
    return NULL;
done:
    PyMem_Free(l.conns);
    PyMem_Free(l.idle);
    PyMem_Free(l.free_slots);
    PyMem_Free(l.latencies);
    PyMem_Free(l.lags);
    PyMem_Free(l.own);
    PyBuffer_Release(&request);
    return result;
}

/* The loop's reading of one reply, arriving in `chunks`, then the server's close where `closed`: for tests of
 * its framing against another parser. */
static PyObject *frame(PyObject *Py_UNUSED(self), PyObject *args, PyObject *kwargs) {
    static char *names[] = {"chunks", "keepalive", "closed", NULL};
    PyObject *chunks;
    int keepalive, closed;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Opp", names, &chunks, &keepalive, &closed)) return NULL;
    PyObject *sequence = PySequence_Fast(chunks, "chunks must be a sequence of bytes");
    if (sequence == NULL) return NULL;
    struct reply r;
    reply_reset(&r);
    int fed = FED_MORE;
    long long rest = 0;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(sequence); i++) {
        char *data;
        Py_ssize_t len;
        if (PyBytes_AsStringAndSize(PySequence_Fast_GET_ITEM(sequence, i), &data, &len) != 0) {
            Py_DECREF(sequence);
            return NULL;
        }
        size_t used = 0;
        if (fed == FED_MORE) {
            fed = reply_feed(&r, data, (size_t)len, keepalive, &used);
            if (fed == FED_DONE) rest += len - (Py_ssize_t)used;
        } else if (fed == FED_DONE) {
            rest += len;
        }
    }
    Py_DECREF(sequence);
    const char *outcome = fed == FED_DONE ? "answered" : fed == FED_BAD ? "not_http" : "incomplete";
    if (fed == FED_MORE && closed)
        outcome = reply_ends_at_close(&r) ? "answered" : r.received ? "cut_short" : "closed";
    return Py_BuildValue("{s:s,s:i,s:O,s:L,s:L}", "outcome", outcome, "status", r.status, "keep",
                         r.keep ? Py_True : Py_False, "body_bytes", r.body_bytes, "rest", rest);
}

static PyMethodDef methods[] = {
    {"frame", (PyCFunction)(void (*)(void))frame, METH_VARARGS | METH_KEYWORDS,
     "frame(chunks, keepalive, closed) -> dict: the outcome, status, keep-alive, body bytes and bytes past the "
     "end of one reply read as the loop reads it."},
    {"run", (PyCFunction)(void (*)(void))run, METH_VARARGS | METH_KEYWORDS,
     "run(family, host, port, request, rate, count, connections, keepalive, timeout_s) -> dict: send `count` "
     "requests on the schedule, return the latencies, send lags and own lags (int64 µs, as bytes) and the counts."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT, .m_name = "_pacer", .m_doc = "benchsite-paced's event loop in C.",
    .m_size = -1, .m_methods = methods,
};

PyMODINIT_FUNC PyInit__pacer(void) { return PyModule_Create(&module); }
