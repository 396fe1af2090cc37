/* The junction reparse data cudnnctl writes and reads (Windows only).
 * Wine cannot make junctions, so the bytes are checked against the layout
 * of MS-FSCC 2.1.2.5 (the mount point REPARSE_DATA_BUFFER) written out by
 * hand, and the reader against data as other tools write it. */
#include <stdint.h>
#include <stdio.h>
#include <wchar.h>

#include "cudnnctl/cudnnctl.h"
#include "../../src/platform/win/win.h"
#include "harness.h"

/* "C:\x": tag, length, reserved, substitute at 0 (16 bytes), print name
 * at 18 (8 bytes), each followed by a NUL. */
static const uint8_t c_x[] = {
	0x03, 0x00, 0x00, 0xa0, /* IO_REPARSE_TAG_MOUNT_POINT */
	0x24, 0x00, 0x00, 0x00, /* ReparseDataLength 36, Reserved */
	0x00, 0x00, 0x10, 0x00, /* SubstituteNameOffset 0, Length 16 */
	0x12, 0x00, 0x08, 0x00, /* PrintNameOffset 18, Length 8 */
	'\\', 0, '?', 0, '?', 0, '\\', 0, 'C', 0, ':', 0, '\\', 0, 'x', 0, 0, 0,
	'C', 0, ':', 0, '\\', 0, 'x', 0, 0, 0,
};

static void writes_the_documented_layout(void)
{
	size_t size = 0;
	uint8_t *d = cctl_win_junction_data(L"C:\\x", &size);
	CHECK(d != NULL);
	CHECK_INT(size, sizeof(c_x));
	CHECK(!memcmp(d, c_x, size));
	free(d);
	/* "\\?\C:\x" is the same folder */
	d = cctl_win_junction_data(L"\\\\?\\C:\\x", &size);
	CHECK(d != NULL);
	CHECK_INT(size, sizeof(c_x));
	CHECK(!memcmp(d, c_x, size));
	free(d);
}

static void refuses_targets_a_junction_cannot_have(void)
{
	static const wchar_t *bad[] = {
		L"",		       L"C:",		 L"x\\y",
		L"\\\\server\\share\\x", L"\\x",		 L"C:x",
		L"C:/x",	       L"\\\\?\\UNC\\s\\x",
	};
	size_t size;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(cctl_win_junction_data(bad[i], &size) == NULL);
}

static void reads_back_what_it_writes(void)
{
	static const wchar_t *t = L"C:\\cudnn\\versions\\9.19.0.56-cuda13";
	size_t size;
	uint8_t *d = cctl_win_junction_data(t, &size);
	wchar_t *back;
	CHECK(d != NULL);
	back = cctl_win_junction_parse(d, size);
	free(d);
	CHECK(back != NULL);
	CHECK(!wcscmp(back, t));
	free(back);
	back = cctl_win_junction_parse(c_x, sizeof(c_x));
	CHECK(back != NULL);
	CHECK(!wcscmp(back, L"C:\\x"));
	free(back);
}

static void reads_a_junction_without_print_name(void)
{
	/* as some tools write it: print name empty, substitute name only */
	uint8_t d[sizeof(c_x)];
	wchar_t *back;
	memcpy(d, c_x, sizeof(d));
	d[12] = d[13] = d[14] = d[15] = 0; /* PrintNameOffset, Length */
	back = cctl_win_junction_parse(d, sizeof(d));
	CHECK(back != NULL);
	CHECK(!wcscmp(back, L"C:\\x"));
	free(back);
}

static void refuses_damaged_data(void)
{
	uint8_t d[sizeof(c_x)];
	CHECK(cctl_win_junction_parse(c_x, 0) == NULL);
	CHECK(cctl_win_junction_parse(c_x, 15) == NULL);
	/* cut short: the length says more than there is */
	CHECK(cctl_win_junction_parse(c_x, sizeof(c_x) - 1) == NULL);
	/* a symbolic link (IO_REPARSE_TAG_SYMLINK) is not a junction */
	memcpy(d, c_x, sizeof(d));
	d[0] = 0x0c;
	CHECK(cctl_win_junction_parse(d, sizeof(d)) == NULL);
	/* a print name past the end */
	memcpy(d, c_x, sizeof(d));
	d[12] = 0x20;
	CHECK(cctl_win_junction_parse(d, sizeof(d)) == NULL);
	/* an odd length */
	memcpy(d, c_x, sizeof(d));
	d[14] = 7;
	CHECK(cctl_win_junction_parse(d, sizeof(d)) == NULL);
	/* no names at all */
	memcpy(d, c_x, sizeof(d));
	memset(d + 8, 0, 8);
	CHECK(cctl_win_junction_parse(d, sizeof(d)) == NULL);
}

HARNESS_MAIN(TEST_ENTRY(writes_the_documented_layout),
	     TEST_ENTRY(refuses_targets_a_junction_cannot_have),
	     TEST_ENTRY(reads_back_what_it_writes),
	     TEST_ENTRY(reads_a_junction_without_print_name),
	     TEST_ENTRY(refuses_damaged_data))
