/*
 * The OS layer, declared once.  src/platform/posix/ implements it for
 * Linux; src/platform/win/ for Windows.  Paths are UTF-8 with '/' (both
 * separators are accepted on Windows).  Fallible calls set the context's
 * message, naming the path and the OS error, and return a CCTL_E* code.
 */
#ifndef CUDNNCTL_OS_H
#define CUDNNCTL_OS_H

#include <stddef.h>
#include <stdint.h>

#include "cudnnctl/cudnnctl.h"

enum cctl_os_type {
	CCTL_OS_NONE, /* does not exist */
	CCTL_OS_FILE,
	CCTL_OS_DIR,
	CCTL_OS_LINK, /* symlink or junction (not followed) */
	CCTL_OS_OTHER
};

struct cctl_os_stat {
	enum cctl_os_type type;
	uint64_t size;
	int64_t mtime_ns;
	int64_t ctime_ns;
};

/* lstat semantics: links are reported, not followed.  Returns 0 and type
 * NONE for a missing path; an error only for other failures. */
int cctl_os_stat(struct cctl_ctx *ctx, const char *path,
		 struct cctl_os_stat *st);
/* Whether someone other than this user and the administrator can change
 * what is at path (lstat: a link is judged by its owner alone): 1 with
 * why filled ("is owned by 'bob' (uid 1001)", "can be written by every
 * user (mode 777)"), else 0 (also for a missing path).  admin_only: the
 * owner must be the administrator itself.  A folder every user can write
 * but with the sticky bit (/tmp) sets *sticky and counts as safe: others
 * cannot rename or remove what they do not own in it.  A folder writable
 * by the user's own private group (its only member) is fine.  Windows:
 * with admin_only, the owner and the DACL are read (an account other than
 * SYSTEM, Administrators, TrustedInstaller allowed to write or delete);
 * without, 0. */
int cctl_os_foreign_writable(const char *path, int admin_only, int *sticky,
			     struct cctl_buf *why);
/* A root made for the machine: Windows gives it a protected DACL
 * (Administrators and SYSTEM full control, Users read and execute,
 * inherited below); POSIX: mode 0755. */
int cctl_os_protect_machine_root(struct cctl_ctx *ctx, const char *path);
/* Creates one directory; an existing directory is fine. */
int cctl_os_mkdir(struct cctl_ctx *ctx, const char *path);
/* Creates a directory and its missing parents. */
int cctl_os_mkdirs(struct cctl_ctx *ctx, const char *path);
/* Removes a tree without following links; a missing path is fine. */
int cctl_os_rmtree(struct cctl_ctx *ctx, const char *path);
int cctl_os_unlink(struct cctl_ctx *ctx, const char *path);
/* Renames, replacing a file (not a directory) at `to`. */
int cctl_os_rename(struct cctl_ctx *ctx, const char *from, const char *to);
/* Names in a directory, without "." and "..", sorted; free each and the
 * array. */
int cctl_os_listdir(struct cctl_ctx *ctx, const char *path, char ***names,
		    size_t *n);
int cctl_os_read_file(struct cctl_ctx *ctx, const char *path,
		      struct cctl_buf *out);
/* Writes <path>.lock, then renames it over path. */
int cctl_os_write_file_atomic(struct cctl_ctx *ctx, const char *path,
			      const void *data, size_t len);
/* Appends data to path (created if missing) in one write where the OS
 * allows, flushed to the disk: the files a CI runner hands over
 * (GITHUB_ENV, ...), which other steps append to as well; history.jsonl. */
int cctl_os_append_file(struct cctl_ctx *ctx, const char *path,
			const void *data, size_t len);
int cctl_os_free_space(struct cctl_ctx *ctx, const char *path,
		       uint64_t *bytes);
