/* The pure logic of the Windows OS layer (src/platform/portable.h), on
 * every platform: PATH values as the registry code rebuilds them, and the
 * PE reader over memory (a DLL the test makes, bit by bit). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/platform/portable.h"
#include "harness.h"

#define CHECK_WSTR(a, b)                                                       \
	do {                                                                   \
		const wchar_t *wa_ = (a), *wb_ = (b);                          \
		if (!wa_ || wcscmp(wa_, wb_)) {                                \
			fprintf(stderr, "%s:%d: %s == %ls failed: \"%ls\"\n",  \
				__FILE__, __LINE__, #a, wb_,                   \
				wa_ ? wa_ : L"(null)");                        \
			harness_failed = 1;                                    \
			return;                                                \
		}                                                              \
	} while (0)

static void rebuild_puts_ours_first(void)
{
	wchar_t *v = cctl_pathvalue_rebuild(
		L"C:\\Windows;C:\\cudnn\\current\\bin;%SystemRoot%;C:\\Tools\\",
		L"C:\\cudnn", L"C:\\cudnn\\current\\bin");
	CHECK_WSTR(v, L"C:\\cudnn\\current\\bin;C:\\Windows;%SystemRoot%;C:\\Tools\\");
	free(v);
	/* a missing PATH: only ours */
	v = cctl_pathvalue_rebuild(NULL, L"C:\\cudnn", L"C:\\cudnn\\current\\bin");
	CHECK_WSTR(v, L"C:\\cudnn\\current\\bin");
	free(v);
}

static void rebuild_removes_every_form_of_ours(void)
{
	/* case, either slash, trailing separators, old version folders; a
	 * sibling root is not ours; an empty entry is kept */
	wchar_t *v = cctl_pathvalue_rebuild(
		L"c:/CUDNN/Current/Bin/;;C:\\cudnn\\versions\\9.1.0.70_cuda12\\bin;"
		L"C:\\cudnn2\\current\\bin;C:\\cudnn\\other;D:\\x",
		L"C:\\cudnn\\", NULL);
	CHECK_WSTR(v, L";C:\\cudnn2\\current\\bin;C:\\cudnn\\other;D:\\x");
	free(v);
	/* ours was the only entry */
	v = cctl_pathvalue_rebuild(L"C:\\cudnn\\current\\bin\\x64", L"C:\\cudnn", NULL);
	CHECK_WSTR(v, L"");
	free(v);
}

/* Expands %SystemDrive% to C: and %SystemRoot% to C:\Windows. */
static wchar_t *test_expand(const wchar_t *e, size_t n)
{
	static const wchar_t *const vars[][2] = {
		{ L"%SystemDrive%", L"C:" }, { L"%SystemRoot%", L"C:\\Windows" }
	};
	wchar_t *out = calloc(n + 64, sizeof(wchar_t));
	size_t len = 0;
	for (size_t i = 0; i < n;) {
		size_t k;
		for (k = 0; k < 2; k++) {
			size_t vl = wcslen(vars[k][0]);
			if (i + vl <= n && !wcsncmp(e + i, vars[k][0], vl)) {
				wcscpy(out + len, vars[k][1]);
				len += wcslen(vars[k][1]);
				i += vl;
				break;
			}
		}
		if (k == 2)
			out[len++] = e[i++];
	}
	return out;
}

static void edit_keeps_every_other_byte(void)
{
	/* empty entries, a trailing ';', our entry written with a variable */
	struct cctl_pathvalue_edit ed = { L"C:\\cudnn", L"C:\\cudnn\\current\\bin",
					  NULL, test_expand };
	wchar_t *v = cctl_pathvalue_edit(
		L"C:\\a;;%SystemDrive%\\cudnn\\current\\bin;C:\\b;", &ed);
	CHECK_WSTR(v, L"C:\\cudnn\\current\\bin;C:\\a;;C:\\b;");
	free(v);
	ed.add = NULL;
	v = cctl_pathvalue_edit(L"C:\\cudnn\\current\\bin;C:\\a;;C:\\b;", &ed);
	CHECK_WSTR(v, L"C:\\a;;C:\\b;");
	free(v);
	/* the machine Path: after the %SystemRoot% entries */
	ed.add = L"C:\\cudnn\\versions\\9\\bin";
	ed.after = L"C:\\Windows";
	v = cctl_pathvalue_edit(L"%SystemRoot%\\system32;%SystemRoot%;"
				L"C:\\Windows\\System32\\Wbem;C:\\Tools", &ed);
	CHECK_WSTR(v, L"%SystemRoot%\\system32;%SystemRoot%;"
		      L"C:\\Windows\\System32\\Wbem;C:\\cudnn\\versions\\9\\bin;"
		      L"C:\\Tools");
	free(v);
	v = cctl_pathvalue_edit(L"C:\\Tools", &ed); /* none: first */
	CHECK_WSTR(v, L"C:\\cudnn\\versions\\9\\bin;C:\\Tools");
	free(v);
	v = cctl_pathvalue_edit(NULL, &ed);
	CHECK_WSTR(v, L"C:\\cudnn\\versions\\9\\bin");
	free(v);
}

