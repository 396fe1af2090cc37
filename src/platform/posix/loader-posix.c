/*
 * Shared libraries (os.h) on Linux with glibc: a small ELF reader and the
 * search order of glibc's loader for a bare library name.
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
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/internal.h"
#include "../os.h"

extern char **environ;

/* Caps on what is read from a file; real libraries are far below them. */
#define MAX_PHNUM 4096
#define MAX_DYNAMIC (1u << 20)
#define MAX_STRING (64u << 10)
#define MAX_LDCACHE (64u << 20)
#define MAX_LDCONFIG_OUT (16u << 20)

/* ------------------------------------------------ this process */

/*
 * What this process is: ELF class, byte order, machine, and the Debian
 * multiarch triplet of its default library folders.  Known at compile
 * time for the usual architectures; otherwise read once from
 * /proc/self/exe.
 */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

#ifndef EM_LOONGARCH
#define EM_LOONGARCH 258
#endif

#if defined(__x86_64__) && defined(__ILP32__)
#define HOST_MACHINE EM_X86_64
#define HOST_CLASS ELFCLASS32
#define HOST_TRIPLET "x86_64-linux-gnux32"
#elif defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#define HOST_CLASS ELFCLASS64
#define HOST_TRIPLET "x86_64-linux-gnu"
#elif defined(__i386__)
#define HOST_MACHINE EM_386
#define HOST_CLASS ELFCLASS32
#define HOST_TRIPLET "i386-linux-gnu"
#elif defined(__aarch64__) && defined(__LP64__)
#define HOST_MACHINE EM_AARCH64
#define HOST_CLASS ELFCLASS64
#define HOST_TRIPLET "aarch64-linux-gnu"
#elif defined(__arm__)
#define HOST_MACHINE EM_ARM
#define HOST_CLASS ELFCLASS32
#if defined(__ARM_PCS_VFP)
#define HOST_TRIPLET "arm-linux-gnueabihf"
#else
#define HOST_TRIPLET "arm-linux-gnueabi"
#endif
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#define HOST_CLASS ELFCLASS64
#if HOST_DATA == ELFDATA2LSB
#define HOST_TRIPLET "powerpc64le-linux-gnu"
#else
#define HOST_TRIPLET "powerpc64-linux-gnu"
#endif
#elif defined(__s390x__)
#define HOST_MACHINE EM_S390
#define HOST_CLASS ELFCLASS64
#define HOST_TRIPLET "s390x-linux-gnu"
#elif defined(__riscv) && __riscv_xlen == 64
#define HOST_MACHINE EM_RISCV
#define HOST_CLASS ELFCLASS64
#define HOST_TRIPLET "riscv64-linux-gnu"
#elif defined(__loongarch64)
#define HOST_MACHINE EM_LOONGARCH
#define HOST_CLASS ELFCLASS64
#define HOST_TRIPLET "loongarch64-linux-gnu"
#endif

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

/* ------------------------------------------------ ld.so.cache */

/*
 * The name => path pairs of the loader's cache, parsed once per process
 * and kept in a static: a dozen searches cost one read.  The file is
 * stat()ed on each search and parsed again when it changed (ldconfig ran
 * in between, or CUDNNCTL_LDSO_CACHE names another file).  Not
 * thread-safe; the memory is kept until exit.
 */
struct ldcache_pair {
	const char *key;
	const char *value;
};

static struct ldcache {
	char *file;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	char *blob; /* the strings the pairs point into */
	struct ldcache_pair *v;
	size_t n;
} memo;

static void memo_clear(void)
{
	free(memo.file);
	free(memo.blob);
	free(memo.v);
	memset(&memo, 0, sizeof(memo));
}

#define CACHE_NEW_MAGIC "glibc-ld.so.cache1.1"
#define CACHE_OLD_MAGIC "ld.so-1.7.0"
#define CACHE_NEW_HDR 48
#define CACHE_NEW_ENT 24
#define CACHE_OLD_HDR 16
#define CACHE_OLD_ENT 12

/* glibc aligns the new table after the old one as struct cache_file_new,
 * whose alignment is that of its uint64_t hwcap field. */
struct cache_align_probe {
	int32_t flags;
	uint64_t hwcap;
};
#define CACHE_ALIGN _Alignof(struct cache_align_probe)

