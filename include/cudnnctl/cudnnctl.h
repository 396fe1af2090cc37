/*
 * cudnnctl core API.
 *
 * The core never prints and never exits.  Every fallible call takes a
 * struct cctl_ctx, returns 0 or a negative CCTL_E* code (error.h) and, on
 * failure, leaves a one-line message and, where one exists, the next step
 * for the user on the context.  Progress and warnings reach the caller
 * through the callbacks on the context.
 *
 * Ownership: structs filled by a call are released by the matching
 * *_release function; strings returned through char ** are the caller's
 * to free().
 */
#ifndef CUDNNCTL_H
#define CUDNNCTL_H

#include <stddef.h>
#include <stdint.h>

#include "cudnnctl/buf.h"
#include "cudnnctl/error.h"
#include "cudnnctl/machine.h"

#define CCTL_VERSION "0.1.0"

enum cctl_phase {
	CCTL_PHASE_HASH,
	CCTL_PHASE_SCAN,
	CCTL_PHASE_EXTRACT,
	CCTL_PHASE_RECORD,
	CCTL_PHASE_DOWNLOAD
};

struct cctl_progress {
	enum cctl_phase phase;
	uint64_t done;
	uint64_t total; /* 0 when unknown */
};

/* What the core tells the user that is neither progress nor a warning
 * (on_notice): the release a version prefix chose, and why; manifests
 * fetched from the mirror; what a resumed download kept. */
enum cctl_notice { CCTL_NOTICE_RELEASE, CCTL_NOTICE_MANIFESTS, CCTL_NOTICE_RESUME };

/* Where a failure is described.  Every fallible call takes one; NULL
 * means "quiet": the call fails the same way and describes it to no one
 * (for probes whose failure is an answer, not an error). */
struct cctl_ctx {
	int code;        /* the CCTL_E* code of the last failure, or 0 */
	char msg[2048];  /* what failed, with the subject quoted */
	char hint[1024]; /* what the user can do next; may be empty */
	int oserr;       /* raw errno / GetLastError() of the failure, or 0 */
	int verbose;     /* on_warning also gets the notes of --verbose */
	void (*on_progress)(void *ud, const struct cctl_progress *ev);
	void (*on_warning)(void *ud, const char *msg);
	void (*on_notice)(void *ud, enum cctl_notice kind, const char *msg);
	void *ud;
};

void cctl_ctx_init(struct cctl_ctx *ctx);

/* Once at process start: on Windows, locks down the DLL search of the
 * process and turns off loader error pop-ups. */
void cctl_process_init(void);
/* Puts back what cctl_process_init changed that outlives the process
 * (Windows: the console's output code page); call it before exiting. */
void cctl_process_done(void);
/* Ends the process with STATUS at once, without the exit handlers: all
 * output must be flushed and closed first. */
_Noreturn void cctl_process_exit(int status);
/* True when fd (0, 1 or 2) is a terminal. */
int cctl_isatty(int fd);
/* 0: fd is no terminal; 1: a terminal without escape sequences; 2: one
 * with them (turned on for a Windows console). */
int cctl_terminal(int fd);
/* An environment variable (UTF-8 on Windows), or NULL. */
const char *cctl_getenv(const char *name);
/* Turns a path's separators into the platform's own, in place. */
void cctl_native_path(char *path);
/* One line naming the operating system and machine (a bug report's). */
char *cctl_system_describe(void);
/* The user's home folder, or NULL. */
char *cctl_home_dir(void);
/* Monotonic milliseconds. */
double cctl_now_ms(void);

/* ---------------------------------------------------------------- hashing */

struct cctl_sha256; /* opaque incremental SHA-256 */

struct cctl_sha256 *cctl_sha256_new(void);
void cctl_sha256_update(struct cctl_sha256 *h, const void *data, size_t len);
/* Writes 64 lowercase hex digits and a NUL; frees h. */
void cctl_sha256_final(struct cctl_sha256 *h, char hex[65]);
/* Hashes an open file from its start (name is for messages and its size
 * for progress); reports CCTL_PHASE_HASH progress. */
int cctl_sha256_fd(struct cctl_ctx *ctx, int fd, const char *name,
		   char hex[65], uint64_t *size);
/* Hashes a whole file; reports CCTL_PHASE_HASH progress. */
int cctl_sha256_file(struct cctl_ctx *ctx, const char *path, char hex[65],
		     uint64_t *size);

/* --------------------------------------------------------------- manifest */

struct cctl_release {
	char *version;       /* "9.1.0.70" */
	char *platform;      /* "linux-x86_64", "windows-x86_64", ... */
	int cuda;            /* CUDA major of the build: 11, 12, 13 */
	char *relative_path; /* as in the manifest */
	char *file_name;     /* last component of relative_path */
	char sha256[65];
	uint64_t size;
	char *source; /* manifest it came from ("redistrib_9.1.0.json") */
};

struct cctl_manifest {
	struct cctl_release *v;
	size_t n;
	size_t alloc;
	size_t skipped; /* entries that did not fit and were left out */
};

/* Parses one redistrib_*.json text (flat or nested shape, or both under
 * one platform as 9.27.0's windows-arm64) and adds its cuDNN entries; an
 * entry already present (same platform and sha256) is kept once.  Only
 * the "cudnn" package is read (not cudnn_jit or cudnn_samples).  An entry
 * that does not fit (no relative_path, a sha256 that is not 64 hex
 * digits, a size that is not a number) is left out and counted in
 * m->skipped, with a note when ctx->verbose; a text with no usable entry
 * at all is CCTL_EMANIFEST. */
int cctl_manifest_parse(struct cctl_ctx *ctx, struct cctl_manifest *m,
			const char *text, size_t len, const char *source);
int cctl_manifest_load_file(struct cctl_ctx *ctx, struct cctl_manifest *m,
			    const char *path);
/* Adds the manifests compiled into the binary. */
int cctl_manifest_load_builtin(struct cctl_ctx *ctx, struct cctl_manifest *m);
const struct cctl_release *
cctl_manifest_find_hash(const struct cctl_manifest *m, uint64_t size,
			const char *sha256);
const struct cctl_release *
cctl_manifest_find_name(const struct cctl_manifest *m, const char *file_name);
void cctl_manifest_release(struct cctl_manifest *m);
/* The newest release of m whose version has prefix, for platform and
 * cuda (0: any CUDA major); NULL when none. */
const struct cctl_release *cctl_release_newest(const struct cctl_manifest *m,
					       const char *prefix,
					       const char *platform, int cuda);

/* Compares dotted versions numerically ("9.10.0" > "9.9.1"). */
int cctl_version_cmp(const char *a, const char *b);
/* Compares names with the runs of digits in them taken as numbers, so
 * names holding versions sort by version ("cudnn-...-9.2.0.82_cuda12"
 * before "cudnn-...-9.10.2.21_cuda12"); the rest byte by byte. */
int cctl_natural_cmp(const char *a, const char *b);