static void rebuild_drops_copies_of_the_added_entry(void)
{
	/* the same folder added by hand elsewhere, in another spelling */
	wchar_t *v = cctl_pathvalue_rebuild(L"C:\\A;D:\\cuDNN\\BIN\\;C:\\B",
					    L"C:\\cudnn", L"d:/cudnn/bin");
	CHECK_WSTR(v, L"d:/cudnn/bin;C:\\A;C:\\B");
	free(v);
}

static void longest_entries_in_order(void)
{
	const wchar_t *v = L"aa;b;cccc;;ddd;e", *at[3];
	size_t len[3];
	CHECK_INT(cctl_pathvalue_longest(v, at, len), 3);
	CHECK_INT(len[0], 4);
	CHECK_INT(at[0] - v, 5);
	CHECK_INT(len[1], 3);
	CHECK_INT(len[2], 2);
	CHECK_INT(cctl_pathvalue_longest(L"", at, len), 0);
	CHECK_INT(cctl_pathvalue_longest(L"x", at, len), 1);
}

static void under_root(void)
{
	CHECK_INT(cctl_pathvalue_under(L"C:\\cudnn\\current", L"C:\\cudnn"), 1);
	CHECK_INT(cctl_pathvalue_under(L"c:/CUDNN", L"C:\\cudnn\\"), 1);
	CHECK_INT(cctl_pathvalue_under(L"C:\\cudnn2", L"C:\\cudnn"), 0);
	CHECK_INT(cctl_pathvalue_under(L"C:\\cud", L"C:\\cudnn"), 0);
	CHECK_INT(cctl_pathvalue_under(L"C:\\x", L""), 0);
}

/* ------------------------------------------------------------ PE reader */

struct mem {
	const unsigned char *p;
	size_t n;
};

static int mem_read_at(void *opaque, uint64_t off, void *buf, size_t n)
{
	const struct mem *m = opaque;
	if (off > m->n || n > m->n - off)
		return -1;
	memcpy(buf, m->p + off, n);
	return 0;
}

static void put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

/* A 64-bit DLL with one section at RVA 0x1000 (file offset 0x200) holding
 * an import of "cudnn_ops64_9.dll" and a VERSIONINFO of 9.19.0.99. */
static size_t make_dll(unsigned char *f, size_t cap)
{
	unsigned char *opt, *sec, *s;
	memset(f, 0, cap);
	f[0] = 'M';
	f[1] = 'Z';
	put32(f + 60, 0x80);
	memcpy(f + 0x80, "PE\0\0", 4);
	put16(f + 0x84, 0x8664); /* machine */
	put16(f + 0x86, 1);      /* sections */
	put16(f + 0x94, 240);    /* optional header size */
	opt = f + 0x98;
	put16(opt, 0x20b);
	put32(opt + 112 + 8, 0x1000);  /* imports */
	put32(opt + 112 + 16, 0x1100); /* resources */
	sec = opt + 240;
	memcpy(sec, ".data", 5);
	put32(sec + 8, 0x400);   /* virtual size */
	put32(sec + 12, 0x1000); /* RVA */
	put32(sec + 16, 0x400);  /* raw size */
	put32(sec + 20, 0x200);  /* file offset */
	s = f + 0x200;           /* = RVA 0x1000 */
	put32(s + 12, 0x1080);   /* import 0's name; import 1 is the zero end */
	memcpy(s + 0x80, "cudnn_ops64_9.dll", 18);
	/* resources at 0x1100: type dir -> 16 -> name dir -> lang dir -> data */
	s = f + 0x300;
	put16(s + 14, 1);
	put32(s + 16, 16);
	put32(s + 20, 0x80000000u | 0x18);
	put16(s + 0x18 + 14, 1);
	put32(s + 0x18 + 20, 0x80000000u | 0x30);
	put16(s + 0x30 + 14, 1);
	put32(s + 0x30 + 20, 0x48); /* a data entry */
	put32(s + 0x48, 0x1200);    /* the VS_VERSIONINFO's RVA */
	put32(s + 0x48 + 4, 92);
	s = f + 0x400; /* RVA 0x1200 */
	put32(s + 40, 0xfeef04bdu);
	put32(s + 48, 9u << 16 | 19);
	put32(s + 52, 0u << 16 | 99);
	return 0x600;
}