/* Takes an exclusive lock on `path` (created if missing; a link or
 * anything but a regular file there is refused, never followed) without waiting
 * and writes this process's id and `doing` (what it does: "install 9.19";
 * may be NULL) into it; CCTL_ELOCKED when another process holds it, with
 * the holder's ("process 4242 (install 9.19)") in *holder when holder is
 * not NULL.  Released by unlock or when the process ends, however it
 * ends. */
int cctl_os_lock(struct cctl_ctx *ctx, const char *path, const char *doing,
		 struct cctl_buf *holder, void **handle);
void cctl_os_unlock(void *handle);
/* Points `link` at the directory `target` (relative to link's folder),
 * replacing an existing link: a symlink swapped atomically on POSIX, a
 * directory junction on Windows.  Where the file system cannot hold such
 * a link (Windows: FAT, network drives, Wine), `link` becomes a small
 * pointer file naming the target instead and *emulated is set to 1. */
int cctl_os_link_dir(struct cctl_ctx *ctx, const char *link,
		     const char *target, int *emulated);
/* A symbolic link at `link` to the file `target` (POSIX; Windows:
 * CCTL_EFAIL, cudnnctl copies there); an existing `link` is an error. */
int cctl_os_symlink(struct cctl_ctx *ctx, const char *target, const char *link);
/* The target of a link (or of a pointer file that emulates one), or
 * CCTL_ENOTFOUND when link is neither. */
int cctl_os_readlink(struct cctl_ctx *ctx, const char *link,
		     struct cctl_buf *out);
/* cudnnctl exec: runs argv (argv[0] searched on PATH) with the n variables
 * set in its environment, and nothing else of cudnnctl's: POSIX replaces
 * this process (execvp: stdin, signals and the exit status are the
 * command's), so it returns only on failure; Windows starts it in this
 * console (Ctrl+C reaches it; cudnnctl ignores it meanwhile) and in a job
 * object that ends it with cudnnctl, waits, and returns 0 with its exit
 * code in *status.  CCTL_ENOCOMMAND when argv[0] is not found (the message
 * names PATH), CCTL_ECANNOTRUN when it cannot be started. */
int cctl_os_exec(struct cctl_ctx *ctx, const char *const *argv,
		 const struct cctl_env_var *vars, size_t n, int *status);
/* Runs argv[0] (searched in PATH) and waits; nonzero exit is CCTL_EFAIL. */
int cctl_os_run(struct cctl_ctx *ctx, const char *const *argv);
/* Runs argv (argv[0] searched on PATH) with no input, collecting what it
 * writes to stdout into out and to stderr into err (each at most 1 MiB;
 * the rest is read and dropped), and ends it (and, on POSIX, its process
 * group) once timeout_ms have passed.  *status: its exit status; 128 +
 * the signal when one ended it (POSIX) or the exception code's low byte
 * ORed with 0x100 (Windows: 0xC0000005 gives 0x105); -1 when it was ended
 * for the timeout; 127 when it could not be started (on Windows with
 * GetLastError() in ctx->oserr, ctx given).  Returns 0 or an
 * error (pipes or processes could not be made). */
int cctl_os_run_capture(struct cctl_ctx *ctx, const char *const *argv,
			unsigned timeout_ms, struct cctl_buf *out,
			struct cctl_buf *err, int *status);
/* Sets (value NULL: removes) a variable of this process's environment,
 * which the processes it starts inherit (verify --build). */
void cctl_os_setenv(const char *name, const char *value);
/* The folder for temporary files: TMPDIR or /tmp; Windows GetTempPath
 * (TMP, TEMP, ...), without the final separator.  free() it. */
char *cctl_os_temp_dir(void);
/* verify --app --run: runs argv (argv[0] searched on PATH) for at most
 * timeout_ms with stdin from the null device and stdout and stderr into
 * the file out_path, and lists in *loaded (free each and the array) every
 * shared library it loaded, in order, each once: Linux, from the dynamic
 * loader's own report (LD_DEBUG=files, a file per process beside
 * out_path, children's too); Windows, one LOAD_DLL_DEBUG_EVENT per DLL,
 * the program run under the debugging API.  *status as
 * cctl_os_run_capture gives it. */