/* A file cudnnctl produces (a JUnit report): written beside path, then
 * renamed over it, replacing an older one on every platform. */
int cctl_write_file(struct cctl_ctx *ctx, const char *path, const void *data,
		    size_t len);
/* Appended to (the files a CI runner hands over: GITHUB_ENV, ...). */
int cctl_append_file(struct cctl_ctx *ctx, const char *path, const void *data,
		     size_t len);

/* What a value from outside (manifest, index page, record) must be before
 * it becomes part of a path or an id (valid.c).  A version: 1 to 4 parts
 * of 1 to 6 digits, dot-separated.  A CUDA major: 1 to 999.  An id:
 * "<version>-cuda<N>".  A relative path: printable ASCII without '\' or
 * ':', '/'-separated, no empty, "." or ".." part, not absolute, at most
 * 512 bytes. */
int cctl_version_valid(const char *v);
int cctl_cuda_valid(long cuda);
int cctl_id_valid(const char *id);
int cctl_relpath_valid(const char *p);
/* True when path is base, a separator ('/' or '\\', on every platform),
 * then one or more parts none of which is empty, "." or "..": a path made
 * by joining validated parts to base stays inside it. */
int cctl_path_within(const char *base, const char *path);
/* True when prefix names whole leading components of version
 * ("8.9.7" matches "8.9.7.29", not "8.9.70"). */
int cctl_version_has_prefix(const char *version, const char *prefix);
/* The platform this binary runs on, in the manifests' spelling. */
const char *cctl_host_platform(void);

/* ------------------------------------------------------- platform table */

/* A library cuDNN loads that its archive does not ship. */
struct cctl_dep {
	const char *file;  /* file name; "%d" is the CUDA major */
	int cuda_min;      /* CUDA majors it applies to, 0: any */
	int cuda_max;
	const char *since; /* cuDNN versions [since, before) it applies to, */
	const char *before; /* NULL: any */
	int at_load;       /* needed when cuDNN loads (a failure), else at
			      first use (a warning) */
	const char *what;  /* "cuBLASLt" */
	const char *fix;   /* the next step; "{cuda}" stands for the CUDA
			      major, "{libdir}" for the folder of cuDNN's
			      libraries, "{main}" for its main library */
	/* NULL, or why it is thought to be needed when no document says so:
	 * then it is needed only when one of cuDNN's libraries imports it or
	 * names it (a string it loads by name), and a warning that says
	 * this when cudnnctl cannot tell */
	const char *inferred;
};

/* The sub-libraries of one cuDNN major: <first> is the main library. */
struct cctl_libset {
	int major;
	const char *const *names; /* NULL-terminated */
};

enum cctl_shell { CCTL_SHELL_SH, CCTL_SHELL_POWERSHELL, CCTL_SHELL_CMD };

/* A variable the environment of an active install sets: its folder first. */
struct cctl_env_dir {
	const char *var; /* "LD_LIBRARY_PATH" */
	const char *dir; /* the install's folder put first on it: "lib"; ""
			    the install's folder itself */
	const char *alt; /* the folder used instead where it exists
			    ("lib/x64"), or NULL */
	int exec_only;   /* set by exec (and env --version) only: a
			    compiler's INCLUDE and LIB on Windows */
};

/* Everything cudnnctl knows about one platform of NVIDIA's manifests:
 * where an archive keeps the libraries and how they are named, what the
 * loader needs beside them, how the driver is called. */
struct cctl_platform {
	const char *name;       /* manifests' spelling: "linux-x86_64" */
	int windows;
	const char *lib_dir;    /* folder of the libraries in an install */
	const char *lib_alt;    /* the other folder they may sit in:
				   bin/x64 (Windows, 9.23 and later) */
	const char *lib_var;    /* the variable the loader searches */
	const char *driver;     /* the CUDA driver library */
	const char *lib_glob;   /* any cuDNN library of a major, by the name
				   the loader asks for: "libcudnn*.so.%d" */
	const struct cctl_libset *libsets; /* ends with major 0 */
	const struct cctl_dep *deps;       /* ends with file NULL */
	const struct cctl_env_dir *env;    /* ends with var NULL */
	enum cctl_shell shell;  /* what `cudnnctl env` writes for by default */
	const char *env_pre;    /* how a shell applies `cudnnctl env`: */
	const char *env_post;   /* pre + "cudnnctl env ..." + post */
	const char *cudart;     /* the CUDA runtime of a toolkit: "%d" the
				   CUDA major */
	const char *toolkit_dir; /* where a toolkit usually is, or NULL */
	const char *nvcc;       /* the toolkit's compiler: "nvcc", "nvcc.exe" */
	const char *const *min_driver; /* the driver each CUDA major needs,
				   from 11 on (NVIDIA's support matrix) */
	const char *root_help;  /* where the default root is, for --help */
	const char *root_example; /* a good root, for hints */
	const char *proxy_help; /* how downloads reach the internet through a
				   proxy, for hints */
	unsigned pe_machine;    /* Windows: the PE machine of its DLLs
				   (0x8664 x64, 0xAA64 arm64); 0 on Linux */
	const char *arch;       /* "x64", "arm64", for messages */
};

/* The oldest driver version for CUDA major `cuda` builds, or NULL. */
const char *cctl_platform_min_driver(const struct cctl_platform *p, int cuda);
/* The entry for a manifest platform name, or NULL. */
const struct cctl_platform *cctl_platform_find(const char *name);
/* The entry for this machine: its native architecture (an x64
 * cudnnctl.exe emulated on an arm64 PC says windows-arm64), or what
 * cctl_platform_set_host chose. */
const struct cctl_platform *cctl_platform_host(void);
/* What this process itself can load: the build's platform. */
const struct cctl_platform *cctl_platform_process(void);
/* Takes `name` as this machine's platform from now on (install
 * --platform): 0, or CCTL_EUSAGE for a platform the table does not know
 * or one of another operating system. */
int cctl_platform_set_host(struct cctl_ctx *ctx, const char *name);

/* The oldest GPU a cuDNN build runs on: a row of the table in platform.c,
 * with where the fact comes from (docs/research/cudnn-gpu-minimums.md). */
struct cctl_gpu_floor {
	int from, to;       /* cuDNN major*100+minor, inclusive (911: 9.11) */
	int cuda;           /* CUDA major of the build, 0: any */
	int min_cc;         /* compute capability major*10+minor (75: 7.5) */
	const char *names;  /* the architectures from there on */
	const char *older;  /* the newest cuDNN for older GPUs, or NULL */
	const char *source;
};
/* The row for cudnnGetVersion() code v (8907, 91900) built for CUDA major
 * cuda, or NULL when the table does not say. */
const struct cctl_gpu_floor *cctl_gpu_floor(long v, int cuda);
/* The library file names a complete install of cuDNN `major` has on
 * `p` (NULL-terminated, static), or NULL for a major it does not know;
 * the first is the main library. */
const char *const *cctl_platform_libraries(const struct cctl_platform *p,
					   int major);
