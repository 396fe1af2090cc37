/*
 * The machine as it is: every cuDNN copy on it (scan.c), stray copies
 * moved out of the loader's way with an undo (quarantine.c), and the
 * running programs that hold a library (inuse.c).  Included by
 * cudnnctl.h.
 */
#ifndef CUDNNCTL_MACHINE_H
#define CUDNNCTL_MACHINE_H

#include <stddef.h>
#include <stdint.h>

struct cctl_ctx;
struct cctl_root;

/* Who put a copy where it is, and so who may take it away. */
#define CCTL_OWNER_MAP(X)                                                      \
	X(CUDNNCTL, "cudnnctl")                                                \
	X(WHEEL, "wheel")          /* nvidia-cudnn-cuNN in a site-packages */ \
	X(FRAMEWORK, "framework")  /* bundled by torch, tensorflow, ... */     \
	X(CONDA, "conda")                                                      \
	X(PACKAGE, "package")      /* dpkg or rpm */                           \
	X(INSTALLER, "installer")  /* NVIDIA's cuDNN installer */              \
	X(UNKNOWN, "unknown")      /* copied by hand */

enum cctl_owner {
#define X(name, word) CCTL_OWNER_##name,
	CCTL_OWNER_MAP(X)
#undef X
};
const char *cctl_owner_name(enum cctl_owner o);

/* One cuDNN copy: the libraries of one major in one folder. */
struct cctl_copy {
	char *dir;          /* the folder, as found */
	char *place;        /* why it was looked at: "LD_LIBRARY_PATH entry 2",
			       "CUDA toolkit (CUDA_PATH)", "System32", ... */
	int major;          /* 8, 9 */
	char *version;      /* "9.19.0", or NULL when nothing says */
	char *version_from; /* "file name", "FileVersion", "library",
			       "cudnn_version.h", "wheel metadata" */
	int cuda;           /* CUDA major of the build; 0: not known */
	char **files;       /* the cuDNN library files (names), sorted */
	size_t nfiles;
	char *missing;      /* the libraries a complete set has and this
			       lacks, ", "-separated; NULL: complete */
	char *mixed;        /* "8.x and 9.x", "9.1.0 and 9.6.0": the folder
			       mixes releases; NULL: one */
	enum cctl_owner owner;
	char *owner_name;   /* the package, wheel, framework or conda
			       environment; NULL for cudnnctl and unknown */
	char *remove_with;  /* the owner's own way to remove it, or NULL */
	int search_rank;    /* 1: the copy a new process loads for this
			       major; 2, 3, ...: found later; 0: not on
			       its search path */
	int before_active;  /* found before cudnnctl's active version */
	int active;         /* it is cudnnctl's active version */
};

struct cctl_scan_opts {
	const char *const *deep; /* folders to walk too, NULL-terminated */
	size_t ndeep;
	int deep_seconds;        /* the walk's time limit (0: 60) */
};

struct cctl_scan {
	struct cctl_copy *v;
	size_t n;
	size_t places;    /* folders looked at */
	int deep_cut;     /* the walk stopped at its time limit */
	char *active_dir; /* the active version's library folder, or NULL */
};

/* Every cuDNN copy in the places a copy is usually found, and with
 * o->deep in those folders' trees.  The root may be NULL. */
int cctl_scan(struct cctl_ctx *ctx, const struct cctl_root *root,
	      const struct cctl_scan_opts *o, struct cctl_scan *out);
void cctl_scan_release(struct cctl_scan *s);

/* One program holding a library. */
struct cctl_lib_user {
	long pid;
	char *program; /* its executable, or its name */
	char *service; /* Windows: the service's short name, or NULL */
	char *file;    /* which of the files it holds, or NULL (not said) */
};
/* The running processes that have one of files loaded (Linux:
 * /proc/PID/maps; Windows: the Restart Manager, then each process's module
 * list).  Processes this user cannot look into are not seen. */
int cctl_lib_users(struct cctl_ctx *ctx, const char *const *files, size_t n,
		   struct cctl_lib_user **v, size_t *nv);
void cctl_lib_users_release(struct cctl_lib_user *v, size_t n);
/* The library folder of an install's folder (lib, bin, bin/x64). */
char *cctl_install_lib_dir(const char *version_dir);
/* The cuDNN libraries of a folder (full paths; free each and the
 * array). */
int cctl_lib_files_in(struct cctl_ctx *ctx, const char *dir, char ***v,
		      size_t *n);
/* CCTL_EINUSE naming the first programs (pid, program, service) and the
 * fix, when one of files is loaded by a running process; 0 when none
 * is.  what: "uninstall 9.19.0.56" for the message. */
int cctl_check_not_in_use(struct cctl_ctx *ctx, const char *const *files,
			  size_t n, const char *what);

/* quarantine: hand-copied cuDNN files moved out of the loader's way into
 * <root>/quarantine/<id>/, or renamed in place (<name>.cudnnctl-
 * quarantined) where the root is on another volume. */
struct cctl_quarantined {
	char *path;   /* where it was */
	char *stored; /* where it is now */
	uint64_t size;
	char sha256[65];
	char *owner;
};
struct cctl_quarantine {
	char *id;   /* "20261202T011500Z-1", the folder's name */
	char *time; /* ISO 8601 UTC */
	struct cctl_quarantined *v;
	size_t n;
};
/* Moves the files given (and, for a folder, its cuDNN libraries); each
 * refused (a package's, a framework's, cudnnctl's own, in use without
 * force) ends it with nothing moved.  The caller holds the root lock. */
int cctl_quarantine_move(struct cctl_ctx *ctx, const struct cctl_root *r,
			 const char *const *paths, size_t n, int force,
			 struct cctl_quarantine *out);
int cctl_quarantine_list(struct cctl_ctx *ctx, const struct cctl_root *r,
			 struct cctl_quarantine **v, size_t *n);
/* Puts every file of quarantine id ("all": of every one) back where it
 * was, byte for byte; *out gets what was restored. */
int cctl_quarantine_restore(struct cctl_ctx *ctx, const struct cctl_root *r,
			    const char *id, struct cctl_quarantine **v,
			    size_t *n);
void cctl_quarantine_release(struct cctl_quarantine *q);
void cctl_quarantine_list_release(struct cctl_quarantine *v, size_t n);

#endif
