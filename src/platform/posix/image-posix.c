/*
 * Reading a shared library file on Linux (os.h: cctl_os_lib_info): a
 * small ELF reader.
 *
 * Files are read with pread, a few hundred bytes at a time: the ELF
 * header, the program headers, the dynamic segment and the strings it
 * names, never the whole file (cuDNN libraries reach 250 MB).  Every
 * offset and size read from a file is checked against the file's size
 * before use, so a hostile or truncated file is an error, not a crash.
 *
 * Both classes (ELF32, ELF64) and both byte orders are read.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "../../core/internal.h"
#include "posix.h"

/* Caps on what is read from a file; real libraries are far below them. */
#define MAX_PHNUM 4096
#define MAX_DYNAMIC (1u << 20)
#define MAX_STRING (64u << 10)

/* ------------------------------------------------ this process */

struct host {
	unsigned char cls;
	unsigned char data;
	uint16_t machine;
};

#ifdef HOST_MACHINE
static struct host host_get(void)
{
	struct host h = { HOST_CLASS, HOST_DATA, HOST_MACHINE };
	return h;
}
#else
/* An architecture not listed above: what the running binary says. */
static struct host host_get(void)
{
	static struct host h;
	static int done;
	unsigned char hdr[20];
	int fd;

	if (done)
		return h;
	done = 1;
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return h;
	if (pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) &&
	    !memcmp(hdr, ELFMAG, SELFMAG)) {
		h.cls = hdr[EI_CLASS];
		h.data = hdr[EI_DATA];
		h.machine = h.data == ELFDATA2LSB ?
				    (uint16_t)(hdr[18] | hdr[19] << 8) :
				    (uint16_t)(hdr[18] << 8 | hdr[19]);
	}
	close(fd);
	return h;
}
#endif

/* ------------------------------------------------ ELF reader */

struct elf {
	int fd;
	uint64_t size;       /* of the file */
	dev_t dev;
	ino_t ino;
	const char *why;     /* the reason it is refused, or NULL */
	int err;             /* errno of a failed read, or 0 */
	unsigned char cls;   /* ELFCLASS32 / ELFCLASS64 */
	unsigned char data;  /* ELFDATA2LSB / ELFDATA2MSB */
	uint16_t type;
	uint16_t machine;
	uint64_t phoff;
	uint16_t phentsize;
	uint16_t phnum;
};

static uint64_t get_n(const struct elf *e, const unsigned char *p, int n)
{
	uint64_t v = 0;
	if (e->data == ELFDATA2LSB)
		for (int i = n - 1; i >= 0; i--)
			v = v << 8 | p[i];
	else
		for (int i = 0; i < n; i++)
			v = v << 8 | p[i];
	return v;
}

static uint16_t get16(const struct elf *e, const unsigned char *p)
{
	return (uint16_t)get_n(e, p, 2);
}

static uint32_t get32(const struct elf *e, const unsigned char *p)
{
	return (uint32_t)get_n(e, p, 4);
}

/* An Elf32_Word / Elf64_Xword sized field. */
static uint64_t getw(const struct elf *e, const unsigned char *p)
{
	return get_n(e, p, e->cls == ELFCLASS64 ? 8 : 4);
}

static int refuse(struct elf *e, const char *why)
{
	if (!e->why && !e->err)
		e->why = why;
	return -1;
}

/* Reads exactly len bytes at off, which must lie inside the file. */
static int read_at(struct elf *e, uint64_t off, void *buf, size_t len,
		   const char *what)
{
	size_t done = 0;
	if (off > e->size || len > e->size - off)
		return refuse(e, what);
	while (done < len) {
		ssize_t got = pread(e->fd, (char *)buf + done, len - done,
				    (off_t)(off + done));
		if (got < 0) {
			if (errno == EINTR)
				continue;
			e->err = errno;
			return -1;
		}
		if (got == 0)
			return refuse(e, what); /* shrank under us */
		done += (size_t)got;
	}
	return 0;
}

/* Reads and checks the ELF header; fills the identity and the program
 * header table's place. */