int cctl_os_run_traced(struct cctl_ctx *ctx, const char *const *argv,
		       unsigned timeout_ms, const char *out_path, char ***loaded,
		       size_t *n, int *status);
/* This process's user name and the machine's name (each empty when the
 * system will not say), for history.jsonl. */
void cctl_os_identity(struct cctl_buf *user, struct cctl_buf *host);
/* Environment variable or NULL (the returned string is the process's). */
const char *cctl_os_getenv(const char *name);
/* The user's home folder into out. */
int cctl_os_home(struct cctl_ctx *ctx, struct cctl_buf *out);
int cctl_os_is_admin(void);
/* The default install root when CUDNNCTL_ROOT is not set: as root
 * /opt/cudnn, else $XDG_DATA_HOME/cudnn or ~/.local/share/cudnn (POSIX);
 * %SystemDrive%\cudnn (Windows). */
int cctl_os_default_root(struct cctl_ctx *ctx, struct cctl_buf *out);
/* Current folder made absolute; path kept when already absolute. */
int cctl_os_absolute(struct cctl_ctx *ctx, const char *path,
		     struct cctl_buf *out);
int cctl_os_is_absolute(const char *path);
/* abs (absolute, normalised) with every link on its way resolved, as far
 * as it exists (the rest appended as it is); abs itself when that cannot
 * be read.  Windows: abs. */
int cctl_os_resolve(const char *abs, struct cctl_buf *out);
/* Makes the active install reach new shells: active_dir is the folder
 * they must use (<root>/current, or the version's own folder where
 * `current` is emulated).  POSIX: <root>/env.sh and one guarded line
 * sourcing it in ~/.profile and ~/.bashrc, or with CCTL_ACT_SYSTEM an
 * ld.so.conf.d file and ldconfig.  Windows: the user PATH (machine PATH
 * with CCTL_ACT_SYSTEM) and CUDNN_PATH in the registry.  Idempotent; on
 * failure everything it changed is put back. */
int cctl_os_env_persist(struct cctl_ctx *ctx, const char *root,
			const char *active_dir, unsigned flags);
/* Undoes cctl_os_env_persist for this root, touching nothing else. */
int cctl_os_env_unpersist(struct cctl_ctx *ctx, const char *root);
/* Puts back the PATH value (scope: CCTL_ACT_SYSTEM for the machine's)
 * saved before cudnnctl first changed it.  Windows only; CCTL_EFAIL
 * elsewhere. */
int cctl_os_path_restore(struct cctl_ctx *ctx, const char *root,
			 unsigned flags);
/* Once at start: DLL search locked down, error pop-ups off (Windows); an
 * interrupt (SIGINT, SIGTERM, SIGHUP; Windows: Ctrl+C, Ctrl+Break,
 * closing the console) from then on only sets a flag that the work checks
 * (cctl_os_interrupted), so that it stops and cleans up; a second one ends
 * the process at once (exit status 130). */
void cctl_os_process_init(void);
void cctl_os_process_done(void);
/* Ends the process with STATUS, no exit handlers run (POSIX: _Exit;
 * Windows: TerminateProcess of itself, which also skips the DLLs' detach
 * and, under Wine, the Unix side's exit handlers: Wine closes its server
 * socket before those, and the wineserver kills a process still running
 * shortly after that with SIGKILL, its status lost). */
_Noreturn void cctl_os_exit(int status);
/* Test hook: with CUDNNCTL_TEST_KILL_AT=N the process kills itself
 * (SIGKILL; Windows: TerminateProcess) at the Nth call, as a power cut
 * there would.  Every call that changes the disk or the registry makes
 * one: mkdir, each entry removed, unlink, rename, each file written, each
 * link or registry value set, each entry extracted. */
void cctl_os_kill_point(void);
/* True once an interrupt came. */
int cctl_os_interrupted(void);
/* Sends this process the interrupt a user's Ctrl+C would (tests). */
void cctl_os_raise_interrupt(void);

