/*
 * A stand-in C compiler for the Wine tests of verify --build (as
 * fakepython.c stands in for Python): copied as gcc.exe it takes gcc's
 * arguments (-I, -MF, -o, -L, -l), as cl.exe cl's (/I, /showIncludes,
 * /Fe, /link /LIBPATH:, x.lib).  It does what the real ones would be
 * judged on: looks for cudnn_version.h in the include folders in their
 * order (reporting the one it read: a dependency file, or /showIncludes
 * lines), reads CUDNN_MAJOR/MINOR/PATCHLEVEL from it, looks for cudnn.lib
 * in the library folders ("cannot find -lcudnn" otherwise), and "links"
 * by copying itself to the output with the header's version beside it
 * (<exe>.header).  Run as that output, it loads cudnn64_<major>.dll by
 * name (the loader's search: the program's folder, the system, PATH) and
 * prints "header N" and "library M" as the real probe program does.
 * --version prints a line.  Nothing else of a compiler is modelled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#define MAXDIRS 32

static long header_version(const char *path)
{
	char line[512];
	long major = -1, minor = -1, patch = -1;
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "#define CUDNN_MAJOR %ld", &major);
		sscanf(line, "#define CUDNN_MINOR %ld", &minor);
		sscanf(line, "#define CUDNN_PATCHLEVEL %ld", &patch);
	}
	fclose(f);
	if (major < 0 || minor < 0 || patch < 0)
		return -1;
	return major >= 9 ? major * 10000 + minor * 100 + patch
			  : major * 1000 + minor * 100 + patch;
}

static int exists(const char *path)
{
	DWORD a = GetFileAttributesA(path);
	return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

/* Run as the "linked" program: <self>.header holds what the compile saw. */
static int probe(const char *self)
{
	char side[MAX_PATH + 16], dll[32];
	long header = -1;
	HMODULE m;
	FARPROC get;
	FILE *f;
	snprintf(side, sizeof(side), "%s.header", self);
	if (!(f = fopen(side, "r")))
		return -1; /* not a probe: the compiler */
	if (fscanf(f, "%ld", &header) != 1)
		header = -1;
	fclose(f);
	snprintf(dll, sizeof(dll), "cudnn64_%ld.dll", header >= 10000 ? header / 10000
								   : header / 1000);
	if (!(m = LoadLibraryA(dll))) {
		fprintf(stderr, "cannot load %s (error %lu)\n", dll, GetLastError());
		return 3;
	}
	if (!(get = GetProcAddress(m, "cudnnGetVersion"))) {
		fprintf(stderr, "%s has no cudnnGetVersion\n", dll);
		return 4;
	}
	printf("header %ld\nlibrary %lu\n", header,
	       (unsigned long)((size_t(*)(void))(void (*)(void))get)());
	return 0;
}

int main(int argc, char **argv)
{
	const char *inc[MAXDIRS], *lib[MAXDIRS], *out = NULL, *deps = NULL;
	char self[MAX_PATH], found[MAX_PATH + 32] = "", side[MAX_PATH + 16];
	int ninc = 0, nlib = 0, cl = 0, show = 0, link = 0, want_lib = 0, ret;
	long version = -1;
	FILE *f;

	GetModuleFileNameA(NULL, self, sizeof(self));
	if ((ret = probe(self)) >= 0)
		return ret;
	{
		const char *base = strrchr(self, '\\') ? strrchr(self, '\\') + 1 : self;
		cl = !_strnicmp(base, "cl", 2);
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--version")) {
			printf("fakecc 1 (the Wine tests' stand-in)\n");
			return 0;
		}
		if (cl) {
			if (!_stricmp(a, "/link"))
				link = 1;
			else if (!_strnicmp(a, "/LIBPATH:", 9) && nlib < MAXDIRS)
				lib[nlib++] = a + 9;
			else if (!_strnicmp(a, "/I", 2) && ninc < MAXDIRS)
				inc[ninc++] = a + 2;
			else if (!_strnicmp(a, "/Fe", 3))
				out = a + 3;
			else if (!_stricmp(a, "/showIncludes"))
				show = 1;
			else if (link && !_stricmp(a, "cudnn.lib"))
				want_lib = 1;
		} else {
			if (!strncmp(a, "-I", 2) && ninc < MAXDIRS)
				inc[ninc++] = a + 2;
			else if (!strncmp(a, "-L", 2) && nlib < MAXDIRS)
				lib[nlib++] = a + 2;
			else if (!strcmp(a, "-lcudnn"))
				want_lib = 1;
			else if (!strcmp(a, "-o") && i + 1 < argc)
				out = argv[++i];
			else if (!strcmp(a, "-MF") && i + 1 < argc)
				deps = argv[++i];
		}
	}
	for (int i = 0; i < ninc && !*found; i++) {
		snprintf(found, sizeof(found), "%s\\cudnn_version.h", inc[i]);
		if (!exists(found))
			*found = 0;
	}
	if (!*found) {
		fprintf(stderr, "probe.c: fatal error: cudnn_version.h: No such file "
				"or directory\n");
		return 1;
	}
	version = header_version(found);
	if (show)
		printf("Note: including file: %s\n", found);
	if (deps && (f = fopen(deps, "w"))) {
		fprintf(f, "probe.exe: probe.c %s\n", found);
		fclose(f);
	}
	if (want_lib) {
		int have = 0;
		for (int i = 0; i < nlib && !have; i++) {
			char p[MAX_PATH + 16];
			snprintf(p, sizeof(p), "%s\\cudnn.lib", lib[i]);
			have = exists(p);
		}
		if (!have) {
			fprintf(stderr, cl ? "LINK : fatal error LNK1181: cannot open input "
					     "file 'cudnn.lib'\n"
					   : "ld.exe: cannot find -lcudnn\n");
			return 1;
		}
	}
	if (!out || !CopyFileA(self, out, FALSE)) {
		fprintf(stderr, "cannot write the output\n");
		return 1;
	}
	snprintf(side, sizeof(side), "%s.header", out);
	if (!(f = fopen(side, "w")))
		return 1;
	fprintf(f, "%ld\n", version);
	fclose(f);
	return 0;
}
