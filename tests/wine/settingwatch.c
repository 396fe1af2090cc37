/* For test_wine.py: a top-level window that reports each WM_SETTINGCHANGE
 * it receives, as Explorer would get it.
 *
 *   settingwatch SECONDS   prints "ready", then one line per message
 *                          ("WM_SETTINGCHANGE <area>"), for SECONDS
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

static LRESULT CALLBACK proc(HWND w, UINT msg, WPARAM wp, LPARAM lp)
{
	if (msg == WM_SETTINGCHANGE) {
		const wchar_t *area = (const wchar_t *)lp;
		printf("WM_SETTINGCHANGE %ls\n", area ? area : L"(none)");
		fflush(stdout);
		return 0;
	}
	return DefWindowProcW(w, msg, wp, lp);
}

int main(int argc, char **argv)
{
	WNDCLASSW wc = { 0 };
	DWORD until;
	MSG m;
	HWND w;

	if (argc != 2)
		return 2;
	wc.lpfnWndProc = proc;
	wc.hInstance = GetModuleHandleW(NULL);
	wc.lpszClassName = L"cudnnctl-settingwatch";
	if (!RegisterClassW(&wc))
		return 1;
	/* a hidden top-level window: HWND_BROADCAST reaches those */
	w = CreateWindowExW(0, wc.lpszClassName, L"settingwatch", WS_OVERLAPPED,
			    0, 0, 10, 10, NULL, NULL, wc.hInstance, NULL);
	if (!w)
		return 1;
	printf("ready\n");
	fflush(stdout);
	until = GetTickCount() + (DWORD)atoi(argv[1]) * 1000;
	while ((LONG)(until - GetTickCount()) > 0) {
		MsgWaitForMultipleObjects(0, NULL, FALSE, 200, QS_ALLINPUT);
		while (PeekMessageW(&m, NULL, 0, 0, PM_REMOVE)) {
			TranslateMessage(&m);
			DispatchMessageW(&m);
		}
	}
	return 0;
}
