/* An HTTP/1.x reply read as RFC 9112 frames it, a byte at a time: its status, whether the connection stays
 * open after it, and where it ends. Only the framing is read (the status line, Content-Length,
 * Transfer-Encoding, Connection); every other header is checked for what no reply may hold and skipped.
 * Interim (1xx) replies are skipped: a request ends at its final reply. Strict as llhttp is, with one leniency
 * RFC 9112 asks of a client: Transfer-Encoding overrides Content-Length (and the connection is then closed). */
#ifndef BENCHSITE_HTTP_REPLY_H
#define BENCHSITE_HTTP_REPLY_H

#include <stddef.h>

#define LINE_KEEP 256          /* of each head line, the start the framing reads */
#define HEAD_LIMIT (1 << 20)   /* a head past 1 MiB is no reply a server under test sends */

enum phase { STATUS_LINE, HEADERS, BODY };
enum body { NO_BODY, LENGTH, CHUNKED, TO_CLOSE };
enum chunk { SIZE, SIZE_EXT, SIZE_LF, DATA, DATA_CR, DATA_LF, TRAILER_START, TRAILER_LINE, TRAILER_LF, LAST_LF };
enum fed { FED_BAD = -1, FED_MORE = 0, FED_DONE = 1 };

struct reply {
    enum phase phase;
    char line[LINE_KEEP];  /* the start of the head line being read */
    int line_len;          /* bytes of it kept */
    long long line_total;  /* bytes of it so far */
    int after_cr;          /* the last byte was a CR: only LF may follow */
    long long head_bytes;  /* of the replies' heads, interim ones included */
    int received;          /* any byte of the reply came */
    int status, minor;
    int closing, alive, length_given, te_given, chunked_last;
    int keep;              /* the server keeps the connection open after this reply */
    int closed_after;      /* an interim reply said the connection ends after it: nothing may follow */
    enum body body;
    long long left;        /* bytes of the body (or of the current chunk) still to come */
    int digits;            /* of the current chunk size */
    enum chunk chunk;
    long long body_bytes;  /* of the final reply's body */
};

void reply_reset(struct reply *r);

/* Feed `len` bytes. FED_DONE: the final reply ended, after *used bytes (the rest is not its own); FED_MORE:
 * all were taken and more is needed; FED_BAD: not HTTP. */
int reply_feed(struct reply *r, const char *data, size_t len, int keepalive_request, size_t *used);

/* The server closed the connection in an orderly way (no reset): whether that ended the reply. */
int reply_ends_at_close(const struct reply *r);

#endif
