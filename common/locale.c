/*
 * locale.c -- numbers in the "C" locale whatever the process's: the calling
 * thread switches to it (uselocale, per thread) around parsing and printing,
 * so that a host application in a comma-decimal locale reads and writes
 * threadmap's files as every other program does.
 */
#include "common/base.h"

#include <stdlib.h>

locale_t tmap_locale_c(void)
{
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    return c ? uselocale(c) : (locale_t)0;
}

void tmap_locale_restore(locale_t old)
{
    if (!old)
        return;
    locale_t c = uselocale(old);
    if (c != LC_GLOBAL_LOCALE)
        freelocale(c);
}

double tmap_strtod(const char *s, char **end)
{
    locale_t old = tmap_locale_c();
    double v = strtod(s, end);
    tmap_locale_restore(old);
    return v;
}