/* After a path restore and the deactivation that follows it: the saved
 * PATH is retired, so that the next change saves the value of that day
 * (last, so that a restore cut short by a crash can be run again).
 * POSIX: nothing. */
int cctl_os_path_retire(struct cctl_ctx *ctx, const char *root,
			unsigned flags);
/* The library search list a new process gets, as stored for new
 * sessions (Windows: machine PATH then user PATH from the registry,
 * expanded); CCTL_ENOTFOUND where the environment itself is the only
 * source (POSIX). */
int cctl_os_session_path(struct cctl_ctx *ctx, struct cctl_buf *out);

/* Separator of folders in a path, of PATH-like variables, the variable the loader searches and
 * the folder of the install it must name. */
#ifdef _WIN32
#define CCTL_OS_DIR_SEP '\\'
#define CCTL_OS_PATH_SEP ';'
#define CCTL_OS_LIB_VAR "PATH"
#define CCTL_OS_LIB_DIR "bin"
#define CCTL_GPU_CALL __stdcall /* how the CUDA and cuDNN DLLs are called */
#else
#define CCTL_OS_DIR_SEP '/'
#define CCTL_OS_PATH_SEP ':'
#define CCTL_OS_LIB_VAR "LD_LIBRARY_PATH"
#define CCTL_OS_LIB_DIR "lib"
#define CCTL_GPU_CALL
#endif
/* This machine in the manifests' spelling (the platform table's key):
 * CCTL_OS_PLATFORM is the build's, what this process can load;
 * cctl_os_native_platform() the machine's own (Windows: IsWow64Process2
 * sees through emulation; the build's where it cannot tell). */
const char *cctl_os_native_platform(void);
#if defined(_WIN32) && (defined(_M_ARM64) || defined(__aarch64__))
#define CCTL_OS_PLATFORM "windows-arm64"
#elif defined(_WIN32)
#define CCTL_OS_PLATFORM "windows-x86_64"
#elif defined(__aarch64__)
#define CCTL_OS_PLATFORM "linux-sbsa"
#elif defined(__powerpc64__)
#define CCTL_OS_PLATFORM "linux-ppc64le"
#else
#define CCTL_OS_PLATFORM "linux-x86_64"
#endif

/* ------------------------------------------------------------ HTTP */

/* Where the body of a response goes, block by block. */
struct cctl_os_http_sink {
	/* Once the response's headers are in, before any byte of the body:
	 * status is the HTTP status (200, 206, ...), length the bytes of
	 * this body (Content-Length; -1 when not given), start the offset of
	 * its first byte in the file (the start of Content-Range for a 206,
	 * else 0).  Returns nonzero to stop (then cctl_os_http_get returns
	 * that value). */
	int (*on_start)(void *ud, int status, int64_t length, uint64_t start);
	/* Each block of the body, in order; nonzero stops as above. */
	int (*on_data)(void *ud, const void *data, size_t len);
	void *ud;
};

/*
 * One HTTP or HTTPS GET of url.  With offset > 0 it asks for the bytes
 * from there on (Range: bytes=OFFSET-), and with end > offset for those
 * up to end only (Range: bytes=OFFSET-END-1; end 0: to the end of the
 * file); the server may still answer 200 with the whole file, which
 * on_start sees.  Several threads may each run one at once.  Redirects are followed;
 * proxies are those of the system (HTTPS_PROXY/NO_PROXY on Linux, the
 * system's settings on Windows); certificates are checked against the
 * system's store.  No byte for stall_s seconds, or no connection within
 * connect_s seconds, ends the transfer.
 *
 * Returns 0 when the whole body arrived: as many bytes as the response
 * said it has (a connection cut early is not a success, even where the
 * API reports no error); CCTL_ENETWORK when the host cannot be reached,
 * the connection broke, stalled or was cut (worth a retry); CCTL_ENOTFOUND
 * for a 404 or 410 and CCTL_ENETWORK for any other status of 400 or above
 * (on_start has seen it; no body is passed on); the sink's own nonzero
 * value when it stopped the transfer.  The message names the URL.
 * Linux: libcurl (http-posix.c); Windows: WinHTTP (http-win.c).
 */
