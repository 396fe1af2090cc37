/*
 * Whose root is it: a root another user can change is refused for work
 * (and, for the machine, every folder above it too), as ssh refuses a
 * ~/.ssh others can write.  The OS layer says who may write a path
 * (cctl_os_foreign_writable); this file decides and words it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../platform/os.h"
#include "internal.h"

/* Someone else can change `path`, part of the root at `root`: the error
 * (refuse) or a warning. */
static int untrusted(struct cctl_ctx *ctx, const char *root, const char *path,
		     const char *why, int refuse, int system)
{
	if (!refuse) {
		cctl__warn(ctx, "install root '%s': '%s' %s: another user can "
				"change the cuDNN it holds",
			   root, path, why);
		return 0;
	}
	if (system && cctl_platform_host()->windows) {
		cctl__error(ctx, CCTL_EBADROOT,
			    "--scope machine: '%s' %s, so every user's programs "
			    "would load cuDNN from a folder someone other than "
			    "the administrators controls; nothing was changed",
			    path, why);
		cctl__hint(ctx, "let only administrators write it (icacls \"%s\" "
				"/inheritance:r /grant:r *S-1-5-18:(OI)(CI)F "
				"*S-1-5-32-544:(OI)(CI)F *S-1-5-32-545:(OI)(CI)RX), "
				"or give a new --root: cudnnctl makes it so",
			   root);
	} else if (system) {
		cctl__error(ctx, CCTL_EBADROOT,
			    "--system: '%s' %s, so every user's programs would "
			    "load cuDNN from a folder someone other than the "
			    "administrator controls; nothing was changed",
			    path, why);
		cctl__hint(ctx, "use a root that only the administrator can "
				"write at every level, such as /opt/cudnn "
				"(--root)");
	} else {
		cctl__error(ctx, CCTL_EBADROOT,
			    "install root '%s': '%s' %s, so another user could "
			    "change the cuDNN you load and, through env.sh, what "
			    "your shell runs; nothing was changed",
			    root, path, why);
		cctl__hint(ctx, "make it writable by you alone (chmod go-w, or "
				"chown it to you as the administrator), or choose "
				"another root with --root");
	}
	return CCTL_EBADROOT;
}

int cctl__root_trusted(struct cctl_ctx *ctx, const char *root, int refuse,
		       int system)
{
	static const char *const parts[] = { "", "versions", "current",
					     "env.sh" };
	struct cctl_buf p = CCTL_BUF_INIT, why = CCTL_BUF_INIT;
	int sticky, ret = 0;
	/* for the machine: every folder from the top down (a sticky one, as
	 * /tmp, only above one the administrator owns).  Windows: not C:\,
	 * whose users may create folders but not change others' */
	if (system && CCTL_OS_DIR_SEP == '/')
		for (const char *q = root; !ret && *q; q++) {
			if (*q != '/' && *q != '\\')
				continue;
			cctl_buf_reset(&p);
			cctl_buf_add(&p, root, (size_t)(q - root) + (q == root));
			if (cctl_os_foreign_writable(p.buf, 1, &sticky, &why))
				ret = untrusted(ctx, root, p.buf, why.buf, 1, 1);
		}
	for (size_t i = 0; !ret && i < sizeof(parts) / sizeof(parts[0]); i++) {
		cctl_buf_reset(&p);
		cctl_buf_adds(&p, root);
		if (*parts[i])
			cctl_buf_addpath(&p, parts[i]);
		cctl_buf_reset(&why);
		if (cctl_os_foreign_writable(p.buf, system, &sticky, &why) ||
		    (sticky && (cctl_buf_adds(&why, "can be written by every "
						    "user (a sticky folder)"),
				1))) {
			ret = untrusted(ctx, root, p.buf, why.buf, refuse, system);
			if (!refuse)
				break; /* one warning is enough */
		}
	}
	cctl_buf_release(&p);
	cctl_buf_release(&why);
	return ret;
}