/* "libcudnn.so.9", "cudnn64_9.dll": the main library of `major`. */
const char *cctl_platform_main_library(const struct cctl_platform *p,
				       int major);
/* True when a file name is one of `p`'s cuDNN libraries of `major` (by
 * lib_glob), including those no table lists. */
int cctl_platform_is_library(const struct cctl_platform *p, int major,
			     const char *base_name);
/* True when dep applies to cuDNN `version` built for CUDA `cuda`. */
int cctl_dep_applies(const struct cctl_dep *dep, const char *version,
		     int cuda);
/* dep's file name and fix for that CUDA major, folder and main library
 * (free() both). */
char *cctl_dep_file(const struct cctl_dep *dep, int cuda);
char *cctl_dep_fix(const struct cctl_dep *dep, int cuda, const char *libdir,
		   const char *main_library);
/* The folders an archive's top level may hold (anything else there is a
 * wrapper folder that normalisation drops), NULL-terminated. */
extern const char *const cctl_layout_top[];
/* Folders renamed by normalisation: lib64 -> lib for old Linux archives
 * (where there is no lib/). */
extern const char *const cctl_layout_renames[][2];

/* ---------------------------------------------------------------- archive */

enum cctl_entry_type {
	CCTL_ENTRY_FILE,
	CCTL_ENTRY_DIR,
	CCTL_ENTRY_SYMLINK,
	CCTL_ENTRY_HARDLINK
};

struct cctl_entry {
	char *name; /* as stored in the archive (UTF-8) */
	char *path; /* normalised: prefix dropped, '/'-separated, relative */
	enum cctl_entry_type type;
	char *link; /* symlink target / normalised hardlink target */
	uint64_t size;
	unsigned mode;
	int64_t mtime; /* as the archive gives it */
	long mtime_nsec;
	char sha256[65]; /* filled by the unpacking scan or the extraction */
};

struct cctl_archive {
	char *file; /* for messages */
	int fd;     /* read from its start by scan and extract; not owned */
	/* the scan reads the file as it downloads (fd -1), or NULL */
	struct cctl__feed *feed;
	struct cctl_entry *v;
	size_t n;
	char *prefix;        /* dropped leading folder(s), "" when none */
	uint64_t total_size; /* bytes of regular files */
	size_t longest_path; /* longest normalised path */
	char *version_h;     /* include/cudnn_version.h contents, or NULL */
	/* SHA-256 and size of the whole file, computed while the scan read it
	 * and again while the extraction read it (bytes a pass skipped are
	 * read at its end; the scan's when `guard` held all along): the
	 * archive identified is the one checked, and the one checked is the
	 * one extracted */
	char scan_sha256[65];
	char extract_sha256[65];
	uint64_t file_size;
	/* a compressed tar (.tar.xz, .tar.gz, .tar.bz2) is decompressed once:
	 * the scan writes each regular file as it reads it into this private
	 * folder (a ".staging-" one beside the root's versions), named by its
	 * index in v, and the extraction then moves them into place (one
	 * pass); NULL when the extraction reads the archive itself (also when
	 * the files would not fit in the free space: then it is read twice).
	 * Removed, with what is left in it, by cctl_archive_release */
	char *unpacked;
	uint64_t unpacked_size; /* bytes of the files in it */
	/* of those, taken as a try before had unpacked them (a resumed
	 * download of a zip) */
	uint64_t kept_files, kept_bytes;
	uint64_t copy_size; /* bytes of the private copy (cctl_archive_seal) */
	/* workers for the extraction of a zip: 0 is
	 * cctl_archive_default_jobs(), 1 extracts on the calling thread */
	unsigned jobs;
	/* cctl_os_guard_begin's on fd from the scan's first read to the
	 * release, or NULL: while it holds, what the extraction reads is
	 * what the scan hashed, and the file is not hashed again */
	void *guard;
	/* a private copy of the file that scan and extraction read in fd's
	 * place once cctl_archive_seal made it (hashed as the scan hashed
	 * the file), or -1 */
	int copy_fd;
	/* set by cctl_archive_extract when the guard broke during the
	 * extraction (someone opened the file for writing): what was read
	 * cannot be proven to be what was hashed; extract_sha256 is empty */
	int guard_lost;
	/* the scan read the bytes as they downloaded, not fd's file: the
	 * extraction hashes fd's file again (under the guard) */
	int rehash;
};

/* The number of extraction workers by default: CUDNNCTL_JOBS when it is
 * a number from 1 to 64 (else a warning), else the processors this process
 * may use, at most 16. */
unsigned cctl_archive_default_jobs(struct cctl_ctx *ctx);

/* Reads the whole archive (from the start of fd) and checks every entry
 * without extracting anything: names (control, format or other non-ASCII
 * characters, absolute, "..", duplicates), types, and link targets; fills
 * scan_sha256 and file_size, and decides the prefix that normalisation
 * drops.  With unpack_dir, the files of a compressed tar are also written
 * as the scan reads them, into a private folder there (unpacked) that the
 * extraction moves into place; pass it only for an archive that is likely
 * to be installed (its name and size match a release, or it is taken
 * unverified), as the files are written before the hash says what the
 * archive is.  jobs (kept in a->jobs for
 * the extraction): threads for decoding an xz and workers for extracting;
 * 0 is cctl_archive_default_jobs(). */
int cctl_archive_scan(struct cctl_ctx *ctx, int fd, const char *file,
		      const char *unpack_dir, unsigned jobs,
		      struct cctl_archive *a);
/* 1 when no one but this process can change what the extraction will
 * read: a tar unpacked by the scan, a private copy, or a file guarded
 * (cctl_os_guard_held) since the scan read it. */
int cctl_archive_trusted(const struct cctl_archive *a);
/* Copies the archive into a private temporary file in dir (gone when
 * released), hashing the copy: when it hashes as the scan's file did,
 * the extraction reads the copy (no one else can write it), else the
 * file changed since the scan: CCTL_EBADARCHIVE. */
int cctl_archive_seal(struct cctl_ctx *ctx, struct cctl_archive *a,
		      const char *dir);
/* Extracts the scanned archive under dest (which must exist), with
 * normalised paths, and fills each file entry's sha256. */
int cctl_archive_extract(struct cctl_ctx *ctx, struct cctl_archive *a,
			 const char *dest);
const struct cctl_entry *cctl_archive_find(const struct cctl_archive *a,
					   const char *path);
void cctl_archive_release(struct cctl_archive *a);

/* Parses CUDNN_MAJOR/MINOR/PATCHLEVEL from cudnn_version.h text into
 * "M.m.p"; NULL when absent. */
char *cctl_parse_version_header(const char *text);


/* ------------------------------------------------------------------ store */

struct cctl_file {
	char *path; /* relative to the version folder */
	enum cctl_entry_type type;
	uint64_t size;
	char sha256[65];
	int64_t mtime_ns;
	int64_t ctime_ns;
	char *link;
};