int cctl_os_http_get(struct cctl_ctx *ctx, const char *url, uint64_t offset,
		     uint64_t end, int connect_s, int stall_s,
		     const struct cctl_os_http_sink *sink);

/* ------------------------------------------------ the machine (scan) */

/* The names of the environment variables that start with prefix
 * (Windows: in any case); free each and the array. */
int cctl_os_env_names(const char *prefix, char ***names, size_t *n);
/* 1 when the existing paths a and b are on one file system (volume), 0
 * when not, -1 when it cannot be told. */
int cctl_os_same_volume(const char *a, const char *b);
/* Windows: the first entry of Settings > Apps (the registry's Uninstall
 * keys, the machine's then the user's) whose DisplayName holds words, in
 * any case: its name and UninstallString (free() both).  CCTL_ENOTFOUND
 * when none (always on POSIX). */
int cctl_os_uninstall_entry(const char *words, char **name, char **command);
/* The running processes (other than this one) that have one of files
 * loaded, each process once: Linux from /proc/PID/maps; Windows from the
 * Restart Manager and each process's module list.  Processes this user
 * may not look into are not seen. */
int cctl_os_lib_users(struct cctl_ctx *ctx, const char *const *files, size_t n,
		      struct cctl_lib_user **v, size_t *nv);

/* ------------------------------------------------ shared libraries */

/* One copy of a library the loader can reach, and why it is reached
 * ("LD_LIBRARY_PATH", "RUNPATH", "ld.so.cache", "default folder"; on
 * Windows "application folder", "System32", "machine PATH", ...). */
struct cctl_lib_hit {
	char *path;
	char *origin;
};

struct cctl_lib_hits {
	struct cctl_lib_hit *v;
	size_t n;
};

/* Every file named `name` the dynamic loader could load, in the order it
 * tries them: the folders of lib_path (a PATH-style list as the new
 * process will see it; NULL for none), then runpath (folders, $ORIGIN
 * already expanded; NULL for none), then the loader's cache and its
 * default folders.  Only files this process could load (same ELF class
 * and machine) count; the same file reached twice is listed once. */
int cctl_os_lib_search(struct cctl_ctx *ctx, const char *name,
		       const char *lib_path, const char *const *runpath,
		       struct cctl_lib_hits *out);
void cctl_lib_hits_release(struct cctl_lib_hits *h);

/* What a shared library file says about itself. */
struct cctl_lib_info {
	char *soname;        /* DT_SONAME, or NULL */
	char **needed;       /* DT_NEEDED names, in order */
	size_t nneeded;
	char **runpath;      /* DT_RUNPATH (or DT_RPATH) folders, $ORIGIN expanded */
	size_t nrunpath;
	int loadable;        /* same class and machine as this process */
	unsigned machine;    /* PE machine (0x8664, 0xAA64) or ELF e_machine */
	char *file_version;  /* Windows VERSIONINFO FileVersion; NULL on POSIX */
};

/* Reads the dynamic section of an ELF file (PE imports on Windows).
 * CCTL_EBADARCHIVE-free: a file that is not a shared library is CCTL_EFAIL
 * with the reason. */
int cctl_os_lib_info(struct cctl_ctx *ctx, const char *path,
		     struct cctl_lib_info *out);
void cctl_lib_info_release(struct cctl_lib_info *info);

/* The files of the shared libraries mapped into this process, in the
 * order the loader keeps them (Linux: dl_iterate_phdr; Windows: the
 * module list); free each and the array. */
int cctl_os_loaded_libraries(struct cctl_ctx *ctx, char ***paths, size_t *n);

