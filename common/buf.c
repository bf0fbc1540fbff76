/*
 * buf.c -- growable arrays (tmap_grow) and the NUL-terminated byte buffer
 * whose appends remember an allocation failure (tmap_buf).
 */
#include "common/base.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int tmap_grow(void *array, size_t *cap, size_t need, size_t elem)
{
    void **p = (void **)array;
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 8;
    while (n < need) {
        if (n > ((size_t)-1) / 2 / elem)
            return -1;
        n *= 2;
    }
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

void tmap_buf_put(tmap_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (tmap_grow(&b->data, &b->cap, b->len + n + 1, 1)) {
        b->oom = 1;
        return;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void tmap_buf_puts(tmap_buf *b, const char *s) { tmap_buf_put(b, s, strlen(s)); }

void tmap_buf_printf(tmap_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        tmap_buf_put(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    tmap_buf_put(b, big, (size_t)n);
    free(big);
}

void tmap_buf_free(tmap_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}