struct cctl_install {
	char *id;       /* "9.1.0.70-cuda12", the folder name */
	char *version;  /* "9.1.0.70" */
	int cuda;
	char *platform;
	int verified;   /* matched a manifest entry */
	char *archive;  /* file name it came from */
	char archive_sha256[65];
	char *manifest; /* manifest that matched, or NULL */
	char *installed_at; /* ISO 8601 UTC */
	uint64_t size;  /* bytes of regular files */
	int active;     /* filled by cctl_store_list */
	struct cctl_file *files;
	size_t nfiles;
};

struct cctl_root {
	char *path;
	void *lock;
	char *created_top;    /* highest folder cctl_root_open made, or NULL */
	int created_versions; /* it made <root>/versions */
	int created_lock;     /* it made <root>/.lock */
};

/* The default root: $CUDNNCTL_ROOT, else %SystemDrive%\cudnn on Windows,
 * /opt/cudnn as root on POSIX, else $XDG_DATA_HOME/cudnn or
 * ~/.local/share/cudnn. */
int cctl_root_default(struct cctl_ctx *ctx, char **path);
/* Refuses a root with non-ASCII characters or spaces, or one under which
 * a relative path of `longest` characters would pass 200 in all. */
int cctl_root_check(struct cctl_ctx *ctx, const char *path, size_t longest);
/* Opens (and with create, makes) the root; takes its lock when lock,
 * failing at once (CCTL_ELOCKED) when another process holds it. */
int cctl_root_open(struct cctl_ctx *ctx, struct cctl_root *r,
		   const char *path, int create, int lock);
/* The same, waiting up to wait_ms for another process to let the lock
 * go (a warning says once who holds it, doing what; Ctrl+C stops the
 * wait: CCTL_EINTERRUPTED), and saying what this one does (`doing`,
 * "install 9.19") to whoever waits for it. */
int cctl_root_open_wait(struct cctl_ctx *ctx, struct cctl_root *r,
			const char *path, int create, int lock, long wait_ms,
			const char *doing);
void cctl_root_close(struct cctl_root *r);
/* Closes a root after a failed command: what cctl_root_open created
 * (parent folders, the root, versions/, .lock) is removed again, as long
 * as nothing else was put there. */
void cctl_root_discard(struct cctl_root *r);

/* Lists installs sorted by version, each marked active or not. */
int cctl_store_list(struct cctl_ctx *ctx, const struct cctl_root *r,
		    struct cctl_install **out, size_t *n);
void cctl_install_list_release(struct cctl_install *v, size_t n);
void cctl_install_release(struct cctl_install *in);
/* Finds the one install matching a version prefix (and cuda, if > 0).
 * CCTL_ENOTFOUND or CCTL_EAMBIGUOUS (listing the choices) otherwise. */
int cctl_store_find(struct cctl_ctx *ctx, const struct cctl_root *r,
		    const char *prefix, int cuda, struct cctl_install *out);
/* The active id, or NULL in *id when none. */
int cctl_store_active(struct cctl_ctx *ctx, const struct cctl_root *r,
		      char **id);
int cctl_record_write(struct cctl_ctx *ctx, const char *dir,
		      const struct cctl_install *in);
int cctl_record_read(struct cctl_ctx *ctx, const char *dir,
		     struct cctl_install *in);
#define CCTL_RECORD_NAME ".cudnnctl-record"

/* ------------------------------------------------------------- activation */

#define CCTL_ACT_SYSTEM 0x1 /* ld.so.conf.d + ldconfig instead of profiles */
#define CCTL_ACT_NO_PERSIST 0x2 /* `current` only: shell profiles, env.sh and
				   the registry left alone (CI mode) */

/* Points <root>/current at versions/<id> atomically, writes env.sh and the
 * guarded profile lines (or the system ld.so configuration). */
int cctl_activate(struct cctl_ctx *ctx, const struct cctl_root *r,
		  const char *id, unsigned flags);
/* How the root's active version was activated: "user", "system", "ci"
 * (nothing persisted), or NULL when none was. */
const char *cctl_activation_mode(const struct cctl_root *r);
/* Removes the profile lines, the system configuration and `current`. */
int cctl_deactivate(struct cctl_ctx *ctx, const struct cctl_root *r);

#define CCTL_ACT_FORCE 0x4 /* path restore: the saved value exactly, even
			      when that drops entries added since */

/* Windows: puts the PATH (CCTL_ACT_SYSTEM: the machine's) back as it was
 * before cudnnctl first changed it: today's value less this root's entries
 * (the saved value byte for byte when nothing else changed since, or with
 * CCTL_ACT_FORCE), CUDNN_PATH as it was, the root deactivated and the
 * saved value retired.  CCTL_EUSAGE elsewhere. */
int cctl_path_restore(struct cctl_ctx *ctx, const struct cctl_root *r,
		      unsigned flags);

struct cctl_env_var {
	const char *name; /* static */
	char *value;      /* freed by cctl_env_vars_release */
	char *first;      /* a list's: the install's folder put first on it
			     (Windows 9.23 and later: bin\x64); NULL for a
			     plain value.  Freed with value. */
};
#define CCTL_ENV_MAX 12
/* The variables (and values) that apply the active install to a process
 * started from this environment. */
int cctl_env_vars(struct cctl_ctx *ctx, const struct cctl_root *r,
		  struct cctl_env_var vars[CCTL_ENV_MAX], size_t *n);
void cctl_env_vars_release(struct cctl_env_var *vars, size_t n);
/* The variables that run a program with one installed version first
 * (cudnnctl exec): the one prefix (and cuda, if > 0) names as switch takes
 * it, or the active one when prefix is NULL; its folder itself, not
 * `current`.  *id: its id (free()).  Changes nothing. */
int cctl_exec_env(struct cctl_ctx *ctx, const struct cctl_root *r,
		  const char *prefix, int cuda,
		  struct cctl_env_var vars[CCTL_ENV_MAX], size_t *n, char **id);
/* <root>/history.jsonl (history.c): one line per change to the root. */
struct cctl_history_entry {
	char *time;     /* ISO 8601 UTC; set by append */
	char *user;     /* set by append */
	char *host;     /* set by append */
	char *command;  /* "switch" */
	char *args;     /* the command line, as typed */
	char *from;     /* the active id before, or NULL */
	char *to;       /* the active id after, or NULL */
	char *sha256;   /* the archive installed, or NULL */
	int ok;
	int exit_status;
};
/* Appends e (time, user and host filled in) in one flushed write; the
 * caller holds the root lock. */
int cctl_history_append(struct cctl_ctx *ctx, const struct cctl_root *r,
			const struct cctl_history_entry *e);
/* Every readable line, oldest first; damaged ones are skipped, counted in
 * *skipped, with a warning.  No history: 0 and none. */
int cctl_history_read(struct cctl_ctx *ctx, const struct cctl_root *r,
		      struct cctl_history_entry **v, size_t *n, size_t *skipped);