/* dlopen(path, RTLD_NOW | RTLD_LOCAL) / LoadLibraryExW with safe flags;
 * the message names the path and the loader's reason. */
int cctl_os_dl_open(struct cctl_ctx *ctx, const char *path, void **handle);
void *cctl_os_dl_sym(void *handle, const char *name);
/* The file the loader really mapped for handle. */
int cctl_os_dl_path(struct cctl_ctx *ctx, void *handle, struct cctl_buf *out);
/* realpath(3): the canonical path, links resolved. */
int cctl_os_realpath(struct cctl_ctx *ctx, const char *path,
		     struct cctl_buf *out);

/* Opens a file for reading in binary mode; *fd is a C runtime descriptor
 * (what libarchive's archive_read_open_fd takes). */
int cctl_os_open_read(struct cctl_ctx *ctx, const char *path, int *fd);
/* read(2) on such a descriptor, retrying on EINTR: *got bytes, 0 at the
 * end.  `name` is the file, for the message. */
int cctl_os_read(struct cctl_ctx *ctx, int fd, const char *name, void *buf,
		 size_t len, size_t *got);
/* Appends up to len bytes from in's position on to the end of out (in
 * moved on), within the kernel where the OS can (Linux:
 * copy_file_range(2)), without the bytes passing through the process;
 * *done the bytes copied: fewer (0 on Windows) where it cannot, and the
 * caller copies the rest itself.  `in_name` and `out_name` are for the
 * message. */
int cctl_os_copy_fast(struct cctl_ctx *ctx, int in, const char *in_name, int out,
		      const char *out_name, uint64_t len, uint64_t *done);
/* ftruncate(2): the file open for writing at fd cut to size bytes. */
int cctl_os_truncate(struct cctl_ctx *ctx, int fd, const char *name,
		     uint64_t size);
/* pread(2): reads up to len bytes at off without moving the descriptor's
 * position, so that several threads can read one file at once; *got is 0
 * at the end of the file. */
int cctl_os_pread(struct cctl_ctx *ctx, int fd, const char *name, void *buf,
		  size_t len, uint64_t off, size_t *got);
/* Keeps writers off the open file `fd` (`path` names it) until
 * cctl_os_guard_end, so that a file hashed once need not be read again to
 * know it did not change: on Linux a read lease (a process that opens the
 * file for writing breaks it, and cctl_os_guard_held then says so), on
 * Windows a second handle that shares no write access (writers are
 * refused).  NULL where the file cannot be guarded (someone has it open
 * for writing, not the file's owner, a file system without leases, one
 * guard already held): then the caller reads the file again.  */
void *cctl_os_guard_begin(int fd, const char *path);
/* 1 when no one can have written the file since cctl_os_guard_begin. */
int cctl_os_guard_held(void *guard);
/* Lets writers in again; NULL is a no-op. */
void cctl_os_guard_end(void *guard);
/* One line naming the operating system and machine, for a bug report:
 * "Debian GNU/Linux 12 (bookworm); Linux 6.1.0-18-amd64 x86_64",
 * "Windows 10 Pro 22H2 (build 19045); x64". */
void cctl_os_describe(struct cctl_buf *out);
/* The number of processors this process may run on (its affinity mask
 * where the system has one), at least 1. */
unsigned cctl_os_ncpu(void);
/* lseek(2) on such a descriptor (whence: SEEK_SET, SEEK_CUR, SEEK_END);
 * *pos (may be NULL) gets the new offset. */
int cctl_os_seek(struct cctl_ctx *ctx, int fd, const char *name,
		 int64_t offset, int whence, int64_t *pos);
void cctl_os_close(int fd);
/* Opens a file for writing in binary mode, never through a link: with
 * append, one that is there and a regular file of one link (anything
 * else is refused); without, a new file made in its place (whatever was
 * at path, a planted link or FIFO too, is removed, not followed). */
int cctl_os_open_write(struct cctl_ctx *ctx, const char *path, int append,
		       int *fd);