static int elf_header(struct elf *e)
{
	unsigned char h[64];
	size_t have = e->size < sizeof(h) ? (size_t)e->size : sizeof(h);

	if (e->size == 0)
		return refuse(e, "empty file");
	/* one read for the identity and the rest of the header */
	if (read_at(e, 0, h, have, "file too short for an ELF header"))
		return -1;
	if (have < SELFMAG || memcmp(h, ELFMAG, SELFMAG))
		return refuse(e, "not an ELF file");
	if (have < EI_NIDENT)
		return refuse(e, "file too short for an ELF header");
	e->cls = h[EI_CLASS];
	e->data = h[EI_DATA];
	if (e->cls != ELFCLASS32 && e->cls != ELFCLASS64)
		return refuse(e, "unknown ELF class");
	if (e->data != ELFDATA2LSB && e->data != ELFDATA2MSB)
		return refuse(e, "unknown ELF byte order");
	if (h[EI_VERSION] != EV_CURRENT)
		return refuse(e, "unknown ELF version");
	if (have < (e->cls == ELFCLASS64 ? 64u : 52u))
		return refuse(e, "truncated ELF header");
	e->type = get16(e, h + 16);
	e->machine = get16(e, h + 18);
	if (e->cls == ELFCLASS64) {
		e->phoff = get_n(e, h + 32, 8);
		e->phentsize = get16(e, h + 54);
		e->phnum = get16(e, h + 56);
	} else {
		e->phoff = get32(e, h + 28);
		e->phentsize = get16(e, h + 42);
		e->phnum = get16(e, h + 44);
	}
	return 0;
}

/* Whether this process could load the file: same class, byte order and
 * machine, and a shared object (ET_DYN: libraries and PIEs; dlopen
 * refuses ET_EXEC). */
static int elf_loadable(const struct elf *e)
{
	struct host h = host_get();
	return e->cls == h.cls && e->data == h.data &&
	       e->machine == h.machine && e->type == ET_DYN;
}

struct segment {
	uint64_t vaddr;
	uint64_t offset;
	uint64_t filesz;
};

struct dyn {
	struct segment *load; /* the PT_LOAD segments */
	size_t nload;
	uint64_t dyn_off, dyn_size;
	int has_dynamic;
	/* from the dynamic section */
	uint64_t strtab, strsz;
	int has_strtab, has_strsz;
	uint64_t soname, runpath, rpath;
	int has_soname, has_runpath, has_rpath;
	uint64_t *needed;
	size_t nneeded;
	/* the string table in the file */
	uint64_t str_off, str_size;
};

static int elf_phdrs(struct elf *e, struct dyn *d)
{
	size_t want = e->cls == ELFCLASS64 ? 56 : 32, len;
	unsigned char *buf = NULL;
	int ret = -1;

	if (e->phnum == 0 || e->phoff == 0)
		return refuse(e, "no program headers (not a shared library)");
	if (e->phnum == PN_XNUM || e->phnum > MAX_PHNUM)
		return refuse(e, "too many program headers");
	if (e->phentsize != want)
		return refuse(e, "bad program header size");
	len = (size_t)e->phnum * want;
	buf = cctl_xmalloc(len);
	if (read_at(e, e->phoff, buf, len, "program headers outside the file"))
		goto cleanup;
	d->load = cctl_xcalloc(e->phnum, sizeof(*d->load));
	for (size_t i = 0; i < e->phnum; i++) {
		const unsigned char *p = buf + i * want;
		uint32_t type = get32(e, p);
		struct segment s;
		if (e->cls == ELFCLASS64) {
			s.offset = get_n(e, p + 8, 8);
			s.vaddr = get_n(e, p + 16, 8);
			s.filesz = get_n(e, p + 32, 8);
		} else {
			s.offset = get32(e, p + 4);
			s.vaddr = get32(e, p + 8);
			s.filesz = get32(e, p + 16);
		}
		if (type == PT_LOAD) {
			d->load[d->nload++] = s;
		} else if (type == PT_DYNAMIC && !d->has_dynamic) {
			d->has_dynamic = 1;
			d->dyn_off = s.offset;
			d->dyn_size = s.filesz;
		}
	}
	if (!d->has_dynamic) {
		refuse(e, "no dynamic section (not a shared library)");
		goto cleanup;
	}
	ret = 0;
cleanup:
	free(buf);
	return ret;
}

/* The file offset of a virtual address, through the PT_LOAD segments. */
static int vaddr_to_off(const struct dyn *d, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < d->nload; i++) {
		const struct segment *s = &d->load[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*off = s->offset + (vaddr - s->vaddr);
			return 0;
		}
	}
	return -1;
}