void cctl_history_release(struct cctl_history_entry *v, size_t n);
/* switch -: the version that was active before the active one became
 * so (the last successful change to it); CCTL_ENOTFOUND when none. */
int cctl_history_previous(struct cctl_ctx *ctx, const struct cctl_root *r,
			  char **id);

/* link-cuda: the active version's headers and libraries placed into a
 * CUDA toolkit's folders (Linux: links through `current`; Windows:
 * copies), each file they replace kept beside it as <name>.cudnnctl-backup;
 * <root>/cuda-link records it, and a switch, install or deactivate keeps
 * it in step.  An interrupted run is finished by the next. */
struct cctl_cuda_link {
	char *toolkit; /* the toolkit's folder */
	char *version; /* the id placed */
	size_t files;  /* files placed (or, unlink, taken out) */
	size_t backups; /* of them, replacing (restoring) a toolkit's file */
};
/* toolkit NULL: the one linked before, else CUDA_PATH, else the
 * platform's (/usr/local/cuda).  Refuses, changing nothing, a folder
 * that is not a toolkit or cannot be written. */
int cctl_link_cuda(struct cctl_ctx *ctx, const struct cctl_root *r,
		   const char *toolkit, struct cctl_cuda_link *out);
/* Takes every placed file out and restores each backup byte for byte;
 * CCTL_ENOTFOUND when nothing is placed. */
int cctl_unlink_cuda(struct cctl_ctx *ctx, const struct cctl_root *r,
		     struct cctl_cuda_link *out);
void cctl_cuda_link_release(struct cctl_cuda_link *l);
/* CUDA_PATH, else the platform's toolkit folder, else NULL (free()). */
char *cctl_cuda_toolkit_default(void);

/* Which version applies here (cudnnctl which, exec, install with no
 * VERSION): the command line's > CUDNNCTL_VERSION > the nearest
 * .cudnn-version from the current folder up > the active version. */
struct cctl_pin {
	char *version;      /* a prefix or an id; NULL: the active version */
	int cuda;           /* 0: any */
	char *file;         /* the pin file it came from, or NULL */
	const char *source; /* "the command line", "CUDNNCTL_VERSION", the
			       file, "the active version" */
};
/* The nearest .cudnn-version from dir (NULL: the current folder) up: 0
 * with pin->file NULL when there is none; CCTL_EUSAGE naming the file and
 * line for one that is not a version line ("9.10" or "9.10 cuda12", '#'
 * comments). */
int cctl_pin_find(struct cctl_ctx *ctx, const char *dir, struct cctl_pin *pin);
/* The choice, in the order above; version and cuda: the command line's
 * (NULL, 0: none). */
int cctl_pin_choose(struct cctl_ctx *ctx, const char *version, int cuda,
		    struct cctl_pin *pin);
void cctl_pin_release(struct cctl_pin *pin);
/* Writes ./.cudnn-version for version (and cuda, if > 0), replacing one
 * there; *path: the file (free()). */
int cctl_pin_write(struct cctl_ctx *ctx, const char *version, int cuda,
		   char **path);

/* Runs argv with those variables (cctl_exec_env): on POSIX it replaces
 * this process and returns only on failure; on Windows it waits and
 * returns 0 with the command's exit code in *status.  CCTL_ENOCOMMAND,
 * CCTL_ECANNOTRUN when the command cannot be started. */
int cctl_exec(struct cctl_ctx *ctx, const struct cctl_root *r,
	      const char *prefix, int cuda, const char *const *argv, int *status);

/* The command that applies the active install to the current shell
 * (eval "$(cudnnctl env)"), naming the root when it is not the default
 * one (free()). */
char *cctl_env_command(const struct cctl_root *r);
/* Commands that apply the active install to the current shell. */
int cctl_env_render(struct cctl_ctx *ctx, const struct cctl_root *r,
		    enum cctl_shell shell, struct cctl_buf *out);
/* The same for one installed version (env --version V: the variables of
 * cctl_exec_env), or the active one when version is NULL. */
int cctl_env_render_version(struct cctl_ctx *ctx, const struct cctl_root *r,
			    const char *version, int cuda, enum cctl_shell shell,
			    struct cctl_buf *out);

/* ----------------------------------------------------------------- verify */

/* The stages, in the order they run: the one list every other one is made
 * from.  X(ID, function, name, exit code, needs a GPU): the stage's
 * function is cctl__stage_<function> (src/core/verify-*.c), its failure
 * exits with CCTL_E<exit code> (error.h), and a GPU stage is skipped by
 * --no-gpu and where no driver or GPU is found. */
#define CCTL_STAGE_MAP(X)                                                      \
	X(LOCATE, locate, "locate", VERIFY_LOCATE, 0)                          \
	X(FILES, files, "files", VERIFY_FILES, 0)                              \
	X(VERSION, version, "version", VERIFY_VERSION, 0)                      \
	X(DEPS, deps, "dependencies", VERIFY_DEPS, 0)                          \
	X(LOAD, load, "load", VERIFY_LOAD, 0)                                  \
	X(DRIVER, driver, "driver", VERIFY_DRIVER, 1)                          \
	X(CREATE, create, "create", VERIFY_CREATE, 1)                          \
	X(CONV, conv, "convolution", VERIFY_CONV, 1)                           \
	X(BUILD, build, "build", VERIFY_BUILD, 0)

enum cctl_stage {
#define CCTL__STAGE_ENUM(id, fn, name, code, gpu) CCTL_STAGE_##id,
	CCTL_STAGE_MAP(CCTL__STAGE_ENUM)
#undef CCTL__STAGE_ENUM
	CCTL_STAGE_COUNT
};

enum cctl_status { CCTL_PASS, CCTL_WARN, CCTL_FAIL, CCTL_SKIP };

/* One thing a stage found wrong, with its own fix. */
struct cctl_stage_note {
	enum cctl_status status; /* CCTL_WARN or CCTL_FAIL */
	char *reason;
	char *next; /* what the user can do about this one, or NULL */
};

struct cctl_stage_result {
	enum cctl_status status;
	double ms;
	char *finding; /* what the stage found; never NULL after a run */
	char *reason;  /* why it warned, failed or was skipped (the reasons
			  of its status joined), or NULL */
	char *next;    /* the fix of the first note of that status, or NULL */
	int code;      /* CCTL_EVERIFY_* of a failure, else 0 */
	struct cctl_stage_note *notes; /* every warning and failure, in order */
	size_t nnotes;
};

struct cctl_lib_copy {
	char *path;
	char *origin;
};

/* A cuDNN library the load stage found mapped into verify's own process,
 * after making cuDNN load every sub-library. */
struct cctl_loaded_lib {
	char *path;
	char *version; /* "9.19.0" from the file, or NULL when it does not say */
	char *origin;  /* "the main library's folder", "LD_LIBRARY_PATH", ... */
	int foreign;   /* another folder or version than the main library's */
};