/* Where regular files of an extraction are written by cudnnctl itself
 * rather than by libarchive's writer: 1 where the file system takes a size
 * hint that has a documented benefit (Windows: NTFS allocation, which
 * Microsoft's file system team says decreases fragmentation), else 0. */
int cctl_os_prealloc(void);
/* A new file for writing, failing if the name exists; room for `size`
 * bytes reserved up front where the file system takes a hint (a failed
 * hint is not an error).  *fd is a C runtime descriptor. */
int cctl_os_create_sized(struct cctl_ctx *ctx, const char *path,
			 uint64_t size, int *fd);
/* Sets the file's access and modification times (seconds and nanoseconds
 * since 1970) and closes it; the descriptor is closed also on failure. */
int cctl_os_close_timed(struct cctl_ctx *ctx, int fd, const char *path,
			int64_t sec, long nsec);
/* Waits ms milliseconds. */
void cctl_os_sleep_ms(unsigned ms);
/* The per-user cache folder: $XDG_CACHE_HOME/cudnnctl or
 * ~/.cache/cudnnctl (POSIX), %LOCALAPPDATA%\cudnnctl\cache (Windows). */
int cctl_os_cache_dir(struct cctl_ctx *ctx, struct cctl_buf *out);
/* A new file in dir, open for reading and writing, that is gone once it is
 * closed or the process ends (POSIX: unlinked at once; Windows: opened
 * delete-on-close); no other process can open it by name meanwhile. */
int cctl_os_open_temp(struct cctl_ctx *ctx, const char *dir, int *fd);
/* Writes all len bytes; a full disk is CCTL_ENOSPACE. */
int cctl_os_write_all(struct cctl_ctx *ctx, int fd, const char *name,
		      const void *buf, size_t len);

/* A second thread, for hashing while the first one extracts: a mutex with
 * one condition variable (wait: unlock, sleep until a broadcast, lock),
 * and a thread to start and join.  NULL when the system refuses. */
struct cctl_os_sync;
struct cctl_os_sync *cctl_os_sync_new(void);
void cctl_os_sync_free(struct cctl_os_sync *s);
void cctl_os_sync_lock(struct cctl_os_sync *s);
void cctl_os_sync_unlock(struct cctl_os_sync *s);
void cctl_os_sync_wait(struct cctl_os_sync *s);
void cctl_os_sync_broadcast(struct cctl_os_sync *s);
struct cctl_os_thread;
struct cctl_os_thread *cctl_os_thread_start(void (*fn)(void *), void *arg);
void cctl_os_thread_join(struct cctl_os_thread *t);
/* Switches the calling thread to a UTF-8 locale (POSIX uselocale), so
 * that libarchive decodes any entry name whatever the process locale;
 * leave restores the previous one.  No-ops on Windows. */
void *cctl_os_utf8_locale_enter(void);
void cctl_os_utf8_locale_leave(void *state);
/* Turns '/' into the platform's separator, in place (Windows: '\'). */
void cctl_os_native_path(char *path);
/* Removes the mark of the web (the Zone.Identifier stream) from an
 * extracted file, as Unblock-File does; a no-op on POSIX. */
void cctl_os_unblock(const char *path);
/* True when fd (0, 1, 2) is a terminal (Windows: a console; not NUL, a
 * pipe or a file). */
int cctl_os_isatty(int fd);
/* What fd is: 0 not a terminal; 1 a terminal that takes no escape
 * sequences (POSIX: TERM=dumb; Windows: a console where virtual-terminal
 * processing cannot be turned on); 2 one that takes them (Windows: turned
 * on here, and put back as it was by cctl_os_process_done). */
int cctl_os_terminal(int fd);
/* Process id, for temporary names. */
long cctl_os_pid(void);
/* UTC wall clock as "2026-11-29T19:12:58Z". */
void cctl_os_utc_now(char out[32]);
/* Monotonic milliseconds. */
double cctl_os_now_ms(void);

#endif
