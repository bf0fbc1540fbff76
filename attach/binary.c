/*
 * binary.c (attach) -- the PTX of a kernel in an executable or shared
 * library on disk: the fatbins of its .nv_fatbin sections read directly
 * (image.c), or, where an entry cannot be inflated here, what the toolkit's
 * cuobjdump extracts (cuobjdump.c).
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "attach/image.h"
#include "common/base.h"

/* The section header table, checked against the file's size. */
static const Elf64_Shdr *sections(const char *d, size_t n, size_t *count)
{
    const Elf64_Ehdr *e = (const void *)d;
    if (n < sizeof *e || memcmp(d, ELFMAG, SELFMAG) || e->e_ident[EI_CLASS] != ELFCLASS64 ||
        e->e_shentsize != sizeof(Elf64_Shdr) || e->e_shoff > n ||
        (n - e->e_shoff) / sizeof(Elf64_Shdr) < e->e_shnum || e->e_shstrndx >= e->e_shnum)
        return NULL;
    *count = e->e_shnum;
    return (const void *)(d + e->e_shoff);
}

/* Adds the fatbins of every section named *fatbin* (.nv_fatbin, and
 * __nv_relfatbin of relocatable device code). */
static tmap_status scan_elf(tmap_image *img, const char *d, size_t n, const char *path,
                            tmap_error *err)
{
    size_t count = 0;
    const Elf64_Shdr *sh = sections(d, n, &count);
    if (!sh)
        return tmap_fail(err, TMAP_ERR_INVALID, "%s: not a 64-bit ELF file", path);
    const Elf64_Shdr *names = &sh[((const Elf64_Ehdr *)(const void *)d)->e_shstrndx];
    tmap_status st = TMAP_OK;
    for (size_t i = 0; st == TMAP_OK && i < count; i++) {
        if (sh[i].sh_type == SHT_NOBITS || sh[i].sh_offset > n || sh[i].sh_size > n - sh[i].sh_offset ||
            names->sh_offset + sh[i].sh_name >= n)
            continue;
        const char *name = d + names->sh_offset + sh[i].sh_name;
        if (strstr(name, "fatbin") && !strstr(name, "Segment"))
            st = tmap_image_scan_fatbins(img, (const unsigned char *)d + sh[i].sh_offset,
                                         (size_t)sh[i].sh_size, err);
    }
    if (st != TMAP_OK)
        tmap_error_prefix(err, "%s", path);
    return st;
}

static tmap_status copy_out(const char *text, char **ptx, tmap_error *err)
{
    size_t n = strlen(text) + 1;
    if (!(*ptx = malloc(n)))
        return tmap_fail(err, TMAP_ERR_NOMEM, "out of memory");
    memcpy(*ptx, text, n);
    return TMAP_OK;
}

tmap_status tmap_attach_file_ptx(const char *path, const char *entry, unsigned max_arch,
                                 const char *cuobjdump, char **ptx, tmap_error *err)
{
    tmap_status st = TMAP_NEED(err, path, entry, ptx);
    if (st)
        return st;
    *ptx = NULL;
    char *d = NULL;
    size_t n = 0;
    tmap_image img = {0};
    st = tmap_file_read(path, &d, &n, err);
    if (st == TMAP_OK)
        st = scan_elf(&img, d, n, path, err);
    free(d);
    const char *found = st == TMAP_OK ? tmap_image_find(&img, entry, max_arch) : NULL;
    if (found)
        st = copy_out(found, ptx, err);
    else if (st == TMAP_OK && img.nopaque && cuobjdump) {
        tmap_image_free(&img);
        st = tmap_cuobjdump_scan(&img, cuobjdump, path, err);
        found = st == TMAP_OK ? tmap_image_find(&img, entry, max_arch) : NULL;
        st = found ? copy_out(found, ptx, err) : st;
    }
    if (st == TMAP_OK && !found)
        st = tmap_image_missing(&img, entry, path, max_arch, err);
    tmap_image_free(&img);
    return st;
}
