/* An HTTP/1.x reply read as RFC 9112 frames it (see _http_reply.h). */
#include "_http_reply.h"

#include <limits.h>
#include <string.h>
#include <strings.h>

static int is_ctl(unsigned char ch) { return (ch < 0x20 && ch != '\t') || ch == 0x7f; }

static int is_tchar(unsigned char ch) {
    return (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') || strchr("!#$%&'*+-.^_`|~", ch);
}

static int hex_value(unsigned char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f') return (ch | 0x20) - 'a' + 10;
    return -1;
}

/* The value without the spaces and tabs around it. */
static void trim(const char **value, size_t *len) {
    while (*len > 0 && (**value == ' ' || **value == '\t')) (*value)++, (*len)--;
    while (*len > 0 && ((*value)[*len - 1] == ' ' || (*value)[*len - 1] == '\t')) (*len)--;
}

/* Whether the comma-separated list holds `token` (any case); `last`: as its last element. */
static int lists(const char *value, size_t len, const char *token, int last) {
    size_t n = strlen(token);
    const char *end = value + len;
    for (;;) {
        const char *comma = memchr(value, ',', (size_t)(end - value));
        const char *part = value;
        size_t part_len = (size_t)((comma ? comma : end) - value);
        trim(&part, &part_len);
        int is = part_len == n && strncasecmp(part, token, n) == 0;
        if (is && !last) return 1;
        if (comma == NULL) return is;
        value = comma + 1;
    }
}

void reply_reset(struct reply *r) { memset(r, 0, sizeof *r); }

/* Clear what one head said, for the next (after an interim reply). */
static void next_head(struct reply *r) {
    r->phase = STATUS_LINE;
    r->status = r->minor = 0;
    r->closing = r->alive = r->length_given = r->te_given = r->chunked_last = 0;
    r->left = 0;
}

/* "HTTP/1.x SSS" then the end, or a space and a reason. */
static int status_line(struct reply *r, const char *line, size_t len) {
    if (len < 12 || strncmp(line, "HTTP/1.", 7) != 0 || (line[7] != '0' && line[7] != '1') || line[8] != ' ')
        return FED_BAD;
    for (int i = 9; i < 12; i++)
        if (line[i] < '0' || line[i] > '9') return FED_BAD;
    if (len > 12 && line[12] != ' ') return FED_BAD;
    r->minor = line[7] - '0';
    r->status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
    if (r->status < 100) return FED_BAD;
    r->phase = HEADERS;
    return FED_MORE;
}

static int content_length(struct reply *r, const char *value, size_t len) {
    if (r->length_given || len == 0) return FED_BAD;  /* given twice (even alike), or empty */
    long long total = 0;
    for (size_t i = 0; i < len; i++) {
        if (value[i] < '0' || value[i] > '9') return FED_BAD;
        if (total > (LLONG_MAX - (value[i] - '0')) / 10) return FED_BAD;  /* beyond a signed 64-bit count */
        total = total * 10 + (value[i] - '0');
    }
    r->length_given = 1;
    r->left = total;
    return FED_MORE;
}

static int header_line(struct reply *r, const char *line, size_t len, int whole) {
    const char *colon = memchr(line, ':', len);
    if (colon == NULL || colon == line) return FED_BAD;
    for (const char *ch = line; ch < colon; ch++)
        if (!is_tchar((unsigned char)*ch)) return FED_BAD;
    size_t name_len = (size_t)(colon - line), value_len = len - name_len - 1;
    const char *value = colon + 1;
    trim(&value, &value_len);
    int framing = 1;
    if (name_len == 14 && strncasecmp(line, "content-length", 14) == 0) {
        if (!whole || content_length(r, value, value_len) != FED_MORE) return FED_BAD;
    } else if (name_len == 17 && strncasecmp(line, "transfer-encoding", 17) == 0) {
        r->te_given = 1;
        r->chunked_last = lists(value, value_len, "chunked", 1);
    } else if (name_len == 10 && strncasecmp(line, "connection", 10) == 0) {
        r->closing |= lists(value, value_len, "close", 0);
        r->alive |= lists(value, value_len, "keep-alive", 0);
    } else {
        framing = 0;
    }
    return framing && !whole ? FED_BAD : FED_MORE;  /* a framing header longer than what is kept of a line */
}

/* The blank line ended a head: an interim reply is skipped, a final one says how its body is framed. */
static int head_ended(struct reply *r, int keepalive_request) {
    if (r->status / 100 == 1) {
        if (r->status == 101) return FED_BAD;  /* switching protocols: never asked */
        r->closed_after = r->closing || (r->minor == 0 && !r->alive);
        next_head(r);
        return FED_MORE;
    }
    r->phase = BODY;
    int both = r->te_given && r->length_given;  /* RFC 9112 6.3: Transfer-Encoding overrides, then close */
    if (r->status == 204 || r->status == 304) {
        r->body = NO_BODY;
    } else if (r->te_given) {
        r->body = r->chunked_last ? CHUNKED : TO_CLOSE;
        r->left = 0;
    } else {
        r->body = r->length_given ? LENGTH : TO_CLOSE;
    }
    r->keep = keepalive_request && !r->closing && (r->minor == 1 || r->alive) && r->body != TO_CLOSE && !both;
    if (r->body == NO_BODY || (r->body == LENGTH && r->left == 0)) return FED_DONE;
    return FED_MORE;
}

/* One head line ended (its CR LF taken). */
static int line_ended(struct reply *r, int keepalive_request) {
    size_t len = (size_t)r->line_len;
    int whole = r->line_total <= LINE_KEEP;
    r->line_len = 0;
    r->line_total = 0;
    if (r->phase == STATUS_LINE) return status_line(r, r->line, len);
    if (len == 0) return head_ended(r, keepalive_request);
    if (r->line[0] == ' ' || r->line[0] == '\t') return FED_BAD;  /* obsolete line folding */
    return header_line(r, r->line, len, whole);
}

static int chunked_byte(struct reply *r, unsigned char ch) {
    int digit;
    switch (r->chunk) {
    case SIZE:
        if ((digit = hex_value(ch)) >= 0) {
            if (r->left > (LLONG_MAX - digit) / 16) return FED_BAD;
            r->left = r->left * 16 + digit;
            r->digits++;
        } else if ((ch == ';' || ch == '\r') && r->digits > 0) {
            r->chunk = ch == ';' ? SIZE_EXT : SIZE_LF;
        } else {
            return FED_BAD;
        }
        return FED_MORE;
    case SIZE_EXT:  /* chunk extensions: read past */
        if (ch == '\r') r->chunk = SIZE_LF;
        else if (ch == '\n' || is_ctl(ch)) return FED_BAD;
        return FED_MORE;
    case SIZE_LF:
        if (ch != '\n') return FED_BAD;
        r->chunk = r->left ? DATA : TRAILER_START;
        return FED_MORE;
    case DATA_CR:
        if (ch != '\r') return FED_BAD;
        r->chunk = DATA_LF;
        return FED_MORE;
    case DATA_LF:
        if (ch != '\n') return FED_BAD;
        r->chunk = SIZE;
        r->digits = 0;
        return FED_MORE;
    case TRAILER_START:
        if (ch == '\r') r->chunk = LAST_LF;
        else if (ch == '\n' || is_ctl(ch)) return FED_BAD;
        else r->chunk = TRAILER_LINE;
        return FED_MORE;
    case TRAILER_LINE:
        if (ch == '\r') r->chunk = TRAILER_LF;
        else if (ch == '\n' || is_ctl(ch)) return FED_BAD;
        return FED_MORE;
    case TRAILER_LF:
        if (ch != '\n') return FED_BAD;
        r->chunk = TRAILER_START;
        return FED_MORE;
    case LAST_LF:
        return ch == '\n' ? FED_DONE : FED_BAD;
    case DATA:
        break;  /* taken in runs by the caller */
    }
    return FED_BAD;
}

static int body_bytes(struct reply *r, const char *data, size_t len, size_t *used) {
    size_t i = 0;
    if (r->body == TO_CLOSE) {
        r->body_bytes += (long long)len;
        *used = len;
        return FED_MORE;
    }
    while (i < len) {
        if (r->body == LENGTH || r->chunk == DATA) {
            size_t take = len - i < (unsigned long long)r->left ? len - i : (size_t)r->left;
            r->left -= (long long)take;
            r->body_bytes += (long long)take;
            i += take;
            if (r->left > 0) break;
            if (r->body == LENGTH) {
                *used = i;
                return FED_DONE;
            }
            r->chunk = DATA_CR;
            continue;
        }
        int fed = chunked_byte(r, (unsigned char)data[i++]);
        if (fed != FED_MORE) {
            *used = i;
            return fed;
        }
    }
    *used = i;
    return FED_MORE;
}

int reply_feed(struct reply *r, const char *data, size_t len, int keepalive_request, size_t *used) {
    size_t i = 0;
    if (len > 0) r->received = 1;
    while (i < len && r->phase != BODY) {
        unsigned char ch = (unsigned char)data[i++];
        if (++r->head_bytes > HEAD_LIMIT || r->closed_after) return FED_BAD;
        if (r->after_cr) {
            r->after_cr = 0;
            if (ch != '\n') return FED_BAD;
            int fed = line_ended(r, keepalive_request);
            if (fed != FED_MORE) {
                *used = i;
                return fed;
            }
        } else if (ch == '\r') {
            r->after_cr = 1;
        } else if (ch == '\n' || is_ctl(ch)) {
            return FED_BAD;  /* a bare LF, a NUL or another control character in the head */
        } else {
            if (r->line_len < LINE_KEEP) r->line[r->line_len++] = (char)ch;
            r->line_total++;
        }
    }
    if (r->phase != BODY) {
        *used = i;
        return FED_MORE;
    }
    size_t taken = 0;
    int fed = body_bytes(r, data + i, len - i, &taken);
    *used = i + taken;
    return fed;
}

int reply_ends_at_close(const struct reply *r) { return r->phase == BODY && r->body == TO_CLOSE; }
