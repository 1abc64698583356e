/* benchsite-paced's event loop in C: requests sent on a fixed schedule over non-blocking sockets (epoll), each
 * reply read to its end, every outcome counted.
 *
 * Request i falls due at start + i / rate. It goes out at once on an idle kept-alive connection, or on a new
 * connection while fewer than `connections` are open; else it waits in line (FIFO) for the next one to come
 * free. Its send lag counts from its due time, whatever held it: the loop itself or a wait for one of its own
 * connections. Its latency counts from its due time to the last byte of its reply, so a server's stall is
 * charged to every request it held up. The loop does no work per request beyond reading the status line, the
 * framing headers and the body's length: the Python side (paced_client.py) reads the arguments and makes the
 * report from the arrays this returns.
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

#define HEAD_MAX 4096  /* a reply's status line and headers: these servers send under 1 KiB */
#define EVENTS 512

enum state { FREE, CONNECTING, IDLE, SENT };
enum body { NO_BODY, LENGTH, CHUNKED, TO_CLOSE };
enum chunk { SIZE, SIZE_REST, DATA, DATA_CR, DATA_LF, TRAILER_START, TRAILER_LINE };
enum failure { CONNECT, CLOSED, CUT_SHORT, NOT_HTTP, TIMEOUT, FAILURES };

