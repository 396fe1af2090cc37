/*
 * The pure logic of the Windows OS layer: no OS calls, only bytes and
 * strings in and out.  It is compiled on every platform so that the unit
 * tests and the fuzz targets run it on Linux too; the Windows files
 * (image-win.c, env-win.c) wrap it with the file and registry calls.
 */
#ifndef CUDNNCTL_PORTABLE_H
#define CUDNNCTL_PORTABLE_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "os.h"

/* ------------------------------------------------------ PE image reader */

/* Where a PE file's bytes come from: read_at fills buf with n bytes at off
 * and returns 0, or -1 (short read, I/O error). */
struct cctl_pe_source {
	int (*read_at)(void *opaque, uint64_t off, void *buf, size_t n);
	void *opaque;
	uint64_t size;
};

/* The PE machine of the DLLs this build's process loads: arm64 for an
 * arm64 build, x64 for the others (the Linux builds read PE files only in
 * tests and fuzzing, as an x64 cudnnctl.exe would). */
#if defined(_M_ARM64) || (defined(_WIN32) && defined(__aarch64__))
#define CCTL_PE_PROCESS_MACHINE 0xAA64u
#else
#define CCTL_PE_PROCESS_MACHINE 0x8664u
#endif

/* Reads the machine, the import table and the VERSIONINFO FileVersion of a
 * PE file into out (needed[], machine, loadable, file_version; runpath and soname
 * are left to the caller).  0, or -1 with *why saying what is wrong; out is
 * then released.  Every offset is checked against the file's size. */
int cctl_pe_read(const struct cctl_pe_source *src, struct cctl_lib_info *out,
		 const char **why);

/* ------------------------------------------------------ PATH values */

/* Windows PATH values are ';'-separated entries in UTF-16; these take them
 * as wchar_t strings (16 bits on Windows, 32 elsewhere: the logic is the
 * same). */

/* Two entries are one for Windows: case-insensitive, '/' and '\' alike,
 * trailing separators ignored. */
int cctl_pathvalue_same(const wchar_t *a, size_t na, const wchar_t *b,
			size_t nb);

/* Whether an entry is one this root put there: <root>\current\bin... or
 * <root>\versions\... */
int cctl_pathvalue_ours(const wchar_t *entry, size_t n, const wchar_t *root);

/* An edit of a PATH value: root's entries out, add in. */
struct cctl_pathvalue_edit {
	const wchar_t *root; /* its entries come out */
	const wchar_t *add;  /* put in (NULL: none); its copies come out */
	/* add goes after the last entry under this folder (the machine Path:
	 * %SystemRoot%, expanded), else first; NULL: first */
	const wchar_t *after;
	/* an entry with a '%' as Windows expands it (free()), or NULL; NULL:
	 * entries are taken as written */
	wchar_t *(*expand)(const wchar_t *entry, size_t n);
};

/* The entries of old (NULL: none) with every one of root's and every copy
 * of add removed (as written or expanded), and add put in; every other
 * entry is kept as it was, empty ones too.  free() the result. */
wchar_t *cctl_pathvalue_edit(const wchar_t *old,
			     const struct cctl_pathvalue_edit *e);
/* The same with add first and no expansion. */
wchar_t *cctl_pathvalue_rebuild(const wchar_t *old, const wchar_t *root,
				const wchar_t *add);

/* The (up to) three longest entries of v, longest first: start and length
 * of each; returns how many there are. */
int cctl_pathvalue_longest(const wchar_t *v, const wchar_t *at[3],
			   size_t len[3]);

/* Whether value names root itself or a path under it (CUDNN_PATH set by
 * this root). */
int cctl_pathvalue_under(const wchar_t *value, const wchar_t *root);

#endif
