/*
 * Reading a DLL file on Windows (os.h: cctl_os_lib_info): a PE reader for
 * the machine, the import table and VERSIONINFO.  Every offset is checked
 * against the file before use.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../../core/internal.h"
#include "../os.h"
#include "win.h"

#define MAX_IMPORTS 4096

/* ---------------------------------------------------------- PE reader */

struct pe {
	HANDLE h;
	uint64_t size;
	unsigned nsec;
	unsigned char *sec; /* section headers, 40 bytes each */
};

static int read_at(struct pe *pe, uint64_t off, void *buf, size_t n)
{
	OVERLAPPED ov;
	DWORD got = 0;
	if (off + n > pe->size)
		return -1;
	memset(&ov, 0, sizeof(ov));
	ov.Offset = (DWORD)off;
	ov.OffsetHigh = (DWORD)(off >> 32);
	return ReadFile(pe->h, buf, (DWORD)n, &got, &ov) && got == n ? 0 : -1;
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
		uint32_t va = le32(s + 12), vsize = le32(s + 8);
		uint32_t raw = le32(s + 20), rsize = le32(s + 16);
		uint32_t span = vsize > rsize ? vsize : rsize;
		if (rva >= va && rva < va + span && rva - va < rsize)
			return (int64_t)raw + (rva - va);
	}
	return -1;
}

static char *read_cstr(struct pe *pe, uint32_t rva)
{
	char buf[260];
	int64_t off = rva_off(pe, rva);
	size_t n = 0;
	if (off < 0)
		return NULL;
	while (n < sizeof(buf) - 1 && !read_at(pe, (uint64_t)off + n, buf + n, 1) &&
	       buf[n])
		n++;
	buf[n] = '\0';
	return n && n < sizeof(buf) - 1 ? cctl_xstrdup(buf) : NULL;
}