struct conn {
    int fd;
    unsigned generation;  /* counts its connections: an event of one closed earlier in a batch is not its own */
    enum state state;
    long long due;  /* the due time of the request it carries (ns, monotonic) */
    char head[HEAD_MAX];
    int head_len;
    int head_done;
    int received;  /* any byte of the reply */
    int status;
    int keep;  /* the server keeps it open after this reply */
    enum body body;
    long long left;  /* bytes of the body (or of the current chunk) still to come */
    enum chunk chunk;
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
    long long *latencies, *lags, answered, sent;
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

static void reset_reply(struct conn *c) {
    c->head_len = 0;
    c->head_done = 0;
    c->received = 0;
    c->status = 0;
    c->keep = 0;
    c->body = NO_BODY;
    c->left = 0;
    c->chunk = SIZE;
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
    reset_reply(c);
    if (send(c->fd, l->request, (size_t)l->request_len, MSG_NOSIGNAL) != l->request_len) fail(l, slot, CLOSED);
}

/* Put a due request in flight: on an idle kept-alive connection, or a new one (the caller made sure one of them
 * is possible). Its send lag counts from its due time. */
static void begin(struct loop *l, long long due, long long now) {
    l->lags[l->sent++] = (now - due) / 1000;
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
    reset_reply(c);
    c->fd = socket(l->address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (c->fd < 0 || (l->keepalive && setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) ||
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
    epoll_ctl(l->epoll, EPOLL_CTL_ADD, c->fd, &event);
}

static int can_begin(struct loop *l) { return l->idle_n > 0 || l->open < l->limit; }

/* Connections came free: the requests waiting in line go out, the longest-waiting first (a loop, not a
 * recursion: a server refusing every connection frees a slot at each start). */
static void serve_line(struct loop *l, long long now) {
    while (l->line > 0 && can_begin(l)) {
        long long due = due_at(l, l->next - l->line);
        l->line--;
        begin(l, due, now);
    }
}

static void fall_due(struct loop *l, long long index, long long now) {
    l->outstanding++;
    if (l->line == 0 && can_begin(l))
        begin(l, due_at(l, index), now);
    else
        l->line++;
}

/* The reply is complete: count it, keep the connection idle or close it, serve the line. */
static void answered(struct loop *l, int slot, long long now) {
    struct conn *c = &l->conns[slot];
    l->latencies[l->answered++] = (now - c->due) / 1000;
    if (c->status < 200 || c->status > 299) l->non_2xx++;
    l->outstanding--;
    if (l->keepalive && c->keep) {
        c->state = IDLE;
        l->idle[l->idle_n++] = slot;
    } else {
        close_conn(l, slot);
    }
    serve_line(l, now);
}

static int header_is(const char *line, size_t len, const char *name) {
    size_t n = strlen(name);
    return len > n && strncasecmp(line, name, n) == 0 && line[n] == ':';
}

static int value_has(const char *line, size_t len, const char *word) {
    const char *colon = memchr(line, ':', len);
    size_t n = strlen(word), rest = len - (size_t)(colon - line);
    for (size_t i = 1; i + n <= rest; i++)
        if (strncasecmp(colon + i, word, n) == 0) return 1;
    return 0;
}

/* The status line and headers are in c->head (ending in a blank line): read the framing. 0, or -1: not HTTP. */
static int read_head(struct conn *c, int keepalive_request) {
    int minor;
    if (sscanf(c->head, "HTTP/1.%1d %3d", &minor, &c->status) != 2 || c->status < 100) return -1;
    int closing = 0, alive = 0, length_given = 0;
    char *line = strstr(c->head, "\r\n") + 2;
    char *end = c->head + c->head_len;
    while (line < end) {
        char *eol = strstr(line, "\r\n");
        if (eol == NULL || eol == line) break;
        size_t len = (size_t)(eol - line);
        if (header_is(line, len, "content-length")) {
            char *after;
            long long value = strtoll(memchr(line, ':', len) + 1, &after, 10);
            if (value < 0 || after == memchr(line, ':', len) + 1) return -1;
            c->left = value;
            length_given = 1;
        } else if (header_is(line, len, "transfer-encoding") && value_has(line, len, "chunked")) {
            c->body = CHUNKED;
        } else if (header_is(line, len, "connection")) {
            closing |= value_has(line, len, "close");
            alive |= value_has(line, len, "keep-alive");
        }
        line = eol + 2;
    }
    c->keep = keepalive_request && !closing && (minor == 1 || alive);
    if (c->status / 100 == 1 || c->status == 204 || c->status == 304)
        c->body = NO_BODY;
    else if (c->body != CHUNKED)
        c->body = length_given ? LENGTH : TO_CLOSE;
    if (c->body == TO_CLOSE) c->keep = 0;
    return 0;
}

/* Feed body bytes; 1 when the reply is complete, 0 when more is needed, -1 when it is not HTTP. */
static int feed_body(struct conn *c, const char *data, size_t len) {
    size_t i = 0;
    if (c->body == NO_BODY) return 1;
    if (c->body == TO_CLOSE) return 0;
    if (c->body == LENGTH) {
        c->left -= (long long)len;
        return c->left <= 0;
    }
    while (i < len) {
        char ch = data[i];
        switch (c->chunk) {
        case SIZE:
            if (ch >= '0' && ch <= '9') c->left = c->left * 16 + (ch - '0');
            else if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f') c->left = c->left * 16 + ((ch | 0x20) - 'a' + 10);
            else if (ch == ';' || ch == '\r') c->chunk = SIZE_REST;
            else return -1;
            if (c->left > (1LL << 40)) return -1;
            i++;
            break;
        case SIZE_REST:
            if (ch == '\n') c->chunk = c->left ? DATA : TRAILER_START;
            i++;
            break;
        case DATA: {
            size_t take = len - i < (size_t)c->left ? len - i : (size_t)c->left;
            c->left -= (long long)take;
            i += take;
            if (c->left == 0) c->chunk = DATA_CR;
            break;
        }
        case DATA_CR:
            if (ch != '\r') return -1;
            c->chunk = DATA_LF;
            i++;
            break;
        case DATA_LF:
            if (ch != '\n') return -1;
            c->chunk = SIZE;
            i++;
            break;
        case TRAILER_START:
            if (ch == '\n') return 1;
            c->chunk = ch == '\r' ? TRAILER_START : TRAILER_LINE;
            i++;
            break;
        case TRAILER_LINE:
            if (ch == '\n') c->chunk = TRAILER_START;
            i++;
            break;
        }
    }
    return 0;
}

static void readable(struct loop *l, int slot, long long now) {
    struct conn *c = &l->conns[slot];
    char buffer[65536];
    ssize_t got = recv(c->fd, buffer, sizeof buffer, 0);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (c->state == IDLE) {  /* a kept-alive connection the server closed (or wrote to) while idle: dropped */
        for (int i = 0; i < l->idle_n; i++)
            if (l->idle[i] == slot) l->idle[i] = l->idle[--l->idle_n];
        close_conn(l, slot);
        return;
    }
    if (got <= 0) {
        if (c->head_done && c->body == TO_CLOSE)
            answered(l, slot, now);
        else
            fail(l, slot, c->received ? CUT_SHORT : CLOSED);
        return;
    }
    c->received = 1;
    const char *body = buffer;
    size_t body_len = (size_t)got;
    if (!c->head_done) {
        size_t room = HEAD_MAX - 1 - (size_t)c->head_len;
        size_t take = (size_t)got < room ? (size_t)got : room;
        memcpy(c->head + c->head_len, buffer, take);
        c->head[c->head_len + take] = 0;
        char *blank = strstr(c->head, "\r\n\r\n");
        if (blank == NULL) {
            c->head_len += (int)take;
            if (c->head_len >= HEAD_MAX - 1) fail(l, slot, NOT_HTTP);
            return;
        }
        size_t head_end = (size_t)(blank + 4 - c->head);
        body = buffer + (head_end - (size_t)c->head_len);
        body_len = (size_t)got - (head_end - (size_t)c->head_len);
        c->head_len = (int)head_end;
        c->head_done = 1;
        if (read_head(c, l->keepalive) != 0) {
            fail(l, slot, NOT_HTTP);
            return;
        }
    }
    int done = feed_body(c, body, body_len);
    if (done < 0)
        fail(l, slot, NOT_HTTP);
    else if (done > 0)
        answered(l, slot, now);
}

static void event(struct loop *l, struct epoll_event *e, long long now) {
    int slot = (int)(e->data.u64 & 0xffffffffu);
    struct conn *c = &l->conns[slot];
    if (c->state == FREE || (unsigned)(e->data.u64 >> 32) != c->generation)
        return;  /* its connection was closed by an earlier event of the same batch */
    if (c->state == CONNECTING) {
        int error = 0;
        socklen_t len = sizeof error;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &error, &len);
        if (error) {
            fail(l, slot, CONNECT);
            return;
        }
        struct epoll_event event = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = tag(c, slot)};
        epoll_ctl(l->epoll, EPOLL_CTL_MOD, c->fd, &event);
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

/* The loop itself, without the GIL. Returns the elapsed ns, or -1 (errno set) when epoll cannot start. */
static long long run_loop(struct loop *l) {
    struct epoll_event events[EVENTS];
    l->epoll = epoll_create1(EPOLL_CLOEXEC);
    if (l->epoll < 0) return -1;
    prctl(PR_SET_TIMERSLACK, 1UL);  /* wake at the due time, not up to 50 µs after it */
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
    PyObject *result = NULL;
    if (!l.conns || !l.idle || !l.free_slots || !l.latencies || !l.lags) {
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
    sigaction(SIGINT, &ending, &was_int);
    sigaction(SIGTERM, &ending, &was_term);
    Py_BEGIN_ALLOW_THREADS
    elapsed = run_loop(&l);
    Py_END_ALLOW_THREADS
    sigaction(SIGINT, &was_int, NULL);
    sigaction(SIGTERM, &was_term, NULL);
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
        "{s:y#,s:y#,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:L,s:i}", "latencies_us", (char *)l.latencies,
        (Py_ssize_t)(l.answered * (long long)sizeof(long long)), "lags_us", (char *)l.lags,
        (Py_ssize_t)(l.sent * (long long)sizeof(long long)), "elapsed_ns", elapsed, "scheduled", l.count,
        "non_2xx", l.non_2xx, "connect_errors", l.failed[CONNECT], "closed", l.failed[CLOSED], "cut_short",
        l.failed[CUT_SHORT], "not_http", l.failed[NOT_HTTP], "timeouts", l.failed[TIMEOUT], "peak_open",
        l.peak_open);
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
    PyBuffer_Release(&request);
    return result;
}

static PyMethodDef methods[] = {
    {"run", (PyCFunction)(void (*)(void))run, METH_VARARGS | METH_KEYWORDS,
     "run(family, host, port, request, rate, count, connections, keepalive, timeout_s) -> dict: send `count` "
     "requests on the schedule, return the latencies and send lags (int64 µs, as bytes) and the counts."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT, .m_name = "_pacer", .m_doc = "benchsite-paced's event loop in C.",
    .m_size = -1, .m_methods = methods,
};

PyMODINIT_FUNC PyInit__pacer(void) { return PyModule_Create(&module); }