struct cctl_verify_opts {
	const char *version; /* check this install instead of the active one */
	int cuda;            /* with version: pick the CUDA variant */
	int no_gpu;          /* stop after the load stage */
	int require_gpu;     /* skipped GPU stages are failures */
	int full;            /* re-hash every file */
	const char *devices; /* GPUs for the GPU stages: "all", or "0,2"
				(the driver's numbering); NULL: the first */
	int build;           /* run the build stage (off by default) */
};

/* One GPU the GPU stages ran on: what the driver says of it and its own
 * result of each GPU stage (driver: its fitness for the build; create;
 * convolution), in stage[] at the same index as cctl_verify's. */
struct cctl_gpu {
	int index;      /* the driver's device number */
	char *name;
	char uuid[48];  /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", or "" */
	int cc_major, cc_minor;
	unsigned long long memory;      /* bytes */
	unsigned long long free_memory; /* bytes free before the check; 0:
					   not known */
	struct cctl_stage_result stage[CCTL_STAGE_COUNT]; /* GPU stages only */
	const char *algorithm; /* of the convolution that ran, or NULL */
	double max_rel_error;
};

struct cctl_verify {
	struct cctl_stage_result stage[CCTL_STAGE_COUNT];
	char *id;               /* install checked, NULL when none */
	char *expected_version; /* "9.19.0.56" or from cudnn_version.h */
	int expected_cuda;      /* 0 when unknown */
	char *library;          /* the main library a new process loads */
	struct cctl_lib_copy *copies; /* every copy, in the loader's order */
	size_t ncopies;
	char *loaded;           /* the file really mapped */
	struct cctl_loaded_lib *libs; /* every cuDNN library mapped, the main
					 one first */
	size_t nlibs;
	long cudnn_version;     /* cudnnGetVersion() */
	long cudart_version;    /* cudnnGetCudartVersion() */
	int driver_version;     /* cuDriverGetVersion(), 0 when none */
	char *gpu_name;
	int cc_major, cc_minor;
	unsigned long long gpu_memory;
	int gpu_count;
	/* the GPUs the GPU stages ran on (--device), in the order asked; the
	 * gpu_name ... max_rel_error fields above and below are the first's,
	 * and each GPU stage's row says what all of them gave (a failure on
	 * any fails it, naming the GPU) */
	struct cctl_gpu *gpus;
	size_t ngpus;
	const char *algorithm;
	double max_rel_error;
	size_t files_checked, files_rehashed;
	double total_ms;
};

const char *cctl_stage_name(enum cctl_stage s);
/* The CCTL_EVERIFY_* code a failure of the stage returns. */
int cctl_stage_code(enum cctl_stage s);
/* True for the stages that need a GPU (driver, create, convolution). */
int cctl_stage_needs_gpu(enum cctl_stage s);
const char *cctl_status_name(enum cctl_status s);
/* Decodes cudnnGetVersion() (8907 -> "8.9.7", 90100 -> "9.1.0"). */
void cctl_decode_cudnn_version(long v, char *out, size_t n);
/* Runs the stages on the install of r (r may be NULL: whatever cuDNN the
 * loader finds).  Returns 0 when no stage failed, else the CCTL_EVERIFY_*
 * code of the first failure; ctx->msg then names it.  Release v always. */
int cctl_verify(struct cctl_ctx *ctx, const struct cctl_root *r,
		const struct cctl_verify_opts *o, struct cctl_verify *v);
void cctl_verify_release(struct cctl_verify *v);

/* ------------------------------------------------------- verify --python */

/* One cuDNN library a framework's process had mapped. */
struct cctl_framework_lib {
	char *path;
	long version;  /* its cudnnGetVersion(), 0 when it would not say */
	char *origin;  /* "bundled with torch", "pip nvidia-cudnn wheel",
			  "cudnnctl (active)", "cudnnctl (9.14.0.99-cuda12)",
			  "another copy on this system" */
	int active;    /* cudnnctl's active install */
};

/* What one framework of a Python environment loads (verify --python). */
struct cctl_framework {
	const char *name;  /* "torch", "onnxruntime", ... (static) */
	int present;       /* the interpreter can import it */
	char *version;     /* the framework's own version, or NULL */
	char *location;    /* its package folder, or NULL */
	long built;        /* cuDNN it was built against, 0 when not said */
	char *error;       /* what failed in its process, or NULL */
	int status;        /* that process's exit status (-1: timed out) */
	struct cctl_framework_lib *libs;
	size_t nlibs;
	enum cctl_status result; /* pass, warn, fail; skip: not installed */
	char *finding;     /* one line */
	char *hint;        /* what to do, or NULL */
	char *skip;        /* why it loads no cuDNN at all (skip), or NULL */
	char **subs;       /* the cuDNN sub-libraries mapped once the probe
			      had them loaded (graph, ops...) */
	size_t nsubs;
	double ms;
};

/* ------------------------------------------------------- verify --app */

/* One library a program needs (its imports, its folder's libraries' or,
 * loaded at run time, a name in its bytes), and what the loader gives. */
struct cctl_app_import {
	char *name;      /* "cudnn64_9.dll", "libcudnn.so.9", "cudart64_12.dll" */
	char *by;        /* the file that names it */
	int cudnn;       /* cuDNN's (else CUDA's: only counted) */
	int major;
	int runtime;     /* named in the bytes, not imported */
	char *resolved;  /* the file the loader takes, or NULL */
	char *origin;    /* "the program's folder", "PATH", "RUNPATH"... */
	int in_program_dir;
	int cudnnctl;    /* in cudnnctl's root */
	enum cctl_status status;
	char *finding;
	char *next;      /* or NULL */
};

struct cctl_app {
	char *program;
	int cudnn_major;     /* the generation it needs; 0: none */
	int cuda[4];         /* the CUDA majors it names */
	size_t ncuda;
	int runtime_load;    /* cuDNN only by name in its bytes */
	struct cctl_app_import *v;
	size_t n;
	enum cctl_status result; /* skip: it uses no cuDNN */
	char *finding;
	/* --run (cctl_verify_app_run) */
	int ran;
	int run_status;          /* its exit status; -1: ended at the limit */
	char *output;            /* the file its output went to */
	struct cctl_loaded_lib *loaded; /* the cuDNN libraries it loaded */
	size_t nloaded;
	enum cctl_status run_result;
	char *run_finding;
	char *run_next;          /* or NULL */
};
/* verify --app: reads the program's imports and its folder's libraries'
 * and resolves each cuDNN library as the loader will for it; r (NULL: no
 * root) says what is active.  Fails only when the file is no program. */
int cctl_verify_app(struct cctl_ctx *ctx, const struct cctl_root *r,
		    const char *program, struct cctl_app *out);
/* verify --app PROGRAM --run [-- ARGS]: runs argv (argv[0] the program)
 * with a time limit ($CUDNNCTL_APP_TIMEOUT seconds, default 60), its
 * output into a file in the temporary folder, records every cuDNN
 * library it really loaded and judges them as the load stage does: all
 * from the main library's folder. */
