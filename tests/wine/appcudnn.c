/*
 * For the Wine tests of verify --app: a program that imports cuDNN
 * (cudnn64_9.dll, the fake's import library) as an application built
 * against cuDNN does; it prints what cudnnGetVersion() and
 * cudnnOpsVersionCheck() (which loads the ops DLL) say.
 */
#include <stddef.h>
#include <stdio.h>

__declspec(dllimport) size_t cudnnGetVersion(void);
__declspec(dllimport) int cudnnOpsVersionCheck(void);

int main(void)
{
	/* as a first convolution would: cuDNN loads its ops library */
	printf("%zu %d\n", cudnnGetVersion(), cudnnOpsVersionCheck());
	return 0;
}