static void pe_reads_imports_and_version(void)
{
	static unsigned char f[0x600];
	struct mem m = { f, 0 };
	struct cctl_pe_source src = { mem_read_at, &m, 0 };
	struct cctl_lib_info info;
	const char *why = NULL;
	m.n = src.size = make_dll(f, sizeof(f));
	CHECK_INT(cctl_pe_read(&src, &info, &why), 0);
	CHECK_INT(info.loadable, 1);
	CHECK_INT(info.machine, 0x8664);
	CHECK_INT(info.nneeded, 1);
	CHECK_STR(info.needed[0], "cudnn_ops64_9.dll");
	CHECK_STR(info.file_version, "9.19.0.99");
	cctl_lib_info_release(&info);
	/* an arm64 DLL is read, its machine said, and (to an x64 build) not
	 * loadable: verify tells it from a DLL of no use at all */
	put16(f + 0x84, 0xAA64);
	CHECK_INT(cctl_pe_read(&src, &info, &why), 0);
	CHECK_INT(info.machine, 0xAA64);
	CHECK_INT(info.loadable, CCTL_PE_PROCESS_MACHINE == 0xAA64);
	CHECK_STR(info.file_version, "9.19.0.99");
	cctl_lib_info_release(&info);
	/* a 32-bit machine is read but not loadable */
	put16(f + 0x84, 0x14c);
	CHECK_INT(cctl_pe_read(&src, &info, &why), 0);
	CHECK_INT(info.loadable, 0);
	cctl_lib_info_release(&info);
}

static void pe_refuses_damage(void)
{
	static unsigned char f[0x600];
	struct mem m = { f, 0 };
	struct cctl_pe_source src = { mem_read_at, &m, 0 };
	struct cctl_lib_info info;
	const char *why = NULL;
	size_t n = make_dll(f, sizeof(f));
	/* cut before the section table */
	m.n = src.size = 0x190;
	CHECK_INT(cctl_pe_read(&src, &info, &why), -1);
	CHECK_STR(why, "damaged section table");
	CHECK(info.needed == NULL);
	/* an import name that runs to the end of the file */
	m.n = src.size = n;
	memset(f + 0x280, 'a', 0x600 - 0x280);
	put32(f + 0x188 + 16, 0x400);
	CHECK_INT(cctl_pe_read(&src, &info, &why), -1);
	CHECK_STR(why, "damaged import name");
	/* a header offset past the end */
	put32(f + 60, 0xfffffff0u);
	CHECK_INT(cctl_pe_read(&src, &info, &why), -1);
	CHECK_STR(why, "no PE header");
	f[0] = 'X';
	CHECK_INT(cctl_pe_read(&src, &info, &why), -1);
	CHECK_STR(why, "no MZ header");
}

HARNESS_MAIN(TEST_ENTRY(rebuild_puts_ours_first),
	     TEST_ENTRY(rebuild_removes_every_form_of_ours),
	     TEST_ENTRY(rebuild_drops_copies_of_the_added_entry),
	     TEST_ENTRY(edit_keeps_every_other_byte),
	     TEST_ENTRY(longest_entries_in_order), TEST_ENTRY(under_root),
	     TEST_ENTRY(pe_reads_imports_and_version), TEST_ENTRY(pe_refuses_damage))