int cctl_verify_app_run(struct cctl_ctx *ctx, const struct cctl_root *r,
			const char *const *argv, struct cctl_app *a);
void cctl_app_release(struct cctl_app *a);

/* Runs each known framework's probe (src/core/pyprobe.py) under
 * `interpreter` (NULL: $VIRTUAL_ENV's, $CONDA_PREFIX's, else python3 or
 * python on PATH), one process each with a time limit
 * ($CUDNNCTL_PYTHON_TIMEOUT seconds, default 120).  r (may be NULL) tells
 * which copies are cudnnctl's.  Fails only when the interpreter cannot be
 * run at all; a framework's failure is in its entry. */
int cctl_verify_python(struct cctl_ctx *ctx, const struct cctl_root *r,
		       const char *interpreter, char **used,
		       struct cctl_framework **out, size_t *n);
void cctl_frameworks_release(struct cctl_framework *f, size_t n);

/* --------------------------------------------------------------- fetching */

#define CCTL_DEFAULT_MIRROR \
	"https://developer.download.nvidia.com/compute/cudnn/redist/"

/* Where releases come from and where they are kept. */
struct cctl_fetch_opts {
	const char *mirror; /* URL (http, https) or folder (also file://);
			       NULL: $CUDNNCTL_MIRROR, else NVIDIA's */
	const char *cache;  /* NULL: $CUDNNCTL_CACHE, else the user's cache
			       folder (cctl_os_cache_dir) */
	int offline;        /* no network: built-in and cached only */
	int retries;        /* of a broken transfer; 0: 5 */
	int connections;    /* at once for one large archive, when the server
			       honours Range; 0: $CUDNNCTL_CONNECTIONS, else
			       4; at most 16 */
	int connect_s;      /* 0: $CUDNNCTL_TIMEOUT, else 30 */
	int stall_s;        /* 0: $CUDNNCTL_TIMEOUT, else 30 */
};

/* The mirror and the cache folder those options name (static / free()). */
const char *cctl_fetch_mirror(const struct cctl_fetch_opts *o);
int cctl_fetch_cache_dir(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
			 char **dir);

struct cctl_fetch_result {
	char *path;          /* the verified archive in the cache */
	char *url;           /* where it came from, NULL for a cache hit */
	int cached;          /* it was in the cache already */
	uint64_t downloaded; /* bytes received this time */
	uint64_t resumed_at; /* the offset the download resumed from, or 0 */
	int attempts;        /* requests made */
};

/*
 * The archive of release r, verified, in the cache (<cache>/archives/):
 * a cached copy of the right size (and, with check_hash, the right
 * SHA-256) is used as it is; a wrong one is removed.  Else it is
 * downloaded from the mirror into NAME.part, hashed as the bytes arrive,
 * resumed with a Range request after a broken connection (from zero when
 * the server answers 200), retried with backoff, and renamed to NAME only
 * when its size and SHA-256 match the manifest; a mismatch deletes it.
 * A folder mirror is copied the same way.  Two processes fetching the
 * same archive wait for each other (<cache>/archives/NAME.lock).
 */
int cctl_fetch_archive(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		       const struct cctl_release *r, int check_hash,
		       struct cctl_fetch_result *res);
void cctl_fetch_result_release(struct cctl_fetch_result *res);

/* Where r's archive comes from on the mirror (URL or path; free()), or
 * NULL when its relative_path would leave the mirror. */
char *cctl_fetch_source(const struct cctl_fetch_opts *o,
			const struct cctl_release *r);
/* Copies the verified archive of r into dir (made when missing), through
 * a temporary name renamed at the end, hashing what it copies: a copy
 * whose size or SHA-256 is not r's is CCTL_EMISMATCH and not made (the
 * file at path is removed).  *out: the copy's path (free()). */
int cctl_fetch_export(struct cctl_ctx *ctx, const char *path, const char *dir,
		      const struct cctl_release *r, char **out);

/* What the cache holds. */
struct cctl_cache_entry {
	const char *kind; /* "archive", "partial" (a download to resume),
			     "manifest" */
	char *name;
	uint64_t size;
};
int cctl_cache_list(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		    struct cctl_cache_entry **v, size_t *n);
void cctl_cache_list_release(struct cctl_cache_entry *v, size_t n);
/* Removes every archive, partial download and fetched manifest, except
 * an archive another process is fetching now (counted in *kept); *freed:
 * bytes removed.  Only names cudnnctl makes, in archives/ and manifests/
 * that are folders (not links), are listed or removed. */
int cctl_cache_clean(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		     uint64_t *freed, size_t *kept);

/* Adds the manifests fetched earlier (<cache>/manifests/) to m. */
int cctl_manifest_load_cached(struct cctl_ctx *ctx,
			      const struct cctl_fetch_opts *o,
			      struct cctl_manifest *m);
/* A manifest given by its https:// address (--manifest URL): fetched
 * (at most 4 MB, not cached) and parsed as a file would be; an http://
 * one is refused (CCTL_EMANIFEST), as is any with o->offline. */
int cctl_manifest_load_url(struct cctl_ctx *ctx,
			   const struct cctl_fetch_opts *o,
			   struct cctl_manifest *m, const char *url);
/* Reads the mirror's index page, fetches each redistrib_*.json it links
 * that is neither built in nor cached, keeps those that parse and agree
 * with m (no other size or hash for an archive m names) in the cache and
 * adds them to m.  Manifests are taken only over HTTPS or from a folder.
 * *added: how many were kept; *refused: how many were not. */
int cctl_manifests_update(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
			  struct cctl_manifest *m, size_t *added,
			  size_t *refused);

/* A site's mirror in NVIDIA's layout (mirror sync, src/core/sync.c):
 * NVIDIA's redistrib_*.json byte for byte and the archives they name, at
 * <dir>/<relative_path>, for the releases the filters choose.  The source
 * is o->mirror; archives are fetched (resumed, over several connections,
 * verified) through <dir>/.cudnnctl-sync/, a cache of its own on the
 * mirror's file system, and renamed into place once verified. */
struct cctl_sync_opts {
	const char *dir;
	const char *const *versions; /* terms, any of which selects: "all", a
					prefix "9.19", or conditions that all
					hold ">=9.20,<10"; at least one */
	size_t nversions;
	const char *const *platforms; /* none: every platform */
	size_t nplatforms;
	const int *cudas;             /* none: every CUDA major */
	size_t ncudas;
	const char *const *manifests; /* files to take as well (a plain-HTTP
					 source's manifests cannot be) */
	size_t nmanifests;
	int prune;   /* remove manifests and archives the filters no longer
			choose (only names cudnnctl would write) */
	int dry_run; /* say what would be fetched and removed, change nothing */
};
struct cctl_sync_item {
	char *name;        /* relative to dir */
	const char *state; /* "present", "fetched", "failed", "would fetch",
			      "pruned", "would prune", "written" (a manifest),
			      "kept" (the mirror's own copy of a manifest
			      the source failed to give, "failed" as well, or
			      gave other bytes of) */
	uint64_t size;
	int code;          /* of a failure */
	char *msg;         /* its message, or NULL */
};
struct cctl_sync_result {
	struct cctl_sync_item *v;
	size_t n;
	size_t failed;
	uint64_t fetched_bytes;
};
/* Returns the first failure's code after doing all the rest (a cron job
 * gets every archive that could be had), 0 when everything is there. */