static uint32_t host32(const char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Parses the glibc format ("glibc-ld.so.cache1.1" header, 24-byte
 * entries), alone or after the old "ld.so-1.7.0" table (the combined
 * format of glibc < 2.32).  In both, string offsets count from the start
 * of the new header.  Entries are in host byte order.  data is
 * NUL-terminated at data[len].  Returns -1 when the format is not one of
 * these.
 */
static int ldcache_parse(char *data, size_t len)
{
	size_t base = 0, avail, nlibs;
	unsigned endian;

	if (len >= CACHE_OLD_HDR &&
	    !memcmp(data, CACHE_OLD_MAGIC, sizeof(CACHE_OLD_MAGIC) - 1)) {
		size_t nold = host32(data + 12);
		if (nold > (len - CACHE_OLD_HDR) / CACHE_OLD_ENT)
			return -1;
		base = CACHE_OLD_HDR + nold * CACHE_OLD_ENT;
		base = (base + CACHE_ALIGN - 1) & ~(size_t)(CACHE_ALIGN - 1);
	}
	if (base > len || len - base < CACHE_NEW_HDR ||
	    memcmp(data + base, CACHE_NEW_MAGIC, sizeof(CACHE_NEW_MAGIC) - 1))
		return -1;
	endian = (unsigned char)data[base + 28] & 3;
	if (endian == 1 || (endian == 2 && HOST_DATA != ELFDATA2LSB) ||
	    (endian == 3 && HOST_DATA != ELFDATA2MSB))
		return -1;
	avail = len - base;
	nlibs = host32(data + base + 20);
	if (nlibs > (avail - CACHE_NEW_HDR) / CACHE_NEW_ENT)
		return -1;
	memo.v = cctl_xcalloc(nlibs ? nlibs : 1, sizeof(*memo.v));
	for (size_t i = 0; i < nlibs; i++) {
		const char *p = data + base + CACHE_NEW_HDR + i * CACHE_NEW_ENT;
		uint32_t key = host32(p + 4), value = host32(p + 8);
		/* strings end at the file's end at worst (data[len] == 0) */
		if (key >= avail || value >= avail)
			continue;
		memo.v[memo.n].key = data + base + key;
		memo.v[memo.n].value = data + base + value;
		memo.n++;
	}
	return 0;
}

static int read_small_file(const char *path, struct cctl_buf *out)
{
	char tmp[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t got = read(fd, tmp, sizeof(tmp));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto cleanup;
		if (got == 0)
			break;
		cctl_buf_add(out, tmp, (size_t)got);
		if (out->len > MAX_LDCACHE)
			goto cleanup;
	}
	ret = 0;
cleanup:
	close(fd);
	return ret;
}

/* Runs `ldconfig -p -C file` and keeps its output in out. */
static int ldconfig_print(const char *file, struct cctl_buf *out)
{
	static const char *const tries[] = { "/sbin/ldconfig",
					     "/usr/sbin/ldconfig", "ldconfig" };
	char *argv[] = { NULL, "-p", "-C", (char *)file, NULL };
	posix_spawn_file_actions_t fa;
	int fds[2] = { -1, -1 }, status, ret = -1, spawned = -1;
	pid_t pid = -1;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	if (posix_spawn_file_actions_init(&fa)) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	for (size_t i = 0; i < CCTL_ARRAY_SIZE(tries) && spawned; i++) {
		argv[0] = (char *)tries[i];
		if (strchr(tries[i], '/'))
			spawned = posix_spawn(&pid, tries[i], &fa, NULL, argv,
					      environ);
		else
			spawned = posix_spawnp(&pid, tries[i], &fa, NULL, argv,
					       environ);
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (spawned)
		goto cleanup;
	for (;;) {
		char tmp[65536];
		ssize_t got = read(fds[0], tmp, sizeof(tmp));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (out->len < MAX_LDCONFIG_OUT)
			cctl_buf_add(out, tmp, (size_t)got);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			goto cleanup;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    out->len < MAX_LDCONFIG_OUT)
		ret = 0;
cleanup:
	close(fds[0]);
	return ret;
}

/* Lines "\tname (flags) => path" of `ldconfig -p`, split in place. */
static void ldconfig_parse(char *text)
{
	size_t alloc = 0;
	char *line = text;

	while (line && *line) {
		char *next = strchr(line, '\n'), *paren, *arrow;
		if (next)
			*next++ = '\0';
		if (line[0] == '\t' && (paren = strstr(line, " (")) &&
		    (arrow = strstr(paren, ") => "))) {
			*paren = '\0';
			if (memo.n == alloc) {
				alloc = alloc ? 2 * alloc : 256;
				memo.v = cctl_xrealloc(memo.v,
						       alloc * sizeof(*memo.v));
			}
			memo.v[memo.n].key = line + 1;
			memo.v[memo.n].value = arrow + 5;
			memo.n++;
		}
		line = next;
	}
}

/* The cache's pairs, parsed when the file is new or changed; NULL when
 * the cache is missing or unreadable (the loader then skips it too). */
static const struct ldcache *ldcache_get(void)
{
	const char *file = getenv("CUDNNCTL_LDSO_CACHE");
	struct cctl_buf b = CCTL_BUF_INIT;
	struct stat st;

	if (!file || !*file)
		file = "/etc/ld.so.cache";
	if (stat(file, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	if (memo.file && !strcmp(memo.file, file) && memo.dev == st.st_dev &&
	    memo.ino == st.st_ino && memo.size == st.st_size &&
	    memo.mtime.tv_sec == st.st_mtim.tv_sec &&
	    memo.mtime.tv_nsec == st.st_mtim.tv_nsec)
		return &memo;
	memo_clear();
	if (read_small_file(file, &b) || ldcache_parse(b.buf, b.len)) {
		/* a format this reader does not know: ask ldconfig; when it
		 * cannot read the file either, remember an empty cache */
		cctl_buf_reset(&b);
		if (ldconfig_print(file, &b) == 0)
			ldconfig_parse(b.buf);
	}
	memo.file = cctl_xstrdup(file);
	memo.dev = st.st_dev;
	memo.ino = st.st_ino;
	memo.size = st.st_size;
	memo.mtime = st.st_mtim;
	memo.blob = cctl_buf_detach(&b);
	return &memo;
}

/* ------------------------------------------------ search */

struct search {
	struct cctl_lib_hits *out;
	size_t alloc;
	struct file_id {
		dev_t dev;
		ino_t ino;
	} *ids;
	const char *name;
	struct cctl_buf path;
};

/* A regular file (links followed) that this process could load. */
static int probe(const char *path, struct file_id *id)
{
	struct elf e;
	int ok = 0;

	if (open_file(&e, path) == 0 && elf_header(&e) == 0 &&
	    elf_loadable(&e)) {
		id->dev = e.dev;
		id->ino = e.ino;
		ok = 1;
	}
	if (e.fd >= 0)
		close(e.fd);
	return ok;
}

static void add_file(struct search *s, const char *path, const char *origin)
{
	struct cctl_lib_hits *h = s->out;
	struct file_id id;

	if (!probe(path, &id))
		return;
	for (size_t i = 0; i < h->n; i++)
		if (s->ids[i].dev == id.dev && s->ids[i].ino == id.ino)
			return;
	if (h->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 8;
		h->v = cctl_xrealloc(h->v, s->alloc * sizeof(*h->v));
		s->ids = cctl_xrealloc(s->ids, s->alloc * sizeof(*s->ids));
	}
	h->v[h->n].path = cctl_xstrdup(path);
	h->v[h->n].origin = cctl_xstrdup(origin);
	s->ids[h->n] = id;
	h->n++;
}

static void add_dir(struct search *s, const char *dir, size_t len,
		    const char *origin)
{
	if (len == 0)
		return;
	cctl_buf_reset(&s->path);
	cctl_buf_add(&s->path, dir, len);
	cctl_buf_addpath(&s->path, s->name);
	add_file(s, s->path.buf, origin);
}

/* Each folder of a list separated by any of seps; empty ones skipped. */
static void add_list(struct search *s, const char *list, const char *seps,
		     const char *origin)
{
	while (list) {
		size_t len = strcspn(list, seps);
		add_dir(s, list, len, origin);
		list = list[len] ? list + len + 1 : NULL;
	}
}

/*
 * glibc's order for a bare name (ld.so(8)), without the parts that do not
 * apply here: DT_RPATH of the loading objects (the caller passes
 * RUNPATH), and the glibc-hwcaps subfolders of each folder, which are
 * not tried.  Empty elements of LD_LIBRARY_PATH, which glibc takes as
 * the current folder, are skipped.  Every entry of the cache with the
 * name counts, glibc-hwcaps variants included.
 */
int cctl_os_lib_search(struct cctl_ctx *ctx, const char *name,
		       const char *lib_path, const char *const *runpath,
		       struct cctl_lib_hits *out)
{
	static const char defaults[] =
#ifdef HOST_TRIPLET
		"/lib/" HOST_TRIPLET ":/usr/lib/" HOST_TRIPLET ":"
#endif
		"/lib64:/usr/lib64:/lib:/usr/lib";
	struct search s = { 0 };
	const struct ldcache *cache;
	const char *dirs;

	memset(out, 0, sizeof(*out));
	if (!name || !*name || strchr(name, '/'))
		return cctl__error(ctx, CCTL_EFAIL,
				   "'%s' is not a bare library name",
				   name ? name : "");
	s.out = out;
	s.name = name;
	cctl_buf_init(&s.path);
	if (lib_path)
		add_list(&s, lib_path, ":;", "LD_LIBRARY_PATH");
	for (size_t i = 0; runpath && runpath[i]; i++)
		add_dir(&s, runpath[i], strlen(runpath[i]), "RUNPATH");
	cache = ldcache_get();
	for (size_t i = 0; cache && i < cache->n; i++)
		if (!strcmp(cache->v[i].key, name))
			add_file(&s, cache->v[i].value, "ld.so.cache");
	dirs = getenv("CUDNNCTL_LDSO_DEFAULTS");
	add_list(&s, dirs ? dirs : defaults, ":", "default folder");
	cctl_buf_release(&s.path);
	free(s.ids);
	return 0;
}

void cctl_lib_hits_release(struct cctl_lib_hits *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->v[i].path);
		free(h->v[i].origin);
	}
	free(h->v);
	memset(h, 0, sizeof(*h));
}
