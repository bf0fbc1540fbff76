/*
 * ptx_global.c -- adding module-scope variables to a parsed PTX module
 * (the counter pass's base and stride, the redirection's D pointer): the
 * text goes right after the module header, once.
 */
#include <string.h>

#include "common/base.h"
#include "instrument/ptx.h"

/* Whether the module declares (or an added raw item names) symbol. */
static int declares(const tmap_ptx_module *m, const char *symbol)
{
    for (size_t i = 0; i < m->nitems; i++) {
        const tmap_ptx_item *it = &m->items[i];
        if (it->kind == TMAP_IT_RAW && strstr(it->text, symbol))
            return 1;
        for (uint32_t k = 0; it->kind == TMAP_IT_DECL && k < it->ntoks; k++)
            if (!strcmp(it->toks[k].text, symbol))
                return 1;
    }
    return 0;
}

tmap_status tmap_ptx_add_global(tmap_ptx_module *m, const char *symbol, const char *decl,
                                tmap_error *err)
{
    if (declares(m, symbol))
        return TMAP_OK;
    size_t pos = 0; /* after .version/.target/.address_size, before .file */
    while (pos < m->nitems &&
           (m->items[pos].kind == TMAP_IT_VERSION ||
            (m->items[pos].kind == TMAP_IT_LINE && strcmp(m->items[pos].toks[0].text, ".file"))))
        pos++;
    tmap_ptx_item it = {0};
    it.kind = TMAP_IT_RAW;
    it.text = tmap_arena_strndup(&m->arena, decl, strlen(decl));
    if (!it.text || tmap_grow(&m->items, &m->capitems, m->nitems + 1, sizeof *m->items))
        return tmap_fail(err, TMAP_ERR_NOMEM, "%s: out of memory adding %s", m->file, symbol);
    memmove(&m->items[pos + 1], &m->items[pos], (m->nitems - pos) * sizeof *m->items);
    m->items[pos] = it;
    m->nitems++;
    return TMAP_OK;
}