int cctl_mirror_sync(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		     const struct cctl_sync_opts *so, struct cctl_sync_result *res);
void cctl_sync_result_release(struct cctl_sync_result *res);

/* What this machine's CUDA can take: the CUDA major of an installed
 * toolkit (CUDA_PATH, the platform's default folder, a CUDA runtime
 * library on the search path) and the CUDA version the driver supports
 * (cuDriverGetVersion, e.g. 12040), 0 when none. */
struct cctl_cuda_env {
	int toolkit;        /* CUDA major, 0 when none */
	char toolkit_from[512];
	int driver;         /* cuDriverGetVersion(), 0 when no driver */
};
void cctl_cuda_env_probe(struct cctl_cuda_env *e);

/* The release to install for VERSION (a prefix: 9, 9.1, 9.1.0.70) on
 * `platform`: the newest that matches, with the CUDA major chosen as
 * cudnnctl documents (--cuda, else the toolkit the driver can run, else
 * the newest the driver supports, else the only one there is); *why says
 * which and why.  CCTL_ENORELEASE when none matches, CCTL_EUSAGE when
 * the CUDA major cannot be told, CCTL_EDRIVER when the driver is too old
 * for the build. */
int cctl_release_choose(struct cctl_ctx *ctx, const struct cctl_manifest *m,
			const char *version, const char *platform, int cuda,
			const struct cctl_cuda_env *env,
			const struct cctl_release **out, char *why, size_t nwhy);
/* True when arg names an archive rather than a version: an existing
 * file, or a name ending in .zip, .tar.xz, .tar.gz, .tar.bz2, .tgz. */
/* Whether arg names an existing folder (not an archive, nor a version). */
int cctl_is_folder(const char *arg);
int cctl_is_archive_arg(const char *arg);

/* ------------------------------------------------------------- operations */

struct cctl_install_opts {
	const char *archive;
	int allow_unknown;
	int cuda;        /* --cuda N, 0 when not given */
	int no_activate;
	unsigned act_flags;
	unsigned jobs;   /* extraction workers; 0: cctl_archive_default_jobs() */
};

struct cctl_install_result {
	struct cctl_install rec;
	int already;   /* the same build was installed; nothing changed */
	int activated;
	char *previous; /* id active before, or NULL */
	char *strip_prefix;
};

/* Installs an archive: the steps below, in order.  On failure the root is
 * as it was. */
int cctl_install_archive(struct cctl_ctx *ctx, struct cctl_root *r,
			 const struct cctl_manifest *m,
			 const struct cctl_install_opts *o,
			 struct cctl_install_result *res);
void cctl_install_result_release(struct cctl_install_result *res);

/* The release for VERSION (a prefix) on platform, CUDA major cuda (0:
 * chosen, see cctl_release_choose): when nothing in m matches, m is
 * updated once from the mirror (unless o->offline) and the choice made
 * again; a mirror whose manifests could not be read is then the cause
 * named.  The choice and its reason go to on_notice. */
int cctl_release_find(struct cctl_ctx *ctx, const struct cctl_fetch_opts *o,
		      struct cctl_manifest *m, const char *version,
		      const char *platform, int cuda,
		      const struct cctl_release **r);

/* install VERSION: cctl_release_find for this machine, the archive into
 * the cache (cctl_fetch_archive, a cached copy checked by size), then
 * cctl_install_archive of it with io (io->archive and io->cuda are set
 * here); a cached copy the install finds wrong is fetched again, once.
 * *r and *f say which release and where it came from (f released by the
 * caller, also after a failure). */
int cctl_install_version(struct cctl_ctx *ctx, struct cctl_root *root,
			 struct cctl_manifest *m,
			 const struct cctl_fetch_opts *o, const char *version,
			 struct cctl_install_opts *io,
			 const struct cctl_release **r,
			 struct cctl_fetch_result *f,
			 struct cctl_install_result *res);

/* The install pipeline in named steps, for commands that enter it with an
 * archive of their own (a download, a repair).  One job carries what each
 * step found to the next; release it whatever happened, with `failed` set
 * when a step failed, and the staging folder or the half-placed version
 * is removed. */
struct cctl_install_job {
	const struct cctl_install_opts *o;
	const char *name;             /* the archive's file name */
	int fd;                       /* the archive, open */
	struct cctl_archive a;        /* what the scan saw */
	const struct cctl_release *claimed; /* the release it is named as */
	const struct cctl_release *match;   /* the release it hashes as */
	char sha256[65];
	uint64_t size;
	char *staging;                /* <root>/versions/.staging-<pid> */
	char *final;                  /* <root>/versions/<id> */
	int staged, placed;           /* what release must take back */
};

/* identify: opens the archive, checks a release-named file's size, scans
 * and hashes it, finds its release in m (or, with allow_unknown, reads
 * the version from its header) and fills res->rec's id, version, CUDA
 * major, platform and archive fields. */
int cctl_install_identify(struct cctl_ctx *ctx, const struct cctl_root *r,
			  const struct cctl_manifest *m,
			  const struct cctl_install_opts *o,
			  struct cctl_install_job *job,
			  struct cctl_install_result *res);
/* check: the build is for this machine; the target folder is free (or
 * holds this very build: res->already, and the pipeline ends); the
 * archive has the libraries the loader needs; the root's length and free
 * space allow it.  Nothing is written. */
int cctl_install_check(struct cctl_ctx *ctx, const struct cctl_root *r,
		       struct cctl_install_job *job,
		       struct cctl_install_result *res);
/* place: extracts into a staging folder inside the root, checks the
 * archive hashed the same while extracted, records every file, renames
 * the folder to versions/<id>. */
int cctl_install_place(struct cctl_ctx *ctx, struct cctl_install_job *job,
		       struct cctl_install_result *res);
/* activate: makes the version active unless o->no_activate and another
 * one is active already. */
int cctl_install_activate(struct cctl_ctx *ctx, const struct cctl_root *r,
			  struct cctl_install_job *job,
			  struct cctl_install_result *res);
void cctl_install_job_release(struct cctl_install_job *job, int failed);

/* Makes the install matching prefix (and cuda) active; *from and *to get
 * the ids (from may be NULL when nothing was active). */
int cctl_switch(struct cctl_ctx *ctx, struct cctl_root *r, const char *prefix,
		int cuda, unsigned act_flags, char **from, char **to);
int cctl_uninstall(struct cctl_ctx *ctx, struct cctl_root *r,
		   const char *prefix, int cuda, int force, char **id);

#endif
