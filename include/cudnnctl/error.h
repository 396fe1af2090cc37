/*
 * cudnnctl error codes.
 *
 * Every fallible core function returns 0 or a negative CCTL_E* code.  The
 * code maps to a stable process exit status (docs/exit-codes.md); the detail
 * (paths, OS error text, expected and actual values) is kept on the context
 * (struct cctl_ctx, see cudnnctl.h) and shown to the user by the CLI.
 *
 * The table is the single source of truth: X(NAME, exit status, summary).
 * Exit statuses are never reused once retired.
 */
#ifndef CUDNNCTL_ERROR_H
#define CUDNNCTL_ERROR_H

#define CCTL_ERRNO_MAP(X)                                                      \
	X(FAIL, 1, "operation failed")                                         \
	X(USAGE, 2, "usage error")                                             \
	X(IO, 3, "input/output error")                                         \
	X(NOMEM, 3, "out of memory")                                           \
	X(UNKNOWN_ARCHIVE, 4, "archive matches no known cuDNN release")        \
	X(MISMATCH, 5, "size or sha256 differs from the manifest")             \
	X(UNSAFE, 6, "archive entry refused")                                  \
	X(BADARCHIVE, 7, "archive unreadable or incomplete")                   \
	X(NOSPACE, 8, "not enough free space")                                 \
	X(LOCKED, 9, "install root is in use")                                 \
	X(NOTFOUND, 10, "version not installed")                               \
	X(AMBIGUOUS, 11, "version is ambiguous")                               \
	X(BADROOT, 12, "install root refused")                                 \
	X(ACTIVE, 13, "version is active")                                     \
	X(MANIFEST, 14, "manifest unreadable")                                 \
	X(PLATFORM, 15, "archive is for another platform")                     \
	X(ACTIVATE, 16, "activation failed")                                   \
	X(NETWORK, 17, "download failed")                                      \
	X(NORELEASE, 18, "no known release matches")                           \
	X(DRIVER, 19, "the NVIDIA driver is too old for the build")            \
	X(INUSE, 30, "a running program has the library loaded")               \
	X(OWNED, 31, "the files belong to a package, wheel or framework")       \
	X(INTERRUPTED, 130, "interrupted (Ctrl+C, SIGINT, SIGTERM, SIGHUP)")     \
	X(VERIFY_LOCATE, 20, "verify: the loader finds no cuDNN")              \
	X(VERIFY_FILES, 21, "verify: files missing or changed")                \
	X(VERIFY_VERSION, 22, "verify: library version differs")               \
	X(VERIFY_DEPS, 23, "verify: a dependency cannot be found")             \
	X(VERIFY_LOAD, 24, "verify: cuDNN does not load or is the wrong one")  \
	X(VERIFY_DRIVER, 25, "verify: driver or GPU unusable")                 \
	X(VERIFY_CREATE, 26, "verify: cudnnCreate failed")                     \
	X(VERIFY_CONV, 27, "verify: the convolution failed or was wrong")      \
	X(VERIFY_NOGPU, 28, "verify: no GPU to run on (--require-gpu)")     \
	X(VERIFY_BUILD, 29, "verify: a program built against it fails")        \
	X(CANNOTRUN, 126, "exec: the command could not be started")            \
	X(NOCOMMAND, 127, "exec: the command was not found")

enum cctl_error {
	CCTL_OK = 0,
#define CCTL__ENUM(name, status, text) CCTL_E##name,
	CCTL__FIRST_ = -1000,
	CCTL_ERRNO_MAP(CCTL__ENUM)
#undef CCTL__ENUM
	CCTL__LAST_
};

/* Every code, in table order: for (c = CCTL_ERROR_FIRST; c < CCTL_ERROR_END; c++) */
#define CCTL_ERROR_FIRST (CCTL__FIRST_ + 1)
#define CCTL_ERROR_END CCTL__LAST_

/* Short summary of a code ("usage error"); never NULL. */
const char *cctl_strerror(int code);

/* Stable process exit status for a code: 0 for CCTL_OK. */
int cctl_exit_status(int code);

/* Symbolic name of a code ("EUSAGE"), for --json output. */
const char *cctl_error_name(int code);

#endif
