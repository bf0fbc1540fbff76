/*
 * fuzz_key.c -- libFuzzer target: run mode's key expressions
 * (tmap_attach_key_make), the input as one expression, and lines of it as
 * a predictor's several expressions, over two features.  Every input is
 * either refused with a message or gives a kernel source with at most
 * TMAP_ATTACH_KEY_MAX_SLOTS arrays, each of a known type.
 * Seed corpus: tests/fuzz/key/.
 */
#include <stdlib.h>
#include <string.h>

#include "threadmap/attach.h"

static void check(const char *const *exprs, size_t n, const tmap_attach_feature *f)
{
    tmap_attach_key k;
    tmap_error err = {0};
    if (tmap_attach_key_make(exprs, n, f, 2, &k, &err) != TMAP_OK) {
        if (!err.message[0] || k.source)
            abort();
        return;
    }
    if (!k.source || k.nexprs != n || k.nslots > TMAP_ATTACH_KEY_MAX_SLOTS)
        abort();
    for (size_t i = 0; i < k.nslots; i++)
        if (!tmap_attach_key_type(k.slot[i].type, NULL) || !k.slot[i].elem_size)
            abort();
    tmap_attach_key_free(&k);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    tmap_attach_feature f[2];
    if (tmap_attach_feature_parse("n=arg2:u32[t+1]", &f[0], NULL) ||
        tmap_attach_feature_parse("x=arg0:f64[t-2]", &f[1], NULL))
        abort();
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    const char *one = s;
    check(&one, 1, f);
    const char *lines[TMAP_ATTACH_MAX_FEATURES];
    size_t n = 0;
    for (char *p = s, *next; p && n < TMAP_ATTACH_MAX_FEATURES; p = next) {
        next = strchr(p, '\n');
        if (next)
            *next++ = '\0';
        lines[n++] = p;
    }
    check(lines, n, f);
    free(s);
    return 0;
}