static int elf_dynamic(struct elf *e, struct dyn *d)
{
	size_t ent = e->cls == ELFCLASS64 ? 16 : 8, n, alloc = 0;
	unsigned char *buf = NULL;
	int ret = -1, need_strings;

	if (d->dyn_size > MAX_DYNAMIC)
		return refuse(e, "dynamic section too large");
	n = (size_t)d->dyn_size / ent;
	if (n == 0)
		return refuse(e, "empty dynamic section");
	buf = cctl_xmalloc(n * ent);
	if (read_at(e, d->dyn_off, buf, n * ent,
		    "dynamic section outside the file"))
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		const unsigned char *p = buf + i * ent;
		uint64_t tag = getw(e, p), val = getw(e, p + ent / 2);
		if (tag == DT_NULL)
			break;
		switch (tag) {
		case DT_NEEDED:
			if (d->nneeded == alloc) {
				alloc = alloc ? 2 * alloc : 16;
				d->needed = cctl_xrealloc(d->needed,
							  alloc * sizeof(uint64_t));
			}
			d->needed[d->nneeded++] = val;
			break;
		case DT_STRTAB:
			if (!d->has_strtab)
				d->strtab = val;
			d->has_strtab = 1;
			break;
		case DT_STRSZ:
			if (!d->has_strsz)
				d->strsz = val;
			d->has_strsz = 1;
			break;
		case DT_SONAME:
			if (!d->has_soname)
				d->soname = val;
			d->has_soname = 1;
			break;
		case DT_RUNPATH:
			if (!d->has_runpath)
				d->runpath = val;
			d->has_runpath = 1;
			break;
		case DT_RPATH:
			if (!d->has_rpath)
				d->rpath = val;
			d->has_rpath = 1;
			break;
		}
	}
	need_strings = d->nneeded || d->has_soname || d->has_runpath ||
		       d->has_rpath;
	if (need_strings) {
		if (!d->has_strtab) {
			refuse(e, "no string table in the dynamic section");
			goto cleanup;
		}
		if (vaddr_to_off(d, d->strtab, &d->str_off) ||
		    d->str_off >= e->size) {
			refuse(e, "string table outside the file");
			goto cleanup;
		}
		d->str_size = e->size - d->str_off;
		if (d->has_strsz && d->strsz < d->str_size)
			d->str_size = d->strsz;
	}
	ret = 0;
cleanup:
	free(buf);
	return ret;
}

/* The NUL-terminated string at offset `at` of the string table. */
static int elf_string(struct elf *e, const struct dyn *d, uint64_t at,
		      char **out)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	uint64_t left;
	size_t chunk = 256;
	int ret = -1;

	if (at >= d->str_size)
		return refuse(e, "string offset outside the string table");
	left = d->str_size - at;
	for (;;) {
		size_t want = chunk - b.len;
		char *nul;
		if (want > left)
			want = (size_t)left;
		if (want == 0) {
			refuse(e, "unterminated string");
			goto cleanup;
		}
		cctl_buf_grow(&b, want);
		if (read_at(e, d->str_off + at + b.len, b.buf + b.len, want,
			    "string table outside the file"))
			goto cleanup;
		nul = memchr(b.buf + b.len, '\0', want);
		if (nul) {
			b.len = (size_t)(nul - b.buf);
			break;
		}
		b.len += want;
		b.buf[b.len] = '\0';
		left -= want;
		if (b.len >= MAX_STRING) {
			refuse(e, "string too long");
			goto cleanup;
		}
		chunk *= 4;
	}
	*out = cctl_buf_detach(&b);
	ret = 0;
cleanup:
	cctl_buf_release(&b);
	return ret;
}

/*
 * The folder $ORIGIN stands for: the folder of `path` as given, made
 * absolute against the current folder but with links not resolved.  That
 * is what glibc does for a library it loads (its l_origin comes from the
 * name it opened, not from realpath); only the main program's $ORIGIN
 * goes through /proc/self/exe.
 */
static char *origin_of(const char *path)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	const char *slash;

	if (path[0] != '/') {
		char *cwd = getcwd(NULL, 0);
		if (cwd) {
			cctl_buf_adds(&b, cwd);
			free(cwd);
		}
		cctl_buf_addpath(&b, path);
	} else {
		cctl_buf_adds(&b, path);
	}
	slash = strrchr(b.buf, '/');
	if (!slash)
		cctl_buf_reset(&b);
	else if (slash == b.buf)
		b.len = 1; /* "/lib.so": origin "/" */
	else
		b.len = (size_t)(slash - b.buf);
	b.buf[b.len] = '\0';
	return cctl_buf_detach(&b);
}

/* Whether $ORIGIN (unbraced) ends at s: glibc wants '/' or the end. */
static int dst_end(char c)
{
	return c == '\0' || c == '/';
}

