/*
 * The PE reader of the Windows OS layer (portable.h: cctl_pe_read): the
 * machine, the import table and VERSIONINFO of a DLL, read through a
 * callback so that it runs on every platform (image-win.c gives it the
 * file, the fuzz target a buffer).  Every offset is checked against the
 * file before use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/internal.h"
#include "portable.h"

#define MAX_IMPORTS 4096
#define MAX_SECTIONS 96

struct pe {
	const struct cctl_pe_source *src;
	unsigned nsec;
	unsigned char *sec; /* section headers, 40 bytes each */
};

static int read_at(const struct pe *pe, uint64_t off, void *buf, size_t n)
{
	if (off > pe->src->size || n > pe->src->size - off)
		return -1;
	return pe->src->read_at(pe->src->opaque, off, buf, n);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* File offset of a relative virtual address, or -1. */
static int64_t rva_off(const struct pe *pe, uint32_t rva)
{
	for (unsigned i = 0; i < pe->nsec; i++) {
		const unsigned char *s = pe->sec + 40 * i;
		uint32_t va = le32(s + 12), raw = le32(s + 20), rsize = le32(s + 16);
		if (rva >= va && rva - va < rsize)
			return (int64_t)raw + (rva - va);
	}
	return -1;
}

/* A NUL-terminated name of 1 to 259 bytes at rva, or NULL. */
static char *read_cstr(const struct pe *pe, uint32_t rva)
{
	char buf[260];
	int64_t off = rva_off(pe, rva);
	size_t n = sizeof(buf) - 1;
	const char *nul;
	if (off < 0 || (uint64_t)off >= pe->src->size)
		return NULL;
	if (n > pe->src->size - (uint64_t)off)
		n = (size_t)(pe->src->size - (uint64_t)off);
	if (read_at(pe, (uint64_t)off, buf, n))
		return NULL;
	nul = memchr(buf, 0, n);
	return nul && nul > buf ? cctl_xstrdup(buf) : NULL;
}

/* The data entry of the first RT_VERSION resource: its file offset, or
 * -1.  The resource tree has three levels: type, name, language. */
static int64_t version_entry(const struct pe *pe, int64_t base)
{
	unsigned char dir[16], ent[8];
	int64_t off = -1;
	if (read_at(pe, (uint64_t)base, dir, 16))
		return -1;
	/* level 1: types; find RT_VERSION (16), a subdirectory */
	for (unsigned i = 0; i < (unsigned)le16(dir + 12) + le16(dir + 14) && i < 512;
	     i++) {
		if (read_at(pe, (uint64_t)base + 16 + 8 * i, ent, 8))
			return -1;
		if (le32(ent) == 16 && (le32(ent + 4) & 0x80000000u)) {
			off = base + (le32(ent + 4) & 0x7fffffffu);
			break;
		}
	}
	/* levels 2 and 3: the first name (a subdirectory), the first
	 * language (a data entry) */
	for (int level = 0; off >= 0 && level < 2; level++) {
		if (read_at(pe, (uint64_t)off, dir, 16) ||
		    read_at(pe, (uint64_t)off + 16, ent, 8) ||
		    le16(dir + 12) + le16(dir + 14) == 0)
			return -1;
		if ((level == 0) != !!(le32(ent + 4) & 0x80000000u))
			return -1;
		off = base + (le32(ent + 4) & 0x7fffffffu);
	}
	return off;
}

/* VS_FIXEDFILEINFO of the first RT_VERSION resource, as "a.b.c.d". */
static char *file_version(const struct pe *pe, uint32_t res_rva)
{
	unsigned char data[16];
	int64_t base = rva_off(pe, res_rva), off;
	uint32_t size;
	unsigned char *blob;
	char *out = NULL;

	if (base < 0 || (off = version_entry(pe, base)) < 0 ||
	    read_at(pe, (uint64_t)off, data, 16))
		return NULL;
	size = le32(data + 4);
	if (size < 92 || size > (1u << 20) || (off = rva_off(pe, le32(data))) < 0)
		return NULL;
	blob = cctl_xmalloc(size);
	if (!read_at(pe, (uint64_t)off, blob, size)) {
		/* VS_VERSIONINFO: 3 WORDs, L"VS_VERSION_INFO\0", padding to
		 * 32 bits, then VS_FIXEDFILEINFO */
		for (uint32_t i = 0; i + 52 <= size; i += 4)
			if (le32(blob + i) == 0xfeef04bdu) {
				uint32_t ms = le32(blob + i + 8), ls = le32(blob + i + 12);
				out = cctl_xstrfmt("%u.%u.%u.%u", ms >> 16, ms & 0xffff,
						   ls >> 16, ls & 0xffff);
				break;
			}
	}
	free(blob);
	return out;
}

static const char *read_imports(const struct pe *pe, uint32_t imp_rva,
				struct cctl_lib_info *out)
{
	int64_t off = rva_off(pe, imp_rva);
	size_t alloc = 0;
	for (unsigned i = 0; off >= 0 && i < MAX_IMPORTS; i++) {
		unsigned char d[20];
		char *name;
		if (read_at(pe, (uint64_t)off + 20 * i, d, 20))
			return "damaged import table";
		if (!le32(d + 12))
			break; /* the all-zero end entry */
		if (!(name = read_cstr(pe, le32(d + 12))))
			return "damaged import name";
		if (out->nneeded == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			out->needed = cctl_xrealloc(out->needed, alloc * sizeof(char *));
		}
		out->needed[out->nneeded++] = name;
	}
	return NULL;
}

static const char *read_pe(struct pe *pe, struct cctl_lib_info *out)
{
	unsigned char dos[64], hdr[24], opt[240];
	uint32_t pe_off, imp_rva, res_rva;
	uint16_t machine, opt_size, magic;
	unsigned dirs_at;
	const char *why;

	if (read_at(pe, 0, dos, 64) || dos[0] != 'M' || dos[1] != 'Z')
		return "no MZ header";
	pe_off = le32(dos + 60);
	if (read_at(pe, pe_off, hdr, 24) || memcmp(hdr, "PE\0\0", 4))
		return "no PE header";
	machine = le16(hdr + 4);
	pe->nsec = le16(hdr + 6);
	opt_size = le16(hdr + 20);
	if (pe->nsec > MAX_SECTIONS || opt_size < 112 || opt_size > sizeof(opt) ||
	    read_at(pe, (uint64_t)pe_off + 24, opt, opt_size))
		return "damaged headers";
	magic = le16(opt);
	if (magic != 0x20b && magic != 0x10b)
		return "unknown optional header";
	/* a 64-bit DLL of this build's machine: what this process loads */
	out->machine = machine;
	out->loadable = machine == CCTL_PE_PROCESS_MACHINE && magic == 0x20b;
	dirs_at = magic == 0x20b ? 112 : 96;
	if (opt_size < dirs_at + 24)
		return "no data directories";
	imp_rva = le32(opt + dirs_at + 8);  /* directory 1: imports */
	res_rva = le32(opt + dirs_at + 16); /* directory 2: resources */
	pe->sec = cctl_xmalloc((size_t)pe->nsec * 40 + 1);
	if (read_at(pe, (uint64_t)pe_off + 24 + opt_size, pe->sec,
		    (size_t)pe->nsec * 40))
		return "damaged section table";
	if (imp_rva && (why = read_imports(pe, imp_rva, out)))
		return why;
	if (res_rva)
		out->file_version = file_version(pe, res_rva);
	return NULL;
}

int cctl_pe_read(const struct cctl_pe_source *src, struct cctl_lib_info *out,
		 const char **why)
{
	struct pe pe;
	memset(out, 0, sizeof(*out));
	memset(&pe, 0, sizeof(pe));
	pe.src = src;
	*why = read_pe(&pe, out);
	free(pe.sec);
	if (*why) {
		cctl_lib_info_release(out);
		return -1;
	}
	return 0;
}