/* VS_FIXEDFILEINFO of the first RT_VERSION resource, as "a.b.c.d". */
static char *file_version(struct pe *pe, uint32_t res_rva)
{
	unsigned char dir[16], ent[8], data[16];
	int64_t base = rva_off(pe, res_rva), off;
	uint32_t rva, size;
	unsigned char *blob;
	char *out = NULL;

	if (base < 0)
		return NULL;
	/* level 1: types; find RT_VERSION (16) */
	if (read_at(pe, (uint64_t)base, dir, 16))
		return NULL;
	off = -1;
	for (unsigned i = 0; i < (unsigned)le16(dir + 12) + le16(dir + 14) && i < 512; i++) {
		if (read_at(pe, (uint64_t)base + 16 + 8 * i, ent, 8))
			return NULL;
		if (le32(ent) == 16 && (le32(ent + 4) & 0x80000000u)) {
			off = base + (le32(ent + 4) & 0x7fffffffu);
			break;
		}
	}
	/* levels 2 and 3: the first name, the first language */
	for (int level = 0; off >= 0 && level < 2; level++) {
		if (read_at(pe, (uint64_t)off, dir, 16) || read_at(pe, (uint64_t)off + 16, ent, 8) ||
		    le16(dir + 12) + le16(dir + 14) == 0)
			return NULL;
		off = base + (le32(ent + 4) & 0x7fffffffu);
		if (level == 0 && !(le32(ent + 4) & 0x80000000u))
			return NULL;
	}
	if (off < 0 || read_at(pe, (uint64_t)off, data, 16))
		return NULL;
	rva = le32(data);
	size = le32(data + 4);
	if (size < 92 || size > (1u << 20) || (off = rva_off(pe, rva)) < 0)
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

static int pe_fail(struct cctl_ctx *ctx, const char *path, const char *why)
{
	return cctl__error(ctx, CCTL_EFAIL, "'%s' is not a usable DLL: %s", path,
			   why);
}

int cctl_os_lib_info(struct cctl_ctx *ctx, const char *path,
		     struct cctl_lib_info *out)
{
	wchar_t *w = cctl_win_wpath(path);
	unsigned char dos[64], hdr[24], opt[240];
	struct pe pe;
	LARGE_INTEGER size;
	uint32_t pe_off, imp_rva, res_rva;
	uint16_t machine, opt_size, magic;
	unsigned dirs_at;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	memset(&pe, 0, sizeof(pe));
	pe.h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE,
			   NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
	free(w);
	if (pe.h == INVALID_HANDLE_VALUE)
		return cctl_win_error(ctx, GetLastError(), "open", path);
	if (!GetFileSizeEx(pe.h, &size)) {
		ret = cctl_win_error(ctx, GetLastError(), "read", path);
		goto out;
	}
	pe.size = (uint64_t)size.QuadPart;
	if (read_at(&pe, 0, dos, 64) || dos[0] != 'M' || dos[1] != 'Z') {
		ret = pe_fail(ctx, path, "no MZ header");
		goto out;
	}
	pe_off = le32(dos + 60);
	if (read_at(&pe, pe_off, hdr, 24) || memcmp(hdr, "PE\0\0", 4)) {
		ret = pe_fail(ctx, path, "no PE header");
		goto out;
	}
	machine = le16(hdr + 4);
	pe.nsec = le16(hdr + 6);
	opt_size = le16(hdr + 20);
	if (pe.nsec > 96 || opt_size < 112 || opt_size > sizeof(opt) ||
	    read_at(&pe, pe_off + 24, opt, opt_size)) {
		ret = pe_fail(ctx, path, "damaged headers");
		goto out;
	}
	magic = le16(opt);
	if (magic != 0x20b && magic != 0x10b) {
		ret = pe_fail(ctx, path, "unknown optional header");
		goto out;
	}
	out->loadable = machine == 0x8664 && magic == 0x20b; /* x64 only */
	dirs_at = magic == 0x20b ? 112 : 96;
	if (opt_size < dirs_at + 24) {
		ret = pe_fail(ctx, path, "no data directories");
		goto out;
	}
	imp_rva = le32(opt + dirs_at + 8);  /* directory 1: imports */
	res_rva = le32(opt + dirs_at + 16); /* directory 2: resources */
	pe.sec = cctl_xmalloc((size_t)pe.nsec * 40 + 1);
	if (read_at(&pe, pe_off + 24 + opt_size, pe.sec, (size_t)pe.nsec * 40)) {
		ret = pe_fail(ctx, path, "damaged section table");
		goto out;
	}
	if (imp_rva) {
		int64_t off = rva_off(&pe, imp_rva);
		size_t alloc = 0;
		for (unsigned i = 0; off >= 0 && i < MAX_IMPORTS; i++) {
			unsigned char d[20];
			char *name;
			if (read_at(&pe, (uint64_t)off + 20 * i, d, 20)) {
				ret = pe_fail(ctx, path, "damaged import table");
				goto out;
			}
			if (!le32(d + 12))
				break; /* the all-zero end entry */
			if (!(name = read_cstr(&pe, le32(d + 12)))) {
				ret = pe_fail(ctx, path, "damaged import name");
				goto out;
			}
			if (out->nneeded == alloc) {
				alloc = alloc ? 2 * alloc : 16;
				out->needed = cctl_xrealloc(out->needed,
							    alloc * sizeof(char *));
			}
			out->needed[out->nneeded++] = name;
		}
	}
	if (res_rva)
		out->file_version = file_version(&pe, res_rva);
	/* loaded with LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR, a DLL's imports are
	 * looked for next to it first */
	{
		char *dir = cctl_xstrdup(path), *slash = strrchr(dir, '/');
		char *bs = strrchr(dir, '\\');
		if (bs && (!slash || bs > slash))
			slash = bs;
		if (slash)
			*slash = '\0';
		out->runpath = cctl_xcalloc(2, sizeof(char *));
		out->runpath[0] = slash ? dir : cctl_xstrdup(".");
		if (!slash)
			free(dir);
		out->nrunpath = 1;
	}
out:
	CloseHandle(pe.h);
	free(pe.sec);
	if (ret)
		cctl_lib_info_release(out);
	return ret;
}

void cctl_lib_info_release(struct cctl_lib_info *info)
{
	for (size_t i = 0; i < info->nneeded; i++)
		free(info->needed[i]);
	for (size_t i = 0; i < info->nrunpath; i++)
		free(info->runpath[i]);
	free(info->needed);
	free(info->runpath);
	free(info->soname);
	free(info->file_version);
	memset(info, 0, sizeof(*info));
}