/*
 * Splits a DT_RUNPATH / DT_RPATH value at ':' and expands $ORIGIN and
 * ${ORIGIN}.  Empty elements (the current folder for glibc) are dropped;
 * $LIB and $PLATFORM are kept as written.
 */
static void split_runpath(const char *value, const char *path,
			  struct cctl_lib_info *out)
{
	struct cctl_buf b = CCTL_BUF_INIT;
	char *origin = NULL;
	size_t alloc = 0;
	const char *p = value;

	for (;;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		cctl_buf_reset(&b);
		for (size_t i = 0; i < len;) {
			size_t skip = 0;
			if (!strncmp(p + i, "${ORIGIN}", 9) && i + 9 <= len)
				skip = 9;
			else if (!strncmp(p + i, "$ORIGIN", 7) && i + 7 <= len &&
				 (i + 7 == len || dst_end(p[i + 7])))
				skip = 7;
			if (skip) {
				if (!origin)
					origin = origin_of(path);
				cctl_buf_adds(&b, origin);
				i += skip;
			} else {
				cctl_buf_addch(&b, p[i++]);
			}
		}
		if (b.len) {
			if (out->nrunpath == alloc) {
				alloc = alloc ? 2 * alloc : 8;
				out->runpath = cctl_xrealloc(out->runpath,
							     alloc * sizeof(char *));
			}
			out->runpath[out->nrunpath++] = cctl_xstrdup(b.buf);
		}
		if (!end)
			break;
		p = end + 1;
	}
	free(origin);
	cctl_buf_release(&b);
}

static int open_file(struct elf *e, const char *path)
{
	struct stat st;
	memset(e, 0, sizeof(*e));
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0) {
		e->err = errno;
		return -1;
	}
	if (fstat(e->fd, &st) < 0) {
		e->err = errno;
		return -1;
	}
	if (!S_ISREG(st.st_mode))
		return refuse(e, "not a regular file");
	e->size = (uint64_t)st.st_size;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	return 0;
}

int cctl_os_lib_info(struct cctl_ctx *ctx, const char *path,
		     struct cctl_lib_info *out)
{
	struct elf e;
	struct dyn d;
	char *value = NULL;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	memset(&d, 0, sizeof(d));
	if (open_file(&e, path) || elf_header(&e) || elf_phdrs(&e, &d) ||
	    elf_dynamic(&e, &d))
		goto cleanup;
	out->loadable = elf_loadable(&e);
	if (d.has_soname && elf_string(&e, &d, d.soname, &out->soname))
		goto cleanup;
	if (d.nneeded) {
		out->needed = cctl_xcalloc(d.nneeded, sizeof(char *));
		for (; out->nneeded < d.nneeded; out->nneeded++)
			if (elf_string(&e, &d, d.needed[out->nneeded],
				       &out->needed[out->nneeded]))
				goto cleanup;
	}
	/* glibc ignores DT_RPATH when DT_RUNPATH is present */
	if (d.has_runpath || d.has_rpath) {
		if (elf_string(&e, &d, d.has_runpath ? d.runpath : d.rpath,
			       &value))
			goto cleanup;
		split_runpath(value, path, out);
	}
cleanup:
	if (e.err) {
		ret = cctl__os_error(ctx, CCTL_EIO, e.err, "cannot read '%s': %s",
				     path, strerror(e.err));
	} else if (e.why) {
		ret = cctl__error(ctx, CCTL_EFAIL,
				  "'%s' is not a usable shared library: %s",
				  path, e.why);
	}
	if (ret)
		cctl_lib_info_release(out);
	if (e.fd >= 0)
		close(e.fd);
	free(value);
	free(d.load);
	free(d.needed);
	return ret;
}

void cctl_lib_info_release(struct cctl_lib_info *info)
{
	free(info->soname);
	for (size_t i = 0; i < info->nneeded; i++)
		free(info->needed[i]);
	free(info->needed);
	for (size_t i = 0; i < info->nrunpath; i++)
		free(info->runpath[i]);
	free(info->runpath);
	free(info->file_version);
	memset(info, 0, sizeof(*info));
}

int cctl__elf_probe(const char *path, dev_t *dev, ino_t *ino)
{
	struct elf e;
	int ok = 0;

	if (open_file(&e, path) == 0 && elf_header(&e) == 0 &&
	    elf_loadable(&e)) {
		*dev = e.dev;
		*ino = e.ino;
		ok = 1;
	}
	if (e.fd >= 0)
		close(e.fd);
	return ok;
}
